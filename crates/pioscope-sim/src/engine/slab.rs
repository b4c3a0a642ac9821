//! Slot reuse for the engine's slabs: objects that come and go by the million (requests,
//! messages, receives, locks, cache ranges) live in a `Vec` addressed by `u32`, and a freed
//! slot is taken again before the vector grows.

/// Puts `item` in a free slot of `slab` (the last one freed) or at its end; returns its index.
pub(crate) fn slab_insert<T>(slab: &mut Vec<T>, free: &mut Vec<u32>, item: T) -> u32 {
    match free.pop() {
        Some(i) => {
            slab[i as usize] = item;
            i
        }
        None => {
            slab.push(item);
            (slab.len() - 1) as u32
        }
    }
}
