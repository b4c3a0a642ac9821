//! Issue 15 item 8 (a calibration that fits): closed forms of the rates that depend on the
//! situation, on `testutil`'s system (intra-node 100 ns and 10 GB/s, eager limit 64 KiB,
//! 1 GB/s NICs with 1 µs latency, 100 MB/s SSDs without latency): intra-node messages by
//! size and on oversubscribed nodes, disk reads at their own rates, a shared disk bandwidth,
//! large disk requests at their own rate.

use super::testutil::{call, system, Log};
use super::{run, RunSummary};
use crate::model::{SizeFactor, System};
use crate::program::{IoKind, Job, Op};

fn go(sys: &System, programs: Vec<Vec<Op>>) -> (RunSummary, Log) {
    let job = Job {
        programs,
        files: vec!["/f0".into()],
        description: "test".into(),
    };
    let mut log = Log::default();
    let s = run(sys, &job, 1, &mut log).expect("run");
    (s, log)
}

fn timed(mut ops: Vec<Op>) -> Vec<Op> {
    ops.insert(0, Op::Begin(Box::new(call(1))));
    ops.push(Op::End);
    ops
}

/// Rank 0 sends `bytes` to rank 1 (both on node 0); the receiver's call ends at the arrival.
fn intra_message(sys: &System, bytes: u64) -> u64 {
    let send = timed(vec![
        Op::Isend {
            to: 1,
            bytes,
            slot: 0,
        },
        Op::WaitAll { slots: vec![0] },
    ]);
    let recv = timed(vec![
        Op::Irecv {
            from: 0,
            bytes,
            slot: 0,
        },
        Op::WaitAll { slots: vec![0] },
    ]);
    let (_, log) = go(sys, vec![send, recv]);
    log.calls(1)[0].1
}

#[test]
fn intra_node_messages_take_the_size_factors_of_their_size() {
    let mut sys = system();
    sys.network.intra_node_size_factors = vec![
        SizeFactor {
            min_size: 0,
            latency: 1.0,
            bandwidth: 1.0,
        },
        SizeFactor {
            min_size: 64 << 10,
            latency: 3.0,
            bandwidth: 0.5,
        },
    ];
    // Eager 10 KB: 10 KB at 10 GB/s = 1 µs, then 100 ns.
    assert_eq!(intra_message(&sys, 10_000), 1_100);
    // Rendezvous 100 KB: request and clear-to-send at 100 ns each (the factors of size 0),
    // 100 KB at 5 GB/s = 20 µs, then 3 × 100 ns.
    assert_eq!(intra_message(&sys, 100_000), 200 + 20_000 + 300);
    // Without factors: 200 + 10 µs + 100.
    sys.network.intra_node_size_factors.clear();
    assert_eq!(intra_message(&sys, 100_000), 200 + 10_000 + 100);
}

#[test]
fn oversubscribed_nodes_copy_at_their_own_rate() {
    let mut sys = system();
    sys.network.intra_node_oversubscribed_bandwidth = 1e9;
    // Two ranks on node 0 with a core each: 10 KB at 10 GB/s.
    assert_eq!(intra_message(&sys, 10_000), 1_100);
    // One core for the two ranks: 10 KB at 1 GB/s = 10 µs, then 100 ns.
    sys.nodes.cores = 1;
    assert_eq!(intra_message(&sys, 10_000), 10_100);
}

fn io(kind: IoKind) -> Vec<Op> {
    timed(vec![Op::Io {
        file: 0,
        kind,
        offset: 0,
        bytes: 1_000_000,
    }])
}

#[test]
fn disk_reads_take_their_own_rates_writes_the_disks() {
    let mut sys = system();
    sys.storage.disk_access.read_bandwidth = 2e8;
    sys.storage.disk_access.read_latency_ns = 50_000;
    // Read of 1 MB: request 1 µs, disk 50 µs + 1 MB at 200 MB/s = 5 ms, data 1 ms, 1 µs.
    let (_, log) = go(&sys, vec![io(IoKind::Read)]);
    assert_eq!(
        log.calls(0)[0].1,
        1_000 + 50_000 + 5_000_000 + 1_000_000 + 1_000
    );
    // Write of 1 MB: rendezvous 2 µs, data 1 ms, 1 µs, disk 1 MB at 100 MB/s = 10 ms, ack 1 µs.
    assert_eq!(
        write_1mb(&sys),
        2_000 + 1_000_000 + 1_000 + 10_000_000 + 1_000
    );
}

/// When rank 0's write of 1 MB ends.
fn write_1mb(sys: &System) -> u64 {
    let (_, log) = go(sys, vec![io(IoKind::Write)]);
    log.calls(0)[0].1
}

#[test]
fn a_shared_disk_bandwidth_overlaps_latencies_and_serializes_transfers() {
    // Ranks 0 and 2 (nodes 0 and 1) read 1 MB each from the one disk of server 0, two lanes,
    // 50 µs latency. Requests arrive at 1 µs; both latencies end at 51 µs.
    let ends = |shared: bool| {
        let mut sys = system();
        sys.storage.server_threads = 2;
        sys.storage.disk = crate::model::Disk::Ssd {
            latency_ns: 50_000,
            bandwidth: 1e8,
            iops: 0.0,
        };
        sys.storage.disk_access.shared_bandwidth = shared;
        let (_, log) = go(&sys, vec![io(IoKind::Read), vec![], io(IoKind::Read)]);
        let mut e = [log.calls(0)[0].1, log.calls(2)[0].1];
        e.sort_unstable();
        e
    };
    // Lanes at full rate: both disk reads end at 10.051 ms, the 2 MB share the server's NIC
    // (2 ms), then 1 µs.
    assert_eq!(ends(false), [12_052_000, 12_052_000]);
    // Shared: the first transfer ends at 10.051 ms, the second at 20.051 ms; each then 1 MB
    // alone on the NIC (1 ms) and 1 µs.
    assert_eq!(ends(true), [11_052_000, 21_052_000]);
}

#[test]
fn large_disk_requests_transfer_at_the_large_factor() {
    let mut sys = system();
    sys.storage.disk_access.large_above = 1_000_000;
    sys.storage.disk_access.large_factor = 0.5;
    // Write of 1 MB: rendezvous 2 µs, data 1 ms, 1 µs, disk 1 MB at 50 MB/s = 20 ms, ack 1 µs.
    assert_eq!(
        write_1mb(&sys),
        2_000 + 1_000_000 + 1_000 + 20_000_000 + 1_000
    );
    // Below the size the disk's rate: 10 ms.
    sys.storage.disk_access.large_above = 1_000_001;
    assert_eq!(
        write_1mb(&sys),
        2_000 + 1_000_000 + 1_000 + 10_000_000 + 1_000
    );
}
