//! `pioscope compare` on real traces: the HPIO collective run checked in under tests/data/
//! against a modified copy of itself (the "model": every MPI_File_write_all and the calls
//! beneath it four times faster, with a storage server and its disk working during the
//! aggregator's pwrites) and against the independent run, compared with golden files; JSON
//! facts; errors. Refresh the golden files after an intended change with:
//! PIOSCOPE_BLESS=1 cargo test --release -p pioscope-cli --test compare

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::{assert_golden, pioscope};
use pioscope_trace::functions::{self, Layer};
use pioscope_trace::store::meta::{ContainerKind, ProcessMeta};
use pioscope_trace::store::{Event, MpiArgs, MpiRef, StoreWriter, Trace};

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data")
        .join(name)
}

/// An owned copy of an event's fields that change or are strings.
struct Row {
    rank: i32,
    process: i32,
    start: i64,
    dur: i64,
    layer: Layer,
    func: String,
    depth: u8,
    parent: Option<i64>,
    file: Option<i32>,
    offset: Option<i64>,
    size: i64,
    peer: Option<i32>,
    event: Option<EventCopy>,
}

/// The rest of a copied event.
struct EventCopy {
    thread: i32,
    result: i64,
    error: i32,
    flags: u8,
    collective: bool,
    instance: Option<i32>,
    /// Its MPI columns but `peer` (in [`Row`]).
    mpi: MpiArgs,
    comm: Option<String>,
    region: Option<String>,
}

/// Writes `<dir>/model`: hpio-collective with write_all four times faster and one server
/// ("server-0", container 4) with one disk (container 5) serving each pwrite beneath a
/// write_all: the server during its middle 80%, the disk during its middle 40%.
fn model(dir: &Path) -> PathBuf {
    let src = data("hpio-collective");
    let trace = Trace::open(&src).expect("open");
    let ranks = trace.meta.job.ranks as i32;
    let (server, disk) = (ranks, ranks + 1);
    let mut rows: Vec<Row> = Vec::new();
    let mut activity: Vec<Row> = Vec::new();
    // The write_all being shortened on the current rank: (its depth, start, end).
    let mut within: Option<(u8, i64, i64)> = None;
    for batch in trace.events().expect("events") {
        let batch = batch.expect("batch");
        for e in batch.iter() {
            if within.is_some_and(|(d, s, end)| e.depth <= d || e.start_ns < s || e.start_ns >= end)
            {
                within = None;
            }
            let (mut start, mut dur) = (e.start_ns, e.duration_ns);
            if e.func == "MPI_File_write_all" {
                within = Some((e.depth, e.start_ns, e.end_ns()));
            }
            if let Some((_, ws, _)) = within {
                start = ws + (start - ws) / 4;
                dur /= 4;
                if e.func == "pwrite" {
                    let act = |p: i32, func: &str, from: i64, len: i64| Row {
                        rank: -1,
                        process: p,
                        start: from,
                        dur: len,
                        layer: functions::by_name(func).expect("func").layer,
                        func: func.to_string(),
                        depth: 0,
                        parent: None,
                        file: e.file_id,
                        offset: e.offset,
                        size: e.size,
                        peer: (p == server).then_some(e.rank),
                        event: None,
                    };
                    activity.push(act(server, "server_write", start + dur / 10, dur * 8 / 10));
                    activity.push(act(disk, "disk_write", start + dur * 3 / 10, dur * 4 / 10));
                }
            }
            rows.push(Row {
                rank: e.rank,
                process: e.process,
                start,
                dur,
                layer: e.layer,
                func: e.func.to_string(),
                depth: e.depth,
                parent: e.parent,
                file: e.file_id,
                offset: e.offset,
                size: e.size,
                peer: e.mpi.get().peer,
                event: Some(EventCopy {
                    thread: e.thread,
                    result: e.result,
                    error: e.error,
                    flags: e.flags,
                    collective: e.collective,
                    instance: e.instance,
                    mpi: e.mpi.get(),
                    comm: e.comm.map(str::to_string),
                    region: e.region.map(str::to_string),
                }),
            });
        }
    }
    // Rank -1 sorts first: the copied rows move down by the activity rows.
    activity.sort_by_key(|r| (r.start, r.process));
    let shift = activity.len() as i64;
    let out = dir.join("model");
    let mut w = StoreWriter::create(&out).expect("writer");
    for (i, r) in activity.iter().chain(&rows).enumerate() {
        let c = r.event.as_ref();
        let mpi = MpiArgs {
            peer: r.peer,
            ..c.map_or(MpiArgs::NONE, |c| c.mpi)
        };
        w.push(&Event {
            id: i as i64,
            rank: r.rank,
            process: r.process,
            thread: c.map_or(0, |c| c.thread),
            start_ns: r.start,
            duration_ns: r.dur,
            layer: r.layer,
            func: &r.func,
            func_id: functions::by_name(&r.func).map_or(0, |f| f.id),
            depth: r.depth,
            parent: r.parent.map(|p| p + shift),
            file_id: r.file,
            offset: r.offset,
            size: r.size,
            result: c.map_or(r.size, |c| c.result),
            error: c.map_or(0, |c| c.error),
            flags: c.map_or(0, |c| c.flags),
            collective: c.is_some_and(|c| c.collective),
            instance: c.and_then(|c| c.instance),
            mpi: MpiRef::to(&mpi),
            comm: c.and_then(|c| c.comm.as_deref()),
            region: c.and_then(|c| c.region.as_deref()),
        })
        .expect("push");
    }
    let mut meta = trace.meta.clone();
    let template = meta.processes[0].clone();
    for (p, kind) in [(server, ContainerKind::Server), (disk, ContainerKind::Disk)] {
        let mut facts = BTreeMap::new();
        if kind == ContainerKind::Disk {
            facts.insert("server".to_string(), "server-0".to_string());
            facts.insert("disk".to_string(), "0".to_string());
        }
        meta.processes.push(ProcessMeta {
            process: p as u32,
            kind,
            rank: -1,
            host: "server-0".to_string(),
            facts,
            ..template.clone()
        });
    }
    w.finish(&trace.files, &trace.settings().expect("settings"), meta)
        .expect("finish");
    out
}

/// Runs `pioscope compare ARGS` and compares stdout with golden/NAME; paths under `tmp` show
/// as `TMP`.
fn golden(name: &str, tmp: &Path, args: &[&Path], extra: &[&str]) {
    let out = pioscope()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .arg("compare")
        .args(args)
        .args(extra)
        .assert()
        .success();
    let actual = String::from_utf8(out.get_output().stdout.clone())
        .expect("utf-8")
        .replace(&tmp.display().to_string(), "TMP");
    assert_golden(name, &actual);
}

#[test]
fn collective_against_a_faster_model() {
    let tmp = tempfile::tempdir().expect("tmp");
    let m = model(tmp.path());
    let obs = PathBuf::from("../../tests/data/hpio-collective");
    golden(
        "compare_model.txt",
        tmp.path(),
        &[&obs, &m],
        &["--top", "5"],
    );
}

#[test]
fn collective_against_independent() {
    let tmp = tempfile::tempdir().expect("tmp");
    let obs = PathBuf::from("../../tests/data/hpio-collective");
    let ind = PathBuf::from("../../tests/data/hpio-independent");
    golden(
        "compare_independent.txt",
        tmp.path(),
        &[&obs, &ind],
        &["--threshold", "2", "--top", "5"],
    );
}

#[test]
fn json_has_every_call_and_the_model_split() {
    let tmp = tempfile::tempdir().expect("tmp");
    let m = model(tmp.path());
    let out = pioscope()
        .arg("compare")
        .arg(data("hpio-collective"))
        .arg(&m)
        .arg("--json")
        .assert()
        .success();
    let v: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).expect("json");
    assert_eq!(v["matched_by"], "order");
    assert_eq!(v["threshold"], 1.5);
    // Same calls on both sides: all 69 top-level calls and the 261 beneath them that the
    // default scope keeps (not those inside MPI_Init/MPI_Finalize) match.
    assert_eq!(v["top_level"]["matched"], 69);
    assert_eq!(v["operations"].as_array().expect("ops").len(), 69 + 261);
    assert!(v["unmatched"].as_array().expect("unmatched").is_empty());
    // Every write_all is 4x slower than "expected" (durations divided by 4, rounded down).
    let slow = v["slow"].as_array().expect("slow");
    assert_eq!(slow.len(), 8);
    assert!(slow.iter().all(|s| s["func"] == "MPI_File_write_all"));
    let wa = v["functions"]
        .as_array()
        .expect("functions")
        .iter()
        .find(|f| f["func"] == "MPI_File_write_all")
        .expect("write_all");
    assert_eq!(wa["matched"], 8);
    assert_eq!(wa["slower"], 8);
    let median = wa["median_ratio"].as_f64().expect("median");
    assert!((median - 4.0).abs() < 1e-3, "{median}");
    // The aggregator's write_all: its model time splits into disk, server and network too.
    let with_disk: Vec<&serde_json::Value> = slow
        .iter()
        .filter(|s| s["model"]["disk_ns"].as_i64() > Some(0))
        .collect();
    assert_eq!(with_disk.len(), 2, "one aggregator, two write_all");
    for s in &with_disk {
        assert_eq!(s["rank"], 0);
        let m = &s["model"];
        let sum: i64 = [
            "disk_ns",
            "server_ns",
            "network_ns",
            "io_ns",
            "exchange_ns",
            "other_ns",
        ]
        .iter()
        .map(|k| m[k].as_i64().expect("ns"))
        .sum();
        assert_eq!(sum, s["expected_ns"].as_i64().expect("expected"));
        assert!(m["server_ns"].as_i64() > Some(0) && m["network_ns"].as_i64() > Some(0));
    }
    let instances = v["instances"].as_array().expect("instances");
    assert_eq!(
        instances.len(),
        10,
        "5 collective calls per iteration, 2 iterations"
    );
}

#[test]
fn errors_name_the_trace() {
    let tmp = tempfile::tempdir().expect("tmp");
    let missing = tmp.path().join("nothing-here");
    let out = pioscope()
        .arg("compare")
        .arg(&missing)
        .arg(data("hpio-collective"))
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        err.contains("observed trace") && err.contains("nothing-here"),
        "{err}"
    );
    let out = pioscope()
        .arg("compare")
        .arg(data("hpio-collective"))
        .arg(&missing)
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(err.contains("simulated trace"), "{err}");

    // A 2-rank trace against the 4-rank one.
    let raw = tmp.path().join("raw");
    common::raw_job(&raw, 2);
    let two = tmp.path().join("two");
    pioscope()
        .arg("merge")
        .arg(&raw)
        .arg("-o")
        .arg(&two)
        .assert()
        .success();
    let out = pioscope()
        .arg("compare")
        .arg(data("hpio-collective"))
        .arg(&two)
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        err.contains("different numbers of ranks")
            && err.contains("has 4")
            && err.contains("has 2"),
        "{err}"
    );
    assert!(err.contains(&two.display().to_string()), "{err}");

    let out = pioscope()
        .arg("compare")
        .arg(data("hpio-collective"))
        .arg(data("hpio-collective"))
        .args(["--threshold", "0"])
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(err.contains("threshold"), "{err}");
}

/// The real thing: a replay of the collective run by `pioscope simulate` on the PVFS2 preset.
/// Facts that hold whatever the model's numbers: the replay keeps every top-level call, so
/// all match; every split adds up to the simulated duration; the servers show in some.
#[test]
fn against_a_simulated_replay() {
    let tmp = tempfile::tempdir().expect("tmp");
    let sim = tmp.path().join("sim");
    pioscope()
        .arg("simulate")
        .arg("--trace")
        .arg(data("hpio-collective"))
        .args(["--system", "pvfs2-2009", "-o"])
        .arg(&sim)
        .assert()
        .success();
    let out = pioscope()
        .arg("compare")
        .arg(data("hpio-collective"))
        .arg(&sim)
        .arg("--json")
        .assert()
        .success();
    let v: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).expect("json");
    assert_eq!(v["observed"]["top_level"], 69);
    assert_eq!(v["simulated"]["top_level"], 69);
    assert_eq!(v["top_level"]["matched"], 69);
    let slow = v["slow"].as_array().expect("slow");
    assert!(!slow.is_empty());
    let mut storage = 0;
    for s in slow {
        let m = &s["model"];
        let part = |k: &str| m[k].as_i64().expect("ns");
        let sum: i64 = [
            "disk_ns",
            "server_ns",
            "network_ns",
            "io_ns",
            "exchange_ns",
            "other_ns",
        ]
        .iter()
        .map(|k| part(k))
        .sum();
        assert_eq!(sum, s["expected_ns"].as_i64().expect("expected"), "{s}");
        assert_eq!(part("io_ns"), 0, "the simulated trace has servers");
        storage += part("disk_ns") + part("server_ns");
    }
    assert!(storage > 0, "no server or disk time in any slow call");
}
