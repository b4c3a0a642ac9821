//! A server's caches: the write-back cache (dirty bytes waiting to be flushed, in arrival
//! order) and the LRU read cache (recently written or read stripe pieces).

use std::collections::VecDeque;

use rustc_hash::FxHashMap;

use crate::program::{FileId, Rank};

/// Dirty data of one write, waiting in the write-back cache for the flush.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Extent {
    /// Disk of the server.
    pub disk: u32,
    /// Offset on the disk.
    pub disk_offset: u64,
    /// Length.
    pub bytes: u64,
    /// The file and offset in it (for the server_flush record).
    pub file: FileId,
    /// Offset in the file.
    pub file_offset: u64,
    /// The client whose write this was (the first, when writes were merged).
    pub client: Rank,
    /// Sequence number of the last write merged in (Sync waits for it).
    pub seq: u64,
}

/// The write-back cache of one server.
#[derive(Clone, Debug, Default)]
pub struct WriteBack {
    /// Dirty bytes at which writers wait (0 = write-through).
    limit: u64,
    /// Largest extent the flush writes at once (writes to consecutive disk offsets merge).
    merge_limit: u64,
    dirty: u64,
    queue: VecDeque<Extent>,
    next_seq: u64,
    flushed_seq: u64,
    /// A flush of the front extent is under way.
    pub flushing: bool,
}

impl WriteBack {
    /// A cache holding at most `limit` dirty bytes (0 = write-through), flushing extents of at
    /// most `merge_limit` bytes.
    pub fn new(limit: u64, merge_limit: u64) -> WriteBack {
        WriteBack {
            limit,
            merge_limit: merge_limit.max(1),
            next_seq: 1,
            ..Default::default()
        }
    }

    /// Whether writes go through to the disk.
    pub fn write_through(&self) -> bool {
        self.limit == 0
    }

    /// Whether a write of `bytes` fits now (a write larger than the limit fits in an empty
    /// cache, or it would never be absorbed).
    pub fn has_room(&self, bytes: u64) -> bool {
        self.dirty + bytes <= self.limit || self.dirty == 0
    }

    /// Absorbs a write; returns its sequence number. Merged into the last queued extent when
    /// it continues it on the disk (and that extent is not being flushed).
    pub fn absorb(&mut self, mut e: Extent) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.dirty += e.bytes;
        e.seq = seq;
        let mergeable = self.queue.len() > usize::from(self.flushing);
        if mergeable {
            if let Some(last) = self.queue.back_mut() {
                if last.disk == e.disk
                    && last.file == e.file
                    && last.disk_offset + last.bytes == e.disk_offset
                    && last.bytes + e.bytes <= self.merge_limit
                {
                    last.bytes += e.bytes;
                    last.seq = seq;
                    return seq;
                }
            }
        }
        self.queue.push_back(e);
        seq
    }

    /// The extent to flush next, if any and none is being flushed; marks it flushing.
    pub fn next_flush(&mut self) -> Option<Extent> {
        if self.flushing {
            return None;
        }
        let e = *self.queue.front()?;
        self.flushing = true;
        Some(e)
    }

    /// The extent being flushed reached the disk.
    pub fn flushed(&mut self) -> Option<Extent> {
        let e = self.queue.pop_front()?;
        self.flushing = false;
        self.dirty -= e.bytes;
        self.flushed_seq = e.seq;
        Some(e)
    }

    /// Dirty bytes now.
    pub fn dirty(&self) -> u64 {
        self.dirty
    }

    /// Every write up to this sequence number is on disk.
    pub fn flushed_seq(&self) -> u64 {
        self.flushed_seq
    }
}

const NIL: u32 = u32::MAX;

#[derive(Clone, Copy, Debug)]
struct Node {
    key: (FileId, u64),
    lo: u64,
    hi: u64,
    prev: u32,
    next: u32,
}

/// The page size of a server's cache.
const PAGE: u64 = 4096;

/// LRU read cache by stripe: each entry is the one byte range of a stripe it holds.
#[derive(Clone, Debug, Default)]
pub struct ReadCache {
    capacity: u64,
    used: u64,
    /// Node of each (file, stripe). Fx hash: the keys are small integers, and SipHash would
    /// cost more than the lookup.
    map: FxHashMap<(FileId, u64), u32>,
    nodes: Vec<Node>,
    free: Vec<u32>,
    head: u32,
    tail: u32,
}

impl ReadCache {
    /// A cache of `capacity` bytes (0 = none).
    pub fn new(capacity: u64) -> ReadCache {
        ReadCache {
            capacity,
            head: NIL,
            tail: NIL,
            ..Default::default()
        }
    }

    fn unlink(&mut self, i: u32) {
        let n = self.nodes[i as usize];
        if n.prev != NIL {
            self.nodes[n.prev as usize].next = n.next;
        } else {
            self.head = n.next;
        }
        if n.next != NIL {
            self.nodes[n.next as usize].prev = n.prev;
        } else {
            self.tail = n.prev;
        }
    }

    fn push_front(&mut self, i: u32) {
        self.nodes[i as usize].prev = NIL;
        self.nodes[i as usize].next = self.head;
        if self.head != NIL {
            self.nodes[self.head as usize].prev = i;
        }
        self.head = i;
        if self.tail == NIL {
            self.tail = i;
        }
    }

    /// Whether [lo, hi) of `stripe` of `file` is cached; a hit becomes most recently used.
    pub fn lookup(&mut self, file: FileId, stripe: u64, lo: u64, hi: u64) -> bool {
        let Some(&i) = self.map.get(&(file, stripe)) else {
            return false;
        };
        let n = self.nodes[i as usize];
        if n.lo <= lo && hi <= n.hi {
            self.unlink(i);
            self.push_front(i);
            true
        } else {
            false
        }
    }

    /// Caches [lo, hi) of `stripe` of `file` in whole pages (joined to the range held if they
    /// touch, else replacing it), evicting the least recently used stripes beyond the capacity.
    /// Whole pages, as a page cache holds them: accesses a hole of less than a page apart
    /// (sieving windows of interleaved ranks) stay one range. Returns whether [lo, hi) was
    /// held already (a hit becomes most recently used either way).
    pub fn insert(&mut self, file: FileId, stripe: u64, lo: u64, hi: u64) -> bool {
        if self.capacity == 0 || hi <= lo {
            return false;
        }
        let mut held = false;
        let (lo, hi) = (lo / PAGE * PAGE, hi.div_ceil(PAGE) * PAGE);
        let key = (file, stripe);
        if let Some(&i) = self.map.get(&key) {
            let n = &mut self.nodes[i as usize];
            held = n.lo <= lo && hi <= n.hi;
            let old = n.hi - n.lo;
            if lo <= n.hi && n.lo <= hi {
                n.lo = n.lo.min(lo);
                n.hi = n.hi.max(hi);
            } else {
                n.lo = lo;
                n.hi = hi;
            }
            self.used = self.used - old + (n.hi - n.lo);
            self.unlink(i);
            self.push_front(i);
        } else {
            let node = Node {
                key,
                lo,
                hi,
                prev: NIL,
                next: NIL,
            };
            let i = match self.free.pop() {
                Some(i) => {
                    self.nodes[i as usize] = node;
                    i
                }
                None => {
                    self.nodes.push(node);
                    (self.nodes.len() - 1) as u32
                }
            };
            self.map.insert(key, i);
            self.used += hi - lo;
            self.push_front(i);
        }
        while self.used > self.capacity && self.tail != NIL {
            let t = self.tail;
            let n = self.nodes[t as usize];
            self.unlink(t);
            self.map.remove(&n.key);
            self.used -= n.hi - n.lo;
            self.free.push(t);
        }
        held
    }

    /// Bytes cached.
    pub fn used(&self) -> u64 {
        self.used
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ext(disk_offset: u64, bytes: u64) -> Extent {
        Extent {
            disk: 0,
            disk_offset,
            bytes,
            file: 0,
            file_offset: disk_offset,
            client: 0,
            seq: 0,
        }
    }

    #[test]
    fn write_back_room_merge_and_flush() {
        let mut wb = WriteBack::new(100, 1000);
        assert!(wb.has_room(100));
        assert_eq!(wb.absorb(ext(0, 40)), 1);
        assert_eq!(
            wb.next_flush(),
            Some(Extent {
                seq: 1,
                ..ext(0, 40)
            })
        );
        // The front extent is being flushed: the next write starts a new one, the one after
        // merges into it.
        assert_eq!(wb.absorb(ext(40, 30)), 2);
        assert_eq!(wb.absorb(ext(70, 30)), 3);
        assert_eq!(wb.dirty(), 100);
        assert!(!wb.has_room(1));
        assert_eq!(wb.flushed().map(|e| e.bytes), Some(40));
        assert_eq!(wb.flushed_seq(), 1);
        assert!(wb.has_room(40));
        assert_eq!(
            wb.next_flush(),
            Some(Extent {
                seq: 3,
                ..ext(40, 60)
            })
        );
        // Larger than the limit: fits only an empty cache.
        let wb = WriteBack::new(100, 1000);
        assert!(wb.has_room(500));
    }

    #[test]
    fn read_cache_lru() {
        const P: u64 = PAGE;
        let mut c = ReadCache::new(100 * P);
        c.insert(0, 0, 0, 50 * P);
        c.insert(0, 1, 0, 50 * P);
        assert!(c.lookup(0, 0, 10 * P, 20 * P));
        assert!(!c.lookup(0, 0, 40 * P, 60 * P));
        // Stripe 1 is least recently used: evicted by stripe 2.
        c.insert(0, 2, 0, 50 * P);
        assert!(!c.lookup(0, 1, 0, 50 * P));
        assert!(c.lookup(0, 0, 0, 50 * P));
        assert_eq!(c.used(), 100 * P);
        // Touching ranges join.
        c.insert(0, 2, 50 * P, 60 * P);
        assert!(!c.lookup(0, 0, 0, 50 * P));
        assert!(c.lookup(0, 2, 0, 60 * P));
    }

    /// Whole pages: a range caches the pages it touches, and ranges less than a page apart
    /// (sieving windows that end in a hole) become one.
    #[test]
    fn read_cache_holds_whole_pages() {
        let mut c = ReadCache::new(1 << 30);
        c.insert(0, 0, 100, 200);
        assert!(c.lookup(0, 0, 0, PAGE));
        c.insert(0, 0, 10_000, 20_000);
        assert!(
            !c.lookup(0, 0, 0, 20_000),
            "two pages apart: the later range replaces it"
        );
        c.insert(0, 0, 20_500, 30_000);
        assert!(
            c.lookup(0, 0, 10_000, 30_000),
            "less than a page apart: joined"
        );
        // insert says whether the range was held: a rewrite of cached pages, or new ones.
        assert!(c.insert(0, 0, 12_000, 13_000));
        assert!(!c.insert(0, 0, 30_000, 40_000));
    }
}
