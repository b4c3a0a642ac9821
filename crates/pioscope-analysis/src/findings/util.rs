//! What the rules share: where a record sits (top-level request or beneath an MPI-IO call),
//! per-call accumulators, severity from cost, and evidence helpers.
//!
//! Where a record sits comes from `crate::nesting`, as for every analysis: per thread, only
//! the top-level I/O call that encloses the current record is kept, so the state is bounded by
//! the number of threads, never by the trace.

use std::collections::BTreeMap;

use pioscope_trace::functions::{by_name, bytes_moved};
use pioscope_trace::store::Event;
use pioscope_trace::{FuncInfo, Layer, OpKind};
use rustc_hash::FxHashMap;
use serde_json::Value;

use super::config::Config;
use super::library::{Beneath, LibraryCall};
use super::{Evidence, Finding, Severity};
use crate::class::{self, is_io_layer, IoClass};
use crate::hints;
use crate::nesting::{Frame, Nesting};
use crate::pass::Context;
use crate::stats::PerFunc;

/// The enclosing top-level MPI-IO call of a record, in short.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Parent {
    /// Its id.
    pub id: i64,
    /// Its start, ns.
    pub start: i64,
    /// Read, write or other.
    pub kind: OpKind,
    /// Its `crate::class` bits.
    pub class: u16,
    /// Its file.
    pub file: Option<i32>,
    /// Its function id.
    pub func: u16,
    /// Its collective flag.
    pub collective: bool,
}

/// What the rules want to know about one record, computed once for all of them (small, so
/// that every rule can copy it).
#[derive(Clone, Copy, Debug)]
pub struct Facts {
    /// The function (None for an id this reader does not know).
    pub func: Option<&'static FuncInfo>,
    /// Read, write or other.
    pub kind: OpKind,
    /// `crate::class` bits.
    pub class: u16,
    /// An I/O record no other I/O record encloses: a request of the application itself.
    pub top_level: bool,
    /// The record itself, when it is a top-level MPI-IO call.
    pub call: Option<Call>,
    /// The enclosing top-level MPI-IO call, for records inside one.
    pub parent: Option<Parent>,
    /// The record is ranks waiting for each other inside `parent`, a call that moves no data
    /// (`crate::class::is_wait`): its time is not the parent's open, close or sync cost.
    pub wait: bool,
    /// The HDF5 or PnetCDF call enclosing the record (None for such a call itself and for
    /// records outside one): the library rules' view of the nesting.
    pub library: Option<LibraryCall>,
}

impl Facts {
    /// The function's id (0 if unknown).
    pub(crate) fn id(&self) -> u16 {
        self.func.map(|f| f.id).unwrap_or(0)
    }
    /// Reads or writes file data.
    pub(crate) fn data(&self) -> bool {
        matches!(self.kind, OpKind::Read | OpKind::Write)
    }
    /// Has every bit of `c`.
    pub(crate) fn is(&self, c: u16) -> bool {
        self.class & c == c
    }
}

impl Facts {
    /// No facts: those of a record the rules do not place (a storage server's).
    pub(crate) const NONE: Facts = Facts {
        func: None,
        kind: OpKind::Other,
        class: 0,
        top_level: false,
        call: None,
        parent: None,
        wait: false,
        library: None,
    };
}

/// What the facts of each record come from, for every rule of one pass: the nesting and the
/// functions' classes. One lookup of the function and one nesting step per record, however
/// many rules ask.
#[derive(Debug)]
pub(crate) struct SharedState {
    facts: Facts,
    /// Per thread the top-level I/O call enclosing the record (with its `Call` when it is
    /// MPI-IO). Only top-level calls are pushed, so a stack holds one frame at the most.
    nest: Nesting<Option<Call>>,
    /// The function, its `crate::class` bits and kind, per function name.
    funcs: PerFunc<(Option<&'static FuncInfo>, u16, OpKind)>,
    /// Per thread the HDF5 or PnetCDF call enclosing the record.
    library: Beneath,
}

impl Default for SharedState {
    fn default() -> Self {
        SharedState {
            facts: Facts::NONE,
            nest: Nesting::new(),
            library: Beneath::default(),
            funcs: PerFunc::new(|_, name| match by_name(name) {
                Some(f) => (Some(f), class::bits(f), f.kind()),
                None => (None, 0, OpKind::Other),
            }),
        }
    }
}

impl SharedState {
    /// Works out the facts of `e`, the next record in store order, and returns them.
    pub(crate) fn enter(&mut self, e: &Event<'_>) -> &Facts {
        let (func, class, kind) = self.funcs.get(e);
        let stack = self.nest.enter(e, |_| {});
        let mpiio = stack.first().and_then(|f| f.data.map(|c| (f.depth, c)));
        let wait = mpiio.is_some_and(|(depth, c)| {
            let c_class = if c.data() {
                IoClass::Data
            } else {
                IoClass::Metadata
            };
            class::is_wait(e.layer, e.depth, Layer::MpiIo, depth, c_class)
        });
        let top_level = is_io_layer(e.layer) && stack.is_empty();
        let this = if top_level {
            let c = (e.layer == Layer::MpiIo).then(|| Call::of(e, func, kind, class));
            stack.push(Frame::of(e, c));
            c
        } else {
            None
        };
        self.facts = Facts {
            func,
            kind,
            class,
            top_level,
            call: this,
            parent: mpiio.map(|(_, c)| Parent {
                id: c.id,
                start: c.start,
                kind: c.kind,
                class: c.class,
                file: c.file,
                func: c.func_id,
                collective: c.collective,
            }),
            wait,
            library: self.library.enter(e),
        };
        &self.facts
    }
}

/// Bytes a data record moved.
pub(crate) fn moved(e: &Event<'_>) -> u64 {
    bytes_moved(e.size.max(0) as u64, e.result, e.error)
}

/// Data requests summed: how many, the bytes they moved, their time.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Requests {
    /// Requests.
    pub count: u64,
    /// Bytes moved.
    pub bytes: u64,
    /// Time, ns.
    pub ns: i64,
}

impl Requests {
    /// Adds data record `e`.
    pub(crate) fn add(&mut self, e: &Event<'_>) {
        self.count += 1;
        self.bytes += moved(e);
        self.ns += e.duration_ns;
    }

    /// Adds another sum.
    pub(crate) fn merge(&mut self, o: &Requests) {
        self.count += o.count;
        self.bytes += o.bytes;
        self.ns += o.ns;
    }
}

/// An I/O call remembered as the enclosing call of the records that follow it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Call {
    /// Its id.
    pub id: i64,
    /// Its rank.
    pub rank: i32,
    /// Start, ns.
    pub start: i64,
    /// End, ns.
    pub end: i64,
    /// Function name (static: from functions.def, or "?" for an unknown id).
    pub func: &'static str,
    /// Read, write or other.
    pub kind: OpKind,
    /// Collective flag.
    pub collective: bool,
    /// Collective instance.
    pub instance: Option<i32>,
    /// File.
    pub file: Option<i32>,
    /// Bytes requested.
    pub size: i64,
    /// Its `crate::class` bits.
    pub class: u16,
    /// Its function id (0 if unknown).
    pub func_id: u16,
}

impl Call {
    fn of(e: &Event<'_>, func: Option<&'static FuncInfo>, kind: OpKind, class: u16) -> Call {
        Call {
            id: e.id,
            rank: e.rank,
            start: e.start_ns,
            end: e.end_ns(),
            func: func.map_or("?", |f| f.name),
            kind,
            collective: e.collective,
            instance: e.instance,
            file: e.file_id,
            size: e.size,
            class,
            func_id: func.map_or(0, |f| f.id),
        }
    }

    /// Reads or writes file data.
    pub(crate) fn data(&self) -> bool {
        matches!(self.kind, OpKind::Read | OpKind::Write)
    }

    /// Its collective instance, or a key of its own when it has none.
    pub(crate) fn instance_key(&self) -> i64 {
        self.instance.map(i64::from).unwrap_or(-self.id - 1)
    }

    /// "MPI_File_write_all #12" (the collective instance) or "MPI_File_write".
    pub(crate) fn name(&self) -> String {
        match self.instance {
            Some(i) => format!("{} #{i}", self.func),
            None => self.func.to_string(),
        }
    }
}

/// The name of a function id ("?" if unknown).
pub(crate) fn func_name(id: u16) -> &'static str {
    pioscope_trace::functions::by_id(id)
        .map(|f| f.name)
        .unwrap_or("?")
}

/// The layer of a function id.
pub(crate) fn func_layer(id: u16) -> Layer {
    pioscope_trace::functions::by_id(id)
        .map(|f| f.layer)
        .unwrap_or(Layer::from_id_range(id))
}

/// The thread of a record: (process, thread).
fn thread(e: &Event<'_>) -> (i32, i32) {
    (e.process, e.thread)
}

/// One accumulator per open top-level MPI-IO call and thread: the children of a call arrive
/// right after it, so a call is complete when its thread's next top-level call starts.
#[derive(Debug)]
pub(crate) struct PerCall<A> {
    index: FxHashMap<(i32, i32), usize>,
    open: Vec<Option<(Call, A)>>,
    last: Option<((i32, i32), usize)>,
}

impl<A> Default for PerCall<A> {
    fn default() -> Self {
        PerCall {
            index: FxHashMap::default(),
            open: Vec::new(),
            last: None,
        }
    }
}

impl<A: Default> PerCall<A> {
    fn slot(&mut self, key: (i32, i32)) -> &mut Option<(Call, A)> {
        let i = match self.last {
            Some((k, i)) if k == key => i,
            _ => {
                let n = self.open.len();
                let i = *self.index.entry(key).or_insert(n);
                if i == n {
                    self.open.push(None);
                }
                self.last = Some((key, i));
                i
            }
        };
        &mut self.open[i]
    }

    /// At the top-level MPI-IO call `c` of `e`'s thread: opens an accumulator for it when it
    /// is `tracked`, else only closes the open one. Returns the call this completes.
    pub(crate) fn next(&mut self, e: &Event<'_>, c: Call, tracked: bool) -> Option<(Call, A)> {
        let slot = self.slot(thread(e));
        if tracked {
            slot.replace((c, A::default()))
        } else {
            slot.take()
        }
    }

    /// The accumulator of the open call `parent` on `e`'s thread.
    pub(crate) fn child(&mut self, e: &Event<'_>, parent: i64) -> Option<&mut A> {
        match self.slot(thread(e)) {
            Some((c, a)) if c.id == parent => Some(a),
            _ => None,
        }
    }

    /// Every call still open (at the end of the pass).
    pub(crate) fn drain(&mut self) -> Vec<(Call, A)> {
        let mut v: Vec<(Call, A)> = self.open.iter_mut().filter_map(Option::take).collect();
        v.sort_by_key(|(c, _)| c.id);
        v
    }
}

/// Severity thresholds and the evidence length (section `general`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct General {
    pub high_share: f64,
    pub medium_share: f64,
    pub worst: usize,
}

impl General {
    pub(crate) fn new(config: &Config) -> General {
        let s = config.section("general");
        General {
            high_share: s.f64("high_share"),
            medium_share: s.f64("medium_share"),
            worst: s.u64("worst") as usize,
        }
    }

    /// The finding of rule `id` costing `cost_ns`, its severity from that cost.
    pub(crate) fn finding(
        &self,
        ctx: &Context<'_>,
        id: &str,
        cost_ns: i64,
        title: String,
        evidence: Evidence,
        remedy: String,
    ) -> Finding {
        Finding {
            id: id.into(),
            severity: self.severity(cost_ns, ctx),
            title,
            evidence,
            cost_ns,
            remedy,
        }
    }

    /// Severity of a cost: its share of the job's elapsed time.
    pub(crate) fn severity(&self, cost_ns: i64, ctx: &Context<'_>) -> Severity {
        let share = cost_ns as f64 / job_ns(ctx) as f64;
        if share >= self.high_share {
            Severity::High
        } else if share >= self.medium_share {
            Severity::Medium
        } else {
            Severity::Low
        }
    }
}

/// The job's elapsed time (at least 1 ns).
pub(crate) fn job_ns(ctx: &Context<'_>) -> i64 {
    ctx.trace.meta.job.duration_ns.max(1)
}

/// Ranks of the job (processes when it has no MPI; at least 1): the divisor that turns time
/// summed over ranks into elapsed time.
pub(crate) fn rank_count(ctx: &Context<'_>) -> u64 {
    let m = &ctx.trace.meta;
    if m.job.ranks > 0 {
        m.job.ranks as u64
    } else {
        (m.processes.len() as u64).max(1)
    }
}

/// The host of a rank ("" if unknown).
pub(crate) fn host_of<'c>(ctx: &'c Context<'_>, rank: i32) -> &'c str {
    let m = &ctx.trace.meta;
    usize::try_from(rank)
        .ok()
        .and_then(|r| m.job.hosts.get(r))
        .map(String::as_str)
        .filter(|h| !h.is_empty())
        .or_else(|| {
            m.processes
                .iter()
                .find(|p| p.rank == rank)
                .map(|p| p.host.as_str())
        })
        .unwrap_or("")
}

/// "rank 3 (host n1)" or "rank 3".
pub(crate) fn rank_name(ctx: &Context<'_>, rank: i32) -> String {
    match host_of(ctx, rank) {
        "" => format!("rank {rank}"),
        h => format!("rank {rank} ({h})"),
    }
}

/// A file's path, or `file <id>`.
pub(crate) fn file_name(ctx: &Context<'_>, file: i32) -> String {
    ctx.trace
        .file_path(file)
        .map(str::to_string)
        .unwrap_or_else(|| format!("file {file}"))
}

/// The file system of a file ("unknown" if not known).
pub(crate) fn fs_of<'c>(ctx: &'c Context<'_>, file: i32) -> &'c str {
    ctx.trace
        .files
        .iter()
        .find(|f| f.file_id == file)
        .map(|f| f.fs_type.as_str())
        .unwrap_or("unknown")
}

/// The stripe of `file` and where it comes from: the `striping_unit` hint when the run set
/// one, else `parallel_fs_bytes` on a parallel file system; None on any other file system.
pub(crate) fn stripe_of(
    ctx: &Context<'_>,
    file: i32,
    parallel_fs_bytes: u64,
) -> Option<(u64, &'static str)> {
    let hint = ctx
        .hints
        .any(file, hints::STRIPING_UNIT)
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|u| *u > 0);
    match hint {
        Some(u) => Some((u, "striping_unit hint")),
        None => match fs_of(ctx, file) {
            "lustre" | "gpfs" | "beegfs" | "cephfs" => {
                Some((parallel_fs_bytes, "parallel file system"))
            }
            _ => None,
        },
    }
}

/// a / b, 0 when b is 0.
pub(crate) fn ratio(a: f64, b: f64) -> f64 {
    if b == 0.0 {
        0.0
    } else {
        a / b
    }
}

/// Evidence numbers under construction.
#[derive(Debug, Default)]
pub(crate) struct Numbers(pub BTreeMap<String, Value>);

impl Numbers {
    /// An integer.
    pub(crate) fn int(&mut self, k: &str, v: impl Into<i64>) -> &mut Self {
        self.0.insert(k.to_string(), Value::from(v.into()));
        self
    }

    /// A float, rounded to 4 decimals so JSON stays stable and readable.
    pub(crate) fn float(&mut self, k: &str, v: f64) -> &mut Self {
        let r = (v * 1e4).round() / 1e4;
        self.0.insert(k.to_string(), Value::from(r));
        self
    }

    /// A string.
    pub(crate) fn text(&mut self, k: &str, v: &str) -> &mut Self {
        self.0.insert(k.to_string(), Value::from(v));
        self
    }
}

/// The `n` largest entries by `key` (ties by the entry's order), largest first.
pub(crate) fn top<T, K: PartialOrd + Copy>(
    mut v: Vec<T>,
    n: usize,
    key: impl Fn(&T) -> K,
) -> Vec<T> {
    v.sort_by(|a, b| {
        key(b)
            .partial_cmp(&key(a))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    v.truncate(n);
    v
}

/// The rank-summed time `ns` spread over the job's ranks: elapsed time if the saving were
/// shared evenly.
pub(crate) fn per_rank(ns: f64, ctx: &Context<'_>) -> i64 {
    (ns / rank_count(ctx) as f64).round() as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn top_is_largest_first() {
        assert_eq!(top(vec![3, 9, 1, 5], 2, |x| *x), vec![9, 5]);
    }
}
