//! Test fixtures: small jobs written as raw files (the runtime's format, through
//! `raw::fixture`) and merged into a trace, so analyses are tested on the store as it really is.

use std::path::Path;

use pioscope_trace::functions;
use pioscope_trace::merge::merge;
use pioscope_trace::raw::fixture::{FixtureEvent, RawFileBuilder};
use pioscope_trace::raw::format::{flags, string_kind};
use pioscope_trace::store::Trace;

use crate::pass::{self, Context, Visitor};
use crate::scope::Scope;

/// File string ids every fixture rank defines.
pub const FILE_A: u32 = 1;
/// A second file.
pub const FILE_B: u32 = 2;

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

/// A collective MPI-IO call, instance link `n`.
pub fn coll(e: FixtureEvent, n: u64) -> FixtureEvent {
    e.flags(flags::COLLECTIVE).link(1 << 32 | n)
}

/// One rank of a job: MONOTONIC clock from 0, files /data/a and /data/b, regions by name.
pub fn rank(rank: u32, size: u32, host: &str) -> RawFileBuilder {
    let mut b = RawFileBuilder::monotonic(100 + rank, 1, 0);
    let (r, n) = (rank.to_string(), size.to_string());
    b.job(&[("rank", r.as_str()), ("size", n.as_str()), ("host", host)]);
    b.string(string_kind::FILE, FILE_A, "/data/a", 0xEF53);
    b.string(string_kind::FILE, FILE_B, "/data/b", 0xEF53);
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
