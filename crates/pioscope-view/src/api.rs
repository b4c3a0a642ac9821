//! The HTTP API (docs/VIEWER.md has the contract with the page): query parsing, the JSON
//! error answers (404 for anything outside the trace, 400 for malformed parameters, never an
//! internal detail), and the handlers, which run the blocking Parquet reads off the runtime.

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use pioscope_trace::colours;
use pioscope_trace::functions::Layer;
use serde::Serialize;
use serde_json::{json, Value};

use crate::model::{FuncEntry, TraceView};
use crate::{assets, counters, darshan, details, search, stats, window, AppState};

/// An error answer: a status and a message for the user.
#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    message: String,
}

impl ApiError {
    fn not_found(m: impl Into<String>) -> ApiError {
        ApiError {
            status: StatusCode::NOT_FOUND,
            message: m.into(),
        }
    }
    fn bad(m: impl Into<String>) -> ApiError {
        ApiError {
            status: StatusCode::BAD_REQUEST,
            message: m.into(),
        }
    }
    fn internal(what: &str, e: impl std::fmt::Display) -> ApiError {
        // The details go to the server's stderr, never to the page.
        eprintln!("pioscope view: {what}: {e}");
        ApiError {
            status: StatusCode::INTERNAL_SERVER_ERROR,
            message: format!("internal error while {what}"),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, Json(json!({"error": self.message}))).into_response()
    }
}

type Params = Query<HashMap<String, String>>;
type ApiResult = Result<Json<Value>, ApiError>;

/// Every route.
pub fn router(state: AppState) -> Router {
    Router::new()
        .route("/", get(index))
        .route("/index.html", get(index))
        .route("/assets/{*path}", get(asset))
        .route("/api/traces", get(traces))
        .route("/api/rows", get(rows))
        .route("/api/window", get(window_h))
        .route("/api/event", get(event))
        .route("/api/stats", get(stats_h))
        .route("/api/search", get(search_h))
        .route("/api/counters", get(counters_h))
        .route("/api/findings", get(findings))
        .route("/api/darshan", get(darshan_h))
        .fallback(|| async { ApiError::not_found("no such path") })
        .with_state(state)
}

fn file_response(path: &str) -> Response {
    match assets::get(path) {
        Some(bytes) => (
            [
                (header::CONTENT_TYPE, assets::content_type(path)),
                (header::CACHE_CONTROL, "no-cache"),
            ],
            bytes,
        )
            .into_response(),
        None => ApiError::not_found(format!("no asset {path:?}")).into_response(),
    }
}

async fn index() -> Response {
    file_response("index.html")
}

async fn asset(Path(path): Path<String>) -> Response {
    file_response(&path)
}

fn int_param(p: &HashMap<String, String>, key: &str) -> Result<Option<i64>, ApiError> {
    match p.get(key).map(|s| s.trim()) {
        None | Some("") => Ok(None),
        Some(s) => s
            .parse::<i64>()
            .or_else(|_| s.parse::<f64>().map(|f| f.round() as i64))
            .map(Some)
            .map_err(|_| ApiError::bad(format!("{key} must be an integer, not {s:?}"))),
    }
}

fn trace_of(state: &AppState, p: &HashMap<String, String>) -> Result<Arc<TraceView>, ApiError> {
    let i = int_param(p, "trace")?.unwrap_or(0);
    usize::try_from(i)
        .ok()
        .and_then(|i| state.traces.get(i))
        .cloned()
        .ok_or_else(|| ApiError::not_found(format!("no trace {i}")))
}

/// The window [t0, t1) of a query: defaults to the whole trace; t0 past the end is a 404.
fn range_of(view: &TraceView, p: &HashMap<String, String>) -> Result<(i64, i64), ApiError> {
    let d = view.duration();
    let t0 = int_param(p, "t0")?.unwrap_or(0);
    let t1 = int_param(p, "t1")?.unwrap_or(d);
    if t0 > d {
        return Err(ApiError::not_found(format!(
            "t0 {t0} is past the end of the trace ({d} ns)"
        )));
    }
    if t1 <= t0 {
        return Err(ApiError::bad(format!(
            "t1 ({t1}) must be greater than t0 ({t0})"
        )));
    }
    Ok((t0.max(0).min(t1 - 1), t1))
}

/// `rows=a-b` or `rows=0,5,9` (or both mixed); absent = all rows.
fn rows_of(view: &TraceView, p: &HashMap<String, String>) -> Result<Vec<u32>, ApiError> {
    let n = view.rows.len() as i64;
    let Some(spec) = p.get("rows").map(|s| s.trim()).filter(|s| !s.is_empty()) else {
        return Ok((0..n as u32).collect());
    };
    let mut out = Vec::new();
    for part in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let parse = |s: &str| {
            s.trim()
                .parse::<i64>()
                .map_err(|_| ApiError::bad(format!("bad rows {spec:?}: {s:?} is not a row number")))
        };
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (parse(a)?, parse(b)?),
            None => {
                let a = parse(part)?;
                (a, a)
            }
        };
        if a > b {
            return Err(ApiError::bad(format!("bad rows {spec:?}: {a} > {b}")));
        }
        if a < 0 || b >= n {
            return Err(ApiError::not_found(format!(
                "no row {} (the trace has rows 0-{})",
                if a < 0 { a } else { b },
                n - 1
            )));
        }
        if b - a > 1_000_000 {
            return Err(ApiError::bad("too many rows"));
        }
        out.extend(a as u32..=b as u32);
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

async fn blocking<F>(what: &'static str, f: F) -> ApiResult
where
    F: FnOnce() -> Result<Value, ApiError> + Send + 'static,
{
    match tokio::task::spawn_blocking(f).await {
        Ok(r) => r.map(Json),
        Err(e) => Err(ApiError::internal(what, e)),
    }
}

async fn traces(State(state): State<AppState>) -> ApiResult {
    let list: Vec<Value> = state
        .traces
        .iter()
        .map(|v| {
            let m = &v.trace.meta;
            json!({
                "index": v.index,
                "name": v.name,
                "duration_ns": m.job.duration_ns,
                "start_unix_ns": m.job.start_unix_ns,
                "ranks": m.job.ranks,
                "events": m.counts.events,
                "partial": m.partial,
                "rows": v.rows.len(),
                "command": m.job.command,
                "lod": v.lod.as_ref().map(|l| json!({
                    "base_ns": l.meta.base_ns, "levels": l.meta.levels, "long_ns": l.meta.long_ns})),
            })
        })
        .collect();
    Ok(Json(Value::Array(list)))
}

/// A function of the rows answer, with the colour the page draws it in.
#[derive(Serialize)]
struct ColouredFunction<'a> {
    #[serde(flatten)]
    function: &'a FuncEntry,
    colour: String,
}

async fn rows(State(state): State<AppState>, Query(p): Params) -> ApiResult {
    let v = trace_of(&state, &p)?;
    // The page has no colour table of its own: it draws with these (pioscope_trace::colours).
    let functions: Vec<ColouredFunction> = v
        .functions
        .iter()
        .map(|f| ColouredFunction {
            function: f,
            colour: colours::function_colour(
                Layer::from_name(&f.layer).unwrap_or(Layer::Tracer),
                &f.name,
            )
            .css(),
        })
        .collect();
    Ok(Json(json!({
        "groups": v.groups,
        "layers": Layer::ALL.iter().map(|l| l.name()).collect::<Vec<_>>(),
        "layer_colours": colours::css_by_layer(),
        "functions": functions,
    })))
}

async fn window_h(State(state): State<AppState>, Query(p): Params) -> Result<Response, ApiError> {
    let v = trace_of(&state, &p)?;
    let (t0, t1) = range_of(&v, &p)?;
    let px = int_param(&p, "px")?.unwrap_or(1200);
    if !(1..=100_000).contains(&px) {
        return Err(ApiError::bad(format!("px must be in 1..100000, not {px}")));
    }
    let rows = rows_of(&v, &p)?;
    let group = matches!(p.get("group").map(String::as_str), Some("1" | "true"));
    let height = match int_param(&p, "height")? {
        None => None,
        Some(h) if (1..=100_000).contains(&h) => Some(h as usize),
        Some(h) => {
            return Err(ApiError::bad(format!(
                "height must be in 1..100000, not {h}"
            )))
        }
    };
    let q = window::WindowQuery {
        t0,
        t1,
        px,
        rows,
        group,
        height,
    };
    // Serialized straight to bytes in the worker: an answer holds up to 5,000 states.
    let work = move || -> Result<Vec<u8>, ApiError> {
        let w = window::window(&v, &q).map_err(|e| ApiError::internal("reading a window", e))?;
        serde_json::to_vec(&w).map_err(|e| ApiError::internal("encoding a window", e))
    };
    match tokio::task::spawn_blocking(work).await {
        Ok(Ok(bytes)) => Ok(([(header::CONTENT_TYPE, "application/json")], bytes).into_response()),
        Ok(Err(e)) => Err(e),
        Err(e) => Err(ApiError::internal("reading a window", e)),
    }
}

async fn event(State(state): State<AppState>, Query(p): Params) -> ApiResult {
    let v = trace_of(&state, &p)?;
    let id = int_param(&p, "id")?.ok_or_else(|| ApiError::bad("id is required"))?;
    blocking("reading an event", move || {
        details::event(&v, id)
            .map_err(|e| ApiError::internal("reading an event", e))?
            .ok_or_else(|| ApiError::not_found(format!("no event {id}")))
    })
    .await
}

async fn stats_h(State(state): State<AppState>, Query(p): Params) -> ApiResult {
    let v = trace_of(&state, &p)?;
    let (t0, t1) = range_of(&v, &p)?;
    let rows = rows_of(&v, &p)?;
    blocking("computing statistics", move || {
        stats::stats(&v, &rows, t0, t1).map_err(|e| ApiError::internal("computing statistics", e))
    })
    .await
}

async fn search_h(State(state): State<AppState>, Query(p): Params) -> ApiResult {
    let v = trace_of(&state, &p)?;
    let q = p.get("q").cloned().unwrap_or_default();
    let limit = int_param(&p, "limit")?.unwrap_or(100).clamp(0, 10_000) as usize;
    blocking("searching", move || {
        search::search(&v, &q, limit).map_err(|e| ApiError::internal("searching", e))
    })
    .await
}

async fn counters_h(State(state): State<AppState>, Query(p): Params) -> ApiResult {
    let v = trace_of(&state, &p)?;
    let (t0, t1) = range_of(&v, &p)?;
    let px = int_param(&p, "px")?.unwrap_or(1200).clamp(1, 100_000);
    blocking("reading counters", move || {
        counters::counters(&v, t0, t1, px).map_err(|e| ApiError::internal("reading counters", e))
    })
    .await
}

async fn darshan_h(State(state): State<AppState>, Query(p): Params) -> ApiResult {
    let v = trace_of(&state, &p)?;
    blocking("reading the Darshan counters", move || {
        darshan::darshan(&v).map_err(|e| ApiError::internal("reading the Darshan counters", e))
    })
    .await
}

async fn findings(State(state): State<AppState>, Query(p): Params) -> ApiResult {
    let v = trace_of(&state, &p)?;
    let cell = state.findings[v.index].clone();
    blocking("computing findings", move || {
        cell.wait()
            .map_err(|e| ApiError::internal("computing findings", e))
    })
    .await
}
