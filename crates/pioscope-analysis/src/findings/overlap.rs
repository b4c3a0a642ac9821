//! Bytes moved more than once (`reread` for reads, `redundant-writes` for writes): the ranges
//! each rank moved per file, and in the end, per file, how many bytes the same rank moved
//! again and how many another rank had moved first.
//!
//! Darshan's counters (a log without DXT) have no ranges: `Tally::from_counters` takes, per
//! file, the bytes moved beyond its highest byte plus one, which must have been moved again
//! (a lower bound: bytes moved again inside a file with holes do not show).
//!
//! The ranges are kept per rank and file as a sorted set of disjoint intervals, at most
//! `max_ranges` of them: a rank and file past that stop being tracked (their bytes still
//! count, as unique), so memory stays bounded on scattered requests.

use std::collections::BTreeMap;

use pioscope_trace::units;

use super::counters::Record;
use super::util;
use crate::lookup::Keyed;
use crate::pass::Context;

/// Disjoint half-open intervals, sorted.
#[derive(Clone, Debug, Default)]
pub(crate) struct Ranges(pub Vec<(i64, i64)>);

impl Ranges {
    /// Adds [lo, hi), merging what it touches.
    pub(crate) fn add(&mut self, lo: i64, hi: i64) {
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

    /// Bytes covered.
    pub(crate) fn bytes(&self) -> u64 {
        self.0.iter().map(|r| (r.1 - r.0) as u64).sum()
    }
}

#[derive(Clone, Debug, Default)]
struct Acc {
    ranges: Ranges,
    overflow: bool,
    moved: u64,
    /// Bytes moved once the ranges overflowed (counted as unique).
    untracked: u64,
    ns: i64,
}

/// The ranges moved per (rank, file).
pub(crate) struct Overlap {
    max_ranges: usize,
    by_rank_file: Keyed<(i32, i32), Acc>,
}

/// Bytes moved again on one file.
#[derive(Debug, Default)]
pub(crate) struct FileSum {
    /// Bytes moved.
    pub moved: u64,
    /// Moved again by the rank that moved them before.
    pub within: u64,
    /// Moved by a rank after another rank had.
    pub across: u64,
    /// Time of the requests, ns summed over ranks.
    pub ns: i64,
    /// Ranks that moved bytes of the file.
    pub ranks: u64,
    /// Distinct bytes moved.
    pub distinct: u64,
}

impl FileSum {
    /// Bytes moved again.
    pub(crate) fn again(&self) -> u64 {
        self.within + self.across
    }
}

/// What `Overlap` found.
#[derive(Debug, Default)]
pub(crate) struct Tally {
    /// Per file.
    pub files: BTreeMap<i32, FileSum>,
    /// Bytes each rank moved again itself.
    pub by_rank: BTreeMap<i32, u64>,
    /// (rank, file) pairs whose ranges overflowed `max_ranges`.
    pub untracked_rank_files: usize,
}

impl Tally {
    /// (moved, within, across) over every file.
    pub(crate) fn totals(&self) -> (u64, u64, u64) {
        self.files.values().fold((0, 0, 0), |s, f| {
            (s.0 + f.moved, s.1 + f.within, s.2 + f.across)
        })
    }

    /// The time of moving bytes again: each file's request time times its share of bytes
    /// moved again, ns summed over ranks.
    pub(crate) fn again_ns(&self) -> f64 {
        self.files
            .values()
            .map(|f| f.ns as f64 * util::ratio(f.again() as f64, f.moved as f64))
            .sum()
    }

    /// The lower bound Darshan's counters give, per file of `records`: `bytes` (e.g.
    /// `POSIX_BYTES_WRITTEN`) beyond `max_byte` (`POSIX_MAX_BYTE_WRITTEN`) plus one, the time
    /// from `time` (`POSIX_F_WRITE_TIME`). Bytes of a file with one rank's record count as
    /// moved again by that rank; of a file with several records, or a record reduced over
    /// every rank, as another rank's (the counters cannot tell).
    pub(crate) fn from_counters<'r>(
        records: impl IntoIterator<Item = &'r Record>,
        bytes: &str,
        max_byte: &str,
        time: &str,
    ) -> Tally {
        // Per file: bytes, the highest byte, time ns, records, a shared record.
        let mut files: BTreeMap<i32, (f64, f64, f64, u64, bool)> = BTreeMap::new();
        for r in records {
            let a = files.entry(r.file).or_default();
            a.0 += r.get(bytes);
            a.1 = a.1.max(r.get(max_byte));
            a.2 += r.ns(time);
            a.3 += 1;
            a.4 |= r.shared();
        }
        let mut t = Tally::default();
        for (f, (moved, max_byte, ns, records, shared)) in files {
            if moved <= 0.0 {
                continue;
            }
            let again = (moved - (max_byte + 1.0)).max(0.0) as u64;
            let one_rank = records == 1 && !shared;
            t.files.insert(
                f,
                FileSum {
                    moved: moved as u64,
                    within: if one_rank { again } else { 0 },
                    across: if one_rank { 0 } else { again },
                    ns: ns.round() as i64,
                    ranks: records,
                    distinct: moved as u64 - again,
                },
            );
        }
        t
    }

    /// (moved, again, share moved again) when the bytes moved again reach `min_bytes` and
    /// `min_share` of the bytes moved.
    pub(crate) fn again(&self, min_bytes: u64, min_share: f64) -> Option<(u64, u64, f64)> {
        let (moved, within, across) = self.totals();
        let again = within + across;
        let share = util::ratio(again as f64, moved as f64);
        (again >= min_bytes && again > 0 && share >= min_share).then_some((moved, again, share))
    }

    /// The worst files and ranks by bytes moved again, `k` of each; `verb` says how the
    /// bytes moved ("read", "written").
    pub(crate) fn worst(&self, ctx: &Context<'_>, k: usize, verb: &str) -> Vec<String> {
        let mut worst = Vec::new();
        for (f, s) in util::top(self.files.iter().collect(), k, |(_, s)| s.again()) {
            worst.push(format!(
                "file {}: {} {verb} by {} rank(s) for {} distinct bytes",
                util::file_name(ctx, *f),
                units::bytes(s.moved),
                s.ranks,
                units::bytes(s.distinct)
            ));
        }
        for (r, b) in util::top(
            self.by_rank.iter().filter(|(_, b)| **b > 0).collect(),
            k,
            |(_, b)| **b,
        ) {
            worst.push(format!(
                "{}: {} {verb} again",
                util::rank_name(ctx, *r),
                units::bytes(*b)
            ));
        }
        worst
    }

    /// Files with bytes moved again.
    pub(crate) fn files_again(&self) -> usize {
        self.files.values().filter(|f| f.again() > 0).count()
    }
}

impl Overlap {
    /// Tracks at most `max_ranges` intervals per rank and file.
    pub(crate) fn new(max_ranges: usize) -> Self {
        Overlap {
            max_ranges: max_ranges.max(1),
            by_rank_file: Keyed::default(),
        }
    }

    /// A request of `rank` moving `bytes` at `offset` of `file`, taking `ns`.
    pub(crate) fn add(&mut self, rank: i32, file: i32, offset: i64, bytes: u64, ns: i64) {
        let a = self.by_rank_file.at((rank, file));
        a.moved += bytes;
        a.ns += ns;
        if a.overflow {
            a.untracked += bytes;
            return;
        }
        a.ranges.add(offset, offset + bytes as i64);
        if a.ranges.0.len() > self.max_ranges {
            a.overflow = true;
        }
    }

    /// Per file and rank, the bytes moved again.
    pub(crate) fn tally(&self) -> Tally {
        let mut t = Tally::default();
        let mut unions: BTreeMap<i32, Ranges> = BTreeMap::new();
        for ((r, f), a) in self.by_rank_file.entries() {
            let unique = a.ranges.bytes() + a.untracked;
            let within = a.moved.saturating_sub(unique);
            let s = t.files.entry(f).or_default();
            s.moved += a.moved;
            s.within += within;
            s.ns += a.ns;
            s.ranks += 1;
            // A rank's unique bytes beyond the file's union were moved by another rank first.
            let union = unions.entry(f).or_default();
            let before = union.bytes();
            for (lo, hi) in &a.ranges.0 {
                union.add(*lo, *hi);
            }
            s.across += a.ranges.bytes() - (union.bytes() - before);
            s.distinct = union.bytes();
            *t.by_rank.entry(r).or_default() += within;
            t.untracked_rank_files += usize::from(a.overflow);
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn tally_splits_same_rank_and_other_rank_bytes() {
        let mut o = Overlap::new(16);
        o.add(0, 7, 0, 100, 10);
        o.add(0, 7, 50, 100, 10);
        o.add(1, 7, 0, 100, 20);
        let t = o.tally();
        let f = &t.files[&7];
        assert_eq!(
            (f.moved, f.within, f.across, f.distinct),
            (300, 50, 100, 150)
        );
        assert_eq!(t.totals(), (300, 50, 100));
        assert_eq!(t.by_rank[&0], 50);
        // 40 ns of requests, half of the bytes again.
        assert_eq!(t.again_ns(), 20.0);
    }
}
