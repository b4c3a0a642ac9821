//! The aggregated all-to-all exchange (`Op::Exchange`): a dense all-to-all-v of every rank of
//! the job simulated from per-node byte totals instead of one message at a time.
//!
//! Why: ROMIO's two-phase exchange on 10,000 ranks with 5,000 aggregators is 50 million
//! messages per cycle; point-to-point simulation (matching, a flow or NIC reservation, events
//! per message) cannot run that in seconds. When the exchange is dense, its makespan has a
//! closed form, so the engine takes it whole.
//!
//! The closed form. All messages start together when the last rank arrives, at T. Every
//! message crossing the network goes through its source node's up link, its destination
//! node's down link and (if `bisection_bandwidth` > 0) the switch; max-min fair sharing keeps
//! every link busy as long as it has unfinished flows, so the exchange cannot end before the
//! busiest link has moved its bytes, and with all flows starting at once and every link
//! serving at full rate until its last flow ends, the busiest link is what it waits for:
//!
//!   end = T + latency (+ one more round trip if the largest message is above eager_limit)
//!         + max( max over nodes of max(out / (bandwidth × f(mean out message)),
//!                                      in  / (bandwidth × f(mean in message))),
//!                total bytes between nodes / bisection_bandwidth   (if > 0),
//!                max over ranks of bytes copied into the rank on its node
//!                    / the intra-node rate of the largest message )
//!
//! where f is the bandwidth factor of `network.size_factors` at the node's mean message size
//! in that direction (capped at 1), and latency is the one-way latency of the largest message
//! (`Sim::latency`). Intra-node copies follow the message path's model: the receiving rank
//! copies its messages one after another (shared-memory MPI), ranks copy in parallel, so the
//! rank taking in the most bytes on its node bounds that term (the intra-node rate and
//! latency of `Network::intra_node_path`, oversubscribed when any node is). An exchange with no message
//! between nodes (one node) pays the intra-node latency instead; the round trip is then two
//! intra-node latencies; an exchange that moves nothing ends at T. This is the makespan of
//! max-min sharing whenever no link is starved by a bottleneck elsewhere (a node's flows are
//! limited only by their own NICs), which holds for the two-phase exchange where every
//! aggregator receives from (or sends to) many nodes; stragglers of skewed patterns are not
//! modelled. Like small transfers, an aggregated
//! exchange does not see the network's concurrent flows (I/O requests in flight) and they do
//! not see it. Every rank leaves at the same time (after the slowest node's hand-off,
//! `nodes.handoff_ns` on oversubscribed nodes, as at a Barrier).
//!
//! Cost: O(ranks + nodes) per exchange, no per-message state. Docs: docs/MODEL.md, "Engine",
//! "Aggregated exchange".

use super::{Ev, Sim, SimError};
use crate::engine::storage::disk::transfer_ns;
use crate::program::{Rank, Traffic};

/// What one node moves in the exchange in progress.
#[derive(Clone, Copy, Debug, Default)]
struct NodeLoad {
    out_bytes: u64,
    out_msgs: u64,
    in_bytes: u64,
    in_msgs: u64,
}

/// The exchange in progress and the totals of the run.
#[derive(Clone, Debug, Default)]
pub(super) struct ExchangeState {
    /// Ranks arrived at the exchange in progress.
    pub arrived: usize,
    /// Per node (indexed by node), reset after each exchange through `touched`.
    nodes: Vec<NodeLoad>,
    /// Nodes with messages to or from other nodes in the exchange in progress.
    touched: Vec<u32>,
    /// Largest single message of the exchange in progress.
    largest: u64,
    /// Most bytes one rank takes in from ranks of its node (itself included).
    most_local_in: u64,
    /// Bytes sent and received between nodes, and copied on nodes (sent and received), of the
    /// exchange in progress: sent and received must agree.
    sent_remote: u64,
    recv_remote: u64,
    sent_local: u64,
    recv_local: u64,
    /// Messages of the exchange in progress.
    msgs: u64,
    /// Exchanges completed.
    pub done: u64,
    /// Messages the completed exchanges stood for.
    pub messages: u64,
}

impl Sim<'_> {
    /// Rank `r` reached an `Exchange` with its side `t`; the last rank releases everyone.
    pub(super) fn exchange_arrive(&mut self, r: Rank, t: &Traffic) -> Result<(), SimError> {
        let node = self.ranks[r as usize].node as usize;
        let x = &mut self.exchange;
        if x.nodes.len() <= node {
            x.nodes.resize(node + 1, NodeLoad::default());
        }
        let n = &mut x.nodes[node];
        let was_idle = n.out_msgs == 0 && n.in_msgs == 0;
        n.out_bytes += t.out_bytes;
        n.out_msgs += t.out_msgs;
        n.in_bytes += t.in_bytes;
        n.in_msgs += t.in_msgs;
        if was_idle && (n.out_msgs > 0 || n.in_msgs > 0) {
            x.touched.push(node as u32);
        }
        x.largest = x.largest.max(t.largest);
        x.most_local_in = x.most_local_in.max(t.local_in_bytes);
        x.sent_remote += t.out_bytes;
        x.recv_remote += t.in_bytes;
        x.sent_local += t.local_out_bytes;
        x.recv_local += t.local_in_bytes;
        x.msgs += t.sent_msgs();
        x.arrived += 1;
        if x.arrived < self.ranks.len() {
            return Ok(());
        }
        // Everyone leaves together: the slowest hand-off of any node counts (as at a Barrier).
        let end = self.now + self.exchange_ns()? + self.handoff_all;
        let x = &mut self.exchange;
        for &i in &x.touched {
            x.nodes[i as usize] = NodeLoad::default();
        }
        x.touched.clear();
        x.messages += x.msgs;
        x.done += 1;
        (x.arrived, x.largest, x.most_local_in, x.msgs) = (0, 0, 0, 0);
        (x.sent_remote, x.recv_remote, x.sent_local, x.recv_local) = (0, 0, 0, 0);
        for rank in 0..self.ranks.len() {
            self.q.push(end, Ev::Resume(rank as Rank));
        }
        Ok(())
    }

    /// Duration of the exchange whose last rank just arrived (the closed form of the header).
    fn exchange_ns(&self) -> Result<u64, SimError> {
        let x = &self.exchange;
        if x.sent_remote != x.recv_remote || x.sent_local != x.recv_local {
            return Err(SimError::Model(format!(
                "aggregated exchange {}: ranks send {} bytes to other nodes and receive {}, copy {} bytes on their node and receive {}",
                x.done + 1,
                x.sent_remote,
                x.recv_remote,
                x.sent_local,
                x.recv_local
            )));
        }
        if x.msgs == 0 {
            return Ok(0);
        }
        let net = &self.sys.network;
        let remote = !x.touched.is_empty();
        // Copies on a node: the intra-node path of the largest message, on an oversubscribed
        // node when any node is (the slowest copies count).
        let over = self.oversubscribed.iter().any(|&o| o);
        let intra = |bytes: u64| net.intra_node_path(bytes, over);
        let ctl = if remote {
            self.latency(0)
        } else {
            intra(0).0.round() as u64
        };
        let mut lat = if remote {
            self.latency(x.largest)
        } else {
            intra(x.largest).0.round() as u64
        };
        if x.largest > net.eager_limit {
            lat += 2 * ctl;
        }
        // The direction's time on one NIC: bytes at the bandwidth its mean message gets.
        let nic = |bytes: u64, msgs: u64| -> f64 {
            if bytes == 0 || msgs == 0 {
                return 0.0;
            }
            let f = self.factors(bytes / msgs).1.min(1.0);
            transfer_ns(bytes, net.bandwidth * f)
        };
        let mut busiest = transfer_ns(x.most_local_in, intra(x.largest).1);
        for &i in &x.touched {
            let n = &x.nodes[i as usize];
            busiest = busiest
                .max(nic(n.out_bytes, n.out_msgs))
                .max(nic(n.in_bytes, n.in_msgs));
        }
        if net.bisection_bandwidth > 0.0 {
            busiest = busiest.max(transfer_ns(x.sent_remote, net.bisection_bandwidth));
        }
        Ok(lat + busiest.round() as u64)
    }
}
