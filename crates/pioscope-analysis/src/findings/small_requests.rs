//! `small-requests`: the application asks for many small transfers. Counted at the
//! application's own requests (top-level POSIX, STDIO and MPI-IO data calls), not at what ROMIO
//! issues inside an MPI-IO call (that is `split-requests`).

use std::collections::BTreeMap;

use pioscope_trace::functions::by_name;
use pioscope_trace::store::Event;
use pioscope_trace::units;
use pioscope_trace::{Layer, OpKind};

use super::config::Config;
use super::util::{self, func_layer, func_name, General, Keyed, Numbers, Shared};
use super::{Evidence, Finding, Rule};
use crate::pass::{Context, Visitor};

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
    shared: Shared,
    requests: u64,
    total: Acc,
    /// Small requests per (rank, file, function id).
    by: Keyed<(i32, i32, u16), Acc>,
}

impl SmallRequests {
    pub(crate) fn new(config: &Config, shared: &Shared) -> Self {
        let s = config.section(ID);
        SmallRequests {
            general: General::new(config),
            max_bytes: s.u64("max_bytes"),
            min_requests: s.u64("min_requests"),
            min_share: s.f64("min_share"),
            target_bytes: s.u64("target_bytes").max(1),
            shared: shared.clone(),
            requests: 0,
            total: Acc::default(),
            by: Keyed::default(),
        }
    }
}

impl Visitor for SmallRequests {
    fn visit(&mut self, e: &Event<'_>, _ctx: &Context<'_>) {
        let fx = util::facts(&self.shared, e);
        if !fx.top_level || !matches!(fx.kind, OpKind::Read | OpKind::Write) {
            return;
        }
        self.requests += 1;
        let size = e.size.max(0) as u64;
        if size >= self.max_bytes {
            return;
        }
        self.total.add(size, e.duration_ns);
        self.by
            .at((e.rank, e.file_id.unwrap_or(-1), fx.id()))
            .add(size, e.duration_ns);
    }
}

impl Rule for SmallRequests {
    fn conclude(&self, ctx: &Context<'_>) -> Vec<Finding> {
        let t = self.total;
        let share = util::ratio(t.small as f64, self.requests as f64);
        if t.small < self.min_requests || t.small == 0 || share < self.min_share {
            return Vec::new();
        }
        let by_rank = self.by.group(|k| k.0, Acc::merge);
        let by_file = self.by.group(|k| k.1, Acc::merge);
        let by_func = self.by.group(|k| func_name(k.2), Acc::merge);
        let by_rank_file = self.by.group(|k| (k.0, k.1), Acc::merge);
        let mut by_layer: BTreeMap<Layer, i64> = BTreeMap::new();
        for (k, a) in self.by.entries() {
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
        n.int("requests", self.requests as i64)
            .int("small_requests", t.small as i64)
            .float("small_share", share)
            .int("small_bytes", t.small_bytes as i64)
            .float("mean_small_bytes", mean)
            .int("small_time_ns", t.small_ns)
            .int("max_bytes", self.max_bytes as i64)
            .int("requests_after_merge", after as i64)
            .int("ranks", by_rank.len() as i64);

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
        for (r, a) in util::top(by_rank.iter().collect(), k, |(_, a)| a.small_ns) {
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
                    self.requests,
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
    use super::*;
    use crate::testutil::{ev, none, num, one, Fx};

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
}
