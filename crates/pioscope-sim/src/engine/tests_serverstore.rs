//! Issue 15, server storage as a kernel does it: closed forms on one client and one server
//! with one 100 MB/s SSD (`testutil::system`): the elevator's flush accesses, Sync after an
//! out-of-order flush, and a read cache holding several ranges.

use super::testutil::{call, system, Log, Rec};
use super::{run, RunSummary};
use crate::model::System;
use crate::program::{DiskActivity, IoKind, Job, MetaKind, Op};

const K: u64 = 1024;
const MIB: u64 = 1 << 20;

/// One data server with a 4 MiB stripe (every byte of the file on it).
fn one_server() -> System {
    let mut sys = system();
    sys.storage.data_servers = 1;
    sys.layout.stripe_size = 4 * MIB;
    sys
}

fn go(sys: &System, ops: Vec<Op>) -> (RunSummary, Log) {
    let job = Job {
        programs: vec![ops],
        files: vec!["/f0".into()],
        description: "test".into(),
    };
    let mut log = Log::default();
    let s = run(sys, &job, 1, &mut log).expect("run");
    (s, log)
}

fn io(kind: IoKind, offset: u64, bytes: u64) -> Op {
    Op::Io {
        file: 0,
        kind,
        offset,
        bytes,
    }
}

/// (func, offset, bytes, start, end) of every disk access.
fn disk_accesses(log: &Log) -> Vec<(u16, u64, u64, u64, u64)> {
    log.0
        .iter()
        .filter_map(|r| match r {
            Rec::Disk(DiskActivity {
                func,
                offset,
                bytes,
                start_ns,
                end_ns,
                ..
            }) => Some((*func, *offset, *bytes, *start_ns, *end_ns)),
            _ => None,
        })
        .collect()
}

/// Writes of 64 KiB at 192K, 0, 128K, 64K, one after another, then a Sync. Each write: 64 KiB
/// on the wire (65,536 ns), the latency, a copy into the cache (6,554 ns at 10 GB/s), the ack:
/// 74,090 ns. The flush starts with the first write alone (at 66,536 ns, 655,360 ns on the
/// disk); by its end the other three are dirty, and the elevator, finding nothing above 256K,
/// goes back to 0 and writes them as one access of 192 KiB (FIFO order would have been three).
#[test]
fn flush_merges_writes_made_out_of_order_and_sync_waits_for_all() {
    let mut sys = one_server();
    sys.storage.cache.write_back = 8 * MIB;
    sys.storage.cache.dirty_limit = 4 * MIB;
    sys.storage.cache.flush_rate = 1e8;
    let mut ops: Vec<Op> = [192, 0, 128, 64]
        .iter()
        .map(|&off| io(IoKind::Write, off * K, 64 * K))
        .collect();
    ops.extend([
        Op::Begin(Box::new(call(1))),
        Op::Meta {
            file: 0,
            kind: MetaKind::Sync,
        },
        Op::End,
    ]);
    let (_, log) = go(&sys, ops);
    let first = 65_536 + 1_000;
    let merged_start = first + 655_360;
    let merged_end = merged_start + 3 * 655_360;
    assert_eq!(
        disk_accesses(&log),
        vec![
            (801, 192 * K, 64 * K, first, merged_start),
            (801, 0, 192 * K, merged_start, merged_end),
        ]
    );
    // The Sync (sent at 4 × 74,090 ns) waits for the last access, then the journal commit
    // (1 ms) and the reply.
    assert_eq!(
        log.calls(0),
        vec![(4 * 74_090, merged_end + 1_000_000 + 1_000)]
    );
}

/// Three ranges far apart read from the disk, then read again: all three hit the read cache
/// (one range per stripe would have kept only the last).
#[test]
fn read_cache_holds_several_ranges() {
    let mut sys = one_server();
    sys.storage.cache.read_cache = 8 * MIB;
    let ranges = [0, MIB, 2 * MIB];
    let mut ops: Vec<Op> = ranges
        .iter()
        .map(|&off| io(IoKind::Read, off, 64 * K))
        .collect();
    ops.extend(ops.clone());
    let (_, log) = go(&sys, ops);
    let reads: Vec<u64> = disk_accesses(&log)
        .iter()
        .map(|&(func, offset, ..)| {
            assert_eq!(func, 800);
            offset
        })
        .collect();
    assert_eq!(reads, ranges);
}
