//! Search by function name, file path or "rank N", and the scan behind it: the first calls in
//! time order matching a filter, reading only pages that can start before the latest match
//! kept so far.

use std::collections::{BinaryHeap, HashSet};

use pioscope_trace::store::schema::events as ev;
use pioscope_trace::store::{Pred, StoreError};
use serde_json::{json, Value};

use crate::model::{func_keys, TraceView};

/// Which calls match.
#[derive(Clone, Debug, Default)]
pub struct Filter {
    /// Only these ranks (None: any).
    pub ranks: Option<HashSet<i32>>,
    /// Functions.
    pub funcs: Option<HashSet<u32>>,
    /// Files.
    pub files: Option<HashSet<i32>>,
    /// true: a call must match both `funcs` and `files` (when given); false: either.
    pub all: bool,
}

impl Filter {
    fn matches(&self, func: u32, file: Option<i32>) -> bool {
        let f = self.funcs.as_ref().map(|s| s.contains(&func));
        let p = self
            .files
            .as_ref()
            .map(|s| file.is_some_and(|x| s.contains(&x)));
        match (f, p) {
            (None, None) => true,
            (Some(a), None) | (None, Some(a)) => a,
            (Some(a), Some(b)) => {
                if self.all {
                    a && b
                } else {
                    a || b
                }
            }
        }
    }
}

/// A matching call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Hit {
    /// Start, ns.
    pub start: i64,
    /// Event id.
    pub id: i64,
    /// Duration, ns.
    pub dur: i64,
    /// Display row.
    pub row: u32,
    /// Function id.
    pub func: u32,
}

/// The first `limit` calls in time order matching `filter`.
pub fn first_hits(view: &TraceView, filter: &Filter, limit: usize) -> Result<Vec<Hit>, StoreError> {
    let mut heap: BinaryHeap<Hit> = BinaryHeap::new();
    if limit == 0
        || filter.funcs.as_ref().is_some_and(|f| f.is_empty())
            && !filter.all
            && filter.files.as_ref().is_none_or(|f| f.is_empty())
    {
        return Ok(Vec::new());
    }
    let rank_ranges: Option<Vec<(i64, i64)>> = filter.ranks.as_ref().map(|r| {
        let mut v: Vec<i64> = r.iter().map(|&x| x as i64).collect();
        v.sort_unstable();
        v.into_iter().map(|x| (x, x)).collect()
    });
    let cols = [
        ev::ID,
        ev::PROCESS,
        ev::THREAD,
        ev::START_NS,
        ev::DURATION_NS,
        ev::FUNC,
        ev::FILE_ID,
    ];
    for rg in 0..view.events.row_groups() {
        let bound = if heap.len() >= limit {
            heap.peek().map_or(i64::MAX, |h| h.start)
        } else {
            i64::MAX
        };
        let mut preds = vec![Pred::range(ev::START_NS, i64::MIN, bound)];
        if let Some(r) = &rank_ranges {
            preds.push(Pred {
                column: ev::RANK,
                ranges: r.clone(),
            });
        }
        let Some(sel) = view.events.select_in(rg, &preds) else {
            continue;
        };
        for b in view.events.read(&sel, &cols)? {
            let c = view.events.columns(&b);
            let (id, process, thread, start, dur) = (
                c.int(ev::ID)?,
                c.int(ev::PROCESS)?,
                c.int(ev::THREAD)?,
                c.int(ev::START_NS)?,
                c.int(ev::DURATION_NS)?,
            );
            let file = c.int(ev::FILE_ID)?;
            let func = c.str(ev::FUNC)?;
            let fk = func_keys(view, &func);
            for i in 0..b.num_rows() {
                let s = start.value(i);
                if heap.len() >= limit && heap.peek().is_some_and(|h| s >= h.start) {
                    continue;
                }
                let f = func.key(i).map_or(0, |k| fk[k]);
                if !filter.matches(f, file.get(i).map(|x| x as i32)) {
                    continue;
                }
                let Some(row) = view.display_row(process.value(i) as i32, thread.value(i) as i32)
                else {
                    continue;
                };
                if let Some(r) = &filter.ranks {
                    if !view
                        .rows
                        .get(row as usize)
                        .is_some_and(|x| r.contains(&x.rank))
                    {
                        continue;
                    }
                }
                heap.push(Hit {
                    start: s,
                    id: id.value(i),
                    dur: dur.value(i),
                    row,
                    func: f,
                });
                if heap.len() > limit {
                    heap.pop();
                }
            }
        }
    }
    let mut v = heap.into_vec();
    v.sort();
    Ok(v)
}

/// Parses "rank N" (case-insensitive).
fn rank_query(q: &str) -> Option<i32> {
    let rest = q.trim().to_ascii_lowercase();
    let rest = rest.strip_prefix("rank")?.trim();
    rest.parse().ok()
}

/// The search answer.
pub fn search(view: &TraceView, q: &str, limit: usize) -> Result<Value, StoreError> {
    let needle = q.trim().to_lowercase();
    let functions: Vec<&crate::model::FuncEntry> = if needle.is_empty() {
        Vec::new()
    } else {
        view.functions
            .iter()
            .filter(|f| f.name.to_lowercase().contains(&needle))
            .collect()
    };
    let files: Vec<&pioscope_trace::store::FileRow> = if needle.is_empty() {
        Vec::new()
    } else {
        view.trace
            .files
            .iter()
            .filter(|f| f.path.to_lowercase().contains(&needle))
            .collect()
    };
    let rank = rank_query(q);
    let rows: Vec<Value> = view
        .rows
        .iter()
        .filter(|r| {
            rank.is_some_and(|n| r.rank == n)
                || (!needle.is_empty() && r.label.to_lowercase() == needle)
        })
        .map(|r| json!({"row": r.row, "label": r.label, "rank": r.rank}))
        .collect();
    let filter = match rank {
        Some(n) => Some(Filter {
            ranks: Some([n].into_iter().collect()),
            ..Filter::default()
        }),
        None if !functions.is_empty() || !files.is_empty() => Some(Filter {
            ranks: None,
            funcs: Some(functions.iter().map(|f| f.id).collect()),
            files: Some(files.iter().map(|f| f.file_id).collect()),
            all: false,
        }),
        None => None,
    };
    let hits = match filter {
        Some(f) => first_hits(view, &f, limit)?,
        None => Vec::new(),
    };
    Ok(json!({
        "q": q,
        "functions": functions.iter().map(|f| json!({
            "id": f.id, "name": f.name, "layer": f.layer, "calls": f.calls})).collect::<Vec<_>>(),
        "files": files.iter().map(|f| json!({
            "file_id": f.file_id, "path": f.path, "events": f.events, "fs_type": f.fs_type}))
            .collect::<Vec<_>>(),
        "rows": rows,
        "events": hits.iter().map(|h| json!({
            "id": h.id, "row": h.row, "start": h.start, "dur": h.dur, "func": h.func,
            "name": view.func_name(h.func)})).collect::<Vec<_>>(),
    }))
}
