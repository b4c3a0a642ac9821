//! MPI point-to-point messages: matching in posting order per (source, destination) pair,
//! eager and rendezvous protocols, inter-node flows and intra-node copies.
//!
//! Matching is decided when a send or receive is posted, not when data arrives: the n-th send
//! from a to b matches the n-th receive at b from a, as MPI's non-overtaking rule says (one
//! communicator and tag per pair here). Each pair keeps two intrusive FIFO lists (unmatched
//! sends, unmatched receives) threaded through the message and receive slabs, and the pair's
//! entry disappears when both are empty, so memory follows the messages in flight.
//!
//! Eager (bytes ≤ eager_limit): the data goes at once (a flow between nodes; a copy at the
//! intra-node bandwidth on one node, after the receiver's earlier copies); the send completes
//! when it has left; it arrives one latency later and completes the receive once posted.
//! Rendezvous: a request-to-send (one latency), a clear-to-send once the receive is posted (one
//! latency), then the data; both sides complete on delivery. Rendezvous costs one round trip
//! more than eager.

use rustc_hash::FxHashMap;

use super::slab::slab_insert;
use super::{token, Ev, Sim, SimError};
use crate::program::{Rank, Slot};

const NIL: u32 = u32::MAX;

/// One message in flight.
#[derive(Clone, Copy, Debug)]
pub(super) struct Msg {
    pub src: Rank,
    pub dst: Rank,
    pub bytes: u64,
    send_slot: Slot,
    recv_slot: Slot,
    rdv: bool,
    intra: bool,
    /// Eager: the data arrived. Rendezvous: the request-to-send arrived.
    arrived: bool,
    send_done: bool,
    recv_done: bool,
    /// Next unmatched send of the same pair.
    next: u32,
}

#[derive(Clone, Copy, Debug)]
struct Recv {
    slot: Slot,
    next: u32,
}

#[derive(Clone, Copy, Debug)]
struct Pair {
    send_head: u32,
    send_tail: u32,
    recv_head: u32,
    recv_tail: u32,
}

/// Messages in flight and the per-pair matching queues.
#[derive(Debug, Default)]
pub(super) struct Messages {
    slab: Vec<Msg>,
    free: Vec<u32>,
    recvs: Vec<Recv>,
    recv_free: Vec<u32>,
    pairs: FxHashMap<u64, Pair>,
    /// Messages sent.
    pub sent: u64,
}

fn key(src: Rank, dst: Rank) -> u64 {
    (src as u64) << 32 | dst as u64
}

impl Messages {
    pub(super) fn get(&self, m: u32) -> &Msg {
        &self.slab[m as usize]
    }

    fn alloc(&mut self, msg: Msg) -> u32 {
        slab_insert(&mut self.slab, &mut self.free, msg)
    }

    fn release_if_done(&mut self, m: u32) {
        let x = &self.slab[m as usize];
        if x.send_done && x.recv_done {
            self.free.push(m);
        }
    }

    /// Posts a send; returns the matched receive slot, if a receive was waiting.
    fn match_send(&mut self, m: u32) -> Option<Slot> {
        let (src, dst) = (self.slab[m as usize].src, self.slab[m as usize].dst);
        let k = key(src, dst);
        let empty = Pair {
            send_head: NIL,
            send_tail: NIL,
            recv_head: NIL,
            recv_tail: NIL,
        };
        let pair = self.pairs.entry(k).or_insert(empty);
        if pair.recv_head != NIL {
            let rid = pair.recv_head;
            let rec = self.recvs[rid as usize];
            pair.recv_head = rec.next;
            if rec.next == NIL {
                pair.recv_tail = NIL;
            }
            if pair.recv_head == NIL && pair.send_head == NIL {
                self.pairs.remove(&k);
            }
            self.recv_free.push(rid);
            return Some(rec.slot);
        }
        if pair.send_tail == NIL {
            pair.send_head = m;
        } else {
            let t = pair.send_tail;
            self.slab[t as usize].next = m;
        }
        pair.send_tail = m;
        None
    }

    /// Posts a receive; returns the matched message, if a send was waiting.
    fn match_recv(&mut self, src: Rank, dst: Rank, slot: Slot) -> Option<u32> {
        let k = key(src, dst);
        let empty = Pair {
            send_head: NIL,
            send_tail: NIL,
            recv_head: NIL,
            recv_tail: NIL,
        };
        let pair = self.pairs.entry(k).or_insert(empty);
        if pair.send_head != NIL {
            let m = pair.send_head;
            pair.send_head = self.slab[m as usize].next;
            if pair.send_head == NIL {
                pair.send_tail = NIL;
            }
            if pair.recv_head == NIL && pair.send_head == NIL {
                self.pairs.remove(&k);
            }
            self.slab[m as usize].recv_slot = slot;
            return Some(m);
        }
        let rec = Recv { slot, next: NIL };
        let rid = slab_insert(&mut self.recvs, &mut self.recv_free, rec);
        if pair.recv_tail == NIL {
            pair.recv_head = rid;
        } else {
            self.recvs[pair.recv_tail as usize].next = rid;
        }
        pair.recv_tail = rid;
        None
    }
}

impl Sim<'_> {
    /// Small-message latency, on one node (of rank `r`) or between nodes.
    fn ctl_latency(&self, r: Rank, intra: bool) -> u64 {
        if intra {
            self.intra_node(self.ranks[r as usize].node, 0).0
        } else {
            self.latency(0)
        }
    }

    pub(super) fn post_send(
        &mut self,
        r: Rank,
        to: Rank,
        bytes: u64,
        slot: Slot,
    ) -> Result<(), SimError> {
        let intra = self.ranks[r as usize].node == self.ranks[to as usize].node;
        let rdv = bytes > self.sys.network.eager_limit;
        self.msgs.sent += 1;
        let m = self.msgs.alloc(Msg {
            src: r,
            dst: to,
            bytes,
            send_slot: slot,
            recv_slot: NIL,
            rdv,
            intra,
            arrived: false,
            send_done: false,
            recv_done: false,
            next: NIL,
        });
        if let Some(rs) = self.msgs.match_send(m) {
            self.msgs.slab[m as usize].recv_slot = rs;
        }
        if rdv {
            let lat = self.ctl_latency(r, intra);
            self.q.push(self.now + lat, Ev::RtsArrive(m));
        } else if intra {
            let t = self.intra_copy_end(to, bytes);
            self.q.push(t, Ev::SendLeft(m));
        } else if bytes == 0 {
            self.send_left(m)?;
        } else {
            let (src, dst) = (self.ranks[r as usize].node, self.ranks[to as usize].node);
            self.start_flow(src, dst, bytes, token::EAGER | m as u64);
        }
        Ok(())
    }

    pub(super) fn post_recv(&mut self, r: Rank, from: Rank, slot: Slot) -> Result<(), SimError> {
        let Some(m) = self.msgs.match_recv(from, r, slot) else {
            return Ok(());
        };
        let msg = self.msgs.slab[m as usize];
        if !msg.arrived {
            return Ok(());
        }
        if msg.rdv {
            let lat = self.ctl_latency(r, msg.intra);
            self.q.push(self.now + lat, Ev::CtsArrive(m));
        } else {
            self.msgs.slab[m as usize].recv_done = true;
            self.msgs.release_if_done(m);
            self.complete_slot(r, slot)?;
        }
        Ok(())
    }

    /// An eager message's data left the sender.
    pub(super) fn send_left(&mut self, m: u32) -> Result<(), SimError> {
        let msg = self.msgs.slab[m as usize];
        let lat = if msg.intra {
            self.intra_node(self.ranks[msg.dst as usize].node, msg.bytes)
                .0
        } else {
            self.latency(msg.bytes)
        };
        self.q.push(self.now + lat, Ev::MsgArrive(m));
        self.msgs.slab[m as usize].send_done = true;
        self.complete_slot(msg.src, msg.send_slot)
    }

    pub(super) fn msg_arrive(&mut self, m: u32) -> Result<(), SimError> {
        let msg = &mut self.msgs.slab[m as usize];
        msg.arrived = true;
        if msg.recv_slot == NIL {
            return Ok(());
        }
        msg.recv_done = true;
        let (dst, slot) = (msg.dst, msg.recv_slot);
        self.msgs.release_if_done(m);
        self.complete_slot(dst, slot)
    }

    pub(super) fn rts_arrive(&mut self, m: u32) -> Result<(), SimError> {
        let msg = &mut self.msgs.slab[m as usize];
        msg.arrived = true;
        let (matched, intra, dst) = (msg.recv_slot != NIL, msg.intra, msg.dst);
        if matched {
            let lat = self.ctl_latency(dst, intra);
            self.q.push(self.now + lat, Ev::CtsArrive(m));
        }
        Ok(())
    }

    pub(super) fn cts_arrive(&mut self, m: u32) {
        let msg = self.msgs.slab[m as usize];
        if msg.intra {
            let lat = self
                .intra_node(self.ranks[msg.dst as usize].node, msg.bytes)
                .0;
            let t = self.intra_copy_end(msg.dst, msg.bytes) + lat;
            self.q.push(t, Ev::RdvDelivered(m));
        } else {
            let (src, dst) = (
                self.ranks[msg.src as usize].node,
                self.ranks[msg.dst as usize].node,
            );
            self.start_flow(src, dst, msg.bytes, token::RDV | m as u64);
        }
    }

    pub(super) fn rdv_delivered(&mut self, m: u32) -> Result<(), SimError> {
        let msg = &mut self.msgs.slab[m as usize];
        msg.send_done = true;
        msg.recv_done = true;
        let msg = *msg;
        self.msgs.release_if_done(m);
        self.complete_slot(msg.src, msg.send_slot)?;
        self.complete_slot(msg.dst, msg.recv_slot)
    }
}
