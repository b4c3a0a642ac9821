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

use crate::findings::{self, AsVisitor, Config, Finding};
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
    {
        let mut rs: Vec<AsVisitor<'_>> = rules.iter_mut().map(|r| AsVisitor(r.as_mut())).collect();
        let mut vs: Vec<&mut dyn Visitor> = rs.iter_mut().map(|r| r as &mut dyn Visitor).collect();
        pass::run(&ctx, &mut vs, &mut |_, _| {}).expect("pass");
    }
    findings::conclude(&rules, &ctx)
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
