//! Windows over more rows than the screen has pixel rows (issue 18): the asked rows merged into
//! groups of 8^g consecutive rows, read from the row grades of the level-of-detail index (one
//! bucket per group, not one per row), each bucket with its mean busy fraction, its worst row
//! and its calls; messages summarised between groups. The answer is columnar (one array per
//! field) so that tens of thousands of cells stay well under 1 MB.

use std::collections::BTreeMap;

use pioscope_trace::store::StoreError;
use serde::Serialize;

use crate::model::TraceView;
use crate::window::{level_for, lod_reads, scan_lod, AnyRow, WindowOut, WindowQuery};

/// Group buckets one answer carries at most (about): the level is chosen coarse enough.
pub const CELL_BUDGET: i64 = 20_000;
/// Messages between groups are listed per pair of groups, at most this many pairs.
pub const GROUP_MESSAGE_BUDGET: usize = 2_000;
/// Pairs of groups up to which messages are summed in a dense table.
const DENSE_PAIRS: usize = 1 << 16;

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
    scan_lod(
        view,
        level,
        grade,
        &firsts,
        t0,
        t1,
        lod_reads::GROUPS,
        &mut |k, r| {
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
        },
    )?;
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
    // The group (index into `groups`) of each display row: a wide window holds millions of
    // messages, so no hashing per message.
    let total = view.display_to_canon.len() as u64;
    let mut group_of = vec![u32::MAX; view.rows.len()];
    for (k, &f) in firsts.iter().enumerate() {
        for c in f as u64..(f as u64 + size).min(total) {
            if let Some(d) = view.canon_to_display.get(c as usize) {
                if let Some(g) = group_of.get_mut(*d as usize) {
                    *g = k as u32;
                }
            }
        }
    }
    let group = |display: u32| {
        group_of
            .get(display as usize)
            .copied()
            .filter(|&g| g != u32::MAX)
    };
    // Per (sending, receiving) group: a dense table for the few groups of a screen, a tree
    // beyond.
    let n = groups.len();
    let mut dense = (n * n <= DENSE_PAIRS).then(|| vec![(0u64, 0i64); n * n]);
    let mut sparse: BTreeMap<usize, (u64, i64)> = BTreeMap::new();
    let mut distinct = 0usize;
    for m in view.messages_near(t0, t1) {
        if m.recv.max(m.send) < t0 {
            continue;
        }
        let (Some(a), Some(b)) = (group(m.from_row), group(m.to_row)) else {
            continue;
        };
        let key = a as usize * n + b as usize;
        let e = match dense.as_mut() {
            Some(d) => &mut d[key],
            None => sparse.entry(key).or_default(),
        };
        if e.0 == 0 {
            distinct += 1;
            if distinct > GROUP_MESSAGE_BUDGET {
                return None;
            }
        }
        e.0 += 1;
        e.1 += m.bytes;
    }
    let tallies: Vec<(usize, (u64, i64))> = match dense {
        Some(d) => d.into_iter().enumerate().filter(|x| x.1 .0 > 0).collect(),
        None => sparse.into_iter().collect(),
    };
    let mut out: Vec<GroupMessage> = tallies
        .into_iter()
        .map(|(key, (count, bytes))| GroupMessage {
            from: groups[key / n].first,
            to: groups[key % n].first,
            count,
            bytes,
        })
        .collect();
    out.sort_by_key(|m| (m.from, m.to));
    Some(out)
}
