//! The compute nodes' CPU cores as a resource: the client file-system stack's CPU time per
//! request (`nodes.client_cpu_per_request_ns`, `nodes.client_cpu_bandwidth`: a FUSE daemon's
//! context switches and copies) and, with `storage.colocated`, the servers' CPU spans run on a
//! node's `nodes.cores`, so concurrent ranks and a server on the same machine contend for them.
//! A span takes the core free first (first come first served) and is stretched when more is
//! runnable on the node than it has cores: by (ranks on the CPU + other spans running + 1) /
//! cores, the share a fair scheduler gives it, where the ranks on the CPU are those computing
//! or busy-polling in an MPI wait (ranks blocked in I/O, metadata or a lock sleep). It also
//! owns how long a rank woken from a sleep waits for a core of a full node
//! (`nodes.wakeup_slice_ns`, used by the client file lock).
//! docs/MODEL.md, "Engine", "Node CPU".

use super::ranks::Block;
use super::Sim;
use crate::engine::storage::disk::earliest;
use crate::model::System;
use crate::program::Rank;

/// The node (compute node 0) colocated servers run on.
const SERVER_NODE: u32 = 0;

/// Per compute node, when each core is free of CPU spans.
#[derive(Clone, Debug, Default)]
pub(super) struct NodeCores {
    free_at: Vec<Vec<u64>>,
}

impl NodeCores {
    /// `nodes` nodes of `nodes.cores` cores each; none when the model charges no CPU to the
    /// nodes (the costs are 0 and the servers are not colocated: nothing changes).
    pub(super) fn new(sys: &System, nodes: usize) -> NodeCores {
        let n = &sys.nodes;
        let charged = n.client_cpu_per_request_ns > 0
            || n.client_cpu_bandwidth > 0.0
            || sys.storage.colocated;
        if !charged {
            return NodeCores::default();
        }
        // 0 cores: as many as the node runs ranks (and a server thread per colocated server).
        let cores = if n.cores > 0 {
            n.cores
        } else {
            n.ranks_per_node + sys.storage.server_threads.max(1)
        };
        NodeCores {
            free_at: vec![vec![0; cores.max(1) as usize]; nodes.max(1)],
        }
    }

    /// Whether node CPU is modelled at all.
    pub(super) fn on(&self) -> bool {
        !self.free_at.is_empty()
    }
}

impl Sim<'_> {
    /// The client stack's CPU time for one flow buffer of `bytes` (ns).
    pub(super) fn client_cpu_cost(&self, bytes: u64) -> u64 {
        let n = &self.sys.nodes;
        let per_byte = if n.client_cpu_bandwidth > 0.0 {
            bytes as f64 / n.client_cpu_bandwidth * 1e9
        } else {
            0.0
        };
        n.client_cpu_per_request_ns + per_byte.round() as u64
    }

    /// A span of `cost` ns of CPU on `node`, ready at `ready` (not before now) on behalf of
    /// rank `issuer` (not counted as a rank on the CPU: it waits for this span): (start, end)
    /// on the core free first, stretched by what else is runnable on the node.
    pub(super) fn node_cpu(
        &mut self,
        node: u32,
        issuer: Option<Rank>,
        ready: u64,
        cost: u64,
    ) -> (u64, u64) {
        if cost == 0 || !self.cores.on() {
            return (ready, ready);
        }
        let node = (node as usize).min(self.cores.free_at.len() - 1);
        let lanes = &self.cores.free_at[node];
        let core = earliest(lanes);
        let start = ready.max(self.now).max(lanes[core]);
        let running = lanes.iter().filter(|&&t| t > start).count();
        let spinning = self.ranks_on_cpu(node, issuer.as_slice());
        let runnable = (spinning + running + 1) as f64;
        let stretch = (runnable / lanes.len() as f64).max(1.0);
        let end = start + (cost as f64 * stretch).round() as u64;
        self.cores.free_at[node][core] = end;
        (start, end)
    }

    /// The ranks of `node` on the CPU (computing or busy-polling), but for those in `except`.
    fn ranks_on_cpu(&self, node: usize, except: &[Rank]) -> usize {
        self.ranks
            .iter()
            .enumerate()
            .filter(|&(r, st)| {
                st.node as usize == node && !except.contains(&(r as Rank)) && on_cpu(st.block)
            })
            .count()
    }

    /// How long rank `woken`, asleep until `waker` released what it waited for (the client
    /// file lock), waits for a core of `node`: `nodes.wakeup_slice_ns` per thread runnable
    /// beyond the node's cores, the runnable being its other ranks on the CPU, the waker (it
    /// runs on) and the woken rank. 0 without the slice or with `cores` 0 (one per rank).
    pub(super) fn wakeup_delay(&self, node: u32, waker: Rank, woken: Rank) -> u64 {
        let n = &self.sys.nodes;
        if n.wakeup_slice_ns == 0 || n.cores == 0 {
            return 0;
        }
        let runnable = self.ranks_on_cpu(node as usize, &[waker, woken]) + 2;
        n.wakeup_slice_ns * runnable.saturating_sub(n.cores as usize) as u64
    }

    /// Whether the servers' CPU spans also take a core of the node they share.
    pub(super) fn servers_on_node(&self) -> bool {
        self.sys.storage.colocated && self.cores.on()
    }

    /// A colocated server's span of `cost` ns, not before its own thread is free at
    /// `thread_free`: (start, end) on the server node's cores.
    pub(super) fn server_span_on_node(&mut self, thread_free: u64, cost: u64) -> (u64, u64) {
        self.node_cpu(SERVER_NODE, None, thread_free, cost)
    }
}

/// Whether a rank in this state uses a core: computing, or busy-polling in an MPI wait; ranks
/// blocked in I/O, metadata, a sync or a lock sleep in the kernel, and a rank being stepped
/// takes no simulated time.
fn on_cpu(block: Block) -> bool {
    matches!(
        block,
        Block::Compute | Block::WaitAll | Block::Barrier | Block::Exchange
    )
}
