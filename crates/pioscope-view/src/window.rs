//! The window query: for each asked row either its exact states (read from events.parquet by
//! page-pruned range reads) or summaries (buckets of ~1-2 px from the level-of-detail index, or
//! binned on the fly from the events when the window is finer than the index's finest level),
//! chosen so that one answer stays under a budget of states.

use std::collections::HashMap;

use pioscope_trace::store::columns::{CallColumns, Columns, IntCol};
use pioscope_trace::store::lod::{columns as lc, BucketAcc, RowBinner, DEPTHS};
use pioscope_trace::store::{Pred, StoreError};
use serde::Serialize;

use crate::model::{func_keys, in_window, TraceView};
use crate::row_buckets::BucketRuns;
use crate::row_groups::{GroupMessage, GroupRowOut};
use crate::row_states::StateColumns;

/// Most states one answer carries; rows beyond it are summarised. A state is ~25 bytes of
/// JSON (`row_states.rs`): 5,000 keep an answer well under 1 MB with the other rows' buckets
/// and the messages (issue 18: 1,024 ranks, 100M events, 60 rows), and still show the whole of
/// a small trace (the HPIO demo's ~5,000 calls) exactly.
pub const STATE_BUDGET: u64 = 5_000;
/// Buckets read at most (about) for one answer with group=1.
pub const GROUP_BUCKETS: i64 = 400_000;
/// Most messages one answer carries; beyond it they are left out.
pub const MESSAGE_BUDGET: usize = 2_000;

/// One exact call, as the page draws it.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct State {
    /// Event id.
    pub id: i64,
    /// Start, ns.
    pub start: i64,
    /// Duration, ns.
    pub dur: i64,
    /// Depth.
    pub depth: u8,
    /// Function id.
    pub func: u32,
}

/// One row of an answer.
#[derive(Clone, Debug, Serialize)]
pub struct RowOut {
    /// Display row.
    pub row: u32,
    /// `states` or `buckets`.
    pub mode: &'static str,
    /// Exact states (mode states), one array per field.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub states: Option<StateColumns>,
    /// Buckets (mode buckets): their width and runs, one array per field.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub buckets: Option<BucketRuns>,
}

/// One aggregated host row (`group=1`).
#[derive(Clone, Debug, Serialize)]
pub struct GroupOut {
    /// Host.
    pub group: String,
    /// Its display rows.
    pub rows: Vec<u32>,
    /// Always `density`.
    pub mode: &'static str,
    /// Bucket width.
    pub bucket_ns: i64,
    /// Buckets.
    pub buckets: Vec<DensityOut>,
}

/// A density bucket.
#[derive(Clone, Debug, Serialize)]
pub struct DensityOut {
    /// Start, ns.
    pub start: i64,
    /// Mean busy fraction over the group's rows.
    pub busy: f64,
    /// The layer with most busy time.
    pub layer: Option<String>,
    /// Calls starting in the bucket.
    pub count: u64,
}

/// The answer.
#[derive(Clone, Debug, Serialize)]
pub struct WindowOut {
    /// Window start.
    pub t0: i64,
    /// Window end.
    pub t1: i64,
    /// Rows, or host rows with group=1.
    pub rows: Vec<AnyRow>,
    /// Messages between the asked rows in the window, when few enough.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub messages: Option<Vec<crate::model::Message>>,
    /// With row groups: the messages summed per pair of groups, when few enough pairs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group_messages: Option<Vec<GroupMessage>>,
    /// How the answer was made: `events`, `lod` (with `level`) or `binned`.
    pub source: &'static str,
    /// The index level used, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub level: Option<u32>,
}

/// A row of an answer: a timeline row, with group=1 a host row, or a row group when more
/// rows were asked than the screen has pixel rows.
#[derive(Clone, Debug, Serialize)]
#[serde(untagged)]
pub enum AnyRow {
    /// One row.
    Row(RowOut),
    /// One host.
    Group(GroupOut),
    /// Consecutive rows merged (issue 18).
    Groups(GroupRowOut),
}

/// Summaries of one row at one width.
pub type RowBuckets = Vec<BucketAcc>;

/// Reads the exact states of display `rows` overlapping [t0, t1), per asked row (same order).
pub fn read_states(
    view: &TraceView,
    rows: &[u32],
    t0: i64,
    t1: i64,
) -> Result<Vec<Vec<State>>, StoreError> {
    let mut slot: HashMap<u32, usize> = HashMap::new();
    for (i, &r) in rows.iter().enumerate() {
        slot.insert(r, i);
    }
    let mut out: Vec<Vec<State>> = vec![Vec::new(); rows.len()];
    if rows.is_empty() {
        return Ok(out);
    }
    let (from, preds) = view.window_preds(rows, t0, t1);
    // `id` is the row number (docs/FORMAT.md), so it comes from the selection itself: a
    // column fewer to decode.
    for sel in view.events.select(&preds) {
        let mut ids = sel
            .ranges
            .iter()
            .flat_map(|r| r.clone())
            .map(|i| sel.first_row as i64 + i as i64);
        for b in view.events.read(&sel, &CallColumns::NAMES)? {
            let CallColumns {
                process,
                thread,
                start,
                dur,
                depth,
                func,
            } = CallColumns::new(&view.events.columns(&b))?;
            let fk = func_keys(view, &func);
            for i in 0..b.num_rows() {
                let id = ids.next().unwrap_or(-1);
                let (s, d) = (start.value(i), dur.value(i));
                if !in_window(s, d, from, t0, t1) {
                    continue;
                }
                let Some(row) = view.display_row(process.value(i) as i32, thread.value(i) as i32)
                else {
                    continue;
                };
                let Some(&k) = slot.get(&row) else { continue };
                out[k].push(State {
                    id,
                    start: s,
                    dur: d,
                    depth: depth.value(i) as u8,
                    func: func.key(i).map_or(0, |x| fk[x]),
                });
            }
        }
    }
    for (k, s) in view.long_spans(rows, from, t0) {
        out[k].push(State {
            id: s.id,
            start: s.start,
            dur: s.dur,
            depth: s.depth,
            func: s.func,
        });
    }
    for v in &mut out {
        v.sort_by_key(|s| (s.start, s.depth, s.id));
    }
    Ok(out)
}

/// Bins exact states into buckets of `width` over [t0, t1).
pub fn bin_states(states: &[State], width: i64, t0: i64, t1: i64) -> RowBuckets {
    let mut b = RowBinner::clipped(width, t0, t1);
    let mut out = Vec::new();
    for s in states {
        b.push(s.start, s.dur, s.depth, s.func, 0.0, &mut |x| out.push(x));
    }
    b.finish(&mut |x| out.push(x));
    out
}

/// One bucket of lod.parquet as [`scan_lod`] hands it over: the fields of columns not read are
/// zero (None).
#[derive(Clone, Copy, Debug)]
pub struct LodRecord {
    /// Bucket start, ns.
    pub start: i64,
    /// Busy ns per depth (summed over the rows of a group).
    pub busy_ns: [i64; DEPTHS],
    /// Calls starting in the bucket.
    pub count: u64,
    /// Data bytes moved.
    pub bytes: i64,
    /// Dominant function id, if any.
    pub func: Option<u32>,
    /// A group's worst row (canonical) and its busy ns at depth 0; None for a row.
    pub worst: Option<(u32, i64)>,
}

/// The columns of lod.parquet a scan reads besides its keys.
pub mod lod_reads {
    use super::lc;

    /// Every column: what a row's buckets, the statistics and the counters use.
    pub const ALL: &[&str] = &[
        lc::BUSY0,
        lc::BUSY1,
        lc::BUSY2,
        lc::BUSY3,
        lc::COUNT,
        lc::BYTES,
        lc::FUNC,
        lc::WORST_ROW,
        lc::WORST_BUSY,
    ];
    /// What a row group's cell shows: busy time at depth 0, calls, function, worst row.
    pub const GROUPS: &[&str] = &[
        lc::BUSY0,
        lc::COUNT,
        lc::FUNC,
        lc::WORST_ROW,
        lc::WORST_BUSY,
    ];
}

/// Reads the buckets at `level` of grade `grade` (0: rows; g: groups of 8^g rows, named by
/// their first canonical row) overlapping [t0, t1), for the canonical `rows` (ascending, no
/// duplicates): `f(index into rows, bucket)`. Only the value columns `reads` (of
/// [`lod_reads`]) are decoded.
#[allow(clippy::too_many_arguments)]
pub fn scan_lod(
    view: &TraceView,
    level: u32,
    grade: u32,
    rows: &[u32],
    t0: i64,
    t1: i64,
    reads: &[&'static str],
    f: &mut dyn FnMut(usize, LodRecord),
) -> Result<(), StoreError> {
    let Some(lod) = &view.lod else {
        return Ok(());
    };
    let width = lod.meta.width(level);
    // Asked index of each canonical row (a row's buckets come in runs: no hashing per bucket).
    let mut slot = vec![usize::MAX; rows.last().map_or(0, |&r| r as usize + 1)];
    for (i, &r) in rows.iter().enumerate() {
        slot[r as usize] = i;
    }
    let mut ranges: Vec<(i64, i64)> = Vec::new();
    for &c in rows {
        let c = c as i64;
        match ranges.last_mut() {
            Some(last) if last.1 + 1 == c => last.1 = c,
            _ => ranges.push((c, c)),
        }
    }
    let preds = [
        Pred::range(lc::LEVEL, level as i64, level as i64),
        Pred::range(lc::GRADE, grade as i64, grade as i64),
        Pred {
            column: lc::ROW,
            ranges,
        },
        Pred::range(
            lc::START_NS,
            t0.saturating_sub(width - 1),
            t1.saturating_sub(1),
        ),
    ];
    let mut columns = vec![lc::LEVEL, lc::GRADE, lc::ROW, lc::START_NS];
    columns.extend_from_slice(reads);
    let read = |c: &Columns<'_>, name: &'static str| -> Result<Option<IntCol>, StoreError> {
        reads.contains(&name).then(|| c.int(name)).transpose()
    };
    for sel in lod.table.select(&preds) {
        for b in lod.table.read(&sel, &columns)? {
            let c = lod.table.columns(&b);
            let (lv, gr, row, start) = (
                c.int(lc::LEVEL)?,
                c.int(lc::GRADE)?,
                c.int(lc::ROW)?,
                c.int(lc::START_NS)?,
            );
            let (count, bytes, func) = (
                read(&c, lc::COUNT)?,
                read(&c, lc::BYTES)?,
                read(&c, lc::FUNC)?,
            );
            let (worst_row, worst_busy) = (read(&c, lc::WORST_ROW)?, read(&c, lc::WORST_BUSY)?);
            let busy = [
                read(&c, lc::BUSY0)?,
                read(&c, lc::BUSY1)?,
                read(&c, lc::BUSY2)?,
                read(&c, lc::BUSY3)?,
            ];
            let value = |col: &Option<IntCol>, i: usize| col.as_ref().map_or(0, |c| c.value(i));
            let get = |col: &Option<IntCol>, i: usize| col.as_ref().and_then(|c| c.get(i));
            for i in 0..b.num_rows() {
                if lv.value(i) != level as i64 || gr.value(i) != grade as i64 {
                    continue;
                }
                let s = start.value(i);
                if s >= t1 || s + width <= t0 {
                    continue;
                }
                let Some(&k) = slot
                    .get(row.value(i) as usize)
                    .filter(|&&k| k != usize::MAX)
                else {
                    continue;
                };
                f(
                    k,
                    LodRecord {
                        start: s,
                        busy_ns: busy.each_ref().map(|b| value(b, i)),
                        count: value(&count, i).max(0) as u64,
                        bytes: value(&bytes, i),
                        func: get(&func, i)
                            .and_then(|x| lod.func_ids.get(usize::try_from(x).ok()?).copied()),
                        worst: get(&worst_row, i)
                            .map(|w| (w.max(0) as u32, get(&worst_busy, i).unwrap_or(0))),
                    },
                );
            }
        }
    }
    Ok(())
}

/// Reads the buckets of display `rows` at `level` overlapping [t0, t1), per asked row.
pub fn read_lod(
    view: &TraceView,
    level: u32,
    rows: &[u32],
    t0: i64,
    t1: i64,
) -> Result<Vec<RowBuckets>, StoreError> {
    let mut out: Vec<RowBuckets> = vec![Vec::new(); rows.len()];
    let Some(lod) = &view.lod else {
        return Ok(out);
    };
    let width = lod.meta.width(level);
    // Asked row of each canonical row read.
    let mut canon: Vec<(u32, usize)> = rows
        .iter()
        .enumerate()
        .filter_map(|(i, &r)| view.display_to_canon.get(r as usize).map(|&c| (c, i)))
        .collect();
    canon.sort_unstable();
    canon.dedup_by_key(|c| c.0);
    let canon_rows: Vec<u32> = canon.iter().map(|c| c.0).collect();
    scan_lod(
        view,
        level,
        0,
        &canon_rows,
        t0,
        t1,
        lod_reads::ALL,
        &mut |k, r| {
            let mut acc = BucketAcc {
                index: r.start.div_euclid(width),
                busy_ns: r.busy_ns,
                count: r.count,
                bytes: r.bytes as f64,
                funcs: Vec::new(),
            };
            // Weighted by busy time, so that merged buckets keep the busiest one's function.
            if let Some(f) = r.func {
                acc.funcs.push((0, f, r.busy_ns[0].max(1)));
            }
            out[canon[k].1].push(acc);
        },
    )?;
    for v in &mut out {
        v.sort_by_key(|b| b.index);
    }
    Ok(out)
}

/// Which index level answers a window of `ns_per_px`: the coarsest whose buckets are at most
/// ~2 px wide; None when even level 0 is coarser (the window is answered from the events).
pub fn level_for(view: &TraceView, ns_per_px: i64) -> Option<u32> {
    let lod = view.lod.as_ref()?;
    let mut best = None;
    for l in 0..lod.meta.levels {
        if lod.meta.width(l) <= ns_per_px.saturating_mul(2) {
            best = Some(l);
        }
    }
    best
}

/// Parameters of a window query (validated by the caller).
#[derive(Clone, Debug)]
pub struct WindowQuery {
    /// Window start.
    pub t0: i64,
    /// Window end (> t0).
    pub t1: i64,
    /// Canvas width.
    pub px: i64,
    /// Display rows.
    pub rows: Vec<u32>,
    /// Aggregate rows per host.
    pub group: bool,
    /// Pixel rows the asked rows have on screen: more rows than this are answered as row
    /// groups (None: always row by row).
    pub height: Option<usize>,
}

/// Answers a window query.
pub fn window(view: &TraceView, q: &WindowQuery) -> Result<WindowOut, StoreError> {
    let (t0, t1) = (q.t0, q.t1);
    let clock = std::time::Instant::now();
    let timing = std::env::var_os("PIOSCOPE_VIEW_TIMING").is_some();
    let lap = |what: &str| {
        if timing {
            eprintln!(
                "window {what}: {:.1} ms",
                clock.elapsed().as_secs_f64() * 1e3
            );
        }
    };
    let ns_per_px = ((t1 - t0) / q.px.max(1)).max(1);
    let level = level_for(view, ns_per_px);
    if q.group {
        // Thousands of rows collapse here: keep the buckets read to about GROUP_BUCKETS in
        // all, and never read the events of every row (the index's finest level will do).
        let rows = view.rows.len().max(1) as i64;
        let coarse = ((t1 - t0).saturating_mul(rows) / GROUP_BUCKETS).max(ns_per_px);
        let level = if view.lod.is_some() {
            Some(level_for(view, coarse).unwrap_or(0))
        } else {
            None
        };
        return group_window(view, q, level, ns_per_px);
    }
    if let Some(height) = q.height {
        // A damaged index body answers row by row, like everything else.
        if let Ok(Some(out)) = crate::row_groups::group_window(view, q, height) {
            return Ok(out);
        }
    }
    // Estimated calls per row: from the index when there is one.
    // A damaged index body (its footer was read at open) answers from the events instead: the
    // index is only a faster copy of them.
    let mut level = level;
    let estimate: Option<(Vec<u64>, Option<Vec<RowBuckets>>)> = match &view.lod {
        Some(_) => match read_lod(view, level.unwrap_or(0), &q.rows, t0, t1) {
            Ok(b) => {
                let counts = b.iter().map(|r| r.iter().map(|x| x.count).sum()).collect();
                Some((counts, level.map(|_| b)))
            }
            Err(_) => {
                level = None;
                None
            }
        },
        None => None,
    };
    lap("estimate");
    let mut exact = vec![true; q.rows.len()];
    if let Some((counts, _)) = &estimate {
        // The rows with fewest calls get states first, until the budget is spent.
        let mut order: Vec<usize> = (0..q.rows.len()).collect();
        order.sort_by_key(|&i| counts[i]);
        let mut spent = 0u64;
        for i in order {
            spent += counts[i];
            exact[i] = spent <= STATE_BUDGET;
        }
    }
    // Rows read from the events: the exact ones, and every row when the index cannot help.
    let from_events: Vec<usize> = (0..q.rows.len())
        .filter(|&i| exact[i] || level.is_none())
        .collect();
    let event_rows: Vec<u32> = from_events.iter().map(|&i| q.rows[i]).collect();
    let states = read_states(view, &event_rows, t0, t1)?;
    lap("states");
    let mut out_rows: Vec<Option<RowOut>> = vec![None; q.rows.len()];
    let mut total = 0u64;
    let mut by_size: Vec<usize> = (0..from_events.len()).collect();
    by_size.sort_by_key(|&k| states[k].len());
    let mut used_binned = false;
    for k in by_size {
        let i = from_events[k];
        let n = states[k].len() as u64;
        if exact[i] && total + n <= STATE_BUDGET {
            total += n;
            out_rows[i] = Some(RowOut {
                row: q.rows[i],
                mode: "states",
                states: Some(StateColumns::new(&states[k])),
                buckets: None,
            });
        } else if level.is_none() || view.lod.is_none() {
            used_binned = true;
            let b = bin_states(&states[k], ns_per_px, t0, t1);
            out_rows[i] = Some(RowOut {
                row: q.rows[i],
                mode: "buckets",
                states: None,
                buckets: Some(BucketRuns::new(&b, ns_per_px, ns_per_px)),
            });
        } else {
            exact[i] = false;
        }
    }
    if let (Some((_, Some(lod_rows))), Some(l)) = (&estimate, level) {
        let width = view.lod.as_ref().map_or(1, |x| x.meta.width(l));
        for (i, slot) in out_rows.iter_mut().enumerate() {
            if slot.is_none() {
                *slot = Some(RowOut {
                    row: q.rows[i],
                    mode: "buckets",
                    states: None,
                    buckets: Some(BucketRuns::new(&lod_rows[i], width, ns_per_px)),
                });
            }
        }
    }
    let rows: Vec<RowOut> = out_rows.into_iter().flatten().collect();
    lap("answer");
    let any_lod = rows.iter().any(|r| r.mode == "buckets") && !used_binned && level.is_some();
    let rows: Vec<AnyRow> = rows.into_iter().map(AnyRow::Row).collect();
    Ok(WindowOut {
        t0,
        t1,
        rows,
        messages: messages_in(view, &q.rows, t0, t1),
        group_messages: None,
        source: if any_lod {
            "lod"
        } else if used_binned {
            "binned"
        } else {
            "events"
        },
        level: if any_lod { level } else { None },
    })
}

/// The messages between asked rows with a send or receive inside the window, if few enough.
fn messages_in(
    view: &TraceView,
    rows: &[u32],
    t0: i64,
    t1: i64,
) -> Option<Vec<crate::model::Message>> {
    if view.messages.is_empty() {
        return None;
    }
    // By display row: two lookups per message of the window, which can be millions.
    let mut wanted = vec![false; view.rows.len()];
    for &r in rows {
        if let Some(w) = wanted.get_mut(r as usize) {
            *w = true;
        }
    }
    let asked = |r: u32| wanted.get(r as usize).copied().unwrap_or(false);
    let mut out = Vec::new();
    for m in view.messages_near(t0, t1) {
        if m.recv.max(m.send) < t0 {
            continue;
        }
        if asked(m.from_row) && asked(m.to_row) {
            out.push(*m);
            if out.len() > MESSAGE_BUDGET {
                return None;
            }
        }
    }
    Some(out)
}

/// group=1: one density row per host holding an asked row.
fn group_window(
    view: &TraceView,
    q: &WindowQuery,
    level: Option<u32>,
    ns_per_px: i64,
) -> Result<WindowOut, StoreError> {
    let wanted: std::collections::HashSet<u32> = q.rows.iter().copied().collect();
    let mut groups = Vec::new();
    let mut binned = level.is_none() || view.lod.is_none();
    for g in &view.groups {
        let rows: Vec<u32> = g.rows.iter().map(|r| r.row).collect();
        if !rows.iter().any(|r| wanted.contains(r)) {
            continue;
        }
        // As in `window`: a damaged index body answers from the events.
        let from_index = match level {
            Some(l) if view.lod.is_some() => read_lod(view, l, &rows, q.t0, q.t1)
                .ok()
                .map(|b| (view.lod.as_ref().map_or(1, |x| x.meta.width(l)), b)),
            _ => None,
        };
        let (width, per_row) = match from_index {
            Some(found) => found,
            None => {
                binned = true;
                let states = read_states(view, &rows, q.t0, q.t1)?;
                (
                    ns_per_px,
                    states
                        .iter()
                        .map(|s| bin_states(s, ns_per_px, q.t0, q.t1))
                        .collect(),
                )
            }
        };
        // Sum per bucket index: busy at depth 0 and busy time per layer.
        let mut acc: std::collections::BTreeMap<i64, (i64, u64, HashMap<String, i64>)> =
            std::collections::BTreeMap::new();
        for r in &per_row {
            for b in r {
                let e = acc.entry(b.index).or_default();
                e.0 += b.busy_ns[0];
                e.1 += b.count;
                if let Some(f) = b.dominant() {
                    *e.2.entry(view.func_layer(f)).or_default() += b.busy_ns[0].max(1);
                }
            }
        }
        let n = rows.len().max(1) as f64;
        let buckets = acc
            .into_iter()
            .map(|(index, (busy, count, layers))| DensityOut {
                start: index * width,
                busy: ((busy as f64 / (width as f64 * n)).min(1.0) * 1000.0).round() / 1000.0,
                layer: layers
                    .into_iter()
                    .max_by_key(|x| (x.1, x.0.clone()))
                    .map(|x| x.0),
                count,
            })
            .collect();
        groups.push(GroupOut {
            group: g.host.clone(),
            rows,
            mode: "density",
            bucket_ns: width,
            buckets,
        });
    }
    Ok(WindowOut {
        t0: q.t0,
        t1: q.t1,
        rows: groups.into_iter().map(AnyRow::Group).collect(),
        messages: None,
        group_messages: None,
        source: if binned { "binned" } else { "lod" },
        level: if binned { None } else { level },
    })
}
