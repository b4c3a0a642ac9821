//! The store's size budget: an HPIO-like noncontiguous write pattern must cost at most
//! 4 bytes per event in events.parquet. Prints the measured figure
//! (`cargo test --release --test store_size -- --nocapture`). Set PIOSCOPE_STORE_SIZE_OUT to a
//! new directory to keep the trace (e.g. to inspect it with pyarrow or DuckDB).

use std::fs;

use pioscope_trace::merge::merge;
use pioscope_trace::raw::fixture::{FixtureEvent, RawFileBuilder};
use pioscope_trace::raw::format::{flags, string_kind};
use pioscope_trace::store::{Trace, EVENTS_FILE};

const RANKS: u32 = 4;
const CALLS: u64 = 1_000; // MPI_File_write_at_all calls per rank
const PER_CALL: u64 = 100; // pwrites inside each call

/// xorshift64*: deterministic noise without a dependency.
struct Noise(u64);
impl Noise {
    fn next(&mut self, below: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) % below
    }
}

#[test]
fn hpio_pattern_costs_at_most_4_bytes_per_event() {
    let dir = tempfile::tempdir().expect("tmp");
    let raw = dir.path().join("raw");
    fs::create_dir(&raw).expect("mkdir");
    for rank in 0..RANKS {
        let mut noise = Noise(0x9E37_79B9_7F4A_7C15 ^ rank as u64);
        let t0 = 1_000_000_000u64 + rank as u64 * 777;
        let mut b = RawFileBuilder::monotonic(1000 + rank, 1, t0);
        let (r, n) = (rank.to_string(), RANKS.to_string());
        b.job(&[("rank", r.as_str()), ("size", n.as_str()), ("host", "n1")]);
        b.string(string_kind::FILE, 1, "/scratch/hpio.dat", 0x0BD0_0BD0);
        let mut t = t0 + 10_000;
        let mut offset = rank as u64 * 32;
        let mut chunk = Vec::new();
        for call in 0..CALLS {
            let call_start = t;
            t += 500 + noise.next(200);
            for _ in 0..PER_CALL {
                let dur = 100 + noise.next(120);
                chunk.push(
                    FixtureEvent::new(14, t, dur)
                        .object(1)
                        .size(32)
                        .offset(offset)
                        .depth(1),
                );
                offset += 160;
                t += 240 + noise.next(120); // a pwrite every ~300 ns
            }
            t += 300 + noise.next(200);
            chunk.push(
                FixtureEvent::new(319, call_start, t - call_start)
                    .object(1)
                    .size(32 * PER_CALL)
                    .flags(flags::COLLECTIVE)
                    .link(1u64 << 32 | (call + 1)),
            );
            if chunk.len() > 4000 {
                b.events(0, &chunk);
                chunk.clear();
            }
            t += 2_000 + noise.next(1_000);
        }
        b.events(0, &chunk);
        b.end();
        b.write_to(&raw.join(format!("n1-{rank}.praw")))
            .expect("write");
    }
    let out = match std::env::var_os("PIOSCOPE_STORE_SIZE_OUT") {
        Some(p) => std::path::PathBuf::from(p),
        None => dir.path().join("trace"),
    };
    let summary = merge(&raw, &out, &mut |_| {}).expect("merge");
    let events = summary.meta.counts.events;
    assert_eq!(events, RANKS as u64 * CALLS * (PER_CALL + 1));
    let bytes = fs::metadata(out.join(EVENTS_FILE)).expect("stat").len();
    let per_event = bytes as f64 / events as f64;
    eprintln!("events.parquet: {bytes} bytes for {events} events = {per_event:.3} bytes/event");
    assert!(
        per_event <= 4.0,
        "{per_event:.3} bytes/event is over the 4-byte budget"
    );

    // The store reads back in full and in order.
    let trace = Trace::open(&out).expect("open");
    let mut n = 0u64;
    let mut last = (i32::MIN, i64::MIN);
    for batch in trace.events().expect("events") {
        for e in batch.expect("batch").iter() {
            assert_eq!(e.id, n as i64);
            assert!((e.rank, e.start_ns) >= last);
            last = (e.rank, e.start_ns);
            if e.func == "pwrite" {
                assert!(e.parent.is_some());
            }
            n += 1;
        }
    }
    assert_eq!(n, events);
}
