//! Test fixtures: small jobs written as raw files (the runtime's format, through
//! `raw::fixture`) and merged into a real trace store, so analyses and rules are tested on the
//! store as it really is, through the same pass a real run goes through. A job is described
//! rank by rank (`rank`, then `trace`) or whole (`Fx`: ranks, hosts, files, settings and
//! records in a few lines); `run` feeds it to one visitor, `findings` to every rule.

use std::path::Path;

use pioscope_trace::functions;
use pioscope_trace::merge::merge;
use pioscope_trace::raw::fixture::{FixtureEvent, RawFileBuilder};
use pioscope_trace::raw::format::{flags, string_kind};
use pioscope_trace::store::Trace;

use crate::findings::{self, Config, Finding};
use crate::pass::{self, Context, Visitor};
use crate::scope::Scope;

/// File string ids every `rank` defines.
pub const FILE_A: u32 = 1;
/// A second file.
pub const FILE_B: u32 = 2;
/// ext4's statfs magic.
pub const EXT4: u64 = 0xEF53;
/// Lustre's statfs magic.
pub const LUSTRE: u64 = 0x0BD0_0BD0;

/// The id of a function by name.
pub fn id(name: &str) -> u16 {
    functions::by_name(name)
        .unwrap_or_else(|| panic!("no function {name}"))
        .id
}

/// A record of `func` at `start` (ns) lasting `dur` ns.
pub fn ev(func: &str, start: u64, dur: u64) -> FixtureEvent {
    FixtureEvent::new(id(func), start, dur)
}

/// A data call on `file` at `offset` of `size` bytes.
pub fn io(func: &str, start: u64, dur: u64, file: u32, offset: u64, size: u64) -> FixtureEvent {
    ev(func, start, dur).object(file).offset(offset).size(size)
}

/// A collective MPI-IO call: COLLECTIVE with the link of call `n` of file handle 1.
pub fn coll(e: FixtureEvent, n: u64) -> FixtureEvent {
    e.flags(flags::COLLECTIVE).link(1 << 32 | n)
}

/// One rank of a job, MONOTONIC clock from `t0` ns.
fn job_rank(rank: u32, size: u32, host: &str, t0: u64) -> RawFileBuilder {
    let mut b = RawFileBuilder::monotonic(100 + rank, 1, t0);
    let (r, n) = (rank.to_string(), size.to_string());
    b.job(&[("rank", r.as_str()), ("size", n.as_str()), ("host", host)]);
    b
}

/// One rank of a job: MONOTONIC clock from 0, files /data/a and /data/b, regions by name.
pub fn rank(rank: u32, size: u32, host: &str) -> RawFileBuilder {
    let mut b = job_rank(rank, size, host, 0);
    b.string(string_kind::FILE, FILE_A, "/data/a", EXT4);
    b.string(string_kind::FILE, FILE_B, "/data/b", EXT4);
    b
}

/// A region name string (id `id`).
pub fn region(b: &mut RawFileBuilder, id: u32, name: &str) {
    b.string(string_kind::REGION, id, name, 0);
}

/// Writes the ranks' raw files, merges them and opens the trace.
pub fn trace(dir: &Path, ranks: Vec<RawFileBuilder>) -> Trace {
    let raw = dir.join("raw");
    std::fs::create_dir_all(&raw).expect("mkdir");
    for (i, mut b) in ranks.into_iter().enumerate() {
        b.end();
        b.write_to(&raw.join(format!("r{i}.praw"))).expect("write");
    }
    let out = dir.join("trace");
    merge(&raw, &out, &mut |_| {}).expect("merge");
    Trace::open(&out).expect("open")
}

/// Runs one visitor over `trace` (every record counts) and hands it back with the context.
pub fn run<V: Visitor, R>(trace: &Trace, mut v: V, f: impl FnOnce(&V, &Context<'_>) -> R) -> R {
    let ctx = pass::context(trace, Scope::All).expect("context");
    pass::run(&ctx, &mut [&mut v], &mut |_, _| {}).expect("pass");
    f(&v, &ctx)
}

/// A whole job under construction: ranks, their hosts, files, settings and records.
pub struct Fx {
    hosts: Vec<String>,
    files: Vec<(String, u64)>,
    events: Vec<Vec<FixtureEvent>>,
    settings: Vec<Vec<SettingsChunk>>,
}

/// (file, function id, time, key=value pairs) of one SETTINGS chunk.
type SettingsChunk = (u32, u16, u64, Vec<(String, String)>);

impl Fx {
    /// `ranks` MPI ranks, all on host `n0`.
    pub fn new(ranks: usize) -> Fx {
        Fx {
            hosts: vec!["n0".into(); ranks],
            files: Vec::new(),
            events: vec![Vec::new(); ranks],
            settings: vec![Vec::new(); ranks],
        }
    }

    /// Sets the host of every rank.
    pub fn hosts(mut self, hosts: &[&str]) -> Fx {
        assert_eq!(hosts.len(), self.hosts.len());
        self.hosts = hosts.iter().map(|h| h.to_string()).collect();
        self
    }

    /// A file on ext4; returns its string id (the same on every rank).
    pub fn file(&mut self, path: &str) -> u32 {
        self.file_on(path, EXT4)
    }

    /// A file on the file system of `magic`.
    pub fn file_on(&mut self, path: &str, magic: u64) -> u32 {
        self.files.push((path.to_string(), magic));
        self.files.len() as u32
    }

    /// Adds a record to `rank`.
    pub fn push(&mut self, rank: usize, e: FixtureEvent) -> &mut Fx {
        self.events[rank].push(e);
        self
    }

    /// Adds hints or view values of `file` on `rank`, as written by `func` at `t`.
    pub fn setting(
        &mut self,
        rank: usize,
        file: u32,
        func: &str,
        t: u64,
        values: &[(&str, &str)],
    ) -> &mut Fx {
        self.settings[rank].push((
            file,
            id(func),
            t,
            values
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        ));
        self
    }

    /// Writes the raw files (clocks from 1000 ns) and merges them into `dir/trace`.
    pub fn build(&self, dir: &Path) -> Trace {
        let size = self.events.len() as u32;
        let mut ranks = Vec::new();
        for (r, events) in self.events.iter().enumerate() {
            let mut b = job_rank(r as u32, size, &self.hosts[r], 1_000);
            for (i, (path, magic)) in self.files.iter().enumerate() {
                b.string(string_kind::FILE, i as u32 + 1, path, *magic);
            }
            for (file, func, t, values) in &self.settings[r] {
                let kv: Vec<(&str, &str)> = values
                    .iter()
                    .map(|(k, v)| (k.as_str(), v.as_str()))
                    .collect();
                b.settings(*file, *func, *t, &kv);
            }
            // Chunks of at most 4096 records keep the fixture files like the runtime's.
            for chunk in events.chunks(4096) {
                b.events(0, chunk);
            }
            ranks.push(b);
        }
        trace(dir, ranks)
    }
}

/// The findings of every rule of `config` over `trace` (the application's records), ranked.
pub fn findings(trace: &Trace, config: &Config) -> Vec<Finding> {
    let ctx = pass::context(trace, Scope::Application).expect("context");
    let mut rules = findings::rules(config);
    pass::run(&ctx, &mut [&mut rules], &mut |_, _| {}).expect("pass");
    findings::conclude(&rules, &ctx)
}

/// The findings of rule `id` (default thresholds) judged from Darshan `counters`, with
/// `trace` giving the job (ranks, elapsed time, file names).
pub fn findings_from_counters(
    trace: &Trace,
    counters: &findings::Counters,
    id: &str,
) -> Vec<Finding> {
    let ctx = pass::context(trace, Scope::Application).expect("context");
    findings::conclude_from_counters(&findings::rules(&Config::default()), counters, &ctx)
        .into_iter()
        .filter(|f| f.id == id)
        .collect()
}

/// The one finding of rule `id` with the default thresholds (panics if there is not exactly one).
pub fn one(trace: &Trace, id: &str) -> Finding {
    let mut v = of_rule(trace, id);
    assert_eq!(v.len(), 1, "{id}: {v:#?}");
    v.remove(0)
}

/// No finding of rule `id` with the default thresholds.
pub fn none(trace: &Trace, id: &str) {
    let v = of_rule(trace, id);
    assert!(v.is_empty(), "{id} fired: {v:#?}");
}

fn of_rule(trace: &Trace, id: &str) -> Vec<Finding> {
    let mut v = findings(trace, &Config::default());
    v.retain(|f| f.id == id);
    v
}

/// The integer evidence number `k`.
pub fn num(f: &Finding, k: &str) -> i64 {
    f.evidence
        .numbers
        .get(k)
        .and_then(|v| v.as_i64())
        .unwrap_or_else(|| panic!("{}: no integer {k} in {:?}", f.id, f.evidence.numbers))
}

/// The float evidence number `k`.
pub fn flt(f: &Finding, k: &str) -> f64 {
    f.evidence
        .numbers
        .get(k)
        .and_then(|v| v.as_f64())
        .unwrap_or_else(|| panic!("{}: no number {k} in {:?}", f.id, f.evidence.numbers))
}

/// One record of a `ServerStore`.
#[derive(Clone, Debug)]
pub struct Rec {
    /// Function name (its layer from functions.def).
    pub func: &'static str,
    /// Start, ns.
    pub start: i64,
    /// Duration, ns.
    pub dur: i64,
    /// Index into the store's files, or None.
    pub file: Option<i32>,
    /// Offset.
    pub offset: i64,
    /// Size (and result).
    pub size: i64,
    /// Nesting depth.
    pub depth: u8,
}

/// A record of `func` on `file` at `offset`, `size` bytes.
pub fn rec(func: &'static str, start: i64, dur: i64, file: i32, offset: i64, size: i64) -> Rec {
    Rec {
        func,
        start,
        dur,
        file: Some(file),
        offset,
        size,
        depth: 0,
    }
}

/// A store like a traced job beside real storage servers, written through `StoreWriter` the
/// way merge writes one: client ranks (host `n1`), and servers as containers of kind `server`
/// (rank -1, host its name) whose records are the runtime's POSIX records (storage on brick
/// paths, network on `socket:` paths).
#[derive(Default)]
pub struct ServerStore {
    /// File paths (file ids are their indexes).
    pub files: Vec<String>,
    /// Records per client rank.
    pub clients: Vec<Vec<Rec>>,
    /// (name, records) per server.
    pub servers: Vec<(String, Vec<Rec>)>,
    /// Names of the servers whose role is `management` (the others': `data`).
    pub management: Vec<String>,
    /// Sampled counters.
    pub counters: Vec<pioscope_trace::store::CounterRow>,
}

impl ServerStore {
    /// The id of `path`, added if new.
    pub fn file(&mut self, path: &str) -> i32 {
        if let Some(i) = self.files.iter().position(|p| p == path) {
            return i as i32;
        }
        self.files.push(path.to_string());
        self.files.len() as i32 - 1
    }

    /// Writes the store at `dir/trace`.
    pub fn build(&self, dir: &Path) -> Trace {
        use pioscope_trace::merge::servers::{DATA_ROLE, MANAGEMENT_ROLE};
        use pioscope_trace::store::containers::server_meta;
        use pioscope_trace::store::meta::{ClockMeta, ContainerKind, JobMeta, Meta, ProcessMeta};
        use pioscope_trace::store::{Event, FileRow, StoreWriter};
        let ranks = self.clients.len();
        let all = self.clients.iter().chain(self.servers.iter().map(|s| &s.1));
        let end = all
            .flat_map(|v| v.iter().map(|r| r.start + r.dur))
            .max()
            .unwrap_or(0);
        let clock = || ClockMeta::exact("monotonic", end as u64, 0);
        let mut processes: Vec<ProcessMeta> = (0..ranks)
            .map(|r| {
                ProcessMeta::generated(
                    r as u32,
                    ContainerKind::Process,
                    r as i32,
                    "n1".into(),
                    clock(),
                )
            })
            .collect();
        for (i, (name, _)) in self.servers.iter().enumerate() {
            let role = if self.management.contains(name) {
                MANAGEMENT_ROLE
            } else {
                DATA_ROLE
            };
            processes.push(server_meta((ranks + i) as u32, name, role, clock()));
        }
        // Store order: rank (servers are -1, first), then start.
        let mut order: Vec<(i32, i64, i32, &Rec)> = Vec::new();
        for (r, recs) in self.clients.iter().enumerate() {
            order.extend(recs.iter().map(|x| (r as i32, x.start, r as i32, x)));
        }
        for (i, (_, recs)) in self.servers.iter().enumerate() {
            order.extend(recs.iter().map(|x| (-1, x.start, (ranks + i) as i32, x)));
        }
        order.sort_by_key(|o| (o.0, o.1, o.2, o.3.depth));
        let path = dir.join("trace");
        let mut w = StoreWriter::create(&path).expect("create");
        for (id, (rank, _, process, x)) in order.iter().enumerate() {
            let f = functions::by_name(x.func).expect(x.func);
            w.push(&Event {
                id: id as i64,
                rank: *rank,
                process: *process,
                depth: x.depth,
                file_id: x.file,
                offset: x.file.map(|_| x.offset),
                size: x.size,
                result: x.size,
                ..Event::call(f.layer, f.name, x.start, x.dur)
            })
            .expect("push");
        }
        w.add_counters(self.counters.iter().cloned());
        let files: Vec<FileRow> = self
            .files
            .iter()
            .enumerate()
            .map(|(i, p)| FileRow {
                file_id: i as i32,
                path: p.clone(),
                fs_type: "ext4".into(),
                fs_magic: EXT4 as i64,
                ranks: 0,
                events: 0,
            })
            .collect();
        let job = JobMeta {
            command: None,
            start_unix_ns: 0,
            duration_ns: end,
            ranks: ranks as u32,
            hosts: vec!["n1".into(); ranks],
            mpi_library: None,
        };
        let meta = Meta::new("test".into(), job, processes);
        w.finish(&files, &[], meta).expect("finish");
        Trace::open(&path).expect("open")
    }
}

/// A job of one client rank writing `data.out` with one MPI_File_write_all over the whole run
/// and one real-like server per `(accesses, duration ns, bytes)`: that many pwrite64s on its
/// brick's `data.out`, one after the other from time 0.
pub fn servers_trace(dir: &Path, servers: &[(u64, i64, i64)]) -> Trace {
    servers_store(servers).build(dir)
}

/// The store of [`servers_trace`], to add to before it is built.
pub fn servers_store(servers: &[(u64, i64, i64)]) -> ServerStore {
    let mut s = ServerStore::default();
    let client = s.file("/mnt/vol/data.out");
    let mut end = 0;
    for (i, &(n, dur, bytes)) in servers.iter().enumerate() {
        let brick = s.file(&format!("/bricks/b{i}/data.out"));
        let recs = (0..n as i64)
            .map(|k| rec("pwrite64", k * dur, dur, brick, k * bytes, bytes))
            .collect();
        end = end.max(n as i64 * dur);
        s.servers.push((format!("server-{i}"), recs));
    }
    let total: i64 = servers.iter().map(|&(n, _, b)| n as i64 * b).sum();
    s.clients
        .push(vec![rec("MPI_File_write_all", 0, end, client, 0, total)]);
    s
}
