//! Fixtures shared by the CLI tests: raw files written the way the runtime writes them, and
//! helpers to run the `pioscope` binary.
#![allow(dead_code)]

use std::fs;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use pioscope_trace::raw::fixture::{FixtureEvent as E, RawFileBuilder};
use pioscope_trace::raw::format::{flags, string_kind, sync_phase};

const OPEN: u16 = 300;
const WRITE_AT_ALL: u16 = 319;
const READ_AT: u16 = 311;
const CLOSE: u16 = 301;
const PWRITE: u16 = 14;
const PREAD: u16 = 12;
const OPEN_POSIX: u16 = 1;
const STAT: u16 = 40;
const BARRIER: u16 = 430;
const SEND: u16 = 410;
const RECV: u16 = 414;
const REGION: u16 = 500;

/// The raw file of one rank of a small, fully deterministic MPI-IO job: a checkpoint region
/// with two collective writes (each two pwrites beneath), a read, a failed stat, a barrier and
/// a message to the next rank.
pub fn rank_file(rank: u32, ranks: u32) -> RawFileBuilder {
    let t0 = 50_000_000 + rank as u64 * 1_500;
    let mut b = RawFileBuilder::monotonic(4000 + rank, 3999, t0);
    let (r, n) = (rank.to_string(), ranks.to_string());
    b.job(&[
        ("rank", r.as_str()),
        ("size", n.as_str()),
        ("host", if rank < 2 { "node-a" } else { "node-b" }),
        ("cmdline", "./ckpt --steps 2"),
        ("mpi_library", "MPICH 4.0.2"),
        ("tracer_version", "0.1.0"),
    ]);
    b.string(string_kind::FILE, 1, "/scratch/ckpt.dat", 0x0BD0_0BD0);
    b.string(string_kind::FILE, 2, "/home/user/input.nml", 0xEF53);
    b.string(string_kind::COMMUNICATOR, 3, "world", 0);
    b.string(string_kind::REGION, 4, "checkpoint", 0);
    b.clock_sync(sync_phase::INIT, 0, 400, t0 + 100);
    b.settings(
        1,
        OPEN,
        t0 + 2_000,
        &[("cb_buffer_size", "16777216"), ("romio_cb_write", "enable")],
    );
    let r64 = rank as u64;
    let link = |n: u64| 1u64 << 32 | n;
    let mut ev = vec![
        E::new(OPEN_POSIX, t0 + 500, 3_000).object(2).result(3),
        E::new(PREAD, t0 + 4_000, 20_000)
            .object(2)
            .size(4096)
            .offset(0)
            .result(812),
        E::new(OPEN, t0 + 30_000, 150_000)
            .object(1)
            .flags(flags::COLLECTIVE)
            .link(link(1))
            .result(0),
    ];
    for step in 0..2u64 {
        let s = t0 + 200_000 + step * 400_000;
        let base = step * 1_048_576 * ranks as u64 + r64 * 1_048_576;
        ev.push(
            E::new(PWRITE, s + 10_000, 60_000 + r64 * 5_000)
                .object(1)
                .size(524_288)
                .offset(base)
                .depth(2),
        );
        ev.push(
            E::new(PWRITE, s + 80_000, 70_000)
                .object(1)
                .size(524_288)
                .offset(base + 524_288)
                .depth(2),
        );
        ev.push(
            E::new(WRITE_AT_ALL, s, 200_000)
                .object(1)
                .size(1_048_576)
                .offset(base)
                .depth(1)
                .flags(flags::COLLECTIVE)
                .link(link(2 + step)),
        );
    }
    ev.push(E::new(REGION, t0 + 190_000, 850_000).object(4));
    ev.push(
        E::new(PREAD, t0 + 1_100_010, 30_000)
            .object(1)
            .size(65_536)
            .offset(r64 * 65_536)
            .depth(1),
    );
    ev.push(
        E::new(READ_AT, t0 + 1_100_000, 50_000)
            .object(1)
            .size(65_536)
            .offset(r64 * 65_536),
    );
    ev.push(
        E::new(STAT, t0 + 1_200_000, 2_000)
            .object(1)
            .result(-1)
            .error(2),
    );
    ev.push(
        E::new(BARRIER, t0 + 1_300_000, 40_000)
            .object(3)
            .flags(flags::COLLECTIVE)
            .offset(0xFFFF_FFFFu64 << 32 | ranks as u64),
    );
    let next = (rank + 1) % ranks;
    let prev = (rank + ranks - 1) % ranks;
    ev.push(
        E::new(SEND, t0 + 1_400_000, 5_000)
            .object(3)
            .size(8)
            .offset((next as u64) << 32 | 7),
    );
    ev.push(
        E::new(RECV, t0 + 1_410_000, 9_000)
            .object(3)
            .size(8)
            .offset((prev as u64) << 32 | 7),
    );
    ev.push(
        E::new(CLOSE, t0 + 1_500_000, 20_000)
            .object(1)
            .flags(flags::COLLECTIVE)
            .link(link(4))
            .result(0),
    );
    b.events(0, &ev);
    b.clock_sync(sync_phase::FINALIZE, 0, 400, t0 + 1_600_000);
    b.end();
    b
}

/// Writes the raw files of a `ranks`-rank job into `dir` (created).
pub fn raw_job(dir: &Path, ranks: u32) {
    fs::create_dir_all(dir).expect("mkdir");
    for rank in 0..ranks {
        let host = if rank < 2 { "node-a" } else { "node-b" };
        rank_file(rank, ranks)
            .write_to(&dir.join(format!("{host}-{}-0.praw", 4000 + rank)))
            .expect("write");
    }
}

/// The pioscope binary.
pub fn pioscope() -> Command {
    let mut c = Command::cargo_bin("pioscope").expect("binary");
    c.env_remove("PIOSCOPE_LIB_DIR")
        .env_remove("PIOSCOPE_BIN_DIR")
        .env_remove("RUST_BACKTRACE");
    c
}

/// Merges a 4-rank fixture job into `<dir>/trace` and returns its path.
pub fn trace(dir: &Path) -> PathBuf {
    let raw = dir.join("raw");
    raw_job(&raw, 4);
    let out = dir.join("trace");
    pioscope()
        .arg("merge")
        .arg(&raw)
        .arg("-o")
        .arg(&out)
        .assert()
        .success();
    out
}

// Not every test binary that includes this module writes scripts.
#[allow(unused_imports)]
pub use pioscope_trace::test_script::write_shell_script as script;

/// Compares `actual` with tests/golden/NAME byte for byte; with PIOSCOPE_BLESS set, writes it
/// there instead (the one refresh command of every golden test).
pub fn assert_golden(name: &str, actual: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    if std::env::var_os("PIOSCOPE_BLESS").is_some() {
        fs::write(&path, actual).expect("write golden");
        return;
    }
    let expected = fs::read_to_string(&path).unwrap_or_else(|_| {
        panic!(
            "{} missing: run with PIOSCOPE_BLESS=1 to create it",
            path.display()
        )
    });
    assert!(
        actual == expected,
        "{name} differs from {}:\n--- expected\n{expected}\n--- actual\n{actual}\n(PIOSCOPE_BLESS=1 refreshes it)",
        path.display()
    );
}
