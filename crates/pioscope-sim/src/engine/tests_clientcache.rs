//! Client write-back cache (client_cache.rs) in closed form: one client, one data server (a
//! 100 MB/s SSD, written through), 1 GB/s NICs with 1 µs latency, 1 MiB stripes; the client
//! copies at 10 GB/s and flushes at 10 MB/s at most, one 1 MiB chunk at a time.

use super::testutil::{call, system, Log, Rec};
use super::{run, RunSummary};
use crate::model::System;
use crate::program::{IoKind, Job, MetaKind, Op};

const MIB: u64 = 1 << 20;
/// Copy of 1 MiB at 10 GB/s (104,857.6 ns, rounded).
const COPY: u64 = 104_858;
/// 1 MiB at the 10 MB/s flush rate.
const PACE: u64 = 104_857_600;
/// One chunk on the wire and disk: rendezvous round trip (2 µs), 1 MiB at 1 GB/s, latency,
/// 1 MiB at 100 MB/s on the SSD, the ack's latency: well under PACE, so the rate sets the pace.
const SERVICE: u64 = 2_000 + 1_048_576 + 1_000 + 10_485_760 + 1_000;
/// A metadata round trip (2 × 1 µs) and close_ns (10 µs).
const CLOSE: u64 = 2_000 + 10_000;

fn cached(dirty_limit: u64) -> System {
    let mut sys = system();
    sys.storage.data_servers = 1;
    sys.client_cache.size = 64 * MIB;
    sys.client_cache.dirty_limit = dirty_limit;
    sys.client_cache.flush_rate = 1e7;
    sys.client_cache.memory_bandwidth = 1e10;
    sys.client_cache.flush_chunk = 1 << 20;
    sys
}

fn go(sys: &System, programs: Vec<Vec<Op>>) -> (RunSummary, Log) {
    let job = Job {
        programs,
        files: vec!["/f0".into(), "/f1".into()],
        description: "test".into(),
    };
    let mut log = Log::default();
    let s = run(sys, &job, 1, &mut log).expect("run");
    (s, log)
}

/// `op` bracketed by a Begin/End so the log shows when it started and ended.
fn timed(op: Op) -> [Op; 3] {
    [Op::Begin(Box::new(call(1))), op, Op::End]
}

fn write(file: u32, offset: u64, bytes: u64) -> Op {
    Op::Io {
        file,
        kind: IoKind::Write,
        offset,
        bytes,
    }
}

fn meta(file: u32, kind: MetaKind) -> Op {
    Op::Meta { file, kind }
}

/// (start, end) of every server_write record (server 0), in order.
fn server_writes(log: &Log) -> Vec<(u64, u64, u64)> {
    log.0
        .iter()
        .filter_map(|r| match r {
            Rec::Server(a) if a.server == 0 && a.func == 701 => {
                Some((a.start_ns, a.end_ns, a.bytes))
            }
            _ => None,
        })
        .collect()
}

#[test]
fn a_write_under_the_dirty_limit_costs_its_copy() {
    let (_, log) = go(&cached(0), vec![timed(write(0, 0, 4 * MIB)).to_vec()]);
    // 4 MiB at 10 GB/s: 419,430.4 ns.
    assert_eq!(log.calls(0), vec![(0, 419_430)]);
}

#[test]
fn the_flusher_has_one_chunk_in_flight_at_the_flush_rate() {
    let (_, log) = go(&cached(0), vec![vec![write(0, 0, 4 * MIB)]]);
    // The copy ends at 419,430; chunk k leaves k × PACE later and reaches the server after the
    // rendezvous and its transfer; the server has written it (SSD) well before the next one.
    let t0 = 419_430;
    let arrive = 2_000 + 1_048_576 + 1_000;
    let expected: Vec<(u64, u64, u64)> = (0..4)
        .map(|k| {
            let start = t0 + k * PACE + arrive;
            (start, start + 10_485_760, MIB)
        })
        .collect();
    assert_eq!(server_writes(&log), expected);
    const { assert!(SERVICE < PACE) };
}

#[test]
fn close_and_sync_cost_the_flush_of_the_dirty_data() {
    // Close: the 4 MiB still dirty flow at the flush rate, then the close's round trip.
    let mut prog = vec![write(0, 0, 4 * MIB)];
    prog.extend(timed(meta(0, MetaKind::Close)));
    let (_, log) = go(&cached(0), vec![prog]);
    let t0 = 419_430;
    assert_eq!(log.calls(0), vec![(t0, t0 + 4 * PACE + CLOSE)]);

    // Sync: the flush, then the server's sync (a journal commit of 1 ms) and its round trip.
    let mut prog = vec![write(0, 0, 4 * MIB)];
    prog.extend(timed(meta(0, MetaKind::Sync)));
    let (_, log) = go(&cached(0), vec![prog]);
    assert_eq!(log.calls(0), vec![(t0, t0 + 4 * PACE + 2_000 + 1_000_000)]);

    // Nothing dirty: a close costs what it costs without a client cache.
    let (_, log) = go(&cached(0), vec![timed(meta(1, MetaKind::Close)).to_vec()]);
    assert_eq!(log.calls(0), vec![(0, CLOSE)]);
}

#[test]
fn a_writer_over_the_dirty_limit_waits_for_room() {
    // Limit 1 MiB: the second write waits until the first MiB is on the server (one PACE after
    // its copy ended), then copies.
    let mut prog = timed(write(0, 0, MIB)).to_vec();
    prog.extend(timed(write(0, MIB, MIB)));
    let (_, log) = go(&cached(MIB), vec![prog]);
    assert_eq!(log.calls(0), vec![(0, COPY), (COPY, COPY + PACE + COPY)]);
}

#[test]
fn no_client_cache_is_todays_behaviour() {
    let mut sys = cached(0);
    sys.client_cache.size = 0;
    let (_, log) = go(&sys, vec![timed(write(0, 0, MIB)).to_vec()]);
    assert_eq!(log.calls(0), vec![(0, SERVICE)]);
}

/// Write file 0, compute, write file 1; close each at once or when the next is written.
fn phases(compute: u64, deferred: bool) -> Vec<Op> {
    let c = Op::Compute { ns: compute };
    if deferred {
        vec![
            write(0, 0, MIB),
            c,
            meta(0, MetaKind::Close),
            write(1, 0, MIB),
            meta(1, MetaKind::Close),
        ]
    } else {
        vec![
            write(0, 0, MIB),
            meta(0, MetaKind::Close),
            c,
            write(1, 0, MIB),
            meta(1, MetaKind::Close),
        ]
    }
}

#[test]
fn a_deferred_close_overlaps_the_flush_with_the_compute() {
    let sys = cached(0);
    let end = |compute, deferred| go(&sys, vec![phases(compute, deferred)]).0.end_ns;
    // Immediate: each close waits for its whole flush (PACE), then the compute runs.
    let compute = 50_000_000;
    let immediate = 2 * COPY + 2 * PACE + 2 * CLOSE + compute;
    assert_eq!(end(compute, false), immediate);
    // Deferred, compute shorter than the flush: the compute is hidden in the flush.
    assert_eq!(end(compute, true), 2 * COPY + 2 * PACE + 2 * CLOSE);
    // Deferred, compute longer than the flush: the first flush is hidden in the compute.
    let compute = 200_000_000;
    assert_eq!(
        end(compute, false),
        2 * COPY + 2 * PACE + 2 * CLOSE + compute
    );
    assert_eq!(end(compute, true), 2 * COPY + PACE + 2 * CLOSE + compute);
}

#[test]
fn the_model_table_is_off_in_the_presets_and_checked() {
    use crate::model::load::system;
    let set = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    for preset in ["pvfs2-2009", "lustre-fdr"] {
        assert!(!system(preset, &[]).expect("preset").client_cache.on());
    }
    let pvfs = system("pvfs2-2009", &set(&["client_cache.size=1G"])).expect("set");
    assert_eq!(pvfs.client_cache.limit(), 1 << 30);
    let lustre = system("lustre-fdr", &set(&["client_cache.size=1G"])).expect("set");
    assert_eq!(lustre.client_cache.limit(), 128 << 20);
    let e = system(
        "pvfs2-2009",
        &set(&["client_cache.size=64M", "client_cache.dirty_limit=1G"]),
    )
    .unwrap_err();
    assert!(
        e.to_string()
            .contains("1073741824 is larger than client_cache.size = 67108864"),
        "{e}"
    );
}
