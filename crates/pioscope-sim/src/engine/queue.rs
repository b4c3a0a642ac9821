//! The event queue: a binary min-heap keyed by (time, sequence number), so events at the same
//! time run in the order they were scheduled and a run is deterministic.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};

use crate::engine::network::FlowId;
use crate::program::Rank;

/// Something that happens at a time. Payloads are indices into the engine's tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Ev {
    /// A rank continues its program (after Compute, a metadata reply, a lock grant, ...).
    Resume(Rank),
    /// A flow finished (taken from the network's completion heap, never queued here).
    FlowDone { flow: FlowId, gen: u32 },
    /// A small transfer (not a flow) between machines went through; the flow token.
    Transferred(u64),
    /// Internal to the queue: stands in the heap for the front of an ordered lane.
    LaneHead(u32),
    /// An MPI message's data left the sender (intra-node copy done).
    SendLeft(u32),
    /// An eager message arrived at the receiver.
    MsgArrive(u32),
    /// A rendezvous request-to-send arrived at the receiver.
    RtsArrive(u32),
    /// A rendezvous clear-to-send arrived back at the sender: the data goes.
    CtsArrive(u32),
    /// A rendezvous message's data arrived: both sides complete.
    RdvDelivered(u32),
    /// The barrier in progress releases every rank.
    BarrierRelease,
    /// A write request's data goes: after its rendezvous round trip, or after the client
    /// stack's CPU time (node_cpu.rs).
    ReqRdvReady(u32),
    /// A request (write data or read request) reached its server.
    ReqAtServer(u32),
    /// A request's server CPU time is over.
    ReqCpuDone(u32),
    /// The server finished serving a request (cache or disk).
    ReqServed(u32),
    /// The reply (write ack or read data) reached the client.
    ReqDone(u32),
    /// The flush of a server's front dirty extent finished.
    FlushDone(u32),
    /// A metadata request of a rank reached its server.
    MetaAtServer(Rank),
    /// A metadata operation of a rank finished on its server.
    MetaServed(Rank),
    /// A Sync of a rank reached a data server.
    SyncAtServer { rank: Rank, server: u32 },
    /// A Sync's reply (or an Io piece done) reached the rank: one fewer outstanding.
    PartDone(Rank),
    /// A lock request reached the lock server.
    LockAtServer(Rank),
    /// An unlock reached the lock server.
    UnlockAtServer(Rank),
    /// The Lustre client's RPC locks (lustre_client.rs).
    Lustre(super::lustre_client::LustreEv),
    /// The client-cache flusher of a compute node may go on (client_cache.rs).
    ClientFlush(u32),
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    time: u64,
    seq: u64,
    ev: Ev,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        (self.time, self.seq) == (other.time, other.seq)
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    /// Reversed: the heap pops the earliest (time, seq) first.
    fn cmp(&self, other: &Self) -> Ordering {
        (other.time, other.seq).cmp(&(self.time, self.seq))
    }
}

/// Most fixed-delay lanes (see [`Queue`]).
const LANES: usize = 12;

/// The pending events: a binary heap, plus FIFO lanes for the most common delays.
///
/// An event pushed `d` ns after the current time onto the lane of delay `d` lands behind every
/// event already in that lane (time never goes back, and sequence numbers grow), so a lane is
/// sorted without any sifting. The first LANES distinct delays seen get a lane (the network
/// latency, the intra-node latency, zero, fixed server costs come first in practice); the rest
/// go to the heap. Popping takes the least (time, seq) among the heap top and the lane fronts:
/// the same order as one heap, at a fraction of the cost for latency-driven traffic.
#[derive(Debug, Default)]
pub(super) struct Queue {
    heap: BinaryHeap<Entry>,
    lanes: Vec<(u64, VecDeque<Entry>)>,
    /// Ordered lanes (see `push_ordered`): only each one's front is in the heap, as a
    /// `LaneHead` entry with the front's (time, seq), so an all-to-all's millions of pending
    /// transfers do not make every heap operation walk a deep heap.
    ordered: Vec<VecDeque<Entry>>,
    now: u64,
    seq: u64,
}

impl Queue {
    pub(super) fn push(&mut self, time: u64, ev: Ev) {
        self.seq += 1;
        let e = Entry {
            time,
            seq: self.seq,
            ev,
        };
        let delay = time.wrapping_sub(self.now);
        if time >= self.now {
            if let Some(lane) = self.lanes.iter_mut().find(|l| l.0 == delay) {
                lane.1.push_back(e);
                return;
            }
            if self.lanes.len() < LANES {
                self.lanes.push((delay, VecDeque::from([e])));
                return;
            }
        }
        self.heap.push(e);
    }

    /// Queues `ev` at `time` on ordered lane `lane`, whose times the caller guarantees never
    /// decrease (a NIC's small transfers end in the order they were reserved).
    pub(super) fn push_ordered(&mut self, lane: u32, time: u64, ev: Ev) {
        self.seq += 1;
        let e = Entry {
            time,
            seq: self.seq,
            ev,
        };
        let l = lane as usize;
        if self.ordered.len() <= l {
            self.ordered.resize_with(l + 1, VecDeque::new);
        }
        let q = &mut self.ordered[l];
        debug_assert!(q.back().is_none_or(|b| b.time <= time));
        q.push_back(e);
        if q.len() == 1 {
            self.heap.push(Entry {
                time,
                seq: e.seq,
                ev: Ev::LaneHead(lane),
            });
        }
    }

    /// Pops the heap's top, resolving an ordered lane's stand-in to the lane's front.
    fn pop_heap(&mut self) -> Option<Entry> {
        let top = self.heap.pop()?;
        let Ev::LaneHead(lane) = top.ev else {
            return Some(top);
        };
        let q = &mut self.ordered[lane as usize];
        let e = q.pop_front();
        if let Some(next) = q.front() {
            let head = Entry {
                time: next.time,
                seq: next.seq,
                ev: Ev::LaneHead(lane),
            };
            self.heap.push(head);
        }
        e
    }

    /// Where the least entry is: Some(lane) or None for the heap (which may be empty too).
    fn least(&self) -> Option<Option<usize>> {
        let mut best: Option<(u64, u64)> = self.heap.peek().map(|e| (e.time, e.seq));
        let mut at = best.map(|_| None);
        for (i, (_, lane)) in self.lanes.iter().enumerate() {
            if let Some(e) = lane.front() {
                if best.is_none_or(|b| (e.time, e.seq) < b) {
                    best = Some((e.time, e.seq));
                    at = Some(Some(i));
                }
            }
        }
        at
    }

    pub(super) fn pop(&mut self) -> Option<(u64, Ev)> {
        let e = match self.least()? {
            None => self.pop_heap()?,
            Some(i) => self.lanes[i].1.pop_front()?,
        };
        self.now = e.time;
        Some((e.time, e.ev))
    }

    pub(super) fn peek_time(&self) -> Option<u64> {
        match self.least()? {
            None => self.heap.peek().map(|e| e.time),
            Some(i) => self.lanes[i].1.front().map(|e| e.time),
        }
    }

    /// The current time moved on without a pop (a network completion was processed): later
    /// pushes' delays count from here.
    pub(super) fn advance(&mut self, now: u64) {
        self.now = now;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_then_insertion_order() {
        let mut q = Queue::default();
        q.push(5, Ev::Resume(1));
        q.push(3, Ev::Resume(2));
        q.push(5, Ev::Resume(0));
        q.push(3, Ev::Resume(3));
        let got: Vec<(u64, Ev)> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            got,
            vec![
                (3, Ev::Resume(2)),
                (3, Ev::Resume(3)),
                (5, Ev::Resume(1)),
                (5, Ev::Resume(0))
            ]
        );
    }

    #[test]
    fn ordered_lanes_merge_with_the_rest() {
        let mut q = Queue::default();
        q.push_ordered(3, 10, Ev::Resume(0));
        q.push(5, Ev::Resume(1));
        q.push_ordered(3, 10, Ev::Resume(2));
        q.push_ordered(1, 7, Ev::Resume(3));
        q.push_ordered(3, 20, Ev::Resume(4));
        q.push(10, Ev::Resume(5));
        let got: Vec<(u64, Ev)> = std::iter::from_fn(|| q.pop()).collect();
        let want = [(5, 1), (7, 3), (10, 0), (10, 2), (10, 5), (20, 4)];
        assert_eq!(
            got,
            want.iter()
                .map(|&(t, r)| (t, Ev::Resume(r)))
                .collect::<Vec<_>>()
        );
    }

    #[test]
    fn lanes_and_heap_merge_in_time_then_insertion_order() {
        // More distinct delays than lanes, pushed at moving times: the pops must come out
        // sorted by (time, push order), as from one heap.
        let mut q = Queue::default();
        let mut expected = Vec::new();
        let mut n = 0u32;
        let mut x = 12345u64;
        for round in 0..50u64 {
            for _ in 0..40 {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let delay = (x >> 33) % 30;
                let t = round * 10 + delay;
                q.push(t, Ev::Resume(n));
                expected.push((t, n));
                n += 1;
            }
            // Pop what is due before the next round's pushes.
            while q.peek_time().is_some_and(|t| t < (round + 1) * 10) {
                let (t, ev) = q.pop().unwrap();
                let Ev::Resume(id) = ev else { unreachable!() };
                let pos = expected.iter().position(|e| e.1 == id).unwrap();
                let min = *expected.iter().min().unwrap();
                assert_eq!((t, id), min, "popped out of order");
                expected.remove(pos);
            }
        }
        while let Some((t, Ev::Resume(id))) = q.pop() {
            let min = *expected.iter().min().unwrap();
            assert_eq!((t, id), min);
            expected.retain(|e| e.1 != id);
        }
        assert!(expected.is_empty());
    }
}
