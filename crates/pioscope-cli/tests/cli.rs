//! The command line's error paths and exit codes: every bad input gives exit code 2 and one
//! line on stderr (never a panic or backtrace); a damaged raw file still merges (exit 0, with a
//! warning naming the file and byte offset); `run` and `bench` pass the program's status on.

mod common;

use std::fs;

use common::{pioscope, rank_file, raw_job, script, trace};
use predicates::prelude::*;

/// stderr is exactly one "pioscope: error: ..." line containing `what`.
fn one_line_error(what: impl Into<String>) -> impl Predicate<str> {
    predicate::str::starts_with("pioscope: error: ")
        .and(predicate::str::contains(what))
        .and(predicate::function(|s: &str| {
            s.trim_end().lines().count() == 1
        }))
        .and(predicate::str::contains("panicked").not())
}

#[test]
fn help_documents_exit_codes() {
    for cmd in [
        None,
        Some("run"),
        Some("merge"),
        Some("import"),
        Some("stats"),
        Some("report"),
        Some("dump"),
        Some("bench"),
    ] {
        let mut c = pioscope();
        if let Some(cmd) = cmd {
            c.arg(cmd);
        }
        c.arg("--help")
            .assert()
            .success()
            .stdout(predicate::str::contains("Exit codes:"));
    }
}

#[test]
fn usage_errors_exit_2() {
    pioscope().assert().code(2);
    pioscope().args(["stats"]).assert().code(2);
    pioscope()
        .args(["stats", "x", "--by", "phaze"])
        .assert()
        .code(2);
    pioscope().args(["run"]).assert().code(2);
    pioscope().args(["bench", "nope"]).assert().code(2);
    pioscope().args(["report"]).assert().code(2);
}

/// A mistake in the command line is one `pioscope: error:` line naming it, exit 2.
#[test]
fn usage_errors_are_one_line() {
    for (args, says) in [
        (&["stats", "x", "--by", "phaze"][..], "'phaze'"),
        (
            &["bounds", "--system", "pvfs2-2009", "--clients", "0"][..],
            "'0'",
        ),
        (&["stats"][..], "<TRACE>"),
    ] {
        let out = pioscope().args(args).output().expect("run");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(
            stderr.starts_with("pioscope: error: ") && stderr.contains(says),
            "{args:?}: {stderr}"
        );
    }
}

#[test]
fn merge_then_refuse_to_overwrite() {
    let dir = tempfile::tempdir().expect("tmp");
    let raw = dir.path().join("raw");
    raw_job(&raw, 2);
    let out = dir.path().join("t");
    pioscope()
        .arg("merge")
        .arg(&raw)
        .arg("-o")
        .arg(&out)
        .assert()
        .success()
        .stdout(
            predicate::str::contains("2 ranks, 2 processes, 34 events, 2 files")
                .and(predicate::str::contains("partial: no")),
        )
        .stderr(predicate::str::is_empty());
    assert!(out.join("meta.json").is_file());
    pioscope()
        .arg("merge")
        .arg(&raw)
        .arg("-o")
        .arg(&out)
        .assert()
        .code(2)
        .stderr(one_line_error("already exists (use --force"));
    pioscope()
        .arg("merge")
        .arg(&raw)
        .arg("-o")
        .arg(&out)
        .arg("--force")
        .assert()
        .success();
    // --force never deletes something that is not a trace.
    let other = dir.path().join("precious");
    fs::create_dir(&other).expect("mkdir");
    fs::write(other.join("thesis.tex"), "x").expect("write");
    pioscope()
        .arg("merge")
        .arg(&raw)
        .arg("-o")
        .arg(&other)
        .arg("--force")
        .assert()
        .code(2)
        .stderr(one_line_error("it is not a pioscope trace directory"));
    assert!(other.join("thesis.tex").is_file());
}

#[test]
fn merge_raw_dir_missing_or_empty() {
    let dir = tempfile::tempdir().expect("tmp");
    let out = dir.path().join("t");
    pioscope()
        .arg("merge")
        .arg(dir.path().join("nope"))
        .arg("-o")
        .arg(&out)
        .assert()
        .code(2)
        .stderr(one_line_error("not found"));
    let empty = dir.path().join("empty");
    fs::create_dir(&empty).expect("mkdir");
    pioscope()
        .arg("merge")
        .arg(&empty)
        .arg("-o")
        .arg(&out)
        .assert()
        .code(2)
        .stderr(one_line_error("holds no .praw files"));
    fs::write(empty.join("x.praw"), "garbage").expect("write");
    pioscope()
        .arg("merge")
        .arg(&empty)
        .arg("-o")
        .arg(&out)
        .assert()
        .code(2)
        .stderr(one_line_error("no usable raw file"));
    assert!(!out.exists());
}

#[test]
fn corrupt_raw_file_merges_with_a_warning() {
    let dir = tempfile::tempdir().expect("tmp");
    let raw = dir.path().join("raw");
    raw_job(&raw, 2);
    // Damage rank 1: a bad chunk magic right after its clock sync chunk.
    let mut b = rank_file(1, 2);
    let bytes = b.bytes_mut();
    // Chunks: JOB, 4 STRINGs, CLOCK_SYNC, SETTINGS, EVENTS, ...: find the EVENTS chunk header.
    let mut at = 64;
    loop {
        let kind = u16::from_le_bytes([bytes[at + 4], bytes[at + 5]]);
        if kind == 1 {
            break;
        }
        let payload = u32::from_le_bytes([
            bytes[at + 12],
            bytes[at + 13],
            bytes[at + 14],
            bytes[at + 15],
        ]);
        at += 32 + payload as usize;
    }
    bytes[at] = b'X';
    b.write_to(&raw.join("node-a-4001-0.praw")).expect("write");
    let out = dir.path().join("t");
    let warning = format!(
        "pioscope: warning: trace is partial: rank-1 raw file node-a-4001-0.praw: corrupt chunk header at byte {at} (bad magic)"
    );
    pioscope()
        .arg("merge")
        .arg(&raw)
        .arg("-o")
        .arg(&out)
        .assert()
        .success()
        .stderr(predicate::str::contains(warning))
        .stdout(predicate::str::contains("partial: yes (1 reason, listed"));
    pioscope()
        .arg("stats")
        .arg(&out)
        .assert()
        .success()
        .stdout(predicate::str::contains("PARTIAL trace"));
}

#[test]
fn not_a_trace() {
    let dir = tempfile::tempdir().expect("tmp");
    pioscope()
        .arg("stats")
        .arg(dir.path())
        .assert()
        .code(2)
        .stderr(one_line_error("is not a pioscope trace"));
    pioscope()
        .arg("dump")
        .arg(dir.path().join("missing"))
        .assert()
        .code(2)
        .stderr(one_line_error("is not a pioscope trace"));
    fs::write(
        dir.path().join("meta.json"),
        "{\"format\": \"something-else\", \"version\": 1}",
    )
    .expect("write");
    pioscope()
        .arg("stats")
        .arg(dir.path())
        .assert()
        .code(2)
        .stderr(one_line_error("is not supported"));
    fs::write(dir.path().join("meta.json"), "{ not json").expect("write");
    pioscope()
        .arg("stats")
        .arg(dir.path())
        .assert()
        .code(2)
        .stderr(one_line_error("not a valid trace meta.json"));
}

#[test]
fn stats_json_is_machine_readable() {
    let dir = tempfile::tempdir().expect("tmp");
    let t = trace(dir.path());
    let out = pioscope()
        .arg("stats")
        .arg(&t)
        .args(["--by", "func", "--json"])
        .assert()
        .success();
    let v: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).expect("json");
    assert_eq!(v["group_by"], "func");
    assert_eq!(v["ranks"], 4);
    let rows = v["rows"].as_array().expect("rows");
    let pwrite = rows
        .iter()
        .find(|r| r["group"] == "pwrite")
        .expect("pwrite row");
    assert_eq!(pwrite["layer"], "posix");
    assert_eq!(pwrite["operations"], 16);
    assert_eq!(pwrite["bytes"], 16 * 524_288);
}

#[test]
fn dump_filters_and_limits() {
    let dir = tempfile::tempdir().expect("tmp");
    let t = trace(dir.path());
    let out = pioscope()
        .arg("dump")
        .arg(&t)
        .args(["--rank", "2", "--layer", "posix", "--limit", "3"])
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4, "{text}");
    assert!(
        lines[1..].iter().all(|l| l.contains(" r2 p2 t0 ")),
        "{text}"
    );
    assert!(
        lines[1].contains("open /home/user/input.nml -> 3"),
        "{text}"
    );
    // A closed pipe is a normal end, not an error.
    let out = pioscope()
        .arg("dump")
        .arg(&t)
        .arg("--rank")
        .arg("-1")
        .assert()
        .success();
    assert_eq!(
        String::from_utf8_lossy(&out.get_output().stdout)
            .lines()
            .count(),
        1
    );
}

fn lib_dir(dir: &std::path::Path) -> std::path::PathBuf {
    let lib = dir.join("lib");
    fs::create_dir_all(&lib).expect("mkdir");
    // Empty files: the dynamic loader warns and ignores them, which is all a fake program needs.
    fs::write(lib.join("libpioscope.so"), "").expect("write");
    fs::write(lib.join("libpioscope-posix.so"), "").expect("write");
    lib
}

/// A stand-in for a traced program: it drops a prepared raw file where the runtime would,
/// then exits with `exit`.
fn fake_program(dir: &std::path::Path, exit: &str) -> std::path::PathBuf {
    let raw = dir.join("prepared.praw");
    rank_file(0, 1).write_to(&raw).expect("write");
    let prog = dir.join("fakeprog");
    script(
        &prog,
        &format!(
            "cp {} \"$PIOSCOPE_RAW_DIR/\" || exit 99\necho \"args: $*\"\n{exit}",
            raw.display()
        ),
    );
    prog
}

#[test]
fn run_passes_the_exit_status_on_and_cleans_up() {
    let dir = tempfile::tempdir().expect("tmp");
    let lib = lib_dir(dir.path());
    let prog = fake_program(dir.path(), "exit 3");
    let t = dir.path().join("t");
    pioscope()
        .env("PIOSCOPE_LIB_DIR", &lib)
        .arg("run")
        .arg("-o")
        .arg(&t)
        .arg("--")
        .arg(&prog)
        .args(["--steps", "2"])
        .assert()
        .code(3)
        .stdout(
            predicate::str::contains("args: --steps 2")
                .and(predicate::str::contains("1 ranks, 1 processes, 17 events")),
        )
        .stderr(predicate::str::contains("exited with status 3"));
    assert!(t.join("meta.json").is_file());
    assert!(!dir.path().join("t.raw").exists(), "raw dir removed");
    // Again: the trace exists.
    pioscope()
        .env("PIOSCOPE_LIB_DIR", &lib)
        .arg("run")
        .arg("-o")
        .arg(&t)
        .arg(&prog)
        .assert()
        .code(2)
        .stderr(one_line_error("already exists"));
    // --force and --keep-raw.
    pioscope()
        .env("PIOSCOPE_LIB_DIR", &lib)
        .args(["run", "--force", "--keep-raw", "-o"])
        .arg(&t)
        .arg(&prog)
        .assert()
        .code(3)
        .stdout(predicate::str::contains("raw files:"));
    assert!(dir.path().join("t.raw").is_dir());
}

#[test]
fn run_killed_program_exits_128_plus_signal_and_still_merges() {
    let dir = tempfile::tempdir().expect("tmp");
    let lib = lib_dir(dir.path());
    let prog = fake_program(dir.path(), "kill -9 $$");
    let t = dir.path().join("t");
    pioscope()
        .env("PIOSCOPE_LIB_DIR", &lib)
        .arg("run")
        .arg("-o")
        .arg(&t)
        .arg(&prog)
        .assert()
        .code(137);
    assert!(t.join("meta.json").is_file());
}

#[test]
fn run_under_a_launcher_goes_through_env() {
    let dir = tempfile::tempdir().expect("tmp");
    let lib = lib_dir(dir.path());
    let prog = fake_program(dir.path(), "exit 0");
    // A launcher that checks it is not preloaded itself, then runs its command once.
    let launcher = dir.path().join("fake-mpiexec");
    script(
        &launcher,
        "[ -z \"$LD_PRELOAD\" ] || exit 98\n[ \"$1\" = -n ] || exit 97\nshift 2\nexec \"$@\"",
    );
    let t = dir.path().join("t");
    pioscope()
        .env("PIOSCOPE_LIB_DIR", &lib)
        .env_remove("LD_PRELOAD")
        .args(["run", "-n", "3", "--launcher"])
        .arg(&launcher)
        .arg("-o")
        .arg(&t)
        .arg("--")
        .arg(&prog)
        .arg("x")
        .assert()
        .success()
        .stdout(predicate::str::contains("args: x"));
}

#[test]
fn run_errors() {
    let dir = tempfile::tempdir().expect("tmp");
    let lib = lib_dir(dir.path());
    let t = dir.path().join("t");
    pioscope()
        .env("PIOSCOPE_LIB_DIR", &lib)
        .arg("run")
        .arg("-o")
        .arg(&t)
        .arg("--")
        .arg("./no-such-program")
        .assert()
        .code(2)
        .stderr(one_line_error("program not found: ./no-such-program"));
    pioscope()
        .env("PIOSCOPE_LIB_DIR", dir.path().join("nolib"))
        .arg("run")
        .arg("-o")
        .arg(&t)
        .arg("true")
        .assert()
        .code(2)
        .stderr(one_line_error("runtime library"));
    pioscope()
        .env("PIOSCOPE_LIB_DIR", &lib)
        .args(["run", "-n", "2", "--launcher", "no-such-launcher", "-o"])
        .arg(&t)
        .arg("true")
        .assert()
        .code(2)
        .stderr(one_line_error("launcher not found: no-such-launcher"));
    // A program that never loads the runtime writes nothing.
    pioscope()
        .env("PIOSCOPE_LIB_DIR", &lib)
        .arg("run")
        .arg("-o")
        .arg(&t)
        .arg("true")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("wrote no trace"));
    assert!(!t.exists() && !dir.path().join("t.raw").exists());
}

#[test]
fn bench_runs_the_binary_under_the_launcher() {
    let dir = tempfile::tempdir().expect("tmp");
    let bin = dir.path().join("bin");
    fs::create_dir(&bin).expect("mkdir");
    script(&bin.join("pioscope-hpio"), "echo \"hpio $*\"\nexit 4");
    let launcher = dir.path().join("fake-mpiexec");
    script(&launcher, "echo \"launch $1 $2\"\nshift 2\nexec \"$@\"");
    pioscope()
        .env("PIOSCOPE_BIN_DIR", &bin)
        .args(["bench", "hpio", "-n", "8", "--launcher"])
        .arg(&launcher)
        .args(["--", "--region-count", "16"])
        .assert()
        .code(4)
        .stdout(
            predicate::str::contains("launch -n 8")
                .and(predicate::str::contains("hpio --region-count 16")),
        );
    pioscope()
        .env("PIOSCOPE_BIN_DIR", &bin)
        .args(["bench", "md-test"])
        .assert()
        .code(2)
        .stderr(one_line_error("benchmark"));
}

#[test]
fn bench_with_trace_uses_run() {
    let dir = tempfile::tempdir().expect("tmp");
    let bin = dir.path().join("bin");
    fs::create_dir(&bin).expect("mkdir");
    let raw = dir.path().join("prepared.praw");
    rank_file(0, 1).write_to(&raw).expect("write");
    script(
        &bin.join("pioscope-mpi-io-test"),
        &format!("cp {} \"$PIOSCOPE_RAW_DIR/\"", raw.display()),
    );
    let launcher = dir.path().join("fake-mpiexec");
    script(&launcher, "shift 2\nexec \"$@\"");
    let lib = lib_dir(dir.path());
    let t = dir.path().join("bt");
    pioscope()
        .env("PIOSCOPE_BIN_DIR", &bin)
        .env("PIOSCOPE_LIB_DIR", &lib)
        .args(["bench", "mpi-io-test", "--launcher"])
        .arg(&launcher)
        .arg("--trace")
        .arg(&t)
        .assert()
        .success()
        .stdout(predicate::str::contains("17 events"));
    assert!(t.join("events.parquet").is_file());
}

#[test]
fn report_errors_are_one_line() {
    let dir = tempfile::tempdir().expect("tmp");
    pioscope()
        .arg("report")
        .arg(dir.path())
        .assert()
        .code(2)
        .stderr(one_line_error("is not a pioscope trace"));
    let t = trace(dir.path());
    pioscope()
        .arg("report")
        .arg(&t)
        .args(["--config", "/nonexistent/findings.toml"])
        .assert()
        .code(2)
        .stderr(one_line_error("/nonexistent/findings.toml"));
    let bad = dir.path().join("bad.toml");
    fs::write(&bad, "[no-such-rule]\nthreshold = 1\n").expect("write");
    pioscope()
        .arg("report")
        .arg(&t)
        .arg("--config")
        .arg(&bad)
        .assert()
        .code(2)
        .stderr(one_line_error("no-such-rule"));
}

/// One JSON object with every section; the progress bar stays off a non-terminal stderr.
#[test]
fn report_json_has_every_section() {
    let dir = tempfile::tempdir().expect("tmp");
    let t = trace(dir.path());
    let out = pioscope()
        .arg("report")
        .arg(&t)
        .arg("--json")
        .assert()
        .success()
        .stderr("");
    let v: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).expect("json");
    for key in [
        "job",
        "findings",
        "breakdown",
        "tables",
        "patterns",
        "aggregation",
    ] {
        assert!(v.get(key).is_some(), "{key}");
    }
    assert_eq!(v["job"]["ranks"], 4);
    assert_eq!(v["breakdown"]["ranks"].as_array().map(Vec::len), Some(4));
    let layer = v["tables"]["layer"].as_array().expect("rows");
    assert_eq!(layer[0]["group"], "posix");
    assert!(layer[0]["size_histogram"]
        .as_array()
        .is_some_and(|h| !h.is_empty()));
    let agg = v["aggregation"]["aggregators"]
        .as_array()
        .expect("aggregators");
    assert_eq!(agg.len(), 4);
}

#[test]
fn report_config_file_is_read() {
    let dir = tempfile::tempdir().expect("tmp");
    let t = trace(dir.path());
    let empty = dir.path().join("findings.toml");
    fs::write(&empty, "# defaults\n").expect("write");
    pioscope()
        .arg("report")
        .arg(&t)
        .arg("--config")
        .arg(&empty)
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "Time: share of the ranks' wall time",
        ));
}

/// Regression (issue 12): `export --force -o /dev/full` replaced the device node with a
/// regular file. Only regular files are replaced; outputs appear whole or not at all.
#[test]
fn export_never_replaces_what_is_not_a_regular_file() {
    use std::os::unix::fs::FileTypeExt;
    let dir = tempfile::tempdir().expect("tmp");
    let t = trace(dir.path());
    for format in ["csv", "chrome", "paje"] {
        pioscope()
            .arg("export")
            .arg(&t)
            .args(["--to", format, "--force", "-o", "/dev/full"])
            .assert()
            .code(2)
            .stderr(one_line_error(
                "refusing to replace /dev/full: it is a character device",
            ));
    }
    let full = fs::symlink_metadata("/dev/full").expect("stat /dev/full");
    assert!(full.file_type().is_char_device());
    // A symbolic link is not followed nor replaced, even with --force.
    let out = dir.path().join("out");
    fs::create_dir(&out).expect("mkdir");
    let victim = dir.path().join("victim.txt");
    fs::write(&victim, "keep").expect("write");
    std::os::unix::fs::symlink(&victim, out.join("link.csv")).expect("symlink");
    pioscope()
        .arg("export")
        .arg(&t)
        .args(["--to", "csv", "--force", "-o"])
        .arg(out.join("link.csv"))
        .assert()
        .code(2)
        .stderr(one_line_error("it is a symbolic link"));
    assert_eq!(fs::read_to_string(&victim).expect("read"), "keep");
    // A regular file is replaced with --force, and no temporary is left beside it.
    let csv = out.join("t.csv");
    fs::write(&csv, "old").expect("write");
    pioscope()
        .arg("export")
        .arg(&t)
        .args(["--to", "csv", "--force", "-o"])
        .arg(&csv)
        .assert()
        .success();
    assert!(fs::read_to_string(&csv).expect("read").starts_with("id,"));
    let mut names: Vec<String> = fs::read_dir(&out)
        .expect("ls")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["link.csv", "t.csv"]);
}

/// Regression (issue 12): `report --html` onto a device or directory is refused before reading.
#[test]
fn report_html_never_replaces_a_device() {
    let dir = tempfile::tempdir().expect("tmp");
    let t = trace(dir.path());
    pioscope()
        .arg("report")
        .arg(&t)
        .args(["--html", "/dev/full"])
        .assert()
        .code(2)
        .stderr(one_line_error("refusing to replace /dev/full"));
    pioscope()
        .arg("report")
        .arg(&t)
        .arg("--html")
        .arg(dir.path())
        .assert()
        .code(2)
        .stderr(one_line_error("it is a directory, not a regular file"));
}

/// Regression (issue 12): `merge -o a/b/c` created the missing parents silently.
#[test]
fn merge_into_a_missing_directory_names_it() {
    let dir = tempfile::tempdir().expect("tmp");
    let raw = dir.path().join("raw");
    raw_job(&raw, 2);
    let out = dir.path().join("a/b/c");
    pioscope()
        .arg("merge")
        .arg(&raw)
        .arg("-o")
        .arg(&out)
        .assert()
        .code(2)
        .stderr(one_line_error(format!(
            "directory {} does not exist",
            dir.path().join("a/b").display()
        )));
    assert!(!dir.path().join("a").exists());
}

/// Regression (issue 12): `bounds --clients 0` was silently used as 1.
#[test]
fn bounds_refuses_zero_clients() {
    pioscope()
        .args(["bounds", "--system", "lustre-fdr", "--clients", "0"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--clients"));
}

/// Regression (issue 12): `report` panicked (exit 101) on a trace without events, as
/// `pioscope run -- /bin/true` makes.
#[test]
fn report_on_a_trace_without_events() {
    let dir = tempfile::tempdir().expect("tmp");
    let raw = dir.path().join("raw");
    fs::create_dir(&raw).expect("mkdir");
    let mut b = pioscope_trace::raw::fixture::RawFileBuilder::monotonic(4000, 3999, 50_000_000);
    b.job(&[("cmdline", "/bin/true"), ("tracer_version", "0.1.0")]);
    b.end();
    b.write_to(&raw.join("node-a-4000-0.praw")).expect("write");
    let t = dir.path().join("trace");
    pioscope()
        .arg("merge")
        .arg(&raw)
        .arg("-o")
        .arg(&t)
        .assert()
        .success();
    pioscope().arg("report").arg(&t).assert().success();
    pioscope()
        .arg("report")
        .arg(&t)
        .arg("--json")
        .assert()
        .success();
    let html = dir.path().join("r.html");
    pioscope()
        .arg("report")
        .arg(&t)
        .arg("--html")
        .arg(&html)
        .assert()
        .success();
    assert!(html.is_file());
}

/// Regression (issue 12): messages repeated a name or a cause ("X: X").
#[test]
fn errors_say_each_thing_once() {
    let dir = tempfile::tempdir().expect("tmp");
    let t = trace(dir.path());
    let once =
        |what: &'static str| predicate::function(move |s: &str| s.matches(what).count() == 1);
    pioscope()
        .arg("report")
        .arg(&t)
        .args(["--config", "/nonexistent/findings.toml"])
        .assert()
        .code(2)
        .stderr(one_line_error("/nonexistent/findings.toml").and(once("No such file")));
    pioscope()
        .args(["bounds", "--system", "/nonexistent/model.toml"])
        .assert()
        .code(2)
        .stderr(one_line_error("neither a preset").and(once("/nonexistent/model.toml")));
    pioscope()
        .arg("compare")
        .arg(&t)
        .arg("/nonexistent/sim")
        .assert()
        .code(2)
        .stderr(one_line_error("simulated trace").and(once("/nonexistent/sim")));
}

/// Regression (issue 12): text from the trace (paths, region names) reached the terminal raw,
/// escape sequences included. Every printer escapes control characters as `\uXXXX`.
#[test]
fn trace_text_is_printed_escaped() {
    use pioscope_trace::raw::fixture::{FixtureEvent as E, RawFileBuilder};
    use pioscope_trace::raw::format::string_kind;
    let dir = tempfile::tempdir().expect("tmp");
    let raw = dir.path().join("raw");
    fs::create_dir(&raw).expect("mkdir");
    let t0 = 50_000_000;
    let mut b = RawFileBuilder::monotonic(4000, 3999, t0);
    b.job(&[
        ("rank", "0"),
        ("size", "1"),
        ("host", "node\u{1b}]0;owned\u{7}"),
        ("cmdline", "./app"),
        ("tracer_version", "0.1.0"),
    ]);
    b.string(string_kind::FILE, 1, "/scratch/\u{1b}[31mred.dat", 0xEF53);
    b.string(string_kind::REGION, 2, "check\rpoint", 0);
    let pwrite = |at: u64| E::new(14, t0 + at, 2_000).object(1).size(1).offset(at);
    let mut events = vec![E::new(500, t0 + 1_000, 500_000).object(2)];
    // Many tiny writes, so that a finding quotes the file in its evidence.
    events.extend((0..400).map(|i| pwrite(2_000 + i * 1_000).depth(1)));
    b.events(0, &events);
    b.end();
    b.write_to(&raw.join("node-4000-0.praw")).expect("write");
    let t = dir.path().join("trace");
    pioscope()
        .arg("merge")
        .arg(&raw)
        .arg("-o")
        .arg(&t)
        .assert()
        .success();
    let raw_text = |s: &str| s.chars().any(|c| c.is_control() && c != '\n');
    for args in [
        vec!["stats", "--by", "file"],
        vec!["stats", "--by", "phase"],
        vec!["stats", "--by", "host"],
        vec!["report"],
        vec!["dump"],
    ] {
        let out = pioscope().args(&args).arg(&t).output().expect("run");
        let stdout = String::from_utf8(out.stdout).expect("utf-8");
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            !raw_text(&stdout),
            "{args:?} printed a control character:\n{stdout}"
        );
        assert!(
            [
                "\\u001b[31mred.dat",
                "check\\u000dpoint",
                "node\\u001b]0;owned\\u0007"
            ]
            .iter()
            .any(|t| stdout.contains(t)),
            "{args:?}: {stdout}"
        );
    }
    let report = pioscope().arg("report").arg(&t).output().expect("report");
    let report = String::from_utf8(report.stdout).expect("utf-8");
    assert!(report.contains("/scratch/\\u001b[31mred.dat"), "{report}");
    // An error quoting a path.
    let bad = dir.path().join("no\u{1b}[2Jtrace");
    pioscope()
        .arg("stats")
        .arg(&bad)
        .assert()
        .code(2)
        .stderr(one_line_error("no\\u001b[2Jtrace").and(predicate::str::contains("\u{1b}").not()));
}
