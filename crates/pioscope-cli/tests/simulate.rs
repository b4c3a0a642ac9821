//! `pioscope simulate` end to end (issue 4): determinism (same inputs and seed ⇒ byte-identical
//! events.parquet and meta.json), golden summaries of a small HPIO workload on every preset,
//! the output store read back by `pioscope stats`, replay of the traces in tests/data, and
//! errors naming the bad key. Refresh the golden files after an intended change with:
//! PIOSCOPE_BLESS=1 cargo test --release -p pioscope-cli --test simulate

mod common;

use std::fs;
use std::path::{Path, PathBuf};

use common::{assert_golden, pioscope};

const HPIO: &str = "hpio:ranks=4,region_count=1024,mode=collective";

fn simulate(out: &Path, args: &[&str]) -> String {
    let o = pioscope()
        .arg("simulate")
        .args(args)
        .arg("-o")
        .arg(out)
        .assert()
        .success();
    String::from_utf8(o.get_output().stdout.clone()).expect("utf-8")
}

/// The summary minus the line naming the temporary output directory.
fn stable(summary: &str) -> String {
    summary
        .lines()
        .filter(|l| !l.starts_with("trace: "))
        .map(|l| format!("{l}\n"))
        .collect()
}

#[test]
fn same_seed_same_bytes() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    for dir in [&a, &b] {
        simulate(
            dir,
            &[
                "--workload",
                "hpio:ranks=4,region_count=512,mode=independent",
                "--system",
                "pvfs2-2009",
                "--seed",
                "7",
            ],
        );
    }
    for f in [
        "events.parquet",
        "meta.json",
        "files.parquet",
        "settings.parquet",
        "counters.parquet",
    ] {
        let x = fs::read(a.join(f)).expect("read a");
        let y = fs::read(b.join(f)).expect("read b");
        assert!(x == y, "{f} differs between two runs with the same seed");
    }
}

#[test]
fn golden_summaries_on_every_preset() {
    for preset in ["local", "pvfs2-2009", "lustre-fdr"] {
        let tmp = tempfile::tempdir().expect("tmp");
        let out = tmp.path().join("sim");
        let s = simulate(&out, &["--workload", HPIO, "--system", preset]);
        assert_golden(&format!("simulate_hpio_{preset}.txt"), &stable(&s));
    }
}

#[test]
fn stats_reads_the_simulated_store() {
    let tmp = tempfile::tempdir().expect("tmp");
    let out = tmp.path().join("sim");
    simulate(&out, &["--workload", HPIO, "--system", "pvfs2-2009"]);
    let o = pioscope()
        .arg("stats")
        .arg(&out)
        .args(["--by", "func"])
        .assert()
        .success();
    let text = String::from_utf8(o.get_output().stdout.clone()).expect("utf-8");
    for f in ["MPI_File_write_all", "pwrite", "MPI_Alltoall"] {
        assert!(text.contains(f), "stats lacks {f}:\n{text}");
    }
    let o = pioscope()
        .arg("stats")
        .arg(&out)
        .args(["--by", "server"])
        .assert()
        .success();
    let text = String::from_utf8(o.get_output().stdout.clone()).expect("utf-8");
    assert!(text.contains("server-0"), "no server rows:\n{text}");
}

#[test]
fn replays_the_traced_hpio_runs() {
    let data = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data");
    for (name, expect) in [
        ("hpio-collective", "MPI_File_write_all"),
        ("hpio-independent", "MPI_File_write"),
    ] {
        let tmp = tempfile::tempdir().expect("tmp");
        let out = tmp.path().join("sim");
        let t = data.join(name);
        let s = simulate(
            &out,
            &["--trace", t.to_str().expect("path"), "--system", "local"],
        );
        assert!(s.contains(expect), "{name}:\n{s}");
        assert!(s.contains("write: 256.0 KiB"), "{name}:\n{s}");
    }
}

#[test]
fn bad_spec_names_key_and_value() {
    let tmp = tempfile::tempdir().expect("tmp");
    let o = pioscope()
        .arg("simulate")
        .args(["--workload", "hpio:region_size=big"])
        .arg("-o")
        .arg(tmp.path().join("x"))
        .assert()
        .code(2);
    let err = String::from_utf8(o.get_output().stderr.clone()).expect("utf-8");
    assert!(err.contains("region_size=\"big\""), "{err}");
    assert!(!tmp.path().join("x").exists(), "no output on error");
}

/// Issue 15 item 5: with the model's [variance], the same seed gives the same summary and
/// another seed another one.
#[test]
fn variance_is_reproduced_by_the_seed() {
    let tmp = tempfile::tempdir().expect("tmp");
    let run = |name: &str, seed: &str| {
        stable(&simulate(
            &tmp.path().join(name),
            &[
                "--workload",
                "jacobi:ranks=8,iterations=20,output_every=5",
                "--system",
                "pvfs2-2009",
                "--set",
                "variance.network_jitter=0.2",
                "--set",
                "variance.disk_jitter=0.3",
                "--seed",
                seed,
            ],
        ))
    };
    let (a, b, c) = (run("a", "1"), run("b", "1"), run("c", "2"));
    assert_eq!(a, b);
    assert_ne!(a, c);
}

/// Issue 15 item 6: the new workloads run and show their calls (calls and bytes of the
/// summary's table, spacing aside).
#[test]
fn mpi_io_test_comm_and_jacobi_workloads() {
    for (spec, expect) in [
        (
            "mpi-io-test:ranks=2,blocks=4,block_size=64K,iterations=1",
            "MPI_File_write_at 8 512.0 KiB",
        ),
        (
            "comm:pattern=ring,ranks=4,size=64K,iterations=3",
            "MPI_Isend 12 768.0 KiB",
        ),
        (
            "comm:pattern=allgather,ranks=4,size=64K,iterations=3",
            "MPI_Allgather 12 768.0 KiB",
        ),
        (
            "jacobi:ranks=2,iterations=4,output_every=2,output=64K",
            "MPI_File_write_at_all 4 256.0 KiB",
        ),
    ] {
        let tmp = tempfile::tempdir().expect("tmp");
        let s = simulate(
            &tmp.path().join("sim"),
            &["--workload", spec, "--system", "pvfs2-2009"],
        );
        let words = s.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(words.contains(expect), "{spec}:\n{s}");
    }
}
