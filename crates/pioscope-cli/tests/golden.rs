//! Golden outputs: `pioscope stats` (every grouping) and `pioscope dump` on a fixed fixture
//! trace, compared byte for byte with tests/golden/*.txt. After an intended change, refresh
//! them with: PIOSCOPE_BLESS=1 cargo test --release -p pioscope-cli --test golden

mod common;

use std::fs;
use std::path::PathBuf;

use common::{pioscope, trace};

fn check(name: &str, args: &[&str]) {
    let dir = tempfile::tempdir().expect("tmp");
    let t = trace(dir.path());
    let out = pioscope()
        .args(&args[..1])
        .arg(&t)
        .args(&args[1..])
        .assert()
        .success();
    let actual = String::from_utf8(out.get_output().stdout.clone()).expect("utf-8");
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    if std::env::var_os("PIOSCOPE_BLESS").is_some() {
        fs::write(&path, &actual).expect("write golden");
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

#[test]
fn stats_by_layer() {
    check("stats_by_layer.txt", &["stats"]);
}

#[test]
fn stats_by_func() {
    check("stats_by_func.txt", &["stats", "--by", "func"]);
}

#[test]
fn stats_by_file() {
    check("stats_by_file.txt", &["stats", "--by", "file"]);
}

#[test]
fn stats_by_rank() {
    check("stats_by_rank.txt", &["stats", "--by", "rank"]);
}

#[test]
fn dump_rank_1() {
    check("dump_rank1.txt", &["dump", "--rank", "1"]);
}
