//! Ranks as state machines: stepping through the program until an op blocks, message slots
//! and WaitAll, Begin/End bookkeeping, the barrier, and what a blocked rank waits on.

use super::{Sim, SimError, Waiting};
use crate::model::System;
use crate::program::{FileId, IoKind, MetaKind, Op, Rank, Slot};

/// What a rank is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Block {
    /// Stepping (or ready to).
    Running,
    Compute,
    WaitAll,
    Barrier,
    /// At an aggregated exchange, waiting for the other ranks or for its end.
    Exchange,
    Io,
    Meta,
    Sync,
    Lock,
    Unlock,
    /// Waiting for its node's client lock of a file (file_lock.rs).
    FileLock,
    Done,
}

const IDLE: u8 = 0;
const PENDING: u8 = 1;
const DONE: u8 = 2;

/// One nonblocking message slot.
#[derive(Clone, Copy, Debug)]
pub(super) struct SlotInfo {
    state: u8,
    awaited: bool,
    recv: bool,
    peer: Rank,
}

/// One rank's state.
#[derive(Clone, Debug)]
pub(super) struct RankState {
    /// Compute node.
    pub node: u32,
    /// Next op.
    pub pc: usize,
    pub block: Block,
    /// Op the rank is blocked in.
    pub blocked_op: usize,
    /// Slots WaitAll still waits for.
    wait_count: u32,
    /// Outstanding parts of an Io or Sync (flow buffers of its requests, per-server syncs).
    pub parts: u32,
    /// Open Begins: (op index, start).
    calls: Vec<(u32, u64)>,
    slots: Vec<SlotInfo>,
    pub end_ns: u64,
    /// File of the pending Meta/Sync/Lock/Unlock.
    pub cur_file: u32,
    /// Kind of the pending Meta.
    pub meta: MetaKind,
    /// When the pending metadata or lock request reached its server.
    pub arrived_ns: u64,
    /// Range of the pending Lock/Unlock: [lo, hi).
    pub lock: (u64, u64),
    /// Barriers passed.
    pub barriers: u32,
    /// The node's client lock of a file it holds (file_lock.rs), taken for the op at .1.
    pub file_lock: Option<(FileId, usize)>,
}

impl RankState {
    pub(super) fn new(node: u32) -> RankState {
        RankState {
            node,
            pc: 0,
            block: Block::Running,
            blocked_op: 0,
            wait_count: 0,
            parts: 0,
            calls: Vec::new(),
            slots: Vec::new(),
            end_ns: 0,
            cur_file: 0,
            meta: MetaKind::Open,
            arrived_ns: 0,
            lock: (0, 0),
            barriers: 0,
            file_lock: None,
        }
    }
}

/// The barrier in progress.
#[derive(Clone, Debug, Default)]
pub(super) struct BarrierState {
    arrived: Vec<Rank>,
}

/// Per node, the resume delay after a blocking wait: `nodes.handoff_ns` on nodes running more
/// ranks than `nodes.cores` (0 cores: as many as ranks), else 0. There, MPI ranks busy-poll
/// while they wait, so the ranks they wait for share the cores with them: a rank whose
/// condition is met resumes only once the scheduler gives it a core again.
pub(super) fn handoffs(sys: &System, oversubscribed: &[bool]) -> Vec<u64> {
    oversubscribed
        .iter()
        .map(|&o| if o { sys.nodes.handoff_ns } else { 0 })
        .collect()
}

/// Per node, whether it runs more ranks than `nodes.cores` (0 cores: as many as ranks).
pub(super) fn oversubscribed(sys: &System, ranks: &[RankState]) -> Vec<bool> {
    let mut per_node = vec![0u32; sys.nodes.count as usize];
    for st in ranks {
        if let Some(n) = per_node.get_mut(st.node as usize) {
            *n += 1;
        }
    }
    let cores = sys.nodes.cores;
    per_node
        .into_iter()
        .map(|n| cores > 0 && n > cores)
        .collect()
}

/// ceil(log2(n)): the depth of a binary tree over n ranks.
pub(super) fn tree_depth(n: usize) -> u64 {
    if n <= 1 {
        0
    } else {
        (usize::BITS - (n - 1).leading_zeros()) as u64
    }
}

impl Sim<'_> {
    /// Runs rank `r` from its current op until an op blocks or the program ends.
    pub(super) fn step(&mut self, r: Rank) -> Result<(), SimError> {
        let was = self.stepping;
        self.stepping = true;
        let res = self.step_inner(r);
        self.stepping = was;
        res
    }

    /// Wakes rank `r`: at once, or through the queue while another rank is being stepped (so
    /// that stepping never nests).
    pub(super) fn wake(&mut self, r: Rank) -> Result<(), SimError> {
        if self.stepping {
            self.q.push(self.now, super::Ev::Resume(r));
            Ok(())
        } else {
            self.resume(r)
        }
    }

    /// A blocked rank continues.
    pub(super) fn resume(&mut self, r: Rank) -> Result<(), SimError> {
        let st = &mut self.ranks[r as usize];
        match st.block {
            Block::WaitAll if st.wait_count > 0 => return Ok(()),
            Block::Done => return Ok(()),
            _ => {}
        }
        self.step(r)
    }

    fn step_inner(&mut self, r: Rank) -> Result<(), SimError> {
        let job = self.job;
        let prog = &job.programs[r as usize];
        let ri = r as usize;
        if self.ranks[ri].block == Block::WaitAll {
            // Resolved: the slots become free again.
            if let Some(Op::WaitAll { slots }) = prog.get(self.ranks[ri].pc) {
                for &s in slots {
                    self.ranks[ri].slots[s as usize].state = IDLE;
                }
            }
            self.ranks[ri].pc += 1;
        }
        self.ranks[ri].block = Block::Running;
        loop {
            let pc = self.ranks[ri].pc;
            // A write or sync that held the node's lock of its file has ended.
            self.client_file_unlock(r, pc)?;
            let Some(op) = prog.get(pc) else {
                return self.finish_rank(r);
            };
            self.ranks[ri].pc = pc + 1;
            let block = match op {
                Op::Compute { ns } => {
                    if *ns == 0 {
                        continue;
                    }
                    self.q.push(self.now + ns, super::Ev::Resume(r));
                    Block::Compute
                }
                Op::Isend { to, bytes, slot } => {
                    self.start_slot(r, pc, *slot, *to, false)?;
                    self.post_send(r, *to, *bytes, *slot)?;
                    continue;
                }
                Op::Irecv {
                    from,
                    bytes: _,
                    slot,
                } => {
                    self.start_slot(r, pc, *slot, *from, true)?;
                    self.post_recv(r, *from, *slot)?;
                    continue;
                }
                Op::WaitAll { slots } => {
                    let mut pending = 0;
                    let st = &mut self.ranks[ri];
                    for &s in slots {
                        match st.slots.get(s as usize).map(|x| x.state) {
                            None | Some(IDLE) => {
                                return Err(SimError::SlotNotStarted {
                                    rank: r,
                                    op: pc,
                                    slot: s,
                                })
                            }
                            Some(PENDING) => {
                                let x = &mut st.slots[s as usize];
                                if !x.awaited {
                                    x.awaited = true;
                                    pending += 1;
                                }
                            }
                            _ => {}
                        }
                    }
                    if pending == 0 {
                        for &s in slots {
                            st.slots[s as usize].state = IDLE;
                        }
                        continue;
                    }
                    st.wait_count = pending;
                    // Stays on this op until the last slot completes.
                    st.pc = pc;
                    Block::WaitAll
                }
                Op::Barrier => {
                    self.barrier_arrive(r);
                    Block::Barrier
                }
                Op::Exchange(t) => {
                    // Blocks first: the last rank's arrival schedules every rank's resume.
                    let st = &mut self.ranks[ri];
                    st.block = Block::Exchange;
                    st.blocked_op = pc;
                    return self.exchange_arrive(r, t);
                }
                Op::Io {
                    file,
                    kind,
                    offset,
                    bytes,
                } => match self.start_access(r, pc, *file, *kind, &[(*offset, *bytes)]) {
                    Some(block) => block,
                    None => continue,
                },
                Op::IoList(list) => {
                    match self.start_access(r, pc, list.file, list.kind, &list.pieces) {
                        Some(block) => block,
                        None => continue,
                    }
                }
                Op::Meta { file, kind } => {
                    if *kind == MetaKind::Sync && !self.client_file_lock(r, *file, pc) {
                        self.wait_file_lock(r, *file, pc)
                    } else {
                        self.start_meta(r, *file, *kind)
                    }
                }
                Op::Lock {
                    file,
                    offset,
                    bytes,
                } => {
                    self.start_lock(r, *file, *offset, *bytes);
                    Block::Lock
                }
                Op::Unlock {
                    file,
                    offset,
                    bytes,
                } => {
                    self.start_unlock(r, *file, *offset, *bytes);
                    Block::Unlock
                }
                Op::Begin(_) => {
                    let now = self.now;
                    self.ranks[ri].calls.push((pc as u32, now));
                    continue;
                }
                Op::End => {
                    let Some((at, start)) = self.ranks[ri].calls.pop() else {
                        return Err(SimError::Unbalanced { rank: r, op: pc });
                    };
                    if let Some(Op::Begin(call)) = prog.get(at as usize) {
                        let depth = self.ranks[ri].calls.len().min(u8::MAX as usize) as u8;
                        self.rec.call(r, depth, call, start, self.now);
                    }
                    continue;
                }
            };
            let st = &mut self.ranks[ri];
            st.block = block;
            st.blocked_op = pc;
            return Ok(());
        }
    }

    /// Starts rank `r`'s data access, the op at `pc`, a write once it holds its node's lock of
    /// the file: the block it waits in, or None when the access ended at once.
    fn start_access(
        &mut self,
        r: Rank,
        pc: usize,
        file: FileId,
        kind: IoKind,
        ranges: &[(u64, u64)],
    ) -> Option<Block> {
        if kind == IoKind::Write && !self.client_file_lock(r, file, pc) {
            return Some(self.wait_file_lock(r, file, pc));
        }
        self.start_io(r, file, kind, ranges).then_some(Block::Io)
    }

    /// Rank `r` waits for its node's lock of `file` to run the op at `pc` again.
    fn wait_file_lock(&mut self, r: Rank, file: FileId, pc: usize) -> Block {
        let st = &mut self.ranks[r as usize];
        st.pc = pc;
        st.cur_file = file;
        Block::FileLock
    }

    fn finish_rank(&mut self, r: Rank) -> Result<(), SimError> {
        let st = &mut self.ranks[r as usize];
        if !st.calls.is_empty() {
            return Err(SimError::Unbalanced { rank: r, op: st.pc });
        }
        st.block = Block::Done;
        st.end_ns = self.now;
        self.finished += 1;
        Ok(())
    }

    /// Isend/Irecv take slot `slot` of rank `r`.
    fn start_slot(
        &mut self,
        r: Rank,
        op: usize,
        slot: Slot,
        peer: Rank,
        recv: bool,
    ) -> Result<(), SimError> {
        let slots = &mut self.ranks[r as usize].slots;
        if slots.len() <= slot as usize {
            slots.resize(
                slot as usize + 1,
                SlotInfo {
                    state: IDLE,
                    awaited: false,
                    recv: false,
                    peer: 0,
                },
            );
        }
        let s = &mut slots[slot as usize];
        if s.state != IDLE {
            return Err(SimError::SlotBusy { rank: r, op, slot });
        }
        *s = SlotInfo {
            state: PENDING,
            awaited: false,
            recv,
            peer,
        };
        Ok(())
    }

    /// Slot `slot` of rank `r` completed (its message left, or arrived).
    pub(super) fn complete_slot(&mut self, r: Rank, slot: Slot) -> Result<(), SimError> {
        let st = &mut self.ranks[r as usize];
        let s = &mut st.slots[slot as usize];
        s.state = DONE;
        if s.awaited {
            s.awaited = false;
            st.wait_count -= 1;
            if st.wait_count == 0 && st.block == Block::WaitAll {
                let handoff = self.handoff[st.node as usize];
                if handoff > 0 {
                    self.q.push(self.now + handoff, super::Ev::Resume(r));
                    return Ok(());
                }
                return self.wake(r);
            }
        }
        Ok(())
    }

    /// An Io or Sync part of rank `r` finished.
    pub(super) fn part_done(&mut self, r: Rank) -> Result<(), SimError> {
        let st = &mut self.ranks[r as usize];
        st.parts -= 1;
        if st.parts == 0 {
            return self.wake(r);
        }
        Ok(())
    }

    fn barrier_arrive(&mut self, r: Rank) {
        self.barrier.arrived.push(r);
        let n = self.ranks.len();
        if self.barrier.arrived.len() == n {
            let one_node = self.ranks.iter().all(|x| x.node == self.ranks[0].node);
            let lat = if one_node {
                self.sys.network.intra_node_latency_ns
            } else {
                self.latency(0)
            };
            // Everyone leaves together: the slowest hand-off of any node counts.
            self.q.push(
                self.now + tree_depth(n) * lat + self.handoff_all,
                super::Ev::BarrierRelease,
            );
        }
    }

    pub(super) fn barrier_release(&mut self) -> Result<(), SimError> {
        let arrived = std::mem::take(&mut self.barrier.arrived);
        for &r in &arrived {
            self.ranks[r as usize].barriers += 1;
            self.step(r)?;
        }
        let mut arrived = arrived;
        // Keep the allocation, unless a rank already arrived at the next barrier meanwhile
        // (it cannot: every rank was blocked here).
        if self.barrier.arrived.is_empty() {
            arrived.clear();
            self.barrier.arrived = arrived;
        }
        Ok(())
    }

    /// What every unfinished rank waits on.
    pub(super) fn waiting(&self) -> Vec<Waiting> {
        let n = self.ranks.len();
        let mut out = Vec::new();
        for (i, st) in self.ranks.iter().enumerate() {
            let on = match st.block {
                Block::Done => continue,
                Block::WaitAll => {
                    let what: Vec<String> = st
                        .slots
                        .iter()
                        .enumerate()
                        .filter(|(_, s)| s.awaited && s.state == PENDING)
                        .map(|(k, s)| {
                            if s.recv {
                                format!("slot {k} (Irecv from rank {})", s.peer)
                            } else {
                                format!("slot {k} (Isend to rank {})", s.peer)
                            }
                        })
                        .collect();
                    format!("in WaitAll for {}", what.join(", "))
                }
                Block::Barrier => format!(
                    "at barrier {} ({} of {} ranks arrived)",
                    st.barriers + 1,
                    self.barrier.arrived.len(),
                    n
                ),
                Block::Exchange => format!(
                    "at aggregated exchange {} ({} of {} ranks arrived)",
                    self.exchange.done + 1,
                    self.exchange.arrived,
                    n
                ),
                Block::Lock => format!(
                    "for a lock on file {} [{}, {}) held by rank(s) {}",
                    st.cur_file,
                    st.lock.0,
                    st.lock.1,
                    self.lock_holders(st.cur_file, i as Rank, st.lock)
                ),
                Block::FileLock => format!(
                    "for its node's client lock of file {} held by rank {}",
                    st.cur_file,
                    self.client_file_holder(i as Rank)
                        .map_or("none".to_string(), |h| h.to_string())
                ),
                Block::Running => "ready to run (engine error)".to_string(),
                other => format!("in {other:?}"),
            };
            out.push(Waiting {
                rank: i as Rank,
                op: st.blocked_op,
                on,
            });
        }
        out
    }
}
