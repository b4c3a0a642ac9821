//! The engine's speed (a benchmark, not a test; run by bench/perf/sim_speed.py): simulated
//! events per second on a generated job, and optionally on a workload spec.
//!
//! usage: cargo run --release -p pioscope-sim --example engine_speed --
//!        [--ranks 10000] [--rounds 20] [--fanout 4] [--bytes 65536] [--io 1048576]
//!        [--system pvfs2-2009] [--set KEY=VALUE ...] [--workload SPEC]
//!
//! The generated job: every rank, each round, sends `bytes` to its `fanout` next ranks and
//! receives from its `fanout` previous ones (Isend/Irecv/WaitAll), then writes `io` bytes of
//! a shared file at its own offset; a Barrier ends the job. The system gets as many nodes as
//! the ranks need. `--set` changes a model field as `pioscope simulate --set` does (e.g.
//! `aggregate_exchange_above=0` keeps every two-phase exchange as messages). Prints one
//! `key=value` line; `messages` includes those the `exchanges` (aggregated all-to-alls) stand
//! for.

use std::time::Instant;

use pioscope_sim::engine::run;
use pioscope_sim::program::{Call, DiskActivity, IoKind, Job, Op, Rank, Recorder, ServerActivity};

/// Counts the recorder calls (what the output module would receive).
#[derive(Default)]
struct Count {
    calls: u64,
    server: u64,
    disk: u64,
}

impl Recorder for Count {
    fn call(&mut self, _: Rank, _: u8, _: &Call, _: u64, _: u64) {
        self.calls += 1;
    }
    fn server(&mut self, _: &ServerActivity) {
        self.server += 1;
    }
    fn disk(&mut self, _: &DiskActivity) {
        self.disk += 1;
    }
}

fn generated(ranks: u32, rounds: u32, fanout: u32, bytes: u64, io: u64) -> Job {
    let call = |func: u16, size: u64| Call {
        func,
        file: None,
        offset: None,
        size,
        collective: false,
        instance: None,
        peer: None,
        observed_id: None,
    };
    let programs = (0..ranks)
        .map(|r| {
            let mut p = Vec::new();
            for round in 0..rounds {
                p.push(Op::Begin(Box::new(call(1, bytes * fanout as u64))));
                let mut slots = Vec::new();
                for k in 1..=fanout.min(ranks - 1) {
                    p.push(Op::Isend {
                        to: (r + k) % ranks,
                        bytes,
                        slot: 2 * k,
                    });
                    p.push(Op::Irecv {
                        from: (r + ranks - k) % ranks,
                        bytes,
                        slot: 2 * k + 1,
                    });
                    slots.extend([2 * k, 2 * k + 1]);
                }
                p.push(Op::WaitAll { slots });
                p.push(Op::End);
                if io > 0 {
                    let offset = (round as u64 * ranks as u64 + r as u64) * io;
                    p.push(Op::Io {
                        file: 0,
                        kind: IoKind::Write,
                        offset,
                        bytes: io,
                    });
                }
            }
            p.push(Op::Barrier);
            p
        })
        .collect();
    Job {
        programs,
        files: vec!["/bench/file".into()],
        description: "engine_speed".into(),
    }
}

fn main() {
    let mut a = std::env::args().skip(1);
    let (mut ranks, mut rounds, mut fanout, mut bytes, mut io) =
        (10_000u32, 20u32, 4u32, 65_536u64, 1u64 << 20);
    let mut system = "pvfs2-2009".to_string();
    let mut workload: Option<String> = None;
    let mut sets: Vec<String> = Vec::new();
    while let Some(k) = a.next() {
        let v = a.next().unwrap_or_else(|| panic!("{k} needs a value"));
        match k.as_str() {
            "--ranks" => ranks = v.parse().expect("--ranks"),
            "--rounds" => rounds = v.parse().expect("--rounds"),
            "--fanout" => fanout = v.parse().expect("--fanout"),
            "--bytes" => bytes = v.parse().expect("--bytes"),
            "--io" => io = v.parse().expect("--io"),
            "--system" => system = v,
            "--workload" => workload = Some(v),
            "--set" => sets.push(v),
            _ => panic!("unknown option {k}"),
        }
    }
    let mut sys = pioscope_sim::model::load::system(&system, &sets).expect("system");
    let per_node = sys.nodes.ranks_per_node.max(1);
    let t0 = Instant::now();
    let job = match &workload {
        Some(spec) => {
            // Enough nodes for the spec's ranks (the spec's own `ranks=`).
            sys.nodes.count = sys.nodes.count.max(ranks.div_ceil(per_node));
            pioscope_sim::mpiio::workload::generate(spec, &sys)
                .expect("workload")
                .job
        }
        None => generated(ranks, rounds, fanout, bytes, io),
    };
    sys.nodes.count = sys
        .nodes
        .count
        .max((job.programs.len() as u32).div_ceil(per_node));
    let build_s = t0.elapsed().as_secs_f64();
    let mut count = Count::default();
    let t1 = Instant::now();
    let s = run(&sys, &job, 1, &mut count).expect("run");
    let secs = t1.elapsed().as_secs_f64();
    println!(
        "ranks={} events={} wall_s={:.3} build_s={:.3} events_per_s={:.0} simulated_s={:.6} messages={} exchanges={} requests={} flows={} recomputations={} calls={} server={} disk={}",
        job.programs.len(),
        s.events,
        secs,
        build_s,
        s.events as f64 / secs,
        s.end_ns as f64 * 1e-9,
        s.messages,
        s.exchanges,
        s.requests,
        s.flows,
        s.recomputations,
        count.calls,
        count.server,
        count.disk
    );
}
