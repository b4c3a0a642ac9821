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
    cpu_free_at: u64,
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
            cpu_free_at: 0,
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
        let end = now.max(self.cpu_free_at) + cost;
        self.cpu_free_at = end;
        end
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
}
