//! The findings of two runs lined up by rule: the k-th finding of a rule in A (most costly
//! first, the report's order) is the k-th of that rule in B. A rule's finding is worse when it
//! is more severe or costs more time in B, better when less.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use serde::Serialize;

use crate::findings::{Finding, Severity};

/// What became of a finding from A to B.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Only in B.
    Appeared,
    /// In both, more severe or more costly in B.
    Worse,
    /// Only in A.
    Disappeared,
    /// In both, less severe or less costly in B.
    Better,
    /// In both, same severity and cost.
    Unchanged,
}

impl Status {
    /// `appeared`, `worse`, ...
    pub fn name(self) -> &'static str {
        match self {
            Status::Appeared => "appeared",
            Status::Worse => "worse",
            Status::Disappeared => "disappeared",
            Status::Better => "better",
            Status::Unchanged => "unchanged",
        }
    }
}

/// One finding on both sides.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FindingDiff {
    /// Rule id (docs/FINDINGS.md).
    pub id: String,
    /// What became of it.
    pub status: Status,
    /// Its title in B, or in A when B has none.
    pub title: String,
    /// Severity in A (null when A has none).
    pub severity_a: Option<Severity>,
    /// Severity in B (null when B has none).
    pub severity_b: Option<Severity>,
    /// Estimated cost in A, ns (null when A has none).
    pub cost_a_ns: Option<i64>,
    /// Estimated cost in B, ns (null when B has none).
    pub cost_b_ns: Option<i64>,
}

fn status(a: Option<&Finding>, b: Option<&Finding>) -> Status {
    let (a, b) = match (a, b) {
        (None, _) => return Status::Appeared,
        (_, None) => return Status::Disappeared,
        (Some(a), Some(b)) => (a, b),
    };
    // Severity first (High sorts before Low, so a smaller B is more severe), then the cost.
    match b.severity.cmp(&a.severity).then(a.cost_ns.cmp(&b.cost_ns)) {
        Ordering::Less => Status::Worse,
        Ordering::Greater => Status::Better,
        Ordering::Equal => Status::Unchanged,
    }
}

/// Both runs' findings lined up: appeared, worse, disappeared, better, unchanged; within each,
/// the costliest (on either side) first.
pub(super) fn line_up(a: &[Finding], b: &[Finding]) -> Vec<FindingDiff> {
    let mut by_rule: BTreeMap<&str, (Vec<&Finding>, Vec<&Finding>)> = BTreeMap::new();
    for f in a {
        by_rule.entry(f.id.as_str()).or_default().0.push(f);
    }
    for f in b {
        by_rule.entry(f.id.as_str()).or_default().1.push(f);
    }
    let mut out = Vec::new();
    for (id, (fa, fb)) in by_rule {
        for k in 0..fa.len().max(fb.len()) {
            let (x, y) = (fa.get(k).copied(), fb.get(k).copied());
            let Some(shown) = y.or(x) else { continue };
            out.push(FindingDiff {
                id: id.to_string(),
                status: status(x, y),
                title: shown.title.clone(),
                severity_a: x.map(|f| f.severity),
                severity_b: y.map(|f| f.severity),
                cost_a_ns: x.map(|f| f.cost_ns),
                cost_b_ns: y.map(|f| f.cost_ns),
            });
        }
    }
    let cost = |f: &FindingDiff| f.cost_a_ns.unwrap_or(0).max(f.cost_b_ns.unwrap_or(0));
    out.sort_by(|x, y| {
        (x.status, std::cmp::Reverse(cost(x)), &x.id).cmp(&(
            y.status,
            std::cmp::Reverse(cost(y)),
            &y.id,
        ))
    });
    out
}
