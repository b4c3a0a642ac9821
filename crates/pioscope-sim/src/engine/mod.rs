//! The discrete-event engine: runs a [`Job`] on a [`System`] and reports what happened to a
//! [`Recorder`]. A small public API ([`run`], [`RunSummary`], [`SimError`]) over a private
//! engine, as SimGrid's s4u over its kernel.
//!
//! Design: single-threaded; one event queue ordered by (time, sequence) so ties run in
//! scheduling order and a run is deterministic; ranks are state machines stepping through their
//! `Op`s until one blocks; every table is a `Vec` indexed by rank, message, request, server or
//! flow id (slabs with free lists), so the per-event path does not allocate once the tables have
//! grown. The equations are in docs/MODEL.md, section "Engine".
//!
//! Files by role: `queue` (events), `ranks` (stepping, slots, Begin/End, barrier), `messages`
//! (MPI point-to-point: matching, eager, rendezvous), `io` (client requests through network,
//! server CPU, caches and disks; metadata; sync; flush), `client_cache` (the compute nodes'
//! write-back caches), `locks` (byte-range locks), `exchange` (dense all-to-alls simulated in
//! aggregate), `lustre_client` (RPC windows, extent locks, read-ahead of a node's Lustre
//! client), `jitter` (the model's seeded variance of transfer and disk times), `server_cpu`
//! (server CPU time taken and reported). Beneath them the machine's parts:
//! `network` (flow-level bandwidth sharing) and `storage` (striping, servers, caches, disks).

mod client_cache;
mod exchange;
mod file_lock;
mod io;
mod jitter;
mod locks;
mod lustre_client;
mod messages;
pub mod network;
mod node_cpu;
mod queue;
mod ranks;
mod server_cpu;
mod slab;
pub mod storage;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_calibfit;
#[cfg(test)]
mod tests_clientcache;
#[cfg(test)]
mod tests_fuse;
#[cfg(test)]
mod tests_listio;
#[cfg(test)]
mod tests_lustre;
#[cfg(test)]
mod tests_nodecpu;
#[cfg(test)]
mod tests_serverstore;
#[cfg(test)]
mod tests_variance;
#[cfg(test)]
pub(crate) mod testutil;

use std::fmt;

use crate::engine::jitter::Jitter;
use crate::engine::network::{FlowNet, LinkId, Reschedule};
use crate::engine::storage::cache::{ReadCache, WriteBack};
use crate::engine::storage::disk::{transfer_ns, VolumeQueue};
use crate::engine::storage::layout::Striping;
use crate::engine::storage::server::Server;
use crate::model::{LayoutKind, Placement, System};
use crate::program::{FileId, Job, Op, Rank, Recorder};

use queue::{Ev, Queue};

/// What a run produced besides the recorded activity.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunSummary {
    /// When the last rank finished (ns since the start).
    pub end_ns: u64,
    /// Engine events processed (each flow completion is one).
    pub events: u64,
    /// When each rank finished its program.
    pub rank_end_ns: Vec<u64>,
    /// MPI messages sent (those an aggregated exchange stands for included).
    pub messages: u64,
    /// Aggregated exchanges (`Op::Exchange`) completed, each counted once for the job.
    pub exchanges: u64,
    /// Requests sent to servers: one per target (server and disk) per access.
    pub requests: u64,
    /// Flow buffers the servers served those requests in (`storage.max_request` bytes at most
    /// each): what their CPU and storage accesses are counted by.
    pub flow_buffers: u64,
    /// Network flows started (transfers above the bandwidth-delay product).
    pub flows: u64,
    /// Transfers between machines up to the bandwidth-delay product (NIC reservations).
    pub small_transfers: u64,
    /// Max-min recomputations (each over one connected component).
    pub recomputations: u64,
}

/// What a rank is blocked on when a run cannot go on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Waiting {
    /// The rank.
    pub rank: Rank,
    /// Index of the op it is blocked in.
    pub op: usize,
    /// What it waits for, in words.
    pub on: String,
}

impl fmt::Display for Waiting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "rank {} (op {}) waits {}", self.rank, self.op, self.on)
    }
}

/// Why a job cannot run (or stopped).
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// More ranks than the nodes hold.
    #[error(
        "the job has {ranks} ranks but the system holds {nodes} nodes x {per_node} ranks per node"
    )]
    TooManyRanks {
        /// Ranks of the job.
        ranks: usize,
        /// Nodes of the system.
        nodes: u32,
        /// Ranks per node.
        per_node: u32,
    },
    /// An op names a file the job does not have.
    #[error("rank {rank}, op {op}: file {file} does not exist (the job has {files} files)")]
    NoSuchFile {
        /// The rank.
        rank: Rank,
        /// Index of the op in the rank's program.
        op: usize,
        /// The file it names.
        file: FileId,
        /// Files of the job.
        files: usize,
    },
    /// An op names a peer rank the job does not have.
    #[error("rank {rank}, op {op}: peer rank {peer} does not exist (the job has {ranks} ranks)")]
    NoSuchRank {
        /// The rank.
        rank: Rank,
        /// Index of the op in the rank's program.
        op: usize,
        /// The peer it names.
        peer: Rank,
        /// Ranks of the job.
        ranks: usize,
    },
    /// WaitAll on a slot no Isend/Irecv started (or already waited for).
    #[error("rank {rank}, op {op}: waits on slot {slot}, which was never started")]
    SlotNotStarted {
        /// The rank.
        rank: Rank,
        /// Index of the op in the rank's program.
        op: usize,
        /// The slot.
        slot: u32,
    },
    /// Isend/Irecv on a slot still in use.
    #[error("rank {rank}, op {op}: starts slot {slot}, which is in use and not waited for")]
    SlotBusy {
        /// The rank.
        rank: Rank,
        /// Index of the op in the rank's program.
        op: usize,
        /// The slot.
        slot: u32,
    },
    /// End without a Begin, or a program ending inside a Begin.
    #[error("rank {rank}, op {op}: Begin/End do not pair up")]
    Unbalanced {
        /// The rank.
        rank: Rank,
        /// Index of the op in the rank's program.
        op: usize,
    },
    /// Unlock of a range the rank does not hold.
    #[error(
        "rank {rank}, op {op}: unlocks file {file} [{offset}, +{bytes}), which it does not hold"
    )]
    NotLocked {
        /// The rank.
        rank: Rank,
        /// Index of the op in the rank's program.
        op: usize,
        /// The file.
        file: FileId,
        /// Start of the range it unlocks.
        offset: u64,
        /// Length of the range it unlocks.
        bytes: u64,
    },
    /// The model cannot run this job.
    #[error("the system model cannot run this job: {0}")]
    Model(String),
    /// Nothing left to happen but ranks are still blocked.
    #[error("deadlock at {time_ns} ns: {} rank(s) blocked: {}", .waiting.len(), list(.waiting))]
    Deadlock {
        /// Simulated time when the queue ran empty.
        time_ns: u64,
        /// The blocked ranks and what each waits for.
        waiting: Vec<Waiting>,
    },
}

/// The first few waiting ranks, for the deadlock message.
fn list(w: &[Waiting]) -> String {
    let mut s: Vec<String> = w.iter().take(8).map(|x| x.to_string()).collect();
    if w.len() > 8 {
        s.push(format!("and {} more", w.len() - 8));
    }
    s.join("; ")
}

/// Runs `job` on `system` and reports every call, server request and disk access to
/// `recorder`. Same inputs and seed, same sequence of recorder calls. The seed draws the
/// model's `[variance]` (engine/jitter.rs); without it the seed changes nothing.
pub fn run(
    system: &System,
    job: &Job,
    seed: u64,
    recorder: &mut dyn Recorder,
) -> Result<RunSummary, SimError> {
    let mut sim = Sim::new(system, job, seed, recorder)?;
    sim.validate()?;
    sim.main_loop()?;
    Ok(sim.summary())
}

/// Function ids of the activity the engine records (functions.def).
#[derive(Clone, Copy, Debug)]
struct Funcs {
    server_read: u16,
    server_write: u16,
    server_create: u16,
    server_open: u16,
    server_close: u16,
    server_stat: u16,
    server_remove: u16,
    server_sync: u16,
    server_lock: u16,
    server_flush: u16,
    disk_read: u16,
    disk_write: u16,
}

impl Funcs {
    fn lookup() -> Funcs {
        let id = |name: &str, fallback: u16| {
            pioscope_trace::functions::by_name(name)
                .map(|f| f.id)
                .unwrap_or(fallback)
        };
        Funcs {
            server_read: id("server_read", 700),
            server_write: id("server_write", 701),
            server_create: id("server_create", 702),
            server_open: id("server_open", 703),
            server_close: id("server_close", 704),
            server_stat: id("server_stat", 705),
            server_remove: id("server_remove", 706),
            server_sync: id("server_sync", 707),
            server_lock: id("server_lock", 708),
            server_flush: id("server_flush", 709),
            disk_read: id("disk_read", 800),
            disk_write: id("disk_write", 801),
        }
    }
}

/// The engine's state. Methods live in the role files (ranks.rs, messages.rs, io.rs, locks.rs).
struct Sim<'a> {
    sys: &'a System,
    job: &'a Job,
    /// The network's variance of transfer times.
    net_jitter: Jitter,
    rec: &'a mut dyn Recorder,
    f: Funcs,
    now: u64,
    q: Queue,
    events: u64,
    // Network.
    net: FlowNet,
    /// Up and down NIC link of each endpoint (compute nodes, then servers).
    up: Vec<LinkId>,
    down: Vec<LinkId>,
    bisection: Option<LinkId>,
    reschedule: Vec<Reschedule>,
    flows_started: u64,
    /// Transfers up to this size (the bandwidth-delay product) are not flows.
    small_limit: u64,
    /// When each endpoint's NIC is free of small transfers, up and down; the switch's.
    up_free: Vec<u64>,
    down_free: Vec<u64>,
    switch_free: u64,
    small_transfers: u64,
    // Ranks.
    ranks: Vec<ranks::RankState>,
    barrier: ranks::BarrierState,
    /// Per node: the resume delay of a rank after a blocking wait (nonzero only on nodes
    /// running more ranks than they have cores: `nodes.handoff_ns`).
    handoff: Vec<u64>,
    /// The largest of them: what a collective of every rank (Barrier, Exchange) waits for.
    handoff_all: u64,
    /// Per node: it runs more ranks than `nodes.cores` (its copies between ranks take
    /// `network.intra_node_oversubscribed_bandwidth`).
    oversubscribed: Vec<bool>,
    /// Per rank: when the copies of intra-node messages into it are done (the receiver's CPU
    /// copies them one after another).
    copy_free: Vec<u64>,
    exchange: exchange::ExchangeState,
    finished: usize,
    /// A rank is being stepped: wake-ups of other ranks go through the queue.
    stepping: bool,
    // Messages.
    msgs: messages::Messages,
    // I/O.
    striping: Option<Striping>,
    servers: Vec<Server>,
    reqs: io::Requests,
    /// Per file, per data server: sequence number of the file's last absorbed write there.
    file_seq: Vec<Vec<u64>>,
    /// Per file: its size, for files the job created (None: it existed before, size unknown).
    /// Reads past it stop at the end of the file, as a read past EOF returns short at once.
    file_size: Vec<Option<u64>>,
    locks: locks::Locks,
    /// The nodes' client locks of files (`nodes.client_file_lock`).
    file_locks: file_lock::FileLocks,
    /// The nodes' Lustre clients (lustre layout with a `[lustre]` table).
    lustre: Option<lustre_client::LustreClient>,
    /// The compute nodes' write-back caches (none unless the model has `[client_cache]`).
    client: client_cache::ClientCaches,
    /// The compute nodes' cores (none unless the model charges CPU to them).
    cores: node_cpu::NodeCores,
}

impl<'a> Sim<'a> {
    fn new(
        sys: &'a System,
        job: &'a Job,
        seed: u64,
        rec: &'a mut dyn Recorder,
    ) -> Result<Sim<'a>, SimError> {
        let nranks = job.programs.len();
        let capacity = sys.nodes.count as u64 * sys.nodes.ranks_per_node as u64;
        if nranks as u64 > capacity {
            return Err(SimError::TooManyRanks {
                ranks: nranks,
                nodes: sys.nodes.count,
                per_node: sys.nodes.ranks_per_node,
            });
        }
        let n = &sys.network;
        // Written so that NaN is refused too.
        let positive = |x: f64| x > 0.0;
        if !positive(n.bandwidth) || !positive(n.intra_node_bandwidth) {
            return Err(SimError::Model(
                "network bandwidths must be positive".into(),
            ));
        }
        let st = &sys.storage;
        let nservers = st.data_servers
            + if st.metadata_on_data_servers {
                0
            } else {
                st.metadata_servers
            };
        let mut net = FlowNet::new();
        let endpoints = sys.nodes.count + nservers;
        let mut up = Vec::with_capacity(endpoints as usize);
        let mut down = Vec::with_capacity(endpoints as usize);
        for _ in 0..endpoints {
            up.push(net.add_link(n.bandwidth));
            down.push(net.add_link(n.bandwidth));
        }
        let bisection = (n.bisection_bandwidth > 0.0).then(|| net.add_link(n.bisection_bandwidth));
        let max_access = st.volume.max_access_or(st.max_request);
        let limit = if st.cache.write_back == 0 {
            0
        } else {
            st.cache.dirty_limit.min(st.cache.write_back).max(1)
        };
        let servers = (0..nservers)
            .map(|_| {
                Server::new(
                    st.disks_per_server.max(1),
                    VolumeQueue::of(st),
                    WriteBack::new(limit, max_access),
                    ReadCache::new(st.cache.read_cache),
                )
                .with_threads(st.server_threads)
            })
            .collect();
        let servers = jitter::seed_disks(servers, &sys.variance, seed);
        let ranks = (0..nranks as u32)
            .map(|r| {
                let node = match sys.nodes.placement {
                    Placement::Block => r / sys.nodes.ranks_per_node.max(1),
                    Placement::RoundRobin => r % sys.nodes.count.max(1),
                };
                ranks::RankState::new(node)
            })
            .collect::<Vec<_>>();
        let oversubscribed = ranks::oversubscribed(sys, &ranks);
        let handoff = ranks::handoffs(sys, &oversubscribed);
        let nodes_used = ranks.iter().map(|x| x.node as usize + 1).max().unwrap_or(0);
        let client = client_cache::ClientCaches::new(sys, nodes_used);
        let cores = node_cpu::NodeCores::new(sys, nodes_used);
        let handoff_all = handoff.iter().copied().max().unwrap_or(0);
        Ok(Sim {
            sys,
            job,
            net_jitter: Jitter::network(&sys.variance, seed, n.bandwidth),
            rec,
            f: Funcs::lookup(),
            now: 0,
            q: Queue::default(),
            events: 0,
            net,
            up,
            down,
            bisection,
            reschedule: Vec::new(),
            flows_started: 0,
            small_limit: (n.bandwidth * n.latency_ns as f64 * 1e-9) as u64,
            up_free: vec![0; endpoints as usize],
            down_free: vec![0; endpoints as usize],
            switch_free: 0,
            small_transfers: 0,
            ranks,
            barrier: ranks::BarrierState::default(),
            handoff,
            handoff_all,
            oversubscribed,
            copy_free: vec![0; nranks],
            exchange: exchange::ExchangeState::default(),
            finished: 0,
            stepping: false,
            msgs: messages::Messages::default(),
            striping: Striping::new(sys),
            servers,
            reqs: io::Requests::default(),
            file_seq: vec![Vec::new(); job.files.len()],
            file_size: vec![None; job.files.len()],
            locks: locks::Locks::new(job.files.len()),
            file_locks: file_lock::FileLocks::default(),
            lustre: match (&sys.lustre, sys.layout.kind) {
                (Some(model), LayoutKind::Lustre) => Some(lustre_client::LustreClient::new(model)),
                _ => None,
            },
            client,
            cores,
        })
    }

    /// Checks every op's files and peers, and that the model has what the ops need.
    fn validate(&self) -> Result<(), SimError> {
        let files = self.job.files.len();
        let nranks = self.job.programs.len();
        for (r, prog) in self.job.programs.iter().enumerate() {
            let rank = r as Rank;
            for (op, o) in prog.iter().enumerate() {
                let file = match o {
                    Op::IoList(list) => Some(list.file),
                    Op::Io { file, .. }
                    | Op::Meta { file, .. }
                    | Op::Lock { file, .. }
                    | Op::Unlock { file, .. } => Some(*file),
                    Op::Isend { to: peer, .. } | Op::Irecv { from: peer, .. } => {
                        if *peer as usize >= nranks {
                            return Err(SimError::NoSuchRank {
                                rank,
                                op,
                                peer: *peer,
                                ranks: nranks,
                            });
                        }
                        None
                    }
                    _ => None,
                };
                if let Some(file) = file {
                    if file as usize >= files {
                        return Err(SimError::NoSuchFile {
                            rank,
                            op,
                            file,
                            files,
                        });
                    }
                }
                match o {
                    Op::Io { .. } | Op::IoList(_) if self.striping.is_none() => {
                        return Err(SimError::Model(
                            "I/O needs data servers and a stripe size above 0".into(),
                        ))
                    }
                    Op::Meta { .. } | Op::Lock { .. } | Op::Unlock { .. }
                        if self.servers.is_empty() =>
                    {
                        return Err(SimError::Model("metadata operations need a server".into()))
                    }
                    _ => {}
                }
            }
        }
        Ok(())
    }

    /// Steps every rank at time 0, then processes events until none is left.
    fn main_loop(&mut self) -> Result<(), SimError> {
        for r in 0..self.ranks.len() {
            self.step(r as Rank)?;
        }
        loop {
            // Rates are recomputed once everything at this instant has happened.
            if self.net.needs_settle()
                && self.q.peek_time().is_none_or(|t| t > self.now)
                && self.net.next_finish().is_none_or(|t| t > self.now)
            {
                self.settle();
                continue;
            }
            // The next event: the queue's or the network's next flow completion (the queue
            // first on a tie).
            let tq = self.q.peek_time();
            let tn = self.net.next_finish();
            let ev = match (tq, tn) {
                (None, None) => break,
                (Some(q), Some(n)) if n < q => self.take_flow(n),
                (None, Some(n)) => self.take_flow(n),
                _ => {
                    let Some((t, ev)) = self.q.pop() else { break };
                    debug_assert!(t >= self.now);
                    self.now = t;
                    ev
                }
            };
            self.events += 1;
            self.handle(ev)?;
        }
        if self.finished < self.ranks.len() {
            return Err(SimError::Deadlock {
                time_ns: self.now,
                waiting: self.waiting(),
            });
        }
        Ok(())
    }

    fn handle(&mut self, ev: Ev) -> Result<(), SimError> {
        match ev {
            Ev::Resume(r) => self.resume(r),
            Ev::FlowDone { flow, .. } => {
                let token = self.net.finish(self.now, flow);
                self.flow_done(token)
            }
            Ev::Transferred(token) => self.flow_done(token),
            Ev::LaneHead(_) => Ok(()), // resolved inside the queue, never popped
            Ev::SendLeft(m) => self.send_left(m),
            Ev::MsgArrive(m) => self.msg_arrive(m),
            Ev::RtsArrive(m) => self.rts_arrive(m),
            Ev::CtsArrive(m) => {
                self.cts_arrive(m);
                Ok(())
            }
            Ev::RdvDelivered(m) => self.rdv_delivered(m),
            Ev::BarrierRelease => self.barrier_release(),
            Ev::ReqRdvReady(q) => {
                self.req_send_write(q);
                Ok(())
            }
            Ev::ReqAtServer(q) => {
                self.req_at_server(q);
                Ok(())
            }
            Ev::ReqCpuDone(q) => {
                self.req_cpu_done(q);
                Ok(())
            }
            Ev::ReqServed(q) => {
                self.req_served(q);
                Ok(())
            }
            Ev::ReqDone(q) => self.req_done(q),
            Ev::FlushDone(s) => {
                self.flush_done(s);
                Ok(())
            }
            Ev::MetaAtServer(r) => {
                self.meta_at_server(r);
                Ok(())
            }
            Ev::MetaServed(r) => {
                self.meta_served(r);
                Ok(())
            }
            Ev::SyncAtServer { rank, server } => {
                self.sync_at_server(rank, server);
                Ok(())
            }
            Ev::PartDone(r) => self.part_done(r),
            Ev::LockAtServer(r) => {
                self.lock_at_server(r);
                Ok(())
            }
            Ev::UnlockAtServer(r) => self.unlock_at_server(r),
            Ev::Lustre(ev) => {
                self.lustre_event(ev);
                Ok(())
            }
            Ev::ClientFlush(node) => {
                self.client_flush(node);
                Ok(())
            }
        }
    }

    /// Recomputes the network's rates (the network keeps its flows' completion times).
    fn settle(&mut self) {
        let mut out = std::mem::take(&mut self.reschedule);
        out.clear();
        self.net.settle(self.now, &mut out);
        self.reschedule = out;
    }

    /// The network's next flow completes at `t`: advance to it.
    fn take_flow(&mut self, t: u64) -> Ev {
        debug_assert!(t >= self.now);
        self.now = t;
        self.q.advance(t);
        let flow = self.net.next_flow().unwrap_or_default();
        Ev::FlowDone { flow, gen: 0 }
    }

    fn summary(&self) -> RunSummary {
        let rank_end_ns: Vec<u64> = self.ranks.iter().map(|r| r.end_ns).collect();
        RunSummary {
            end_ns: rank_end_ns.iter().copied().max().unwrap_or(0),
            events: self.events,
            rank_end_ns,
            messages: self.msgs.sent + self.exchange.messages,
            exchanges: self.exchange.done,
            requests: self.reqs.sent,
            flow_buffers: self.reqs.buffers,
            flows: self.flows_started,
            small_transfers: self.small_transfers,
            recomputations: self.net.recomputations,
        }
    }

    // ---- network helpers shared by messages and I/O ----

    /// The size factor entry for a message of `bytes` (latency, bandwidth multipliers).
    fn factors(&self, bytes: u64) -> (f64, f64) {
        let mut f = (1.0, 1.0);
        for s in &self.sys.network.size_factors {
            if s.min_size <= bytes {
                f = (s.latency, s.bandwidth);
            } else {
                break;
            }
        }
        f
    }

    /// One-way latency of a `bytes` message between different machines.
    fn latency(&self, bytes: u64) -> u64 {
        let lat = self.sys.network.latency_ns;
        if self.sys.network.size_factors.is_empty() {
            return lat;
        }
        (lat as f64 * self.factors(bytes).0).round() as u64
    }

    /// Endpoint of server `s`.
    fn server_ep(&self, s: u32) -> u32 {
        self.sys.nodes.count + s
    }

    /// Sends `bytes` from endpoint `src` to endpoint `dst` (different machines); `token` comes
    /// back to `flow_done` when the data has gone through. Above the bandwidth-delay product a
    /// max-min shared flow; up to it (latency dominates) a reservation of each NIC in turn.
    fn start_flow(&mut self, src: u32, dst: u32, bytes: u64, token: u64) {
        let bytes = self.net_jitter.stretch(bytes);
        if bytes <= self.small_limit {
            self.small_transfer(src, dst, bytes, token);
            return;
        }
        let mut links = [self.up[src as usize], self.down[dst as usize], 0];
        let mut n = 2;
        if let Some(b) = self.bisection {
            links[2] = b;
            n = 3;
        }
        let bw = self.factors(bytes).1;
        let cap = if bw == 1.0 {
            f64::INFINITY
        } else {
            self.sys.network.bandwidth * bw
        };
        self.net.start(self.now, &links[..n], bytes, cap, token);
        self.flows_started += 1;
    }

    /// A small transfer: each NIC it crosses (source up, the switch, destination down) serves
    /// small transfers one after the other (first come, first served), cut-through: a NIC
    /// starts when the previous one started and ends no earlier than it. Alone, it takes
    /// bytes / bandwidth like a flow; n of them into one NIC end n × bytes / bandwidth apart
    /// instead of together. O(1) per message, and no sharing recomputation: all-to-alls of
    /// small messages stay linear. Small transfers do not see flows and vice versa.
    fn small_transfer(&mut self, src: u32, dst: u32, bytes: u64, token: u64) {
        let bw = self.sys.network.bandwidth * self.factors(bytes).1.min(1.0);
        let busy = transfer_ns(bytes, bw).round() as u64;
        let mut start = self.now.max(self.up_free[src as usize]);
        let mut end = start + busy;
        self.up_free[src as usize] = end;
        if self.bisection.is_some() {
            let bbusy = transfer_ns(bytes, self.sys.network.bisection_bandwidth).round() as u64;
            start = start.max(self.switch_free);
            end = end.max(start + bbusy);
            self.switch_free = start + bbusy;
        }
        start = start.max(self.down_free[dst as usize]);
        end = end.max(start + busy);
        self.down_free[dst as usize] = end;
        self.small_transfers += 1;
        // Ends on one destination NIC never go back (each starts after the previous ended).
        self.q.push_ordered(dst, end, Ev::Transferred(token));
    }

    /// Latency and copy time (ns) of a message of `bytes` between two ranks of `node`
    /// (`Network::intra_node_path`: by the message's size and the node's oversubscription).
    fn intra_node(&self, node: u32, bytes: u64) -> (u64, u64) {
        let (latency, bandwidth) = self
            .sys
            .network
            .intra_node_path(bytes, self.oversubscribed[node as usize]);
        (
            latency.round() as u64,
            transfer_ns(bytes, bandwidth).round() as u64,
        )
    }

    /// When an intra-node copy of `bytes` into rank `dst`, ready now, ends: the receiver's
    /// copies run one after another (first come, first served), so n senders to one rank take
    /// n times as long as one, as with shared-memory MPI where the receiving process copies.
    fn intra_copy_end(&mut self, dst: Rank, bytes: u64) -> u64 {
        let (_, copy) = self.intra_node(self.ranks[dst as usize].node, bytes);
        let free = &mut self.copy_free[dst as usize];
        let end = self.now.max(*free) + copy;
        *free = end;
        end
    }
}

/// Flow tokens: what a finished flow was carrying.
pub(super) mod token {
    /// An eager MPI message's data.
    pub const EAGER: u64 = 1 << 32;
    /// A rendezvous MPI message's data.
    pub const RDV: u64 = 2 << 32;
    /// A write request's data, client to server.
    pub const WRITE: u64 = 3 << 32;
    /// A read request's data, server to client.
    pub const READ: u64 = 4 << 32;
    /// The kind part of a token.
    pub const KIND: u64 = !0xffff_ffff;
}

impl Sim<'_> {
    /// A flow finished: its data left the sender; the arrival follows after the latency.
    fn flow_done(&mut self, token: u64) -> Result<(), SimError> {
        let id = token as u32;
        match token & token::KIND {
            token::EAGER => self.send_left(id),
            token::RDV => {
                let lat = self.latency(self.msgs.get(id).bytes);
                self.q.push(self.now + lat, Ev::RdvDelivered(id));
                Ok(())
            }
            token::WRITE => {
                let lat = self.latency(self.reqs.get(id).piece.bytes);
                self.q.push(self.now + lat, Ev::ReqAtServer(id));
                Ok(())
            }
            _ => {
                let lat = self.latency(self.reqs.get(id).piece.bytes);
                self.q.push(self.now + lat, Ev::ReqDone(id));
                Ok(())
            }
        }
    }
}
