//! `reread`: the same bytes read more than once, by the same rank (a cache would do) or by
//! several ranks (one read and a broadcast would do). Counted on POSIX and STDIO reads of the
//! application and on POSIX reads beneath MPI-IO reads; reads beneath MPI-IO writes are
//! ROMIO's read-modify-write (`data-sieving`), not rereads.
//!
//! The ranges read are kept per rank and file as a sorted set of disjoint intervals, at most
//! `max_ranges` of them: a rank and file past that stop being tracked (their reads still
//! count, as unique), so memory stays bounded on scattered reads.

use std::collections::BTreeMap;

use pioscope_trace::store::Event;
use pioscope_trace::units;
use pioscope_trace::{Layer, OpKind};

use super::config::Config;
use super::util::{self, General, Keyed, Numbers, Shared};
use super::{Evidence, Finding, Rule};
use crate::pass::{Context, Visitor};

/// Rule id.
pub(crate) const ID: &str = "reread";

/// Disjoint half-open intervals, sorted.
#[derive(Clone, Debug, Default)]
struct Ranges(Vec<(i64, i64)>);

impl Ranges {
    /// Adds [lo, hi), merging what it touches.
    fn add(&mut self, lo: i64, hi: i64) {
        if hi <= lo {
            return;
        }
        let v = &mut self.0;
        // The first interval that ends at or after lo may merge.
        let i = v.partition_point(|r| r.1 < lo);
        let mut j = i;
        let (mut a, mut b) = (lo, hi);
        while j < v.len() && v[j].0 <= b {
            a = a.min(v[j].0);
            b = b.max(v[j].1);
            j += 1;
        }
        v.splice(i..j, [(a, b)]);
    }

    fn bytes(&self) -> u64 {
        self.0.iter().map(|r| (r.1 - r.0) as u64).sum()
    }
}

#[derive(Clone, Debug, Default)]
struct Acc {
    ranges: Ranges,
    overflow: bool,
    read: u64,
    /// Bytes read once the ranges overflowed (counted as unique).
    untracked: u64,
    ns: i64,
}

/// See the module doc.
pub(crate) struct Reread {
    general: General,
    min_bytes: u64,
    min_share: f64,
    max_ranges: usize,
    shared: Shared,
    by_rank_file: Keyed<(i32, i32), Acc>,
}

impl Reread {
    pub(crate) fn new(config: &Config, shared: &Shared) -> Self {
        let s = config.section(ID);
        Reread {
            general: General::new(config),
            min_bytes: s.u64("min_bytes"),
            min_share: s.f64("min_share"),
            max_ranges: s.u64("max_ranges").max(1) as usize,
            shared: shared.clone(),
            by_rank_file: Keyed::default(),
        }
    }
}

impl Visitor for Reread {
    fn visit(&mut self, e: &Event<'_>, _ctx: &Context<'_>) {
        let fx = util::facts(&self.shared, e);
        if !matches!(e.layer, Layer::Posix | Layer::Stdio) || fx.kind != OpKind::Read {
            return;
        }
        let counted = fx.top_level || fx.parent.is_some_and(|p| p.kind == OpKind::Read);
        let (true, Some(file), Some(off)) = (counted, e.file_id, e.offset) else {
            return;
        };
        let b = util::moved(e);
        let a = self.by_rank_file.at((e.rank, file));
        a.read += b;
        a.ns += e.duration_ns;
        if a.overflow {
            a.untracked += b;
            return;
        }
        a.ranges.add(off, off + b as i64);
        if a.ranges.0.len() > self.max_ranges {
            a.overflow = true;
        }
    }
}

/// Rereads of one file.
#[derive(Debug, Default)]
struct FileSum {
    read: u64,
    within: u64,
    across: u64,
    ns: i64,
    ranks: u64,
}

impl Rule for Reread {
    fn conclude(&self, ctx: &Context<'_>) -> Vec<Finding> {
        let mut files: BTreeMap<i32, (FileSum, Ranges)> = BTreeMap::new();
        let mut by_rank: BTreeMap<i32, u64> = BTreeMap::new();
        let all = self.by_rank_file.entries();
        for ((r, f), a) in &all {
            let unique = a.ranges.bytes() + a.untracked;
            let within = a.read.saturating_sub(unique);
            let (s, union) = files.entry(*f).or_default();
            s.read += a.read;
            s.within += within;
            s.ns += a.ns;
            s.ranks += 1;
            // Ranks' unique bytes beyond the file's union were read by another rank first.
            let before = union.bytes();
            for (lo, hi) in &a.ranges.0 {
                union.add(*lo, *hi);
            }
            s.across += a.ranges.bytes() - (union.bytes() - before);
            *by_rank.entry(*r).or_default() += within;
        }
        let read: u64 = files.values().map(|(s, _)| s.read).sum();
        let within: u64 = files.values().map(|(s, _)| s.within).sum();
        let across: u64 = files.values().map(|(s, _)| s.across).sum();
        let again = within + across;
        let share = util::ratio(again as f64, read as f64);
        if again < self.min_bytes || again == 0 || share < self.min_share {
            return Vec::new();
        }
        // The reread share of each file's read time.
        let saved: f64 = files
            .values()
            .map(|(s, _)| s.ns as f64 * util::ratio((s.within + s.across) as f64, s.read as f64))
            .sum();
        let cost = util::per_rank(saved, ctx);
        let overflowed = all.iter().filter(|(_, a)| a.overflow).count();
        let mut n = Numbers::default();
        n.int("read_bytes", read as i64)
            .int("reread_bytes", again as i64)
            .float("reread_share", share)
            .int("reread_same_rank_bytes", within as i64)
            .int("reread_other_rank_bytes", across as i64)
            .int(
                "files",
                files
                    .values()
                    .filter(|(s, _)| s.within + s.across > 0)
                    .count() as i64,
            )
            .int("untracked_rank_files", overflowed as i64);
        let k = self.general.worst;
        let mut worst = Vec::new();
        for (f, (s, u)) in util::top(files.iter().collect(), k, |(_, (s, _))| s.within + s.across) {
            worst.push(format!(
                "file {}: {} read by {} rank(s) for {} distinct bytes",
                util::file_name(ctx, *f),
                units::bytes(s.read),
                s.ranks,
                units::bytes(u.bytes())
            ));
        }
        for (r, b) in util::top(
            by_rank.iter().filter(|(_, b)| **b > 0).collect(),
            k,
            |(_, b)| **b,
        ) {
            worst.push(format!(
                "{}: {} read again",
                util::rank_name(ctx, *r),
                units::bytes(*b)
            ));
        }
        let remedy = if across > within {
            "Several ranks read the same data: read it once (on one rank, or one rank per node) \
             and share it with MPI_Bcast, or read it with a collective MPI_File_read_all so \
             ROMIO reads each byte once and distributes it."
        } else {
            "Ranks read the same data again: keep what was read in memory (or map the file) \
             instead of reading it for every step; if memory is short, read the union of what \
             the steps need once, in large requests."
        };
        vec![self.general.finding(
            ctx,
            ID,
            cost,
            format!(
                "Rereading the same data: {} of the bytes read are read again",
                units::pct(share)
            ),
            Evidence {
                summary: format!(
                    "Of {} read, {} were read before: {} again by the same rank, {} by another \
                     rank.",
                    units::bytes(read),
                    units::bytes(again),
                    units::bytes(within),
                    units::bytes(across)
                ),
                numbers: n.0,
                worst,
            },
            remedy.into(),
        )]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{ev, flt, none, num, one, Fx};

    #[test]
    fn ranges_merge() {
        let mut r = Ranges::default();
        r.add(10, 20);
        r.add(30, 40);
        r.add(15, 35);
        assert_eq!(r.0, vec![(10, 40)]);
        r.add(40, 50);
        r.add(0, 5);
        assert_eq!(r.0, vec![(0, 5), (10, 50)]);
        assert_eq!(r.bytes(), 45);
    }

    /// `ranks` ranks each reading the same 8 MiB input in 1 MiB preads (1 ms each), `passes`
    /// times.
    fn job(ranks: usize, passes: u64) -> Fx {
        let mut fx = Fx::new(ranks);
        let f = fx.file("/scratch/input.nc");
        for r in 0..ranks {
            let mut t = 10_000;
            for _ in 0..passes {
                for i in 0..8u64 {
                    fx.push(
                        r,
                        ev("pread", t, 1_000_000)
                            .object(f)
                            .size(1 << 20)
                            .offset(i << 20),
                    );
                    t += 1_100_000;
                }
            }
        }
        fx
    }

    #[test]
    fn every_rank_reading_the_same_input_fires() {
        let dir = tempfile::tempdir().expect("tmp");
        let t = job(4, 1).build(dir.path());
        let f = one(&t, ID);
        assert_eq!(num(&f, "read_bytes"), 32 << 20);
        assert_eq!(num(&f, "reread_bytes"), 24 << 20);
        assert_eq!(num(&f, "reread_other_rank_bytes"), 24 << 20);
        assert_eq!(num(&f, "reread_same_rank_bytes"), 0);
        assert_eq!(flt(&f, "reread_share"), 0.75);
        // 32 ms of reads, 3/4 of them again, over 4 ranks.
        assert_eq!(f.cost_ns, 6_000_000);
        assert!(f.remedy.contains("MPI_Bcast"));
    }

    #[test]
    fn one_rank_reading_twice_fires_with_the_cache_remedy() {
        let dir = tempfile::tempdir().expect("tmp");
        let f = one(&job(1, 3).build(dir.path()), ID);
        assert_eq!(num(&f, "reread_same_rank_bytes"), 16 << 20);
        assert!(f.remedy.contains("memory"));
    }

    #[test]
    fn near_miss_each_byte_once_or_too_little() {
        let dir = tempfile::tempdir().expect("tmp");
        none(&job(1, 1).build(&dir.path().join("once")), ID);
        // 2 ranks x 8 MiB: 8 MiB read again, below min_bytes (16 MiB).
        none(&job(2, 1).build(&dir.path().join("two")), ID);
    }
}
