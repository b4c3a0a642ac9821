//! The calls of two runs paired, and those whose time changed most. Both stores are read side
//! by side, rank after rank, and each rank's calls are paired by `compare`'s one matcher: the
//! k-th top-level call of a function on a rank in A is the k-th in B. The file is not part of
//! the key on purpose: two runs of one program often write differently named files (a run
//! number or date in the path), and the k-th write of a rank is the same call either way; the
//! file of each call is shown beside it. Only top-level calls are ranked: a call beneath one
//! is inside its parent's time, and would repeat its change.

use pioscope_trace::store::Trace;
use rustc_hash::FxHashMap;
use serde::Serialize;

use crate::compare::matching::{match_rank, MatchedBy};
use crate::compare::ops::{Names, Op, NONE};
use crate::compare::{join_ranks, CompareError};
use crate::scope::Scope;

use super::Change;

/// One paired top-level call whose time changed.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CallChange {
    /// Rank.
    pub rank: u32,
    /// Function.
    pub func: String,
    /// A's file path (null for a call without one).
    pub file_a: Option<String>,
    /// B's file path.
    pub file_b: Option<String>,
    /// Event id in A.
    pub id_a: i64,
    /// Event id in B.
    pub id_b: i64,
    /// Start in A, ns since A's job start.
    pub start_a_ns: i64,
    /// Start in B, ns since B's job start.
    pub start_b_ns: i64,
    /// Its duration on both sides.
    #[serde(flatten)]
    pub change: Change,
}

/// Top-level calls of one function on one side without a counterpart on the other.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Unpaired {
    /// "A" or "B".
    pub side: &'static str,
    /// Function.
    pub func: String,
    /// How many.
    pub count: u64,
}

/// The top-level calls of both runs paired.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Calls {
    /// How they were paired.
    pub matched_by: MatchedBy,
    /// Pairs.
    pub paired: u64,
    /// The summed duration of the paired calls on both sides.
    pub paired_time: Change,
    /// The pairs whose duration changed most (either way), largest change first.
    pub changed: Vec<CallChange>,
    /// Calls without a counterpart per side and function, A first, most frequent first.
    pub unpaired: Vec<Unpaired>,
}

/// A candidate pair before names and paths are looked up.
struct Pair {
    rank: u32,
    a: Op,
    b: Op,
}

impl Pair {
    fn delta(&self) -> u64 {
        (self.b.dur - self.a.dur).unsigned_abs()
    }
}

/// Largest change first, then rank and A's order: a total order, so the top is the same on
/// every run.
fn order(x: &Pair, y: &Pair) -> std::cmp::Ordering {
    y.delta()
        .cmp(&x.delta())
        .then(x.rank.cmp(&y.rank))
        .then(x.a.id.cmp(&y.a.id))
}

/// What the rank-by-rank pass accumulates.
#[derive(Default)]
struct Acc {
    top: usize,
    pairs: Vec<Pair>,
    paired: u64,
    time_a: i64,
    time_b: i64,
    /// Unpaired top-level calls per function: (A, B).
    unpaired: FxHashMap<u32, (u64, u64)>,
}

impl Acc {
    fn rank(&mut self, rank: u32, a: &[Op], b: &[Op]) {
        let m = match_rank(a, b);
        for (i, op) in a.iter().enumerate().filter(|(_, o)| o.is_top()) {
            let j = m.sim_of[i];
            if j == NONE {
                self.unpaired.entry(op.func()).or_default().0 += 1;
                continue;
            }
            let other = b[j as usize];
            self.paired += 1;
            self.time_a += op.dur;
            self.time_b += other.dur;
            self.pairs.push(Pair {
                rank,
                a: *op,
                b: other,
            });
            // Bounded: keep the top, trimmed once it doubles.
            if self.pairs.len() >= 2 * self.top.max(1) {
                self.trim();
            }
        }
        for (j, op) in b.iter().enumerate() {
            if op.is_top() && !m.matched_sim[j] {
                self.unpaired.entry(op.func()).or_default().1 += 1;
            }
        }
    }

    fn trim(&mut self) {
        self.pairs.sort_by(order);
        self.pairs.truncate(self.top);
    }
}

/// Pairs the calls of `a` and `b` and keeps the `top` pairs whose time changed most.
pub(super) fn changed(
    a: &Trace,
    b: &Trace,
    scope: Scope,
    top: usize,
) -> Result<Calls, CompareError> {
    let mut acc = Acc {
        top,
        ..Acc::default()
    };
    let names = join_ranks((a, "A"), (b, "B"), scope, &mut |r, oa, ob, _| {
        acc.rank(r, oa, ob)
    })?;
    acc.trim();
    Ok(finish(acc, &names, a, b))
}

fn path(t: &Trace, file: i32) -> Option<String> {
    t.file_path(file).map(str::to_string)
}

fn finish(acc: Acc, names: &Names, a: &Trace, b: &Trace) -> Calls {
    let changed = acc
        .pairs
        .iter()
        .filter(|p| p.delta() > 0)
        .map(|p| CallChange {
            rank: p.rank,
            func: names.name(p.a.func()).to_string(),
            file_a: path(a, p.a.file),
            file_b: path(b, p.b.file),
            id_a: p.a.id,
            id_b: p.b.id,
            start_a_ns: p.a.start,
            start_b_ns: p.b.start,
            change: Change::new(p.a.dur, p.b.dur),
        })
        .collect();
    let mut unpaired: Vec<Unpaired> = acc
        .unpaired
        .iter()
        .flat_map(|(&f, &(na, nb))| {
            [("A", na), ("B", nb)]
                .into_iter()
                .filter(|(_, n)| *n > 0)
                .map(move |(side, count)| (side, f, count))
        })
        .map(|(side, f, count)| Unpaired {
            side,
            func: names.name(f).to_string(),
            count,
        })
        .collect();
    unpaired.sort_by(|x, y| {
        (x.side, std::cmp::Reverse(x.count), &x.func).cmp(&(
            y.side,
            std::cmp::Reverse(y.count),
            &y.func,
        ))
    });
    Calls {
        matched_by: MatchedBy::Order,
        paired: acc.paired,
        paired_time: Change::new(acc.time_a, acc.time_b),
        changed,
        unpaired,
    }
}
