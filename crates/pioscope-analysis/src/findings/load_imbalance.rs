//! `load-imbalance`: some ranks spend much more time in I/O (or move many more bytes) than
//! the others. In a bulk-synchronous code the others wait for the slowest at the next
//! collective, so the difference is lost on every rank. Counted at the application's own I/O
//! calls, without the time they wait for other ranks inside MPI-IO open, close and sync
//! (`Facts::wait`: the fast ranks wait there for the slow one, which would make them look
//! busy); ranks without any I/O count as zero. When one rank moves nearly everything,
//! `rank0-io` reports it instead.

use std::collections::BTreeMap;

use pioscope_trace::store::Event;
use pioscope_trace::units;

use super::config::Config;
use super::counters::Counters;
use super::dispatch::{Interest, TOP, WAIT};
use super::util::{self, Facts, General, Numbers};
use super::{Evidence, Finding, Rule};
use crate::lookup::Keyed;
use crate::pass::Context;

/// Rule id.
pub(crate) const ID: &str = "load-imbalance";

/// See the module doc.
pub(crate) struct LoadImbalance {
    general: General,
    min_ranks: u64,
    min_ratio: f64,
    min_time_ns: i64,
    /// rank0-io's thresholds, when that rule is on: (min_ranks, min_share).
    one_rank: Option<(u64, f64)>,
    by: Keyed<i32, (i64, u64)>,
}

impl LoadImbalance {
    pub(crate) fn new(config: &Config) -> Self {
        let s = config.section(ID);
        let r0 = config.section(super::rank0_io::ID);
        LoadImbalance {
            general: General::new(config),
            min_ranks: s.u64("min_ranks").max(2),
            min_ratio: s.f64("min_ratio"),
            min_time_ns: s.u64("min_time_ns") as i64,
            one_rank: r0
                .bool("enabled")
                .then(|| (r0.u64("min_ranks"), r0.f64("min_share"))),
            by: Keyed::default(),
        }
    }
}

impl Rule for LoadImbalance {
    fn visit(&mut self, e: &Event<'_>, fx: &Facts, _ctx: &Context<'_>) {
        if e.rank >= 0 && fx.wait {
            self.by.at(e.rank).0 -= e.duration_ns;
        }
        if e.rank < 0 || !fx.top_level {
            return;
        }
        let a = self.by.at(e.rank);
        a.0 += e.duration_ns;
        if fx.data() {
            a.1 += util::moved(e);
        }
    }

    fn interest(&self) -> Interest {
        Interest::any_of(&[WAIT, TOP])
    }

    fn conclude(&self, ctx: &Context<'_>) -> Vec<Finding> {
        let by_rank: BTreeMap<i32, (i64, u64)> = self
            .by
            .entries()
            .into_iter()
            .map(|(r, a)| (r, *a))
            .collect();
        self.judge(&by_rank, "traced calls", ctx)
    }

    fn judge_counters(&self, c: &Counters, ctx: &Context<'_>) -> Vec<Finding> {
        let ranks = util::rank_count(ctx) as i32;
        let mut by_rank: BTreeMap<i32, (f64, f64)> = BTreeMap::new();
        for ((rank, _), l) in c.per_rank_file(ranks) {
            let a = by_rank.entry(rank).or_default();
            a.0 += l.ns;
            a.1 += l.bytes;
        }
        let by_rank = by_rank
            .into_iter()
            .map(|(r, (ns, b))| (r, (ns.round() as i64, b.round() as u64)))
            .collect();
        self.judge(
            &by_rank,
            "Darshan counters: per-rank records, and for shared files *_SLOWEST_RANK, \
             *_FASTEST_RANK with their time and bytes, the other ranks taken as even",
            ctx,
        )
    }
}

impl LoadImbalance {
    /// The finding, if the busiest rank's I/O time or bytes stand out.
    fn judge(
        &self,
        by_rank: &BTreeMap<i32, (i64, u64)>,
        source: &str,
        ctx: &Context<'_>,
    ) -> Vec<Finding> {
        let ranks = (ctx.trace.meta.job.ranks as u64).max(by_rank.len() as u64);
        if ranks < self.min_ranks || by_rank.is_empty() {
            return Vec::new();
        }
        let total_ns: i64 = by_rank.values().map(|a| a.0).sum();
        let total_b: u64 = by_rank.values().map(|a| a.1).sum();
        let mean_ns = total_ns as f64 / ranks as f64;
        let mean_b = total_b as f64 / ranks as f64;
        let (slow, (max_ns, _)) = by_rank
            .iter()
            .max_by_key(|(r, a)| (a.0, -**r))
            .map(|(r, a)| (*r, *a))
            .unwrap_or((0, (0, 0)));
        let (heavy, (_, max_b)) = by_rank
            .iter()
            .max_by_key(|(r, a)| (a.1, -**r))
            .map(|(r, a)| (*r, *a))
            .unwrap_or((0, (0, 0)));
        if let Some((r0_ranks, r0_share)) = self.one_rank {
            if ranks >= r0_ranks && util::ratio(max_b as f64, total_b as f64) >= r0_share {
                return Vec::new();
            }
        }
        let time_ratio = util::ratio(max_ns as f64, mean_ns);
        let bytes_ratio = util::ratio(max_b as f64, mean_b);
        if max_ns < self.min_time_ns
            || (time_ratio < self.min_ratio && bytes_ratio < self.min_ratio)
        {
            return Vec::new();
        }
        // The others wait for the slowest: its time beyond the mean.
        let cost = (max_ns as f64 - mean_ns).max(0.0).round() as i64;
        let min_ns = if (by_rank.len() as u64) < ranks {
            0
        } else {
            by_rank.values().map(|a| a.0).min().unwrap_or(0)
        };
        let mut n = Numbers::default();
        n.int("ranks", ranks as i64)
            .int("max_time_ns", max_ns)
            .int("mean_time_ns", mean_ns.round() as i64)
            .int("min_time_ns", min_ns)
            .float("time_ratio", time_ratio)
            .int("slowest_rank", slow as i64)
            .int("max_bytes", max_b as i64)
            .int("mean_bytes", mean_b.round() as i64)
            .float("bytes_ratio", bytes_ratio)
            .int("heaviest_rank", heavy as i64)
            .text("source", source);
        let k = self.general.worst;
        let mut worst = Vec::new();
        for (r, (ns, b)) in util::top(by_rank.iter().collect(), k, |(_, (ns, _))| *ns) {
            worst.push(format!(
                "{}: {} of I/O ({:.1}x the mean), {}",
                util::rank_name(ctx, *r),
                units::duration_prose(*ns),
                util::ratio(*ns as f64, mean_ns),
                units::bytes(*b)
            ));
        }
        let by_bytes = bytes_ratio >= self.min_ratio;
        let remedy = if by_bytes {
            format!(
                "Split the data evenly: rank {heavy} moves {} against a mean of {}. Give each \
                 rank an equal block (or let collective MPI-IO calls spread the storage work \
                 over the aggregators).",
                units::bytes(max_b),
                units::bytes(mean_b as u64)
            )
        } else {
            format!(
                "The bytes are even but {} takes {:.1}x the mean time: look at what that \
                 host shares (other jobs, a slow node, its network link) and where its data \
                 lands (on Lustre lfs getstripe shows the targets; a slow or crowded OST slows \
                 the ranks writing to it).",
                util::rank_name(ctx, slow),
                time_ratio
            )
        };
        vec![self.general.finding(
            ctx,
            ID,
            cost,
            if by_bytes {
                format!(
                    "I/O load imbalance: rank {heavy} moves {:.1}x the mean bytes",
                    bytes_ratio
                )
            } else {
                format!(
                    "I/O load imbalance: rank {slow} spends {:.1}x the mean I/O time",
                    time_ratio
                )
            },
            Evidence {
                summary: format!(
                    "Over {ranks} ranks the I/O time ranges from {} to {} (mean {}); bytes \
                     reach {} on rank {heavy} against a mean of {}.",
                    units::duration_prose(min_ns),
                    units::duration_prose(max_ns),
                    units::duration_prose(mean_ns as i64),
                    units::bytes(max_b),
                    units::bytes(mean_b as u64)
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
    use crate::testutil::{coll, ev, findings_from_counters, flt, none, num, one, Fx};

    /// 4 ranks writing 1 MiB each; rank 3's write takes `slow` ns, the others 10 ms.
    fn job(slow: u64) -> Fx {
        let mut fx = Fx::new(4);
        let f = fx.file("/scratch/out.dat");
        for r in 0..4 {
            let d = if r == 3 { slow } else { 10_000_000 };
            fx.push(
                r,
                ev("pwrite", 10_000, d)
                    .object(f)
                    .size(1 << 20)
                    .offset(r as u64 * (1 << 20)),
            );
        }
        fx
    }

    #[test]
    fn one_slow_rank_fires() {
        let dir = tempfile::tempdir().expect("tmp");
        let t = job(50_000_000).build(dir.path());
        let f = one(&t, ID);
        assert_eq!(num(&f, "max_time_ns"), 50_000_000);
        assert_eq!(num(&f, "mean_time_ns"), 20_000_000);
        assert_eq!(flt(&f, "time_ratio"), 2.5);
        assert_eq!(num(&f, "slowest_rank"), 3);
        assert_eq!(flt(&f, "bytes_ratio"), 1.0);
        assert_eq!(f.cost_ns, 30_000_000);
        assert!(
            f.evidence.worst[0].starts_with("rank 3 (n0)"),
            "{:?}",
            f.evidence.worst
        );
    }

    /// Issue 13: the fast ranks wait for the slow one in the barrier of a collective
    /// MPI_File_close; that waiting is not their I/O time, or every rank would look as busy.
    #[test]
    fn waiting_in_a_collective_close_is_not_io_time() {
        let mut fx = Fx::new(4);
        let f = fx.file("/scratch/out.dat");
        for r in 0..4 {
            let write = if r == 3 { 50_000_000 } else { 10_000_000 };
            fx.push(r, ev("pwrite", 10_000, write).object(f).size(1 << 20));
            fx.push(
                r,
                coll(
                    ev("MPI_File_close", 60_000_000, 1_000_000 + 50_000_000 - write).object(f),
                    1,
                ),
            );
            fx.push(
                r,
                ev("MPI_Barrier", 60_500_000, 50_000_000 - write).depth(1),
            );
        }
        let dir = tempfile::tempdir().expect("tmp");
        let f = one(&fx.build(dir.path()), ID);
        assert_eq!(num(&f, "slowest_rank"), 3);
        assert_eq!(
            num(&f, "max_time_ns"),
            51_000_000,
            "write and close, no waiting"
        );
        assert_eq!(num(&f, "mean_time_ns"), 21_000_000);
    }

    #[test]
    fn near_miss_mild_imbalance() {
        let dir = tempfile::tempdir().expect("tmp");
        none(&job(16_000_000).build(dir.path()), ID);
    }

    /// 4 ranks (1 s job) sharing one file through POSIX: 0.8 s summed over ranks, rank 2
    /// the slowest with `slowest` s, rank 0 the fastest with 0.1 s; 4 MiB each.
    fn from_counters(slowest: f64) -> Vec<Finding> {
        let dir = tempfile::tempdir().expect("tmp");
        let mut fx = Fx::new(4);
        let f = fx.file("/scratch/out.dat");
        fx.push(0, ev("MPI_Barrier", 0, 1_000_000_000));
        let t = fx.build(dir.path());
        let c = counters(&[
            ("POSIX", -1, f, "POSIX_F_WRITE_TIME", 0.8),
            ("POSIX", -1, f, "POSIX_BYTES_WRITTEN", (16u64 << 20) as f64),
            ("POSIX", -1, f, "POSIX_SLOWEST_RANK", 2.0),
            ("POSIX", -1, f, "POSIX_F_SLOWEST_RANK_TIME", slowest),
            (
                "POSIX",
                -1,
                f,
                "POSIX_SLOWEST_RANK_BYTES",
                (4u64 << 20) as f64,
            ),
            ("POSIX", -1, f, "POSIX_FASTEST_RANK", 0.0),
            ("POSIX", -1, f, "POSIX_F_FASTEST_RANK_TIME", 0.1),
            (
                "POSIX",
                -1,
                f,
                "POSIX_FASTEST_RANK_BYTES",
                (4u64 << 20) as f64,
            ),
        ]);
        findings_from_counters(&t, &c, ID)
    }

    #[test]
    fn counters_slowest_rank_of_a_shared_file_fires() {
        let f = from_counters(0.5);
        assert_eq!(f.len(), 1);
        assert_eq!(num(&f[0], "slowest_rank"), 2);
        assert_eq!(num(&f[0], "max_time_ns"), 500_000_000);
        // Ranks 1 and 3 share the other 0.2 s; the mean is 0.2 s, the slowest waits 0.3 s.
        assert_eq!(num(&f[0], "mean_time_ns"), 200_000_000);
        assert_eq!(f[0].cost_ns, 300_000_000);
        // Even: 0.25, 0.1 and 0.225 each for the others.
        assert!(from_counters(0.25).is_empty());
    }
}
