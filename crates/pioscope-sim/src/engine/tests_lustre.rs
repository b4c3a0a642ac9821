//! Closed forms of the Lustre client (issue 15 item 4) on the hand-built system of `testutil`
//! (1 GB/s NICs, 1 µs latency L, eager limit 64 KiB, 100 MB/s SSDs, no server CPU) with a
//! Lustre layout of 1 MiB stripes, one OST per server: RPC windows, extent-lock conflicts, a
//! node's NIC shared by its aggregators, read-ahead; and ROMIO's Lustre aggregator count.

use super::testutil::{call, system, Log};
use super::{RunSummary, Sim};
use crate::model::{AggregatorPlacement, FileDomain, LayoutKind, Lustre, System};
use crate::mpiio::romio::twophase::{aggregators, lustre_write_aggregators};
use crate::mpiio::romio::{rank_nodes, Hints};
use crate::program::{IoKind, Job, MetaKind, Op};

const MIB: u64 = 1 << 20;
/// One-way latency of the test system.
const L: u64 = 1_000;

fn lustre_system(max_rpcs_in_flight: u32, read_ahead: u64) -> System {
    let mut sys = system();
    sys.layout.kind = LayoutKind::Lustre;
    sys.lustre = Some(Lustre {
        max_pages_per_rpc: 256,
        max_rpcs_in_flight,
        extent_locks: true,
        read_ahead,
    });
    sys
}

/// `ops` of one call: the log shows when it started and ended.
fn timed(ops: Vec<Op>) -> Vec<Op> {
    let mut v = vec![Op::Begin(Box::new(call(1)))];
    v.extend(ops);
    v.push(Op::End);
    v
}

fn io(kind: IoKind, offset: u64, bytes: u64) -> Op {
    Op::Io {
        file: 0,
        kind,
        offset,
        bytes,
    }
}

/// Runs `programs`; the summary, the log, and the Lustre client's RPCs and peak in flight.
fn go(sys: &System, programs: Vec<Vec<Op>>) -> (RunSummary, Log, u64, u32) {
    let job = Job {
        programs,
        files: vec!["/f0".into()],
        description: "test".into(),
    };
    let mut log = Log::default();
    let mut sim = Sim::new(sys, &job, 1, &mut log).expect("model");
    sim.validate().expect("job");
    sim.main_loop().expect("run");
    let c = sim.lustre.as_ref().expect("a Lustre client");
    let (rpcs, peak) = (c.rpcs, c.peak_in_flight);
    let s = sim.summary();
    drop(sim);
    (s, log, rpcs, peak)
}

/// One client writes 4 MiB to one OST: 4 RPCs of 256 × 4 KiB. One in flight: each RPC is
/// a rendezvous round trip, 1 MiB at 1 GB/s, L, 1 MiB at 100 MB/s on the disk, the ack (L),
/// after the lock enqueue's round trip.
#[test]
fn rpc_window_of_one_serializes_the_rpcs() {
    let mut sys = lustre_system(1, 0);
    sys.storage.data_servers = 1;
    let (s, log, rpcs, peak) = go(&sys, vec![timed(vec![io(IoKind::Write, 0, 4 * MIB)])]);
    assert_eq!((s.requests, rpcs, peak), (4, 4, 1));
    let rpc = 2 * L + MIB + L + 10_485_760 + L;
    assert_eq!(log.calls(0), vec![(0, 2 * L + 4 * rpc)]);
}

/// The same with 2 in flight: never more than 2 RPCs (2 MiB) in flight; the first two share
/// the NIC, the disk serves all four back to back.
#[test]
fn rpc_window_of_two_keeps_two_mib_in_flight() {
    let mut sys = lustre_system(2, 0);
    sys.storage.data_servers = 1;
    let (s, log, rpcs, peak) = go(&sys, vec![timed(vec![io(IoKind::Write, 0, 4 * MIB)])]);
    assert_eq!((s.requests, rpcs, peak), (4, 4, 2));
    assert!(u64::from(peak) * 256 * 4096 <= 2 * MIB);
    // Lock (2L), rendezvous (2L), 2 MiB through the NIC, L: the disk then runs 4 × 1 MiB.
    let at_disk = 4 * L + 2 * MIB + L;
    assert_eq!(log.calls(0), vec![(0, at_disk + 4 * 10_485_760 + L)]);
}

/// Two clients (nodes 0 and 1) write 4 KiB each in the same stripe. Rank 0 locks the whole
/// object (2L) and writes: 4096 ns on the NIC, L, 40,960 ns on the disk, L. Rank 2 starts at
/// 100 µs: its enqueue conflicts with node 0's lock: callback (L) and cancel (L) before the
/// grant: 4L before its data goes, against none for a rank of node 0 holding the lock.
#[test]
fn lock_conflict_costs_a_callback_round_trip() {
    let sys = lustre_system(8, 0);
    let write = 4_096 + L + 40_960 + L;
    let first = timed(vec![io(IoKind::Write, 0, 4_096)]);
    let later = |peer: usize| {
        let mut p = vec![first.clone(), vec![], vec![]];
        p[peer] = vec![Op::Compute { ns: 100_000 }];
        p[peer].extend(timed(vec![io(IoKind::Write, 4_096, 4_096)]));
        p
    };
    // Rank 2 on node 1: a conflict.
    let (_, log, _, _) = go(&sys, later(2));
    assert_eq!(log.calls(0), vec![(0, 2 * L + write)]);
    assert_eq!(log.calls(2), vec![(100_000, 100_000 + 4 * L + write)]);
    // Rank 1 on node 0: its node holds the lock.
    let (_, log, _, _) = go(&sys, later(1));
    assert_eq!(log.calls(1), vec![(100_000, 100_000 + write)]);
}

/// The conflict while the holder's write is in flight: the holder cancels only once that
/// RPC is done (its dirty pages flushed), at 2L + write; then the cancel (L) and the grant
/// (L); the disk is free by then.
#[test]
fn lock_conflict_waits_for_the_holders_rpcs() {
    let sys = lustre_system(8, 0);
    let write = 4_096 + L + 40_960 + L;
    let mut late = vec![Op::Compute { ns: 3 * L }];
    late.extend(timed(vec![io(IoKind::Write, 4_096, 4_096)]));
    let (_, log, _, _) = go(
        &sys,
        vec![timed(vec![io(IoKind::Write, 0, 4_096)]), vec![], late],
    );
    let granted = 2 * L + write + 2 * L;
    assert_eq!(log.calls(2), vec![(3 * L, granted + write)]);
}

/// Two aggregators of one node write 1 MiB each to two OSTs: their flows share the node's
/// 1 GB/s link (2 MiB through it), against 1 MiB each from two nodes.
#[test]
fn aggregators_of_one_node_share_its_nic() {
    let sys = lustre_system(8, 0);
    let program = |offset| timed(vec![io(IoKind::Write, offset, MIB)]);
    let tail = L + 10_485_760 + L;
    let (_, log, _, _) = go(&sys, vec![program(0), program(MIB)]);
    let shared = 4 * L + 2 * MIB + tail;
    assert_eq!(log.calls(0), vec![(0, shared)]);
    assert_eq!(log.calls(1), vec![(0, shared)]);
    let (_, log, _, _) = go(&sys, vec![program(0), vec![], program(MIB)]);
    assert_eq!(log.calls(2), vec![(0, 4 * L + MIB + tail)]);
}

/// Read-ahead of 2 MiB on a file of 8 MiB the job wrote (8 RPCs): the first read fetches its
/// 1 MiB; the second, sequential, fetches its 1 MiB and 2 MiB more (3 RPCs); the third is
/// held: no RPC, no time.
#[test]
fn sequential_reads_read_ahead() {
    let sys = lustre_system(8, 2 * MIB);
    let mut ops = vec![
        Op::Meta {
            file: 0,
            kind: MetaKind::Create,
        },
        io(IoKind::Write, 0, 8 * MIB),
    ];
    ops.extend((0..3).flat_map(|i| timed(vec![io(IoKind::Read, i * MIB, MIB)])));
    let (s, log, rpcs, _) = go(&sys, vec![ops]);
    assert_eq!((s.requests, rpcs), (8 + 4, 8 + 4));
    let calls = log.calls(0);
    assert_eq!(calls[2].0, calls[2].1);
    assert!(calls[1].1 - calls[1].0 > calls[0].1 - calls[0].0);
}

/// ROMIO's Lustre driver keeps stripe_count × co_ratio of the aggregators for writes: the
/// first four of 16 candidates (4 nodes × 4 ranks, `*:4`) on 4 OSTs: one node's with blocked
/// placement, one per node with round-robin; a divisor of stripe_count with fewer.
#[test]
fn lustre_driver_keeps_stripe_count_aggregators() {
    let mut sys = lustre_system(8, 0);
    sys.nodes.ranks_per_node = 4;
    sys.storage.data_servers = 2;
    sys.storage.disks_per_server = 2;
    sys.mpiio.cb_per_node = 4;
    sys.mpiio.file_domain = FileDomain::StripeAligned;
    sys.mpiio.lustre_co_ratio = 1;
    let nodes = rank_nodes(&sys, 16).expect("placement");
    let mut h = Hints::from_system(&sys);
    let keep = |h: &Hints| lustre_write_aggregators(aggregators(&nodes, h), h);
    assert_eq!(keep(&h), vec![0, 1, 2, 3]);
    h.mpiio.aggregator_placement = AggregatorPlacement::RoundRobin;
    assert_eq!(keep(&h), vec![0, 4, 8, 12]);
    h.mpiio.lustre_co_ratio = 2;
    assert_eq!(keep(&h).len(), 8);
    // 3 candidates, 8 stripes: the largest divisor of 8 ROMIO finds not above 3 is 2.
    h.mpiio.cb_nodes = 3;
    h.stripe_count = 8;
    assert_eq!(keep(&h), vec![0, 4]);
    // Off: every candidate.
    h.mpiio.lustre_co_ratio = 0;
    assert_eq!(keep(&h).len(), 3);
}
