//! The viewer's HTTP API called without a socket (tower `oneshot`) on the checked-in
//! hpio-collective trace (4 ranks × 2 threads, 4982 events), copied to a temporary directory
//! because opening builds its level-of-detail index beside the events (issue 5).

use std::path::{Path, PathBuf};

use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use pioscope_trace::colours;
use pioscope_trace::store::lod;
use pioscope_trace::store::Trace;
use pioscope_trace::Layer;
use pioscope_view::{app, AppState};
use serde_json::Value;
use tower::ServiceExt;

fn fixture() -> (tempfile::TempDir, PathBuf) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/hpio-collective");
    let tmp = tempfile::tempdir().expect("tempdir");
    let dst = tmp.path().join("hpio-collective");
    std::fs::create_dir_all(&dst).expect("mkdir");
    for e in std::fs::read_dir(&src).expect("fixture") {
        let e = e.expect("entry");
        if e.file_name().to_string_lossy().starts_with("lod") {
            continue;
        }
        std::fs::copy(e.path(), dst.join(e.file_name())).expect("copy");
    }
    (tmp, dst)
}

fn state(dir: &Path) -> AppState {
    AppState::open(&[dir], &mut |_| {}).expect("open")
}

async fn get(state: &AppState, uri: &str) -> (StatusCode, Vec<u8>, String) {
    let res = app(state.clone())
        .oneshot(
            Request::builder()
                .uri(uri)
                .body(Body::empty())
                .expect("request"),
        )
        .await
        .expect("answer");
    let status = res.status();
    let ctype = res
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let body = res
        .into_body()
        .collect()
        .await
        .expect("body")
        .to_bytes()
        .to_vec();
    (status, body, ctype)
}

async fn json(state: &AppState, uri: &str) -> (StatusCode, Value) {
    let (s, b, ctype) = get(state, uri).await;
    assert!(ctype.starts_with("application/json"), "{uri}: {ctype}");
    (s, serde_json::from_slice(&b).expect("json"))
}

/// Events overlapping [t0, t1) per (process, thread), counted straight from the store.
fn overlapping(dir: &Path, t0: i64, t1: i64) -> u64 {
    let t = Trace::open(dir).expect("trace");
    let mut n = 0;
    for b in t.events().expect("events") {
        let b = b.expect("batch");
        for e in b.iter() {
            let end = e.start_ns + e.duration_ns;
            if e.start_ns < t1 && (end > t0 || (e.duration_ns == 0 && e.start_ns >= t0)) {
                n += 1;
            }
        }
    }
    n
}

/// One exact state of a window answer, its ids and starts added up again (docs/VIEWER.md).
#[derive(Debug)]
struct WireState {
    id: i64,
    start: i64,
    dur: i64,
    func: u64,
}

/// The states of an answer row (none for a bucket row).
fn states_of(row: &Value) -> Vec<WireState> {
    let col = |name: &str| -> Vec<i64> {
        row["states"][name]
            .as_array()
            .map(|a| a.iter().map(|x| x.as_i64().expect("integer")).collect())
            .unwrap_or_default()
    };
    let (ids, starts, durs, funcs) = (col("id"), col("start"), col("dur"), col("func"));
    let (mut id, mut start) = (0, 0);
    (0..ids.len())
        .map(|i| {
            id += ids[i];
            start += starts[i];
            WireState {
                id,
                start,
                dur: durs[i],
                func: funcs[i] as u64,
            }
        })
        .collect()
}

#[tokio::test]
async fn traces_rows_and_the_whole_window() {
    let (_tmp, dir) = fixture();
    let st = state(&dir);
    assert!(dir.join(lod::LOD_FILE).is_file(), "index built on open");
    assert!(dir.join(lod::LOD_SPANS_FILE).is_file());

    let (s, v) = json(&st, "/api/traces").await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(v[0]["index"], 0);
    assert_eq!(v[0]["name"], "hpio-collective");
    assert_eq!(v[0]["ranks"], 4);
    assert_eq!(v[0]["events"], 4982);
    assert_eq!(v[0]["partial"], false);
    let duration = v[0]["duration_ns"].as_i64().expect("duration");

    let (s, v) = json(&st, "/api/rows?trace=0").await;
    assert_eq!(s, StatusCode::OK);
    let groups = v["groups"].as_array().expect("groups");
    assert_eq!(groups.len(), 1);
    assert_eq!(groups[0]["host"], "vm");
    let rows = groups[0]["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 8, "4 ranks x 2 threads");
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(r["row"], i as u64);
        assert_eq!(r["kind"], "process");
    }
    assert_eq!(rows[0]["label"], "rank 0");
    assert_eq!(rows[1]["label"], "rank 0 thread 1");
    assert_eq!(
        v["layers"].as_array().map(|l| l.len()),
        Some(Layer::ALL.len())
    );
    let funcs = v["functions"].as_array().expect("functions");
    assert!(funcs
        .iter()
        .any(|f| f["name"] == "MPI_File_write_all" && f["id"] == 318 && f["layer"] == "mpiio"));
    // Colours: the one table (issue 11), never a copy in the page.
    for l in Layer::ALL {
        assert_eq!(v["layer_colours"][l.name()], l.colour().css().as_str());
    }
    for f in funcs {
        let name = f["name"].as_str().expect("name");
        let layer = Layer::from_name(f["layer"].as_str().expect("layer")).expect("known layer");
        let want = colours::function_colour(layer, name).css();
        assert_eq!(f["colour"], want.as_str(), "{name}");
    }

    // The whole trace holds fewer calls than the budget: every row exact.
    let (s, v) = json(&st, "/api/window?trace=0&px=1200").await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(v["t0"], 0);
    assert_eq!(v["t1"], duration);
    let rows = v["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 8);
    let mut states = 0;
    for r in rows {
        assert_eq!(r["mode"], "states");
        let s = states_of(r);
        states += s.len() as u64;
        for w in s.windows(2) {
            assert!(w[0].start <= w[1].start, "time order");
        }
    }
    assert_eq!(states, overlapping(&dir, 0, duration));
    assert_eq!(states, 4982);

    // A narrow window: exactly the overlapping calls, long enclosing calls included.
    let (t0, t1) = (duration / 3, duration / 3 + duration / 50);
    let (_, v) = json(&st, &format!("/api/window?t0={t0}&t1={t1}&px=800")).await;
    let n: u64 = v["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|r| states_of(r).len() as u64)
        .sum();
    assert_eq!(n, overlapping(&dir, t0, t1));
    // A state's id is the event's: its details have the same start and function.
    let st0 = v["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .flat_map(states_of)
        .last()
        .expect("a state");
    let (_, d) = json(&st, &format!("/api/event?id={}", st0.id)).await;
    assert_eq!(d["start_ns"], st0.start);
    assert_eq!(d["duration_ns"], st0.dur);
    assert_eq!(d["func_id"], st0.func);
    // A state's layer is its function's, as /api/rows lists it.
    let f = funcs.iter().find(|f| f["id"] == st0.func).expect("listed");
    assert_eq!(d["layer"], f["layer"]);

    // Rows as a list and as a range.
    let (_, v) = json(&st, "/api/window?rows=0,2-3&px=100").await;
    let got: Vec<u64> = v["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|r| r["row"].as_u64().unwrap_or(99))
        .collect();
    assert_eq!(got, vec![0, 2, 3]);

    // Host rows.
    let (s, v) = json(&st, "/api/window?group=1&px=300").await;
    assert_eq!(s, StatusCode::OK);
    let g = &v["rows"][0];
    assert_eq!(g["group"], "vm");
    assert_eq!(g["mode"], "density");
    assert_eq!(g["rows"].as_array().map(|r| r.len()), Some(8));
    let buckets = g["buckets"].as_array().expect("buckets");
    assert!(!buckets.is_empty());
    assert!(buckets
        .iter()
        .all(|b| (0.0..=1.0).contains(&b["busy"].as_f64().unwrap_or(-1.0))));
}

#[tokio::test]
async fn index_levels_add_up() {
    let (_tmp, dir) = fixture();
    let st = state(&dir);
    let view = &st.traces[0];
    let lod = view.lod.as_ref().expect("index");
    assert_eq!(lod.meta.events, 4982);
    let rows: Vec<u32> = (0..view.rows.len() as u32).collect();
    // Busy time at depth 0, from the store.
    let t = Trace::open(&dir).expect("trace");
    let mut busy0 = 0i64;
    for b in t.events().expect("events") {
        for e in b.expect("batch").iter() {
            if e.depth == 0 {
                busy0 += e.duration_ns;
            }
        }
    }
    for level in 0..lod.meta.levels {
        let per_row = pioscope_view::window::read_lod(view, level, &rows, 0, view.duration() + 1)
            .expect("read");
        let count: u64 = per_row.iter().flatten().map(|b| b.count).sum();
        assert_eq!(count, 4982, "level {level}: every call counted once");
        let b0: i64 = per_row.iter().flatten().map(|b| b.busy_ns[0]).sum();
        assert_eq!(b0, busy0, "level {level}: busy time kept");
        let width = lod.meta.width(level);
        for r in &per_row {
            assert!(
                r.windows(2).all(|w| w[0].index < w[1].index),
                "sorted, one per bucket"
            );
            assert!(r.iter().all(|b| b.busy_ns.iter().all(|&x| x <= width * 2)));
        }
    }
    let top = lod.meta.width(lod.meta.levels - 1);
    assert!(top >= view.duration(), "the last level covers the trace");
    // Every grade of row groups holds the same calls and busy time (issue 18).
    assert_eq!(lod.meta.grades, 2, "8 rows: one group of all");
    for level in 0..lod.meta.levels {
        for grade in 1..lod.meta.grades {
            let size = lod.meta.group_rows(grade) as u32;
            let firsts: Vec<u32> = (0..view.rows.len() as u32).step_by(size as usize).collect();
            let (mut count, mut b0) = (0u64, 0i64);
            pioscope_view::window::scan_lod(
                view,
                level,
                grade,
                &firsts,
                0,
                view.duration() + 1,
                pioscope_view::window::lod_reads::ALL,
                &mut |_, r| {
                    count += r.count;
                    b0 += r.busy_ns[0];
                    assert!(r.worst.is_some_and(|(_, w)| w <= r.busy_ns[0]));
                },
            )
            .expect("scan");
            assert_eq!((count, b0), (4982, busy0), "level {level} grade {grade}");
        }
    }
}

/// Issue 18: a window over more rows than its pixel rows answers row groups whose mean and
/// worst busy fractions and calls are what the exact states of their rows aggregate to.
#[tokio::test]
async fn row_groups_aggregate_the_exact_states() {
    let (_tmp, dir) = fixture();
    let st = state(&dir);
    let view = &st.traces[0];
    let n = view.rows.len();
    let d = view.duration();
    let (s, v) = json(
        &st,
        &format!("/api/window?t0=0&t1={d}&px=40&rows=0-{}&height=2", n - 1),
    )
    .await;
    assert_eq!(s, StatusCode::OK);
    let groups = v["rows"].as_array().expect("rows");
    assert_eq!(groups.len(), 1, "{n} rows in one group of 8");
    let all: Vec<u32> = (0..n as u32).collect();
    let states = pioscope_view::window::read_states(view, &all, 0, d + 1).expect("states");
    let mut cells = 0;
    for g in groups {
        assert_eq!(g["mode"], "groups");
        let (first, last) = (
            g["first"].as_u64().unwrap_or(0),
            g["last"].as_u64().unwrap_or(0),
        );
        let members = (last - first + 1) as f64;
        assert_eq!(g["rows"].as_u64(), Some(last - first + 1));
        let width = g["bucket_ns"].as_i64().expect("width");
        let index = g["index"].as_array().expect("index");
        for (i, ix) in index.iter().enumerate() {
            let bs = ix.as_i64().expect("index") * width;
            let be = bs + width;
            let mut busy = Vec::new();
            let mut count = 0u64;
            for r in first..=last {
                let row = &states[r as usize];
                busy.push(
                    row.iter()
                        .filter(|s| s.depth == 0)
                        .map(|s| (s.start + s.dur).min(be) - s.start.max(bs))
                        .filter(|&o| o > 0)
                        .sum::<i64>(),
                );
                count += row.iter().filter(|s| s.start >= bs && s.start < be).count() as u64;
            }
            let per_mille = |ns: f64, w: f64| ((ns / w).clamp(0.0, 1.0) * 1000.0).round() as u64;
            let total: i64 = busy.iter().sum();
            let worst = *busy.iter().max().expect("members");
            assert_eq!(g["count"][i].as_u64(), Some(count), "bucket {bs}");
            assert_eq!(
                g["busy"][i].as_u64(),
                Some(per_mille(total as f64, width as f64 * members)),
                "bucket {bs}"
            );
            assert_eq!(
                g["worst"][i].as_u64(),
                Some(per_mille(worst as f64, width as f64))
            );
            let worst_row = g["worst_row"][i].as_u64().expect("worst row");
            assert_eq!(busy[(worst_row - first) as usize], worst, "bucket {bs}");
            cells += 1;
        }
    }
    assert!(cells > 10, "{cells} cells");
    // As many pixel rows as rows: row by row, as before.
    let (_, v) = json(
        &st,
        &format!("/api/window?t0=0&t1={d}&px=40&rows=0-{}&height={n}", n - 1),
    )
    .await;
    assert!(v["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .all(|r| r["row"].is_u64()));
    let (s, _) = json(&st, "/api/window?height=0").await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn event_details() {
    let (_tmp, dir) = fixture();
    let st = state(&dir);
    // The first MPI_File_write_all and its children.
    let (_, v) = json(&st, "/api/search?q=MPI_File_write_all&limit=5").await;
    let ev = &v["events"][0];
    let id = ev["id"].as_i64().expect("id");
    let (s, d) = json(&st, &format!("/api/event?trace=0&id={id}")).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(d["id"], id);
    assert_eq!(d["func"], "MPI_File_write_all");
    assert_eq!(d["layer"], "mpiio");
    assert!(d["file"].as_str().is_some_and(|p| p.starts_with('/')));
    for k in [
        "offset",
        "size",
        "result",
        "error",
        "collective",
        "instance",
        "rank",
        "row",
        "hints",
    ] {
        assert!(d.get(k).is_some(), "{k}");
    }
    assert_eq!(d["collective"], true);
    let total = d["children_total"].as_u64().expect("children_total");
    let children = d["children"].as_array().expect("children");
    assert_eq!(children.len() as u64, total.min(200));
    assert!(total > 0, "two-phase I/O under write_all");
    let child = children[0]["id"].as_i64().expect("child");
    let (_, c) = json(&st, &format!("/api/event?id={child}")).await;
    assert_eq!(c["parent"]["id"], id);
    assert_eq!(c["parent"]["name"], "MPI_File_write_all");
    // Hints of the file at open time.
    let hints = d["hints"].as_array().expect("hints");
    assert!(
        hints.iter().any(|h| h["key"] == "cb_buffer_size"),
        "{hints:?}"
    );
}

#[tokio::test]
async fn stats_search_counters_findings_assets() {
    let (_tmp, dir) = fixture();
    let st = state(&dir);
    let (s, v) = json(&st, "/api/stats?trace=0").await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(v["exact"], true);
    let calls: u64 = v["functions"]
        .as_array()
        .expect("functions")
        .iter()
        .map(|f| f["calls"].as_u64().unwrap_or(0))
        .sum();
    assert_eq!(calls, 4982);
    let layer_calls: u64 = v["layers"]
        .as_array()
        .expect("layers")
        .iter()
        .map(|f| f["calls"].as_u64().unwrap_or(0))
        .sum();
    assert_eq!(layer_calls, 4982);
    assert!(!v["busiest_rows"].as_array().expect("busiest").is_empty());

    let (_, v) = json(&st, "/api/search?q=pwrite&limit=7").await;
    assert!(v["functions"]
        .as_array()
        .expect("f")
        .iter()
        .any(|f| f["name"] == "pwrite"));
    assert_eq!(
        v["events"].as_array().map(|e| e.len()),
        Some(2),
        "the trace has 2 pwrites"
    );
    let (_, v) = json(&st, "/api/search?q=close&limit=7").await;
    let evs = v["events"].as_array().expect("events");
    assert_eq!(evs.len(), 7);
    assert!(evs
        .windows(2)
        .all(|w| w[0]["start"].as_i64() <= w[1]["start"].as_i64()));
    assert!(evs
        .iter()
        .all(|e| e["name"].as_str().is_some_and(|n| n.contains("close"))));
    let (_, v) = json(&st, "/api/search?q=rank%202").await;
    assert_eq!(v["rows"][0]["label"], "rank 2");
    assert!(v["events"].as_array().is_some_and(|e| !e.is_empty()));
    let (_, v) = json(&st, "/api/search?q=x.dat").await;
    assert!(!v["files"].as_array().expect("files").is_empty());

    let (s, v) = json(&st, "/api/counters?trace=0&px=200").await;
    assert_eq!(s, StatusCode::OK);
    let track = &v["tracks"][0];
    assert_eq!(track["name"], "I/O throughput");
    assert_eq!(track["unit"], "B/s");
    let pts = track["points"].as_array().expect("points");
    assert!(pts.iter().any(|p| p[1].as_f64().unwrap_or(0.0) > 0.0));

    let (s, v) = json(&st, "/api/findings?trace=0").await;
    assert_eq!(s, StatusCode::OK);
    for f in v.as_array().expect("findings") {
        assert!(f["id"].is_string() && f["severity"].is_string());
        let j = &f["jump"];
        assert!(j["t0"].as_i64() < j["t1"].as_i64());
        assert!(j["rows"].is_array());
    }

    let (s, body, ctype) = get(&st, "/").await;
    if pioscope_view::assets::get("index.html").is_some() {
        assert_eq!(s, StatusCode::OK);
        assert!(ctype.starts_with("text/html"));
        assert!(String::from_utf8_lossy(&body).contains("<html"));
    }
    for (path, _) in pioscope_view::assets::FILES {
        let (s, _, _) = get(&st, &format!("/assets/{path}")).await;
        assert_eq!(s, StatusCode::OK, "{path}");
    }
}

#[tokio::test]
async fn requests_outside_the_trace() {
    let (_tmp, dir) = fixture();
    let st = state(&dir);
    let far = 1_000_000_000_000i64;
    for (uri, want) in [
        ("/api/event?id=99999999".to_string(), StatusCode::NOT_FOUND),
        ("/api/event?id=-1".to_string(), StatusCode::NOT_FOUND),
        ("/api/event?id=abc".to_string(), StatusCode::BAD_REQUEST),
        ("/api/event".to_string(), StatusCode::BAD_REQUEST),
        ("/api/rows?trace=1".to_string(), StatusCode::NOT_FOUND),
        ("/api/window?trace=7".to_string(), StatusCode::NOT_FOUND),
        (
            format!("/api/window?t0={far}&t1={}", far + 10),
            StatusCode::NOT_FOUND,
        ),
        (
            "/api/window?t0=500&t1=100".to_string(),
            StatusCode::BAD_REQUEST,
        ),
        ("/api/window?rows=8".to_string(), StatusCode::NOT_FOUND),
        ("/api/window?rows=0-99".to_string(), StatusCode::NOT_FOUND),
        ("/api/window?rows=x".to_string(), StatusCode::BAD_REQUEST),
        ("/api/window?px=0".to_string(), StatusCode::BAD_REQUEST),
        (format!("/api/stats?t0={far}"), StatusCode::NOT_FOUND),
        ("/api/counters?trace=2".to_string(), StatusCode::NOT_FOUND),
        ("/api/findings?trace=1".to_string(), StatusCode::NOT_FOUND),
        ("/api/nope".to_string(), StatusCode::NOT_FOUND),
        ("/nope".to_string(), StatusCode::NOT_FOUND),
        ("/assets/nope.js".to_string(), StatusCode::NOT_FOUND),
        ("/assets/../Cargo.toml".to_string(), StatusCode::NOT_FOUND),
    ] {
        let (s, b, ctype) = get(&st, &uri).await;
        assert_eq!(s, want, "{uri}");
        assert!(ctype.starts_with("application/json"), "{uri}: {ctype}");
        let v: Value = serde_json::from_slice(&b).expect("json");
        let msg = v["error"].as_str().expect("error");
        assert!(!msg.is_empty());
        // No internals: no file system path of the server, no Rust type names.
        assert!(
            !msg.contains(&*dir.to_string_lossy()) && !msg.contains("::"),
            "{msg}"
        );
    }
}

/// Issue 12: the server answered any `Host`, so a DNS-rebinding page (a name of the attacker's
/// made to resolve to 127.0.0.1) could read the trace; now only loopback names are answered.
#[tokio::test]
async fn requests_for_other_host_names_are_forbidden() {
    let (_tmp, dir) = fixture();
    let st = state(&dir);
    let status = |host: &'static str| {
        let st = st.clone();
        async move {
            app(st)
                .oneshot(
                    Request::builder()
                        .uri("/api/traces")
                        .header("host", host)
                        .body(Body::empty())
                        .expect("request"),
                )
                .await
                .expect("answer")
                .status()
        }
    };
    assert_eq!(status("rebind.example:8000").await, StatusCode::FORBIDDEN);
    assert_eq!(
        status("localhost.rebind.example").await,
        StatusCode::FORBIDDEN
    );
    assert_eq!(status("localhost:8000").await, StatusCode::OK);
    assert_eq!(status("127.0.0.1:8000").await, StatusCode::OK);
    assert_eq!(status("[::1]:8000").await, StatusCode::OK);
}

/// Issue 12: a damaged level-of-detail index made the viewer refuse to start; it is derived
/// from the events, so it is rebuilt instead.
#[tokio::test]
async fn a_damaged_index_is_rebuilt() {
    let (_tmp, dir) = fixture();
    drop(state(&dir));
    let lod_path = dir.join(lod::LOD_FILE);
    let good = std::fs::read(&lod_path).expect("read index");
    std::fs::write(&lod_path, &good[..good.len() / 2]).expect("damage index");
    let mut notes = Vec::new();
    let st = AppState::open(&[&dir], &mut |n| notes.push(n.to_string())).expect("open");
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("building the level-of-detail index")),
        "{notes:?}"
    );
    assert!(st.traces[0].lod.is_some());
    assert_eq!(std::fs::read(&lod_path).expect("reread").len(), good.len());
    let (status, _) = json(&st, "/api/traces").await;
    assert_eq!(status, StatusCode::OK);
}

/// Issue 12: a damaged long-span table (lod_spans.parquet) beside a sound lod.parquet footer
/// made the viewer refuse to start; the index is rebuilt instead.
#[tokio::test]
async fn damaged_long_spans_are_rebuilt() {
    let (_tmp, dir) = fixture();
    drop(state(&dir));
    let spans_path = dir.join(lod::LOD_SPANS_FILE);
    let good = std::fs::read(&spans_path).expect("read spans");
    std::fs::write(&spans_path, &good[..good.len() / 2]).expect("damage spans");
    let mut notes = Vec::new();
    let st = AppState::open(&[&dir], &mut |n| notes.push(n.to_string())).expect("open");
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("rebuilding the damaged level-of-detail index")),
        "{notes:?}"
    );
    assert!(st.traces[0].lod.is_some());
    assert_eq!(std::fs::read(&spans_path).expect("reread"), good);
}

/// Issue 12: a damaged index body (pages unreadable, footer intact) is found only when a window
/// reads it; such a window is answered from the events, every call still counted.
#[tokio::test]
async fn a_damaged_index_body_answers_from_the_events() {
    let (_tmp, dir) = fixture();
    drop(state(&dir));
    let lod_path = dir.join(lod::LOD_FILE);
    let mut bytes = std::fs::read(&lod_path).expect("read index");
    // The first column chunks, past the 4-byte magic (the page index, written after the
    // chunks, and the footer stay whole).
    for b in &mut bytes[4..1024] {
        *b = 0xff;
    }
    std::fs::write(&lod_path, &bytes).expect("damage index");
    let mut notes = Vec::new();
    let st = AppState::open(&[&dir], &mut |n| notes.push(n.to_string())).expect("open");
    assert!(
        notes.is_empty(),
        "the footer and page index still read: {notes:?}"
    );
    assert!(st.traces[0].lod.is_some());
    let (s, v) = json(&st, "/api/window?trace=0&px=1200").await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_ne!(v["source"], "lod");
    let (s, v) = json(&st, "/api/window?group=1&px=300").await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(v["source"], "binned", "{v}");
    let calls: u64 = v["rows"]
        .as_array()
        .expect("groups")
        .iter()
        .flat_map(|g| g["buckets"].as_array().expect("buckets").iter())
        .map(|b| b["count"].as_u64().expect("count"))
        .sum();
    assert_eq!(calls, 4982);
}
