//! The diff of two small runs built as real stores: tables, calls, regressions, and the
//! findings lined up.

use std::path::Path;

use pioscope_trace::functions::Layer;
use pioscope_trace::store::Trace;

use super::*;
use crate::darshan::{DarshanSummary, ModuleTotals};
use crate::findings::{Evidence, Finding, Severity};
use crate::profile::{profile, Options as ProfileOptions};
use crate::testutil::{self, io, FILE_A, FILE_B};

/// A run of `ranks` ranks; rank r does two `MPI_File_write_at` of the durations `durs(r)`, on
/// /data/a (rank 0) or /data/b.
fn run(dir: &Path, ranks: u32, durs: impl Fn(u32) -> [u64; 2]) -> (Trace, Profile) {
    let mut bs = Vec::new();
    for r in 0..ranks {
        let mut b = testutil::rank(r, ranks, "n1");
        let file = if r == 0 { FILE_A } else { FILE_B };
        let [d0, d1] = durs(r);
        b.events(
            0,
            &[
                io("MPI_File_write_at", 1000, d0, file, 0, 64),
                io("MPI_File_write_at", 100_000, d1, file, 64, 64),
            ],
        );
        bs.push(b);
    }
    let t = testutil::trace(dir, bs);
    let p = profile(&t, &ProfileOptions::default(), &mut |_, _| {}).expect("profile");
    (t, p)
}

fn opts(fail_above: Option<f64>) -> Options {
    Options {
        fail_above,
        ..Options::default()
    }
}

/// A: 2 ranks, every write 1000 ns. B: 3 ranks; rank 0's first write 4000 ns, rank 1's second
/// 500 ns, rank 2 only in B.
fn two_runs(dir: &Path) -> ((Trace, Profile), (Trace, Profile)) {
    let a = run(&dir.join("a"), 2, |_| [1000, 1000]);
    let b = run(&dir.join("b"), 3, |r| match r {
        0 => [4000, 1000],
        1 => [1000, 500],
        _ => [2000, 2000],
    });
    (a, b)
}

#[test]
fn io_time_layers_files_and_ranks_side_by_side() {
    let dir = tempfile::tempdir().expect("tmp");
    let ((ta, pa), (tb, pb)) = two_runs(dir.path());
    let d = diff((&ta, &pa), (&tb, &pb), &opts(None)).expect("diff");
    assert_eq!((d.a.ranks, d.b.ranks), (2, 3));
    assert_eq!(d.io_time, Change::new(4000, 10_500));
    assert_eq!(d.io_time.delta_ns, 6500);
    assert_eq!(d.io_time.percent, Some(162.5));
    let mpiio: Vec<_> = d
        .layers
        .iter()
        .filter(|r| r.layer == Some(Layer::MpiIo))
        .collect();
    assert_eq!(mpiio.len(), 1);
    assert_eq!(mpiio[0].change, Change::new(4000, 10_500));
    assert_eq!(mpiio[0].a.map(|m| m.operations), Some(4));
    assert_eq!(mpiio[0].b.map(|m| m.operations), Some(6));
    // Files: /data/b grew by rank 2's 4000 ns and lost rank 1's 500 ns; largest change first.
    let files: Vec<(&str, i64)> = d
        .files
        .iter()
        .map(|r| (r.group.as_str(), r.change.delta_ns))
        .collect();
    assert_eq!(files, vec![("/data/b", 3500), ("/data/a", 3000)]);
    // Rank 2 is only in B: its A side is empty.
    let r2 = d.ranks.iter().find(|r| r.group == "2").expect("rank 2");
    assert_eq!((r2.a, r2.b.map(|m| m.time_ns)), (None, Some(4000)));
    assert_eq!(r2.change.percent, None);
    assert!(d.regressions.is_empty() && d.fail_above.is_none());
}

#[test]
fn calls_changed_most_are_paired_by_rank_and_order() {
    let dir = tempfile::tempdir().expect("tmp");
    let ((ta, pa), (tb, pb)) = two_runs(dir.path());
    let d = diff((&ta, &pa), (&tb, &pb), &opts(None)).expect("diff");
    let c = &d.calls;
    assert_eq!(c.paired, 4);
    assert_eq!(c.paired_time, Change::new(4000, 6500));
    let changed: Vec<(u32, i64, i64)> = c
        .changed
        .iter()
        .map(|x| (x.rank, x.change.a_ns, x.change.b_ns))
        .collect();
    // The unchanged pairs are left out.
    assert_eq!(changed, vec![(0, 1000, 4000), (1, 1000, 500)]);
    assert_eq!(c.changed[0].func, "MPI_File_write_at");
    assert_eq!(c.changed[0].file_a.as_deref(), Some("/data/a"));
    assert_eq!(c.changed[1].file_b.as_deref(), Some("/data/b"));
    assert_eq!(
        c.unpaired,
        vec![Unpaired {
            side: "B",
            func: "MPI_File_write_at".to_string(),
            count: 2
        }]
    );
    // Kept: the top one only.
    let one = Options {
        top: 1,
        ..opts(None)
    };
    let d = diff((&ta, &pa), (&tb, &pb), &one).expect("diff");
    assert_eq!(d.calls.changed.len(), 1);
    assert_eq!(d.calls.changed[0].rank, 0);
    assert_eq!(d.calls.paired, 4, "every pair counts, whatever is kept");
}

#[test]
fn regressions_above_the_threshold() {
    let dir = tempfile::tempdir().expect("tmp");
    let ((ta, pa), (tb, pb)) = two_runs(dir.path());
    let d = diff((&ta, &pa), (&tb, &pb), &opts(Some(10.0))).expect("diff");
    let measures: Vec<&str> = d.regressions.iter().map(|r| r.measure.as_str()).collect();
    assert_eq!(measures, vec!["io time", "layer mpiio"]);
    assert_eq!(d.fail_above, Some(10.0));
    // 162.5 % is not above 162.5 %.
    let d = diff((&ta, &pa), (&tb, &pb), &opts(Some(162.5))).expect("diff");
    assert!(d.regressions.is_empty());
    // The other way round everything got faster: no regression even at 0 %.
    let d = diff((&tb, &pb), (&ta, &pa), &opts(Some(0.0))).expect("diff");
    assert!(d.regressions.is_empty());
    assert_eq!(d.io_time.delta_ns, -6500);
    // A run against itself changes nothing.
    let d = diff((&ta, &pa), (&ta, &pa), &opts(Some(0.0))).expect("diff");
    assert!(d.regressions.is_empty() && d.calls.changed.is_empty());
    assert!(d.calls.unpaired.is_empty());
    for bad in [-1.0, f64::NAN, f64::INFINITY] {
        let e = diff((&ta, &pa), (&ta, &pa), &opts(Some(bad))).unwrap_err();
        assert!(matches!(e, DiffError::Threshold(_)), "{bad}");
    }
}

#[test]
fn a_layer_only_b_uses_is_a_regression() {
    let rows = |t: i64| {
        vec![RowDiff {
            group: "stdio".to_string(),
            layer: Some(Layer::Stdio),
            a: None,
            b: None,
            change: Change::new(0, t),
        }]
    };
    let io = Change::new(100, 100);
    let r = gate::regressions(&io, &rows(5), &[], 1000.0);
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].measure, "layer stdio");
    assert!(gate::regressions(&io, &rows(0), &[], 0.0).is_empty());
}

fn module(name: &str, writes: u64, write_time_ns: i64, meta_time_ns: i64) -> ModuleTotals {
    ModuleTotals {
        module: name.to_string(),
        writes,
        bytes_written: writes * 100,
        write_time_ns,
        meta_time_ns,
        ..ModuleTotals::default()
    }
}

/// Two counters-only Darshan logs: their modules lined up by name, gated by their time.
#[test]
fn darshan_modules_line_up_and_gate() {
    let summary = |modules| DarshanSummary {
        modules,
        ..DarshanSummary::default()
    };
    let a = summary(vec![
        module("POSIX", 10, 600, 400),
        module("STDIO", 2, 50, 0),
    ]);
    let b = summary(vec![
        module("MPI-IO", 1, 70, 0),
        module("POSIX", 10, 900, 400),
    ]);
    let rows = tables::line_up_darshan(Some(&a), Some(&b));
    let got: Vec<(&str, Option<u64>, Option<u64>, i64)> = rows
        .iter()
        .map(|r| {
            let ops = |m: Option<Measure>| m.map(|m| m.operations);
            (r.group.as_str(), ops(r.a), ops(r.b), r.change.delta_ns)
        })
        .collect();
    assert_eq!(
        got,
        vec![
            ("MPI-IO", None, Some(1), 70),
            ("POSIX", Some(10), Some(10), 300),
            ("STDIO", Some(2), None, -50),
        ]
    );
    assert!(rows.iter().all(|r| r.layer.is_none()));
    assert_eq!(rows[1].b.map(|m| m.bytes), Some(1000));
    let io = Change::new(0, 0);
    let measures = |pct| -> Vec<String> {
        gate::regressions(&io, &[], &rows, pct)
            .into_iter()
            .map(|r| r.measure)
            .collect()
    };
    assert_eq!(measures(20.0), vec!["darshan MPI-IO", "darshan POSIX"]);
    assert_eq!(measures(30.0), vec!["darshan MPI-IO"]);
    assert!(tables::line_up_darshan(None, None).is_empty());
}

fn finding(id: &str, severity: Severity, cost_ns: i64) -> Finding {
    Finding {
        id: id.to_string(),
        severity,
        title: format!("{id} title"),
        evidence: Evidence::default(),
        cost_ns,
        remedy: String::new(),
    }
}

#[test]
fn findings_appear_disappear_and_change() {
    let a = vec![
        finding("data-sieving", Severity::Low, 300),
        finding("small-requests", Severity::Medium, 200),
        finding("imbalance", Severity::Medium, 100),
        finding("metadata-storm", Severity::Low, 50),
    ];
    let b = vec![
        finding("exchange-time", Severity::Medium, 1000),
        finding("imbalance", Severity::High, 90),
        finding("small-requests", Severity::Medium, 150),
        finding("metadata-storm", Severity::Low, 50),
    ];
    let l = findings::line_up(&a, &b);
    let got: Vec<(&str, Status)> = l.iter().map(|f| (f.id.as_str(), f.status)).collect();
    assert_eq!(
        got,
        vec![
            ("exchange-time", Status::Appeared),
            // More severe, though it costs less.
            ("imbalance", Status::Worse),
            ("data-sieving", Status::Disappeared),
            ("small-requests", Status::Better),
            ("metadata-storm", Status::Unchanged),
        ]
    );
    assert_eq!((l[0].cost_a_ns, l[0].cost_b_ns), (None, Some(1000)));
    assert_eq!(l[2].title, "data-sieving title");
    // Two findings of one rule pair in order; the third is new.
    let a = vec![
        finding("x", Severity::Low, 10),
        finding("x", Severity::Low, 5),
    ];
    let mut b = a.clone();
    b.push(finding("x", Severity::Low, 1));
    let s: Vec<Status> = findings::line_up(&a, &b).iter().map(|f| f.status).collect();
    assert_eq!(
        s,
        vec![Status::Appeared, Status::Unchanged, Status::Unchanged]
    );
}
