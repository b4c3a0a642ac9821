//! The containers of a trace, worked out once from meta.json for every reader (the index, the
//! viewer, the exports, the analyses): what each `process` value is (application process,
//! storage server, disk), its label, the server a disk belongs to, and the canonical order of
//! its thread rows.
//!
//! Labels: an MPI process is `rank 3`, a process without MPI `pid 1234`, a server its name, a
//! disk `<server> disk <i>`. A forked child keeps its parent's rank; the first process of a
//! rank (meta.json orders processes by rank, then start) keeps the plain label and every
//! later one adds its pid (`rank 3 pid 1234`), so a rank's label does not depend on whether
//! its process forked.

use serde::{Deserialize, Serialize};

use super::meta::{ClockMeta, ContainerKind, Meta, ProcessMeta};

/// meta.json `facts` key naming the server of a server or disk.
pub const SERVER_FACT: &str = "server";
/// meta.json `facts` key numbering a disk inside its server.
pub const DISK_FACT: &str = "disk";
/// meta.json `facts` key of a server's role (`data`, `metadata`).
pub const ROLE_FACT: &str = "role";

/// The meta.json entry of a storage server that a writer generates (the simulator today):
/// rank -1, host and `server` fact its name, `role` fact its role.
pub fn server_meta(process: u32, name: &str, role: &str, clock: ClockMeta) -> ProcessMeta {
    let mut p = ProcessMeta::generated(process, ContainerKind::Server, -1, name.into(), clock);
    p.facts.insert(SERVER_FACT.into(), name.into());
    p.facts.insert(ROLE_FACT.into(), role.into());
    p
}

/// The meta.json entry of disk `index` of server `server`, generated like `server_meta`.
pub fn disk_meta(process: u32, server: &str, index: u32, clock: ClockMeta) -> ProcessMeta {
    let mut p = ProcessMeta::generated(process, ContainerKind::Disk, -1, server.into(), clock);
    p.facts.insert(SERVER_FACT.into(), server.into());
    p.facts.insert(DISK_FACT.into(), index.to_string());
    p
}

/// One container: a meta.json `processes` entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Container {
    /// Index in meta.json `processes` (the events' `process`).
    pub process: i32,
    /// Application process, server or disk.
    pub kind: ContainerKind,
    /// MPI rank (-1 for servers, disks, processes without MPI).
    pub rank: i32,
    /// Host name as meta.json has it ("" if unknown).
    pub host: String,
    /// The server of a server (its name) or of a disk; None for a process.
    pub server: Option<String>,
    /// What a reader is shown: `rank 3`, `rank 3 pid 1234`, `pid 1234`, `server-0`,
    /// `server-0 disk 1`.
    pub label: String,
    /// Threads (at least 1).
    pub threads: u32,
}

impl Container {
    /// The group it is shown in: its host for a process, its server for a server or disk.
    pub fn group(&self) -> &str {
        self.server.as_deref().unwrap_or(&self.host)
    }

    /// The label of one of its threads: the container's own for thread 0 of a container with
    /// one thread, else with ` thread <t>` for threads past the first.
    pub fn thread_label(&self, thread: i32) -> String {
        if self.threads > 1 && thread > 0 {
            format!("{} thread {thread}", self.label)
        } else {
            self.label.clone()
        }
    }
}

/// One thread row of a container.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ContainerRow {
    /// Index into meta.json `processes`.
    pub process: i32,
    /// Thread number inside it.
    pub thread: i32,
}

/// The containers of a trace and their rows.
#[derive(Clone, Debug, Default)]
pub struct Containers {
    /// In meta.json order (indexed by `process`).
    list: Vec<Container>,
    /// Thread rows in canonical order.
    rows: Vec<ContainerRow>,
}

impl Containers {
    /// The containers of a trace.
    pub fn new(meta: &Meta) -> Containers {
        let procs = &meta.processes;
        let list: Vec<Container> = procs
            .iter()
            .enumerate()
            .map(|(i, p)| container(p, &procs[..i]))
            .collect();
        let rows = canonical_rows(&list);
        Containers { list, rows }
    }

    /// Every container, in meta.json order.
    pub fn all(&self) -> &[Container] {
        &self.list
    }

    /// The container of a `process` value.
    pub fn get(&self, process: i32) -> Option<&Container> {
        self.list.get(usize::try_from(process).ok()?)
    }

    /// The server of a server or disk container, None for a process.
    pub fn server_of(&self, process: i32) -> Option<&str> {
        self.get(process)?.server.as_deref()
    }

    /// The thread rows in canonical order: application processes (meta.json order) with their
    /// threads, then each storage server followed by its disks, then disks of no listed server.
    pub fn rows(&self) -> &[ContainerRow] {
        &self.rows
    }
}

fn container(p: &ProcessMeta, earlier: &[ProcessMeta]) -> Container {
    let server = match p.kind {
        ContainerKind::Process => None,
        ContainerKind::Server => Some(p.host.clone()),
        ContainerKind::Disk => Some(p.facts.get(SERVER_FACT).unwrap_or(&p.host).clone()),
    };
    let label = match p.kind {
        ContainerKind::Process if p.rank >= 0 => {
            let forked = earlier
                .iter()
                .any(|q| q.rank == p.rank && q.kind == ContainerKind::Process);
            if forked {
                format!("rank {} pid {}", p.rank, p.pid)
            } else {
                format!("rank {}", p.rank)
            }
        }
        ContainerKind::Process => format!("pid {}", p.pid),
        ContainerKind::Server => p.host.clone(),
        ContainerKind::Disk => format!(
            "{} disk {}",
            server.as_deref().unwrap_or(""),
            p.facts.get(DISK_FACT).map_or("0", String::as_str)
        ),
    };
    Container {
        process: p.process as i32,
        kind: p.kind,
        rank: p.rank,
        host: p.host.clone(),
        server,
        label,
        threads: thread_rows(p),
    }
}

/// Rows of a process: its threads that recorded events, so at most one per event (a damaged
/// `threads` of 10^9 costs no more rows than the process has events), at least one.
fn thread_rows(p: &ProcessMeta) -> u32 {
    let most = u32::try_from(p.events).unwrap_or(u32::MAX);
    p.threads.min(most).max(1)
}

fn canonical_rows(list: &[Container]) -> Vec<ContainerRow> {
    let mut rows = Vec::new();
    let mut push = |c: &Container| {
        for thread in 0..c.threads as i32 {
            rows.push(ContainerRow {
                process: c.process,
                thread,
            });
        }
    };
    let of_kind = |k: ContainerKind| list.iter().filter(move |c| c.kind == k);
    for c in of_kind(ContainerKind::Process) {
        push(c);
    }
    let disks: Vec<&Container> = of_kind(ContainerKind::Disk).collect();
    let mut placed = vec![false; disks.len()];
    for s in of_kind(ContainerKind::Server) {
        push(s);
        for (i, d) in disks.iter().enumerate() {
            if !placed[i] && d.server.as_deref() == Some(s.host.as_str()) {
                placed[i] = true;
                push(d);
            }
        }
    }
    for (i, d) in disks.iter().enumerate() {
        if !placed[i] {
            push(d);
        }
    }
    rows
}

/// Maps (process, thread) to a row; an unknown thread goes to the process's first row.
#[derive(Clone, Debug, Default)]
pub struct RowMap {
    /// First row of each process index (`u32::MAX` if none) and its thread count.
    first: Vec<(u32, u32)>,
}

impl RowMap {
    /// The map of `rows` (canonical or any order listing each process's threads together).
    pub fn new(rows: &[ContainerRow]) -> RowMap {
        let n = rows
            .iter()
            .map(|r| r.process.max(0) as usize + 1)
            .max()
            .unwrap_or(0);
        let mut first = vec![(u32::MAX, 0u32); n];
        for (i, r) in rows.iter().enumerate() {
            let e = &mut first[r.process.max(0) as usize];
            if e.0 == u32::MAX {
                *e = (i as u32, 0);
            }
            e.1 += 1;
        }
        RowMap { first }
    }

    /// The row of an event, None if its process has no row.
    pub fn row(&self, process: i32, thread: i32) -> Option<u32> {
        let &(first, n) = self.first.get(usize::try_from(process).ok()?)?;
        if first == u32::MAX {
            return None;
        }
        let t = if thread >= 0 && (thread as u32) < n {
            thread as u32
        } else {
            0
        };
        Some(first + t)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::*;

    /// A meta.json `processes` entry; `facts` as JSON.
    fn proc_(kind: &str, rank: i32, pid: u32, host: &str, threads: u32, facts: Value) -> Value {
        json!({
            "kind": kind, "rank": rank, "pid": pid, "ppid": 0, "host": host, "exe": null,
            "cmdline": null, "forked_from": null, "threads": threads, "events": 100,
            "raw_file": "", "partial": null, "facts": facts,
            "clock": {"kind": "monotonic", "fit": "monotonic", "pairs": 0, "span_ns": 0,
                      "ns_per_tick": 1.0, "max_residual_ns": 0.0, "offset_source": "init",
                      "init": null, "finalize": null, "start_ns": 0}
        })
    }

    fn meta(mut processes: Vec<Value>) -> Meta {
        for (i, p) in processes.iter_mut().enumerate() {
            p["process"] = json!(i);
        }
        serde_json::from_value(json!({
            "format": "pioscope-trace", "version": 1, "merged_by": "test", "time_unit": "ns",
            "job": {"command": null, "start_unix_ns": 0, "duration_ns": 1, "ranks": 1,
                    "hosts": [], "mpi_library": null},
            "counts": {"events": 0, "files": 0, "settings": 0, "processes": 0,
                       "unusable_raw_files": 0},
            "processes": processes, "partial": false, "partial_reasons": [], "raw_files": []
        }))
        .expect("meta")
    }

    #[test]
    fn labels_a_forked_child_by_its_pid_and_keeps_the_parents_label() {
        let m = meta(vec![
            proc_("process", 0, 10, "n0", 1, json!({})),
            proc_("process", 0, 11, "n0", 2, json!({})),
            proc_("process", -1, 12, "n1", 0, json!({})),
        ]);
        let c = Containers::new(&m);
        let labels: Vec<&str> = c.all().iter().map(|c| c.label.as_str()).collect();
        assert_eq!(labels, ["rank 0", "rank 0 pid 11", "pid 12"]);
        assert_eq!(c.all()[1].thread_label(1), "rank 0 pid 11 thread 1");
        assert_eq!(c.all()[1].thread_label(0), "rank 0 pid 11");
        let rows: Vec<(i32, i32)> = c.rows().iter().map(|r| (r.process, r.thread)).collect();
        assert_eq!(rows, [(0, 0), (1, 0), (1, 1), (2, 0)]);
    }

    #[test]
    fn a_damaged_thread_count_costs_no_more_rows_than_events() {
        // Issue 12: one flipped bit in `threads` made the exports allocate 4 GB of rows.
        let mut p = proc_("process", 0, 10, "n0", 1 << 30, json!({}));
        p["events"] = json!(3);
        let c = Containers::new(&meta(vec![p]));
        assert_eq!(c.rows().len(), 3);
    }

    #[test]
    fn orders_servers_with_their_disks_after_the_processes() {
        let disk = |server: &str, d: &str| {
            proc_(
                "disk",
                -1,
                0,
                server,
                1,
                json!({"server": server, "disk": d}),
            )
        };
        let m = meta(vec![
            disk("s1", "0"),
            proc_("server", -1, 0, "s0", 1, json!({"server": "s0"})),
            disk("s0", "1"),
            proc_("process", 0, 5, "n0", 1, json!({})),
            proc_("server", -1, 0, "s1", 1, json!({})),
            disk("gone", "0"),
        ]);
        let c = Containers::new(&m);
        let order: Vec<i32> = c.rows().iter().map(|r| r.process).collect();
        assert_eq!(order, [3, 1, 2, 4, 0, 5]);
        assert_eq!(c.get(2).map(|c| c.label.as_str()), Some("s0 disk 1"));
        assert_eq!(c.get(4).map(|c| c.label.as_str()), Some("s1"));
        assert_eq!(c.server_of(0), Some("s1"));
        assert_eq!(c.server_of(4), Some("s1"));
        assert_eq!(c.server_of(3), None);
        assert_eq!(c.get(0).map(Container::group), Some("s1"));
        assert_eq!(c.get(3).map(Container::group), Some("n0"));
    }

    #[test]
    fn row_map_sends_unknown_threads_to_the_first() {
        let row = |process, thread| ContainerRow { process, thread };
        let m = RowMap::new(&[row(0, 0), row(0, 1), row(2, 0)]);
        assert_eq!(m.row(0, 1), Some(1));
        assert_eq!(m.row(0, 7), Some(0));
        assert_eq!(m.row(2, 0), Some(2));
        assert_eq!(m.row(1, 0), None);
        assert_eq!(m.row(-1, 0), None);
        assert_eq!(m.row(9, 0), None);
    }
}
