//! Issue 15 item 9, the node's CPU (node_cpu.rs): closed forms on one node with one core, one
//! server with a write-back cache (copies at 10 GB/s: 4 KiB in 410 ns), 1 µs latency, 1 GB/s
//! (`testutil::system`). A 4 KiB write without node CPU: its data on the wire 4,096 ns, the
//! latency, the copy, the ack's latency: 6,506 ns.

use super::testutil::{one_server_write_back, rank_ends, write_4k};
use crate::model::System;
use crate::program::Op;

const WRITE: u64 = 4_096 + 1_000 + 410 + 1_000;

fn node_with_one_core() -> System {
    let mut sys = one_server_write_back();
    sys.nodes.cores = 1;
    sys.nodes.client_cpu_per_request_ns = 10_000;
    sys
}

fn write(offset: u64) -> Op {
    write_4k(0, offset)
}

/// When each rank (two, both on node 0) finished.
fn ends(sys: &System, programs: Vec<Vec<Op>>) -> Vec<u64> {
    rank_ends(sys, programs, 1)
}

/// Two ranks writing at once take the one core in turn: rank 0's client CPU is [0, 10 µs],
/// rank 1's [10, 20 µs] (rank 0 sleeps in its write, so it does not slow rank 1's). A per-byte
/// cost adds 4,096 B / 4.096 GB/s = 1 µs per buffer.
#[test]
fn writers_share_the_core() {
    let mut sys = node_with_one_core();
    let both = || vec![vec![write(0)], vec![write(4_096)]];
    assert_eq!(ends(&sys, both()), vec![10_000 + WRITE, 20_000 + WRITE]);
    sys.nodes.client_cpu_bandwidth = 4.096e9;
    assert_eq!(ends(&sys, both()), vec![11_000 + WRITE, 22_000 + WRITE]);
    // Two cores: both at once.
    sys.nodes.cores = 2;
    sys.nodes.client_cpu_bandwidth = 0.0;
    let e = ends(&sys, both());
    assert!(e[0] >= 10_000 + WRITE && e[1] < 20_000 + WRITE, "{e:?}");
}

/// A rank computing (or busy-polling in an MPI wait) on the one core halves the client's
/// share: 10 µs of CPU take 20 µs. With the server colocated (5 µs per request), its CPU and
/// its copy run on the node's core at the same half speed: arrival at 20,000 + 4,096 + 1,000,
/// 10,000 of server CPU, 820 of copy, the ack.
#[test]
fn a_busy_rank_slows_the_client_and_a_colocated_server() {
    let mut sys = node_with_one_core();
    // Rank 0 starts computing before rank 1 writes (ranks are stepped in order).
    let busy = || vec![vec![Op::Compute { ns: 1_000_000 }], vec![write(0)]];
    assert_eq!(ends(&sys, busy()), vec![1_000_000, 20_000 + WRITE]);
    sys.storage.cpu_per_request_ns = 5_000;
    sys.storage.colocated = true;
    let e = ends(&sys, busy());
    assert_eq!(
        e,
        vec![1_000_000, 20_000 + 4_096 + 1_000 + 10_000 + 820 + 1_000]
    );
    // Not colocated: the server's own CPU, at full speed.
    sys.storage.colocated = false;
    assert_eq!(ends(&sys, busy()), vec![1_000_000, 20_000 + 5_000 + WRITE]);
}

/// Costs of 0 and servers of their own: no node CPU, the run as before.
#[test]
fn off_by_default() {
    let mut sys = node_with_one_core();
    sys.nodes.client_cpu_per_request_ns = 0;
    assert_eq!(
        ends(&sys, vec![vec![write(0)], vec![Op::Compute { ns: 1_000 }]]),
        vec![WRITE, 1_000]
    );
}
