//! Issue 15 item 9, what a FUSE mount's writes cost beyond its rates: the client file lock
//! (file_lock.rs, `nodes.client_file_lock`) and the server's background flush threshold
//! (`storage.cache.background_dirty`, io.rs `kick_flush`) and the wake-up of a lock's waiter on
//! a full node (`nodes.wakeup_slice_ns`, node_cpu.rs `wakeup_delay`). Closed forms on one node of two
//! ranks and one server with a write-back cache (copies at 10 GB/s: 4 KiB in 410 ns; flush and
//! disk at 100 MB/s: 4 KiB in 40,960 ns), 1 µs latency, 1 GB/s, syncs of 1 ms
//! (`testutil::one_server_write_back`). A 4 KiB write alone: its data on the wire 4,096 ns,
//! the latency, the copy, the ack's latency: 6,506 ns.

use super::testutil::{one_server_write_back, rank_ends, write_4k};
use crate::model::System;
use crate::program::{MetaKind, Op};

const WRITE: u64 = 4_096 + 1_000 + 410 + 1_000;
const FLUSH: u64 = 40_960;
const SYNC_OP: u64 = 1_000_000;

fn sync() -> Op {
    Op::Meta {
        file: 0,
        kind: MetaKind::Sync,
    }
}

/// When each rank (both on node 0) finished; files 0 and 1.
fn ends(sys: &System, programs: Vec<Vec<Op>>) -> Vec<u64> {
    rank_ends(sys, programs, 2)
}

/// Two ranks of a node writing one file at once: with the lock, rank 1's write starts when
/// rank 0's ends (2 × 6,506 ns); without it, or on two files, they overlap.
#[test]
fn writes_of_one_file_take_turns() {
    let mut sys = one_server_write_back();
    let same = || vec![vec![write_4k(0, 0)], vec![write_4k(0, 4_096)]];
    let free = ends(&sys, same());
    assert!(free[1] < 2 * WRITE, "{free:?}");
    sys.nodes.client_file_lock = true;
    assert_eq!(ends(&sys, same()), vec![WRITE, 2 * WRITE]);
    let two_files = vec![vec![write_4k(0, 0)], vec![write_4k(1, 0)]];
    assert_eq!(ends(&sys, two_files), free);
}

/// A sync holds the lock: rank 1's write, asked for 1 ns after rank 0's write ended, waits for
/// rank 0's sync (its request's latency, the flush of the 4 KiB that started at the write's
/// arrival, 5,096 ns, the 1 ms commit, the reply's latency) and then takes 6,506 ns.
#[test]
fn a_sync_holds_the_lock() {
    let mut sys = one_server_write_back();
    let jobs = || {
        vec![
            vec![write_4k(0, 0), sync()],
            vec![Op::Compute { ns: WRITE + 1 }, write_4k(0, 4_096)],
        ]
    };
    let synced = 5_096 + FLUSH + SYNC_OP + 1_000;
    assert_eq!(ends(&sys, jobs()), vec![synced, 2 * WRITE + 1]);
    sys.nodes.client_file_lock = true;
    assert_eq!(ends(&sys, jobs()), vec![synced, synced + WRITE]);
}

/// Three ranks of a 2-core node write one file at once, rank 0 then computes: rank 1, woken by
/// rank 0's release with 2 threads runnable (rank 0, itself), starts at once and ends at
/// 2 × 6,506 ns; rank 2, woken by rank 1's release with 3 runnable (rank 0 computing, rank 1,
/// itself), waits one slice first. With 3 cores, or no slice, none waits.
#[test]
fn a_woken_lock_waiter_waits_a_slice_per_thread_beyond_the_cores() {
    const SLICE: u64 = 10_000;
    const COMPUTE: u64 = 1_000_000;
    let mut sys = one_server_write_back();
    sys.nodes.ranks_per_node = 3;
    sys.nodes.cores = 2;
    sys.nodes.client_file_lock = true;
    sys.nodes.wakeup_slice_ns = SLICE;
    let job = || {
        vec![
            vec![write_4k(0, 0), Op::Compute { ns: COMPUTE }],
            vec![write_4k(0, 4_096)],
            vec![write_4k(0, 8_192)],
        ]
    };
    let run = |sys: &System| rank_ends(sys, job(), 1);
    assert_eq!(
        run(&sys),
        vec![WRITE + COMPUTE, 2 * WRITE, 2 * WRITE + SLICE + WRITE]
    );
    let unhurried = vec![WRITE + COMPUTE, 2 * WRITE, 3 * WRITE];
    sys.nodes.cores = 3;
    assert_eq!(run(&sys), unhurried);
    sys.nodes.cores = 2;
    sys.nodes.wakeup_slice_ns = 0;
    assert_eq!(run(&sys), unhurried);
}

/// Below `background_dirty` the flush waits for the sync: it starts when the sync reaches the
/// server (6,506 + 1,000 ns) instead of when the write arrived (5,096 ns).
#[test]
fn the_flush_waits_for_the_background_threshold_or_a_sync() {
    let mut sys = one_server_write_back();
    let job = || vec![vec![write_4k(0, 0), sync()]];
    assert_eq!(ends(&sys, job()), vec![5_096 + FLUSH + SYNC_OP + 1_000]);
    sys.storage.cache.background_dirty = 1 << 20;
    assert_eq!(
        ends(&sys, job()),
        vec![WRITE + 1_000 + FLUSH + SYNC_OP + 1_000]
    );
    // Above the threshold the flush starts at once again.
    sys.storage.cache.background_dirty = 1_024;
    assert_eq!(ends(&sys, job()), vec![5_096 + FLUSH + SYNC_OP + 1_000]);
}
