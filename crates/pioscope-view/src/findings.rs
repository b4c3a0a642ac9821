//! The report's findings (the same objects as `pioscope report --json`), computed once in the
//! background when the server starts, each with a `jump` to its evidence in the timeline: the
//! ranks, files and functions its text names, and the first call matching them.

use std::collections::HashSet;
use std::sync::{Arc, Condvar, Mutex};

use pioscope_analysis::profile::{self, Options};
use serde_json::{json, Value};

use crate::model::TraceView;
use crate::search::{first_hits, Filter};

/// The result slot and the condition variable its waiters sleep on.
type Slot = Arc<(Mutex<Option<Result<Value, String>>>, Condvar)>;

/// Findings being computed or done.
#[derive(Clone, Default)]
pub struct FindingsCell {
    inner: Slot,
}

impl std::fmt::Debug for FindingsCell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FindingsCell")
    }
}

impl FindingsCell {
    /// Starts computing in a thread of its own.
    pub fn start(view: Arc<TraceView>) -> FindingsCell {
        let cell = FindingsCell::default();
        let c = cell.clone();
        std::thread::spawn(move || {
            let result = compute(&view);
            let (lock, cv) = &*c.inner;
            if let Ok(mut g) = lock.lock() {
                *g = Some(result);
            }
            cv.notify_all();
        });
        cell
    }

    /// Waits for the result.
    pub fn wait(&self) -> Result<Value, String> {
        let (lock, cv) = &*self.inner;
        let mut g = lock.lock().map_err(|_| "findings failed".to_string())?;
        while g.is_none() {
            g = cv.wait(g).map_err(|_| "findings failed".to_string())?;
        }
        g.clone()
            .unwrap_or_else(|| Err("findings failed".to_string()))
    }
}

fn compute(view: &TraceView) -> Result<Value, String> {
    let p = profile::profile(&view.trace, &Options::default(), &mut |_, _| {})
        .map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    for f in &p.findings {
        let mut v = serde_json::to_value(f).map_err(|e| e.to_string())?;
        let text = format!(
            "{} {} {}",
            f.title,
            f.evidence.summary,
            f.evidence.worst.join(" | ")
        );
        let jump = jump(view, &text);
        if let Some(o) = v.as_object_mut() {
            o.insert("jump".into(), jump);
        }
        out.push(v);
    }
    Ok(Value::Array(out))
}

/// Ranks named as "rank N" in a text.
fn ranks_in(text: &str) -> Vec<i32> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("rank ") {
        rest = &rest[i + 5..];
        let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
        if let Ok(n) = digits.parse::<i32>() {
            if !out.contains(&n) {
                out.push(n);
            }
        }
    }
    out
}

/// Whether `name` appears in `text` as a whole word.
fn has_word(text: &str, name: &str) -> bool {
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    text.match_indices(name).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + name.len()..].chars().next();
        !before.is_some_and(word) && !after.is_some_and(word)
    })
}

/// Where a finding's evidence is: the first call on the named ranks, files and functions.
fn jump(view: &TraceView, text: &str) -> Value {
    let ranks = ranks_in(text);
    let files: HashSet<i32> = view
        .trace
        .files
        .iter()
        .filter(|f| !f.path.is_empty() && text.contains(f.path.as_str()))
        .map(|f| f.file_id)
        .collect();
    let funcs: HashSet<u32> = view
        .functions
        .iter()
        .filter(|f| has_word(text, &f.name))
        .map(|f| f.id)
        .collect();
    let rank_set: Option<HashSet<i32>> =
        (!ranks.is_empty()).then(|| ranks.iter().copied().collect());
    let attempts = [
        Filter {
            ranks: rank_set.clone(),
            funcs: (!funcs.is_empty()).then(|| funcs.clone()),
            files: (!files.is_empty()).then(|| files.clone()),
            all: true,
        },
        Filter {
            ranks: rank_set.clone(),
            funcs: (!funcs.is_empty()).then(|| funcs.clone()),
            files: None,
            all: true,
        },
        Filter {
            ranks: None,
            funcs: (!funcs.is_empty()).then(|| funcs.clone()),
            files: (!files.is_empty()).then(|| files.clone()),
            all: true,
        },
    ];
    let rows_of = |ranks: &[i32]| -> Vec<u32> {
        view.rows
            .iter()
            .filter(|r| ranks.contains(&r.rank))
            .map(|r| r.row)
            .collect()
    };
    let specific = !funcs.is_empty() || !files.is_empty() || !ranks.is_empty();
    if specific {
        for f in attempts.iter() {
            if f.funcs.is_none() && f.files.is_none() && f.ranks.is_none() {
                continue;
            }
            if let Ok(hits) = first_hits(view, f, 1) {
                if let Some(h) = hits.first() {
                    // Show the call with some context around it.
                    let pad = (h.dur * 4).max(10_000);
                    let mut rows = rows_of(&ranks);
                    if !rows.contains(&h.row) {
                        rows.push(h.row);
                    }
                    return json!({
                        "t0": (h.start - pad).max(0),
                        "t1": (h.start + h.dur + pad).min(view.duration()),
                        "rows": rows,
                        "event": h.id,
                    });
                }
            }
        }
    }
    json!({"t0": 0, "t1": view.duration(), "rows": rows_of(&ranks), "event": null})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_in_text() {
        assert_eq!(ranks_in("rank 3 (n1): x, rank 12"), vec![3, 12]);
        assert!(has_word("call pwrite: 5", "pwrite"));
        assert!(!has_word("call pwrite64: 5", "pwrite"));
    }
}
