//! `pioscope compare`: observed against expected, call by call. Two trace stores (a traced
//! run and its simulation, or any two runs of the same program) are read side by side,
//! streaming, rank after rank (both stores are sorted by rank): the top-level calls of a rank
//! and the calls directly beneath them (`ops`) are paired (`matching`) and compared, then
//! dropped, so memory holds one rank's calls plus the results. Per function and per collective
//! instance the times are summed; the top-level calls slower than expected by more than a
//! threshold are ranked by the time lost, each with the split of its simulated duration into
//! disk, server, network, exchange and the rest (`attribution`, which reads the simulated
//! servers and disks in a second pass over their row groups only). When either trace has
//! storage servers, their server tables are lined up too (`servers`, one more pass each).
//!
//! Ratios are observed / expected: 2.0 means the call took twice as long as the model says.

mod attribution;
pub(crate) mod matching;
pub(crate) mod ops;
pub mod servers;

use std::collections::BTreeMap;
use std::path::PathBuf;

use pioscope_trace::functions::Layer;
use pioscope_trace::store::{StoreError, Trace};
use rustc_hash::FxHashMap;
use serde::Serialize;
use thiserror::Error;

pub use attribution::Breakdown;
pub use matching::MatchedBy;
pub use servers::ServerComparison;

use crate::scope::Scope;
use attribution::Pending;
use ops::{Names, Op, ReadError, Reader, NONE};

/// Default ratio above which a call counts as slower than expected.
pub const DEFAULT_THRESHOLD: f64 = 1.5;

/// Unmatched calls named per function in the result (the count is always complete).
const EXAMPLES: usize = 3;

/// What to compare.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Options {
    /// A call is slower than expected when observed / expected exceeds this (> 0).
    pub threshold: f64,
    /// Which records count (the same for both traces).
    pub scope: Scope,
    /// Keep every matched call in `Comparison::operations` (about 56 bytes each).
    pub operations: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            threshold: DEFAULT_THRESHOLD,
            scope: Scope::Application,
            operations: false,
        }
    }
}

/// Why a comparison could not be made.
#[derive(Debug, Error)]
pub enum CompareError {
    /// Reading one of the traces failed.
    #[error("{which} trace {}: {source}", path.display())]
    Store {
        /// "observed" or "simulated" (`pioscope diff`: "A" or "B").
        which: &'static str,
        /// Its directory.
        path: PathBuf,
        /// What went wrong.
        #[source]
        source: StoreError,
    },
    /// The traces do not have the same number of ranks.
    #[error("the traces have different numbers of ranks: observed {} has {observed}, simulated {} has {simulated}", observed_path.display(), simulated_path.display())]
    Ranks {
        /// Observed trace directory.
        observed_path: PathBuf,
        /// Its ranks.
        observed: u32,
        /// Simulated trace directory.
        simulated_path: PathBuf,
        /// Its ranks.
        simulated: u32,
    },
    /// A store whose events are not sorted by rank (docs/FORMAT.md says they are).
    #[error("{which} trace {}: events are not sorted by rank (rank {rank} comes after a higher rank)", path.display())]
    Unsorted {
        /// "observed" or "simulated" (`pioscope diff`: "A" or "B").
        which: &'static str,
        /// Its directory.
        path: PathBuf,
        /// The rank out of order.
        rank: i32,
    },
    /// A threshold that is not a positive number.
    #[error("the threshold must be a number above 0, not {0}")]
    Threshold(f64),
}

/// One side of the comparison.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Side {
    /// The trace directory.
    pub path: String,
    /// MPI ranks.
    pub ranks: u32,
    /// meta.json `job.duration_ns`.
    pub job_duration_ns: i64,
    /// Top-level calls read.
    pub top_level: u64,
    /// Calls directly beneath them.
    pub children: u64,
}

/// Observed and expected time of a set of calls.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Totals {
    /// Matched calls.
    pub matched: u64,
    /// Their observed time, ns.
    pub observed_ns: i64,
    /// Their simulated time, ns.
    pub expected_ns: i64,
    /// observed / expected (null when nothing was expected).
    pub ratio: Option<f64>,
}

/// Per function.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FunctionRow {
    /// Function name.
    pub func: String,
    /// Its layer.
    pub layer: Layer,
    /// Matched calls (top-level and beneath) and their times.
    #[serde(flatten)]
    pub totals: Totals,
    /// Median of the per-call ratios (calls with an expected time above 0).
    pub median_ratio: Option<f64>,
    /// Matched calls slower than expected by more than the threshold.
    pub slower: u64,
    /// Observed calls without a simulated counterpart.
    pub unmatched_observed: u64,
    /// Simulated calls without an observed counterpart.
    pub unmatched_simulated: u64,
}

/// One collective MPI-IO call across ranks: the slowest rank of each side.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct InstanceRow {
    /// The observed `instance` number.
    pub instance: i32,
    /// Function.
    pub func: String,
    /// Ranks whose call was matched.
    pub ranks: u32,
    /// Longest observed duration over the ranks, ns.
    pub observed_ns: i64,
    /// Longest simulated duration over the matched ranks, ns.
    pub expected_ns: i64,
    /// observed / expected.
    pub ratio: Option<f64>,
}

/// Collective instances of one function, summarised.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct InstanceSummary {
    /// Function.
    pub func: String,
    /// Instances with at least one matched rank, and the sums of their times.
    #[serde(flatten)]
    pub totals: Totals,
    /// Median of the instance ratios.
    pub median_ratio: Option<f64>,
    /// Instances slower than expected by more than the threshold.
    pub slower: u64,
    /// The instance with the largest observed - expected.
    pub worst: Option<i32>,
}

/// Calls of one function on one side without a counterpart.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Unmatched {
    /// "observed" or "simulated".
    pub side: &'static str,
    /// Function.
    pub func: String,
    /// How many.
    pub count: u64,
    /// The first few as (rank, event id).
    pub examples: Vec<(u32, i64)>,
}

/// One matched call.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OpRow {
    /// Rank.
    pub rank: u32,
    /// Function.
    pub func: String,
    /// A top-level call (false: directly beneath one).
    pub top_level: bool,
    /// Event id in the observed trace.
    pub observed_id: i64,
    /// Event id in the simulated trace.
    pub simulated_id: i64,
    /// Collective instance (observed), if any.
    pub instance: Option<i32>,
    /// Observed start, ns since job start.
    pub start_ns: i64,
    /// Observed duration, ns.
    pub observed_ns: i64,
    /// Simulated duration, ns.
    pub expected_ns: i64,
    /// observed / expected.
    pub ratio: Option<f64>,
}

/// A top-level call slower than expected, with where the time went.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SlowOp {
    /// The call.
    #[serde(flatten)]
    pub op: OpRow,
    /// observed - expected, ns.
    pub lost_ns: i64,
    /// The simulated call's duration split by where it went in the model.
    pub model: Breakdown,
    /// The observed call's duration split by the calls beneath it.
    pub observed: Breakdown,
}

/// The whole comparison (what `pioscope compare --json` prints).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Comparison {
    /// The traced run.
    pub observed: Side,
    /// The simulated (expected) run.
    pub simulated: Side,
    /// How calls were paired.
    pub matched_by: MatchedBy,
    /// The threshold used.
    pub threshold: f64,
    /// Matched top-level calls (each call once: calls beneath are inside their parent's time).
    pub top_level: Totals,
    /// Per function, by layer then name.
    pub functions: Vec<FunctionRow>,
    /// Collective instances per function, by name.
    pub collectives: Vec<InstanceSummary>,
    /// Every collective instance with a matched rank, by instance number.
    pub instances: Vec<InstanceRow>,
    /// Calls without a counterpart, observed side first, most frequent first.
    pub unmatched: Vec<Unmatched>,
    /// Top-level calls slower than expected by more than the threshold, most time lost first.
    pub slow: Vec<SlowOp>,
    /// Time lost by all of them, ns.
    pub slow_lost_ns: i64,
    /// Calls matched beneath matched top-level calls.
    pub matched_beneath: u64,
    /// Every matched call, by rank and observed order (empty unless `Options::operations`).
    pub operations: Operations,
    /// The two server tables lined up (null when neither trace has storage servers).
    pub servers: Option<ServerComparison>,
}

/// Every matched call, kept compact; serializes as a list of [`OpRow`] objects.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Operations {
    names: Vec<String>,
    rows: Vec<CompactOp>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
struct CompactOp {
    rank: u32,
    func: u32,
    top: bool,
    instance: i32,
    observed_id: i64,
    simulated_id: i64,
    start: i64,
    observed: i64,
    expected: i64,
}

impl Operations {
    /// Matched calls kept.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// True when none was kept.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The calls in order.
    pub fn iter(&self) -> impl Iterator<Item = OpRow> + '_ {
        self.rows.iter().map(|c| OpRow {
            rank: c.rank,
            func: self.names.get(c.func as usize).cloned().unwrap_or_default(),
            top_level: c.top,
            observed_id: c.observed_id,
            simulated_id: c.simulated_id,
            instance: (c.instance >= 0).then_some(c.instance),
            start_ns: c.start,
            observed_ns: c.observed,
            expected_ns: c.expected,
            ratio: ratio(c.observed, c.expected),
        })
    }
}

impl Serialize for Operations {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

fn ratio(observed: i64, expected: i64) -> Option<f64> {
    (expected > 0).then(|| observed as f64 / expected as f64)
}

fn is_slower(observed: i64, expected: i64, threshold: f64) -> bool {
    match ratio(observed, expected) {
        Some(r) => r > threshold,
        None => observed > 0,
    }
}

fn median(v: &mut [f64]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_unstable_by(|a, b| a.total_cmp(b));
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

fn totals(matched: u64, observed_ns: i64, expected_ns: i64) -> Totals {
    Totals {
        matched,
        observed_ns,
        expected_ns,
        ratio: ratio(observed_ns, expected_ns),
    }
}

fn side(trace: &Trace, counts: (u64, u64)) -> Side {
    Side {
        path: trace.dir.display().to_string(),
        ranks: trace.meta.job.ranks,
        job_duration_ns: trace.meta.job.duration_ns,
        top_level: counts.0,
        children: counts.1,
    }
}

/// Compares `observed` with `simulated` (see the module notes).
pub fn compare(
    observed: &Trace,
    simulated: &Trace,
    opts: &Options,
) -> Result<Comparison, CompareError> {
    if !(opts.threshold > 0.0 && opts.threshold.is_finite()) {
        return Err(CompareError::Threshold(opts.threshold));
    }
    if observed.meta.job.ranks != simulated.meta.job.ranks {
        return Err(CompareError::Ranks {
            observed_path: observed.dir.clone(),
            observed: observed.meta.job.ranks,
            simulated_path: simulated.dir.clone(),
            simulated: simulated.meta.job.ranks,
        });
    }
    let mut acc = Acc::new(opts);
    let names = join_ranks(
        (observed, "observed"),
        (simulated, "simulated"),
        opts.scope,
        &mut |r, ops_o, ops_s, names| acc.rank(r, ops_o, ops_s, names),
    )?;
    let (mut c, pending) = acc.finish(&names);
    c.observed = side(observed, c.observed.counts());
    c.simulated = side(simulated, c.simulated.counts());
    // Where the time went, for the slow calls only.
    let model =
        attribution::simulated(simulated, pending).map_err(|source| CompareError::Store {
            which: "simulated",
            path: simulated.dir.clone(),
            source,
        })?;
    for (s, b) in c.slow.iter_mut().zip(model) {
        s.model = b;
    }
    c.servers = server_tables(observed, simulated, opts.scope)?;
    Ok(c)
}

/// What `join_ranks` calls for each rank: the rank, the calls of either side, the names.
pub(crate) type EachRank<'a> = dyn FnMut(u32, &[Op], &[Op], &Names) + 'a;

/// Reads two traces side by side, rank after rank (both stores are sorted by rank), and calls
/// `each(rank, calls of the first, calls of the second, names)` for every rank either has: a
/// merge join on the rank, where a rank present on one side only gets an empty slice for the
/// other. `which` names each side in errors. Gives back the function names the calls use.
pub(crate) fn join_ranks(
    first: (&Trace, &'static str),
    second: (&Trace, &'static str),
    scope: Scope,
    each: &mut EachRank<'_>,
) -> Result<Names, CompareError> {
    let err = |(t, which): (&Trace, &'static str)| {
        let path = t.dir.clone();
        move |e: ReadError| match e {
            ReadError::Store(source) => CompareError::Store {
                which,
                path,
                source,
            },
            ReadError::Unsorted(rank) => CompareError::Unsorted { which, path, rank },
        }
    };
    let mut names = Names::default();
    let mut a = Reader::new(first.0, scope)
        .map_err(ReadError::Store)
        .map_err(err(first))?;
    let mut b = Reader::new(second.0, scope)
        .map_err(ReadError::Store)
        .map_err(err(second))?;
    let mut o = a.next_rank(&mut names).map_err(err(first))?;
    let mut s = b.next_rank(&mut names).map_err(err(second))?;
    loop {
        match (&o, &s) {
            (None, None) => break,
            (Some((ro, _)), Some((rs, _))) if ro == rs => {
                if let (Some((r, ops_o)), Some((_, ops_s))) = (o.take(), s.take()) {
                    each(r, &ops_o, &ops_s, &names);
                }
                o = a.next_rank(&mut names).map_err(err(first))?;
                s = b.next_rank(&mut names).map_err(err(second))?;
            }
            (Some((ro, _)), rs) if rs.as_ref().is_none_or(|(rs, _)| ro < rs) => {
                if let Some((r, ops_o)) = o.take() {
                    each(r, &ops_o, &[], &names);
                }
                o = a.next_rank(&mut names).map_err(err(first))?;
            }
            _ => {
                if let Some((r, ops_s)) = s.take() {
                    each(r, &[], &ops_s, &names);
                }
                s = b.next_rank(&mut names).map_err(err(second))?;
            }
        }
    }
    Ok(names)
}

/// Both server tables lined up, when either trace has servers (a side without any counts
/// as an empty table).
fn server_tables(
    observed: &Trace,
    simulated: &Trace,
    scope: Scope,
) -> Result<Option<ServerComparison>, CompareError> {
    let table = |which: &'static str, t: &Trace| {
        crate::servers::loads(t, scope).map_err(|source| CompareError::Store {
            which,
            path: t.dir.clone(),
            source,
        })
    };
    let o = table("observed", observed)?;
    let s = table("simulated", simulated)?;
    if o.is_none() && s.is_none() {
        return Ok(None);
    }
    Ok(Some(servers::line_up(
        &o.unwrap_or_default(),
        &s.unwrap_or_default(),
    )))
}

impl Side {
    fn counts(&self) -> (u64, u64) {
        (self.top_level, self.children)
    }
}

#[derive(Default)]
struct FuncAcc {
    matched: u64,
    observed_ns: i64,
    expected_ns: i64,
    ratios: Vec<f64>,
    slower: u64,
    unmatched_observed: u64,
    unmatched_simulated: u64,
    examples_observed: Vec<(u32, i64)>,
    examples_simulated: Vec<(u32, i64)>,
}

#[derive(Default)]
struct InstAcc {
    func: u32,
    ranks: u32,
    observed_ns: i64,
    expected_ns: i64,
}

/// What the rank-by-rank pass accumulates.
struct Acc {
    threshold: f64,
    keep_operations: bool,
    funcs: FxHashMap<u32, FuncAcc>,
    instances: BTreeMap<i32, InstAcc>,
    operations: Vec<CompactOp>,
    slow: Vec<SlowOp>,
    pending: Vec<Pending>,
    top: Totals,
    beneath: u64,
    observed: (u64, u64),
    simulated: (u64, u64),
}

fn count(ops: &[Op]) -> (u64, u64) {
    let top = ops.iter().filter(|o| o.is_top()).count() as u64;
    (top, ops.len() as u64 - top)
}

impl Acc {
    fn new(opts: &Options) -> Self {
        Acc {
            threshold: opts.threshold,
            keep_operations: opts.operations,
            funcs: FxHashMap::default(),
            instances: BTreeMap::new(),
            operations: Vec::new(),
            slow: Vec::new(),
            pending: Vec::new(),
            top: Totals::default(),
            beneath: 0,
            observed: (0, 0),
            simulated: (0, 0),
        }
    }

    /// One rank's calls on both sides (either may be empty).
    fn rank(&mut self, r: u32, obs: &[Op], sim: &[Op], names: &Names) {
        let (a, b) = count(obs);
        self.observed = (self.observed.0 + a, self.observed.1 + b);
        let (a, b) = count(sim);
        self.simulated = (self.simulated.0 + a, self.simulated.1 + b);
        let m = matching::match_rank(obs, sim);
        for (i, o) in obs.iter().enumerate() {
            let f = self.funcs.entry(o.func()).or_default();
            if o.is_top() && o.instance >= 0 {
                let a = self.instances.entry(o.instance).or_default();
                a.func = o.func();
                a.observed_ns = a.observed_ns.max(o.dur);
            }
            let j = m.sim_of[i];
            if j == NONE {
                f.unmatched_observed += 1;
                if f.examples_observed.len() < EXAMPLES {
                    f.examples_observed.push((r, o.id));
                }
                continue;
            }
            let s = &sim[j as usize];
            f.matched += 1;
            f.observed_ns += o.dur;
            f.expected_ns += s.dur;
            if let Some(x) = ratio(o.dur, s.dur) {
                f.ratios.push(x);
            }
            let slower = is_slower(o.dur, s.dur, self.threshold);
            f.slower += slower as u64;
            let row = CompactOp {
                rank: r,
                func: o.func(),
                top: o.is_top(),
                instance: o.instance,
                observed_id: o.id,
                simulated_id: s.id,
                start: o.start,
                observed: o.dur,
                expected: s.dur,
            };
            if self.keep_operations {
                self.operations.push(row);
            }
            if !o.is_top() {
                self.beneath += 1;
                continue;
            }
            self.top.matched += 1;
            self.top.observed_ns += o.dur;
            self.top.expected_ns += s.dur;
            if o.instance >= 0 {
                if let Some(a) = self.instances.get_mut(&o.instance) {
                    a.ranks += 1;
                    a.expected_ns = a.expected_ns.max(s.dur);
                }
            }
            if slower {
                self.slow.push(SlowOp {
                    op: OpRow {
                        rank: r,
                        func: names.name(o.func()).to_string(),
                        top_level: true,
                        observed_id: o.id,
                        simulated_id: s.id,
                        instance: (o.instance >= 0).then_some(o.instance),
                        start_ns: o.start,
                        observed_ns: o.dur,
                        expected_ns: s.dur,
                        ratio: ratio(o.dur, s.dur),
                    },
                    lost_ns: o.dur - s.dur,
                    model: Breakdown::default(),
                    observed: attribution::observed(obs, names, i),
                });
                self.pending
                    .push(attribution::pending(sim, names, r, j as usize));
            }
        }
        for (j, s) in sim.iter().enumerate() {
            if !m.matched_sim[j] {
                let f = self.funcs.entry(s.func()).or_default();
                f.unmatched_simulated += 1;
                if f.examples_simulated.len() < EXAMPLES {
                    f.examples_simulated.push((r, s.id));
                }
            }
        }
    }

    /// The comparison (sides without paths yet) and the pending splits in `slow` order.
    fn finish(mut self, names: &Names) -> (Comparison, Vec<Pending>) {
        let threshold = self.threshold;
        let mut unmatched = Vec::new();
        let mut functions = Vec::new();
        for (&func, f) in self.funcs.iter_mut() {
            let name = names.name(func).to_string();
            for (side, count, examples) in [
                ("observed", f.unmatched_observed, &f.examples_observed),
                ("simulated", f.unmatched_simulated, &f.examples_simulated),
            ] {
                if count > 0 {
                    unmatched.push(Unmatched {
                        side,
                        func: name.clone(),
                        count,
                        examples: examples.clone(),
                    });
                }
            }
            functions.push(FunctionRow {
                func: name,
                layer: names.layer(func),
                totals: totals(f.matched, f.observed_ns, f.expected_ns),
                median_ratio: median(&mut f.ratios),
                slower: f.slower,
                unmatched_observed: f.unmatched_observed,
                unmatched_simulated: f.unmatched_simulated,
            });
        }
        functions.sort_by(|a, b| (a.layer, &a.func).cmp(&(b.layer, &b.func)));
        unmatched.sort_by(|a, b| {
            (a.side, std::cmp::Reverse(a.count), &a.func).cmp(&(
                b.side,
                std::cmp::Reverse(b.count),
                &b.func,
            ))
        });

        let instances: Vec<InstanceRow> = self
            .instances
            .into_iter()
            .filter(|(_, a)| a.ranks > 0)
            .map(|(instance, a)| InstanceRow {
                instance,
                func: names.name(a.func).to_string(),
                ranks: a.ranks,
                observed_ns: a.observed_ns,
                expected_ns: a.expected_ns,
                ratio: ratio(a.observed_ns, a.expected_ns),
            })
            .collect();
        type PerFunc = (Totals, Vec<f64>, u64, Option<(i64, i32)>);
        let mut per_func: BTreeMap<&str, PerFunc> = BTreeMap::new();
        for row in &instances {
            let e = per_func
                .entry(row.func.as_str())
                .or_insert_with(|| (Totals::default(), Vec::new(), 0, None));
            e.0.matched += 1;
            e.0.observed_ns += row.observed_ns;
            e.0.expected_ns += row.expected_ns;
            if let Some(x) = row.ratio {
                e.1.push(x);
            }
            e.2 += is_slower(row.observed_ns, row.expected_ns, threshold) as u64;
            let lost = row.observed_ns - row.expected_ns;
            if e.3.is_none_or(|w| lost > w.0) {
                e.3 = Some((lost, row.instance));
            }
        }
        let collectives = per_func
            .into_iter()
            .map(|(func, (t, mut ratios, slower, worst))| InstanceSummary {
                func: func.to_string(),
                totals: totals(t.matched, t.observed_ns, t.expected_ns),
                median_ratio: median(&mut ratios),
                slower,
                worst: worst.map(|w| w.1),
            })
            .collect();

        // Most time lost first; the pending splits follow the same order.
        let mut order: Vec<usize> = (0..self.slow.len()).collect();
        order.sort_by(|&a, &b| {
            let (x, y) = (&self.slow[a], &self.slow[b]);
            y.lost_ns
                .cmp(&x.lost_ns)
                .then(x.op.rank.cmp(&y.op.rank))
                .then(x.op.observed_id.cmp(&y.op.observed_id))
        });
        let mut slow_in: Vec<Option<SlowOp>> = self.slow.into_iter().map(Some).collect();
        let mut pending_in: Vec<Option<Pending>> = self.pending.into_iter().map(Some).collect();
        let mut slow = Vec::with_capacity(order.len());
        let mut pending = Vec::with_capacity(order.len());
        for k in order {
            if let (Some(s), Some(p)) = (slow_in[k].take(), pending_in[k].take()) {
                slow.push(s);
                pending.push(p);
            }
        }
        let slow_lost_ns = slow.iter().map(|s| s.lost_ns.max(0)).sum();
        let mut top = self.top;
        top.ratio = ratio(top.observed_ns, top.expected_ns);
        let counts = |c: (u64, u64)| Side {
            path: String::new(),
            ranks: 0,
            job_duration_ns: 0,
            top_level: c.0,
            children: c.1,
        };
        let operations = Operations {
            names: if self.operations.is_empty() {
                Vec::new()
            } else {
                (0..names.len())
                    .map(|i| names.name(i as u32).to_string())
                    .collect()
            },
            rows: self.operations,
        };
        let c = Comparison {
            observed: counts(self.observed),
            simulated: counts(self.simulated),
            matched_by: MatchedBy::Order,
            threshold,
            top_level: top,
            functions,
            collectives,
            instances,
            unmatched,
            slow,
            slow_lost_ns,
            matched_beneath: self.beneath,
            operations,
            servers: None,
        };
        (c, pending)
    }
}

#[cfg(test)]
mod tests;
