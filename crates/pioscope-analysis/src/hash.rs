//! A fast hasher for the small keys analyses look up once per event (function names, group
//! keys, thread ids). std's SipHash resists collision attacks that a local trace file cannot
//! mount, and costs several times more on short strings; this is the Fx hash rustc uses.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// Fx hash: a rotate, xor and multiply per 8 bytes.
#[derive(Clone, Copy, Debug, Default)]
pub struct FxHasher {
    hash: u64,
}

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl FxHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.add(u64::from_le_bytes(w));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            w[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(w));
        }
    }
    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(i as u64);
    }
    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.add(i as u64);
    }
    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }
    #[inline]
    fn write_i32(&mut self, i: i32) {
        self.add(i as u32 as u64);
    }
    #[inline]
    fn write_i64(&mut self, i: i64) {
        self.add(i as u64);
    }
    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }
    fn finish(&self) -> u64 {
        self.hash
    }
}

/// A HashMap with the Fx hash.
pub type FxMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;
/// A HashSet with the Fx hash.
pub type FxSet<K> = HashSet<K, BuildHasherDefault<FxHasher>>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_work_and_strings_differ() {
        let mut m: FxMap<String, u32> = FxMap::default();
        for (i, s) in ["pwrite", "pwrite64", "MPI_File_write_all", "", "a"]
            .iter()
            .enumerate()
        {
            m.insert(s.to_string(), i as u32);
        }
        assert_eq!(m.get("pwrite64"), Some(&1));
        assert_eq!(m.get(""), Some(&3));
        assert_eq!(m.len(), 5);
    }
}
