//! The client file lock (`nodes.client_file_lock`): a node's file-system client runs one write
//! or sync of a file at a time, as the Linux FUSE module does (fuse_cache_write_iter and
//! fuse_fsync hold the file's inode lock for the whole call). A rank's write (`Io`/`IoList`)
//! or `Sync` of a file takes its node's lock of that file before it starts and gives it back
//! when it ends; ranks of the node asking while another holds it wait in arrival order. Reads
//! take no lock. On a node with more ranks than cores, a rank woken holding the lock first waits
//! `nodes.wakeup_slice_ns` per thread runnable beyond the cores (node_cpu.rs `wakeup_delay`).
//! docs/MODEL.md, "Engine", "Client file lock".

use std::collections::{HashMap, VecDeque};

use super::ranks::Block;
use super::{Sim, SimError};
use crate::program::{FileId, Rank};

/// The held locks and their waiters, per (node, file).
#[derive(Clone, Debug, Default)]
pub(super) struct FileLocks {
    held: HashMap<(u32, FileId), Holder>,
    waiting: HashMap<(u32, FileId), VecDeque<Rank>>,
}

/// Who holds a lock, for the op at `op` of its program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Holder {
    rank: Rank,
    op: usize,
}

impl Sim<'_> {
    /// Whether rank `r` may run its write or sync of `file`, the op at `op`: true when the
    /// model has no client file lock, or the rank holds its node's lock of the file for this
    /// op or takes it now; false when it must wait (queued: woken holding it).
    pub(super) fn client_file_lock(&mut self, r: Rank, file: FileId, op: usize) -> bool {
        if !self.sys.nodes.client_file_lock {
            return true;
        }
        let key = (self.ranks[r as usize].node, file);
        let me = Holder { rank: r, op };
        match self.file_locks.held.get(&key) {
            None => {
                self.file_locks.held.insert(key, me);
                self.ranks[r as usize].file_lock = Some((file, op));
                true
            }
            Some(&h) if h == me => true,
            Some(_) => {
                self.file_locks.waiting.entry(key).or_default().push_back(r);
                false
            }
        }
    }

    /// Rank `r`, about to run the op at `pc`, gives back the lock it took for an earlier op,
    /// if any: the next waiter of its node and file takes it and resumes.
    pub(super) fn client_file_unlock(&mut self, r: Rank, pc: usize) -> Result<(), SimError> {
        let Some((file, op)) = self.ranks[r as usize].file_lock else {
            return Ok(());
        };
        if op == pc {
            return Ok(());
        }
        self.ranks[r as usize].file_lock = None;
        let key = (self.ranks[r as usize].node, file);
        self.file_locks.held.remove(&key);
        let next = self
            .file_locks
            .waiting
            .get_mut(&key)
            .and_then(|q| q.pop_front());
        if let Some(w) = next {
            // The waiter is stopped on its write or sync (its pc points at that op).
            let op = self.ranks[w as usize].pc;
            self.file_locks.held.insert(key, Holder { rank: w, op });
            self.ranks[w as usize].file_lock = Some((file, op));
            // The waiter slept: on a full node it runs once the scheduler gives it a core.
            let delay = self.wakeup_delay(key.0, r, w);
            if delay > 0 {
                self.q.push(self.now + delay, super::Ev::Resume(w));
            } else {
                self.wake(w)?;
            }
        }
        Ok(())
    }

    /// The rank holding the lock rank `r` waits for (deadlock reports).
    pub(super) fn client_file_holder(&self, r: Rank) -> Option<Rank> {
        let st = &self.ranks[r as usize];
        if st.block != Block::FileLock {
            return None;
        }
        let key = (st.node, st.cur_file);
        self.file_locks.held.get(&key).map(|h| h.rank)
    }
}
