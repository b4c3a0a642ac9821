//! Client I/O through the storage servers, metadata operations, Sync, and the write-back
//! flush.
//!
//! An access (one `Io` or `IoList` op) sends one request to every target (server and disk)
//! holding some of its bytes, carrying the pieces that target holds; the target serves it in
//! flow buffers of at most `max_request` bytes (storage/layout.rs). Each flow buffer goes
//! through the pipeline on its own, all at once: a write buffer: (a rendezvous round trip
//! when its request exceeds eager_limit) → data flow client → server → latency → server CPU
//! (FIFO, once per buffer) → write-back cache (a memory copy while dirty data stays under
//! dirty_limit; else it waits, in arrival order, for the flush) or, write-through, one disk
//! access → ack (latency). A read buffer: request (latency) → server CPU → read cache hit (a
//! memory copy) or one disk access → data flow server → client → latency. The server's record
//! spans from the buffer's arrival to the end of its cache or disk service. With a client
//! cache (client_cache.rs) writes are copied there and its flusher sends them as requests of
//! its own; a close or sync first waits for the file's dirty data on the node.

use super::ranks::Block;
use super::slab::slab_insert;
use super::{token, Ev, Sim, SimError};
use crate::engine::storage::cache::Extent;
use crate::engine::storage::disk::transfer_ns;
use crate::engine::storage::layout::{Piece, RequestPlan};
use crate::program::CpuWork;
use crate::program::{DiskActivity, ServerActivity};
use crate::program::{FileId, IoKind, MetaKind, Rank};

/// One flow buffer of a request in flight.
#[derive(Clone, Copy, Debug)]
pub(super) struct Req {
    pub rank: Rank,
    pub file: FileId,
    pub write: bool,
    /// The buffer as one piece: its target, its first segment's offsets, its bytes in all.
    pub piece: Piece,
    /// Its segments: `seg_count` from `seg_start` of its sender's `Requests::segments`.
    seg_start: u32,
    seg_count: u32,
    /// Whose access it belongs to: the rank's own (its rank), or a client-cache flush of its
    /// node (ranks + node: acknowledged to the node's flusher, not to the rank).
    sender: u32,
    client_flush: bool,
    arrived_ns: u64,
    /// Served by the disk (not the cache), from `disk_start` to `disk_end`.
    from_disk: bool,
    disk_start: u64,
    disk_end: u64,
}

/// The request slab.
#[derive(Debug, Default)]
pub(super) struct Requests {
    slab: Vec<Req>,
    free: Vec<u32>,
    /// Requests sent: one per target per access.
    pub sent: u64,
    /// Flow buffers the requests were served in.
    pub buffers: u64,
    /// Per sender (a rank, then each node's client-cache flusher): the segments of its access
    /// in flight (a sender has one access at a time).
    segments: Vec<Vec<Piece>>,
    /// Scratch: the plan of the access being started, a read's ranges cut at end of file.
    plan: RequestPlan,
    clipped: Vec<(u64, u64)>,
}

impl Requests {
    pub(super) fn get(&self, q: u32) -> &Req {
        &self.slab[q as usize]
    }

    fn alloc(&mut self, req: Req) -> u32 {
        self.buffers += 1;
        slab_insert(&mut self.slab, &mut self.free, req)
    }

    /// The disk-contiguous runs of buffer `req`, in order: (disk offset, bytes, file offset
    /// of the run's first segment).
    fn runs(&self, req: &Req) -> impl Iterator<Item = (u64, u64, u64)> + '_ {
        let segs = &self.segments[req.sender as usize]
            [req.seg_start as usize..(req.seg_start + req.seg_count) as usize];
        let mut i = 0;
        std::iter::from_fn(move || {
            let first = segs.get(i)?;
            let mut bytes = first.bytes;
            i += 1;
            while let Some(next) = segs.get(i) {
                if next.disk_offset != first.disk_offset + bytes {
                    break;
                }
                bytes += next.bytes;
                i += 1;
            }
            Some((first.disk_offset, bytes, first.file_offset))
        })
    }
}

impl Sim<'_> {
    /// Starts an access of rank `r` to the file ranges `ranges` (in file order); false if it
    /// has nothing to do (0 bytes).
    pub(super) fn start_io(
        &mut self,
        r: Rank,
        file: FileId,
        kind: IoKind,
        ranges: &[(u64, u64)],
    ) -> bool {
        // A Lustre client serves what it read ahead, and reads ahead (lustre_client.rs): an
        // access of one range (the generic driver's).
        let ahead;
        let ranges = match (kind, ranges) {
            (IoKind::Read, &[(offset, bytes)]) if self.lustre.is_some() => {
                match self.lustre_read_range(r, file, offset, bytes) {
                    Some(range) => {
                        ahead = [range];
                        &ahead[..]
                    }
                    None => return false,
                }
            }
            _ => ranges,
        };
        if let (IoKind::Write, Some(size)) = (kind, self.file_size[file as usize]) {
            let end = ranges.iter().map(|&(o, l)| o + l).max().unwrap_or(0);
            self.file_size[file as usize] = Some(size.max(end));
        }
        // A client cache takes a contiguous write (PVFS2's list I/O has no client cache).
        if let (IoKind::Write, true, &[(offset, bytes)]) = (kind, self.client.on(), ranges) {
            return self.cache_write(r, file, offset, bytes);
        }
        let Some(striping) = &self.striping else {
            return false;
        };
        let mut plan = std::mem::take(&mut self.reqs.plan);
        match (kind, self.file_size[file as usize]) {
            (IoKind::Read, Some(size)) => {
                let clipped = &mut self.reqs.clipped;
                clipped.clear();
                clipped.extend(ranges.iter().filter_map(|&(o, l)| {
                    let n = l.min(size.saturating_sub(o));
                    (n > 0).then_some((o, n))
                }));
                let first_asked = ranges.iter().find(|x| x.1 > 0);
                match first_asked {
                    // Entirely past the end: still asks the server holding the first byte
                    // (for the size), which reads nothing.
                    Some(&(o, _)) if clipped.is_empty() => {
                        striping.requests(file, &[(o, 1)], &mut plan);
                        plan.segments.iter_mut().for_each(|p| p.bytes = 0);
                        plan.buffers.iter_mut().for_each(|b| b.bytes = 0);
                    }
                    _ => striping.requests(file, clipped, &mut plan),
                }
            }
            _ => striping.requests(file, ranges, &mut plan),
        }
        if plan.buffers.is_empty() {
            self.reqs.plan = plan;
            return false;
        }
        self.ranks[r as usize].parts = plan.buffers.len() as u32;
        self.send_requests(r, file, kind == IoKind::Write, &plan, false);
        self.reqs.plan = plan;
        true
    }

    /// Sends the requests of `plan` for rank `r`, each flow buffer on its way; `client_flush`:
    /// the flush of its node's client cache.
    fn send_requests(
        &mut self,
        r: Rank,
        file: FileId,
        write: bool,
        plan: &RequestPlan,
        client_flush: bool,
    ) {
        // A Lustre client sends every RPC (buffer) as a request of its own.
        self.reqs.sent += if self.lustre.is_some() {
            plan.buffers.len() as u64
        } else {
            u64::from(plan.requests)
        };
        let sender = if client_flush {
            self.ranks.len() as u32 + self.ranks[r as usize].node
        } else {
            r
        };
        let segments = &mut self.reqs.segments;
        if segments.len() <= sender as usize {
            segments.resize_with(sender as usize + 1, Vec::new);
        }
        segments[sender as usize].clear();
        segments[sender as usize].extend_from_slice(&plan.segments);
        let small = self.latency(0);
        let mut i = 0;
        while i < plan.buffers.len() {
            // A request: the consecutive buffers of one target. Its data goes eagerly or after
            // a rendezvous as a whole.
            let target = (plan.buffers[i].server, plan.buffers[i].disk);
            let n = plan.buffers[i..]
                .iter()
                .take_while(|b| (b.server, b.disk) == target)
                .count();
            let request_bytes: u64 = plan.buffers[i..i + n].iter().map(|b| b.bytes).sum();
            let rendezvous = request_bytes > self.sys.network.eager_limit;
            for b in &plan.buffers[i..i + n] {
                // A buffer holds at least one segment.
                let first = plan.segments[b.start as usize];
                let q = self.reqs.alloc(Req {
                    rank: r,
                    file,
                    write,
                    piece: Piece {
                        bytes: b.bytes,
                        ..first
                    },
                    seg_start: b.start,
                    seg_count: b.count,
                    sender,
                    client_flush,
                    arrived_ns: 0,
                    from_disk: false,
                    disk_start: 0,
                    disk_end: 0,
                });
                if self.lustre.is_some() {
                    // Each buffer is one bulk RPC of its own (lustre_client.rs).
                    self.lustre_submit(q);
                    continue;
                }
                // The client stack's CPU time for the buffer (a FUSE daemon's), before it
                // goes; 0 unless the model sets it (node_cpu.rs).
                let cost = self.client_cpu_cost(b.bytes);
                let node = self.ranks[r as usize].node;
                let issuer = (!client_flush).then_some(r);
                let (_, ready) = self.node_cpu(node, issuer, self.now, cost);
                if !write {
                    self.q.push(ready + small, Ev::ReqAtServer(q));
                } else if rendezvous {
                    self.q.push(ready + 2 * small, Ev::ReqRdvReady(q));
                } else if ready > self.now {
                    self.q.push(ready, Ev::ReqRdvReady(q));
                } else {
                    self.req_send_write(q);
                }
            }
            i += n;
        }
    }

    /// Sends `bytes` of `file` at `offset` from the client cache of rank `r`'s node to the
    /// servers (client_cache.rs); returns the flow buffers sent, each acknowledged to the
    /// node's flusher.
    pub(super) fn send_flush(&mut self, r: Rank, file: FileId, offset: u64, bytes: u64) -> u32 {
        let Some(striping) = &self.striping else {
            return 0;
        };
        let mut plan = std::mem::take(&mut self.reqs.plan);
        striping.requests(file, &[(offset, bytes)], &mut plan);
        self.send_requests(r, file, true, &plan, true);
        let n = plan.buffers.len() as u32;
        self.reqs.plan = plan;
        n
    }

    /// Request `q` goes: a read's request to its server; a write's data after a rendezvous
    /// round trip above eager_limit.
    pub(super) fn req_send(&mut self, q: u32) {
        let req = self.reqs.slab[q as usize];
        let small = self.latency(0);
        if !req.write {
            self.q.push(self.now + small, Ev::ReqAtServer(q));
        } else if req.piece.bytes > self.sys.network.eager_limit {
            self.q.push(self.now + 2 * small, Ev::ReqRdvReady(q));
        } else {
            self.req_send_write(q);
        }
    }

    /// A write piece's data goes to its server.
    pub(super) fn req_send_write(&mut self, q: u32) {
        let req = self.reqs.slab[q as usize];
        let (src, dst) = (
            self.ranks[req.rank as usize].node,
            self.server_ep(req.piece.server),
        );
        self.start_flow(src, dst, req.piece.bytes, token::WRITE | q as u64);
    }

    pub(super) fn req_at_server(&mut self, q: u32) {
        let req = &mut self.reqs.slab[q as usize];
        req.arrived_ns = self.now;
        let server = req.piece.server as usize;
        let end = self.server_cpu(
            server,
            self.sys.storage.cpu_per_request_ns,
            CpuWork::Request,
        );
        self.q.push(end, Ev::ReqCpuDone(q));
    }

    pub(super) fn req_cpu_done(&mut self, q: u32) {
        let req = self.reqs.slab[q as usize];
        let p = req.piece;
        let s = p.server as usize;
        if req.write {
            let server = &self.servers[s];
            if server.write_back.write_through() {
                self.queue_on_disk(q);
            } else if server.room_waiters.is_empty() && server.write_back.has_room(p.bytes) {
                self.absorb(q);
            } else {
                self.servers[s].room_waiters.push_back(q);
            }
        } else {
            if p.bytes == 0 {
                // Past the end of the file: nothing to read.
                self.q.push(self.now, Ev::ReqServed(q));
            } else if self.cache_holds_all(&req) {
                let end = self.cache_copy_end(s, p.bytes, self.sys.storage.cache.read_copy_rate());
                self.q.push(end, Ev::ReqServed(q));
            } else {
                self.queue_on_disk(q);
            }
        }
    }

    /// Queues buffer `q` on its disk: one storage access, its disk-contiguous runs one after
    /// another (a seek between runs only when they are apart), from the first run's start to
    /// the last one's end.
    fn queue_on_disk(&mut self, q: u32) {
        let req = self.reqs.slab[q as usize];
        let p = req.piece;
        let (mut start, mut end) = (u64::MAX, 0);
        for (offset, bytes, _) in self.reqs.runs(&req) {
            let (s, e) = self.servers[p.server as usize].disks[p.disk as usize].access(
                &self.sys.storage,
                req.write,
                self.now,
                offset,
                bytes,
            );
            start = start.min(s);
            end = end.max(e);
        }
        let req = &mut self.reqs.slab[q as usize];
        req.from_disk = true;
        req.disk_start = start;
        req.disk_end = end;
        self.q.push(end, Ev::ReqServed(q));
    }

    /// Write `q` goes into its server's write-back cache: one memory copy of the buffer, its
    /// disk-contiguous runs dirty extents.
    fn absorb(&mut self, q: u32) {
        let req = self.reqs.slab[q as usize];
        let p = req.piece;
        let s = p.server as usize;
        let mut seq = 0;
        for (disk_offset, bytes, file_offset) in self.reqs.runs(&req) {
            seq = self.servers[s].write_back.absorb(Extent {
                disk: p.disk,
                disk_offset,
                bytes,
                file: req.file,
                file_offset,
                client: req.rank,
                seq: 0,
            });
        }
        let fs = &mut self.file_seq[req.file as usize];
        if fs.len() <= s {
            fs.resize(s + 1, 0);
        }
        fs[s] = seq;
        // Data the cache holds is overwritten in place, faster than new pages are filled.
        let held = self.cache_insert_all(&req);
        let c = &self.sys.storage.cache;
        let rate = if held {
            c.rewrite_copy_rate()
        } else {
            c.memory_bandwidth
        };
        let end = self.cache_copy_end(s, p.bytes, rate);
        self.q.push(end, Ev::ReqServed(q));
        self.kick_flush(p.server);
    }

    /// When a memory copy of `bytes` at `rate` on server `s` (a cache hit, an absorbed write),
    /// ready now, ends: copies are CPU work, so they take one of the server's threads.
    fn cache_copy_end(&mut self, s: usize, bytes: u64, rate: f64) -> u64 {
        let rate = self.sys.storage.cache.sized(rate, bytes);
        let ns = crate::engine::storage::disk::transfer_ns(bytes, rate).round() as u64;
        self.server_cpu(s, ns, CpuWork::Copy)
    }

    /// Whether every disk-contiguous run of buffer `req` is in its server's read cache (a hit
    /// becomes most recent).
    fn cache_holds_all(&mut self, req: &Req) -> bool {
        let server = &mut self.servers[req.piece.server as usize];
        let disk = req.piece.disk;
        self.reqs
            .runs(req)
            .all(|(offset, bytes, _)| server.read_cache.lookup(disk, offset, offset + bytes))
    }

    /// Caches every disk-contiguous run of buffer `req`; whether its server held them all
    /// already.
    fn cache_insert_all(&mut self, req: &Req) -> bool {
        let server = &mut self.servers[req.piece.server as usize];
        let disk = req.piece.disk;
        let mut held = true;
        for (offset, bytes, _) in self.reqs.runs(req) {
            held &= server.read_cache.insert(disk, offset, offset + bytes);
        }
        held
    }

    pub(super) fn req_served(&mut self, q: u32) {
        let req = self.reqs.slab[q as usize];
        let p = req.piece;
        if req.from_disk {
            self.rec.disk(&DiskActivity {
                server: p.server,
                disk: p.disk,
                func: if req.write {
                    self.f.disk_write
                } else {
                    self.f.disk_read
                },
                offset: p.disk_offset,
                bytes: p.bytes,
                start_ns: req.disk_start,
                end_ns: req.disk_end,
            });
            // Read or written through: the data is in memory now.
            self.cache_insert_all(&req);
        }
        self.rec.server(&ServerActivity {
            server: p.server,
            func: if req.write {
                self.f.server_write
            } else {
                self.f.server_read
            },
            client: req.rank,
            file: req.file,
            offset: p.file_offset,
            bytes: p.bytes,
            start_ns: req.arrived_ns,
            end_ns: self.now,
        });
        if req.write {
            let t = self.now + self.latency(0);
            self.q.push(t, Ev::ReqDone(q));
        } else {
            let (src, dst) = (self.server_ep(p.server), self.ranks[req.rank as usize].node);
            self.start_flow(src, dst, p.bytes, token::READ | q as u64);
        }
    }

    pub(super) fn req_done(&mut self, q: u32) -> Result<(), SimError> {
        if self.lustre.is_some() {
            self.lustre_rpc_done(q);
        }
        let req = self.reqs.slab[q as usize];
        self.reqs.free.push(q);
        if req.client_flush {
            self.flush_piece_done(req.rank);
            return Ok(());
        }
        self.part_done(req.rank)
    }

    /// Starts the server's next flush access (the elevator's, cache.rs), if none is under way
    /// and the flush has a reason to run: dirty data above `background_dirty` (0: any), a
    /// Sync or a writer waiting for it.
    fn kick_flush(&mut self, s: u32) {
        let server = &mut self.servers[s as usize];
        let background = self.sys.storage.cache.background_dirty;
        if background > 0
            && server.write_back.dirty() <= background
            && server.sync_waiters.is_empty()
            && server.room_waiters.is_empty()
        {
            return;
        }
        let Some(e) = server.write_back.next_flush() else {
            return;
        };
        let (ds, de) = server.disks[e.disk as usize].access(
            &self.sys.storage,
            true,
            self.now,
            e.disk_offset,
            e.bytes,
        );
        let paced =
            self.now + transfer_ns(e.bytes, self.sys.storage.cache.flush_rate).round() as u64;
        let end = de.max(paced);
        server.flush_times = (self.now, ds, de);
        self.q.push(end, Ev::FlushDone(s));
    }

    pub(super) fn flush_done(&mut self, s: u32) {
        let server = &mut self.servers[s as usize];
        let Some(e) = server.write_back.flushed() else {
            return;
        };
        let (start, ds, de) = server.flush_times;
        self.rec.disk(&DiskActivity {
            server: s,
            disk: e.disk,
            func: self.f.disk_write,
            offset: e.disk_offset,
            bytes: e.bytes,
            start_ns: ds,
            end_ns: de,
        });
        self.rec.server(&ServerActivity {
            server: s,
            func: self.f.server_flush,
            client: e.client,
            file: e.file,
            offset: e.file_offset,
            bytes: e.bytes,
            start_ns: start,
            end_ns: self.now,
        });
        // Writers waiting for room, in arrival order.
        loop {
            let server = &mut self.servers[s as usize];
            let Some(&q) = server.room_waiters.front() else {
                break;
            };
            if !server
                .write_back
                .has_room(self.reqs.slab[q as usize].piece.bytes)
            {
                break;
            }
            server.room_waiters.pop_front();
            self.absorb(q);
        }
        // Syncs whose data is now on disk.
        let flushed = self.servers[s as usize].write_back.flushed_seq();
        let released = self.servers[s as usize].sync_waiters.release(flushed);
        let small = self.latency(0);
        let commit = self.sys.storage.metadata.sync_op_ns;
        for w in &released {
            // The journal commit of the fsync, serialized with the server's metadata work.
            let end = self.servers[s as usize].meta(self.now, commit);
            self.rec.server(&ServerActivity {
                server: s,
                func: self.f.server_sync,
                client: w.rank,
                file: self.ranks[w.rank as usize].cur_file,
                offset: 0,
                bytes: 0,
                start_ns: w.arrived_ns,
                end_ns: end,
            });
            self.q.push(end + small, Ev::PartDone(w.rank));
        }
        self.kick_flush(s);
    }

    /// The server handling the metadata of `file`.
    pub(super) fn meta_server(&self, file: FileId) -> u32 {
        let st = &self.sys.storage;
        let m = file % st.metadata_servers.max(1);
        if st.metadata_on_data_servers || st.metadata_servers == 0 {
            m.min(self.servers.len() as u32 - 1)
        } else {
            st.data_servers + m
        }
    }

    /// Starts a Meta op; returns the rank's block.
    pub(super) fn start_meta(&mut self, r: Rank, file: FileId, kind: MetaKind) -> Block {
        if self.cache_holds_dirty(r, file, kind) {
            // Started again once the node's client cache has flushed the file.
            return if kind == MetaKind::Sync {
                Block::Sync
            } else {
                Block::Meta
            };
        }
        // A create makes an empty file (an O_CREAT open of a file this job wrote keeps it);
        // a remove empties it.
        let size = &mut self.file_size[file as usize];
        match kind {
            MetaKind::Create if size.is_none() => *size = Some(0),
            MetaKind::Remove => *size = Some(0),
            _ => {}
        }
        let st = &mut self.ranks[r as usize];
        st.cur_file = file;
        st.meta = kind;
        let small = self.latency(0);
        if kind == MetaKind::Sync {
            let d = self.sys.storage.data_servers;
            if d == 0 {
                self.ranks[r as usize].parts = 1;
                self.q.push(self.now + 2 * small, Ev::PartDone(r));
            } else {
                self.ranks[r as usize].parts = d;
                for s in 0..d {
                    self.q
                        .push(self.now + small, Ev::SyncAtServer { rank: r, server: s });
                }
            }
            return Block::Sync;
        }
        self.q.push(self.now + small, Ev::MetaAtServer(r));
        Block::Meta
    }

    pub(super) fn meta_at_server(&mut self, r: Rank) {
        let st = &mut self.ranks[r as usize];
        st.arrived_ns = self.now;
        let (file, kind) = (st.cur_file, st.meta);
        let m = &self.sys.storage.metadata;
        let cost = match kind {
            MetaKind::Create => m.sync_op_ns * m.create_syncs as u64,
            MetaKind::Open => m.open_ns,
            MetaKind::Close => m.close_ns,
            MetaKind::Stat => m.stat_ns,
            MetaKind::Remove => m.remove_ns,
            MetaKind::Sync => 0,
        };
        let s = self.meta_server(file);
        let end = self.servers[s as usize].meta(self.now, cost);
        self.q.push(end, Ev::MetaServed(r));
    }

    pub(super) fn meta_served(&mut self, r: Rank) {
        let st = &self.ranks[r as usize];
        let (file, kind, start) = (st.cur_file, st.meta, st.arrived_ns);
        let func = match kind {
            MetaKind::Create => self.f.server_create,
            MetaKind::Open => self.f.server_open,
            MetaKind::Close => self.f.server_close,
            MetaKind::Stat => self.f.server_stat,
            MetaKind::Remove => self.f.server_remove,
            MetaKind::Sync => self.f.server_sync,
        };
        self.rec.server(&ServerActivity {
            server: self.meta_server(file),
            func,
            client: r,
            file,
            offset: 0,
            bytes: 0,
            start_ns: start,
            end_ns: self.now,
        });
        let t = self.now + self.latency(0);
        self.q.push(t, Ev::Resume(r));
    }

    pub(super) fn sync_at_server(&mut self, r: Rank, s: u32) {
        let file = self.ranks[r as usize].cur_file;
        let target = self.file_seq[file as usize]
            .get(s as usize)
            .copied()
            .unwrap_or(0);
        let server = &mut self.servers[s as usize];
        if server.write_back.flushed_seq() >= target {
            // Data already on disk: the sync still commits the journal (a synced update, as a
            // real fsync does), serialized with the server's metadata work.
            let end = server.meta(self.now, self.sys.storage.metadata.sync_op_ns);
            self.rec.server(&ServerActivity {
                server: s,
                func: self.f.server_sync,
                client: r,
                file,
                offset: 0,
                bytes: 0,
                start_ns: self.now,
                end_ns: end,
            });
            let t = end + self.latency(0);
            self.q.push(t, Ev::PartDone(r));
        } else {
            server
                .sync_waiters
                .push(crate::engine::storage::server::SyncWaiter {
                    seq: target,
                    rank: r,
                    arrived_ns: self.now,
                });
            // Below the background threshold the flush may be idle: the sync starts it.
            self.kick_flush(s);
        }
    }
}
