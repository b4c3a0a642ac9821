//! The simulated trace: a `Recorder` that keeps what the engine reports and writes it as a
//! trace store in the format of docs/FORMAT.md (events.parquet sorted by rank then start,
//! files.parquet, settings.parquet, meta.json), with one container per rank (kind process),
//! per storage server (kind server, rank -1, host `server-N`) and per disk (kind disk), so
//! `stats`, `report` and the viewer read it unchanged; the servers' CPU is sampled into
//! counters.parquet (`server_counters`).
//!
//! Design: the engine reports calls in completion order, not start order, and a rank's first
//! call ends only near the end of the run, so the records are kept in memory (about 64 bytes
//! each), sorted once at the end and numbered; parents come from depth along each rank's sorted
//! calls.

use std::collections::BTreeMap;
use std::path::Path;

use pioscope_trace::functions::{self, Layer};
use pioscope_trace::raw::format::flags;
use pioscope_trace::store::containers::{disk_meta, server_meta};
use pioscope_trace::store::meta::{ClockMeta, ContainerKind, JobMeta, Meta, ProcessMeta};
use pioscope_trace::store::{Event, FileRow, MpiArgs, MpiRef, SettingRow, StoreError, StoreWriter};

use crate::model::{LayoutKind, Placement, System};
use crate::mpiio::server_counters::ServerCpuSamples;
use crate::program::{Call, CpuActivity, DiskActivity, Rank, Recorder, ServerActivity};
/// Nominal job start in meta.json (a simulation has no wall clock): 2025-01-01T00:00:00Z.
const START_UNIX_NS: i64 = 1_735_689_600_000_000_000;

/// One recorded call or activity.
#[derive(Clone, Copy, Debug)]
struct Rec {
    /// Container: rank r is r; servers and disks follow.
    process: u32,
    start: u64,
    end: u64,
    seq: u64,
    size: u64,
    offset: u64,
    file: u32,
    peer: i32,
    instance: u32,
    func: u16,
    depth: u8,
    /// bit 0 collective, bit 1 has offset, bit 2 has file, bit 3 has peer, bit 4 has instance.
    bits: u8,
}

/// Totals per function, for the run summary.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FuncTotal {
    /// Calls.
    pub calls: u64,
    /// Bytes (size column).
    pub bytes: u64,
    /// Summed duration, ns.
    pub time_ns: u64,
}

/// What the store holds, for the CLI's summary.
#[derive(Clone, Debug, Default)]
pub struct StoreSummary {
    /// Rows of events.parquet.
    pub events: u64,
    /// Per function name: totals over every container.
    pub funcs: BTreeMap<String, FuncTotal>,
    /// End of the last record, ns.
    pub duration_ns: u64,
}

/// Collects the engine's reports; `write` turns them into a store.
pub struct StoreRecorder {
    recs: Vec<Rec>,
    ranks: u32,
    servers: u32,
    disks_per_server: u32,
    /// Called every 65536 records with (records so far, latest end time in ns).
    progress: Option<Box<dyn FnMut(u64, u64)>>,
    latest_ns: u64,
    cpu: ServerCpuSamples,
}

impl StoreRecorder {
    /// A recorder for `ranks` ranks on `system` (its servers and disks become containers).
    pub fn new(system: &System, ranks: u32) -> StoreRecorder {
        let st = &system.storage;
        let servers = st.data_servers
            + if st.metadata_on_data_servers {
                0
            } else {
                st.metadata_servers
            };
        StoreRecorder {
            recs: Vec::new(),
            ranks,
            servers,
            disks_per_server: st.disks_per_server.max(1),
            progress: None,
            latest_ns: 0,
            cpu: ServerCpuSamples::default(),
        }
    }

    /// Reports progress every 65536 records (records so far, simulated time reached).
    pub fn on_progress(&mut self, f: impl FnMut(u64, u64) + 'static) {
        self.progress = Some(Box::new(f));
    }

    /// Records so far.
    pub fn len(&self) -> usize {
        self.recs.len()
    }

    /// True before the first record.
    pub fn is_empty(&self) -> bool {
        self.recs.is_empty()
    }

    fn push(&mut self, r: Rec) {
        self.latest_ns = self.latest_ns.max(r.end);
        self.recs.push(r);
        if self.recs.len() % 65536 == 0 {
            let (n, t) = (self.recs.len() as u64, self.latest_ns);
            if let Some(p) = self.progress.as_mut() {
                p(n, t);
            }
        }
    }

    fn server_process(&self, server: u32) -> u32 {
        self.ranks + server
    }

    fn disk_process(&self, server: u32, disk: u32) -> u32 {
        self.ranks + self.servers + server * self.disks_per_server + disk
    }

    /// Writes the store at `out` (which must not exist): events sorted by (rank, start,
    /// process, depth, completion order), files, settings (the hints each file used, given by
    /// the caller), the servers' CPU samples, meta.json, and what the store writer derives
    /// (messages, index). Consumes the records.
    pub fn write(
        mut self,
        out: &Path,
        system: &System,
        files: &[String],
        settings: &[SettingRow],
        command: &str,
    ) -> Result<StoreSummary, StoreError> {
        let ranks = self.ranks;
        let rank_of = |p: u32| if p < ranks { p as i32 } else { -1 };
        self.recs
            .sort_unstable_by_key(|r| (rank_of(r.process), r.start, r.process, r.depth, r.seq));
        let mut file_events = vec![0i64; files.len()];
        let mut file_ranks: Vec<Vec<u32>> = vec![Vec::new(); files.len()];
        let mut summary = StoreSummary::default();
        let mut w = StoreWriter::create(out)?;
        // Parent ids by depth along the current rank.
        let mut open: Vec<i64> = Vec::new();
        let mut cur_process = u32::MAX;
        let mut requests = vec![0i64; ranks as usize];
        for (id, r) in self.recs.iter().enumerate() {
            let id = id as i64;
            if r.process != cur_process {
                cur_process = r.process;
                open.clear();
            }
            let depth = r.depth as usize;
            open.truncate(depth);
            let parent = if depth == 0 {
                None
            } else {
                open.get(depth - 1).copied()
            };
            // A record deeper than any open parent (should not happen) keeps depth, no parent.
            while open.len() < depth {
                open.push(-1);
            }
            open.push(id);
            let parent = parent.filter(|&p| p >= 0);
            let info = functions::by_id(r.func);
            let name = info.map_or("unknown", |f| f.name);
            let layer = info.map_or_else(|| Layer::from_id_range(r.func), |f| f.layer);
            let is_mpi = layer == Layer::Mpi;
            let p2p = is_mpi && functions::is_point_to_point(name);
            let coll = is_mpi && functions::is_mpi_collective(name);
            let nonblocking = matches!(name, "MPI_Isend" | "MPI_Irecv");
            let request = if nonblocking && r.process < ranks {
                let q = &mut requests[r.process as usize];
                *q += 1;
                Some(*q)
            } else {
                None
            };
            let collective = r.bits & 1 != 0;
            let mut event_flags = 0;
            if collective {
                event_flags |= flags::COLLECTIVE;
            }
            if nonblocking {
                event_flags |= flags::NONBLOCKING;
            }
            let file = (r.bits & 4 != 0).then_some(r.file as i32);
            if let Some(f) = file {
                if let Some(n) = file_events.get_mut(f as usize) {
                    *n += 1;
                    if r.process < ranks {
                        let fr = &mut file_ranks[f as usize];
                        if fr.last() != Some(&r.process) {
                            fr.push(r.process);
                        }
                    }
                }
            }
            let duration = r.end.saturating_sub(r.start);
            w.push(&Event {
                id,
                rank: rank_of(r.process),
                process: r.process as i32,
                thread: 0,
                start_ns: r.start as i64,
                duration_ns: duration as i64,
                layer,
                func: name,
                func_id: r.func,
                depth: r.depth,
                parent,
                file_id: file,
                offset: (r.bits & 2 != 0).then_some(r.offset as i64),
                size: r.size as i64,
                result: r.size as i64,
                error: 0,
                flags: event_flags,
                collective,
                instance: (r.bits & 16 != 0).then_some(r.instance as i32),
                mpi: MpiRef::to(&MpiArgs {
                    request,
                    peer: (r.bits & 8 != 0).then_some(r.peer),
                    tag: p2p.then_some(0),
                    root: coll.then_some(if name == "MPI_Bcast" { 0 } else { -1 }),
                    comm_size: coll.then_some(ranks as i32),
                }),
                comm: is_mpi.then_some("world"),
                region: None,
            })?;
            let t = summary.funcs.entry(name.to_string()).or_default();
            t.calls += 1;
            t.bytes += r.size;
            t.time_ns += duration;
            summary.duration_ns = summary.duration_ns.max(r.end);
        }
        summary.events = w.rows();

        let fs_type = match system.layout.kind {
            LayoutKind::Lustre => "lustre",
            LayoutKind::Pvfs => "pvfs2",
        };
        let file_rows: Vec<FileRow> = files
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let mut rs = std::mem::take(&mut file_ranks[i]);
                rs.sort_unstable();
                rs.dedup();
                FileRow {
                    file_id: i as i32,
                    path: p.clone(),
                    fs_type: fs_type.to_string(),
                    fs_magic: 0,
                    ranks: rs.len() as i32,
                    events: file_events[i],
                }
            })
            .collect();
        w.add_counters(self.cpu.rows(
            self.servers,
            summary.duration_ns,
            |s| self.server_process(s),
            server_name,
        ));
        let meta = self.meta(system, command, summary.duration_ns);
        w.finish(&file_rows, settings, meta)?;
        Ok(summary)
    }

    fn meta(&self, system: &System, command: &str, duration_ns: u64) -> Meta {
        let node_of = |r: u32| match system.nodes.placement {
            Placement::Block => r / system.nodes.ranks_per_node.max(1),
            Placement::RoundRobin => r % system.nodes.count.max(1),
        };
        let host = |r: u32| format!("node-{}", node_of(r));
        let clock = ClockMeta::exact("simulated", duration_ns, 0);
        let mut processes = Vec::new();
        for r in 0..self.ranks {
            let mut p =
                ProcessMeta::generated(r, ContainerKind::Process, r as i32, host(r), clock.clone());
            p.cmdline = Some(command.to_string());
            p.facts = [
                ("rank", r.to_string()),
                ("size", self.ranks.to_string()),
                ("host", host(r)),
                ("simulated", system.name.clone()),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
            processes.push(p);
        }
        // Servers, then their disks (docs/FORMAT.md, Containers).
        for s in 0..self.servers {
            let role = if s < system.storage.data_servers {
                "data"
            } else {
                "metadata"
            };
            let p = self.server_process(s);
            processes.push(server_meta(p, &server_name(s), role, clock.clone()));
        }
        for s in 0..self.servers {
            for d in 0..self.disks_per_server {
                let p = self.disk_process(s, d);
                processes.push(disk_meta(p, &server_name(s), d, clock.clone()));
            }
        }
        let job = JobMeta {
            command: Some(command.to_string()),
            start_unix_ns: START_UNIX_NS,
            duration_ns: duration_ns as i64,
            ranks: self.ranks,
            hosts: (0..self.ranks).map(host).collect(),
            mpi_library: Some(format!("simulated ROMIO on {}", system.name)),
        };
        Meta::new(
            format!("pioscope-sim {}", env!("CARGO_PKG_VERSION")),
            job,
            processes,
        )
    }
}

/// The name (and host) of simulated server `s`.
fn server_name(s: u32) -> String {
    format!("server-{s}")
}

impl Recorder for StoreRecorder {
    fn call(&mut self, rank: Rank, depth: u8, call: &Call, start_ns: u64, end_ns: u64) {
        let mut bits = 0u8;
        if call.collective {
            bits |= 1;
        }
        if call.offset.is_some() {
            bits |= 2;
        }
        if call.file.is_some() {
            bits |= 4;
        }
        if call.peer.is_some() {
            bits |= 8;
        }
        if call.instance.is_some() {
            bits |= 16;
        }
        let seq = self.recs.len() as u64;
        self.push(Rec {
            process: rank,
            start: start_ns,
            end: end_ns,
            seq,
            size: call.size,
            offset: call.offset.unwrap_or(0),
            file: call.file.unwrap_or(0),
            peer: call.peer.map_or(0, |p| p as i32),
            instance: call.instance.unwrap_or(0),
            func: call.func,
            depth,
            bits,
        });
    }

    fn server(&mut self, a: &ServerActivity) {
        let seq = self.recs.len() as u64;
        let process = self.server_process(a.server);
        self.push(Rec {
            process,
            start: a.start_ns,
            end: a.end_ns,
            seq,
            size: a.bytes,
            offset: a.offset,
            file: a.file,
            peer: a.client as i32,
            instance: 0,
            func: a.func,
            depth: 0,
            bits: 2 | 4 | 8,
        });
    }

    fn disk(&mut self, a: &DiskActivity) {
        let seq = self.recs.len() as u64;
        let process = self.disk_process(a.server, a.disk.min(self.disks_per_server - 1));
        self.push(Rec {
            process,
            start: a.start_ns,
            end: a.end_ns,
            seq,
            size: a.bytes,
            offset: a.offset,
            file: 0,
            peer: 0,
            instance: 0,
            func: a.func,
            depth: 0,
            bits: 2,
        });
    }

    fn server_cpu(&mut self, a: &CpuActivity) {
        self.cpu.add(a);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine;
    use crate::model::load;
    use crate::mpiio::{replay, workload};
    use pioscope_trace::store::{Trace, EVENTS_FILE, FILES_FILE, META_FILE};
    use std::collections::HashMap;

    fn simulate(spec: &str, preset: &str, dir: &Path) -> (StoreSummary, crate::program::Job) {
        let sys = load::system(preset, &[]).unwrap();
        let g = workload::generate(spec, &sys).unwrap();
        let ranks = g.job.programs.len() as u32;
        let mut rec = StoreRecorder::new(&sys, ranks);
        engine::run(&sys, &g.job, 1, &mut rec).unwrap();
        let s = rec.write(dir, &sys, &g.job.files, &[], spec).unwrap();
        (s, g.job)
    }

    /// The simulated store reads back: store order, parents enclosing children, containers
    /// for ranks, servers and disks, instances equal across ranks.
    #[test]
    fn simulated_store_reads_back() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("t");
        let spec = "hpio:ranks=4,region_count=256,mode=collective";
        let (summary, job) = simulate(spec, "pvfs2-2009", &dir);
        let trace = Trace::open(&dir).unwrap();
        assert_eq!(trace.meta.counts.events, summary.events);
        assert_eq!(trace.meta.job.ranks, 4);
        let kinds: Vec<ContainerKind> = trace.meta.processes.iter().map(|p| p.kind).collect();
        assert_eq!(
            kinds
                .iter()
                .filter(|k| **k == ContainerKind::Process)
                .count(),
            4
        );
        assert_eq!(
            kinds
                .iter()
                .filter(|k| **k == ContainerKind::Server)
                .count(),
            5
        );
        assert_eq!(
            kinds.iter().filter(|k| **k == ContainerKind::Disk).count(),
            5
        );
        let begins: usize = job
            .programs
            .iter()
            .map(|p| {
                p.iter()
                    .filter(|o| matches!(o, crate::program::Op::Begin(_)))
                    .count()
            })
            .sum();
        let mut rank_events = 0;
        let mut last = (i32::MIN, i64::MIN);
        let mut ends: HashMap<i64, (i64, u8)> = HashMap::new();
        let mut inst: HashMap<i32, Vec<i32>> = HashMap::new();
        let mut server_writes = 0;
        for b in trace.events().unwrap() {
            let b = b.unwrap();
            for e in b.iter() {
                assert!((e.rank, e.start_ns) >= last, "order at {}", e.id);
                last = (e.rank, e.start_ns);
                if let Some(p) = e.parent {
                    let (pend, pd) = ends[&p];
                    assert!(e.end_ns() <= pend, "child {} outlives parent", e.id);
                    assert_eq!(e.depth, pd + 1);
                }
                ends.insert(e.id, (e.end_ns(), e.depth));
                if e.rank >= 0 {
                    rank_events += 1;
                }
                if let Some(i) = e.instance {
                    inst.entry(i).or_default().push(e.rank);
                }
                if e.func == "server_write" {
                    server_writes += 1;
                    assert_eq!(e.layer, Layer::Server);
                }
            }
        }
        assert_eq!(rank_events, begins, "one row per Begin/End pair");
        assert!(server_writes > 0);
        // open, set_view, write_all, sync, close
        assert_eq!(inst.len(), 5);
        assert!(inst.values().all(|v| v.len() == 4));
    }

    /// Issue 4: the same inputs and seed give byte-identical output.
    #[test]
    fn deterministic() {
        let tmp = tempfile::tempdir().unwrap();
        let spec = "hpio:ranks=4,region_count=128,mode=independent";
        simulate(spec, "lustre-fdr", &tmp.path().join("a"));
        simulate(spec, "lustre-fdr", &tmp.path().join("b"));
        for f in [EVENTS_FILE, META_FILE, FILES_FILE] {
            let a = std::fs::read(tmp.path().join("a").join(f)).unwrap();
            let b = std::fs::read(tmp.path().join("b").join(f)).unwrap();
            assert!(a == b, "{f} differs");
        }
    }

    /// Replaying the checked-in traced HPIO runs gives jobs the engine runs to the end.
    #[test]
    fn replays_checked_in_traces() {
        let sys = load::system("local", &[]).unwrap();
        for name in ["hpio-collective", "hpio-independent"] {
            let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../tests/data")
                .join(name);
            let trace = Trace::open(&dir).unwrap();
            let r = replay::replay(&trace, &sys, &[]).unwrap();
            assert_eq!(r.job.programs.len(), 4);
            assert_eq!(r.bytes_written, 2 * 4 * 32768, "{name}");
            let mut rec = StoreRecorder::new(&sys, 4);
            let s = engine::run(&sys, &r.job, 1, &mut rec).unwrap();
            assert!(s.end_ns > 0);
            let tmp = tempfile::tempdir().unwrap();
            let out = tmp.path().join(name);
            rec.write(&out, &sys, &r.job.files, &[], name).unwrap();
            let t = Trace::open(&out).unwrap();
            assert!(t.meta.counts.events > 0);
        }
    }
}
