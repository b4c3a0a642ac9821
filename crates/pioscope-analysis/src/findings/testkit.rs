//! Fixture traces for the rules' tests: ranks, hosts, files and records described in a few
//! lines, written as raw files (RawFileBuilder) and merged into a real trace store, so every
//! rule is tested through the same pass and store a real run goes through.

use pioscope_trace::functions::by_name;
use pioscope_trace::merge::merge;
use pioscope_trace::raw::fixture::{FixtureEvent, RawFileBuilder};
use pioscope_trace::raw::format::{flags, string_kind};
use pioscope_trace::store::Trace;

use super::{rules, Config, Finding};
use crate::pass;
use crate::scope::Scope;

/// ext4's statfs magic.
pub(crate) const EXT4: u64 = 0xEF53;
/// Lustre's statfs magic.
pub(crate) const LUSTRE: u64 = 0x0BD0_0BD0;

/// A record of function `name` at `start` ns lasting `dur` ns.
pub(crate) fn ev(name: &str, start: u64, dur: u64) -> FixtureEvent {
    let id = by_name(name).map(|f| f.id).unwrap_or(0);
    assert!(id != 0, "no function {name}");
    FixtureEvent::new(id, start, dur)
}

/// A collective MPI-IO call: COLLECTIVE with the link of call `n` of file handle 1.
pub(crate) fn coll(name: &str, start: u64, dur: u64, n: u64) -> FixtureEvent {
    ev(name, start, dur)
        .flags(flags::COLLECTIVE)
        .link((1 << 32) | n)
}

/// A job under construction.
pub(crate) struct Fx {
    hosts: Vec<String>,
    files: Vec<(String, u64)>,
    events: Vec<Vec<FixtureEvent>>,
    settings: Vec<Vec<SettingsChunk>>,
}

/// (file, function id, time, key=value pairs) of one SETTINGS chunk.
type SettingsChunk = (u32, u16, u64, Vec<(String, String)>);

impl Fx {
    /// `ranks` MPI ranks, all on host `n0`.
    pub(crate) fn new(ranks: usize) -> Fx {
        Fx {
            hosts: vec!["n0".into(); ranks],
            files: Vec::new(),
            events: vec![Vec::new(); ranks],
            settings: vec![Vec::new(); ranks],
        }
    }

    /// Sets the host of every rank.
    pub(crate) fn hosts(mut self, hosts: &[&str]) -> Fx {
        assert_eq!(hosts.len(), self.hosts.len());
        self.hosts = hosts.iter().map(|h| h.to_string()).collect();
        self
    }

    /// A file on ext4; returns its string id (the same on every rank).
    pub(crate) fn file(&mut self, path: &str) -> u32 {
        self.file_on(path, EXT4)
    }

    /// A file on the file system of `magic`.
    pub(crate) fn file_on(&mut self, path: &str, magic: u64) -> u32 {
        self.files.push((path.to_string(), magic));
        self.files.len() as u32
    }

    /// Adds a record to `rank`.
    pub(crate) fn push(&mut self, rank: usize, e: FixtureEvent) -> &mut Fx {
        self.events[rank].push(e);
        self
    }

    /// Adds hints or view values of `file` on `rank`, as written by `func` at `t`.
    pub(crate) fn setting(
        &mut self,
        rank: usize,
        file: u32,
        func: &str,
        t: u64,
        values: &[(&str, &str)],
    ) -> &mut Fx {
        let id = by_name(func).map(|f| f.id).unwrap_or(0);
        self.settings[rank].push((
            file,
            id,
            t,
            values
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        ));
        self
    }

    /// Writes the raw files and merges them into `dir/trace`.
    pub(crate) fn build(&self, dir: &std::path::Path) -> Trace {
        let raw = dir.join("raw");
        std::fs::create_dir_all(&raw).expect("mkdir");
        let size = self.events.len().to_string();
        for (r, events) in self.events.iter().enumerate() {
            let mut b = RawFileBuilder::monotonic(r as u32 + 100, 1, 1_000);
            let rank = r.to_string();
            b.job(&[
                ("rank", rank.as_str()),
                ("size", size.as_str()),
                ("host", self.hosts[r].as_str()),
            ]);
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
            b.end();
            b.write_to(&raw.join(format!("r{r}.praw"))).expect("write");
        }
        let out = dir.join("trace");
        merge(&raw, &out, &mut |_| {}).expect("merge");
        Trace::open(&out).expect("open")
    }
}

/// Runs every rule of `config` over `trace` and returns the findings of rule `id`.
pub(crate) fn findings_of(trace: &Trace, config: &Config, id: &str) -> Vec<Finding> {
    let ctx = pass::context(trace, Scope::Application).expect("context");
    let mut rs = rules(config);
    {
        let mut vs: Vec<&mut dyn pass::Visitor> = rs
            .iter_mut()
            .map(|r| r.as_mut() as &mut dyn pass::Visitor)
            .collect();
        pass::run(&ctx, &mut vs, &mut |_, _| {}).expect("pass");
    }
    super::conclude(&rs, &ctx)
        .into_iter()
        .filter(|f| f.id == id)
        .collect()
}

/// The one finding of rule `id` with the default thresholds (panics if there is not exactly one).
pub(crate) fn one(trace: &Trace, id: &str) -> Finding {
    let mut v = findings_of(trace, &Config::default(), id);
    assert_eq!(v.len(), 1, "{id}: {v:#?}");
    v.remove(0)
}

/// No finding of rule `id` with the default thresholds.
pub(crate) fn none(trace: &Trace, id: &str) {
    let v = findings_of(trace, &Config::default(), id);
    assert!(v.is_empty(), "{id} fired: {v:#?}");
}

/// The integer evidence number `k`.
pub(crate) fn num(f: &Finding, k: &str) -> i64 {
    f.evidence
        .numbers
        .get(k)
        .and_then(|v| v.as_i64())
        .unwrap_or_else(|| panic!("{}: no integer {k} in {:?}", f.id, f.evidence.numbers))
}

/// The float evidence number `k`.
pub(crate) fn flt(f: &Finding, k: &str) -> f64 {
    f.evidence
        .numbers
        .get(k)
        .and_then(|v| v.as_f64())
        .unwrap_or_else(|| panic!("{}: no number {k} in {:?}", f.id, f.evidence.numbers))
}
