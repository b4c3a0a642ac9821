//! A server's caches, as its kernel's page cache holds them: the write-back cache (dirty data
//! by disk offset, flushed in ascending order with adjacent data merged, as the elevator
//! does) and the LRU read cache (any number of byte ranges of recently written or read data).

use std::collections::BTreeMap;

use crate::engine::slab::slab_insert;
use crate::program::{FileId, Rank};

/// Dirty data of one write, or of writes that continue each other, in the write-back cache;
/// also one access of the flush.
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
    /// Sequence number of the oldest write whose data it holds (Sync waits until none older
    /// than its own is dirty).
    pub seq: u64,
}

impl Extent {
    fn end(&self) -> u64 {
        self.disk_offset + self.bytes
    }

    /// Whether `next` continues this extent on the disk, in the same file's object (a
    /// server's stripes of a file lie back to back there, so the kernel merges across them).
    fn continued_by(&self, next: &Extent) -> bool {
        self.disk == next.disk && self.file == next.file && self.end() == next.disk_offset
    }

    /// The part from `skip` bytes in on.
    fn tail(&self, skip: u64) -> Extent {
        Extent {
            disk_offset: self.disk_offset + skip,
            file_offset: self.file_offset + skip,
            bytes: self.bytes - skip,
            ..*self
        }
    }
}

/// The write-back cache of one server.
///
/// Dirty data is kept by (disk, disk offset), never overlapping: a write over dirty data
/// replaces it. The flush is an elevator (C-SCAN): it takes the dirty data at or above where
/// its previous access ended (wrapping to the lowest), merges what follows it on the disk up
/// to `max_access` bytes, and issues that as one access.
#[derive(Clone, Debug, Default)]
pub struct WriteBack {
    /// Dirty bytes at which writers wait (0 = write-through).
    limit: u64,
    /// Largest access the flush issues.
    max_access: u64,
    /// Dirty bytes, those being flushed included (the kernel counts both against its limit).
    dirty: u64,
    extents: BTreeMap<(u32, u64), Extent>,
    /// How many extents have each oldest write (by sequence number).
    oldest: BTreeMap<u64, u32>,
    /// Where the last flush access ended: the elevator's position.
    head: (u32, u64),
    flushing: Option<Extent>,
    next_seq: u64,
}

impl WriteBack {
    /// A cache holding at most `limit` dirty bytes (0 = write-through), flushing accesses of
    /// at most `max_access` bytes.
    pub fn new(limit: u64, max_access: u64) -> WriteBack {
        WriteBack {
            limit,
            max_access: max_access.max(1),
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

    /// Absorbs a write; returns its sequence number. The write dirties the whole pages it
    /// touches, as a kernel's page cache does; dirty data it overwrites is replaced; dirty
    /// data it continues, or that continues it, is merged with it.
    pub fn absorb(&mut self, mut e: Extent) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        e.seq = seq;
        if e.bytes == 0 {
            return seq;
        }
        let (lo, hi) = whole_pages(e.disk_offset, e.end());
        e.file_offset = e.file_offset.saturating_sub(e.disk_offset - lo);
        e.disk_offset = lo;
        e.bytes = hi - lo;
        self.dirty += e.bytes;
        let (disk, lo, hi) = (e.disk, e.disk_offset, e.end());
        let mut around = self.neighbours(disk, lo);
        if around.0.is_some_and(|p| p.end() > lo) || around.1.is_some_and(|n| n.disk_offset < hi) {
            e.seq = e.seq.min(self.overwrite(disk, lo, hi));
            around = self.neighbours(disk, lo);
        }
        let (prev, next) = around;
        if let Some(next) = next.filter(|n| e.continued_by(n)) {
            self.remove((disk, hi));
            e.bytes += next.bytes;
            e.seq = e.seq.min(next.seq);
        }
        match prev.filter(|p| p.continued_by(&e)) {
            // Grown in place: the common case of a writer going on where it stopped.
            Some(p) => {
                if e.seq < p.seq {
                    self.forget(p.seq);
                    *self.oldest.entry(e.seq).or_insert(0) += 1;
                }
                let x = self.extents.get_mut(&(disk, p.disk_offset)).expect("dirty");
                x.bytes += e.bytes;
                x.seq = x.seq.min(e.seq);
            }
            None => self.insert(e),
        }
        seq
    }

    /// The dirty extents of `disk` nearest below and at or above `at`.
    fn neighbours(&self, disk: u32, at: u64) -> (Option<Extent>, Option<Extent>) {
        let on_disk = |(_, x): (_, &Extent)| (x.disk == disk).then_some(*x);
        (
            self.extents
                .range(..(disk, at))
                .next_back()
                .and_then(on_disk),
            self.extents.range((disk, at)..).next().and_then(on_disk),
        )
    }

    /// Drops the dirty data in [lo, hi) of `disk` (a write replaces it), keeping the parts of
    /// extents outside it; returns the oldest write it dropped data of (u64::MAX: none). The
    /// writer's pages hold that write's bytes too unless it covered them all, so Sync counts
    /// them as that write's until they are flushed.
    fn overwrite(&mut self, disk: u32, lo: u64, hi: u64) -> u64 {
        let mut oldest = u64::MAX;
        let mut from = lo;
        if let Some((&(d, start), x)) = self.extents.range(..(disk, lo)).next_back() {
            if d == disk && x.end() > lo {
                from = start;
            }
        }
        while let Some((&key, _)) = self.extents.range((disk, from)..(disk, hi)).next() {
            let x = self.remove(key);
            oldest = oldest.min(x.seq);
            self.dirty -= x.end().min(hi) - x.disk_offset.max(lo);
            if x.disk_offset < lo {
                self.insert(Extent {
                    bytes: lo - x.disk_offset,
                    ..x
                });
            }
            if x.end() > hi {
                self.insert(x.tail(hi - x.disk_offset));
            }
            from = lo;
        }
        oldest
    }

    fn insert(&mut self, e: Extent) {
        *self.oldest.entry(e.seq).or_insert(0) += 1;
        self.extents.insert((e.disk, e.disk_offset), e);
    }

    fn remove(&mut self, key: (u32, u64)) -> Extent {
        let e = self.extents.remove(&key).expect("a dirty extent");
        self.forget(e.seq);
        e
    }

    /// One extent fewer has `seq` as its oldest write.
    fn forget(&mut self, seq: u64) {
        if let Some(n) = self.oldest.get_mut(&seq) {
            *n -= 1;
            if *n == 0 {
                self.oldest.remove(&seq);
            }
        }
    }

    /// Removes the first `most` bytes of the extent at `key` (all of it if shorter).
    fn take(&mut self, key: (u32, u64), most: u64) -> Extent {
        let mut e = self.remove(key);
        if e.bytes > most {
            self.insert(e.tail(most));
            e.bytes = most;
        }
        e
    }

    /// The next access of the flush, if there is dirty data and no access is under way.
    pub fn next_flush(&mut self) -> Option<Extent> {
        if self.flushing.is_some() {
            return None;
        }
        let (&key, _) =
            (self.extents.range(self.head..).next()).or_else(|| self.extents.iter().next())?;
        let mut access = self.take(key, self.max_access);
        while access.bytes < self.max_access {
            let key = (access.disk, access.end());
            match self.extents.get(&key) {
                Some(next) if next.file == access.file => {
                    let part = self.take(key, self.max_access - access.bytes);
                    access.bytes += part.bytes;
                    access.seq = access.seq.min(part.seq);
                }
                _ => break,
            }
        }
        self.head = (access.disk, access.end());
        self.flushing = Some(access);
        Some(access)
    }

    /// The flush access under way reached the disk.
    pub fn flushed(&mut self) -> Option<Extent> {
        let e = self.flushing.take()?;
        self.dirty -= e.bytes;
        Some(e)
    }

    /// Dirty bytes now.
    pub fn dirty(&self) -> u64 {
        self.dirty
    }

    /// Every write up to this sequence number is on disk.
    pub fn flushed_seq(&self) -> u64 {
        let dirty = self.oldest.keys().next().copied();
        let oldest = dirty.into_iter().chain(self.flushing.map(|e| e.seq)).min();
        oldest.unwrap_or(self.next_seq) - 1
    }
}

const NIL: u32 = u32::MAX;

/// One cached range: [lo, hi) of `disk`, in the LRU list.
#[derive(Clone, Copy, Debug)]
struct Node {
    disk: u32,
    lo: u64,
    hi: u64,
    prev: u32,
    next: u32,
}

/// The page size of a server's cache.
const PAGE: u64 = 4096;

/// The pages [lo, hi) touches, as the byte range [first page's start, last page's end).
fn whole_pages(lo: u64, hi: u64) -> (u64, u64) {
    (lo / PAGE * PAGE, hi.div_ceil(PAGE) * PAGE)
}

/// LRU read cache: any number of byte ranges of the server's disks, in whole pages, ranges
/// that touch joined into one. Least recently used bytes out first: the least recently used
/// range is dropped, or trimmed from its start when only part of it must go.
#[derive(Clone, Debug, Default)]
pub struct ReadCache {
    capacity: u64,
    used: u64,
    /// Node of each range, by (disk, first byte).
    ranges: BTreeMap<(u32, u64), u32>,
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

    fn touch(&mut self, i: u32) {
        self.unlink(i);
        self.push_front(i);
    }

    /// The range holding byte `at` of `disk`, or (`touching`) ending right before it.
    fn range_at(&self, disk: u32, at: u64, touching: bool) -> Option<u32> {
        let (&(d, _), &i) = self.ranges.range(..=(disk, at)).next_back()?;
        let hi = self.nodes[i as usize].hi;
        (d == disk && (hi > at || (touching && hi == at))).then_some(i)
    }

    /// Whether [lo, hi) of `disk` is cached; a hit becomes most recently used.
    pub fn lookup(&mut self, disk: u32, lo: u64, hi: u64) -> bool {
        match self.range_at(disk, lo, false) {
            Some(i) if self.nodes[i as usize].hi >= hi => {
                self.touch(i);
                true
            }
            _ => false,
        }
    }

    /// Caches [lo, hi) of `disk` in whole pages, joined with the ranges it overlaps or touches
    /// (whole pages, as a page cache holds them: accesses a hole of less than a page apart,
    /// sieving windows of interleaved ranks, become one range), as the most recently used;
    /// then evicts the least recently used bytes beyond the capacity. Returns whether [lo, hi)
    /// was held already.
    pub fn insert(&mut self, disk: u32, lo: u64, hi: u64) -> bool {
        if self.capacity == 0 || hi <= lo {
            return false;
        }
        let (lo, hi) = whole_pages(lo, hi);
        let joined = self.range_at(disk, lo, true);
        let held = joined.is_some_and(|i| self.nodes[i as usize].hi >= hi);
        let i = match joined {
            Some(i) => {
                let n = &mut self.nodes[i as usize];
                let grown = hi.saturating_sub(n.hi);
                n.hi += grown;
                self.used += grown;
                i
            }
            None => {
                let i = self.alloc(Node {
                    disk,
                    lo,
                    hi,
                    prev: NIL,
                    next: NIL,
                });
                self.ranges.insert((disk, lo), i);
                self.used += hi - lo;
                self.push_front(i);
                i
            }
        };
        self.absorb_following(i);
        self.touch(i);
        self.evict();
        held
    }

    /// Joins into range `i` the ranges that start within it or right at its end.
    fn absorb_following(&mut self, i: u32) {
        let n = self.nodes[i as usize];
        while let Some((&key, &j)) = self
            .ranges
            .range((n.disk, n.lo + 1)..=(n.disk, self.nodes[i as usize].hi))
            .next()
        {
            let m = self.nodes[j as usize];
            let hi = self.nodes[i as usize].hi;
            self.drop_range(key, j);
            if m.hi > hi {
                self.nodes[i as usize].hi = m.hi;
                self.used += m.hi - hi;
            }
        }
    }

    fn alloc(&mut self, node: Node) -> u32 {
        slab_insert(&mut self.nodes, &mut self.free, node)
    }

    fn drop_range(&mut self, key: (u32, u64), i: u32) {
        let n = self.nodes[i as usize];
        self.unlink(i);
        self.ranges.remove(&key);
        self.used -= n.hi - n.lo;
        self.free.push(i);
    }

    /// Evicts the least recently used bytes beyond the capacity, in whole pages.
    fn evict(&mut self) {
        while self.used > self.capacity && self.tail != NIL {
            let t = self.tail;
            let n = self.nodes[t as usize];
            let excess = (self.used - self.capacity).div_ceil(PAGE) * PAGE;
            if n.hi - n.lo <= excess {
                self.drop_range((n.disk, n.lo), t);
            } else {
                self.ranges.remove(&(n.disk, n.lo));
                self.ranges.insert((n.disk, n.lo + excess), t);
                self.nodes[t as usize].lo += excess;
                self.used -= excess;
            }
        }
    }

    /// Bytes cached.
    pub fn used(&self) -> u64 {
        self.used
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const K: u64 = 1024;

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

    /// (offset, bytes, oldest seq) of each flush access, completing each before the next.
    fn drain(wb: &mut WriteBack) -> Vec<(u64, u64, u64)> {
        let mut out = Vec::new();
        while let Some(e) = wb.next_flush() {
            assert_eq!(wb.flushed(), Some(e));
            out.push((e.disk_offset, e.bytes, e.seq));
        }
        out
    }

    #[test]
    fn write_back_room_and_sync_sequence() {
        const P: u64 = PAGE;
        let mut wb = WriteBack::new(100 * P, 1000 * P);
        assert!(wb.has_room(100 * P));
        assert_eq!(wb.absorb(ext(0, 40 * P)), 1);
        assert_eq!(
            wb.next_flush(),
            Some(Extent {
                seq: 1,
                ..ext(0, 40 * P)
            })
        );
        assert_eq!(wb.flushed_seq(), 0);
        // The first access is under way: the next writes wait, merged, for the next access.
        assert_eq!(wb.absorb(ext(40 * P, 30 * P)), 2);
        assert_eq!(wb.absorb(ext(70 * P, 30 * P)), 3);
        assert_eq!(wb.dirty(), 100 * P, "data being flushed still counts");
        assert!(!wb.has_room(1));
        assert_eq!(wb.flushed().map(|e| e.bytes), Some(40 * P));
        assert_eq!(wb.flushed_seq(), 1);
        assert!(wb.has_room(40 * P));
        assert_eq!(
            wb.next_flush(),
            Some(Extent {
                seq: 2,
                ..ext(40 * P, 60 * P)
            })
        );
        assert_eq!(wb.flushed_seq(), 1);
        wb.flushed();
        assert_eq!((wb.dirty(), wb.flushed_seq()), (0, 3));
        // Larger than the limit: fits only an empty cache.
        let wb = WriteBack::new(100 * P, 1000 * P);
        assert!(wb.has_room(500 * P));
    }

    /// Issue 15: pieces of 64 KiB written at 192K, 0, 128K, 64K are flushed as one 256 KiB
    /// access at 0 (the oldest write, seq 1, is in it).
    #[test]
    fn flush_merges_pieces_written_out_of_order() {
        let mut wb = WriteBack::new(1 << 30, 512 * K);
        for off in [192, 0, 128, 64] {
            wb.absorb(ext(off * K, 64 * K));
        }
        assert_eq!(drain(&mut wb), vec![(0, 256 * K, 1)]);
    }

    /// Accesses of at most max_access, in ascending order from where the last one ended, then
    /// from the lowest dirty offset (C-SCAN); data of another file is not merged in.
    #[test]
    fn flush_is_an_elevator_of_bounded_accesses() {
        let mut wb = WriteBack::new(1 << 30, 128 * K);
        for off in [256, 192, 128, 64, 0] {
            wb.absorb(ext(off * K, 64 * K));
        }
        assert_eq!(
            drain(&mut wb),
            vec![(0, 128 * K, 1), (128 * K, 128 * K, 1), (256 * K, 64 * K, 1)]
        );
        // The head is at 320K: dirty data above it goes first, then the elevator wraps.
        wb.absorb(ext(0, 64 * K));
        wb.absorb(ext(1024 * K, 64 * K));
        wb.absorb(Extent {
            file: 1,
            ..ext(1088 * K, 64 * K)
        });
        assert_eq!(
            drain(&mut wb),
            vec![(1024 * K, 64 * K, 7), (1088 * K, 64 * K, 8), (0, 64 * K, 6)]
        );
    }

    /// A write over dirty data replaces it: the dirty bytes count it once, and the flush
    /// writes the bytes once.
    #[test]
    fn overwriting_dirty_data_replaces_it() {
        const P: u64 = PAGE;
        let mut wb = WriteBack::new(1 << 30, 1000 * P);
        wb.absorb(ext(0, 100 * P));
        wb.absorb(ext(200 * P, 100 * P));
        // Covers the end of the first extent, the hole, and the start of the second.
        wb.absorb(ext(50 * P, 200 * P));
        assert_eq!(wb.dirty(), 300 * P);
        assert_eq!(drain(&mut wb), vec![(0, 300 * P, 1)]);
        // Inside one extent: split around it, rejoined.
        wb.absorb(ext(0, 300 * P));
        wb.absorb(ext(100 * P, 10 * P));
        assert_eq!(wb.dirty(), 300 * P);
        assert_eq!(drain(&mut wb), vec![(0, 300 * P, 4)]);
    }

    /// A write dirties the whole pages it touches: three 1 KiB pieces 128 bytes apart (a
    /// noncontiguous list write) are one dirty page, flushed as one access; pieces on two
    /// stripes of the file that lie back to back on the disk merge too.
    #[test]
    fn writes_dirty_whole_pages() {
        let mut wb = WriteBack::new(1 << 30, 1 << 20);
        for i in 0..3 {
            wb.absorb(ext(i * 1152, 1024));
        }
        assert_eq!(wb.dirty(), PAGE);
        assert_eq!(drain(&mut wb), vec![(0, PAGE, 1)]);
        wb.absorb(ext(0, 64 * K));
        wb.absorb(Extent {
            file_offset: 256 * K,
            ..ext(64 * K, 64 * K)
        });
        assert_eq!(drain(&mut wb), vec![(0, 128 * K, 4)]);
    }

    /// Sync's sequence: every write up to flushed_seq is on disk, whatever order the
    /// elevator flushes them in.
    #[test]
    fn flushed_seq_is_below_the_oldest_dirty_write() {
        let mut wb = WriteBack::new(1 << 30, 64 * K);
        wb.absorb(ext(512 * K, 64 * K)); // 1
        assert_eq!(wb.next_flush().map(|e| e.seq), Some(1));
        wb.absorb(ext(0, 64 * K)); // 2
        wb.absorb(ext(1024 * K, 64 * K)); // 3
        wb.flushed();
        assert_eq!(wb.flushed_seq(), 1);
        // The elevator goes on upward: write 3 before write 2.
        assert_eq!(wb.next_flush().map(|e| e.seq), Some(3));
        wb.flushed();
        assert_eq!(wb.flushed_seq(), 1);
        assert_eq!(wb.next_flush().map(|e| e.seq), Some(2));
        wb.flushed();
        assert_eq!(wb.flushed_seq(), 3);
    }

    /// Any number of ranges: each of several ranges of one or two disks hits.
    #[test]
    fn read_cache_holds_many_ranges() {
        const P: u64 = PAGE;
        let mut c = ReadCache::new(1 << 30);
        for (disk, lo) in [(0, 0), (0, 100 * P), (0, 1000 * P), (1, 0), (1, 50 * P)] {
            c.insert(disk, lo, lo + 10 * P);
        }
        for (disk, lo) in [(0, 0), (0, 100 * P), (0, 1000 * P), (1, 0), (1, 50 * P)] {
            assert!(c.lookup(disk, lo + P, lo + 10 * P), "{disk} {lo}");
        }
        assert!(!c.lookup(0, 5 * P, 15 * P), "past the end of a range");
        assert!(!c.lookup(1, 100 * P, 101 * P), "not cached");
        assert_eq!(c.used(), 50 * P);
        // A range over the hole between two joins them and what lies between.
        c.insert(0, 5 * P, 105 * P);
        assert!(c.lookup(0, 0, 110 * P));
        assert_eq!(c.used(), 140 * P);
    }

    /// Least recently used bytes go first: the LRU range is dropped, or trimmed from its start.
    #[test]
    fn read_cache_evicts_lru_bytes() {
        const P: u64 = PAGE;
        let mut c = ReadCache::new(100 * P);
        c.insert(0, 0, 50 * P);
        c.insert(0, 100 * P, 150 * P);
        assert!(c.lookup(0, 10 * P, 20 * P));
        assert!(!c.lookup(0, 40 * P, 60 * P));
        // The range at 100 is least recently used: 20 pages of it go, from its start.
        c.insert(0, 200 * P, 220 * P);
        assert_eq!(c.used(), 100 * P);
        assert!(!c.lookup(0, 100 * P, 121 * P));
        assert!(c.lookup(0, 120 * P, 150 * P));
        assert!(c.lookup(0, 0, 50 * P));
        // Now the range at 200 is least recently used: all of it goes, and 10 pages of the
        // next least recently used, at 120.
        c.insert(0, 300 * P, 330 * P);
        assert!(!c.lookup(0, 200 * P, 201 * P));
        assert!(!c.lookup(0, 125 * P, 126 * P));
        assert!(c.lookup(0, 130 * P, 150 * P));
        assert!(c.lookup(0, 0, 50 * P));
        assert_eq!(c.used(), 100 * P);
        // A range larger than the cache keeps its last pages.
        c.insert(1, 0, 1000 * P);
        assert_eq!(c.used(), 100 * P);
        assert!(c.lookup(1, 900 * P, 1000 * P));
    }

    /// Whole pages: a range caches the pages it touches, and ranges less than a page apart
    /// (sieving windows that end in a hole) become one.
    #[test]
    fn read_cache_holds_whole_pages() {
        let mut c = ReadCache::new(1 << 30);
        c.insert(0, 100, 200);
        assert!(c.lookup(0, 0, PAGE));
        c.insert(0, 10_000, 20_000);
        assert!(!c.lookup(0, 0, 20_000), "two pages apart: two ranges");
        assert!(c.lookup(0, 10_000, 20_000));
        c.insert(0, 20_500, 30_000);
        assert!(
            c.lookup(0, 10_000, 30_000),
            "less than a page apart: joined"
        );
        // insert says whether the range was held: a rewrite of cached pages, or new ones.
        assert!(c.insert(0, 12_000, 13_000));
        assert!(!c.insert(0, 30_000, 40_000));
    }
}
