//! `small-requests`: the application asks for many small transfers. Counted at the
//! application's own requests (top-level POSIX, STDIO and MPI-IO data calls), not at what ROMIO
//! issues inside an MPI-IO call (that is `split-requests`).

use std::collections::BTreeMap;

use pioscope_trace::functions::by_name;
use pioscope_trace::store::Event;
use pioscope_trace::units;
use pioscope_trace::{Layer, OpKind};

use super::config::Config;
use super::counters::{names, Counters};
use super::dispatch::{Interest, DATA, TOP};
use super::util::{self, func_layer, func_name, Facts, General, Numbers};
use super::{Evidence, Finding, Rule};
use crate::lookup::Keyed;
use crate::pass::Context;

/// Rule id.
pub(crate) const ID: &str = "small-requests";

#[derive(Clone, Copy, Debug, Default)]
struct Acc {
    small: u64,
    small_bytes: u64,
    small_ns: i64,
}

impl Acc {
    fn add(&mut self, size: u64, ns: i64) {
        self.small += 1;
        self.small_bytes += size;
        self.small_ns += ns;
    }
    fn merge(&mut self, o: &Acc) {
        self.small += o.small;
        self.small_bytes += o.small_bytes;
        self.small_ns += o.small_ns;
    }
}

/// See the module doc.
pub(crate) struct SmallRequests {
    general: General,
    max_bytes: u64,
    min_requests: u64,
    min_share: f64,
    target_bytes: u64,
    requests: u64,
    /// Small requests per (rank, file, function id).
    by: Keyed<(i32, i32, u16), Acc>,
}

/// Small requests per (rank, file, function id).
type ByRankFileFunc = Keyed<(i32, i32, u16), Acc>;

impl SmallRequests {
    pub(crate) fn new(config: &Config) -> Self {
        let s = config.section(ID);
        SmallRequests {
            general: General::new(config),
            max_bytes: s.u64("max_bytes"),
            min_requests: s.u64("min_requests"),
            min_share: s.f64("min_share"),
            target_bytes: s.u64("target_bytes").max(1),
            requests: 0,
            by: Keyed::default(),
        }
    }
}

impl Rule for SmallRequests {
    fn visit(&mut self, e: &Event<'_>, fx: &Facts, _ctx: &Context<'_>) {
        if !fx.top_level || !matches!(fx.kind, OpKind::Read | OpKind::Write) {
            return;
        }
        self.requests += 1;
        let size = e.size.max(0) as u64;
        if size >= self.max_bytes {
            return;
        }
        self.by
            .at((e.rank, e.file_id.unwrap_or(-1), fx.id()))
            .add(size, e.duration_ns);
    }

    fn interest(&self) -> Interest {
        Interest::any_of(&[TOP | DATA])
    }

    fn conclude(&self, ctx: &Context<'_>) -> Vec<Finding> {
        self.judge(self.requests, &self.by, "traced requests", ctx)
    }

    fn judge_counters(&self, c: &Counters, ctx: &Context<'_>) -> Vec<Finding> {
        // The application's requests: MPI-IO calls on files it opened with MPI-IO (the POSIX
        // requests beneath are ROMIO's), POSIX requests on the others. STDIO has no size
        // histogram.
        let posix = c.own_posix();
        let mut requests = 0.0;
        let mut by = ByRankFileFunc::default();
        for (r, k) in c
            .records(names::MPIIO)
            .iter()
            .flat_map(|r| MPIIO_COUNTERS.iter().map(move |k| (r, k)))
            .chain(
                posix
                    .into_iter()
                    .flat_map(|r| POSIX_COUNTERS.iter().map(move |k| (r, k))),
            )
        {
            let ops = r.sum(k.ops);
            requests += ops;
            let mut small = Acc::default();
            for (n, lo, hi) in r.histogram(k.histogram) {
                // A bin counts as small when it starts below max_bytes; its requests are
                // taken at the bin's middle size.
                if lo < self.max_bytes && n > 0.0 {
                    small.small += n as u64;
                    small.small_bytes += (n * (lo + hi) as f64 / 2.0) as u64;
                }
            }
            if small.small == 0 {
                continue;
            }
            // Darshan has one time per direction: the small requests' share of it by count.
            small.small_ns = (r.ns(k.time) * util::ratio(small.small as f64, ops)).round() as i64;
            let func = by_name(k.func).map_or(0, |f| f.id);
            by.at((r.rank, r.file, func)).merge(&small);
        }
        self.judge(
            requests as u64,
            &by,
            "Darshan counters: size histograms, sizes taken at the bin middle",
            ctx,
        )
    }
}

/// The counters of one module and direction: operations, size histogram prefix, time, and
/// the call the evidence names for them.
struct DirectionCounters {
    ops: &'static [&'static str],
    histogram: &'static str,
    time: &'static str,
    func: &'static str,
}

const POSIX_COUNTERS: [DirectionCounters; 2] = [
    DirectionCounters {
        ops: &["POSIX_READS"],
        histogram: "POSIX_SIZE_READ_",
        time: "POSIX_F_READ_TIME",
        func: "read",
    },
    DirectionCounters {
        ops: &["POSIX_WRITES"],
        histogram: "POSIX_SIZE_WRITE_",
        time: "POSIX_F_WRITE_TIME",
        func: "write",
    },
];

const MPIIO_COUNTERS: [DirectionCounters; 2] = [
    DirectionCounters {
        ops: &[
            "MPIIO_INDEP_READS",
            "MPIIO_COLL_READS",
            "MPIIO_SPLIT_READS",
            "MPIIO_NB_READS",
        ],
        histogram: "MPIIO_SIZE_READ_AGG_",
        time: "MPIIO_F_READ_TIME",
        func: "MPI_File_read",
    },
    DirectionCounters {
        ops: &[
            "MPIIO_INDEP_WRITES",
            "MPIIO_COLL_WRITES",
            "MPIIO_SPLIT_WRITES",
            "MPIIO_NB_WRITES",
        ],
        histogram: "MPIIO_SIZE_WRITE_AGG_",
        time: "MPIIO_F_WRITE_TIME",
        func: "MPI_File_write",
    },
];

impl SmallRequests {
    /// The finding, if enough of the `requests` are small (`by`).
    fn judge(
        &self,
        requests: u64,
        by: &ByRankFileFunc,
        source: &str,
        ctx: &Context<'_>,
    ) -> Vec<Finding> {
        let mut t = Acc::default();
        for (_, a) in by.entries() {
            t.merge(a);
        }
        let share = util::ratio(t.small as f64, requests as f64);
        if t.small < self.min_requests || t.small == 0 || share < self.min_share {
            return Vec::new();
        }
        let by_rank = by.group(|k| k.0, Acc::merge);
        let by_file = by.group(|k| k.1, Acc::merge);
        let by_func = by.group(|k| func_name(k.2), Acc::merge);
        let by_rank_file = by.group(|k| (k.0, k.1), Acc::merge);
        let mut by_layer: BTreeMap<Layer, i64> = BTreeMap::new();
        for (k, a) in by.entries() {
            *by_layer.entry(func_layer(k.2)).or_default() += a.small_ns;
        }
        // Small requests are latency-bound: their time goes with their count. Merged into
        // requests of target_bytes per rank and file, the count falls to `after`.
        let after: u64 = by_rank_file
            .values()
            .map(|a| a.small_bytes.div_ceil(self.target_bytes).max(1))
            .sum();
        let saved = t.small_ns as f64 * (1.0 - util::ratio(after as f64, t.small as f64)).max(0.0);
        let cost = util::per_rank(saved, ctx);
        let mean = t.small_bytes as f64 / t.small as f64;

        let mut n = Numbers::default();
        n.int("requests", requests as i64)
            .int("small_requests", t.small as i64)
            .float("small_share", share)
            .int("small_bytes", t.small_bytes as i64)
            .float("mean_small_bytes", mean)
            .int("small_time_ns", t.small_ns)
            .int("max_bytes", self.max_bytes as i64)
            .int("requests_after_merge", after as i64)
            .int("ranks", by_rank.len() as i64)
            .text("source", source);

        let k = self.general.worst;
        let mut worst = Vec::new();
        for (f, a) in util::top(by_file.iter().collect(), k, |(_, a)| a.small) {
            let name = if *f < 0 {
                "no file".to_string()
            } else {
                util::file_name(ctx, *f)
            };
            worst.push(format!(
                "file {name}: {} small requests, {} in {}",
                a.small,
                units::bytes(a.small_bytes),
                units::duration_prose(a.small_ns)
            ));
        }
        // Rank -1: a Darshan record reduced over every rank, no rank to name.
        for (r, a) in util::top(
            by_rank.iter().filter(|(r, _)| **r >= 0).collect(),
            k,
            |(_, a)| a.small_ns,
        ) {
            worst.push(format!(
                "{}: {} small requests in {}",
                util::rank_name(ctx, *r),
                a.small,
                units::duration_prose(a.small_ns)
            ));
        }
        let funcs = util::top(by_func.iter().collect(), k, |(_, a)| a.small_ns);
        for (f, a) in &funcs {
            worst.push(format!(
                "call {f}: {} small requests, mean {}",
                a.small,
                units::bytes(a.small_bytes / a.small.max(1))
            ));
        }

        // The remedy follows the function that took most of the small requests' time, and
        // its direction.
        let func = funcs.first().map(|(f, _)| **f).unwrap_or("write");
        let reading = by_name(func).is_some_and(|f| f.kind() == OpKind::Read);
        let verb = if reading { "read" } else { "write" };
        let target = units::bytes(self.target_bytes);
        let layer = by_layer
            .iter()
            .max_by_key(|(_, c)| **c)
            .map(|(l, _)| *l)
            .unwrap_or(Layer::Posix);
        let remedy = match layer {
            Layer::MpiIo => format!(
                "Make fewer, larger MPI-IO calls: describe each rank's data with a derived \
                 datatype and file view and {verb} it in one call per step, collectively \
                 ({func} -> the `_all` form) so ROMIO merges the pieces of all ranks into \
                 large requests; aim for at least {target} per call."
            ),
            Layer::Stdio => format!(
                "Buffer in memory and {verb} blocks of at least {target}: replace the {func} \
                 loop by one large {verb} per step, or enlarge the stream buffer with \
                 setvbuf(f, NULL, _IOFBF, {}) right after fopen.",
                self.target_bytes
            ),
            _ if reading => format!(
                "Read in requests of at least {target} into a memory buffer and take the \
                 pieces from there, instead of {} {func} calls of {} on average; for a file \
                 shared by ranks, MPI-IO collective reads (MPI_File_read_at_all) do this \
                 aggregation across ranks.",
                t.small,
                units::bytes(mean as u64)
            ),
            _ => format!(
                "Gather the data in a memory buffer and issue requests of at least {target} \
                 instead of {} {func} calls of {} on average; for a file shared by ranks, \
                 MPI-IO collective writes (MPI_File_write_at_all) do this aggregation across \
                 ranks.",
                t.small,
                units::bytes(mean as u64)
            ),
        };
        vec![self.general.finding(
            ctx,
            ID,
            cost,
            format!(
                "{} small requests ({} of all; mean {})",
                t.small,
                units::pct(share),
                units::bytes(mean as u64)
            ),
            Evidence {
                summary: format!(
                    "{} of the application's {} data requests are below {} (mean {}, {} in \
                     total) and take {} summed over ranks; merged into {} requests they \
                     would need about {}.",
                    t.small,
                    requests,
                    units::bytes(self.max_bytes),
                    units::bytes(mean as u64),
                    units::bytes(t.small_bytes),
                    units::duration_prose(t.small_ns),
                    target,
                    if after == 1 {
                        "1 call".to_string()
                    } else {
                        format!("{after} calls")
                    }
                ),
                numbers: n.0,
                worst,
            },
            remedy,
        )]
    }
}

#[cfg(test)]
mod tests {
    use super::super::counters::testing::counters;
    use super::*;
    use crate::testutil::{ev, findings_from_counters, none, num, one, Fx};

    /// 2 ranks each writing `n` records of `size` bytes, 1 us each, to their own file.
    fn job(n: u64, size: u64) -> Fx {
        job_of("pwrite", n, size)
    }

    /// As `job`, with `func` (a read or a write) for every request.
    fn job_of(func: &str, n: u64, size: u64) -> Fx {
        let mut fx = Fx::new(2);
        let a = fx.file("/scratch/a.dat");
        let b = fx.file("/scratch/b.dat");
        for (r, f) in [(0usize, a), (1, b)] {
            for i in 0..n {
                fx.push(
                    r,
                    ev(func, 2_000 + i * 2_000, 1_000)
                        .object(f)
                        .size(size)
                        .offset(i * size),
                );
            }
        }
        fx
    }

    #[test]
    fn many_small_writes_fire_with_their_numbers() {
        let dir = tempfile::tempdir().expect("tmp");
        let t = job(600, 100).build(dir.path());
        let f = one(&t, ID);
        assert_eq!(num(&f, "small_requests"), 1200);
        assert_eq!(num(&f, "requests"), 1200);
        assert_eq!(num(&f, "small_bytes"), 120_000);
        assert_eq!(num(&f, "small_time_ns"), 1_200_000);
        assert_eq!(
            num(&f, "requests_after_merge"),
            2,
            "60 KB per rank fits one 4 MiB request"
        );
        // 1.2 ms over 2 ranks, all but 2 of 1200 calls saved.
        assert_eq!(
            f.cost_ns,
            (1_200_000.0 * (1.0 - 2.0 / 1200.0) / 2.0_f64).round() as i64
        );
        assert!(
            f.evidence
                .worst
                .iter()
                .any(|w| w.contains("/scratch/a.dat")),
            "{:?}",
            f.evidence.worst
        );
        assert!(f.evidence.worst.iter().any(|w| w.contains("call pwrite")));
        assert!(f.remedy.contains("4.0 MiB"), "{}", f.remedy);
    }

    /// Issue 13: a read-only workload is told to read, never to write.
    #[test]
    fn read_only_workload_gets_a_read_remedy() {
        let dir = tempfile::tempdir().expect("tmp");
        let f = one(&job_of("pread", 600, 100).build(dir.path()), ID);
        assert!(f.remedy.contains("MPI_File_read_at_all"), "{}", f.remedy);
        assert!(!f.remedy.to_lowercase().contains("write"), "{}", f.remedy);
    }

    /// Regression (issue 12): the evidence said "about 1 calls".
    #[test]
    fn one_merged_call_is_singular() {
        let dir = tempfile::tempdir().expect("tmp");
        // Rank 0 of two writes 1200 pieces of 100 bytes to one file: one 4 MiB request
        // would hold them all.
        let mut fx = Fx::new(2);
        let a = fx.file("/scratch/a.dat");
        for i in 0..1200u64 {
            fx.push(
                0,
                ev("pwrite", 2_000 + i * 2_000, 1_000)
                    .object(a)
                    .size(100)
                    .offset(i * 100),
            );
        }
        let f = one(&fx.build(dir.path()), ID);
        assert_eq!(num(&f, "requests_after_merge"), 1);
        assert!(
            f.evidence.summary.ends_with("would need about 1 call."),
            "{}",
            f.evidence.summary
        );
    }

    #[test]
    fn near_miss_too_few_or_not_small() {
        let dir = tempfile::tempdir().expect("tmp");
        none(&job(499, 100).build(&dir.path().join("few")), ID);
        none(&job(600, 65536).build(&dir.path().join("large")), ID);
    }

    /// A POSIX record of rank 1 writing 2000 requests of the histogram bin `bin` in 0.2 s
    /// (4 ranks, a 1 s job).
    fn from_counters(bin: &str) -> Vec<Finding> {
        let dir = tempfile::tempdir().expect("tmp");
        let mut fx = Fx::new(4);
        let f = fx.file("/scratch/a.dat");
        fx.push(0, ev("MPI_Barrier", 0, 1_000_000_000));
        let t = fx.build(dir.path());
        let hist = format!("POSIX_SIZE_WRITE_{bin}");
        let c = counters(&[
            ("POSIX", 1, f, "POSIX_WRITES", 2000.0),
            ("POSIX", 1, f, hist.as_str(), 2000.0),
            ("POSIX", 1, f, "POSIX_F_WRITE_TIME", 0.2),
        ]);
        findings_from_counters(&t, &c, ID)
    }

    #[test]
    fn counters_size_histogram_fires_and_large_bins_do_not() {
        let f = from_counters("100_1K");
        assert_eq!(f.len(), 1);
        assert_eq!(num(&f[0], "small_requests"), 2000);
        assert_eq!(num(&f[0], "requests"), 2000);
        // 2000 requests at the bin middle (562 bytes): about 1.1 MB, one 4 MiB request.
        assert_eq!(num(&f[0], "small_bytes"), 2000 * 562);
        assert_eq!(num(&f[0], "requests_after_merge"), 1);
        // 0.2 s, all but one of 2000 calls saved, over 4 ranks.
        assert_eq!(
            f[0].cost_ns,
            (2e8 * (1.0 - 1.0 / 2000.0) / 4.0_f64).round() as i64
        );
        assert!(f[0].evidence.worst.iter().any(|w| w.contains("call write")));
        assert!(from_counters("1M_4M").is_empty());
    }
}
