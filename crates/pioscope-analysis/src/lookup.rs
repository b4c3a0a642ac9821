//! Lookups a pass makes for every record, kept cheap on long traces: tables indexed by small
//! dense numbers (`Places`, and `InstanceIndex` for collective instances) instead of hash maps
//! that outgrow the caches, and places of keys with the last few held aside (`Recent`,
//! `RecentMap` of entries found so, and `Keyed`, such entries listed in key order), since
//! consecutive records mostly share their rank and file or alternate between a few keys (a
//! rank's layers on a file). Used by the statistics, the breakdown, the aggregation and the
//! finding rules.

use std::collections::BTreeMap;
use std::hash::Hash;

use rustc_hash::FxHashMap;

/// Places in a list, found by a small dense number (a table read, no hashing): per number,
/// its entry's place plus one, 0 for none yet. The table grows to the largest number asked.
#[derive(Debug, Default)]
pub(crate) struct Places(Vec<u32>);

impl Places {
    /// The place of number `n`'s entry; for a new one `add` makes the entry and returns its
    /// place.
    pub(crate) fn at(&mut self, n: usize, add: impl FnOnce() -> usize) -> usize {
        if self.0.len() <= n {
            self.0.resize(n + 1, 0);
        }
        match self.0[n] {
            0 => {
                let i = add();
                self.0[n] = i as u32 + 1;
                i
            }
            slot => slot as usize - 1,
        }
    }
}

/// Instance numbers below this index [`InstanceIndex`]'s table (4 bytes each: at most 16 MB);
/// a damaged file's larger ones go to its map.
const DENSE_INSTANCES: i64 = 1 << 22;

/// Where each collective instance's entry is in a list of instances. Instance numbers are
/// dense (0.., the same on every rank), so they index a table; other keys (a call without an
/// instance: the rules' `Call::instance_key` is negative) go through a map. A pass closes
/// millions of collective calls in a long trace: a table read each, not a probe into a hash
/// map that has outgrown the caches.
#[derive(Debug, Default)]
pub(crate) struct InstanceIndex {
    /// Per instance number, its entry's place.
    dense: Places,
    others: FxHashMap<i64, usize>,
}

impl InstanceIndex {
    /// The place of `key`'s entry; for a new key `add` makes the entry and returns its place.
    pub(crate) fn at(&mut self, key: i64, add: impl FnOnce() -> usize) -> usize {
        if !(0..DENSE_INSTANCES).contains(&key) {
            return *self.others.entry(key).or_insert_with(add);
        }
        self.dense.at(key as usize, add)
    }
}

/// Keys held aside by [`Recent`].
const RECENT_KEYS: usize = 4;

/// Places in a list, found by key: the last few keys asked for are held aside and compared
/// one by one, so the records of a run, which alternate between a few keys (an MPI-IO call
/// and the POSIX calls beneath it), mostly hash nothing.
#[derive(Debug)]
pub(crate) struct Recent<K> {
    recent: [Option<(K, usize)>; RECENT_KEYS],
    /// The entry of `recent` a new key replaces next.
    next: usize,
    map: FxHashMap<K, usize>,
}

impl<K> Default for Recent<K> {
    fn default() -> Self {
        Recent {
            recent: [None, None, None, None],
            next: 0,
            map: FxHashMap::default(),
        }
    }
}

impl<K: Copy + Eq + Hash> Recent<K> {
    /// The place of `key`'s entry; for a new key `add` makes the entry and returns its place.
    #[inline]
    pub(crate) fn at(&mut self, key: K, add: impl FnOnce() -> usize) -> usize {
        if let Some(i) = self.held(key) {
            return i;
        }
        let i = *self.map.entry(key).or_insert_with(add);
        self.hold(key, i);
        i
    }

    /// The place of `key`'s entry, if it has one.
    pub(crate) fn get(&mut self, key: K) -> Option<usize> {
        if let Some(i) = self.held(key) {
            return Some(i);
        }
        let i = *self.map.get(&key)?;
        self.hold(key, i);
        Some(i)
    }

    #[inline]
    fn held(&self, key: K) -> Option<usize> {
        (self.recent.iter().flatten()).find_map(|&(k, i)| (k == key).then_some(i))
    }

    fn hold(&mut self, key: K, i: usize) {
        self.recent[self.next] = Some((key, i));
        self.next = (self.next + 1) % RECENT_KEYS;
    }
}

/// Entries by key, in order of first appearance, found through a [`Recent`].
#[derive(Debug)]
pub(crate) struct RecentMap<K, A> {
    entries: Vec<(K, A)>,
    at: Recent<K>,
}

impl<K, A> Default for RecentMap<K, A> {
    fn default() -> Self {
        RecentMap {
            entries: Vec::new(),
            at: Recent::default(),
        }
    }
}

impl<K: Copy + Eq + Hash, A: Default> RecentMap<K, A> {
    /// The entry of `key`, new if need be.
    #[inline]
    pub(crate) fn entry(&mut self, key: K) -> &mut A {
        let entries = &mut self.entries;
        let i = self.at.at(key, || {
            entries.push((key, A::default()));
            entries.len() - 1
        });
        &mut entries[i].1
    }

    /// The entry of `key`, if it has one.
    pub(crate) fn get_mut(&mut self, key: K) -> Option<&mut A> {
        let i = self.at.get(key)?;
        Some(&mut self.entries[i].1)
    }

    /// Every entry, in order of first appearance.
    pub(crate) fn iter(&self) -> std::slice::Iter<'_, (K, A)> {
        self.entries.iter()
    }
}

/// Entries by key, found through a [`RecentMap`] (consecutive records mostly share their rank
/// and file, so most records compare a key or two and hash nothing), listed in key order.
/// A tree held the entries before: each change of key moved one out of it and one back in,
/// allocating and freeing its nodes.
#[derive(Debug)]
pub(crate) struct Keyed<K, A>(RecentMap<K, A>);

impl<K, A> Default for Keyed<K, A> {
    fn default() -> Self {
        Keyed(RecentMap::default())
    }
}

impl<K: Ord + Copy + Hash, A: Default> Keyed<K, A> {
    /// The entry of `k`.
    #[inline]
    pub(crate) fn at(&mut self, k: K) -> &mut A {
        self.0.entry(k)
    }

    /// Every entry, in key order.
    pub(crate) fn entries(&self) -> Vec<(K, &A)> {
        let mut v: Vec<(K, &A)> = self.0.iter().map(|(k, a)| (*k, a)).collect();
        v.sort_unstable_by_key(|(k, _)| *k);
        v
    }

    /// Entries summed by a coarser key.
    pub(crate) fn group<G: Ord, S: Default>(
        &self,
        key: impl Fn(&K) -> G,
        add: impl Fn(&mut S, &A),
    ) -> BTreeMap<G, S> {
        let mut m: BTreeMap<G, S> = BTreeMap::new();
        for (k, a) in self.entries() {
            add(m.entry(key(&k)).or_default(), a);
        }
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each key keeps the place its entry got when first seen, whether it indexes the table
    /// (an instance number), the map (a call without an instance) or is too large for the
    /// table (a damaged file's).
    #[test]
    fn instance_index_finds_each_entry_again() {
        let mut index = InstanceIndex::default();
        let mut entries: Vec<i64> = Vec::new();
        let keys = [
            3,
            -8,
            0,
            DENSE_INSTANCES,
            3,
            i64::from(i32::MAX),
            -8,
            0,
            DENSE_INSTANCES,
        ];
        let places: Vec<usize> = keys
            .iter()
            .map(|&k| {
                index.at(k, || {
                    entries.push(k);
                    entries.len() - 1
                })
            })
            .collect();
        assert_eq!(places, vec![0, 1, 2, 3, 0, 4, 1, 2, 3]);
        assert_eq!(
            entries,
            vec![3, -8, 0, DENSE_INSTANCES, i64::from(i32::MAX)]
        );
    }

    /// Each key keeps its place whether it is held aside or was pushed out by newer ones.
    #[test]
    fn recent_finds_each_entry_again() {
        let mut recent: Recent<(i32, u8)> = Recent::default();
        let mut entries = Vec::new();
        let keys: Vec<(i32, u8)> = (0..6).map(|i| (i / 2, i as u8 % 2)).collect();
        let mut places = Vec::new();
        for &k in keys.iter().chain(keys.iter().rev()) {
            places.push(recent.at(k, || {
                entries.push(k);
                entries.len() - 1
            }));
        }
        assert_eq!(places, vec![0, 1, 2, 3, 4, 5, 5, 4, 3, 2, 1, 0]);
        assert_eq!(entries, keys);
        assert_eq!(recent.get((0, 1)), Some(1));
        assert_eq!(recent.get((9, 0)), None);
    }
}
