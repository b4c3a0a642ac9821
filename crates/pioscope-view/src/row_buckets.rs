//! A row's summary buckets in the form the page gets them (issue 18): at most one bucket per
//! pixel (finer buckets of the index merged), busy fractions in the steps a lane can draw,
//! neighbours that draw alike merged into runs, one array per field. Sixty rows of 1,600
//! buckets as JSON objects of ~100 bytes made replies of ~10 MB whose encoding and transfer
//! took most of an answer's time.

use pioscope_trace::store::lod::BucketAcc;
use serde::Serialize;

/// Steps of a busy fraction: a lane of the page is 6 px high, so eighths draw every height it
/// can show, and neighbours differing by less merge into one run.
pub const BUSY_STEPS: u8 = 8;

/// The buckets of one row: runs of consecutive buckets alike (same busy fractions per depth and
/// function), as parallel arrays.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct BucketRuns {
    /// Bucket width, ns.
    pub bucket_ns: i64,
    /// [`BUSY_STEPS`]: the unit of `busy`.
    pub busy_steps: u8,
    /// Bucket index (start = index × bucket_ns) the first run's `skip` counts from.
    pub first: i64,
    /// Empty buckets before each run, counted from the end of the previous run (the first run:
    /// from `first`).
    pub skip: Vec<u32>,
    /// Buckets in each run.
    pub len: Vec<u32>,
    /// Busy fraction per depth 0..3 of each bucket of the run, in steps of 1 / `busy_steps`
    /// (rounded; at least one step when busy at all), packed in one number as the digits of
    /// base `busy_steps` + 1, depth 0 the lowest (a third of the bytes of four arrays).
    pub busy: Vec<u16>,
    /// The dominant function at depth 0 (null when none).
    pub func: Vec<Option<u32>>,
    /// Calls starting in the run (all its buckets).
    pub count: Vec<u64>,
    /// Index one past the last run's last bucket.
    #[serde(skip)]
    end: i64,
}

impl BucketRuns {
    /// Runs of `buckets` (of `width` ns, in index order), merged `m` to one so that a bucket is
    /// at least `ns_per_px` wide.
    pub fn new(buckets: &[BucketAcc], width: i64, ns_per_px: i64) -> BucketRuns {
        let width = width.max(1);
        let m = ((ns_per_px + width - 1) / width).max(1);
        let first = buckets.first().map_or(0, |b| b.index.div_euclid(m));
        let mut runs = BucketRuns {
            bucket_ns: width.saturating_mul(m),
            busy_steps: BUSY_STEPS,
            first,
            end: first,
            ..BucketRuns::default()
        };
        let mut pending: Option<BucketAcc> = None;
        for b in buckets {
            let index = b.index.div_euclid(m);
            match pending.as_mut() {
                Some(p) if p.index == index => p.merge(b),
                _ => {
                    if let Some(done) = pending.take() {
                        runs.push(&done);
                    }
                    let mut fresh = BucketAcc {
                        index,
                        ..BucketAcc::default()
                    };
                    fresh.merge(b);
                    pending = Some(fresh);
                }
            }
        }
        if let Some(done) = pending {
            runs.push(&done);
        }
        runs
    }

    /// Appends one bucket (of width `bucket_ns`): to the last run when it follows it and draws
    /// alike.
    fn push(&mut self, b: &BucketAcc) {
        let width = self.bucket_ns as f64;
        let busy = b.busy_ns.iter().rev().fold(0u16, |packed, &ns| {
            packed * (u16::from(BUSY_STEPS) + 1) + u16::from(steps(ns as f64, width))
        });
        let func = b.dominant();
        let end = self.end;
        self.end = b.index + 1;
        let last = self.len.len().checked_sub(1);
        if let Some(k) = last {
            let alike = self.busy[k] == busy && self.func[k] == func;
            if b.index == end && alike {
                self.len[k] += 1;
                self.count[k] += b.count;
                return;
            }
        }
        self.skip
            .push(u32::try_from(b.index - end).unwrap_or(u32::MAX));
        self.len.push(1);
        self.busy.push(busy);
        self.func.push(func);
        self.count.push(b.count);
    }
}

/// `ns` of `width` in [`BUSY_STEPS`], rounded, at least 1 when `ns` > 0 (a busy bucket shows).
fn steps(ns: f64, width: f64) -> u8 {
    let steps = f64::from(BUSY_STEPS);
    let s = ((ns / width).clamp(0.0, 1.0) * steps).round();
    if ns > 0.0 {
        s.max(1.0) as u8
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bucket(index: i64, busy0: i64, func: u32, count: u64) -> BucketAcc {
        BucketAcc {
            index,
            busy_ns: [busy0, 0, 0, 0],
            count,
            bytes: 0.0,
            funcs: vec![(0, func, busy0.max(1))],
        }
    }

    #[test]
    fn alike_neighbours_make_one_run() {
        let b = [
            bucket(10, 100, 1, 2),
            bucket(11, 100, 1, 3),
            bucket(12, 50, 1, 1),
            bucket(15, 50, 1, 1),
        ];
        let r = BucketRuns::new(&b, 100, 100);
        assert_eq!(r.bucket_ns, 100);
        assert_eq!(r.first, 10);
        assert_eq!(r.skip, vec![0, 0, 2]);
        assert_eq!(r.len, vec![2, 1, 1]);
        assert_eq!(r.busy, vec![8, 4, 4]);
        assert_eq!(r.count, vec![5, 1, 1]);
        assert_eq!(r.func, vec![Some(1), Some(1), Some(1)]);
    }

    #[test]
    fn depths_pack_as_digits() {
        let mut b = bucket(0, 100, 7, 1);
        b.busy_ns = [100, 50, 0, 1];
        let r = BucketRuns::new(&[b], 100, 100);
        assert_eq!(r.busy, vec![8 + 4 * 9 + 729]);
    }

    #[test]
    fn finer_buckets_merge_to_one_per_pixel() {
        // Width 40 for 100 ns per pixel: three to one, on a grid of 120 ns.
        let b = [
            bucket(0, 40, 1, 1),
            bucket(1, 10, 2, 1),
            bucket(2, 0, 2, 1),
            bucket(3, 40, 2, 1),
        ];
        let r = BucketRuns::new(&b, 40, 100);
        assert_eq!(r.bucket_ns, 120);
        assert_eq!(
            (r.first, r.skip.clone(), r.len.clone()),
            (0, vec![0, 0], vec![1, 1])
        );
        assert_eq!(r.busy, vec![3, 3], "5/12 and 4/12 in eighths");
        assert_eq!(
            r.func,
            vec![Some(1), Some(2)],
            "the function busiest in the merged bucket"
        );
        assert_eq!(r.count, vec![3, 1]);
    }
}
