//! The client write-back cache of each compute node (model table `[client_cache]`,
//! docs/MODEL.md "Client cache"): a write is a memory copy while the node's dirty data stays
//! under the limit; the node's flusher sends the dirty data to the servers in write order, one
//! chunk at a time, at most at `flush_rate`; a close or sync waits until its file's dirty data
//! on the node is on the servers; a writer beyond the limit waits for room (memory pressure).
//!
//! Hooks elsewhere: `io.rs` sends writes here (`start_io`), flush requests come back here when
//! acknowledged (`req_done`), and a Close or Sync asks here first (`start_meta`).

use std::collections::VecDeque;

use rustc_hash::FxHashMap;

use super::queue::Ev;
use super::Sim;
use crate::engine::storage::disk::transfer_ns;
use crate::model::System;
use crate::program::{FileId, MetaKind, Rank};

/// Dirty data of one write, not yet sent to the servers.
#[derive(Clone, Copy, Debug)]
struct Dirty {
    file: FileId,
    offset: u64,
    bytes: u64,
    /// The writer (the servers' records name it as the client).
    rank: Rank,
    /// Write order on the node, from 1.
    seq: u64,
    /// When the copy into the cache ends: the flusher takes it from then on.
    ready_ns: u64,
}

/// The chunk a node's flusher has in flight.
#[derive(Clone, Copy, Debug)]
struct Chunk {
    bytes: u64,
    /// Request pieces not yet acknowledged.
    pieces_left: u32,
    /// flush_rate's pacing: the next chunk starts no earlier.
    paced_ns: u64,
    /// The last write this chunk completes (0: it ends inside a write).
    completes_seq: u64,
}

/// A close or sync waiting for its file's dirty data.
#[derive(Clone, Copy, Debug)]
struct FileWaiter {
    rank: Rank,
    file: FileId,
    kind: MetaKind,
    seq: u64,
}

/// One node's cache.
#[derive(Debug, Default)]
struct NodeCache {
    /// Bytes written into the cache and not yet acknowledged by the servers.
    dirty: u64,
    /// Dirty data not yet sent, in write order.
    queue: VecDeque<Dirty>,
    /// Writes absorbed so far (the last seq given).
    written_seq: u64,
    /// Every write up to this seq is on the servers.
    flushed_seq: u64,
    /// Per file, the seq of its last write on this node not yet known to be flushed.
    last_seq: FxHashMap<FileId, u64>,
    /// Writers waiting for room, in arrival order.
    room_waiters: VecDeque<Dirty>,
    file_waiters: Vec<FileWaiter>,
    in_flight: Option<Chunk>,
    /// The earliest flusher wake-up already queued.
    wake_ns: Option<u64>,
}

impl NodeCache {
    /// A write of `bytes` fits: under the limit, or into an empty cache (a write larger than
    /// the limit is taken whole once nothing else is dirty).
    fn has_room(&self, bytes: u64, limit: u64) -> bool {
        self.dirty == 0 || self.dirty + bytes <= limit
    }
}

/// Every node's client cache, and the model's parameters.
#[derive(Debug, Default)]
pub(super) struct ClientCaches {
    /// Dirty bytes at which a node's writers wait; 0 = no client cache.
    limit: u64,
    copy_rate: f64,
    /// 0 = not paced.
    flush_rate: f64,
    chunk: u64,
    nodes: Vec<NodeCache>,
}

impl ClientCaches {
    /// The caches of `nodes` compute nodes on `sys` (none when the model has no client cache).
    pub(super) fn new(sys: &System, nodes: usize) -> ClientCaches {
        let c = &sys.client_cache;
        if !c.on() {
            return ClientCaches::default();
        }
        ClientCaches {
            limit: c.limit().max(1),
            copy_rate: if c.memory_bandwidth > 0.0 {
                c.memory_bandwidth
            } else {
                sys.storage.cache.memory_bandwidth
            },
            flush_rate: c.flush_rate,
            chunk: c.flush_chunk,
            nodes: (0..nodes).map(|_| NodeCache::default()).collect(),
        }
    }

    /// Whether writes go through the client cache.
    pub(super) fn on(&self) -> bool {
        self.limit > 0
    }
}

impl Sim<'_> {
    /// A write of rank `r` goes into its node's cache (the `start_io` hook): a memory copy now
    /// if there is room, else after the flush has made room. False if it has nothing to do.
    pub(super) fn cache_write(&mut self, r: Rank, file: FileId, offset: u64, bytes: u64) -> bool {
        if bytes == 0 {
            return false;
        }
        let node = self.ranks[r as usize].node as usize;
        let w = Dirty {
            file,
            offset,
            bytes,
            rank: r,
            seq: 0,
            ready_ns: 0,
        };
        let cc = &mut self.client;
        let c = &mut cc.nodes[node];
        if c.room_waiters.is_empty() && c.has_room(bytes, cc.limit) {
            self.cache_absorb(node, w);
        } else {
            c.room_waiters.push_back(w);
        }
        true
    }

    /// Copies write `w` into the cache of `node`; the writer resumes when the copy ends.
    fn cache_absorb(&mut self, node: usize, mut w: Dirty) {
        let cc = &mut self.client;
        let end = self.now + transfer_ns(w.bytes, cc.copy_rate).round() as u64;
        let c = &mut cc.nodes[node];
        c.dirty += w.bytes;
        c.written_seq += 1;
        w.seq = c.written_seq;
        w.ready_ns = end;
        c.last_seq.insert(w.file, w.seq);
        c.queue.push_back(w);
        self.q.push(end, Ev::Resume(w.rank));
        if c.in_flight.is_none() {
            self.wake_flusher(node, end);
        }
    }

    /// Whether a Close or Sync of rank `r` on `file` must first wait for the file's dirty data
    /// on the rank's node (the `start_meta` hook); if so, it is started once that is flushed.
    pub(super) fn cache_holds_dirty(&mut self, r: Rank, file: FileId, kind: MetaKind) -> bool {
        if !self.client.on() || !matches!(kind, MetaKind::Close | MetaKind::Sync) {
            return false;
        }
        let node = self.ranks[r as usize].node as usize;
        let c = &mut self.client.nodes[node];
        let Some(&seq) = c.last_seq.get(&file) else {
            return false;
        };
        if seq <= c.flushed_seq {
            c.last_seq.remove(&file);
            return false;
        }
        c.file_waiters.push(FileWaiter {
            rank: r,
            file,
            kind,
            seq,
        });
        true
    }

    /// Queues a flusher wake-up of `node` at `at` unless one is queued no later.
    fn wake_flusher(&mut self, node: usize, at: u64) {
        let c = &mut self.client.nodes[node];
        if c.wake_ns.is_some_and(|w| w <= at) {
            return;
        }
        c.wake_ns = Some(at);
        self.q.push(at, Ev::ClientFlush(node as u32));
    }

    /// A piece of a flush request of rank `r`'s node was acknowledged (the `req_done` hook).
    pub(super) fn flush_piece_done(&mut self, r: Rank) {
        let node = self.ranks[r as usize].node as usize;
        let Some(ch) = self.client.nodes[node].in_flight.as_mut() else {
            return;
        };
        ch.pieces_left -= 1;
        if ch.pieces_left == 0 {
            let at = self.now.max(ch.paced_ns);
            self.wake_flusher(node, at);
        }
    }

    /// The flusher of `node` wakes up: it finishes the chunk in flight when every piece is
    /// acknowledged and its pacing time has passed, then sends the next.
    pub(super) fn client_flush(&mut self, node: u32) {
        let node = node as usize;
        let c = &mut self.client.nodes[node];
        if c.wake_ns.is_some_and(|w| w <= self.now) {
            c.wake_ns = None;
        }
        if let Some(ch) = c.in_flight {
            if ch.pieces_left > 0 {
                return; // the last acknowledgement wakes it
            }
            if self.now < ch.paced_ns {
                self.wake_flusher(node, ch.paced_ns);
                return;
            }
            c.in_flight = None;
            c.dirty -= ch.bytes;
            c.flushed_seq = c.flushed_seq.max(ch.completes_seq);
            self.admit_waiting_writers(node);
            self.release_file_waiters(node);
        }
        self.send_chunk(node);
    }

    /// Writers waiting for room, in arrival order, while they fit.
    fn admit_waiting_writers(&mut self, node: usize) {
        loop {
            let cc = &mut self.client;
            let c = &mut cc.nodes[node];
            match c.room_waiters.front() {
                Some(w) if c.has_room(w.bytes, cc.limit) => {}
                _ => return,
            }
            let Some(w) = c.room_waiters.pop_front() else {
                return;
            };
            self.cache_absorb(node, w);
        }
    }

    /// Closes and syncs whose file's data is now on the servers go on to the servers.
    fn release_file_waiters(&mut self, node: usize) {
        let c = &mut self.client.nodes[node];
        let flushed = c.flushed_seq;
        if c.file_waiters.iter().all(|w| w.seq > flushed) {
            return;
        }
        let mut waiters = std::mem::take(&mut c.file_waiters);
        waiters.retain(|w| {
            if w.seq > flushed {
                return true;
            }
            // Its own Block (Meta or Sync) is already set; start_meta checks the cache again.
            self.start_meta(w.rank, w.file, w.kind);
            false
        });
        let c = &mut self.client.nodes[node];
        waiters.append(&mut c.file_waiters);
        c.file_waiters = waiters;
    }

    /// Sends the next chunk of `node`'s dirty data: from the oldest write on, continuing while
    /// the next write follows on in the same file and is copied, up to the chunk size.
    fn send_chunk(&mut self, node: usize) {
        let cc = &mut self.client;
        let max = cc.chunk;
        let rate = cc.flush_rate;
        let c = &mut cc.nodes[node];
        if c.in_flight.is_some() {
            return;
        }
        let Some(front) = c.queue.front() else {
            return;
        };
        if front.ready_ns > self.now {
            let at = front.ready_ns;
            self.wake_flusher(node, at);
            return;
        }
        let (file, offset, rank) = (front.file, front.offset, front.rank);
        let mut bytes = 0;
        let mut completes_seq = 0;
        while let Some(w) = c.queue.front_mut() {
            let follows = w.file == file && w.offset == offset + bytes;
            if bytes == max || !follows || w.ready_ns > self.now {
                break;
            }
            let take = w.bytes.min(max - bytes);
            bytes += take;
            w.offset += take;
            w.bytes -= take;
            if w.bytes == 0 {
                completes_seq = w.seq;
                c.queue.pop_front();
            }
        }
        let paced_ns = if rate > 0.0 {
            self.now + transfer_ns(bytes, rate).round() as u64
        } else {
            self.now
        };
        let n = self.send_flush(rank, file, offset, bytes);
        self.client.nodes[node].in_flight = Some(Chunk {
            bytes,
            pieces_left: n,
            paced_ns,
            completes_seq,
        });
        if n == 0 {
            self.wake_flusher(node, paced_ns);
        }
    }
}
