//! Statistics per layer, function, file or rank: operations, bytes, request sizes, total and
//! busy time, operations per second and throughput.
//!
//! Definitions (also in docs/CLI.md):
//! - bytes: what data operations moved (reads and writes at the POSIX, STDIO and MPI-IO
//!   layers, message bytes at the MPI layer): the result when it is a byte count below the
//!   request (a short read), else the requested size; 0 for a failed call. Metadata calls
//!   (open, stat, seek, sync, set_view, barrier, waits, ...) count as operations with 0 bytes;
//! - size min/mean/max: the requested sizes of the group's data operations;
//! - total time: the sum of durations; nested calls of one group overlap, so it can exceed
//!   the run time;
//! - busy time: per rank, the length of the union of the group's call intervals; summed over
//!   ranks. Ops/s and throughput divide by it;
//! - each row holds one layer: by file and by rank are split by layer too, so MPI-IO bytes
//!   and the POSIX bytes beneath them are never added together. Across rows they do both
//!   count: a 1 MiB MPI_File_write_all shows as 1 MiB at mpiio and again at posix.
//!
//! The busy-time union relies on the store order (rank, then start time): each group keeps one
//! open interval per rank and closes it when the next call starts after its end.

use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;

use crate::scope::{Scope, ScopeFilter};
use pioscope_trace::functions::{self, Layer, OpKind};
use pioscope_trace::store::{Event, StoreError, Trace};
use serde::Serialize;

/// What to group by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum GroupBy {
    /// One row per layer.
    Layer,
    /// One row per function.
    Func,
    /// One row per (file, layer); records without a file are left out.
    File,
    /// One row per (rank, layer).
    Rank,
}

impl GroupBy {
    /// The name used on the command line and in JSON.
    pub fn name(self) -> &'static str {
        match self {
            GroupBy::Layer => "layer",
            GroupBy::Func => "func",
            GroupBy::File => "file",
            GroupBy::Rank => "rank",
        }
    }
}

impl fmt::Display for GroupBy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for GroupBy {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "layer" => Ok(GroupBy::Layer),
            "func" => Ok(GroupBy::Func),
            "file" => Ok(GroupBy::File),
            "rank" => Ok(GroupBy::Rank),
            other => Err(format!(
                "unknown grouping {other:?} (expected layer, func, file or rank)"
            )),
        }
    }
}

/// One group's numbers.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StatsRow {
    /// The group: layer name, function name, file path or rank number.
    pub group: String,
    /// The layer of the row.
    pub layer: Layer,
    /// Records.
    pub operations: u64,
    /// Records that moved data.
    pub data_operations: u64,
    /// Bytes moved by data operations (see the module docs).
    pub bytes: u64,
    /// Smallest data request.
    pub size_min: Option<u64>,
    /// Mean data request.
    pub size_mean: Option<f64>,
    /// Largest data request.
    pub size_max: Option<u64>,
    /// Sum of durations, ns.
    pub total_time_ns: i64,
    /// Union of call intervals per rank, summed over ranks, ns.
    pub busy_time_ns: i64,
    /// operations / busy time.
    pub ops_per_sec: Option<f64>,
    /// bytes / busy time.
    pub bytes_per_sec: Option<f64>,
    /// Records that failed (error != 0).
    pub errors: u64,
}

/// The statistics of a trace.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Stats {
    /// The grouping.
    pub group_by: GroupBy,
    /// What was counted.
    pub scope: Scope,
    /// Records read.
    pub events: u64,
    /// Records read but left out by the scope.
    pub left_out: u64,
    /// Ranks in the job.
    pub ranks: u32,
    /// Processes.
    pub processes: u64,
    /// Job duration, ns.
    pub duration_ns: i64,
    /// The trace is partial.
    pub partial: bool,
    /// Rows, sorted by group then layer.
    pub rows: Vec<StatsRow>,
}

/// The group key while accumulating: (group sort key, label, layer).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Key {
    Layer(Layer),
    Func(Layer, String),
    File(String, Layer),
    Rank(i32, Layer),
}

#[derive(Default)]
struct Acc {
    operations: u64,
    data_operations: u64,
    bytes: u64,
    size_min: Option<u64>,
    size_max: Option<u64>,
    size_sum: u128,
    total_time: i64,
    busy: i64,
    errors: u64,
    /// Open busy interval: (rank, start, end).
    open: Option<(i32, i64, i64)>,
}

impl Acc {
    fn add(&mut self, e: &Event<'_>, kind: OpKind) {
        self.operations += 1;
        self.total_time += e.duration_ns;
        if e.error != 0 {
            self.errors += 1;
        }
        if kind.moves_data() {
            let size = e.size.max(0) as u64;
            self.data_operations += 1;
            self.size_min = Some(self.size_min.map_or(size, |m| m.min(size)));
            self.size_max = Some(self.size_max.map_or(size, |m| m.max(size)));
            self.size_sum += size as u128;
            self.bytes += functions::bytes_moved(size, e.result, e.error);
        }
        let (start, end) = (e.start_ns, e.end_ns().max(e.start_ns));
        self.open = Some(match self.open {
            Some((rank, s, t)) if rank == e.rank && start <= t => (rank, s, t.max(end)),
            Some((_, s, t)) => {
                self.busy += t - s;
                (e.rank, start, end)
            }
            None => (e.rank, start, end),
        });
    }

    fn finish(mut self, group: String, layer: Layer) -> StatsRow {
        if let Some((_, s, t)) = self.open.take() {
            self.busy += t - s;
        }
        let busy_s = self.busy as f64 / 1e9;
        let per_sec = |x: f64| (self.busy > 0).then(|| x / busy_s);
        StatsRow {
            group,
            layer,
            operations: self.operations,
            data_operations: self.data_operations,
            bytes: self.bytes,
            size_min: self.size_min,
            size_mean: (self.data_operations > 0)
                .then(|| self.size_sum as f64 / self.data_operations as f64),
            size_max: self.size_max,
            total_time_ns: self.total_time,
            busy_time_ns: self.busy,
            ops_per_sec: per_sec(self.operations as f64),
            bytes_per_sec: per_sec(self.bytes as f64),
            errors: self.errors,
        }
    }
}

/// Computes statistics grouped by `by` over the records `scope` counts, streaming the trace's
/// events.
pub fn compute(trace: &Trace, by: GroupBy, scope: Scope) -> Result<Stats, StoreError> {
    let filter = ScopeFilter::new(trace, scope);
    let mut left_out = 0u64;
    let mut groups: HashMap<Key, Acc> = HashMap::new();
    // Function kinds by name, resolved once per distinct name.
    let mut kinds: HashMap<(Layer, String), OpKind> = HashMap::new();
    let mut events = 0u64;
    for batch in trace.events()? {
        let batch = batch?;
        for e in batch.iter() {
            events += 1;
            if !filter.keeps(&e) {
                left_out += 1;
                continue;
            }
            let kind = match kinds.get(&(e.layer, e.func.to_string())) {
                Some(k) => *k,
                None => {
                    let k = functions::kind_of(e.layer, e.func);
                    kinds.insert((e.layer, e.func.to_string()), k);
                    k
                }
            };
            let key = match by {
                GroupBy::Layer => Key::Layer(e.layer),
                GroupBy::Func => Key::Func(e.layer, e.func.to_string()),
                GroupBy::File => match e.file_id.and_then(|f| trace.file_path(f)) {
                    Some(p) => Key::File(p.to_string(), e.layer),
                    None => continue,
                },
                GroupBy::Rank => Key::Rank(e.rank, e.layer),
            };
            groups.entry(key).or_default().add(&e, kind);
        }
    }
    let mut keyed: Vec<(Key, Acc)> = groups.into_iter().collect();
    keyed.sort_by(|a, b| a.0.cmp(&b.0));
    let rows = keyed
        .into_iter()
        .map(|(key, acc)| match key {
            Key::Layer(l) => acc.finish(l.name().to_string(), l),
            Key::Func(l, f) => acc.finish(f, l),
            Key::File(p, l) => acc.finish(p, l),
            Key::Rank(r, l) => acc.finish(r.to_string(), l),
        })
        .collect();
    let m = &trace.meta;
    Ok(Stats {
        group_by: by,
        scope,
        events,
        left_out,
        ranks: m.job.ranks,
        processes: m.counts.processes,
        duration_ns: m.job.duration_ns,
        partial: m.partial,
        rows,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pioscope_trace::merge::merge;
    use pioscope_trace::raw::fixture::{FixtureEvent as E, RawFileBuilder};
    use pioscope_trace::raw::format::{flags, string_kind};

    /// Two ranks; times in ns (MONOTONIC clock, no offsets, both start at 1_000).
    /// rank 0: write_all [1000,2000) 300 B containing pwrites [1100,1300) 100 B and
    ///         [1200,1500) 200 B (overlapping: another thread in real life), then a failed
    ///         pread [3000,3100) 50 B, and open [500,600).
    /// rank 1: pwrite [1000,1400) 400 B.
    fn trace(dir: &std::path::Path) -> Trace {
        let raw = dir.join("raw");
        std::fs::create_dir(&raw).expect("mkdir");
        let mut a = RawFileBuilder::monotonic(1, 0, 400);
        a.job(&[("rank", "0"), ("size", "2")]);
        a.string(string_kind::FILE, 1, "/f", 0);
        a.events(
            0,
            &[
                E::new(14, 1_100, 200).object(1).size(100).depth(1),
                E::new(14, 1_200, 300).object(1).size(200).depth(1),
                E::new(318, 1_000, 1_000)
                    .object(1)
                    .size(300)
                    .flags(flags::COLLECTIVE)
                    .link(1 << 32 | 1),
                E::new(12, 3_000, 100)
                    .object(1)
                    .size(50)
                    .result(-1)
                    .error(5),
                E::new(1, 500, 100).object(1).result(3),
            ],
        );
        a.end();
        a.write_to(&raw.join("a.praw")).expect("write");
        let mut b = RawFileBuilder::monotonic(2, 0, 400);
        b.job(&[("rank", "1"), ("size", "2")]);
        b.string(string_kind::FILE, 1, "/f", 0);
        b.events(0, &[E::new(14, 1_000, 400).object(1).size(400)]);
        b.end();
        b.write_to(&raw.join("b.praw")).expect("write");
        let out = dir.join("trace");
        merge(&raw, &out, &mut |_| {}).expect("merge");
        Trace::open(&out).expect("open")
    }

    #[test]
    fn arithmetic_by_layer() {
        let dir = tempfile::tempdir().expect("tmp");
        let s = compute(&trace(dir.path()), GroupBy::Layer, Scope::All).expect("stats");
        assert_eq!(s.events, 6);
        assert_eq!(s.rows.len(), 2);
        let posix = &s.rows[0];
        assert_eq!(posix.group, "posix");
        assert_eq!(posix.operations, 5);
        assert_eq!(posix.data_operations, 4);
        assert_eq!(
            posix.errors, 1,
            "only the failed pread; the open returned fd 3"
        );
        assert_eq!(posix.bytes, 700, "the failed pread moves nothing");
        assert_eq!((posix.size_min, posix.size_max), (Some(50), Some(400)));
        assert_eq!(posix.size_mean, Some(750.0 / 4.0));
        assert_eq!(posix.total_time_ns, 200 + 300 + 100 + 100 + 400);
        // rank 0: [500,600) + [1100,1500) + [3000,3100) = 600; rank 1: 400.
        assert_eq!(posix.busy_time_ns, 1_000);
        assert_eq!(posix.ops_per_sec, Some(5.0 / 1e-6));
        assert_eq!(posix.bytes_per_sec, Some(700.0 / 1e-6));
        let mpiio = &s.rows[1];
        assert_eq!(
            (mpiio.group.as_str(), mpiio.bytes, mpiio.busy_time_ns),
            ("mpiio", 300, 1_000)
        );
    }

    #[test]
    fn application_scope_leaves_out_system_files_and_fileless_records() {
        let dir = tempfile::tempdir().expect("tmp");
        let raw = dir.path().join("raw");
        std::fs::create_dir_all(&raw).expect("mkdir");
        let mut a = RawFileBuilder::monotonic(1, 0, 0);
        a.job(&[("rank", "0"), ("size", "1")]);
        a.string(string_kind::FILE, 1, "/scratch/out.dat", 0);
        a.string(string_kind::FILE, 2, "/proc/self/maps", 0);
        a.events(
            0,
            &[
                E::new(14, 1_000, 100).object(1).size(64),
                E::new(10, 2_000, 100).object(2).size(4096),
                E::new(10, 3_000, 100).size(8),
            ],
        );
        a.end();
        a.write_to(&raw.join("a.praw")).expect("write");
        let out = dir.path().join("trace");
        merge(&raw, &out, &mut |_| {}).expect("merge");
        let t = Trace::open(&out).expect("open");

        let app = compute(&t, GroupBy::Layer, Scope::Application).expect("stats");
        assert_eq!((app.events, app.left_out), (3, 2));
        assert_eq!((app.rows[0].operations, app.rows[0].bytes), (1, 64));
        let all = compute(&t, GroupBy::Layer, Scope::All).expect("stats");
        assert_eq!(
            (all.left_out, all.rows[0].operations, all.rows[0].bytes),
            (0, 3, 4168)
        );
    }

    #[test]
    fn by_func_rank_and_file() {
        let dir = tempfile::tempdir().expect("tmp");
        let t = trace(dir.path());
        let f = compute(&t, GroupBy::Func, Scope::All).expect("stats");
        let names: Vec<&str> = f.rows.iter().map(|r| r.group.as_str()).collect();
        assert_eq!(names, vec!["open", "pread", "pwrite", "MPI_File_write_all"]);
        let open = &f.rows[0];
        assert_eq!((open.operations, open.bytes, open.size_mean), (1, 0, None));
        let r = compute(&t, GroupBy::Rank, Scope::All).expect("stats");
        let keys: Vec<(&str, Layer, u64)> = r
            .rows
            .iter()
            .map(|r| (r.group.as_str(), r.layer, r.bytes))
            .collect();
        assert_eq!(
            keys,
            vec![
                ("0", Layer::Posix, 300),
                ("0", Layer::MpiIo, 300),
                ("1", Layer::Posix, 400)
            ]
        );
        let by_file = compute(&t, GroupBy::File, Scope::All).expect("stats");
        assert_eq!(by_file.rows.len(), 2);
        assert_eq!(
            (by_file.rows[0].group.as_str(), by_file.rows[0].operations),
            ("/f", 5)
        );
        assert_eq!("rank".parse::<GroupBy>(), Ok(GroupBy::Rank));
        assert!("phase".parse::<GroupBy>().is_err());
    }
}
