//! The model's `[variance]` in the engine (issue 15 item 5): stalls in closed form on one
//! client and one server, the seed reproducing a run exactly, and no variance = exact times.

use super::testutil::{call, system, Log};
use super::*;
use crate::model::Variance;
use crate::program::IoKind;

fn job(programs: Vec<Vec<Op>>) -> Job {
    Job {
        programs,
        files: vec!["/f0".into()],
        description: "test".into(),
    }
}

fn go(sys: &System, job: &Job, seed: u64) -> (RunSummary, Log) {
    let mut log = Log::default();
    let s = run(sys, job, seed, &mut log).expect("run");
    (s, log)
}

fn timed(mut ops: Vec<Op>) -> Vec<Op> {
    ops.insert(0, Op::Begin(Box::new(call(1))));
    ops.push(Op::End);
    ops
}

fn write(offset: u64, bytes: u64) -> Op {
    Op::Io {
        file: 0,
        kind: IoKind::Write,
        offset,
        bytes,
    }
}

fn stalls(stall_ns: u64) -> Variance {
    Variance {
        stall_probability: 1.0,
        stall_ns,
        ..Variance::default()
    }
}

/// Ranks 0 and 2 (nodes 0 and 1) write 1 MiB pieces over both servers and send each other a
/// message: flows, disk queues and messages all draw.
fn busy_job() -> Job {
    let prog = |me: u64, peer: u32| {
        let mut ops: Vec<Op> = (0..8).map(|i| write((2 * i + me) << 20, 1 << 20)).collect();
        ops.extend([
            Op::Isend {
                to: peer,
                bytes: 3_000_000,
                slot: 0,
            },
            Op::Irecv {
                from: peer,
                bytes: 3_000_000,
                slot: 1,
            },
            Op::WaitAll { slots: vec![0, 1] },
        ]);
        timed(ops)
    };
    job(vec![prog(0, 2), vec![], prog(1, 0)])
}

fn jittery() -> System {
    let mut sys = system();
    sys.variance = Variance {
        network_jitter: 0.3,
        disk_jitter: 0.2,
        stall_probability: 0.05,
        stall_ns: 2_000_000,
    };
    sys
}

#[test]
fn a_stalled_message_takes_stall_ns_longer() {
    // 1 MB eager at 1 GB/s = 1 ms alone on its links; stalled: 1 ms more.
    let mut sys = system();
    sys.network.eager_limit = 1 << 30;
    sys.variance = stalls(1_000_000);
    let progs = vec![
        timed(vec![
            Op::Isend {
                to: 2,
                bytes: 1_000_000,
                slot: 0,
            },
            Op::WaitAll { slots: vec![0] },
        ]),
        vec![],
        timed(vec![
            Op::Irecv {
                from: 0,
                bytes: 1_000_000,
                slot: 0,
            },
            Op::WaitAll { slots: vec![0] },
        ]),
    ];
    let (s, log) = go(&sys, &job(progs), 1);
    assert_eq!(log.calls(0), vec![(0, 2_000_000)]);
    assert_eq!(s.end_ns, 2_001_000);
}

#[test]
fn a_stalled_write_takes_a_network_and_a_disk_stall_longer() {
    // One client, one server: the write's data crosses the network once and the disk serves
    // it once (no cache), so stalling both adds 2 × stall_ns to the call.
    let mut sys = system();
    sys.storage.data_servers = 1;
    let prog = job(vec![timed(vec![write(0, 1 << 20)])]);
    let (exact, _) = go(&sys, &prog, 1);
    sys.variance = stalls(3_000_000);
    let (stalled, log) = go(&sys, &prog, 1);
    assert_eq!(stalled.end_ns, exact.end_ns + 2 * 3_000_000);
    assert_eq!(log.calls(0), vec![(0, stalled.end_ns)]);
}

#[test]
fn disk_jitter_stays_within_its_spread() {
    // 1 MiB on the 100 MB/s disk: 10,485,760 ns exact; with a 50% spread within ± half of it.
    let mut sys = system();
    sys.storage.data_servers = 1;
    sys.variance.disk_jitter = 0.5;
    let prog = job(vec![timed(vec![write(0, 1 << 20)])]);
    let disk_ns = |log: &Log| {
        log.0
            .iter()
            .find_map(|r| match r {
                testutil::Rec::Disk(d) => Some(d.end_ns - d.start_ns),
                _ => None,
            })
            .expect("a disk access")
    };
    let exact = 10_485_760.0;
    let mut seen = Vec::new();
    for seed in 1..=5 {
        let ns = disk_ns(&go(&sys, &prog, seed).1) as f64;
        assert!((ns - exact).abs() <= 0.5 * exact + 1.0, "seed {seed}: {ns}");
        seen.push(ns);
    }
    seen.dedup();
    assert!(seen.len() > 1, "seeds give different disk times: {seen:?}");
}

#[test]
fn the_same_seed_reproduces_a_run_and_another_seed_changes_it() {
    let sys = jittery();
    let (s1, a) = go(&sys, &busy_job(), 1);
    let (s2, b) = go(&sys, &busy_job(), 1);
    assert_eq!(s1, s2);
    assert_eq!(a.0, b.0);
    let (s3, _) = go(&sys, &busy_job(), 2);
    assert_ne!(s1.end_ns, s3.end_ns);
}

#[test]
fn no_variance_is_exact_whatever_the_seed() {
    // A table of zeros (and a stall probability without a stall time) is no table at all.
    let exact = system();
    let mut zeros = system();
    zeros.variance = Variance {
        stall_probability: 0.5,
        ..Variance::default()
    };
    let (s, log) = go(&exact, &busy_job(), 1);
    for (sys, seed) in [(&exact, 2), (&zeros, 1), (&zeros, 99)] {
        let (s2, log2) = go(sys, &busy_job(), seed);
        assert_eq!(s, s2);
        assert_eq!(log.0, log2.0);
    }
}

#[test]
fn the_variance_table_loads_and_its_fractions_are_checked() {
    let sets = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let sys = crate::model::load::system(
        "pvfs2-2009",
        &sets(&["variance.disk_jitter=0.2", "variance.stall_ns=200ms"]),
    )
    .expect("model");
    assert_eq!(sys.variance.disk_jitter, 0.2);
    assert_eq!(sys.variance.stall_ns, 200_000_000);
    // The table survives a model written and read back (what calibrate writes).
    let text = crate::model::load::to_toml(&sys, "variance").expect("toml");
    assert!(text.contains("[variance]"), "{text}");
    let back = crate::model::load::from_text("back", &text, &[]).expect("read back");
    assert_eq!(back.variance, sys.variance);
    let e = crate::model::load::system("pvfs2-2009", &sets(&["variance.network_jitter=1.5"]))
        .unwrap_err();
    assert!(e.to_string().contains("must be between 0 and 1"), "{e}");
}
