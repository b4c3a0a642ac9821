//! Statistics of a time range over some rows (the page's range selection): per layer and per
//! function the calls, data bytes and time inside the range (clipped), and the busiest rows.
//! Exact from the events when the range holds few enough calls, else estimated from the
//! level-of-detail index (marked `"exact": false`).

use std::collections::HashMap;

use pioscope_trace::functions::{self, Layer};
use pioscope_trace::store::columns::CallColumns;
use pioscope_trace::store::schema::events as ev;
use pioscope_trace::store::StoreError;
use serde_json::{json, Value};

use crate::model::{func_keys, in_window, layer_name, TraceView};
use crate::window::{level_for, read_lod};

/// Calls above which a range is estimated from the index instead of read exactly.
pub const EXACT_LIMIT: u64 = 2_000_000;
/// Busiest rows listed.
pub const BUSIEST: usize = 10;

#[derive(Default, Clone, Copy)]
struct Acc {
    calls: u64,
    bytes: u64,
    time_ns: i64,
}

/// The statistics answer.
pub fn stats(view: &TraceView, rows: &[u32], t0: i64, t1: i64) -> Result<Value, StoreError> {
    // How many calls the range holds, from the index (a coarse level is enough).
    let estimate: u64 = match level_for(view, ((t1 - t0) / 64).max(1)) {
        Some(l) => read_lod(view, l, rows, t0, t1)?
            .iter()
            .flatten()
            .map(|b| b.count)
            .sum(),
        None => 0,
    };
    if estimate > EXACT_LIMIT && view.lod.is_some() {
        return estimated(view, rows, t0, t1);
    }
    let mut by_func: HashMap<u32, Acc> = HashMap::new();
    let mut row_busy: HashMap<u32, i64> = HashMap::new();
    let wanted: std::collections::HashSet<u32> = rows.iter().copied().collect();
    let (from, preds) = view.window_preds(rows, t0, t1);
    let cols = CallColumns::names_with(&[ev::SIZE, ev::RESULT, ev::ERROR]);
    let mut events = 0u64;
    for sel in view.events.select(&preds) {
        for b in view.events.read(&sel, &cols)? {
            let c = view.events.columns(&b);
            let CallColumns {
                process,
                thread,
                start,
                dur,
                depth,
                func,
            } = CallColumns::new(&c)?;
            let (size, result, error) = (c.int(ev::SIZE)?, c.int(ev::RESULT)?, c.int(ev::ERROR)?);
            let fk = func_keys(view, &func);
            // Whether each function moves data (by dictionary key).
            let kinds: Vec<bool> = (0..func.key_count())
                .map(|k| {
                    let id = fk[k];
                    let l = Layer::from_name(&view.func_layer(id)).unwrap_or(Layer::Tracer);
                    functions::kind_of(l, func.value(k)).moves_data()
                })
                .collect();
            for i in 0..b.num_rows() {
                let (s, d) = (start.value(i), dur.value(i));
                if !in_window(s, d, from, t0, t1) {
                    continue;
                }
                let Some(row) = view.display_row(process.value(i) as i32, thread.value(i) as i32)
                else {
                    continue;
                };
                if !wanted.contains(&row) {
                    continue;
                }
                events += 1;
                let Some(k) = func.key(i) else { continue };
                let a = by_func.entry(fk[k]).or_default();
                a.calls += 1;
                let clipped = (s + d).min(t1) - s.max(t0);
                a.time_ns += clipped.max(0);
                if kinds[k] && s >= t0 {
                    a.bytes += functions::bytes_moved(
                        size.value(i).max(0) as u64,
                        result.value(i),
                        error.value(i) as i32,
                    );
                }
                if depth.value(i) == 0 {
                    *row_busy.entry(row).or_default() += clipped.max(0);
                }
            }
        }
    }
    for (k, s) in view.long_spans(rows, from, t0) {
        events += 1;
        let clipped = (s.start + s.dur).min(t1) - t0;
        let a = by_func.entry(s.func).or_default();
        a.calls += 1;
        a.time_ns += clipped.max(0);
        if s.depth == 0 {
            *row_busy.entry(rows[k]).or_default() += clipped.max(0);
        }
    }
    Ok(answer(
        view,
        t0,
        t1,
        rows.len(),
        events,
        true,
        by_func,
        row_busy,
    ))
}

/// The estimate from the index: per row busy time at depth 0, and per function the time and
/// calls of the buckets it dominates.
fn estimated(view: &TraceView, rows: &[u32], t0: i64, t1: i64) -> Result<Value, StoreError> {
    let level = level_for(view, ((t1 - t0) / 2048).max(1)).unwrap_or(0);
    let width = view.lod.as_ref().map_or(1, |l| l.meta.width(level));
    let per_row = read_lod(view, level, rows, t0, t1)?;
    let mut by_func: HashMap<u32, Acc> = HashMap::new();
    let mut row_busy: HashMap<u32, i64> = HashMap::new();
    let mut events = 0u64;
    for (k, buckets) in per_row.iter().enumerate() {
        for b in buckets {
            let bs = b.index * width;
            let share = ((bs + width).min(t1) - bs.max(t0)).max(0) as f64 / width as f64;
            let busy = (b.busy_ns[0] as f64 * share) as i64;
            *row_busy.entry(rows[k]).or_default() += busy;
            events += b.count;
            if let Some(f) = b.dominant() {
                let a = by_func.entry(f).or_default();
                a.calls += b.count;
                a.time_ns += busy;
                a.bytes += b.bytes.max(0.0) as u64;
            }
        }
    }
    Ok(answer(
        view,
        t0,
        t1,
        rows.len(),
        events,
        false,
        by_func,
        row_busy,
    ))
}

#[allow(clippy::too_many_arguments)]
fn answer(
    view: &TraceView,
    t0: i64,
    t1: i64,
    nrows: usize,
    events: u64,
    exact: bool,
    by_func: HashMap<u32, Acc>,
    row_busy: HashMap<u32, i64>,
) -> Value {
    let mut layers: HashMap<String, Acc> = HashMap::new();
    let mut funcs: Vec<(u32, Acc)> = by_func.into_iter().collect();
    funcs.sort_by_key(|(id, a)| (std::cmp::Reverse(a.time_ns), *id));
    for (id, a) in &funcs {
        let l = layers
            .entry(layer_name(&view.func_layer(*id)).to_string())
            .or_default();
        l.calls += a.calls;
        l.bytes += a.bytes;
        l.time_ns += a.time_ns;
    }
    let mut layers: Vec<(String, Acc)> = layers.into_iter().collect();
    layers.sort_by_key(|(n, a)| (std::cmp::Reverse(a.time_ns), n.clone()));
    let mut busiest: Vec<(u32, i64)> = row_busy.into_iter().collect();
    busiest.sort_by_key(|(r, ns)| (std::cmp::Reverse(*ns), *r));
    busiest.truncate(BUSIEST);
    let span = (t1 - t0).max(1) as f64;
    json!({
        "t0": t0,
        "t1": t1,
        "rows": nrows,
        "events": events,
        "exact": exact,
        "layers": layers.iter().map(|(n, a)| json!({
            "layer": n, "calls": a.calls, "bytes": a.bytes, "time_ns": a.time_ns})).collect::<Vec<_>>(),
        "functions": funcs.iter().map(|(id, a)| json!({
            "id": id, "name": view.func_name(*id), "layer": layer_name(&view.func_layer(*id)),
            "calls": a.calls, "bytes": a.bytes, "time_ns": a.time_ns})).collect::<Vec<_>>(),
        "busiest_rows": busiest.iter().map(|(r, ns)| json!({
            "row": r,
            "label": view.rows.get(*r as usize).map(|x| x.label.clone()),
            "busy_ns": ns,
            "busy": ((*ns as f64 / span).min(1.0) * 1000.0).round() / 1000.0,
        })).collect::<Vec<_>>(),
    })
}
