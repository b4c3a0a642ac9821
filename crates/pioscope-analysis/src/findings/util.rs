//! What the rules share: where a record sits (top-level request or beneath an MPI-IO call),
//! per-call accumulators, the hints in force, severity from cost, and evidence formatting.
//!
//! Nesting is decided per thread from the store order (a parent before its children, one
//! thread's records in time order): a record is beneath the last top-level I/O call of its
//! thread when `parent` names it or, when the parent was not recorded, when it is deeper and
//! starts inside it. Only the last top-level call per thread is kept, so the state is bounded by
//! the number of threads, never by the trace.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;
use std::sync::OnceLock;

use pioscope_trace::functions::{all, by_name, bytes_moved, is_mpi_collective, is_point_to_point};
use pioscope_trace::store::{Event, SettingRow};
use pioscope_trace::{FuncInfo, Layer, OpKind};
use serde_json::Value;

use super::config::Config;
use super::Severity;
use crate::pass::Context;

/// True for the layers whose records are file I/O.
pub(crate) fn is_io_layer(layer: Layer) -> bool {
    matches!(layer, Layer::Posix | Layer::Stdio | Layer::MpiIo)
}

/// Classes of functions, one bit each, computed once per function id (`class`).
pub(crate) mod class {
    /// Namespace and attribute calls: open, close, stat, create, unlink, mkdir, ...
    pub const METADATA: u16 = 1;
    /// close, fclose, MPI_File_close.
    pub const CLOSE: u16 = 1 << 1;
    /// fsync, fdatasync, fflush, MPI_File_sync.
    pub const SYNC: u16 = 1 << 2;
    /// The stat family.
    pub const STAT: u16 = 1 << 3;
    /// Calls that open or create a file.
    pub const OPEN: u16 = 1 << 4;
    /// MPI point-to-point calls that send.
    pub const SEND: u16 = 1 << 5;
    /// MPI collective communication.
    pub const MPI_COLLECTIVE: u16 = 1 << 6;
    /// MPI point-to-point.
    pub const P2P: u16 = 1 << 7;
}

fn is_stat(name: &str) -> bool {
    let f = name.trim_start_matches('_');
    ["stat", "lstat", "fstat", "xstat", "lxstat", "fxstat"]
        .iter()
        .any(|p| f.starts_with(p))
}

fn classes_of(f: &FuncInfo) -> u16 {
    let n = f.name;
    let mut c = 0;
    let open = matches!(
        n,
        "open"
            | "open64"
            | "openat"
            | "openat64"
            | "creat"
            | "creat64"
            | "fopen"
            | "fopen64"
            | "fdopen"
            | "MPI_File_open"
    );
    let close = matches!(n, "close" | "fclose" | "MPI_File_close");
    let stat = f.layer == Layer::Posix && is_stat(n);
    if open {
        c |= class::OPEN;
    }
    if close {
        c |= class::CLOSE;
    }
    if stat {
        c |= class::STAT;
    }
    if open
        || close
        || stat
        || matches!(
            n,
            "unlink"
                | "mkdir"
                | "rmdir"
                | "rename"
                | "ftruncate"
                | "ftruncate64"
                | "MPI_File_delete"
                | "MPI_File_set_size"
                | "MPI_File_preallocate"
        )
    {
        c |= class::METADATA;
    }
    if matches!(n, "fsync" | "fdatasync" | "fflush" | "MPI_File_sync") {
        c |= class::SYNC;
    }
    if f.layer == Layer::Mpi && is_point_to_point(n) {
        c |= class::P2P;
        if matches!(
            n,
            "MPI_Send"
                | "MPI_Ssend"
                | "MPI_Bsend"
                | "MPI_Rsend"
                | "MPI_Isend"
                | "MPI_Issend"
                | "MPI_Sendrecv"
        ) {
            c |= class::SEND;
        }
    }
    if f.layer == Layer::Mpi && is_mpi_collective(n) {
        c |= class::MPI_COLLECTIVE;
    }
    c
}

/// (classes, kind) per function id.
fn table() -> &'static Vec<(u16, OpKind)> {
    static T: OnceLock<Vec<(u16, OpKind)>> = OnceLock::new();
    T.get_or_init(|| {
        let max = all().iter().map(|f| f.id as usize).max().unwrap_or(0);
        let mut t = vec![(0, OpKind::Other); max + 1];
        for f in all() {
            t[f.id as usize] = (classes_of(f), f.kind());
        }
        t
    })
}

/// The enclosing top-level MPI-IO call of a record, in short.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Parent {
    /// Its id.
    pub id: i64,
    /// Its start, ns.
    pub start: i64,
    /// Read, write or other.
    pub kind: OpKind,
    /// A collective call.
    pub collective: bool,
}

/// What the rules want to know about one record, computed once for all of them (small, so
/// that every rule can copy it).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Facts {
    /// The function (None for an id this reader does not know).
    pub func: Option<&'static FuncInfo>,
    /// Read, write or other.
    pub kind: OpKind,
    /// `class::*` bits.
    pub class: u16,
    /// An I/O record no other I/O record encloses: a request of the application itself.
    pub top_level: bool,
    /// The record is itself a top-level MPI-IO call (`call()` gives it).
    pub call: bool,
    /// The enclosing top-level MPI-IO call, for records inside one.
    pub parent: Option<Parent>,
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

/// The state every rule of one pass shares: the facts of the current record and the nesting
/// that produces them. One lookup of the function and one nesting step per record, however
/// many rules ask.
#[derive(Debug)]
pub(crate) struct SharedState {
    last: i64,
    facts: Facts,
    this: Option<Call>,
    nest: Nesting,
    cache: [Option<&'static FuncInfo>; 64],
    settings: Option<Rc<Settings>>,
}

/// A handle on the shared state (one per `rules()` call; the rules run on one thread).
pub(crate) type Shared = Rc<RefCell<SharedState>>;

/// A fresh shared state.
pub(crate) fn shared() -> Shared {
    Rc::new(RefCell::new(SharedState {
        last: i64::MIN,
        facts: Facts {
            func: None,
            kind: OpKind::Other,
            class: 0,
            top_level: false,
            call: false,
            parent: None,
        },
        this: None,
        nest: Nesting::default(),
        cache: [None; 64],
        settings: None,
    }))
}

impl SharedState {
    fn func(&mut self, name: &str) -> Option<&'static FuncInfo> {
        // The store's dictionary hands out the same string for the same function, so its
        // address (checked against the name) finds it without hashing the text.
        let slot = ((name.as_ptr() as usize >> 3) ^ name.len()) & 63;
        if let Some(f) = self.cache[slot] {
            if f.name == name {
                return Some(f);
            }
        }
        let f = by_name(name);
        if f.is_some() {
            self.cache[slot] = f;
        }
        f
    }

    fn update(&mut self, e: &Event<'_>) {
        let func = self.func(e.func);
        let (class, kind) = func
            .and_then(|f| table().get(f.id as usize).copied())
            .unwrap_or((0, OpKind::Other));
        let place = self
            .nest
            .enter(e, func.map(|f| f.name).unwrap_or("?"), kind);
        self.facts = Facts {
            func,
            kind,
            class,
            top_level: place.top_level,
            call: place.this.is_some(),
            parent: place.mpiio.map(|c| Parent {
                id: c.id,
                start: c.start,
                kind: c.kind,
                collective: c.collective,
            }),
        };
        self.this = place.this;
        self.last = e.id;
    }
}

/// The facts of `e` (computed by the first rule that asks).
#[inline]
pub(crate) fn facts(s: &Shared, e: &Event<'_>) -> Facts {
    {
        let b = s.borrow();
        if b.last == e.id {
            return b.facts;
        }
    }
    let mut b = s.borrow_mut();
    b.update(e);
    b.facts
}

/// The hints and views of the trace, indexed once for all rules.
pub(crate) fn settings(s: &Shared, ctx: &Context<'_>) -> Rc<Settings> {
    s.borrow_mut()
        .settings
        .get_or_insert_with(|| Rc::new(Settings::new(&ctx.settings)))
        .clone()
}

/// The current record as a call, when it is a top-level MPI-IO call.
pub(crate) fn call(s: &Shared) -> Option<Call> {
    s.borrow().this
}

/// A map with the entry of the current key held aside: consecutive records mostly share
/// their rank and file, so most records touch no tree at all.
#[derive(Debug)]
pub(crate) struct Keyed<K, A> {
    map: BTreeMap<K, A>,
    cur: Option<(K, A)>,
}

impl<K, A> Default for Keyed<K, A> {
    fn default() -> Self {
        Keyed {
            map: BTreeMap::new(),
            cur: None,
        }
    }
}

impl<K: Ord + Copy, A: Default> Keyed<K, A> {
    /// The entry of `k`.
    pub(crate) fn at(&mut self, k: K) -> &mut A {
        if matches!(&self.cur, Some((c, _)) if *c != k) {
            if let Some((c, a)) = self.cur.take() {
                self.map.insert(c, a);
            }
        }
        if self.cur.is_none() {
            let a = self.map.remove(&k).unwrap_or_default();
            self.cur = Some((k, a));
        }
        &mut self.cur.get_or_insert_with(|| (k, A::default())).1
    }

    /// Every entry, in key order.
    pub(crate) fn entries(&self) -> Vec<(K, &A)> {
        let mut v: Vec<(K, &A)> = self.map.iter().map(|(k, a)| (*k, a)).collect();
        if let Some((k, a)) = &self.cur {
            let i = v.partition_point(|(x, _)| x < k);
            v.insert(i, (*k, a));
        }
        v
    }

    /// Entries summed by a coarser key.
    pub(crate) fn group<G: Ord, S: Default>(
        &self,
        key: impl Fn(&K) -> G,
        add: impl Fn(&mut S, &A),
    ) -> BTreeMap<G, S> {
        let mut m: BTreeMap<G, S> = BTreeMap::new();
        for (k, a) in self.entries() {
            add(m.entry(key(&k)).or_default(), a);
        }
        m
    }
}

/// Bytes a data record moved.
pub(crate) fn moved(e: &Event<'_>) -> u64 {
    bytes_moved(e.size.max(0) as u64, e.result, e.error)
}

/// An I/O call remembered as the enclosing call of the records that follow it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Call {
    /// Its id.
    pub id: i64,
    /// Its rank.
    pub rank: i32,
    /// Start, ns.
    pub start: i64,
    /// End, ns.
    pub end: i64,
    /// Depth.
    pub depth: u8,
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
    /// Offset.
    pub offset: Option<i64>,
    /// Bytes requested.
    pub size: i64,
}

impl Call {
    fn of(e: &Event<'_>, func: &'static str, kind: OpKind) -> Call {
        Call {
            id: e.id,
            rank: e.rank,
            start: e.start_ns,
            end: e.end_ns(),
            depth: e.depth,
            func,
            kind,
            collective: e.collective,
            instance: e.instance,
            file: e.file_id,
            offset: e.offset,
            size: e.size,
        }
    }

    /// Whether `e` lies inside this call (same thread assumed).
    fn encloses(&self, e: &Event<'_>) -> bool {
        e.parent == Some(self.id)
            || (e.depth > self.depth && e.start_ns >= self.start && e.start_ns < self.end)
    }

    /// "MPI_File_write_all #12" (the collective instance) or "MPI_File_write".
    pub(crate) fn name(&self) -> String {
        match self.instance {
            Some(i) => format!("{} #{i}", self.func),
            None => self.func.to_string(),
        }
    }
}

/// Where a record sits.
#[derive(Clone, Copy, Debug, Default)]
struct Where {
    /// An I/O record no other I/O record encloses: a request of the application itself.
    pub top_level: bool,
    /// The enclosing top-level MPI-IO call, for records inside one.
    pub mpiio: Option<Call>,
    /// This record, when it is itself a top-level MPI-IO call.
    pub this: Option<Call>,
}

#[derive(Clone, Copy, Debug, Default)]
struct Frame {
    id: i64,
    depth: u8,
    start: i64,
    end: i64,
}

#[derive(Clone, Copy, Debug, Default)]
struct Slot {
    io: Option<Frame>,
    mpiio: Option<Call>,
}

/// Tracks, per thread, the last top-level I/O call and the last top-level MPI-IO call.
#[derive(Debug, Default)]
struct Nesting {
    index: HashMap<(i32, i32), usize>,
    slots: Vec<Slot>,
    last: Option<((i32, i32), usize)>,
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
pub(crate) fn thread(e: &Event<'_>) -> (i32, i32) {
    (e.process, e.thread)
}

impl Nesting {
    fn slot(&mut self, key: (i32, i32)) -> &mut Slot {
        let i = match self.last {
            Some((k, i)) if k == key => i,
            _ => {
                let n = self.slots.len();
                let i = *self.index.entry(key).or_insert(n);
                if i == n {
                    self.slots.push(Slot::default());
                }
                self.last = Some((key, i));
                i
            }
        };
        &mut self.slots[i]
    }

    /// Places `e` (call once per record, in store order).
    fn enter(&mut self, e: &Event<'_>, func: &'static str, kind: OpKind) -> Where {
        let slot = self.slot(thread(e));
        let mpiio = slot.mpiio.filter(|c| c.encloses(e));
        if !is_io_layer(e.layer) {
            return Where {
                top_level: false,
                mpiio,
                this: None,
            };
        }
        let inside = slot.io.is_some_and(|f| {
            e.parent == Some(f.id)
                || (e.depth > f.depth && e.start_ns >= f.start && e.start_ns < f.end)
        });
        if inside {
            return Where {
                top_level: false,
                mpiio,
                this: None,
            };
        }
        slot.io = Some(Frame {
            id: e.id,
            depth: e.depth,
            start: e.start_ns,
            end: e.end_ns(),
        });
        let this = if e.layer == Layer::MpiIo {
            let c = Call::of(e, func, kind);
            slot.mpiio = Some(c);
            Some(c)
        } else {
            None
        };
        Where {
            top_level: true,
            mpiio: None,
            this,
        }
    }
}

/// One accumulator per open top-level MPI-IO call and thread: the children of a call arrive
/// right after it, so a call is complete when its thread's next top-level call starts.
#[derive(Debug)]
pub(crate) struct PerCall<A> {
    index: HashMap<(i32, i32), usize>,
    open: Vec<Option<(Call, A)>>,
    last: Option<((i32, i32), usize)>,
}

impl<A> Default for PerCall<A> {
    fn default() -> Self {
        PerCall {
            index: HashMap::new(),
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

    /// Opens `call` on thread `key`; returns the call it replaces.
    pub(crate) fn start(&mut self, key: (i32, i32), call: Call) -> Option<(Call, A)> {
        self.slot(key).replace((call, A::default()))
    }

    /// Closes the open call of thread `key` (a top-level call that is not tracked began).
    pub(crate) fn close(&mut self, key: (i32, i32)) -> Option<(Call, A)> {
        self.slot(key).take()
    }

    /// The accumulator of the open call `parent` on thread `key`.
    pub(crate) fn child(&mut self, key: (i32, i32), parent: i64) -> Option<&mut A> {
        match self.slot(key) {
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

/// The hints and view values in force, per rank and file (settings.parquet rows in time order).
#[derive(Debug, Default)]
pub(crate) struct Settings {
    rows: HashMap<(i32, i32), Vec<SettingAt>>,
}

/// (time, key, value) of one settings row.
type SettingAt = (i64, String, String);

impl Settings {
    /// Indexes `rows`.
    pub(crate) fn new(rows: &[SettingRow]) -> Settings {
        let mut s = Settings::default();
        for r in rows {
            if let Some(f) = r.file_id {
                s.rows.entry((r.rank, f)).or_default().push((
                    r.time_ns,
                    r.key.clone(),
                    r.value.clone(),
                ));
            }
        }
        for v in s.rows.values_mut() {
            v.sort_by_key(|r| r.0);
        }
        s
    }

    /// The value of `key` for `rank` and `file` at time `t` (the latest row at or before it;
    /// the first row when all are later, as hints are set at open just before the data calls).
    pub(crate) fn get(&self, rank: i32, file: i32, key: &str, t: i64) -> Option<&str> {
        let rows = self.rows.get(&(rank, file))?;
        rows.iter()
            .rev()
            .find(|r| r.0 <= t && r.1 == key)
            .or_else(|| rows.iter().find(|r| r.1 == key))
            .map(|r| r.2.as_str())
    }

    /// `get` parsed as an integer.
    pub(crate) fn int(&self, rank: i32, file: i32, key: &str, t: i64) -> Option<i64> {
        self.get(rank, file, key, t)?.trim().parse().ok()
    }

    /// The value of `key` for `file` on any rank (the first rank that has one).
    pub(crate) fn any(&self, file: i32, key: &str) -> Option<&str> {
        let mut ranks: Vec<&(i32, i32)> = self.rows.keys().filter(|k| k.1 == file).collect();
        ranks.sort();
        ranks
            .into_iter()
            .find_map(|k| self.rows[k].iter().rev().find(|r| r.1 == key))
            .map(|r| r.2.as_str())
    }

    /// Whether the view in force is noncontiguous (filetype size below its extent), if known.
    pub(crate) fn noncontiguous_view(&self, rank: i32, file: i32, t: i64) -> Option<bool> {
        let size = self.int(rank, file, "view.filetype_size", t)?;
        let extent = self.int(rank, file, "view.filetype_extent", t)?;
        Some(size < extent)
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

/// Bytes for people: 512 B, 4.0 KiB, 1.5 MiB.
pub(crate) fn bytes(b: u64) -> String {
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if b < 1024 {
        return format!("{b} B");
    }
    let mut v = b as f64 / 1024.0;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    format!("{v:.1} {}", UNITS[u])
}

/// A duration for people: 850 ns, 12.3 us, 4.56 ms, 1.23 s.
pub(crate) fn dur(ns: i64) -> String {
    let a = ns.unsigned_abs() as f64;
    if a < 1e3 {
        format!("{ns} ns")
    } else if a < 1e6 {
        format!("{:.1} us", ns as f64 / 1e3)
    } else if a < 1e9 {
        format!("{:.2} ms", ns as f64 / 1e6)
    } else {
        format!("{:.2} s", ns as f64 / 1e9)
    }
}

/// A share as a percentage: 42 %.
pub(crate) fn pct(share: f64) -> String {
    if share > 0.0 && share < 0.01 {
        format!("{:.1} %", share * 100.0)
    } else {
        format!("{:.0} %", share * 100.0)
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
    fn formatting() {
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(1536), "1.5 KiB");
        assert_eq!(bytes(20 << 20), "20.0 MiB");
        assert_eq!(dur(850), "850 ns");
        assert_eq!(dur(12_300), "12.3 us");
        assert_eq!(dur(4_560_000), "4.56 ms");
        assert_eq!(dur(1_230_000_000), "1.23 s");
        assert_eq!(pct(0.4249), "42 %");
        assert_eq!(top(vec![3, 9, 1, 5], 2, |x| *x), vec![9, 5]);
    }
}
