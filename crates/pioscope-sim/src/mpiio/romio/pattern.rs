//! The file bytes one rank accesses in one MPI-IO call, as ROMIO's flattened view gives them:
//! either an explicit list of (offset, length) runs or a strided vector (the HPIO pattern),
//! with the range queries the strategies need in closed form, so that a 32768-region access
//! costs no more to plan than a contiguous one.

/// The accessed file bytes of one rank in one call (file offsets, sorted, non-overlapping).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Pattern {
    /// Explicit runs.
    Runs(Runs),
    /// `count` pieces of `len` bytes, piece i at `offset + i × stride` (stride ≥ len).
    Vector {
        /// First byte of the first piece.
        offset: u64,
        /// Number of pieces.
        count: u64,
        /// Bytes per piece.
        len: u64,
        /// Distance between piece starts.
        stride: u64,
    },
}

/// Sorted, non-overlapping runs with prefix sums for range queries.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Runs {
    runs: Vec<(u64, u64)>,
    /// prefix[i] = bytes of runs[..i].
    prefix: Vec<u64>,
}

impl Runs {
    /// The runs of `pieces` (any order; overlapping or adjacent pieces are merged, empty ones
    /// dropped).
    pub fn new(mut pieces: Vec<(u64, u64)>) -> Runs {
        pieces.retain(|p| p.1 > 0);
        pieces.sort_unstable();
        let mut runs: Vec<(u64, u64)> = Vec::with_capacity(pieces.len());
        for (o, l) in pieces {
            match runs.last_mut() {
                Some(last) if o <= last.0 + last.1 => {
                    let end = (last.0 + last.1).max(o + l);
                    last.1 = end - last.0;
                }
                _ => runs.push((o, l)),
            }
        }
        let mut prefix = Vec::with_capacity(runs.len() + 1);
        let mut sum = 0;
        prefix.push(0);
        for r in &runs {
            sum += r.1;
            prefix.push(sum);
        }
        Runs { runs, prefix }
    }

    /// The runs, sorted.
    pub fn as_slice(&self) -> &[(u64, u64)] {
        &self.runs
    }
}

impl Default for Pattern {
    fn default() -> Self {
        Pattern::empty()
    }
}

impl Pattern {
    /// One contiguous piece.
    pub fn contiguous(offset: u64, bytes: u64) -> Pattern {
        Pattern::Runs(Runs::new(vec![(offset, bytes)]))
    }

    /// Nothing accessed.
    pub fn empty() -> Pattern {
        Pattern::Runs(Runs::default())
    }

    /// A strided vector; degenerate vectors become runs (one piece, or pieces touching).
    pub fn vector(offset: u64, count: u64, len: u64, stride: u64) -> Pattern {
        if count == 0 || len == 0 {
            Pattern::empty()
        } else if count == 1 || stride <= len {
            // stride < len would overlap; treat as touching (contiguous).
            Pattern::contiguous(offset, len + (count - 1) * stride.max(len))
        } else {
            Pattern::Vector {
                offset,
                count,
                len,
                stride,
            }
        }
    }

    /// Bytes accessed.
    pub fn bytes(&self) -> u64 {
        match self {
            Pattern::Runs(r) => r.prefix.last().copied().unwrap_or(0),
            Pattern::Vector { count, len, .. } => count * len,
        }
    }

    /// Contiguous pieces.
    pub fn pieces(&self) -> u64 {
        match self {
            Pattern::Runs(r) => r.runs.len() as u64,
            Pattern::Vector { count, .. } => *count,
        }
    }

    /// [first byte, end of last byte), or None when nothing is accessed.
    pub fn extent(&self) -> Option<(u64, u64)> {
        match self {
            Pattern::Runs(r) => {
                let first = r.runs.first()?;
                let last = r.runs.last()?;
                Some((first.0, last.0 + last.1))
            }
            Pattern::Vector {
                offset,
                count,
                len,
                stride,
            } => Some((*offset, offset + (count - 1) * stride + len)),
        }
    }

    /// True when the access is one contiguous piece (or nothing).
    pub fn is_contiguous(&self) -> bool {
        self.pieces() <= 1
    }

    /// Bytes accessed below file offset `x`.
    fn bytes_below(&self, x: u64) -> u64 {
        match self {
            Pattern::Runs(r) => {
                // Runs starting before x.
                let i = r.runs.partition_point(|p| p.0 < x);
                if i == 0 {
                    return 0;
                }
                let (o, l) = r.runs[i - 1];
                r.prefix[i - 1] + l.min(x - o)
            }
            Pattern::Vector {
                offset,
                count,
                len,
                stride,
            } => {
                if x <= *offset {
                    return 0;
                }
                let k = (x - offset) / stride;
                if k >= *count {
                    return count * len;
                }
                k * len + (*len).min(x - offset - k * stride)
            }
        }
    }

    /// Bytes accessed inside [a, b).
    pub fn bytes_in(&self, a: u64, b: u64) -> u64 {
        if b <= a {
            return 0;
        }
        self.bytes_below(b) - self.bytes_below(a)
    }

    /// Index range [first, last] of the pieces intersecting [a, b), if any.
    fn piece_range(&self, a: u64, b: u64) -> Option<(u64, u64)> {
        if b <= a {
            return None;
        }
        match self {
            Pattern::Runs(r) => {
                let first = r.runs.partition_point(|p| p.0 + p.1 <= a);
                let end = r.runs.partition_point(|p| p.0 < b);
                (first < end).then(|| (first as u64, end as u64 - 1))
            }
            Pattern::Vector {
                offset,
                count,
                len,
                stride,
            } => {
                // First i with offset + i·stride + len > a.
                let first = if a < offset + len {
                    0
                } else {
                    (a - offset - len) / stride + 1
                };
                // Last i with offset + i·stride < b.
                if b <= *offset {
                    return None;
                }
                let last = ((b - 1 - offset) / stride).min(count - 1);
                (first <= last).then_some((first, last))
            }
        }
    }

    fn piece(&self, i: u64) -> (u64, u64) {
        match self {
            Pattern::Runs(r) => r.runs[i as usize],
            Pattern::Vector {
                offset,
                len,
                stride,
                ..
            } => (offset + i * stride, *len),
        }
    }

    /// Pieces intersecting [a, b).
    pub fn pieces_in(&self, a: u64, b: u64) -> u64 {
        self.piece_range(a, b).map_or(0, |(f, l)| l - f + 1)
    }

    /// [first, end) of the accessed bytes inside [a, b), if any.
    pub fn span_in(&self, a: u64, b: u64) -> Option<(u64, u64)> {
        let (f, l) = self.piece_range(a, b)?;
        let (fo, _) = self.piece(f);
        let (lo, ll) = self.piece(l);
        Some((fo.max(a), (lo + ll).min(b)))
    }

    /// The first accessed byte at or after `x`, if any.
    pub fn next_at_or_after(&self, x: u64) -> Option<u64> {
        let (f, _) = self.piece_range(x, u64::MAX)?;
        Some(self.piece(f).0.max(x))
    }

    /// Every piece clipped to [a, b), in order.
    pub fn pieces_between(&self, a: u64, b: u64) -> impl Iterator<Item = (u64, u64)> + '_ {
        let range = self.piece_range(a, b);
        let (f, l) = range.unwrap_or((1, 0));
        (f..=l).filter(move |_| range.is_some()).map(move |i| {
            let (o, len) = self.piece(i);
            let s = o.max(a);
            let e = (o + len).min(b);
            (s, e - s)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hpio(rank: u64, ranks: u64) -> Pattern {
        Pattern::vector(rank * 160, 1024, 32, ranks * 160)
    }

    #[test]
    fn vector_queries_match_runs() {
        let v = hpio(1, 4);
        let Pattern::Vector { .. } = v else {
            panic!("not a vector")
        };
        let runs = Pattern::Runs(Runs::new((0..1024).map(|i| (160 + i * 640, 32)).collect()));
        assert_eq!(v.bytes(), 32768);
        assert_eq!(v.extent(), runs.extent());
        assert_eq!(v.extent(), Some((160, 160 + 1023 * 640 + 32)));
        for (a, b) in [
            (0, 100),
            (0, 161),
            (170, 900),
            (191, 800),
            (1000, 70_000),
            (0, u64::MAX),
        ] {
            assert_eq!(v.bytes_in(a, b), runs.bytes_in(a, b), "bytes {a} {b}");
            assert_eq!(v.pieces_in(a, b), runs.pieces_in(a, b), "pieces {a} {b}");
            assert_eq!(v.span_in(a, b), runs.span_in(a, b), "span {a} {b}");
            assert_eq!(
                v.pieces_between(a, b).collect::<Vec<_>>(),
                runs.pieces_between(a, b).collect::<Vec<_>>()
            );
        }
        assert_eq!(v.bytes_in(170, 900), 22 + 32);
        assert_eq!(v.span_in(170, 900), Some((170, 832)));
        assert_eq!(v.next_at_or_after(200), Some(800));
        assert_eq!(v.next_at_or_after(170), Some(170));
        assert_eq!(v.span_in(0, 160), None);
    }

    #[test]
    fn runs_merge_and_degenerate_vectors() {
        let r = Runs::new(vec![(10, 5), (0, 10), (30, 0), (40, 2)]);
        assert_eq!(r.as_slice(), &[(0, 15), (40, 2)]);
        assert!(Pattern::vector(0, 8, 16, 16).is_contiguous());
        assert_eq!(Pattern::vector(0, 8, 16, 16).bytes(), 128);
        assert_eq!(Pattern::empty().extent(), None);
    }
}
