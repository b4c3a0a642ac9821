//! One storage server: a CPU (FIFO, a fixed cost per request), a metadata queue (FIFO,
//! operations serialized), its disks' volumes, its write-back and read caches, and the
//! requests waiting on them. The engine (engine/io.rs) drives the request pipeline.

use std::collections::VecDeque;

use super::cache::{ReadCache, WriteBack};
use super::disk::VolumeQueue;
use crate::program::Rank;

/// A Sync waiting for the flush to reach `seq` on this server.
#[derive(Clone, Copy, Debug)]
pub struct SyncWaiter {
    /// Flushed sequence number to wait for.
    pub seq: u64,
    /// The syncing rank.
    pub rank: Rank,
    /// When the request reached the server.
    pub arrived_ns: u64,
}

/// The Syncs waiting for the flush on one server, in arrival order, and the least sequence
/// number any of them waits for: a flush that does not reach it releases none, so the
/// thousands of syncs of a large job waiting for the last flush are not scanned at every flush.
#[derive(Clone, Debug)]
pub struct SyncWaiters {
    list: Vec<SyncWaiter>,
    /// The least `seq` in `list` (u64::MAX when empty).
    least: u64,
}

impl Default for SyncWaiters {
    fn default() -> SyncWaiters {
        SyncWaiters {
            list: Vec::new(),
            least: u64::MAX,
        }
    }
}

impl SyncWaiters {
    /// Whether no Sync waits.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// A Sync starts waiting.
    pub fn push(&mut self, w: SyncWaiter) {
        self.least = self.least.min(w.seq);
        self.list.push(w);
    }

    /// Takes out the waiters whose data is on disk once the flush reached `flushed`, in
    /// arrival order.
    pub fn release(&mut self, flushed: u64) -> Vec<SyncWaiter> {
        let mut out = Vec::new();
        if flushed < self.least {
            return out;
        }
        let mut least = u64::MAX;
        self.list.retain(|w| {
            if w.seq > flushed {
                least = least.min(w.seq);
                return true;
            }
            out.push(*w);
            false
        });
        self.least = least;
        out
    }
}

/// The state of one server.
#[derive(Clone, Debug)]
pub struct Server {
    /// When each CPU thread is free (`storage.server_threads` of them).
    cpu_free_at: Vec<u64>,
    meta_free_at: u64,
    /// Volumes by disk index.
    pub disks: Vec<VolumeQueue>,
    /// Write-back cache.
    pub write_back: WriteBack,
    /// Read cache.
    pub read_cache: ReadCache,
    /// Writes (request ids) waiting for room in the write-back cache, in arrival order.
    pub room_waiters: VecDeque<u32>,
    /// Syncs waiting for the flush.
    pub sync_waiters: SyncWaiters,
    /// The flush under way: (start, disk start, disk end).
    pub flush_times: (u64, u64, u64),
}

impl Server {
    /// A server with `disks` disks, each on a volume like `volume`, and the given caches.
    pub fn new(
        disks: u32,
        volume: VolumeQueue,
        write_back: WriteBack,
        read_cache: ReadCache,
    ) -> Server {
        Server {
            cpu_free_at: vec![0],
            meta_free_at: 0,
            disks: vec![volume; disks as usize],
            write_back,
            read_cache,
            room_waiters: VecDeque::new(),
            sync_waiters: SyncWaiters::default(),
            flush_times: (0, 0, 0),
        }
    }

    /// A request needing `cost` ns of CPU arrives at `now`: when its CPU time ends (one CPU,
    /// first come first served).
    pub fn cpu(&mut self, now: u64, cost: u64) -> u64 {
        let t = super::disk::earliest(&self.cpu_free_at);
        let end = now.max(self.cpu_free_at[t]) + cost;
        self.cpu_free_at[t] = end;
        end
    }

    /// When its CPU thread free first is free.
    pub fn cpu_free(&self) -> u64 {
        self.cpu_free_at[super::disk::earliest(&self.cpu_free_at)]
    }

    /// The same server serving up to `threads` requests at once on its CPU (at least 1; its
    /// disks' lanes come with their volume). Metadata operations stay serialized (one journal).
    pub fn with_threads(mut self, threads: u32) -> Server {
        self.cpu_free_at = vec![0; threads.max(1) as usize];
        self
    }

    /// A metadata operation of `cost` ns arrives at `now`: when it ends (serialized).
    pub fn meta(&mut self, now: u64, cost: u64) -> u64 {
        let end = now.max(self.meta_free_at) + cost;
        self.meta_free_at = end;
        end
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server() -> Server {
        Server::new(
            1,
            VolumeQueue::default(),
            WriteBack::new(0, 1),
            ReadCache::new(0),
        )
    }

    /// A flush releases the syncs waiting for no more than it reached, in arrival order; the
    /// others wait on (those of another file included).
    #[test]
    fn syncs_released_in_arrival_order_once_flushed() {
        let mut w = SyncWaiters::default();
        let waiter = |seq, rank| SyncWaiter {
            seq,
            rank,
            arrived_ns: rank as u64,
        };
        assert!(w.release(u64::MAX).is_empty());
        for (seq, rank) in [(9, 0), (4, 1), (7, 2), (4, 3)] {
            w.push(waiter(seq, rank));
        }
        let ranks = |v: Vec<SyncWaiter>| v.iter().map(|x| x.rank).collect::<Vec<_>>();
        assert!(w.release(3).is_empty());
        assert_eq!(ranks(w.release(7)), vec![1, 2, 3]);
        assert!(w.release(8).is_empty());
        w.push(waiter(5, 4));
        assert_eq!(ranks(w.release(9)), vec![0, 4]);
        assert!(w.release(u64::MAX).is_empty());
    }

    #[test]
    fn cpu_and_metadata_are_fifo() {
        let mut s = server();
        assert_eq!(s.cpu(0, 10), 10);
        assert_eq!(s.cpu(5, 10), 20);
        assert_eq!(s.cpu(100, 10), 110);
        assert_eq!(s.meta(0, 7), 7);
        assert_eq!(s.meta(0, 7), 14);
    }

    /// Issue 4 (accuracy): server_threads = 2 serves two requests at once, the third waits.
    #[test]
    fn two_threads_serve_two_requests_at_once() {
        let mut st = crate::engine::testutil::system().storage;
        st.server_threads = 2;
        let mut s = Server {
            disks: vec![VolumeQueue::of(&st)],
            ..server()
        }
        .with_threads(2);
        assert_eq!(s.cpu(0, 10), 10);
        assert_eq!(s.cpu(0, 10), 10);
        assert_eq!(s.cpu(0, 10), 20);
        // 1000 B at 100 MB/s: 10 us.
        let d = &mut s.disks[0];
        assert_eq!(d.access(&st, true, 0, 0, 1000), (0, 10_000));
        assert_eq!(d.access(&st, true, 0, 1000, 1000), (0, 10_000));
        assert_eq!(d.access(&st, true, 0, 2000, 1000), (10_000, 20_000));
        // Metadata stays one at a time.
        assert_eq!(s.meta(0, 7), 7);
        assert_eq!(s.meta(0, 7), 14);
    }
}
