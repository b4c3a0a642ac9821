//! Windows over more rows than the screen has pixel rows (issue 18): the asked rows merged into
//! groups of 8^g consecutive rows, read from the row grades of the level-of-detail index (one
//! bucket per group, not one per row), each bucket with its mean busy fraction, its worst row
//! and its calls; messages summarised between groups. The answer is columnar (one array per
//! field) so that tens of thousands of cells stay well under 1 MB.

use std::collections::{BTreeMap, HashMap};

use pioscope_trace::store::StoreError;
use serde::Serialize;

use crate::model::TraceView;
use crate::window::{level_for, scan_lod, AnyRow, WindowOut, WindowQuery};

/// Group buckets one answer carries at most (about): the level is chosen coarse enough.
pub const CELL_BUDGET: i64 = 20_000;
/// Messages between groups are listed per pair of groups, at most this many pairs.
pub const GROUP_MESSAGE_BUDGET: usize = 2_000;

/// One row group of an answer: its buckets as parallel arrays.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct GroupRowOut {
    /// First display row of the group.
    pub first: u32,
    /// Last display row of the group.
    pub last: u32,
    /// Rows in the group.
    pub rows: u32,
    /// Its grade (8^grade rows per full group).
    pub grade: u32,
    /// Always `groups`.
    pub mode: &'static str,
    /// Bucket width, ns.
    pub bucket_ns: i64,
    /// Bucket index per bucket (start = index × bucket_ns).
    pub index: Vec<i64>,
    /// Mean busy fraction (depth 0) over the group's rows, per mille.
    pub busy: Vec<u16>,
    /// Busy fraction of the worst row, per mille.
    pub worst: Vec<u16>,
    /// The worst row (display row): the busiest at depth 0.
    pub worst_row: Vec<u32>,
    /// Calls starting in the bucket, over the group.
    pub count: Vec<u64>,
    /// The function with most time in the group's busiest row (null when none).
    pub func: Vec<Option<u32>>,
}

/// Messages from one group to another inside the window, summed.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct GroupMessage {
    /// First display row of the sending group.
    pub from: u32,
    /// First display row of the receiving group.
    pub to: u32,
    /// Messages.
    pub count: u64,
    /// Bytes.
    pub bytes: i64,
}

/// Per mille of `ns` in `width` (clipped to 1).
fn per_mille(ns: f64, width: f64) -> u16 {
    ((ns / width).clamp(0.0, 1.0) * 1000.0).round() as u16
}

/// The smallest grade (>= 1) whose groups of the asked canonical rows fit in `height` pixel
/// rows; None without row grades.
fn grade_for(view: &TraceView, canon: &[u32], height: usize) -> Option<u32> {
    let lod = view.lod.as_ref()?;
    (1..lod.meta.grades)
        .find(|&g| {
            let size = lod.meta.group_rows(g);
            let mut groups: Vec<u64> = canon.iter().map(|&c| c as u64 / size).collect();
            groups.dedup();
            groups.len() <= height.max(1)
        })
        .or_else(|| lod.meta.grades.checked_sub(1).filter(|&g| g > 0))
}

/// Answers `q` with row groups when it asks for more rows than `height` pixel rows and the
/// index has row grades; None otherwise (the caller answers row by row).
pub fn group_window(
    view: &TraceView,
    q: &WindowQuery,
    height: usize,
) -> Result<Option<WindowOut>, StoreError> {
    if q.rows.len() <= height {
        return Ok(None);
    }
    let Some(lod) = &view.lod else {
        return Ok(None);
    };
    let mut canon: Vec<u32> = q
        .rows
        .iter()
        .filter_map(|&r| view.display_to_canon.get(r as usize).copied())
        .collect();
    canon.sort_unstable();
    canon.dedup();
    let Some(grade) = grade_for(view, &canon, height) else {
        return Ok(None);
    };
    let size = lod.meta.group_rows(grade);
    let mut firsts: Vec<u32> = canon
        .iter()
        .map(|&c| (c as u64 / size * size) as u32)
        .collect();
    firsts.dedup();
    let (t0, t1) = (q.t0, q.t1);
    let span = (t1 - t0).max(1);
    let ns_per_px = (span / q.px.max(1)).max(1);
    let need = ns_per_px.max(span.saturating_mul(firsts.len() as i64) / CELL_BUDGET);
    let level = level_for(view, need).unwrap_or(0);
    let width = lod.meta.width(level);
    let total_rows = view.display_to_canon.len() as u64;
    let mut out: Vec<GroupRowOut> = firsts
        .iter()
        .map(|&f| {
            let members = (f as u64..(f as u64 + size).min(total_rows))
                .filter_map(|c| view.canon_to_display.get(c as usize).copied());
            let (lo, hi) = members.fold((u32::MAX, 0), |(lo, hi), d| (lo.min(d), hi.max(d)));
            GroupRowOut {
                first: lo,
                last: hi,
                rows: ((f as u64 + size).min(total_rows) - f as u64) as u32,
                grade,
                mode: "groups",
                bucket_ns: width,
                index: Vec::new(),
                busy: Vec::new(),
                worst: Vec::new(),
                worst_row: Vec::new(),
                count: Vec::new(),
                func: Vec::new(),
            }
        })
        .collect();
    // lod.parquet is sorted by (level, grade, row, start): each group's buckets come in time
    // order.
    scan_lod(view, level, grade, &firsts, t0, t1, &mut |k, r| {
        let g = &mut out[k];
        let n = g.rows.max(1) as f64;
        let (worst_row, worst_ns) = r.worst.unwrap_or((0, 0));
        g.index.push(r.start.div_euclid(width));
        g.busy
            .push(per_mille(r.busy_ns[0] as f64, width as f64 * n));
        g.worst.push(per_mille(worst_ns as f64, width as f64));
        g.worst_row.push(
            view.canon_to_display
                .get(worst_row as usize)
                .copied()
                .unwrap_or(g.first),
        );
        g.count.push(r.count);
        g.func.push(r.func);
    })?;
    let group_messages = group_messages(view, &firsts, size, &out, t0, t1);
    Ok(Some(WindowOut {
        t0,
        t1,
        rows: out.into_iter().map(AnyRow::Groups).collect(),
        messages: None,
        group_messages,
        source: "lod",
        level: Some(level),
    }))
}

/// Messages with a send or receive inside the window between the answer's groups, summed per
/// (sending group, receiving group); None when more pairs than [`GROUP_MESSAGE_BUDGET`].
fn group_messages(
    view: &TraceView,
    firsts: &[u32],
    size: u64,
    groups: &[GroupRowOut],
    t0: i64,
    t1: i64,
) -> Option<Vec<GroupMessage>> {
    if view.messages.is_empty() {
        return None;
    }
    let first_display: HashMap<u32, u32> = firsts
        .iter()
        .zip(groups)
        .map(|(&f, g)| ((f as u64 / size) as u32, g.first))
        .collect();
    let group_of = |display: u32| {
        let c = *view.display_to_canon.get(display as usize)?;
        first_display.get(&((c as u64 / size) as u32)).copied()
    };
    let mut pairs: BTreeMap<(u32, u32), (u64, i64)> = BTreeMap::new();
    let end = view.messages.partition_point(|m| m.send < t1);
    for m in &view.messages[..end] {
        if m.recv.max(m.send) < t0 {
            continue;
        }
        let (Some(a), Some(b)) = (group_of(m.from_row), group_of(m.to_row)) else {
            continue;
        };
        let e = pairs.entry((a, b)).or_default();
        e.0 += 1;
        e.1 += m.bytes;
        if pairs.len() > GROUP_MESSAGE_BUDGET {
            return None;
        }
    }
    Some(
        pairs
            .into_iter()
            .map(|((from, to), (count, bytes))| GroupMessage {
                from,
                to,
                count,
                bytes,
            })
            .collect(),
    )
}
