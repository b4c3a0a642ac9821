//! Byte-range write locks per file, kept by the file's metadata server: a Lock is granted when
//! no other rank holds an overlapping range and no earlier waiter wants an overlapping one
//! (first come, first served among conflicting requests; disjoint ranges go in parallel).
//! Lock and Unlock each cost a round trip to the server. A zero length means "to the end of
//! the file", as fcntl's.

use std::collections::VecDeque;

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
