//! One storage server: a CPU (FIFO, a fixed cost per request), a metadata queue (FIFO,
//! operations serialized), its disks' queues, its write-back and read caches, and the
//! requests waiting on them. The engine (engine/io.rs) drives the request pipeline.

use std::collections::VecDeque;

use super::cache::{ReadCache, WriteBack};
use super::disk::DiskQueue;
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

/// The state of one server.
#[derive(Clone, Debug)]
pub struct Server {
    /// When each CPU thread is free (`storage.server_threads` of them).
    cpu_free_at: Vec<u64>,
    meta_free_at: u64,
    /// Disk queues by disk index.
    pub disks: Vec<DiskQueue>,
    /// Write-back cache.
    pub write_back: WriteBack,
    /// Read cache.
    pub read_cache: ReadCache,
    /// Writes (request ids) waiting for room in the write-back cache, in arrival order.
    pub room_waiters: VecDeque<u32>,
    /// Syncs waiting for the flush.
    pub sync_waiters: Vec<SyncWaiter>,
    /// The flush under way: (start, disk start, disk end).
    pub flush_times: (u64, u64, u64),
}

impl Server {
    /// A server with `disks` disks and the given caches.
    pub fn new(disks: u32, write_back: WriteBack, read_cache: ReadCache) -> Server {
        Server {
            cpu_free_at: vec![0],
            meta_free_at: 0,
            disks: vec![DiskQueue::default(); disks as usize],
            write_back,
            read_cache,
            room_waiters: VecDeque::new(),
            sync_waiters: Vec::new(),
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

    /// The same server serving up to `threads` requests at once: on its CPU and on each disk
    /// (at least 1). Metadata operations stay serialized (one journal).
    pub fn with_threads(mut self, threads: u32) -> Server {
        let n = threads.max(1);
        self.cpu_free_at = vec![0; n as usize];
        for d in &mut self.disks {
            *d = DiskQueue::with_lanes(n);
        }
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

    #[test]
    fn cpu_and_metadata_are_fifo() {
        let mut s = Server::new(1, WriteBack::new(0, 1), ReadCache::new(0));
        assert_eq!(s.cpu(0, 10), 10);
        assert_eq!(s.cpu(5, 10), 20);
        assert_eq!(s.cpu(100, 10), 110);
        assert_eq!(s.meta(0, 7), 7);
        assert_eq!(s.meta(0, 7), 14);
    }

    /// Issue 4 (accuracy): server_threads = 2 serves two requests at once, the third waits.
    #[test]
    fn two_threads_serve_two_requests_at_once() {
        let mut s = Server::new(1, WriteBack::new(0, 1), ReadCache::new(0)).with_threads(2);
        assert_eq!(s.cpu(0, 10), 10);
        assert_eq!(s.cpu(0, 10), 10);
        assert_eq!(s.cpu(0, 10), 20);
        let ssd = crate::model::Disk::Ssd {
            latency_ns: 0,
            bandwidth: 1e9,
            iops: 0.0,
        };
        let d = &mut s.disks[0];
        assert_eq!(d.submit(&ssd, 0, 0, 1000), (0, 1000));
        assert_eq!(d.submit(&ssd, 0, 1000, 1000), (0, 1000));
        assert_eq!(d.submit(&ssd, 0, 2000, 1000), (1000, 2000));
        assert_eq!(d.free_at(), 2000);
        // Metadata stays one at a time.
        assert_eq!(s.meta(0, 7), 7);
        assert_eq!(s.meta(0, 7), 14);
    }
}
