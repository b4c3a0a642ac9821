//! The Lustre client of every compute node (used when `layout.kind` is lustre and the model has
//! a `[lustre]` table): one client per node, shared by the node's ranks, as the kernel's.
//!
//! An access's flow buffers (`storage/layout.rs`) are its bulk RPCs: at most
//! `max_pages_per_rpc` × 4 KiB, cut at multiples of that size in the OST object (the OSC packs
//! pages into RPCs that way). An RPC first needs an extent lock of its node covering it
//! (`locks.rs`, section (2)), then a slot of its node's connection to the OST: at most
//! `max_rpcs_in_flight` RPCs in flight per (node, OST), the others wait in order; then it goes
//! as any request (`io.rs`). Reads ahead (per open file, as Lustre's per-descriptor state): a
//! read starting where the rank's previous read of the file ended fetches `read_ahead` more
//! bytes with it, up to the end of the file; reads of bytes fetched that way cost nothing
//! more. docs/MODEL.md, "Lustre client", has the equations.

use std::collections::VecDeque;

use rustc_hash::FxHashMap;

use super::locks::{ExtentLocks, NO_LOCK};
use super::Sim;
use crate::engine::storage::layout::Piece;
use crate::model::Lustre;
use crate::program::{FileId, Rank};

/// The Lustre client's events.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum LustreEv {
    /// A lock enqueue reached its OST.
    EnqueueAtOst(u32),
    /// A lock grant reached the client that asked.
    GrantAtClient(u32),
    /// A revocation's callback reached the lock's holder.
    CallbackAtClient(u32),
    /// A lock's cancel reached its OST.
    CancelAtOst(u32),
}

/// One node's connection to one OST: RPCs in flight and those waiting for a slot.
#[derive(Clone, Debug, Default)]
struct Connection {
    in_flight: u32,
    waiting: VecDeque<u32>,
}

/// What a rank has read of a file: where its last read ended, and the range its node holds
/// from read-ahead.
#[derive(Clone, Copy, Debug, Default)]
struct ReadWindow {
    next: u64,
    lo: u64,
    hi: u64,
}

/// The Lustre clients of all nodes.
#[derive(Debug)]
pub(super) struct LustreClient {
    max_in_flight: u32,
    read_ahead: u64,
    extent_locks: bool,
    connections: FxHashMap<(u32, u32), Connection>,
    windows: FxHashMap<(Rank, FileId), ReadWindow>,
    /// Per request id: the extent lock its RPC uses (`NO_LOCK`: none).
    lock_of: Vec<u32>,
    /// Extent locks of every OST object.
    pub locks: ExtentLocks,
    /// RPCs sent.
    pub rpcs: u64,
    /// The most RPCs one connection had in flight at once.
    pub peak_in_flight: u32,
}

impl LustreClient {
    /// The client of `model`'s `[lustre]` table.
    pub(super) fn new(model: &Lustre) -> LustreClient {
        LustreClient {
            max_in_flight: model.max_rpcs_in_flight.max(1),
            read_ahead: model.read_ahead,
            extent_locks: model.extent_locks,
            connections: FxHashMap::default(),
            windows: FxHashMap::default(),
            lock_of: Vec::new(),
            locks: ExtentLocks::default(),
            rpcs: 0,
            peak_in_flight: 0,
        }
    }

    /// The part of a read of [offset, offset + bytes) by `rank` that must come from the OSTs,
    /// read-ahead included; None if its node holds all of it. Files of unknown size (not
    /// created by the job) are not read ahead: the client would read past their end.
    fn read_range(
        &mut self,
        rank: Rank,
        file: FileId,
        offset: u64,
        bytes: u64,
        size: Option<u64>,
    ) -> Option<(u64, u64)> {
        let Some(size) = size.filter(|_| self.read_ahead > 0) else {
            return Some((offset, bytes));
        };
        let end = offset + bytes;
        // The first read of a file by a rank only starts its window.
        let prev = self.windows.get(&(rank, file)).copied();
        let w = prev.unwrap_or_default();
        let held = w.lo <= offset && offset < w.hi;
        let sequential = prev.is_some() && (offset == w.next || held);
        if held && end <= w.hi {
            self.windows
                .insert((rank, file), ReadWindow { next: end, ..w });
            return None;
        }
        let from = if held { w.hi } else { offset };
        let to = if sequential {
            end.saturating_add(self.read_ahead).min(size.max(end))
        } else {
            end
        };
        let lo = if held { w.lo } else { from };
        self.windows.insert(
            (rank, file),
            ReadWindow {
                next: end,
                lo,
                hi: to,
            },
        );
        Some((from, to - from))
    }
}

impl Sim<'_> {
    /// The OST (target) holding piece `p`: disk d of server s is target d × servers + s.
    fn target_of(&self, p: &Piece) -> u32 {
        p.disk * self.sys.storage.data_servers + p.server
    }

    /// A read of `rank` through its node's client: the range to fetch from the OSTs (with
    /// read-ahead), None if the client holds it all already. Without a Lustre client, the read.
    pub(super) fn lustre_read_range(
        &mut self,
        rank: Rank,
        file: FileId,
        offset: u64,
        bytes: u64,
    ) -> Option<(u64, u64)> {
        let size = self.file_size[file as usize];
        match &mut self.lustre {
            Some(c) => c.read_range(rank, file, offset, bytes, size),
            None => Some((offset, bytes)),
        }
    }

    /// RPC `q` is ready: it takes its node's extent lock (or waits for one), then a slot.
    pub(super) fn lustre_submit(&mut self, q: u32) {
        let req = *self.reqs.get(q);
        let node = self.ranks[req.rank as usize].node;
        let target = self.target_of(&req.piece);
        let Some(client) = self.lustre.as_mut() else {
            self.req_send(q);
            return;
        };
        let range = (
            req.piece.file_offset,
            req.piece.file_offset + req.piece.bytes,
        );
        if !client.extent_locks || req.piece.bytes == 0 {
            self.lustre_rpc_ready(q, NO_LOCK);
            return;
        }
        match client
            .locks
            .covering(node, req.file, target, range, req.write)
        {
            Some(lock) => {
                client.locks.use_lock(lock);
                self.lustre_rpc_ready(q, lock);
            }
            None => self.enqueue_extent(q, req.rank, node, req.file, target, range, req.write),
        }
    }

    /// The (node, OST) connection RPC `q` goes through.
    fn connection_of(&self, q: u32) -> (u32, u32) {
        let req = self.reqs.get(q);
        (
            self.ranks[req.rank as usize].node,
            self.target_of(&req.piece),
        )
    }

    /// RPC `q` holds its lock (`NO_LOCK`: none needed): it goes when its connection has a
    /// free slot.
    pub(super) fn lustre_rpc_ready(&mut self, q: u32, lock: u32) {
        let (node, target) = self.connection_of(q);
        let Some(client) = self.lustre.as_mut() else {
            return;
        };
        if client.lock_of.len() <= q as usize {
            client.lock_of.resize(q as usize + 1, NO_LOCK);
        }
        client.lock_of[q as usize] = lock;
        let conn = client.connections.entry((node, target)).or_default();
        if conn.in_flight < client.max_in_flight {
            conn.in_flight += 1;
            client.peak_in_flight = client.peak_in_flight.max(conn.in_flight);
            client.rpcs += 1;
            self.req_send(q);
        } else {
            conn.waiting.push_back(q);
        }
    }

    /// RPC `q` is done (its reply reached the client): its slot goes to the next waiting
    /// RPC, and its lock is released (cancelled if a revocation waited for it).
    pub(super) fn lustre_rpc_done(&mut self, q: u32) {
        let (node, target) = self.connection_of(q);
        let Some(client) = self.lustre.as_mut() else {
            return;
        };
        let lock = std::mem::replace(&mut client.lock_of[q as usize], NO_LOCK);
        let conn = client
            .connections
            .get_mut(&(node, target))
            .expect("an RPC in flight has its connection");
        conn.in_flight -= 1;
        let next = conn.waiting.pop_front();
        if next.is_some() {
            conn.in_flight += 1;
            client.rpcs += 1;
        }
        let cancel = lock != NO_LOCK && client.locks.release(lock);
        if let Some(next) = next {
            self.req_send(next);
        }
        if cancel {
            self.send_cancel(lock);
        }
    }

    /// Handles one of the Lustre client's events.
    pub(super) fn lustre_event(&mut self, ev: LustreEv) {
        match ev {
            LustreEv::EnqueueAtOst(e) => self.enqueue_at_ost(e),
            LustreEv::GrantAtClient(e) => self.grant_at_client(e),
            LustreEv::CallbackAtClient(id) => self.callback_at_client(id),
            LustreEv::CancelAtOst(id) => self.cancel_at_ost(id),
        }
    }
}
