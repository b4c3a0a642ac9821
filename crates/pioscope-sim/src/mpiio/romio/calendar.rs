//! The ranks of a two-phase window scan kept in order of where their data resumes (a calendar
//! queue), so a pass over windows in file order visits only the ranks that can have data in
//! each window instead of every rank: the 10,000-rank HPIO collective has 10,000 windows of
//! which each holds data of about 2,000 ranks (issue 15).

use crate::program::Rank;

/// Ranks keyed by a file offset (where their data resumes), in buckets of 2^`shift` bytes
/// from `base`. Ranges are asked for in file order (each starting at or after the end of the
/// last); a range before that needs a [`Calendar::reset`].
#[derive(Default)]
pub(super) struct Calendar {
    base: u64,
    shift: u32,
    /// (key, rank); the last bucket also holds every key beyond it.
    buckets: Vec<Vec<(u64, Rank)>>,
    /// Storage of emptied buckets, for the next ones to fill: a pass keeps only the few
    /// buckets ahead of its range in memory (and in cache), not one per bucket it went by.
    spare: Vec<Vec<(u64, Rank)>>,
    /// The buckets before it are empty.
    next: usize,
    /// End of the last range asked for.
    cursor: u64,
    /// False until the first reset, and after `invalidate`.
    valid: bool,
}

impl Calendar {
    /// True when the ranks can be asked for a range starting at `a` (it does not start before
    /// the end of the last range).
    pub(super) fn ready(&self, a: u64) -> bool {
        self.valid && a >= self.cursor
    }

    /// The keys changed behind the calendar's back: the next range needs a reset.
    pub(super) fn invalidate(&mut self) {
        self.valid = false;
    }

    /// Starts over for a pass whose first range is [a, b) and whose keys lie below `hi` (a
    /// larger one goes to the last bucket): buckets of about a quarter of the first range (a
    /// power of two, so a key's bucket is a shift; the one holding a range's end is sifted key
    /// by key), at most about four per rank so a reset costs O(ranks), like the scan it saves.
    pub(super) fn reset(
        &mut self,
        (a, b): (u64, u64),
        hi: u64,
        ranks: impl ExactSizeIterator<Item = (u64, Rank)>,
    ) {
        let count = 4 * ranks.len() as u64 + 16;
        let span = hi.saturating_sub(a).max(1);
        let fits = b.saturating_sub(a).max(1).ilog2().saturating_sub(2);
        let fewest = span.div_ceil(count).next_power_of_two().ilog2();
        self.base = a;
        self.shift = fits.max(fewest);
        let len = (span >> self.shift) as usize + 1;
        for mut bucket in self.buckets.drain(..) {
            if bucket.capacity() > 0 {
                bucket.clear();
                self.spare.push(bucket);
            }
        }
        self.buckets.resize_with(len, Vec::new);
        self.next = 0;
        self.cursor = a;
        self.valid = true;
        for (key, r) in ranks {
            self.push(key, r);
        }
    }

    fn index(&self, key: u64) -> usize {
        ((key.saturating_sub(self.base) >> self.shift) as usize).min(self.buckets.len() - 1)
    }

    /// Rank `r` resumes at `key` (u64::MAX: never; it is dropped).
    pub(super) fn push(&mut self, key: u64, r: Rank) {
        if key == u64::MAX {
            return;
        }
        let i = self.index(key);
        let bucket = &mut self.buckets[i];
        if bucket.capacity() == 0 {
            if let Some(v) = self.spare.pop() {
                *bucket = v;
            }
        }
        bucket.push((key, r));
    }

    /// Takes the ranks with a key below `b` out into `out`: in rank order when `sorted`, else
    /// in a few ascending runs (for callers that only sum over them).
    pub(super) fn due(&mut self, b: u64, out: &mut Vec<Rank>, sorted: bool) {
        out.clear();
        let last = self.index(b.saturating_sub(1));
        let beyond = self.buckets.len() - 1;
        for i in self.next..=last {
            let end = self.base.saturating_add(((i + 1) as u64) << self.shift);
            let bucket = &mut self.buckets[i];
            if end <= b && i < beyond {
                out.extend(bucket.iter().map(|x| x.1));
                bucket.clear();
            } else {
                bucket.retain(|&(key, r)| {
                    if key < b {
                        out.push(r);
                    }
                    key >= b
                });
            }
            if bucket.is_empty() && bucket.capacity() > 0 {
                self.spare.push(std::mem::take(bucket));
            }
        }
        self.next = self.next.max(last);
        self.cursor = b;
        if sorted {
            // Stable: the ranks come in a few ascending runs (buckets in file order), merged.
            out.sort();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ranks come out once their key falls below a range's end, in rank order; keys pushed
    /// back later come out in a later range; keys beyond the buckets and below the base too.
    #[test]
    fn due_ranks_in_file_order() {
        let mut c = Calendar::default();
        assert!(!c.ready(0));
        c.reset(
            (100, 110),
            200,
            [(5, 3), (150, 1), (109, 2), (110, 0), (1000, 4)].into_iter(),
        );
        let mut out = Vec::new();
        c.due(110, &mut out, true);
        assert_eq!(out, vec![2, 3]);
        assert!(!c.ready(105) && c.ready(110));
        c.push(u64::MAX, 2);
        c.push(130, 3);
        c.due(140, &mut out, true);
        assert_eq!(out, vec![0, 3]);
        c.due(151, &mut out, true);
        assert_eq!(out, vec![1]);
        c.due(u64::MAX, &mut out, true);
        assert_eq!(out, vec![4]);
        c.invalidate();
        assert!(!c.ready(u64::MAX));
    }
}
