//! Start floors: how early the records still to come of a raw file can start.
//!
//! Pass 1 sees every record of a process in file order and keeps the earliest start of each
//! block of records; read backwards (a suffix minimum), that is, for any point of pass 2, a
//! start no record after it precedes. Merge emits a buffered record once every record still
//! to come starts later, so a long call (written when it returns, after everything it
//! enclosed) holds back only what started after it. Blocks grow (pairs merge) to keep at most
//! `MAX_BLOCKS`, so the table stays small whatever the file holds; coarser blocks only hold
//! records a little longer.

/// Blocks kept at most (8 bytes each).
const MAX_BLOCKS: usize = 1 << 16;

/// The earliest start of each block of records, built by pass 1.
#[derive(Clone, Debug, Default)]
pub struct StartFloors {
    /// Records per block (a power of two).
    block: u64,
    /// Records seen.
    seen: u64,
    /// Per block: the earliest start in it (pass 1), then the earliest from it on (`finish`).
    floors: Vec<u64>,
}

impl StartFloors {
    /// An empty table.
    pub fn new() -> Self {
        StartFloors {
            block: 1,
            seen: 0,
            floors: Vec::new(),
        }
    }

    /// Takes the next record's start ticks (file order).
    pub fn push(&mut self, start: u64) {
        let b = (self.seen / self.block) as usize;
        self.seen += 1;
        if b < self.floors.len() {
            self.floors[b] = self.floors[b].min(start);
            return;
        }
        if self.floors.len() == MAX_BLOCKS {
            self.floors = self.floors.chunks(2).map(|p| p[0].min(p[1])).collect();
            // The new record opens block MAX_BLOCKS / 2 of the doubled size.
            self.block *= 2;
        }
        self.floors.push(start);
    }

    /// Turns the blocks' minima into the minima from each block on (after pass 1).
    pub fn finish(&mut self) {
        for b in (0..self.floors.len().saturating_sub(1)).rev() {
            self.floors[b] = self.floors[b].min(self.floors[b + 1]);
        }
    }

    /// Joins `next`, the table of the following segment of the same process.
    pub fn append(&mut self, next: StartFloors) {
        // Segments are rare (a server's rotating file): replaying the blocks keeps one rule.
        // Each block of `next` stands for `next.block` records with that earliest start.
        let mut left = next.seen;
        for floor in next.floors {
            for _ in 0..next.block.min(left) {
                self.push(floor);
            }
            left = left.saturating_sub(next.block);
        }
    }

    /// No record from the `decoded`-th on (0-based, file order) starts before this; `None`
    /// when none is left.
    pub fn floor_after(&self, decoded: u64) -> Option<u64> {
        if decoded >= self.seen {
            return None;
        }
        self.floors.get((decoded / self.block) as usize).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floors_are_the_earliest_start_still_to_come() {
        let starts = [50, 10, 40, 30, 60, 20, 70];
        let mut f = StartFloors::new();
        starts.iter().for_each(|&s| f.push(s));
        f.finish();
        for k in 0..starts.len() {
            let truth = starts[k..].iter().min().copied();
            let got = f.floor_after(k as u64);
            assert!(got <= truth, "{k}: {got:?} > {truth:?}");
        }
        // Blocks of one record: exact.
        assert_eq!(f.floor_after(4), Some(20));
        assert_eq!(f.floor_after(6), Some(70));
        assert_eq!(f.floor_after(7), None);
    }

    #[test]
    fn blocks_grow_and_stay_lower_bounds() {
        let n = MAX_BLOCKS as u64 * 3 + 5;
        let start = |i: u64| (i * 7919) % 100_003;
        let mut f = StartFloors::new();
        (0..n).for_each(|i| f.push(start(i)));
        f.finish();
        assert!(f.floors.len() <= MAX_BLOCKS);
        assert_eq!(f.block, 4);
        let mut truth = u64::MAX;
        for k in (0..n).rev() {
            truth = truth.min(start(k));
            let got = f.floor_after(k).expect("records left");
            assert!(got <= truth, "{k}");
        }
    }

    #[test]
    fn segments_append() {
        let mut a = StartFloors::new();
        [5, 9].iter().for_each(|&s| a.push(s));
        let mut b = StartFloors::new();
        [3, 8].iter().for_each(|&s| b.push(s));
        a.append(b);
        a.finish();
        assert_eq!(
            (0..5).map(|k| a.floor_after(k)).collect::<Vec<_>>(),
            vec![Some(3), Some(3), Some(3), Some(8), None]
        );
    }
}
