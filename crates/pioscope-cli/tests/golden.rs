//! Golden outputs: `pioscope stats` (every grouping), `pioscope dump` and `pioscope report` on a
//! fixed fixture trace, and `pioscope report` (text and JSON) on the two HPIO traces checked in
//! under tests/data/ (real runs: 4 ranks, 32-byte regions, independent and collective) and
//! `pioscope diff` of the two,
//! compared byte for byte with tests/golden/*. After an intended change, refresh them with:
//! PIOSCOPE_BLESS=1 cargo test --release -p pioscope-cli --test golden
//!
//! The report's findings come from the rules (docs/FINDINGS.md): a rule change shows here too.

mod common;

use std::path::PathBuf;

use common::{assert_golden, pioscope, trace};

/// Runs `pioscope ARGS[0] <fixture trace> ARGS[1..]` and compares stdout with golden/NAME.
fn check(name: &str, args: &[&str]) {
    let dir = tempfile::tempdir().expect("tmp");
    let t = trace(dir.path());
    check_on(name, &t, args);
}

/// The same on a trace checked in under tests/data/.
fn check_data(name: &str, trace: &str, args: &[&str]) {
    let t = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data")
        .join(trace);
    check_on(name, &t, args);
}

fn check_on(name: &str, t: &std::path::Path, args: &[&str]) {
    let out = pioscope()
        .args(&args[..1])
        .arg(t)
        .args(&args[1..])
        .assert()
        .success();
    let actual = String::from_utf8(out.get_output().stdout.clone()).expect("utf-8");
    assert_golden(name, &actual);
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

#[test]
fn stats_by_host() {
    check("stats_by_host.txt", &["stats", "--by", "host"]);
}

#[test]
fn stats_by_phase() {
    check("stats_by_phase.txt", &["stats", "--by", "phase"]);
}

#[test]
fn report_fixture() {
    check("report_fixture.txt", &["report"]);
}

#[test]
fn report_hpio_collective_text() {
    check_data("report_hpio_collective.txt", "hpio-collective", &["report"]);
}

#[test]
fn report_hpio_collective_json() {
    check_data(
        "report_hpio_collective.json",
        "hpio-collective",
        &["report", "--json"],
    );
}

#[test]
fn report_hpio_independent_text() {
    check_data(
        "report_hpio_independent.txt",
        "hpio-independent",
        &["report"],
    );
}

#[test]
fn report_hpio_independent_json() {
    check_data(
        "report_hpio_independent.json",
        "hpio-independent",
        &["report", "--json"],
    );
}

/// `pioscope diff` of the two HPIO traces (independent as the baseline), run from tests/data/
/// so the paths it prints are the same in every checkout; with `--fail-above 10%` it lists
/// the regressions and exits 3 (issue 17).
#[test]
fn diff_hpio_independent_to_collective() {
    let data = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data");
    let out = pioscope()
        .current_dir(&data)
        .args([
            "diff",
            "hpio-independent",
            "hpio-collective",
            "--fail-above",
            "10%",
        ])
        .assert()
        .code(3);
    let actual = String::from_utf8(out.get_output().stdout.clone()).expect("utf-8");
    assert_golden("diff_hpio.txt", &actual);
}
