//! Engine tests: closed forms on the hand-built system of `testutil` (1 GB/s NICs, 1 µs
//! latency, 100 MB/s SSDs), so every expected time is exact arithmetic written out below.

use super::testutil::{call, system, Log, Rec};
use super::{run, RunSummary, SimError};
use crate::model::{Cache, SizeFactor, System};
use crate::program::{IoKind, Job, MetaKind, Op};

const MIB: u64 = 1 << 20;

fn job(programs: Vec<Vec<Op>>) -> Job {
    Job {
        programs,
        files: vec!["/f0".into(), "/f1".into()],
        description: "test".into(),
    }
}

fn go(sys: &System, job: &Job) -> (RunSummary, Log) {
    let mut log = Log::default();
    let s = run(sys, job, 1, &mut log).expect("run");
    (s, log)
}

/// `ops` bracketed by a Begin/End so the log shows when they started and ended.
fn timed(mut ops: Vec<Op>) -> Vec<Op> {
    ops.insert(0, Op::Begin(Box::new(call(1))));
    ops.push(Op::End);
    ops
}

fn send(to: u32, bytes: u64) -> Vec<Op> {
    timed(vec![
        Op::Isend { to, bytes, slot: 0 },
        Op::WaitAll { slots: vec![0] },
    ])
}

fn recv(from: u32, bytes: u64) -> Vec<Op> {
    timed(vec![
        Op::Irecv {
            from,
            bytes,
            slot: 0,
        },
        Op::WaitAll { slots: vec![0] },
    ])
}

#[test]
fn one_flow_latency_plus_bytes_over_bandwidth() {
    let mut sys = system();
    sys.network.eager_limit = 1 << 30;
    // Rank 0 on node 0, rank 2 on node 1.
    let (s, log) = go(
        &sys,
        &job(vec![send(2, 1_000_000), vec![], recv(0, 1_000_000)]),
    );
    // 1 MB at 1 GB/s = 1 ms; the eager send completes when the data has left.
    assert_eq!(log.calls(0), vec![(0, 1_000_000)]);
    assert_eq!(log.calls(2), vec![(0, 1_000_000 + 1_000)]);
    assert_eq!(s.end_ns, 1_001_000);
    assert_eq!((s.messages, s.flows), (1, 1));
}

#[test]
fn n_flows_into_one_nic_share_it_and_finish_together() {
    let mut sys = system();
    sys.network.eager_limit = 1 << 30;
    // Ranks 0, 2, 4 (nodes 0, 1, 2) each send 1 MB to rank 6 (node 3): 1/3 GB/s each.
    let mut sink = vec![];
    for (slot, from) in [0u32, 2, 4].iter().enumerate() {
        sink.push(Op::Irecv {
            from: *from,
            bytes: 1_000_000,
            slot: slot as u32,
        });
    }
    sink.push(Op::WaitAll {
        slots: vec![0, 1, 2],
    });
    let progs = vec![
        send(6, 1_000_000),
        vec![],
        send(6, 1_000_000),
        vec![],
        send(6, 1_000_000),
        vec![],
        timed(sink),
    ];
    let (_, log) = go(&sys, &job(progs));
    for r in [0, 2, 4] {
        assert_eq!(log.calls(r), vec![(0, 3_000_000)]);
    }
    assert_eq!(log.calls(6), vec![(0, 3_001_000)]);
}

#[test]
fn a_capped_flow_leaves_its_share_to_the_other() {
    // Messages of 2 MB and more reach 20% of the NIC (a size factor). A 2 MB and a 1 MB message
    // into the same NIC: max-min gives the first 0.2 GB/s and the second the other 0.8 GB/s.
    let mut sys = system();
    sys.network.eager_limit = 1 << 30;
    sys.network.size_factors = vec![
        SizeFactor {
            min_size: 0,
            latency: 1.0,
            bandwidth: 1.0,
        },
        SizeFactor {
            min_size: 2_000_000,
            latency: 1.0,
            bandwidth: 0.2,
        },
    ];
    let mut sink = vec![
        Op::Irecv {
            from: 0,
            bytes: 2_000_000,
            slot: 0,
        },
        Op::Irecv {
            from: 2,
            bytes: 1_000_000,
            slot: 1,
        },
    ];
    sink.push(Op::WaitAll { slots: vec![0, 1] });
    let (_, log) = go(
        &sys,
        &job(vec![
            send(6, 2_000_000),
            vec![],
            send(6, 1_000_000),
            vec![],
            vec![],
            vec![],
            sink,
        ]),
    );
    assert_eq!(log.calls(2), vec![(0, 1_250_000)]);
    // 2 MB at 0.2 GB/s = 10 ms (the 1 MB flow ending does not speed it up: it is capped).
    assert_eq!(log.calls(0), vec![(0, 10_000_000)]);
}

#[test]
fn intra_node_messages_use_shared_memory_and_no_flow() {
    let sys = system();
    // Ranks 0 and 1 share node 0: 10 KB at 10 GB/s = 1 µs, then 100 ns.
    let (s, log) = go(&sys, &job(vec![send(1, 10_000), recv(0, 10_000)]));
    assert_eq!(log.calls(0), vec![(0, 1_000)]);
    assert_eq!(log.calls(1), vec![(0, 1_100)]);
    assert_eq!(s.flows, 0);
}

#[test]
fn rendezvous_costs_one_round_trip_more_than_eager() {
    let bytes = 100_000;
    let end = |eager_limit: u64| {
        let mut sys = system();
        sys.network.eager_limit = eager_limit;
        let (_, log) = go(&sys, &job(vec![send(2, bytes), vec![], recv(0, bytes)]));
        log.calls(2)[0].1
    };
    let eager = end(1 << 20);
    let rendezvous = end(1 << 10);
    assert_eq!(eager, 100_000 + 1_000);
    assert_eq!(rendezvous - eager, 2 * 1_000);
}

#[test]
fn messages_match_in_posting_order_per_pair() {
    let mut sys = system();
    sys.network.eager_limit = 1 << 30;
    // A big then a small message: the small one arrives first but matches the second receive.
    let sender = timed(vec![
        Op::Isend {
            to: 2,
            bytes: 4_000_000,
            slot: 0,
        },
        Op::Isend {
            to: 2,
            bytes: 2_000,
            slot: 1,
        },
        Op::WaitAll { slots: vec![0, 1] },
    ]);
    let receiver = vec![
        Op::Begin(Box::new(call(1))),
        Op::Irecv {
            from: 0,
            bytes: 4_000_000,
            slot: 0,
        },
        Op::WaitAll { slots: vec![0] },
        Op::End,
        Op::Begin(Box::new(call(2))),
        Op::Irecv {
            from: 0,
            bytes: 2_000,
            slot: 0,
        },
        Op::WaitAll { slots: vec![0] },
        Op::End,
    ];
    let (_, log) = go(&sys, &job(vec![sender, vec![], receiver]));
    // Both flows share the up NIC: the 2 KB one takes 4 µs at 0.5 GB/s, the 4 MB one then has
    // 3,998,000 B left at full rate: done at 4,000 + 3,998,000 ns.
    assert_eq!(
        log.calls(2),
        vec![(0, 4_002_000 + 1_000), (4_003_000, 4_003_000)]
    );
}

#[test]
fn small_messages_take_turns_on_a_nic() {
    // Up to the bandwidth-delay product (1 GB/s × 1 µs = 1,000 B) a message is no flow: each
    // NIC serves them one after the other. 500 B = 500 ns on the wire.
    let mut sink = vec![];
    for (slot, from) in [0u32, 2, 4].iter().enumerate() {
        sink.push(Op::Begin(Box::new(call(1))));
        sink.push(Op::Irecv {
            from: *from,
            bytes: 500,
            slot: slot as u32,
        });
        sink.push(Op::WaitAll {
            slots: vec![slot as u32],
        });
        sink.push(Op::End);
    }
    let progs = vec![
        send(6, 500),
        vec![],
        send(6, 500),
        vec![],
        send(6, 500),
        vec![],
        sink,
    ];
    let (s, log) = go(&system(), &job(progs));
    assert_eq!(
        log.calls(6),
        vec![(0, 1_500), (1_500, 2_000), (2_000, 2_500)]
    );
    assert_eq!((s.flows, s.small_transfers), (0, 3));
}

#[test]
fn write_through_to_ssd_closed_form() {
    let sys = system();
    let io = timed(vec![Op::Io {
        file: 0,
        kind: IoKind::Write,
        offset: 0,
        bytes: MIB,
    }]);
    let (s, log) = go(&sys, &job(vec![io]));
    // Above the eager limit: a round trip (2 µs), 1 MiB at 1 GB/s, 1 µs, the SSD at 100 MB/s,
    // the ack (1 µs).
    let disk = MIB * 10; // 1 MiB at 1e8 B/s = 10,485,760 ns
    let arrive = 2_000 + MIB + 1_000;
    assert_eq!(log.calls(0), vec![(0, arrive + disk + 1_000)]);
    let server: Vec<_> = log
        .0
        .iter()
        .filter_map(|r| {
            if let Rec::Server(a) = r {
                Some(a.clone())
            } else {
                None
            }
        })
        .collect();
    assert_eq!(server.len(), 1);
    assert_eq!(
        (server[0].func, server[0].start_ns, server[0].end_ns),
        (701, arrive, arrive + disk)
    );
    let disks: Vec<_> = log
        .0
        .iter()
        .filter_map(|r| {
            if let Rec::Disk(a) = r {
                Some(a.clone())
            } else {
                None
            }
        })
        .collect();
    assert_eq!(
        (disks[0].func, disks[0].offset, disks[0].bytes),
        (801, 0, MIB)
    );
    assert_eq!(s.requests, 1);
}

#[test]
fn io_pieces_go_to_servers_concurrently() {
    let sys = system();
    // 2 MiB over two servers: two pieces share the client's NIC (0.5 GB/s each, 2,097,152 ns),
    // then each server's SSD in parallel.
    let io = timed(vec![Op::Io {
        file: 0,
        kind: IoKind::Write,
        offset: 0,
        bytes: 2 * MIB,
    }]);
    let (s, log) = go(&sys, &job(vec![io]));
    assert_eq!(s.requests, 2);
    assert_eq!(
        log.calls(0),
        vec![(0, 2_000 + 2 * MIB + 1_000 + 10 * MIB + 1_000)]
    );
}

fn cached(dirty_limit: u64) -> System {
    let mut sys = system();
    sys.storage.data_servers = 1;
    sys.layout.stripe_size = 4 * MIB;
    sys.storage.cache = Cache {
        write_back: 8 * MIB,
        dirty_limit,
        flush_rate: 1e8,
        read_cache: 0,
        memory_bandwidth: 1e10,
        read_memory_bandwidth: 0.0,
        rewrite_memory_bandwidth: 0.0,
        large_copy_above: 0,
        large_copy_factor: 0.0,
        background_dirty: 0,
    };
    sys
}

fn two_writes() -> Vec<Op> {
    vec![
        Op::Begin(Box::new(call(1))),
        Op::Io {
            file: 0,
            kind: IoKind::Write,
            offset: 0,
            bytes: MIB,
        },
        Op::End,
        Op::Begin(Box::new(call(1))),
        Op::Io {
            file: 0,
            kind: IoKind::Write,
            offset: MIB,
            bytes: MIB,
        },
        Op::End,
    ]
}

#[test]
fn write_back_absorbs_below_dirty_limit() {
    let (_, log) = go(&cached(4 * MIB), &job(vec![two_writes()]));
    // Round trip, 1 MiB on the wire, latency, a memory copy (1 MiB at 10 GB/s = 104,858 ns),
    // the ack: the disk is not waited for.
    let one = 2_000 + MIB + 1_000 + 104_858 + 1_000;
    assert_eq!(log.calls(0), vec![(0, one), (one, 2 * one)]);
    // The flush still happened, in the background: 2 server_flush and 2 disk_write records.
    let flushes = log
        .0
        .iter()
        .filter(|r| matches!(r, Rec::Server(a) if a.func == 709))
        .count();
    let disk_writes = log
        .0
        .iter()
        .filter(|r| matches!(r, Rec::Disk(a) if a.func == 801))
        .count();
    assert_eq!((flushes, disk_writes), (2, 2));
}

#[test]
fn write_back_blocks_the_writer_above_dirty_limit() {
    let (_, log) = go(&cached(MIB), &job(vec![two_writes()]));
    let one = 2_000 + MIB + 1_000 + 104_858 + 1_000;
    // The first write's flush starts when it reached the cache and takes 1 MiB / 100 MB/s.
    let flushed = 2_000 + MIB + 1_000 + 10 * MIB;
    // The second write waits for it, then is copied and acked.
    assert_eq!(
        log.calls(0),
        vec![(0, one), (one, flushed + 104_858 + 1_000)]
    );
}

#[test]
fn sync_waits_for_the_flush_and_read_cache_hits() {
    let mut sys = cached(4 * MIB);
    sys.storage.cache.read_cache = 8 * MIB;
    let prog = vec![
        Op::Io {
            file: 0,
            kind: IoKind::Write,
            offset: 0,
            bytes: MIB,
        },
        Op::Begin(Box::new(call(1))),
        Op::Meta {
            file: 0,
            kind: MetaKind::Sync,
        },
        Op::End,
        Op::Begin(Box::new(call(2))),
        Op::Io {
            file: 0,
            kind: IoKind::Read,
            offset: 0,
            bytes: MIB,
        },
        Op::End,
    ];
    let (_, log) = go(&sys, &job(vec![prog]));
    let written = 2_000 + MIB + 1_000 + 104_858 + 1_000;
    let flushed = 2_000 + MIB + 1_000 + 10 * MIB;
    // The journal commit (sync_op_ns, 1 ms) after the flush, then the reply.
    let synced = flushed + 1_000_000 + 1_000;
    // The read hits the cache: request, memory copy, 1 MiB back, latency.
    assert_eq!(
        log.calls(0),
        vec![
            (written, synced),
            (synced, synced + 1_000 + 104_858 + MIB + 1_000)
        ]
    );
    assert!(!log
        .0
        .iter()
        .any(|r| matches!(r, Rec::Disk(a) if a.func == 800)));
}

/// Issue 4 (accuracy): a real fsync commits the journal even with nothing dirty; the engine
/// charges `sync_op_ns` per Sync and server, serialized with the metadata work.
#[test]
fn sync_charges_a_synced_metadata_update() {
    let sys = system();
    let sync = || {
        timed(vec![Op::Meta {
            file: 0,
            kind: MetaKind::Sync,
        }])
    };
    let (_, log) = go(&sys, &job(vec![sync(), sync()]));
    // Latency there, 1 ms commit, latency back; the second commit waits for the first.
    assert_eq!(log.calls(0), vec![(0, 1_002_000)]);
    assert_eq!(log.calls(1), vec![(0, 2_002_000)]);
}

#[test]
fn creates_are_serialized_on_the_metadata_server() {
    let sys = system();
    let create = |file| {
        timed(vec![Op::Meta {
            file,
            kind: MetaKind::Create,
        }])
    };
    let (_, log) = go(&sys, &job(vec![create(0), vec![], create(0)]));
    // 3 synced operations of 1 ms each, plus a round trip; the second waits for the first.
    assert_eq!(log.calls(0), vec![(0, 3_002_000)]);
    assert_eq!(log.calls(2), vec![(0, 6_002_000)]);
}

fn locked(offset: u64) -> Vec<Op> {
    timed(vec![
        Op::Lock {
            file: 0,
            offset,
            bytes: 100,
        },
        Op::Compute { ns: 1_000_000 },
        Op::Unlock {
            file: 0,
            offset,
            bytes: 100,
        },
    ])
}

#[test]
fn locks_serialize_overlapping_ranges_only() {
    let sys = system();
    // Overlapping: rank 2 gets the lock when rank 0's unlock reaches the server.
    let (_, log) = go(&sys, &job(vec![locked(0), vec![], locked(50)]));
    assert_eq!(log.calls(0), vec![(0, 1_004_000)]);
    assert_eq!(log.calls(2), vec![(0, 2_006_000)]);
    // Disjoint: in parallel.
    let (_, log) = go(&sys, &job(vec![locked(0), vec![], locked(100)]));
    assert_eq!(log.calls(0), vec![(0, 1_004_000)]);
    assert_eq!(log.calls(2), vec![(0, 1_004_000)]);
}

#[test]
fn barrier_costs_log2_ranks_latencies_after_the_last_arrival() {
    let sys = system();
    let progs: Vec<Vec<Op>> = (0..8u64)
        .map(|r| timed(vec![Op::Compute { ns: r * 1_000 }, Op::Barrier]))
        .collect();
    let (s, log) = go(&sys, &job(progs));
    for r in 0..8 {
        assert_eq!(log.calls(r), vec![(0, 7_000 + 3 * 1_000)]);
    }
    assert_eq!(s.rank_end_ns, vec![10_000; 8]);
    // Two ranks on one node: one intra-node latency.
    let (s, _) = go(&sys, &job(vec![vec![Op::Barrier], vec![Op::Barrier]]));
    assert_eq!(s.end_ns, 100);
}

fn mixed() -> Job {
    let mut progs = Vec::new();
    for r in 0..8u32 {
        let peer = (r + 3) % 8;
        let from = (r + 5) % 8;
        progs.push(vec![
            Op::Begin(Box::new(call(1))),
            Op::Isend {
                to: peer,
                bytes: 100_000 * (r as u64 + 1),
                slot: 0,
            },
            Op::Irecv {
                from,
                bytes: 0,
                slot: 1,
            },
            Op::WaitAll { slots: vec![0, 1] },
            Op::Io {
                file: r % 2,
                kind: IoKind::Write,
                offset: r as u64 * 300_000,
                bytes: 300_000,
            },
            Op::Barrier,
            Op::Io {
                file: r % 2,
                kind: IoKind::Read,
                offset: r as u64 * 300_000,
                bytes: 300_000,
            },
            Op::Lock {
                file: 0,
                offset: 0,
                bytes: 10,
            },
            Op::Unlock {
                file: 0,
                offset: 0,
                bytes: 10,
            },
            Op::Meta {
                file: 1,
                kind: MetaKind::Stat,
            },
            Op::End,
        ]);
    }
    job(progs)
}

#[test]
fn same_inputs_same_seed_same_record_sequence() {
    let mut sys = system();
    sys.storage.cache = Cache {
        write_back: 8 * MIB,
        dirty_limit: MIB,
        flush_rate: 5e7,
        read_cache: 2 * MIB,
        memory_bandwidth: 1e10,
        read_memory_bandwidth: 0.0,
        rewrite_memory_bandwidth: 0.0,
        large_copy_above: 0,
        large_copy_factor: 0.0,
        background_dirty: 0,
    };
    sys.network.bisection_bandwidth = 1.5e9;
    let (s1, a) = go(&sys, &mixed());
    let (s2, b) = go(&sys, &mixed());
    assert_eq!(a.0, b.0);
    assert_eq!(s1, s2);
    assert!(a.0.len() > 20);
}

#[test]
fn a_deadlock_names_the_ranks_and_what_they_wait_for() {
    let sys = system();
    let p = |from| {
        vec![
            Op::Irecv {
                from,
                bytes: 1,
                slot: 0,
            },
            Op::WaitAll { slots: vec![0] },
        ]
    };
    let err = run(&sys, &job(vec![p(1), p(0)]), 0, &mut Log::default()).unwrap_err();
    let msg = err.to_string();
    assert!(
        matches!(err, SimError::Deadlock { ref waiting, .. } if waiting.len() == 2),
        "{msg}"
    );
    assert!(
        msg.contains("rank 0 (op 1) waits in WaitAll for slot 0 (Irecv from rank 1)"),
        "{msg}"
    );
    assert!(
        msg.contains("rank 1 (op 1) waits in WaitAll for slot 0 (Irecv from rank 0)"),
        "{msg}"
    );
    // A barrier some rank never reaches.
    let err = run(
        &sys,
        &job(vec![vec![Op::Barrier], vec![]]),
        0,
        &mut Log::default(),
    )
    .unwrap_err();
    assert!(
        err.to_string()
            .contains("rank 0 (op 0) waits at barrier 1 (1 of 2 ranks arrived)"),
        "{err}"
    );
}

#[test]
fn bad_jobs_are_refused() {
    let sys = system();
    let e = run(&sys, &job(vec![vec![]; 9]), 0, &mut Log::default()).unwrap_err();
    assert!(matches!(
        e,
        SimError::TooManyRanks {
            ranks: 9,
            nodes: 4,
            per_node: 2
        }
    ));
    let io = vec![Op::Io {
        file: 5,
        kind: IoKind::Read,
        offset: 0,
        bytes: 1,
    }];
    let e = run(&sys, &job(vec![io]), 0, &mut Log::default()).unwrap_err();
    assert!(matches!(
        e,
        SimError::NoSuchFile {
            rank: 0,
            op: 0,
            file: 5,
            files: 2
        }
    ));
    let w = vec![Op::WaitAll { slots: vec![3] }];
    let e = run(&sys, &job(vec![w]), 0, &mut Log::default()).unwrap_err();
    assert!(matches!(
        e,
        SimError::SlotNotStarted {
            rank: 0,
            op: 0,
            slot: 3
        }
    ));
    let e = run(&sys, &job(vec![vec![Op::End]]), 0, &mut Log::default()).unwrap_err();
    assert!(matches!(e, SimError::Unbalanced { rank: 0, op: 0 }));
}

#[test]
fn nested_calls_report_depth() {
    let sys = system();
    let prog = vec![
        Op::Begin(Box::new(call(1))),
        Op::Begin(Box::new(call(2))),
        Op::Compute { ns: 5 },
        Op::End,
        Op::End,
    ];
    let (_, log) = go(&sys, &job(vec![prog]));
    assert_eq!(
        log.0,
        vec![
            Rec::Call {
                rank: 0,
                depth: 1,
                func: 2,
                start: 0,
                end: 5
            },
            Rec::Call {
                rank: 0,
                depth: 0,
                func: 1,
                start: 0,
                end: 5
            },
        ]
    );
}

// ---- Aggregated exchange (issue 4: the 10,000-rank HPIO collective) ----

/// One rank's side of an aggregated exchange from its (peer, bytes) sends and receives on a
/// system of 2 ranks per node (block placement).
fn side(me: u32, sends: &[(u32, u64)], recvs: &[(u32, u64)]) -> Op {
    let mut t = crate::program::Traffic::default();
    for &(to, b) in sends {
        if to / 2 == me / 2 {
            t.local_out_bytes += b;
            t.local_out_msgs += 1;
        } else {
            t.out_bytes += b;
            t.out_msgs += 1;
        }
        t.largest = t.largest.max(b);
    }
    for &(from, b) in recvs {
        if from / 2 == me / 2 {
            t.local_in_bytes += b;
        } else {
            t.in_bytes += b;
            t.in_msgs += 1;
        }
        t.largest = t.largest.max(b);
    }
    Op::Exchange(Box::new(t))
}

/// Ranks 0, 1 on node 0 send 1 MB and 0.5 MB to ranks 2, 3 on node 1, which sends 0.2 MB
/// back; rank 3 arrives last, at 5 µs.
fn two_node_exchange() -> Job {
    job(vec![
        timed(vec![side(0, &[(2, 1_000_000)], &[(2, 200_000)])]),
        timed(vec![side(1, &[(3, 500_000)], &[])]),
        timed(vec![side(2, &[(0, 200_000)], &[(0, 1_000_000)])]),
        timed(vec![
            Op::Compute { ns: 5_000 },
            side(3, &[], &[(1, 500_000)]),
        ]),
    ])
}

#[test]
fn aggregated_exchange_ends_when_the_busiest_nic_direction_is_done() {
    let mut sys = system();
    sys.network.eager_limit = 1 << 30;
    let (s, log) = go(&sys, &two_node_exchange());
    // Node 0 sends 1.5 MB (node 1 receives them): 1.5 ms at 1 GB/s, after the last arrival
    // (5 µs) and one latency (1 µs); every rank leaves together.
    for r in 0..4 {
        assert_eq!(
            log.calls(r),
            vec![(0, 5_000 + 1_000 + 1_500_000)],
            "rank {r}"
        );
    }
    assert_eq!(
        (s.exchanges, s.messages, s.flows, s.small_transfers),
        (1, 3, 0, 0)
    );
    // A switch of 0.5 GB/s carries all 1.7 MB between nodes: 3.4 ms instead.
    sys.network.bisection_bandwidth = 0.5e9;
    let (_, log) = go(&sys, &two_node_exchange());
    assert_eq!(log.calls(1), vec![(0, 5_000 + 1_000 + 3_400_000)]);
}

#[test]
fn aggregated_exchange_rendezvous_adds_a_round_trip() {
    // The 1 MB message is above the 64 KiB eager limit: 2 × 1 µs more.
    let (_, log) = go(&system(), &two_node_exchange());
    assert_eq!(log.calls(0), vec![(0, 5_000 + 1_000 + 2_000 + 1_500_000)]);
}

#[test]
fn aggregated_exchange_on_one_node_copies_at_the_intra_node_bandwidth() {
    // Rank 1 takes in 2 MB on its node (from itself too), one copy after the other, at 10 GB/s;
    // intra-node latency 100 ns.
    let mut sys = system();
    sys.network.eager_limit = 1 << 30;
    let progs = vec![
        timed(vec![side(0, &[(1, 1_000_000)], &[])]),
        timed(vec![side(
            1,
            &[(1, 1_000_000)],
            &[(0, 1_000_000), (1, 1_000_000)],
        )]),
    ];
    let (s, log) = go(&sys, &job(progs));
    assert_eq!(log.calls(0), vec![(0, 200_000 + 100)]);
    assert_eq!(log.calls(1), vec![(0, 200_000 + 100)]);
    assert_eq!((s.exchanges, s.messages), (1, 2));
    // Two ranks copying 1 MB into each other copy at the same time: 100 µs, not 200.
    let progs = vec![
        timed(vec![side(0, &[(1, 1_000_000)], &[(1, 1_000_000)])]),
        timed(vec![side(1, &[(0, 1_000_000)], &[(0, 1_000_000)])]),
    ];
    let (_, log) = go(&sys, &job(progs));
    assert_eq!(log.calls(1), vec![(0, 100_000 + 100)]);
    // Nothing to move: the exchange ends where it starts; two in a row meet in order.
    let e = || Op::Exchange(Box::default());
    let (s, log) = go(
        &sys,
        &job(vec![
            timed(vec![e(), e()]),
            timed(vec![Op::Compute { ns: 7 }, e(), e()]),
        ]),
    );
    assert_eq!(log.calls(0), vec![(0, 7)]);
    assert_eq!((s.exchanges, s.messages), (2, 0));
}

#[test]
fn aggregated_exchange_deadlock_and_inconsistent_sides() {
    let sys = system();
    let progs = vec![
        vec![side(0, &[(2, 10)], &[])],
        vec![],
        vec![side(2, &[], &[(0, 10)])],
        vec![Op::Barrier],
    ];
    let err = run(&sys, &job(progs), 0, &mut Log::default()).unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("rank 0 (op 0) waits at aggregated exchange 1 (2 of 4 ranks arrived)"),
        "{msg}"
    );
    assert!(msg.contains("rank 3 (op 0) waits at barrier 1"), "{msg}");
    // 10 bytes sent between nodes, 9 received: a bug of whoever built the job.
    let none = || vec![Op::Exchange(Box::default())];
    let progs = vec![
        vec![side(0, &[(2, 10)], &[])],
        none(),
        vec![side(2, &[], &[(0, 9)])],
        none(),
    ];
    let err = run(&sys, &job(progs), 0, &mut Log::default()).unwrap_err();
    assert!(
        err.to_string()
            .contains("send 10 bytes to other nodes and receive 9"),
        "{err}"
    );
}

/// Issue 4 (accuracy): copies into one rank go one after another: two senders on its node
/// deliver 10 KB each at 10 GB/s, the second after the first (1 µs, then 2 µs, + 100 ns).
#[test]
fn intra_node_copies_into_one_rank_are_serialized() {
    let mut sys = system();
    sys.nodes.ranks_per_node = 4;
    sys.nodes.count = 2;
    let two = timed(vec![
        Op::Irecv {
            from: 1,
            bytes: 10_000,
            slot: 0,
        },
        Op::Irecv {
            from: 2,
            bytes: 10_000,
            slot: 1,
        },
        Op::WaitAll { slots: vec![0, 1] },
    ]);
    let (_, log) = go(&sys, &job(vec![two, send(0, 10_000), send(0, 10_000)]));
    assert_eq!(log.calls(1), vec![(0, 1_000)]);
    assert_eq!(log.calls(2), vec![(0, 2_000)]);
    assert_eq!(log.calls(0), vec![(0, 2_100)]);
}

/// Issue 4 (accuracy): on a node with more ranks than cores, a blocking wait resumes the
/// hand-off after its condition (once per wait), and a barrier releases it after its tree.
#[test]
fn oversubscribed_nodes_pay_the_handoff_once_per_blocking_wait() {
    let mut sys = system();
    sys.nodes.handoff_ns = 5_000;
    let pair = || job(vec![send(1, 10_000), recv(0, 10_000)]);
    // 2 ranks on a node of 2 cores: no hand-off.
    sys.nodes.cores = 2;
    let (_, log) = go(&sys, &pair());
    assert_eq!(
        (log.calls(0), log.calls(1)),
        (vec![(0, 1_000)], vec![(0, 1_100)])
    );
    // 1 core: each WaitAll resumes 5 µs later; a message of two slots still pays once.
    sys.nodes.cores = 1;
    let (_, log) = go(&sys, &pair());
    assert_eq!(
        (log.calls(0), log.calls(1)),
        (vec![(0, 6_000)], vec![(0, 6_100)])
    );
    let both = |peer: u32| {
        timed(vec![
            Op::Isend {
                to: peer,
                bytes: 10_000,
                slot: 0,
            },
            Op::Irecv {
                from: peer,
                bytes: 10_000,
                slot: 1,
            },
            Op::WaitAll { slots: vec![0, 1] },
        ])
    };
    let (_, log) = go(&sys, &job(vec![both(1), both(0)]));
    assert_eq!(log.calls(0), vec![(0, 1_100 + 5_000)]);
    // Barrier of the 2 ranks of node 0: one intra-node latency, then the hand-off.
    let (s, _) = go(&sys, &job(vec![vec![Op::Barrier], vec![Op::Barrier]]));
    assert_eq!(s.end_ns, 100 + 5_000);
}

/// Issue 4 (accuracy): a read past the end of a file the job created is cut at its end (a
/// read past EOF returns short at once, after asking the server); files that existed before
/// have no known end.
#[test]
fn reads_stop_at_the_end_of_files_the_job_created() {
    let sys = system();
    let read = |file: u32| Op::Io {
        file,
        kind: IoKind::Read,
        offset: 0,
        bytes: MIB,
    };
    let create = Op::Meta {
        file: 0,
        kind: MetaKind::Create,
    };
    let write = Op::Io {
        file: 0,
        kind: IoKind::Write,
        offset: 0,
        bytes: MIB / 2,
    };
    let past = Op::Io {
        file: 0,
        kind: IoKind::Read,
        offset: 4 * MIB,
        bytes: MIB,
    };
    let mut prog = vec![create, write];
    prog.extend(timed(vec![read(0)]));
    prog.extend(timed(vec![read(1)]));
    prog.extend(timed(vec![past]));
    let (_, log) = go(&sys, &job(vec![prog]));
    let reads = log.calls(0);
    // Entirely past the end: the round trip to the server, nothing read.
    assert_eq!(reads[2].1 - reads[2].0, 2_000);
    // Half a MiB from the 100 MB/s disk of server 0 (stripe 0), then over the 1 GB/s NIC,
    // and the request's and the reply's latency; file 1 (not created): the whole MiB.
    assert_eq!(reads[0].1 - reads[0].0, 5_242_880 + 524_288 + 2_000);
    assert_eq!(reads[1].1 - reads[1].0, 10_485_760 + 1_048_576 + 2_000);
}

#[test]
fn ops_stay_32_bytes() {
    // Jobs hold tens of millions of ops: the Exchange's totals are boxed like a Begin's call.
    assert_eq!(std::mem::size_of::<Op>(), 32);
}

/// Issue 4 (accuracy): cache copies are CPU work on the server's threads: two ranks' writes
/// absorbed at once by a 1-thread server copy one after the other; with 2 threads together.
#[test]
fn cache_copies_take_server_threads() {
    let write = |offset: u64| {
        timed(vec![Op::Io {
            file: 0,
            kind: IoKind::Write,
            offset,
            bytes: MIB,
        }])
    };
    let copy = 104_858; // 1 MiB at 10 GB/s
                        // Ranks 0 and 2 on two nodes: both pieces share the server's 1 GB/s NIC and arrive
                        // together after the rendezvous round trip, 2 MiB on the wire and the latency.
    let arrive = 2_000 + 2 * MIB + 1_000;
    for (threads, second) in [(1, 2 * copy), (2, copy)] {
        let mut sys = cached(4 * MIB);
        sys.storage.server_threads = threads;
        let (_, log) = go(&sys, &job(vec![write(0), vec![], write(2 * MIB)]));
        let ends = [log.calls(0)[0].1, log.calls(2)[0].1];
        assert_eq!(
            ends.iter().max().copied(),
            Some(arrive + second + 1_000),
            "{threads} threads"
        );
    }
}
