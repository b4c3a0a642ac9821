//! Storage servers: what each event of a server or disk container is (one classifier for
//! simulated and real traces), the per-server table of `pioscope stats --by server` (PIOviz's
//! columns) and which client calls became which server operations.
//!
//! The classifier (`classify`):
//! - simulated traces: a `server`-layer record (server_read, server_write, ...) is a request
//!   the server received over the network; a `disk`-layer record is a storage access;
//! - real server traces (the runtime inside the daemon): a POSIX/STDIO record on a path
//!   starting with `socket:` is a network operation, any other file I/O record (on the brick's
//!   files) a storage operation; the rest (epoll, MPI, regions) is other work.
//!
//! Definitions (also in docs/CLI.md): loads are operations per second of the job's duration;
//! a storage access is a storage operation that moves data; throughput is storage bytes per
//! second of busy time; busy time is the union of a server's network and storage operations
//! (its disks' included); CPU % is the mean of the server process's sampled user + system CPU
//! (counters.parquet), absent without samples.
//!
//! Client calls are tied to server operations by file (the last path component: a brick
//! holds the client's file under its own directory), direction and time: a server data
//! operation on the file that starts inside a top-level client call of the same direction
//! belongs to that call's function. State: per client function and file the merged intervals
//! of its calls (one per collective instance), and one small entry per server data operation
//! (servers see far fewer operations than the clients issue records).

use std::collections::{BTreeMap, BTreeSet};

use pioscope_trace::functions::{self, Layer, OpKind};
use pioscope_trace::merge::servers::DATA_ROLE;
use pioscope_trace::store::containers::ROLE_FACT;
use pioscope_trace::store::meta::ContainerKind;
use pioscope_trace::store::{Container, Containers, CounterRow, Event, StoreError, Trace};
use pioscope_trace::units;
use rustc_hash::{FxHashMap, FxHashSet};
use serde::Serialize;

use crate::class::io_class;
use crate::nesting::{Frame, Nesting};
use crate::pass::{self, Context, Visitor};
use crate::scope::Scope;
use crate::stats::Names;

/// Files of a real server whose path starts with this are network connections.
pub const SOCKET_PREFIX: &str = "socket:";

/// What a server spends an operation on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ServerWork {
    /// A request or reply over the network.
    Network,
    /// An access to its storage.
    Storage,
    /// Anything else the daemon does.
    Other,
}

/// One server or disk record, classified.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ServerOp {
    /// Network, storage or other.
    pub work: ServerWork,
    /// Read, write or other.
    pub kind: OpKind,
    /// It names a client's file and moves data: it can be tied to the client calls.
    pub ties: bool,
}

impl ServerOp {
    /// It moves data.
    pub fn data(&self) -> bool {
        self.kind.moves_data()
    }
}

/// The class of a record of a container of kind `container` (None for application
/// processes); `file`: the record's file path.
pub fn classify(
    container: ContainerKind,
    layer: Layer,
    func: &str,
    file: Option<&str>,
) -> Option<ServerOp> {
    if container == ContainerKind::Process {
        return None;
    }
    let kind = functions::kind_of(layer, func);
    let data = kind.moves_data();
    let (work, ties) = match layer {
        Layer::Server => (ServerWork::Network, data && file.is_some()),
        Layer::Disk => (ServerWork::Storage, false),
        _ if file.is_some_and(|f| f.starts_with(SOCKET_PREFIX)) => (ServerWork::Network, false),
        _ if io_class(layer, func).is_some() && file.is_some() => (ServerWork::Storage, data),
        _ => (ServerWork::Other, false),
    };
    Some(ServerOp { work, kind, ties })
}

/// One server's row (`pioscope stats --by server`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ServerRow {
    /// The server's name.
    pub server: String,
    /// Its role (meta.json fact `role`: data, metadata), if known.
    pub role: Option<String>,
    /// Network operations (requests and replies).
    pub network_ops: u64,
    /// Bytes of the network operations that moved data.
    pub network_bytes: u64,
    /// Network load: network operations per second of the job.
    pub network_ops_per_sec: f64,
    /// Storage operations (data and metadata).
    pub storage_ops: u64,
    /// Storage load: storage operations per second of the job.
    pub storage_ops_per_sec: f64,
    /// Storage operations that moved data.
    pub storage_accesses: u64,
    /// Bytes the storage accesses moved.
    pub storage_bytes: u64,
    /// storage_bytes / storage_accesses.
    pub bytes_per_access: Option<f64>,
    /// Sum of the storage operations' durations, ns.
    pub storage_time_ns: i64,
    /// Mean sampled CPU (user + system) of the server process, percent of one core.
    pub cpu_percent: Option<f64>,
    /// Highest sampled CPU, percent of one core.
    pub cpu_peak_percent: Option<f64>,
    /// storage_bytes per second of busy time.
    pub throughput: Option<f64>,
    /// Union of the server's network and storage operations, ns.
    pub busy_ns: i64,
    /// busy_ns / job duration.
    pub busy_fraction: f64,
}

/// What one client function's calls became on the servers.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CallToServers {
    /// The client function (a top-level I/O call: MPI_File_write_all, pwrite, ...).
    pub func: String,
    /// `read` or `write`.
    pub direction: String,
    /// Its calls on files the servers saw.
    pub calls: u64,
    /// Ranks that made them.
    pub ranks: u32,
    /// Bytes the calls moved.
    pub bytes: u64,
    /// Server operations tied to them.
    pub server_ops: u64,
    /// Bytes of those operations.
    pub server_bytes: u64,
    /// Servers they ran on.
    pub servers: u32,
    /// `storage` (real servers' accesses) or `server` (simulated servers' requests).
    pub work: ServerWork,
    /// One sentence: "MPI_File_write_all: 4 MiB from 4 ranks became 16 storage writes of
    /// 256 KiB on 4 servers".
    pub summary: String,
}

/// The server table of a trace.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ServerTable {
    /// Job duration, ns.
    pub duration_ns: i64,
    /// One row per server, by name.
    pub servers: Vec<ServerRow>,
    /// Client functions and what they became, most server operations first.
    pub calls: Vec<CallToServers>,
    /// Server data operations no client call explains: on a file of the clients' with no call
    /// of theirs on it running, or on a file no client names with no call running at all.
    pub untied_server_ops: u64,
}

/// One server's sums while the pass runs.
#[derive(Debug, Default, Clone)]
pub(crate) struct ServerAcc {
    pub(crate) network_ops: u64,
    pub(crate) network_bytes: u64,
    pub(crate) storage_ops: u64,
    pub(crate) storage_accesses: u64,
    pub(crate) storage_bytes: u64,
    pub(crate) storage_time_ns: i64,
    pub(crate) busy_ns: i64,
    open: Option<(i64, i64)>,
}

impl ServerAcc {
    fn add(&mut self, e: &Event<'_>, op: ServerOp) {
        let moved = functions::bytes_moved(e.size.max(0) as u64, e.result, e.error);
        match op.work {
            ServerWork::Network => {
                self.network_ops += 1;
                if op.data() {
                    self.network_bytes += moved;
                }
            }
            ServerWork::Storage => {
                self.storage_ops += 1;
                self.storage_time_ns += e.duration_ns;
                if op.data() {
                    self.storage_accesses += 1;
                    self.storage_bytes += moved;
                }
            }
            ServerWork::Other => return,
        }
        let (s, t) = (e.start_ns, e.end_ns().max(e.start_ns));
        self.open = Some(match self.open {
            Some((a, b)) if s <= b => (a, b.max(t)),
            Some((a, b)) => {
                self.busy_ns += b - a;
                (s, t)
            }
            None => (s, t),
        });
    }

    fn close(&mut self) {
        if let Some((a, b)) = self.open.take() {
            self.busy_ns += b - a;
        }
    }
}

/// A client function's calls: counts and the merged intervals per (file, direction), and per
/// direction over every file.
#[derive(Debug, Default)]
struct ClientCalls {
    calls: u64,
    bytes: u64,
    ranks: FxHashSet<i32>,
    /// (file key, write?) → start → end, merged.
    intervals: FxHashMap<(u32, bool), BTreeMap<i64, i64>>,
    /// [read, write] → start → end, merged over the files.
    any_file: [BTreeMap<i64, i64>; 2],
}

/// The container of the server named `name`.
fn server_container<'a>(containers: &'a Containers, name: &str) -> Option<&'a Container> {
    containers
        .all()
        .iter()
        .find(|c| c.kind == ContainerKind::Server && c.server.as_deref() == Some(name))
}

/// Whether an interval of `set` covers `t`.
fn covers(set: &BTreeMap<i64, i64>, t: i64) -> bool {
    set.range(..=t)
        .next_back()
        .is_some_and(|(_, &end)| t <= end)
}

fn insert_interval(set: &mut BTreeMap<i64, i64>, mut s: i64, mut t: i64) {
    if let Some((&a, &b)) = set.range(..=s).next_back() {
        if b >= s {
            s = a;
            t = t.max(b);
        }
    }
    let covered: Vec<i64> = set.range(s..=t).map(|(&a, _)| a).collect();
    for a in covered {
        if let Some(b) = set.remove(&a) {
            t = t.max(b);
        }
    }
    set.insert(s, t);
}

/// A server data operation that can be tied to client calls.
#[derive(Clone, Copy, Debug)]
struct TieOp {
    file: u32,
    write: bool,
    start: i64,
    bytes: u64,
    server: u32,
    work: ServerWork,
}

/// The server table as a visitor of the shared pass.
pub struct ServerVisitor {
    containers: Containers,
    /// Server number of each container (None for application processes).
    server_of: Vec<Option<u32>>,
    server_names: Vec<String>,
    /// Each server's role (meta.json fact `role`), in `server_names` order.
    roles: Vec<Option<String>>,
    servers: Vec<ServerAcc>,
    names: Names,
    client: FxHashMap<u32, ClientCalls>,
    nest: Nesting<()>,
    /// Whether client calls are tied to server operations (the table does; the finding
    /// rules need the loads only).
    tying: bool,
    ties: Vec<TieOp>,
}

impl ServerVisitor {
    /// The visitor for `trace` (its containers say which are servers).
    pub fn new(trace: &Trace) -> Self {
        ServerVisitor {
            tying: true,
            ..Self::loads(trace)
        }
    }

    /// A visitor of the servers' loads only (no client calls tied).
    pub fn loads(trace: &Trace) -> Self {
        let containers = Containers::new(&trace.meta);
        let mut server_names: Vec<String> = containers
            .all()
            .iter()
            .filter_map(|c| c.server.clone())
            .collect::<BTreeSet<String>>()
            .into_iter()
            .collect();
        server_names.sort();
        let server_of = containers
            .all()
            .iter()
            .map(|c| {
                let s = c.server.as_deref()?;
                server_names
                    .binary_search_by(|n| n.as_str().cmp(s))
                    .ok()
                    .map(|i| i as u32)
            })
            .collect();
        let roles = server_names
            .iter()
            .map(|name| {
                server_container(&containers, name)
                    .and_then(|c| trace.meta.processes.get(c.process as usize))
                    .and_then(|p| p.facts.get(ROLE_FACT))
                    .cloned()
            })
            .collect();
        ServerVisitor {
            servers: vec![ServerAcc::default(); server_names.len()],
            server_of,
            roles,
            server_names,
            containers,
            names: Names::default(),
            client: FxHashMap::default(),
            nest: Nesting::new(),
            tying: false,
            ties: Vec::new(),
        }
    }

    /// The trace has servers.
    pub fn has_servers(&self) -> bool {
        !self.server_names.is_empty()
    }

    fn file_key(&mut self, e: &Event<'_>, ctx: &Context<'_>) -> Option<u32> {
        let path = ctx.trace.file_path(e.file_id?)?;
        let base = path.rsplit('/').next().unwrap_or(path);
        Some(self.names.id(base))
    }

    fn visit_client(&mut self, e: &Event<'_>, ctx: &Context<'_>) {
        let top = {
            let stack = self.nest.enter(e, |_| {});
            let top = stack.is_empty() && crate::class::is_io_layer(e.layer);
            if top {
                stack.push(Frame::of(e, ()));
            }
            top
        };
        let kind = functions::kind_of(e.layer, e.func);
        if !top || !kind.moves_data() {
            return;
        }
        let Some(file) = self.file_key(e, ctx) else {
            return;
        };
        let func = self.names.id(e.func);
        let c = self.client.entry(func).or_default();
        c.calls += 1;
        c.bytes += functions::bytes_moved(e.size.max(0) as u64, e.result, e.error);
        c.ranks.insert(e.rank);
        let (write, end) = (kind == OpKind::Write, e.end_ns().max(e.start_ns));
        insert_interval(
            c.intervals.entry((file, write)).or_default(),
            e.start_ns,
            end,
        );
        insert_interval(&mut c.any_file[write as usize], e.start_ns, end);
    }

    /// Per server its sums (closed), in name order, with the names.
    pub(crate) fn sums(&self) -> Vec<(&str, ServerAcc)> {
        self.server_names
            .iter()
            .zip(&self.servers)
            .map(|(n, a)| {
                let mut a = a.clone();
                a.close();
                (n.as_str(), a)
            })
            .collect()
    }

    /// The sums of the servers that store data (role `data`, or none given), in name order:
    /// a management daemon (GlusterFS `glusterd`) or a simulated metadata server moves no file
    /// data, so it is no peer of the data servers in their balance.
    pub(crate) fn data_sums(&self) -> Vec<(&str, ServerAcc)> {
        self.sums()
            .into_iter()
            .zip(&self.roles)
            .filter(|(_, role)| role.as_deref().is_none_or(|r| r == DATA_ROLE))
            .map(|(sum, _)| sum)
            .collect()
    }

    /// The table, with the CPU of each server from `counters`.
    pub fn table(&self, ctx: &Context<'_>, counters: &[CounterRow]) -> ServerTable {
        let duration = ctx.trace.meta.job.duration_ns.max(1);
        let per_sec = |n: u64| n as f64 / (duration as f64 / 1e9);
        let servers = self
            .sums()
            .into_iter()
            .zip(&self.roles)
            .map(|((name, a), role)| {
                let server = server_container(&self.containers, name);
                let cpu = crate::counters::server_cpu(counters, server);
                ServerRow {
                    server: name.to_string(),
                    role: role.clone(),
                    network_ops: a.network_ops,
                    network_bytes: a.network_bytes,
                    network_ops_per_sec: per_sec(a.network_ops),
                    storage_ops: a.storage_ops,
                    storage_ops_per_sec: per_sec(a.storage_ops),
                    storage_accesses: a.storage_accesses,
                    storage_bytes: a.storage_bytes,
                    bytes_per_access: (a.storage_accesses > 0)
                        .then(|| a.storage_bytes as f64 / a.storage_accesses as f64),
                    storage_time_ns: a.storage_time_ns,
                    cpu_percent: cpu.mean(),
                    cpu_peak_percent: cpu.peak(),
                    throughput: (a.busy_ns > 0)
                        .then(|| a.storage_bytes as f64 / (a.busy_ns as f64 / 1e9)),
                    busy_ns: a.busy_ns,
                    busy_fraction: a.busy_ns as f64 / duration as f64,
                }
            })
            .collect();
        let (calls, untied) = self.tie();
        ServerTable {
            duration_ns: ctx.trace.meta.job.duration_ns,
            servers,
            calls,
            untied_server_ops: untied,
        }
    }

    /// Ties the server data operations to the client functions.
    fn tie(&self) -> (Vec<CallToServers>, u64) {
        #[derive(Default)]
        struct Tied {
            ops: u64,
            bytes: u64,
            servers: FxHashSet<u32>,
            work: Option<ServerWork>,
        }
        let mut by_func: BTreeMap<(u32, bool), Tied> = BTreeMap::new();
        let mut untied = 0;
        // In name order, so an operation two functions' calls could explain always goes to
        // the same one.
        let mut clients: Vec<(u32, &ClientCalls)> =
            self.client.iter().map(|(&f, c)| (f, c)).collect();
        clients.sort_by(|a, b| self.names.get(a.0).cmp(self.names.get(b.0)));
        // A server that names its files otherwise than the clients do (a GlusterFS brick
        // reads and writes through its gfid handles, `.glusterfs/ab/cd/<gfid>`; a chunk server
        // through chunk files) is tied by direction and time alone.
        let client_files: FxHashSet<u32> = self
            .client
            .values()
            .flat_map(|c| c.intervals.keys().map(|&(file, _)| file))
            .collect();
        for op in &self.ties {
            let named = client_files.contains(&op.file);
            let owner = clients.iter().find(|(_, c)| {
                if named {
                    c.intervals
                        .get(&(op.file, op.write))
                        .is_some_and(|set| covers(set, op.start))
                } else {
                    covers(&c.any_file[op.write as usize], op.start)
                }
            });
            match owner {
                Some(&(func, _)) => {
                    let t = by_func.entry((func, op.write)).or_default();
                    t.ops += 1;
                    t.bytes += op.bytes;
                    t.servers.insert(op.server);
                    t.work = Some(op.work);
                }
                None => untied += 1,
            }
        }
        let mut calls: Vec<CallToServers> = by_func
            .into_iter()
            .map(|((func, write), t)| {
                let c = &self.client[&func];
                let name = self.names.get(func).to_string();
                let direction = if write { "write" } else { "read" };
                let work = t.work.unwrap_or(ServerWork::Storage);
                let noun = if work == ServerWork::Storage {
                    "storage"
                } else {
                    "server"
                };
                let summary = format!(
                    "{name}: {} from {} rank{} became {} {noun} {direction}{} of {} on {} server{}",
                    units::bytes(c.bytes),
                    c.ranks.len(),
                    plural(c.ranks.len() as u64),
                    t.ops,
                    plural(t.ops),
                    units::bytes(t.bytes / t.ops.max(1)),
                    t.servers.len(),
                    plural(t.servers.len() as u64),
                );
                CallToServers {
                    func: name,
                    direction: direction.into(),
                    calls: c.calls,
                    ranks: c.ranks.len() as u32,
                    bytes: c.bytes,
                    server_ops: t.ops,
                    server_bytes: t.bytes,
                    servers: t.servers.len() as u32,
                    work,
                    summary,
                }
            })
            .collect();
        calls.sort_by(|a, b| b.server_ops.cmp(&a.server_ops).then(a.func.cmp(&b.func)));
        (calls, untied)
    }
}

fn plural(n: u64) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

impl Visitor for ServerVisitor {
    fn sees_server_records(&self) -> bool {
        true
    }

    fn visit(&mut self, e: &Event<'_>, ctx: &Context<'_>) {
        if !self.has_servers() {
            return;
        }
        let server = self
            .server_of
            .get(e.process.max(0) as usize)
            .copied()
            .flatten();
        let Some(server) = server else {
            if self.tying {
                self.visit_client(e, ctx);
            }
            return;
        };
        let kind = self
            .containers
            .get(e.process)
            .map_or(ContainerKind::Process, |c| c.kind);
        let path = e.file_id.and_then(|f| ctx.trace.file_path(f));
        let Some(op) = classify(kind, e.layer, e.func, path) else {
            return;
        };
        self.servers[server as usize].add(e, op);
        if op.ties && self.tying {
            if let Some(file) = self.file_key(e, ctx) {
                self.ties.push(TieOp {
                    file,
                    write: op.kind == OpKind::Write,
                    start: e.start_ns,
                    bytes: functions::bytes_moved(e.size.max(0) as u64, e.result, e.error),
                    server,
                    work: op.work,
                });
            }
        }
    }
}

/// The server table of a trace, alone (one pass).
pub fn compute(trace: &Trace, scope: Scope) -> Result<ServerTable, StoreError> {
    table_of(trace, scope, ServerVisitor::new(trace))
}

/// The servers' rows only (no client calls tied), or None when the trace has no servers
/// (then nothing is read).
pub fn loads(trace: &Trace, scope: Scope) -> Result<Option<ServerTable>, StoreError> {
    let v = ServerVisitor::loads(trace);
    if !v.has_servers() {
        return Ok(None);
    }
    table_of(trace, scope, v).map(Some)
}

fn table_of(trace: &Trace, scope: Scope, mut v: ServerVisitor) -> Result<ServerTable, StoreError> {
    let ctx = pass::context(trace, scope)?;
    pass::run(&ctx, &mut [&mut v], &mut |_, _| {})?;
    let counters = trace.counters()?;
    Ok(v.table(&ctx, &counters))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{rec, Rec, ServerStore};

    #[test]
    fn classifier_for_simulated_and_real_servers() {
        use ContainerKind::{Disk, Process, Server};
        let op = |k, l, f, p| classify(k, l, f, p);
        assert_eq!(op(Process, Layer::Posix, "pwrite64", Some("/f")), None);
        let sim = op(Server, Layer::Server, "server_write", Some("/f")).expect("op");
        assert_eq!(
            (sim.work, sim.kind, sim.ties),
            (ServerWork::Network, OpKind::Write, true)
        );
        let disk = op(Disk, Layer::Disk, "disk_read", None).expect("op");
        assert_eq!((disk.work, disk.ties), (ServerWork::Storage, false));
        let brick = op(Server, Layer::Posix, "pwrite64", Some("/bricks/b0/out")).expect("op");
        assert_eq!((brick.work, brick.ties), (ServerWork::Storage, true));
        let meta = op(Server, Layer::Posix, "fsync", Some("/bricks/b0/out")).expect("op");
        assert_eq!((meta.work, meta.ties), (ServerWork::Storage, false));
        let net = op(
            Server,
            Layer::Posix,
            "readv",
            Some("socket:127.0.0.1:49151"),
        )
        .expect("op");
        assert_eq!((net.work, net.kind), (ServerWork::Network, OpKind::Read));
        assert_eq!(
            op(Server, Layer::Posix, "epoll_wait", None).map(|o| o.work),
            Some(ServerWork::Other)
        );
    }

    /// 4 ranks write 1 MiB each with one MPI_File_write_all (4 MiB); two real-like servers
    /// each receive it over a socket (readv) and store it in 8 pwrite64s of 256 KiB on their
    /// brick; one server write after the call matches no call.
    #[test]
    fn table_and_calls_of_a_real_like_store() {
        let dir = tempfile::tempdir().expect("tmp");
        let mut s = ServerStore::default();
        let f = s.file("/mnt/vol/ckpt.dat");
        let ms = 1_000_000;
        for r in 0..4i64 {
            s.clients.push(vec![rec(
                "MPI_File_write_all",
                0,
                100 * ms,
                f,
                r << 20,
                1 << 20,
            )]);
        }
        for i in 0..2i64 {
            let brick = s.file(&format!("/bricks/b{i}/ckpt.dat"));
            let sock = s.file(&format!("socket:10.0.0.{i}:49152"));
            let mut recs: Vec<Rec> = vec![rec("readv", 5 * ms, 5 * ms, sock, 0, 2 << 20)];
            recs.extend((0..8).map(|k| {
                rec(
                    "pwrite64",
                    (10 + 10 * k) * ms,
                    5 * ms,
                    brick,
                    k << 18,
                    1 << 18,
                )
            }));
            if i == 1 {
                recs.push(rec("pwrite64", 150 * ms, 10 * ms, brick, 0, 4096));
            }
            s.servers.push((format!("brick-{i}"), recs));
        }
        let t = s.build(dir.path());
        let table = compute(&t, Scope::Application).expect("table");
        assert_eq!(table.duration_ns, 160 * ms);
        let b0 = &table.servers[0];
        assert_eq!(b0.server, "brick-0");
        assert_eq!((b0.network_ops, b0.network_bytes), (1, 2 << 20));
        assert_eq!(
            (b0.storage_ops, b0.storage_accesses, b0.storage_bytes),
            (8, 8, 2 << 20)
        );
        assert_eq!(b0.bytes_per_access, Some((1 << 18) as f64));
        assert_eq!(b0.busy_ns, 45 * ms, "readv and 8 writes of 5 ms");
        assert_eq!(b0.storage_ops_per_sec, 8.0 / 0.16);
        assert_eq!(b0.cpu_percent, None);
        assert_eq!(table.servers[1].storage_accesses, 9);
        assert_eq!(table.calls.len(), 1);
        let c = &table.calls[0];
        assert_eq!(
            (c.func.as_str(), c.calls, c.ranks, c.bytes),
            ("MPI_File_write_all", 4, 4, 4 << 20)
        );
        assert_eq!((c.server_ops, c.server_bytes, c.servers), (16, 4 << 20, 2));
        assert_eq!(
            c.summary,
            "MPI_File_write_all: 4.0 MiB from 4 ranks became 16 storage writes of 256.0 KiB on 2 servers"
        );
        assert_eq!(table.untied_server_ops, 1);
    }
    /// A GlusterFS brick writes through its gfid handle, a name no client uses: its writes are
    /// tied by time alone (the one after the call stays untied); a read on the handle while
    /// only writes run is not tied to them.
    #[test]
    fn operations_on_files_no_client_names_are_tied_by_time() {
        let dir = tempfile::tempdir().expect("tmp");
        let mut s = ServerStore::default();
        let f = s.file("/mnt/vol/out.dat");
        let ms = 1_000_000;
        for r in 0..2i64 {
            s.clients.push(vec![rec(
                "MPI_File_write",
                10 * ms,
                50 * ms,
                f,
                r << 20,
                1 << 20,
            )]);
        }
        let handle = s.file("/bricks/b0/.glusterfs/e1/27/e1278b25-8bec-4a31-9a83-9eb3a43a5919");
        let mut recs: Vec<Rec> = (0..4)
            .map(|k| rec("pwrite64", (20 + 5 * k) * ms, ms, handle, k << 19, 1 << 19))
            .collect();
        recs.push(rec("pread64", 30 * ms, ms, handle, 0, 4096));
        recs.push(rec("pwrite64", 80 * ms, ms, handle, 0, 4096));
        s.servers.push(("brick-0".to_string(), recs));
        let t = s.build(dir.path());
        let table = compute(&t, Scope::Application).expect("table");
        assert_eq!(table.calls.len(), 1);
        let c = &table.calls[0];
        assert_eq!(
            (c.func.as_str(), c.direction.as_str()),
            ("MPI_File_write", "write")
        );
        assert_eq!((c.server_ops, c.server_bytes, c.servers), (4, 2 << 20, 1));
        assert_eq!(
            table.untied_server_ops, 2,
            "the read, and the write after the call"
        );
    }
}
