//! Byte-range locks. (1) fcntl locks per file (ROMIO's data-sieving locks), kept by the file's
//! metadata server: a Lock is granted when no other rank holds an overlapping range and no
//! earlier waiter wants an overlapping one (first come, first served among conflicting
//! requests; disjoint ranges go in parallel). Lock and Unlock each cost a round trip to the
//! server. A zero length means "to the end of the file", as fcntl's.
//! (2) Lustre's extent locks (LDLM) per OST object, held by client nodes and used by the
//! Lustre client (`lustre_client.rs`): an enqueue is a round trip to the OST; a grant is
//! expanded to the widest range no other node's lock (granted or waiting) blocks, so a lone
//! writer locks the whole object once; a conflicting enqueue revokes the holders' locks: a
//! callback to each holder (one latency), which cancels (one latency back) once the RPCs it
//! sent under the lock (its dirty pages) are done. Reads take shared locks, writes
//! exclusive ones; a node's own locks never conflict with each other.

use std::collections::VecDeque;

use rustc_hash::FxHashMap;

use super::lustre_client::LustreEv;
use super::slab::slab_insert;
use super::{Ev, Sim, SimError};
use crate::program::{FileId, Rank, ServerActivity};

#[derive(Clone, Copy, Debug)]
struct Held {
    rank: Rank,
    lo: u64,
    hi: u64,
}

#[derive(Clone, Copy, Debug)]
struct Waiter {
    rank: Rank,
    lo: u64,
    hi: u64,
    arrived_ns: u64,
}

#[derive(Clone, Debug, Default)]
struct FileLocks {
    held: Vec<Held>,
    waiters: VecDeque<Waiter>,
}

/// The lock tables of every file.
#[derive(Clone, Debug, Default)]
pub(super) struct Locks {
    files: Vec<FileLocks>,
}

impl Locks {
    pub(super) fn new(files: usize) -> Locks {
        Locks {
            files: vec![FileLocks::default(); files],
        }
    }
}

fn overlaps(a: (u64, u64), b: (u64, u64)) -> bool {
    a.0 < b.1 && b.0 < a.1
}

/// [offset, offset + bytes), a zero length reaching the end of the file.
fn range(offset: u64, bytes: u64) -> (u64, u64) {
    if bytes == 0 {
        (offset, u64::MAX)
    } else {
        (offset, offset.saturating_add(bytes))
    }
}

impl FileLocks {
    fn conflicts(&self, rank: Rank, r: (u64, u64), waiters_before: usize) -> bool {
        self.held
            .iter()
            .any(|h| h.rank != rank && overlaps((h.lo, h.hi), r))
            || self
                .waiters
                .iter()
                .take(waiters_before)
                .any(|w| w.rank != rank && overlaps((w.lo, w.hi), r))
    }
}

impl Sim<'_> {
    pub(super) fn start_lock(&mut self, r: Rank, file: FileId, offset: u64, bytes: u64) {
        let st = &mut self.ranks[r as usize];
        st.cur_file = file;
        st.lock = range(offset, bytes);
        let t = self.now + self.latency(0);
        self.q.push(t, Ev::LockAtServer(r));
    }

    pub(super) fn start_unlock(&mut self, r: Rank, file: FileId, offset: u64, bytes: u64) {
        let st = &mut self.ranks[r as usize];
        st.cur_file = file;
        st.lock = range(offset, bytes);
        let t = self.now + self.latency(0);
        self.q.push(t, Ev::UnlockAtServer(r));
    }

    pub(super) fn lock_at_server(&mut self, r: Rank) {
        let (file, lock) = (self.ranks[r as usize].cur_file, self.ranks[r as usize].lock);
        let fl = &mut self.locks.files[file as usize];
        let n = fl.waiters.len();
        if fl.conflicts(r, lock, n) {
            fl.waiters.push_back(Waiter {
                rank: r,
                lo: lock.0,
                hi: lock.1,
                arrived_ns: self.now,
            });
        } else {
            self.grant(
                file,
                Waiter {
                    rank: r,
                    lo: lock.0,
                    hi: lock.1,
                    arrived_ns: self.now,
                },
            );
        }
    }

    fn grant(&mut self, file: FileId, w: Waiter) {
        self.locks.files[file as usize].held.push(Held {
            rank: w.rank,
            lo: w.lo,
            hi: w.hi,
        });
        self.rec.server(&ServerActivity {
            server: self.meta_server(file),
            func: self.f.server_lock,
            client: w.rank,
            file,
            offset: w.lo,
            bytes: w.hi.saturating_sub(w.lo),
            start_ns: w.arrived_ns,
            end_ns: self.now,
        });
        let t = self.now + self.latency(0);
        self.q.push(t, Ev::Resume(w.rank));
    }

    pub(super) fn unlock_at_server(&mut self, r: Rank) -> Result<(), SimError> {
        let (file, lock) = (self.ranks[r as usize].cur_file, self.ranks[r as usize].lock);
        let fl = &mut self.locks.files[file as usize];
        let Some(i) = fl
            .held
            .iter()
            .position(|h| h.rank == r && (h.lo, h.hi) == lock)
        else {
            let op = self.ranks[r as usize].blocked_op;
            let bytes = if lock.1 == u64::MAX {
                0
            } else {
                lock.1 - lock.0
            };
            return Err(SimError::NotLocked {
                rank: r,
                op,
                file,
                offset: lock.0,
                bytes,
            });
        };
        fl.held.swap_remove(i);
        // Grant, in order, every waiter that no longer conflicts.
        let mut k = 0;
        while k < self.locks.files[file as usize].waiters.len() {
            let fl = &mut self.locks.files[file as usize];
            let w = fl.waiters[k];
            if fl.conflicts(w.rank, (w.lo, w.hi), k) {
                k += 1;
                continue;
            }
            fl.waiters.remove(k);
            self.grant(file, w);
        }
        let t = self.now + self.latency(0);
        self.q.push(t, Ev::Resume(r));
        Ok(())
    }

    /// Ranks holding a lock overlapping `lock` on `file` other than `rank` (deadlock reports).
    pub(super) fn lock_holders(&self, file: FileId, rank: Rank, lock: (u64, u64)) -> String {
        let v: Vec<String> = self.locks.files[file as usize]
            .held
            .iter()
            .filter(|h| h.rank != rank && overlaps((h.lo, h.hi), lock))
            .map(|h| h.rank.to_string())
            .collect();
        if v.is_empty() {
            "none (an earlier waiter goes first)".to_string()
        } else {
            v.join(", ")
        }
    }
}

/// No extent lock.
pub(super) const NO_LOCK: u32 = u32::MAX;

/// One extent lock of a client node on an OST object; ranges are file offsets.
#[derive(Clone, Copy, Debug)]
struct ExtentLock {
    node: u32,
    file: FileId,
    target: u32,
    lo: u64,
    hi: u64,
    /// Exclusive (write) or shared (read).
    write: bool,
    /// RPCs sent or queued under it and not yet done: what a revocation waits for.
    users: u32,
    /// Being revoked: no new RPC may use it.
    revoking: bool,
    /// The revocation's callback reached the holder.
    called: bool,
}

/// A client's lock request, and the request pieces waiting for it.
#[derive(Clone, Debug, Default)]
struct Enqueue {
    node: u32,
    file: FileId,
    target: u32,
    lo: u64,
    hi: u64,
    write: bool,
    rank: Rank,
    arrived_ns: u64,
    pieces: Vec<u32>,
    /// The lock it was granted.
    lock: u32,
}

/// Granted lock ids and waiting enqueue ids of one OST object.
#[derive(Clone, Debug, Default)]
struct ObjectLocks {
    granted: Vec<u32>,
    waiting: VecDeque<u32>,
}

/// Lustre's extent locks of every OST object, and the clients' enqueues in progress.
#[derive(Clone, Debug, Default)]
pub(super) struct ExtentLocks {
    locks: Vec<ExtentLock>,
    free_locks: Vec<u32>,
    enqueues: Vec<Enqueue>,
    free_enqueues: Vec<u32>,
    /// Per (file, target): the object's locks.
    objects: FxHashMap<(FileId, u32), ObjectLocks>,
    /// Per (node, file, target): the enqueue that node has in flight for the object.
    pending: FxHashMap<(u32, FileId, u32), u32>,
    /// Enqueues sent.
    pub enqueues_sent: u64,
    /// Locks revoked because another node wanted a conflicting range.
    pub revocations: u64,
}

/// Whether two locks (or a lock and a request) of different nodes conflict: overlapping
/// ranges, at least one of them exclusive.
fn blocks(a: (u32, u64, u64, bool), b: (u32, u64, u64, bool)) -> bool {
    a.0 != b.0 && (a.3 || b.3) && overlaps((a.1, a.2), (b.1, b.2))
}

impl ExtentLocks {
    /// A lock of `node` on (file, target) that `[lo, hi)` can be written (or read) under
    /// without asking the OST.
    pub(super) fn covering(
        &self,
        node: u32,
        file: FileId,
        target: u32,
        (lo, hi): (u64, u64),
        write: bool,
    ) -> Option<u32> {
        let obj = self.objects.get(&(file, target))?;
        obj.granted.iter().copied().find(|&id| {
            let l = &self.locks[id as usize];
            l.node == node && !l.revoking && l.lo <= lo && hi <= l.hi && (l.write || !write)
        })
    }

    /// One more RPC under lock `id`.
    pub(super) fn use_lock(&mut self, id: u32) {
        self.locks[id as usize].users += 1;
    }

    /// An RPC under lock `id` is done; true if the lock's holder must now cancel it (its
    /// callback came and nothing is left in flight under it).
    pub(super) fn release(&mut self, id: u32) -> bool {
        let l = &mut self.locks[id as usize];
        l.users -= 1;
        l.users == 0 && l.called
    }

    fn key(&self, id: u32) -> (u32, u64, u64, bool) {
        let l = &self.locks[id as usize];
        (l.node, l.lo, l.hi, l.write)
    }

    fn enqueue_key(&self, e: u32) -> (u32, u64, u64, bool) {
        let q = &self.enqueues[e as usize];
        (q.node, q.lo, q.hi, q.write)
    }

    /// Piece `q` waits for a lock of `node` on (file, target) covering `[lo, hi)`: joins the
    /// node's enqueue in flight for that object, or starts one (Some: its id, to send).
    #[allow(clippy::too_many_arguments)]
    fn wait_for_lock(
        &mut self,
        q: u32,
        rank: Rank,
        node: u32,
        file: FileId,
        target: u32,
        (lo, hi): (u64, u64),
        write: bool,
    ) -> Option<u32> {
        if let Some(&e) = self.pending.get(&(node, file, target)) {
            self.enqueues[e as usize].pieces.push(q);
            return None;
        }
        let enq = Enqueue {
            node,
            file,
            target,
            lo,
            hi,
            write,
            rank,
            arrived_ns: 0,
            pieces: vec![q],
            lock: NO_LOCK,
        };
        let e = slab_insert(&mut self.enqueues, &mut self.free_enqueues, enq);
        self.pending.insert((node, file, target), e);
        self.enqueues_sent += 1;
        Some(e)
    }

    /// The widest range around enqueue `e`'s that no other node's granted lock or waiting
    /// enqueue blocks (LDLM's extent policy): a lone client locks the whole object.
    fn expanded(&self, obj: &ObjectLocks, e: u32) -> (u64, u64) {
        let me = self.enqueue_key(e);
        let (mut lo, mut hi) = (0, u64::MAX);
        let others = obj.granted.iter().map(|&id| self.key(id)).chain(
            obj.waiting
                .iter()
                .filter(|&&w| w != e)
                .map(|&w| self.enqueue_key(w)),
        );
        for o in others {
            if o.0 == me.0 || !(o.3 || me.3) {
                continue;
            }
            if o.2 <= me.1 {
                lo = lo.max(o.2);
            } else if o.1 >= me.2 {
                hi = hi.min(o.1);
            }
        }
        (lo, hi)
    }
}

impl Sim<'_> {
    fn extents(&mut self) -> &mut ExtentLocks {
        &mut self
            .lustre
            .as_mut()
            .expect("extent locks belong to the Lustre client")
            .locks
    }

    /// Piece `q` of `rank` (on `node`) needs a lock on (file, target) over `range`: it waits
    /// for an enqueue, sent now (it reaches the OST one latency later) unless one is in flight.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn enqueue_extent(
        &mut self,
        q: u32,
        rank: Rank,
        node: u32,
        file: FileId,
        target: u32,
        range: (u64, u64),
        write: bool,
    ) {
        if let Some(e) = self
            .extents()
            .wait_for_lock(q, rank, node, file, target, range, write)
        {
            let t = self.now + self.latency(0);
            self.q.push(t, Ev::Lustre(LustreEv::EnqueueAtOst(e)));
        }
    }

    /// An enqueue reached its OST: it waits behind the object's conflicting locks and
    /// earlier enqueues (revoking the locks), or is granted.
    pub(super) fn enqueue_at_ost(&mut self, e: u32) {
        let now = self.now;
        let ext = self.extents();
        let enq = &mut ext.enqueues[e as usize];
        enq.arrived_ns = now;
        let key = (enq.file, enq.target);
        ext.objects.entry(key).or_default().waiting.push_back(e);
        self.serve_object(key);
    }

    /// Grants, in order, every waiting enqueue of the object that no other node's lock or
    /// earlier enqueue blocks; revokes the granted locks that block the others.
    fn serve_object(&mut self, key: (FileId, u32)) {
        let small = self.latency(0);
        let servers = self.sys.storage.data_servers.max(1);
        let Some(client) = self.lustre.as_mut() else {
            return;
        };
        let ext = &mut client.locks;
        let mut k = 0;
        loop {
            let Some(obj) = ext.objects.get(&key) else {
                return;
            };
            let Some(&e) = obj.waiting.get(k) else {
                return;
            };
            let me = ext.enqueue_key(e);
            let behind = obj
                .waiting
                .iter()
                .take(k)
                .any(|&w| blocks(ext.enqueue_key(w), me));
            if behind {
                k += 1;
                continue;
            }
            let holders: Vec<u32> = obj
                .granted
                .iter()
                .copied()
                .filter(|&id| blocks(ext.key(id), me))
                .collect();
            if !holders.is_empty() {
                for id in holders {
                    let l = &mut ext.locks[id as usize];
                    if !l.revoking {
                        l.revoking = true;
                        ext.revocations += 1;
                        self.q
                            .push(self.now + small, Ev::Lustre(LustreEv::CallbackAtClient(id)));
                    }
                }
                k += 1;
                continue;
            }
            // Granted, expanded as far as nothing blocks it.
            let (lo, hi) = ext.expanded(obj, e);
            let enq = &ext.enqueues[e as usize];
            let lock = ExtentLock {
                node: enq.node,
                file: enq.file,
                target: enq.target,
                lo,
                hi,
                write: enq.write,
                users: 0,
                revoking: false,
                called: false,
            };
            let id = slab_insert(&mut ext.locks, &mut ext.free_locks, lock);
            let obj = ext
                .objects
                .get_mut(&key)
                .expect("object of a waiting enqueue");
            obj.waiting.remove(k);
            obj.granted.push(id);
            let enq = &mut ext.enqueues[e as usize];
            enq.lock = id;
            let (rank, file, target, start) = (enq.rank, enq.file, enq.target, enq.arrived_ns);
            let (lo, hi) = (enq.lo, enq.hi);
            self.rec.server(&ServerActivity {
                server: target % servers,
                func: self.f.server_lock,
                client: rank,
                file,
                offset: lo,
                bytes: hi - lo,
                start_ns: start,
                end_ns: self.now,
            });
            self.q
                .push(self.now + small, Ev::Lustre(LustreEv::GrantAtClient(e)));
        }
    }

    /// The grant of enqueue `e` reached its client: the pieces that waited for it go on
    /// (those the lock covers use it even if a revocation is already on its way, as a client
    /// does the I/O it took the lock for before cancelling it).
    pub(super) fn grant_at_client(&mut self, e: u32) {
        let ext = self.extents();
        let enq = std::mem::take(&mut ext.enqueues[e as usize]);
        ext.pending.remove(&(enq.node, enq.file, enq.target));
        ext.free_enqueues.push(e);
        let l = ext.locks[enq.lock as usize];
        for &q in &enq.pieces {
            let req = *self.reqs.get(q);
            let (lo, hi) = (
                req.piece.file_offset,
                req.piece.file_offset + req.piece.bytes,
            );
            if l.lo <= lo && hi <= l.hi && (l.write || !req.write) {
                self.extents().use_lock(enq.lock);
                self.lustre_rpc_ready(q, enq.lock);
            } else {
                self.lustre_submit(q);
            }
        }
    }

    /// A revocation's callback reached the lock's holder: it cancels once the RPCs under the
    /// lock are done (now, if none is in flight).
    pub(super) fn callback_at_client(&mut self, id: u32) {
        let l = &mut self.extents().locks[id as usize];
        l.called = true;
        if l.users == 0 {
            self.send_cancel(id);
        }
    }

    /// The holder of lock `id` cancels it: the cancel reaches the OST one latency later.
    pub(super) fn send_cancel(&mut self, id: u32) {
        let t = self.now + self.latency(0);
        self.q.push(t, Ev::Lustre(LustreEv::CancelAtOst(id)));
    }

    /// A cancel reached the OST: the lock is gone; waiting enqueues may be granted.
    pub(super) fn cancel_at_ost(&mut self, id: u32) {
        let ext = self.extents();
        let l = ext.locks[id as usize];
        let key = (l.file, l.target);
        if let Some(obj) = ext.objects.get_mut(&key) {
            obj.granted.retain(|&g| g != id);
        }
        ext.free_locks.push(id);
        self.serve_object(key);
    }
}
