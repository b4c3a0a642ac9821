//! Tests of `compare` on small stores written row by row with the store writer: an observed
//! job and its "simulation" with server and disk containers, so every number is known.

use std::collections::BTreeMap;
use std::path::Path;

use pioscope_trace::functions::{self, Layer};
use pioscope_trace::raw::format::flags;
use pioscope_trace::store::meta::{ClockMeta, ContainerKind, JobMeta, Meta, ProcessMeta};
use pioscope_trace::store::{Event, FileRow, MpiArgs, MpiRef, StoreWriter, Trace};

use super::*;

/// Default options, keeping every matched call.
const ALL: Options = Options {
    threshold: DEFAULT_THRESHOLD,
    scope: Scope::Application,
    operations: true,
};

#[derive(Clone)]
struct Row {
    key: usize,
    rank: i32,
    process: i32,
    layer: Layer,
    func: &'static str,
    start: i64,
    dur: i64,
    depth: u8,
    parent: Option<usize>,
    instance: Option<i32>,
    peer: Option<i32>,
}

impl Row {
    /// A top-level call of `func` on `rank` / `process`, not collective, no peer.
    fn new(rank: i32, process: i32, func: &'static str, start: i64, dur: i64) -> Self {
        Row {
            key: 0,
            rank,
            process,
            layer: layer_of(func),
            func,
            start,
            dur,
            depth: 0,
            parent: None,
            instance: None,
            peer: None,
        }
    }
}

/// A store written by hand: ranks are processes 0..n, then the extra containers.
struct Store {
    ranks: u32,
    containers: Vec<(ContainerKind, String, Option<String>)>,
    rows: Vec<Row>,
}

fn layer_of(func: &str) -> Layer {
    functions::by_name(func).expect("known function").layer
}

impl Store {
    fn new(ranks: u32) -> Self {
        Store {
            ranks,
            containers: Vec::new(),
            rows: Vec::new(),
        }
    }

    /// Adds a server container and one disk beneath it; returns their process indices.
    fn server(&mut self, name: &str) -> (i32, i32) {
        let p = self.ranks as i32 + self.containers.len() as i32;
        self.containers
            .push((ContainerKind::Server, name.to_string(), None));
        self.containers.push((
            ContainerKind::Disk,
            name.to_string(),
            Some(name.to_string()),
        ));
        (p, p + 1)
    }

    fn push(&mut self, mut row: Row) -> usize {
        row.key = self.rows.len();
        self.rows.push(row);
        self.rows.len() - 1
    }

    /// A top-level call of `rank`.
    fn call(&mut self, rank: i32, func: &'static str, start: i64, dur: i64) -> usize {
        self.push(Row::new(rank, rank, func, start, dur))
    }

    /// A collective call of instance `inst`.
    fn coll(&mut self, rank: i32, func: &'static str, start: i64, dur: i64, inst: i32) -> usize {
        let k = self.call(rank, func, start, dur);
        self.rows[k].instance = Some(inst);
        k
    }

    /// A call beneath `parent`.
    fn child(&mut self, parent: usize, func: &'static str, start: i64, dur: i64) -> usize {
        let p = self.rows[parent].clone();
        self.push(Row {
            depth: p.depth + 1,
            parent: Some(parent),
            ..Row::new(p.rank, p.process, func, start, dur)
        })
    }

    /// A server or disk event on container `process`, serving `peer`.
    fn activity(&mut self, process: i32, func: &'static str, start: i64, dur: i64, peer: i32) {
        self.push(Row {
            peer: (layer_of(func) == Layer::Server).then_some(peer),
            ..Row::new(-1, process, func, start, dur)
        });
    }

    fn write(&self, dir: &Path) -> Trace {
        let mut rows = self.rows.clone();
        rows.sort_by_key(|r| (r.rank, r.start, r.process, r.depth));
        self.write_rows(dir, rows)
    }

    /// Writes the rows in the order they were added.
    fn write_unsorted(&self, dir: &Path) -> Trace {
        self.write_rows(dir, self.rows.clone())
    }

    fn write_rows(&self, dir: &Path, rows: Vec<Row>) -> Trace {
        let mut id_of = vec![0i64; rows.len()];
        for (i, r) in rows.iter().enumerate() {
            id_of[r.key] = i as i64;
        }
        let mut w = StoreWriter::create(dir).expect("writer");
        for (i, r) in rows.iter().enumerate() {
            let file = matches!(r.layer, Layer::Posix | Layer::MpiIo | Layer::Server).then_some(0);
            w.push(&Event {
                id: i as i64,
                rank: r.rank,
                process: r.process,
                depth: r.depth,
                parent: r.parent.map(|p| id_of[p]),
                file_id: file,
                offset: file.map(|_| 0),
                flags: if r.instance.is_some() {
                    flags::COLLECTIVE
                } else {
                    0
                },
                collective: r.instance.is_some(),
                instance: r.instance,
                mpi: MpiRef::to(&MpiArgs {
                    peer: r.peer,
                    ..MpiArgs::NONE
                }),
                ..Event::call(r.layer, r.func, r.start, r.dur)
            })
            .expect("push");
        }
        let files = [FileRow {
            file_id: 0,
            path: "/data/out".to_string(),
            fs_type: "ext4".to_string(),
            fs_magic: 0xEF53,
            ranks: self.ranks as i32,
            events: 0,
        }];
        let clock = ClockMeta::exact("simulated", 0, 0);
        let container = |process: u32, kind, rank: i32, host: String, server: Option<&String>| {
            let mut facts = BTreeMap::new();
            if let Some(s) = server {
                facts.insert("server".to_string(), s.clone());
                facts.insert("disk".to_string(), "0".to_string());
            }
            let mut p = ProcessMeta::generated(process, kind, rank, host, clock.clone());
            p.facts = facts;
            p
        };
        let mut processes: Vec<ProcessMeta> = (0..self.ranks)
            .map(|r| container(r, ContainerKind::Process, r as i32, "n0".to_string(), None))
            .collect();
        for (k, (kind, host, server)) in self.containers.iter().enumerate() {
            let p = self.ranks + k as u32;
            processes.push(container(p, *kind, -1, host.clone(), server.as_ref()));
        }
        let job = JobMeta {
            command: None,
            start_unix_ns: 0,
            duration_ns: w.end_ns(),
            ranks: self.ranks,
            hosts: vec!["n0".to_string(); self.ranks as usize],
            mpi_library: None,
        };
        let meta = Meta::new("test".to_string(), job, processes);
        w.finish(&files, &[], meta).expect("finish");
        Trace::open(dir).expect("open")
    }
}

/// Two ranks: open (instance 1), write_all (instance 2: Alltoall + pwrite beneath), close
/// (instance 3). The simulation expects the same calls, faster writes on rank 0, and adds a
/// barrier on rank 1; the observed write_all of rank 1 has one more pwrite than the model's.
fn job(dir: &Path) -> (Trace, Trace) {
    let mut o = Store::new(2);
    for r in 0..2 {
        o.coll(r, "MPI_File_open", 0, 100 + r as i64, 1);
        let w = o.coll(r, "MPI_File_write_all", 200, 1_000, 2);
        o.child(w, "MPI_Alltoall", 210, 50);
        o.child(w, "pwrite", 300, 400);
        if r == 1 {
            o.child(w, "pwrite", 750, 400);
        }
        o.coll(r, "MPI_File_close", 1_300, 10, 3);
    }
    let mut s = Store::new(2);
    let (server, disk) = s.server("server-0");
    for r in 0..2 {
        s.coll(r, "MPI_File_open", 0, 100, 1);
        let w = s.coll(r, "MPI_File_write_all", 200, 400, 2);
        s.child(w, "MPI_Alltoall", 210, 40);
        s.child(w, "pwrite", 300, 200);
        s.coll(r, "MPI_File_close", 700, 0, 3);
    }
    s.call(1, "MPI_Barrier", 800, 10);
    // Rank 0's pwrite (300..500): the server works for it 320..480, its disk 350..450.
    s.activity(server, "server_write", 320, 160, 0);
    s.activity(disk, "disk_write", 350, 100, 0);
    let obs = o.write(&dir.join("obs"));
    let sim = s.write(&dir.join("sim"));
    (obs, sim)
}

#[test]
fn compares_per_call_function_and_instance() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (obs, sim) = job(tmp.path());
    let c = compare(&obs, &sim, &ALL).expect("compare");
    assert_eq!(c.matched_by, MatchedBy::Order);
    assert_eq!((c.observed.top_level, c.observed.children), (6, 5));
    assert_eq!((c.simulated.top_level, c.simulated.children), (7, 4));
    // 6 top-level calls matched: open 100+101, write_all 1000+1000, close 10+10 observed.
    assert_eq!(
        c.top_level,
        Totals {
            matched: 6,
            observed_ns: 2_221,
            expected_ns: 1_000,
            ratio: Some(2.221),
        }
    );
    assert_eq!(c.operations.len(), 10);
    assert_eq!(c.matched_beneath, 4);
    // Without Options::operations the calls are compared but not kept.
    let lean = compare(&obs, &sim, &Options::default()).expect("compare");
    assert!(lean.operations.is_empty());
    assert_eq!((lean.top_level, lean.matched_beneath), (c.top_level, 4));
    let f = |name: &str| {
        c.functions
            .iter()
            .find(|f| f.func == name)
            .unwrap_or_else(|| panic!("{name}"))
    };
    let pw = f("pwrite");
    assert_eq!(
        (
            pw.totals.matched,
            pw.totals.observed_ns,
            pw.totals.expected_ns
        ),
        (2, 800, 400)
    );
    assert_eq!((pw.median_ratio, pw.slower), (Some(2.0), 2));
    assert_eq!((pw.unmatched_observed, pw.unmatched_simulated), (1, 0));
    let close = f("MPI_File_close");
    assert_eq!(
        (close.totals.ratio, close.median_ratio, close.slower),
        (None, None, 2)
    );
    assert_eq!(f("MPI_Barrier").unmatched_simulated, 1);
    let open = f("MPI_File_open").median_ratio.expect("median");
    assert!((open - 1.005).abs() < 1e-12, "{open}");
    // Functions by layer (posix, mpiio, mpi) then name.
    let order: Vec<&str> = c.functions.iter().map(|f| f.func.as_str()).collect();
    assert_eq!(
        order,
        [
            "pwrite",
            "MPI_File_close",
            "MPI_File_open",
            "MPI_File_write_all",
            "MPI_Alltoall",
            "MPI_Barrier"
        ]
    );
    // Instances: the slowest rank of each side.
    let inst: Vec<(i32, &str, u32, i64, i64)> = c
        .instances
        .iter()
        .map(|i| {
            (
                i.instance,
                i.func.as_str(),
                i.ranks,
                i.observed_ns,
                i.expected_ns,
            )
        })
        .collect();
    assert_eq!(
        inst,
        [
            (1, "MPI_File_open", 2, 101, 100),
            (2, "MPI_File_write_all", 2, 1_000, 400),
            (3, "MPI_File_close", 2, 10, 0),
        ]
    );
    assert_eq!(c.collectives.len(), 3);
    assert_eq!(c.collectives[2].func, "MPI_File_write_all");
    assert_eq!(c.collectives[2].slower, 1);
    assert_eq!(c.collectives[2].worst, Some(2));
    // Unmatched: observed side first.
    let un: Vec<(&str, &str, u64)> = c
        .unmatched
        .iter()
        .map(|u| (u.side, u.func.as_str(), u.count))
        .collect();
    assert_eq!(
        un,
        [("observed", "pwrite", 1), ("simulated", "MPI_Barrier", 1)]
    );
    assert_eq!(c.unmatched[0].examples.len(), 1);
    assert_eq!(c.unmatched[0].examples[0].0, 1);
}

#[test]
fn ranks_slow_calls_and_says_where_the_model_spends_the_time() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (obs, sim) = job(tmp.path());
    let c = compare(&obs, &sim, &Options::default()).expect("compare");
    // write_all on both ranks (lost 600 each), then the closes (10 each, nothing expected).
    let slow: Vec<(u32, &str, i64)> = c
        .slow
        .iter()
        .map(|s| (s.op.rank, s.op.func.as_str(), s.lost_ns))
        .collect();
    assert_eq!(
        slow,
        [
            (0, "MPI_File_write_all", 600),
            (1, "MPI_File_write_all", 600),
            (0, "MPI_File_close", 10),
            (1, "MPI_File_close", 10),
        ]
    );
    assert_eq!(c.slow_lost_ns, 1_220);
    // Rank 0's simulated write_all 200..600: exchange 210..250, pwrite 300..500 with server
    // 320..480 and disk 350..450.
    assert_eq!(
        c.slow[0].model,
        Breakdown {
            disk_ns: 100,
            server_ns: 60,
            network_ns: 40,
            io_ns: 0,
            exchange_ns: 40,
            other_ns: 160,
        }
    );
    assert_eq!(
        c.slow[0].model.text(),
        "40% other, 25% disk, 15% server CPU/queue, 10% network, 10% MPI exchange"
    );
    // Rank 1's has no server activity for it: its pwrite is all network.
    assert_eq!(c.slow[1].model.network_ns, 200);
    assert_eq!(c.slow[1].model.disk_ns, 0);
    // The observed side, from the calls beneath (rank 1: pwrites 300..700 and 750..1150).
    assert_eq!(
        c.slow[1].observed,
        Breakdown {
            io_ns: 800,
            exchange_ns: 50,
            other_ns: 150,
            ..Breakdown::default()
        }
    );
    // A close with nothing beneath: its whole time is "I/O" in the observed split.
    assert_eq!(c.slow[2].observed.io_ns, 10);
    // A higher threshold keeps only what is infinitely slower.
    let c = compare(
        &obs,
        &sim,
        &Options {
            threshold: 3.0,
            ..Options::default()
        },
    )
    .expect("compare");
    assert_eq!(c.slow.len(), 2);
}

#[test]
fn the_same_trace_matches_itself_exactly() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (obs, _) = job(tmp.path());
    let c = compare(&obs, &obs, &ALL).expect("compare");
    assert_eq!(c.top_level.ratio, Some(1.0));
    assert!(c.unmatched.is_empty());
    assert!(c.slow.is_empty());
    assert_eq!(c.operations.len(), 11);
    assert!(c
        .functions
        .iter()
        .all(|f| f.median_ratio.is_none_or(|m| m == 1.0)));
}

#[test]
fn a_rank_of_billions_costs_one_entry_not_gigabytes() {
    // Issue 12: a damaged store claiming 10^9 ranks (or a process of rank 10^9) made compare
    // allocate a 4 GB rank-indexed table before reading an event (17 GB for these values).
    let tmp = tempfile::tempdir().expect("tmp");
    let (obs, _) = job(tmp.path());
    let meta_path = tmp
        .path()
        .join("obs")
        .join(pioscope_trace::store::META_FILE);
    let text = std::fs::read_to_string(&meta_path).expect("read meta");
    let mut meta: serde_json::Value = serde_json::from_str(&text).expect("json");
    meta["job"]["ranks"] = serde_json::json!(u32::MAX);
    let mut far = meta["processes"][0].clone();
    // The next entry (entry i is process i, or the store is refused at open).
    far["process"] = serde_json::json!(meta["processes"].as_array().expect("processes").len());
    far["rank"] = serde_json::json!(i32::MAX);
    meta["processes"]
        .as_array_mut()
        .expect("processes")
        .push(far);
    std::fs::write(&meta_path, meta.to_string()).expect("write meta");
    drop(obs);
    let damaged = Trace::open(&tmp.path().join("obs")).expect("open");
    assert_eq!(damaged.meta.job.ranks, u32::MAX);
    let c = compare(&damaged, &damaged, &ALL).expect("compare");
    assert_eq!(c.top_level.ratio, Some(1.0));
    assert_eq!(c.operations.len(), 11);
}

#[test]
fn regions_are_transparent() {
    let tmp = tempfile::tempdir().expect("tmp");
    let mut o = Store::new(1);
    let reg = o.call(0, "region", 0, 1_000);
    let w = o.child(reg, "MPI_File_write_all", 10, 500);
    o.rows[w].instance = Some(1);
    o.child(w, "pwrite", 20, 100);
    let mut s = Store::new(1);
    let w = s.coll(0, "MPI_File_write_all", 10, 100, 1);
    s.child(w, "pwrite", 20, 50);
    let c = compare(
        &o.write(&tmp.path().join("o")),
        &s.write(&tmp.path().join("s")),
        &ALL,
    )
    .expect("compare");
    let rows: Vec<OpRow> = c.operations.iter().collect();
    let ops: Vec<(&str, bool, i64, i64)> = rows
        .iter()
        .map(|o| (o.func.as_str(), o.top_level, o.observed_ns, o.expected_ns))
        .collect();
    assert_eq!(
        ops,
        [
            ("MPI_File_write_all", true, 500, 100),
            ("pwrite", false, 100, 50)
        ]
    );
    assert!(c.unmatched.is_empty());
}

#[test]
fn refuses_different_ranks_and_bad_thresholds() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (obs, _) = job(tmp.path());
    let mut one = Store::new(1);
    one.call(0, "MPI_Barrier", 0, 1);
    let one = one.write(&tmp.path().join("one"));
    let e = compare(&obs, &one, &Options::default()).expect_err("ranks");
    let text = e.to_string();
    assert!(
        text.contains("observed") && text.contains("has 2"),
        "{text}"
    );
    assert!(
        text.contains(&one.dir.display().to_string()) && text.contains("has 1"),
        "{text}"
    );
    for t in [0.0, -1.0, f64::NAN] {
        let o = Options {
            threshold: t,
            ..ALL
        };
        assert!(matches!(
            compare(&obs, &obs, &o),
            Err(CompareError::Threshold(_))
        ));
    }
}

#[test]
fn a_store_not_sorted_by_rank_is_refused() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (obs, _) = job(tmp.path());
    // Rank 1's rows before rank 0's: write them by hand in that order.
    let mut s = Store::new(2);
    s.call(1, "MPI_Barrier", 0, 1);
    s.call(0, "MPI_Barrier", 5, 1);
    let dir = tmp.path().join("unsorted");
    let t = s.write_unsorted(&dir);
    let e = compare(&obs, &t, &Options::default()).expect_err("unsorted");
    assert!(matches!(e, CompareError::Unsorted { rank: 0, .. }), "{e}");
}
