//! The store must be readable as it is by pandas and DuckDB: merges a small job that fills
//! every column (nulls, dictionaries, regions, communicators, settings) and runs
//! tests/python/check_store.py on it. Skipped (with a message) when python3, pyarrow, pandas
//! or duckdb is missing.

use std::fs;
use std::path::PathBuf;
use std::process::Command;

use pioscope_trace::merge::merge;
use pioscope_trace::raw::fixture::{FixtureEvent as E, RawFileBuilder};
use pioscope_trace::raw::format::{flags, string_kind, sync_phase};

#[test]
fn pandas_and_duckdb_read_the_store() {
    let dir = tempfile::tempdir().expect("tmp");
    let raw = dir.path().join("raw");
    fs::create_dir(&raw).expect("mkdir");
    for rank in 0..3u32 {
        let t0 = 5_000_000 + rank as u64 * 1_000;
        let mut b = RawFileBuilder::monotonic(100 + rank, 1, t0);
        let r = rank.to_string();
        b.job(&[("rank", r.as_str()), ("size", "3"), ("host", "n1")]);
        b.string(string_kind::FILE, 1, "/scratch/a.dat", 0x0BD0_0BD0);
        b.string(string_kind::FILE, 2, "/scratch/b.dat", 0xEF53);
        b.string(string_kind::COMMUNICATOR, 1, "world", 0);
        b.string(string_kind::REGION, 1, "step 1", 0);
        b.clock_sync(sync_phase::INIT, rank as i64 * 10, 100, t0);
        b.settings(
            1,
            300,
            t0 + 10,
            &[("cb_buffer_size", "16777216"), ("striping_factor", "4")],
        );
        b.events(
            0,
            &[
                E::new(1, t0 + 100, 50).object(2).result(3),
                E::new(14, t0 + 1_010, 20)
                    .object(1)
                    .size(100)
                    .offset(rank as u64 * 100)
                    .depth(2),
                E::new(318, t0 + 1_000, 90)
                    .object(1)
                    .size(100)
                    .depth(1)
                    .flags(flags::COLLECTIVE)
                    .link(1 << 32 | 1)
                    .result(0),
                E::new(500, t0 + 900, 300).object(1),
                E::new(356, t0 + 2_000, 10)
                    .object(1)
                    .size(8)
                    .flags(flags::NONBLOCKING)
                    .link(77)
                    .result(0),
                E::new(600, t0 + 2_100, 0)
                    .object(1)
                    .depth(1)
                    .flags(flags::COMPLETION)
                    .link(77),
                E::new(420, t0 + 2_050, 100),
                E::new(433, t0 + 3_000, 40)
                    .object(1)
                    .size(8)
                    .flags(flags::COLLECTIVE)
                    .offset(3),
                E::new(410, t0 + 4_000, 40)
                    .object(1)
                    .size(8)
                    .offset(((rank as u64 + 1) % 3) << 32 | 5),
                E::new(12, t0 + 5_000, 40)
                    .object(2)
                    .size(4096)
                    .flags(flags::OFFSET_UNKNOWN)
                    .result(-1)
                    .error(9),
            ],
        );
        b.end();
        b.write_to(&raw.join(format!("n1-{rank}.praw")))
            .expect("write");
    }
    let out = dir.path().join("trace");
    merge(&raw, &out, &mut |_| {}).expect("merge");

    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/python/check_store.py");
    let output = match Command::new("python3").arg(&script).arg(&out).output() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("skipped: cannot run python3: {e}");
            return;
        }
    };
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    if output.status.code() == Some(77) {
        eprintln!("{stdout}");
        return;
    }
    assert!(
        output.status.success(),
        "check_store.py failed:\n{stdout}\n{stderr}"
    );
    assert!(stdout.contains("ok"), "{stdout}");
    eprintln!("{stdout}");
}
