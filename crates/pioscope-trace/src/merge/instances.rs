//! Collective instance numbering.
//!
//! Every rank's record of one MPI-IO collective call carries the same raw link (file handle
//! id << 32 | call number). The store replaces it by a dense instance number 1..N, in order of
//! the call's first appearance in time on any rank (ties broken by the raw value), so the
//! instances read in time order and the same link is the same instance on every rank.

use std::collections::HashMap;

/// Builds the raw-link → instance map from (raw link, corrected start ns) observations.
pub fn densify(observations: impl IntoIterator<Item = (u64, i64)>) -> HashMap<u64, i32> {
    let mut first: HashMap<u64, i64> = HashMap::new();
    for (link, t) in observations {
        first
            .entry(link)
            .and_modify(|f| *f = (*f).min(t))
            .or_insert(t);
    }
    let mut order: Vec<(i64, u64)> = first.into_iter().map(|(l, t)| (t, l)).collect();
    order.sort_unstable();
    order
        .into_iter()
        .enumerate()
        .map(|(i, (_, link))| (link, i as i32 + 1))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dense_by_first_appearance() {
        let h = 7u64 << 32;
        // Rank 0 sees calls 1, 2, 3 of handle 7; rank 1 sees them later, and call 3 of handle 7
        // appears first of all on rank 1 of another file (handle 8, call 1).
        let obs = [
            (h | 1, 100),
            (h | 2, 300),
            (h | 1, 120),
            (h | 2, 290),
            (8u64 << 32 | 1, 50),
            (h | 3, 500),
        ];
        let m = densify(obs);
        assert_eq!(m.len(), 4);
        assert_eq!(m[&(8u64 << 32 | 1)], 1);
        assert_eq!(m[&(h | 1)], 2);
        assert_eq!(m[&(h | 2)], 3);
        assert_eq!(m[&(h | 3)], 4);
    }

    #[test]
    fn ties_break_by_link() {
        let m = densify([(9, 10), (3, 10)]);
        assert_eq!((m[&3], m[&9]), (1, 2));
    }
}
