//! Client I/O through the storage servers, metadata operations, Sync, and the write-back
//! flush.
//!
//! A write piece: (a rendezvous round trip above eager_limit) → data flow client → server →
//! latency → server CPU (FIFO) → write-back cache (a memory copy while dirty data stays under
//! dirty_limit; else it waits, in arrival order, for the flush) or, write-through, the disk →
//! ack (latency). A read piece: request (latency) → server CPU → read cache hit (a memory
//! copy) or the disk → data flow server → client → latency. The server's record spans from the
//! request's arrival to the end of its cache or disk service.

use super::ranks::Block;
use super::{token, Ev, Sim, SimError};
use crate::engine::storage::cache::Extent;
use crate::engine::storage::disk::transfer_ns;
use crate::engine::storage::layout::Piece;
use crate::model::rates::Access;
use crate::program::{DiskActivity, ServerActivity};
use crate::program::{FileId, IoKind, MetaKind, Rank};

/// One request piece in flight.
#[derive(Clone, Copy, Debug)]
pub(super) struct Req {
    pub rank: Rank,
    pub file: FileId,
    pub write: bool,
    pub piece: Piece,
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
    /// Requests sent.
    pub sent: u64,
}

impl Requests {
    pub(super) fn get(&self, q: u32) -> &Req {
        &self.slab[q as usize]
    }

    fn alloc(&mut self, req: Req) -> u32 {
        self.sent += 1;
        match self.free.pop() {
            Some(q) => {
                self.slab[q as usize] = req;
                q
            }
            None => {
                self.slab.push(req);
                (self.slab.len() - 1) as u32
            }
        }
    }
}

impl Sim<'_> {
    /// Starts an Io op of rank `r`; false if it has nothing to do (0 bytes).
    pub(super) fn start_io(
        &mut self,
        r: Rank,
        file: FileId,
        kind: IoKind,
        offset: u64,
        mut bytes: u64,
    ) -> bool {
        let asked = bytes > 0;
        if let Some(size) = self.file_size[file as usize] {
            match kind {
                IoKind::Write => self.file_size[file as usize] = Some(size.max(offset + bytes)),
                IoKind::Read => bytes = bytes.min(size.saturating_sub(offset)),
            }
        }
        // A read entirely past the end still asks the server holding `offset` (for the size).
        let past_end = asked && bytes == 0;
        let Some(striping) = &self.striping else {
            return false;
        };
        let mut pieces = std::mem::take(&mut self.pieces);
        pieces.clear();
        striping.pieces(file, offset, bytes.max(u64::from(past_end)), &mut pieces);
        if past_end {
            pieces.iter_mut().for_each(|p| p.bytes = 0);
        }
        if pieces.is_empty() {
            self.pieces = pieces;
            return false;
        }
        self.ranks[r as usize].parts = pieces.len() as u32;
        let write = kind == IoKind::Write;
        let small = self.latency(0);
        for &piece in &pieces {
            let q = self.reqs.alloc(Req {
                rank: r,
                file,
                write,
                piece,
                arrived_ns: 0,
                from_disk: false,
                disk_start: 0,
                disk_end: 0,
            });
            if !write {
                self.q.push(self.now + small, Ev::ReqAtServer(q));
            } else if piece.bytes > self.sys.network.eager_limit {
                self.q.push(self.now + 2 * small, Ev::ReqRdvReady(q));
            } else {
                self.req_send_write(q);
            }
        }
        self.pieces = pieces;
        true
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
        let end = self.servers[req.piece.server as usize]
            .cpu(self.now, self.sys.storage.cpu_per_request_ns);
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
            } else if self.cache_holds(req.file, p) {
                let end = self.cache_copy_end(s, p.bytes, self.sys.storage.cache.read_copy_rate());
                self.q.push(end, Ev::ReqServed(q));
            } else {
                self.queue_on_disk(q);
            }
        }
    }

    /// Queues request `q` on its disk.
    fn queue_on_disk(&mut self, q: u32) {
        let Req {
            piece: p, write, ..
        } = self.reqs.slab[q as usize];
        let access = if write { Access::Write } else { Access::Read };
        let (start, end) = self.servers[p.server as usize].disks[p.disk as usize].submit_to(
            &self.sys.storage,
            self.now,
            access,
            p.disk_offset,
            p.bytes,
        );
        let req = &mut self.reqs.slab[q as usize];
        req.from_disk = true;
        req.disk_start = start;
        req.disk_end = end;
        self.q.push(end, Ev::ReqServed(q));
    }

    /// Write `q` goes into its server's write-back cache.
    fn absorb(&mut self, q: u32) {
        let req = self.reqs.slab[q as usize];
        let p = req.piece;
        let s = p.server as usize;
        let seq = self.servers[s].write_back.absorb(Extent {
            disk: p.disk,
            disk_offset: p.disk_offset,
            bytes: p.bytes,
            file: req.file,
            file_offset: p.file_offset,
            client: req.rank,
            seq: 0,
        });
        let fs = &mut self.file_seq[req.file as usize];
        if fs.len() <= s {
            fs.resize(s + 1, 0);
        }
        fs[s] = seq;
        // Data the cache holds is overwritten in place, faster than new pages are filled.
        let held = self.cache_insert(req.file, p);
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
        self.servers[s].cpu(self.now, ns)
    }

    /// Whether piece `p` of `file` is in its server's read cache (a hit becomes most recent).
    fn cache_holds(&mut self, file: FileId, p: Piece) -> bool {
        let Some(st) = &self.striping else {
            return false;
        };
        let stripe = st.stripe_of(p.file_offset);
        let lo = p.file_offset - stripe * st.stripe_size();
        self.servers[p.server as usize]
            .read_cache
            .lookup(file, stripe, lo, lo + p.bytes)
    }

    /// Caches piece `p` of `file`; whether its server held it already.
    fn cache_insert(&mut self, file: FileId, p: Piece) -> bool {
        let Some(st) = &self.striping else {
            return false;
        };
        let stripe = st.stripe_of(p.file_offset);
        let lo = p.file_offset - stripe * st.stripe_size();
        self.servers[p.server as usize]
            .read_cache
            .insert(file, stripe, lo, lo + p.bytes)
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
            self.cache_insert(req.file, p);
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
        let r = self.reqs.slab[q as usize].rank;
        self.reqs.free.push(q);
        self.part_done(r)
    }

    /// Starts flushing the server's oldest dirty extent, if none is being flushed.
    fn kick_flush(&mut self, s: u32) {
        let server = &mut self.servers[s as usize];
        let Some(e) = server.write_back.next_flush() else {
            return;
        };
        let (ds, de) = server.disks[e.disk as usize].submit_to(
            &self.sys.storage,
            self.now,
            Access::Write,
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
        let mut waiters = std::mem::take(&mut self.servers[s as usize].sync_waiters);
        let small = self.latency(0);
        let commit = self.sys.storage.metadata.sync_op_ns;
        waiters.retain(|w| {
            if w.seq > flushed {
                return true;
            }
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
            false
        });
        self.servers[s as usize].sync_waiters = waiters;
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
        }
    }
}
