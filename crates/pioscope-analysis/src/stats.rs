//! Statistics per layer, function, file, rank, host or user phase: operations, bytes, request
//! sizes (with a power-of-two histogram), total and busy time, operations per second,
//! throughput and bytes per operation. These are the columns of the PIOviz tables.
//!
//! Definitions (also in docs/CLI.md):
//! - bytes: what data operations moved (reads and writes at the POSIX, STDIO and MPI-IO
//!   layers, message bytes at the MPI layer): the result when it is a byte count below the
//!   request (a short read), else the requested size; 0 for a failed call. Metadata calls
//!   (open, stat, seek, sync, set_view, barrier, waits, ...) count as operations with 0 bytes;
//! - size min/mean/max and the size histogram: the requested sizes of the group's data
//!   operations; histogram bin `b` holds sizes in [b, 2b) (bin 0 holds size 0);
//! - bytes per operation: bytes / data operations;
//! - total time: the sum of durations; nested calls of one group overlap, so it can exceed
//!   the run time;
//! - busy time: per rank, the length of the union of the group's call intervals; summed over
//!   ranks. Ops/s and throughput divide by it;
//! - each row holds one layer: by file, rank, host and phase are split by layer too, so MPI-IO
//!   bytes and the POSIX bytes beneath them are never added together. Across rows they do both
//!   count: a 1 MiB MPI_File_write_all shows as 1 MiB at mpiio and again at posix;
//! - host: the host of the record's process (meta.json `processes[].host`); phase: the
//!   innermost user region around the record (the `region` column), "(none)" outside regions.
//!
//! The busy-time union relies on the store order (rank, then start time): each group keeps one
//! open interval per rank and closes it when the next call starts after its end.
//!
//! `StatsVisitor` is one visitor of the shared pass (`pass::run`); `compute` runs it alone.

use std::fmt;
use std::str::FromStr;

use crate::lookup::Places;
use crate::pass::{self, Context, PassCounts, Visitor};
use crate::scope::Scope;
use crate::servers::{ServerTable, ServerVisitor};
use pioscope_trace::functions::{self, Layer, OpKind};
use pioscope_trace::store::{Event, StoreError, Trace};
use rustc_hash::FxHashMap;
use serde::Serialize;

/// Group label of records outside any user region (`--by phase`).
pub const NO_PHASE: &str = "(none)";

/// What to group by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum GroupBy {
    /// One row per layer.
    Layer,
    /// One row per function.
    Func,
    /// One row per (file, layer); records without a file are left out.
    File,
    /// One row per (rank, layer).
    Rank,
    /// One row per (host, layer).
    Host,
    /// One row per (innermost user region, layer).
    Phase,
    /// One row per (storage server, layer): the `server` and `disk` events of server and
    /// simulated traces, by the server's name; application events are left out.
    Server,
}

impl GroupBy {
    /// Every grouping, in command-line order.
    pub const ALL: [GroupBy; 7] = [
        GroupBy::Layer,
        GroupBy::Func,
        GroupBy::File,
        GroupBy::Rank,
        GroupBy::Host,
        GroupBy::Phase,
        GroupBy::Server,
    ];

    /// The name used on the command line and in JSON.
    pub fn name(self) -> &'static str {
        match self {
            GroupBy::Layer => "layer",
            GroupBy::Func => "func",
            GroupBy::File => "file",
            GroupBy::Rank => "rank",
            GroupBy::Host => "host",
            GroupBy::Phase => "phase",
            GroupBy::Server => "server",
        }
    }
}

impl fmt::Display for GroupBy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for GroupBy {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        GroupBy::ALL
            .into_iter()
            .find(|g| g.name() == s)
            .ok_or_else(|| {
                format!("unknown grouping {s:?} (expected layer, func, file, rank, host, phase or server)")
            })
    }
}

/// One bin of a size histogram.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct HistBin {
    /// Smallest size of the bin: 0, or a power of two `b` for sizes in [b, 2b).
    pub bin_min: u64,
    /// Data operations whose requested size falls in the bin.
    pub count: u64,
}

/// Power-of-two size histogram with a fixed array of 65 bins (0, then 2^0 .. 2^63).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SizeHistogram {
    bins: [u64; 65],
}

impl Default for SizeHistogram {
    fn default() -> Self {
        SizeHistogram { bins: [0; 65] }
    }
}

impl SizeHistogram {
    /// Index of `size`'s bin: 0 for 0, else 1 + floor(log2(size)).
    pub fn bin_of(size: u64) -> usize {
        (64 - size.leading_zeros()) as usize
    }

    /// Smallest size of bin `i`.
    pub fn bin_min(i: usize) -> u64 {
        if i == 0 {
            0
        } else {
            1u64 << (i - 1)
        }
    }

    /// Counts one size.
    pub fn add(&mut self, size: u64) {
        self.bins[Self::bin_of(size)] += 1;
    }

    /// Adds another histogram.
    pub fn merge(&mut self, other: &SizeHistogram) {
        for (a, b) in self.bins.iter_mut().zip(other.bins.iter()) {
            *a += b;
        }
    }

    /// The non-empty bins, smallest first.
    pub fn bins(&self) -> Vec<HistBin> {
        self.bins
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(i, &count)| HistBin {
                bin_min: Self::bin_min(i),
                count,
            })
            .collect()
    }
}

/// One group's numbers.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StatsRow {
    /// The group: layer name, function name, file path, rank number, host or phase.
    pub group: String,
    /// The layer of the row.
    pub layer: Layer,
    /// Records.
    pub operations: u64,
    /// Records that moved data.
    pub data_operations: u64,
    /// Bytes moved by data operations (see the module docs).
    pub bytes: u64,
    /// Smallest data request.
    pub size_min: Option<u64>,
    /// Mean data request.
    pub size_mean: Option<f64>,
    /// Largest data request.
    pub size_max: Option<u64>,
    /// Requested sizes of the data operations in power-of-two bins (non-empty bins only).
    pub size_histogram: Vec<HistBin>,
    /// bytes / data operations.
    pub bytes_per_op: Option<f64>,
    /// Sum of durations, ns.
    pub total_time_ns: i64,
    /// Union of call intervals per rank, summed over ranks, ns.
    pub busy_time_ns: i64,
    /// operations / busy time.
    pub ops_per_sec: Option<f64>,
    /// bytes / busy time.
    pub bytes_per_sec: Option<f64>,
    /// Records that failed (error != 0).
    pub errors: u64,
}

/// The statistics of a trace.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Stats {
    /// The grouping.
    pub group_by: GroupBy,
    /// What was counted.
    pub scope: Scope,
    /// Records read.
    pub events: u64,
    /// Records read but left out by the scope.
    pub left_out: u64,
    /// Ranks in the job.
    pub ranks: u32,
    /// Processes.
    pub processes: u64,
    /// Job duration, ns.
    pub duration_ns: i64,
    /// The trace is partial.
    pub partial: bool,
    /// Rows, sorted by group then layer.
    pub rows: Vec<StatsRow>,
    /// `--by server`: the server table (PIOviz's columns per server) and what the client
    /// calls became on the servers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub servers: Option<ServerTable>,
}

/// Strings seen during a pass, each stored once; groups refer to them by number, so a visit
/// never allocates once a name is known.
///
/// Names come from dictionary-encoded columns: within a row group every occurrence of a
/// value is the same slice, so a small cache keyed by the slice's address (checked against
/// the stored text, as a later batch may reuse the address for another value) answers most
/// lookups without hashing.
#[derive(Debug, Default)]
pub(crate) struct Names {
    ids: FxHashMap<String, u32>,
    names: Vec<String>,
    recent: [(usize, u32); 16],
}

impl Names {
    pub(crate) fn id(&mut self, s: &str) -> u32 {
        let addr = s.as_ptr() as usize;
        let slot = (addr >> 3) & 15;
        let (a, i) = self.recent[slot];
        if a == addr && self.names.get(i as usize).is_some_and(|n| n == s) {
            return i;
        }
        let i = match self.ids.get(s) {
            Some(&i) => i,
            None => {
                let i = self.names.len() as u32;
                self.names.push(s.to_string());
                self.ids.insert(s.to_string(), i);
                i
            }
        };
        self.recent[slot] = (addr, i);
        i
    }

    pub(crate) fn get(&self, i: u32) -> &str {
        &self.names[i as usize]
    }

    /// The number of `s`, if it was seen.
    pub(crate) fn lookup(&self, s: &str) -> Option<u32> {
        self.ids.get(s).copied()
    }
}

/// Numbers at or above this in a [`PerFunc`] are names outside functions.def.
const UNKNOWN_BASE: u32 = 1 << 16;

/// A value computed once per distinct function (its kind, its I/O class...), looked up by the
/// event's functions.def id (no string work); names outside the table go through `Names`.
#[derive(Debug)]
pub(crate) struct PerFunc<T: Copy> {
    by_id: Vec<Option<T>>,
    names: Names,
    unknown: Vec<Option<T>>,
    compute: fn(Layer, &str) -> T,
}

impl<T: Copy> PerFunc<T> {
    pub(crate) fn new(compute: fn(Layer, &str) -> T) -> Self {
        PerFunc {
            by_id: Vec::new(),
            names: Names::default(),
            unknown: Vec::new(),
            compute,
        }
    }

    /// The value for the function of `e` (names are unique across layers).
    #[inline]
    pub(crate) fn get(&mut self, e: &Event<'_>) -> T {
        self.entry(e).1
    }

    /// The number of the function of `e` (for `name`) and its value.
    #[inline]
    pub(crate) fn entry(&mut self, e: &Event<'_>) -> (u32, T) {
        let (n, i, values) = if e.func_id != 0 {
            let i = e.func_id as usize;
            (e.func_id as u32, i, &mut self.by_id)
        } else {
            let i = self.names.id(e.func);
            (UNKNOWN_BASE + i, i as usize, &mut self.unknown)
        };
        if let Some(Some(v)) = values.get(i) {
            return (n, *v);
        }
        let v = (self.compute)(e.layer, e.func);
        if values.len() <= i {
            values.resize(i + 1, None);
        }
        values[i] = Some(v);
        (n, v)
    }

    /// The name of number `n`.
    pub(crate) fn name(&self, n: u32) -> &str {
        if n >= UNKNOWN_BASE {
            self.names.get(n - UNKNOWN_BASE)
        } else {
            functions::by_id(n as u16).map_or("", |f| f.name)
        }
    }
}

/// The group key while accumulating (names as `Names` numbers).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum RawKey {
    Layer(Layer),
    Func(Layer, u32),
    File(i32, Layer),
    Rank(i32, Layer),
    Host(u32, Layer),
    Phase(u32, Layer),
}

impl RawKey {
    /// The key's layer and its number besides the layer (None when it has no small one).
    fn parts(self) -> (Layer, Option<u32>) {
        match self {
            RawKey::Layer(l) => (l, Some(0)),
            RawKey::Func(l, f) => (l, Some(f)),
            RawKey::File(f, l) => (l, u32::try_from(f).ok()),
            // Rank -1 (no MPI) is number 0.
            RawKey::Rank(r, l) => (l, r.checked_add(1).and_then(|r| u32::try_from(r).ok())),
            RawKey::Host(h, l) | RawKey::Phase(h, l) => (l, Some(h)),
        }
    }
}

/// Numbers below this are found in [`Groups`]' table; the table grows to the largest one seen
/// (at most this many times the layers, 4 bytes each).
const INDEXED_NUMBERS: u32 = 1 << 16;

/// The groups of one grouping, found once per new cell: a group whose key has a small number
/// (functions, files, ranks, hosts and phases are numbered densely) by indexing a table with
/// the number and the layer, the others (a damaged file's rank of 10^9) in a map.
#[derive(Default)]
struct Groups {
    /// Per (number, layer) the group's place in `keys` and `busy_at`.
    slots: Places,
    /// Groups whose number is not small: their place in `keys` and `busy_at`.
    others: FxHashMap<RawKey, usize>,
    keys: Vec<RawKey>,
    /// The place of each group's busy time in [`StatsVisitor`]'s `busy`.
    busy_at: Vec<u32>,
}

impl Groups {
    /// The place in `keys` and `busy_at` of the group of `key`, new (its busy time added to
    /// `busy`) if need be.
    fn index_of(&mut self, key: RawKey, busy: &mut Vec<Busy>) -> usize {
        let (keys, busy_at) = (&mut self.keys, &mut self.busy_at);
        let add = || {
            keys.push(key);
            busy_at.push(busy.len() as u32);
            busy.push(Busy::default());
            keys.len() - 1
        };
        let i = match key.parts() {
            (layer, Some(n)) if n < INDEXED_NUMBERS => {
                let cell = n as usize * Layer::ALL.len() + layer as usize;
                self.slots.at(cell, add)
            }
            _ => *self.others.entry(key).or_insert_with(add),
        };
        i
    }
}

/// The group key for sorting rows: (group sort key, label, layer).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Key {
    Layer(Layer),
    Func(Layer, String),
    File(String, Layer),
    Rank(i32, Layer),
    Host(String, Layer),
    Phase(String, Layer),
}

/// What every group an event counts in adds alike: counts, sums, extremes and the size
/// histogram. Order does not matter to them, so they are added up once per cell ([`CellKey`]) and merged
/// into the groups at the end, not added to six groups per event.
#[derive(Default)]
struct Sums {
    operations: u64,
    total_time: i64,
    errors: u64,
    data_operations: u64,
    bytes: u64,
    size_min: Option<u64>,
    size_max: Option<u64>,
    size_sum: u128,
    hist: SizeHistogram,
}

impl Sums {
    fn add(&mut self, e: &Sample) {
        self.operations += 1;
        self.total_time += e.duration;
        if e.failed {
            self.errors += 1;
        }
        if let Some((size, bytes)) = e.data {
            self.data_operations += 1;
            self.size_min = Some(self.size_min.map_or(size, |m| m.min(size)));
            self.size_max = Some(self.size_max.map_or(size, |m| m.max(size)));
            self.size_sum += size as u128;
            self.hist.add(size);
            self.bytes += bytes;
        }
    }

    fn merge(&mut self, o: &Sums) {
        self.operations += o.operations;
        self.total_time += o.total_time;
        self.errors += o.errors;
        self.data_operations += o.data_operations;
        self.bytes += o.bytes;
        self.size_min = match (self.size_min, o.size_min) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.size_max = self.size_max.max(o.size_max);
        self.size_sum += o.size_sum;
        self.hist.merge(&o.hist);
    }
}

/// One group's busy time, which depends on the order of the events and is kept per group as
/// they come: every event updates one per grouping, so the few bytes of each sit apart from
/// the sums, in one list for every grouping.
#[derive(Clone, Copy)]
struct Busy {
    busy: i64,
    /// The open interval, [`start`, `end`) of rank `rank` (as i64: `NOT_OPEN`, no rank, while
    /// none is open, and then [0, 0) adds nothing).
    rank: i64,
    start: i64,
    end: i64,
}

/// `Busy::rank` before the first interval: no rank (an i32) equals it.
const NOT_OPEN: i64 = i64::MIN;

impl Default for Busy {
    fn default() -> Self {
        Busy {
            busy: 0,
            rank: NOT_OPEN,
            start: 0,
            end: 0,
        }
    }
}

/// What one event adds to every group it counts in, computed once however many groupings
/// count it.
struct Sample {
    rank: i32,
    duration: i64,
    failed: bool,
    /// Requested size and bytes moved, for data operations.
    data: Option<(u64, u64)>,
    start: i64,
    end: i64,
}

impl Sample {
    fn of(e: &Event<'_>, kind: OpKind) -> Sample {
        let data = kind.moves_data().then(|| {
            let size = e.size.max(0) as u64;
            (size, functions::bytes_moved(size, e.result, e.error))
        });
        Sample {
            rank: e.rank,
            duration: e.duration_ns,
            failed: e.error != 0,
            data,
            start: e.start_ns,
            end: e.end_ns().max(e.start_ns),
        }
    }
}

impl Busy {
    /// Extends the busy time with `e`'s interval.
    #[inline]
    fn add(&mut self, e: &Sample) {
        if self.rank == i64::from(e.rank) && e.start <= self.end {
            self.end = self.end.max(e.end);
            return;
        }
        *self = Busy {
            busy: self.busy + (self.end - self.start),
            rank: i64::from(e.rank),
            start: e.start,
            end: e.end,
        };
    }

    /// The row of the group `group` of `layer` whose sums are `s`.
    fn finish(mut self, s: &Sums, group: String, layer: Layer) -> StatsRow {
        self.busy += self.end - self.start;
        let busy_s = self.busy as f64 / 1e9;
        let per_sec = |x: f64| (self.busy > 0).then(|| x / busy_s);
        let per_op = |x: f64| (s.data_operations > 0).then(|| x / s.data_operations as f64);
        StatsRow {
            group,
            layer,
            operations: s.operations,
            data_operations: s.data_operations,
            bytes: s.bytes,
            size_min: s.size_min,
            size_mean: per_op(s.size_sum as f64),
            size_max: s.size_max,
            size_histogram: s.hist.bins(),
            bytes_per_op: per_op(s.bytes as f64),
            total_time_ns: s.total_time,
            busy_time_ns: self.busy,
            ops_per_sec: per_sec(s.operations as f64),
            bytes_per_sec: per_sec(s.bytes as f64),
            errors: s.errors,
        }
    }
}

/// What places an event in every grouping: its layer, function (a [`PerFunc`] number), file,
/// rank, process (which gives its host) and phase (a [`Names`] number).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct CellKey {
    layer: Layer,
    func: u32,
    file: Option<i32>,
    rank: i32,
    process: i32,
    phase: u32,
}

impl CellKey {
    /// Its place in [`StatsVisitor`]'s `recent`: a hash of what varies most from record to
    /// record (function, file, layer, phase); records of another rank or process only miss.
    #[inline]
    fn recent_slot(&self) -> usize {
        let file = self.file.map_or(u32::MAX, |f| f as u32);
        let h = (u64::from(self.func) << 32 | u64::from(file))
            ^ u64::from(self.phase) << 40
            ^ (self.layer as u64) << 58;
        (h.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - RECENT_BITS)) as usize
    }
}

/// `StatsVisitor::recent` holds 2^this cells.
const RECENT_BITS: u32 = 8;

/// A grouping that leaves a cell out (in `StatsVisitor::cell_groups`).
const NO_GROUP: u32 = u32::MAX;

/// In a row of `StatsVisitor::cell_busy`, the end of the busy times to update (0: the first
/// place of `StatsVisitor::busy` is no group's).
const NO_BUSY: u32 = 0;

/// Whether a grouping's busy times are still those of the first grouping (`by[0]`), group for
/// group: so far every cell fell in groups of the two that pair one to one (the phases of a
/// trace without regions and its layers). Such a grouping's busy times are not updated by the
/// visits; they are copied from the first grouping's when a cell breaks the pairing, or at the
/// end.
#[derive(Default)]
struct Twin {
    /// Still paired.
    live: bool,
    /// Per group of the first grouping, its pair here (NO_GROUP: none yet)...
    ours: Vec<u32>,
    /// ...and per group here, its pair in the first grouping.
    theirs: Vec<u32>,
}

impl Twin {
    /// Pairs group `first` of the first grouping with `g` of this one (either NO_GROUP: the
    /// grouping leaves the cell out); false if that breaks the pairing.
    fn pair(&mut self, first: u32, g: u32) -> bool {
        if first == NO_GROUP || g == NO_GROUP {
            return first == g;
        }
        let (a, b) = (first as usize, g as usize);
        if self.ours.len() <= a {
            self.ours.resize(a + 1, NO_GROUP);
        }
        if self.theirs.len() <= b {
            self.theirs.resize(b + 1, NO_GROUP);
        }
        let ok = (self.ours[a] == NO_GROUP || self.ours[a] == g)
            && (self.theirs[b] == NO_GROUP || self.theirs[b] == first);
        if ok {
            self.ours[a] = g;
            self.theirs[b] = first;
        }
        ok
    }
}

/// Statistics grouped one or several ways, as one visitor of the shared pass: an event's
/// groups are found once per distinct [`CellKey`], and its sums added to its cell once, not to
/// each of its groups; only the busy time, which depends on the order, is kept per group as the
/// events come. The cells are merged into their groups at the end.
pub struct StatsVisitor {
    by: Vec<GroupBy>,
    names: Names,
    /// Kind of each function (its number keys `RawKey::Func`).
    kinds: PerFunc<OpKind>,
    /// Host name number of each `process` seen, by process (meta.json's processes: no more
    /// than the trace has; a damaged process number outside them is looked up each time).
    hosts: Vec<Option<u32>>,
    /// The name number of [`NO_PHASE`], once a record outside regions asked for it (most
    /// records are).
    no_phase: Option<u32>,
    /// The groups of each grouping of `by`, in its order.
    groups: Vec<Groups>,
    /// The busy time of every group of every grouping (first the unread one of `NO_BUSY`).
    busy: Vec<Busy>,
    /// The sums of every distinct cell seen (the events of one [`CellKey`]), and where each
    /// key's are.
    cells: Vec<Sums>,
    cell_at: FxHashMap<CellKey, usize>,
    /// Per cell, a row of `by.len()`: the place of its group in each grouping's `keys`
    /// (`NO_GROUP`: left out)...
    cell_groups: Vec<u32>,
    /// ...and the places in `busy` of the busy times its visits update: those of its groups
    /// in the groupings that are not twins, then NO_BUSY.
    cell_busy: Vec<u32>,
    /// Per grouping, whether it is still a twin of the first.
    twins: Vec<Twin>,
    /// The cells of recent records by `CellKey::recent_slot`: most records find theirs here,
    /// with one comparison rather than a probe of `cell_at`.
    recent: Vec<Option<(CellKey, u32)>>,
}

impl StatsVisitor {
    /// Statistics grouped by each of `by`.
    pub fn new(by: &[GroupBy]) -> Self {
        StatsVisitor {
            by: by.to_vec(),
            names: Names::default(),
            kinds: PerFunc::new(functions::kind_of),
            hosts: Vec::new(),
            no_phase: None,
            groups: by.iter().map(|_| Groups::default()).collect(),
            busy: vec![Busy::default()],
            cells: Vec::new(),
            cell_at: FxHashMap::default(),
            cell_groups: Vec::new(),
            cell_busy: Vec::new(),
            twins: (0..by.len())
                .map(|i| Twin {
                    live: i > 0,
                    ..Twin::default()
                })
                .collect(),
            recent: vec![None; 1 << RECENT_BITS],
        }
    }

    fn host_id(&mut self, process: i32, ctx: &Context<'_>) -> u32 {
        let known = usize::try_from(process)
            .ok()
            .filter(|&p| p < ctx.trace.meta.processes.len());
        if let Some(Some(h)) = known.and_then(|p| self.hosts.get(p)) {
            return *h;
        }
        let h = self.names.id(ctx.host_of_process(process));
        if let Some(p) = known {
            if self.hosts.len() <= p {
                self.hosts.resize(p + 1, None);
            }
            self.hosts[p] = Some(h);
        }
        h
    }

    /// The rows of each grouping, in the order of `by`, each sorted by group then layer.
    pub fn rows(mut self, ctx: &Context<'_>) -> Vec<Vec<StatsRow>> {
        let mut sums: Vec<Vec<Sums>> = (self.groups.iter())
            .map(|g| g.keys.iter().map(|_| Sums::default()).collect())
            .collect();
        for i in 0..self.by.len() {
            if self.twins[i].live {
                self.copy_twin_busy(i);
            }
        }
        let n = self.by.len();
        for (cell, groups) in self.cells.iter().zip(self.cell_groups.chunks(n.max(1))) {
            for (grouping, &at) in sums.iter_mut().zip(groups) {
                if at != NO_GROUP {
                    grouping[at as usize].merge(cell);
                }
            }
        }
        let (names, kinds, busy) = (&self.names, &self.kinds, &mut self.busy);
        self.groups
            .into_iter()
            .zip(sums)
            .map(|(groups, sums)| rows_of(groups, sums, busy, names, kinds, ctx))
            .collect()
    }

    /// The statistics of a visitor of one grouping, with the counts of the pass that fed it.
    pub fn into_stats(self, ctx: &Context<'_>, counts: PassCounts) -> Stats {
        let by = self.by.first().copied().unwrap_or(GroupBy::Layer);
        let rows = self.rows(ctx).into_iter().next().unwrap_or_default();
        let m = &ctx.trace.meta;
        Stats {
            group_by: by,
            scope: ctx.scope,
            events: counts.events,
            left_out: counts.left_out,
            ranks: m.job.ranks,
            processes: m.counts.processes,
            duration_ns: m.job.duration_ns,
            partial: m.partial,
            rows,
            servers: None,
        }
    }
}

/// One grouping's rows (`sums` by group, as its `keys`; their busy times taken out of
/// `busy`), sorted by group then layer.
fn rows_of(
    groups: Groups,
    sums: Vec<Sums>,
    busy: &mut [Busy],
    names: &Names,
    kinds: &PerFunc<OpKind>,
    ctx: &Context<'_>,
) -> Vec<StatsRow> {
    let group_busy = (groups.busy_at.iter()).map(|&b| std::mem::take(&mut busy[b as usize]));
    let accs = group_busy.zip(sums);
    let mut keyed: Vec<(Key, (Busy, Sums))> = (groups.keys.into_iter().zip(accs))
        .filter_map(|(k, acc)| {
            let key = match k {
                RawKey::Layer(l) => Key::Layer(l),
                RawKey::Func(l, f) => Key::Func(l, kinds.name(f).to_string()),
                RawKey::File(f, l) => Key::File(ctx.trace.file_path(f)?.to_string(), l),
                RawKey::Rank(r, l) => Key::Rank(r, l),
                RawKey::Host(h, l) => Key::Host(names.get(h).to_string(), l),
                RawKey::Phase(p, l) => Key::Phase(names.get(p).to_string(), l),
            };
            Some((key, acc))
        })
        .collect();
    keyed.sort_by(|a, b| a.0.cmp(&b.0));
    keyed
        .into_iter()
        .map(|(key, (busy, s))| match key {
            Key::Layer(l) => busy.finish(&s, l.name().to_string(), l),
            Key::Func(l, f) => busy.finish(&s, f, l),
            Key::File(p, l) | Key::Host(p, l) | Key::Phase(p, l) => busy.finish(&s, p, l),
            Key::Rank(r, l) => busy.finish(&s, r.to_string(), l),
        })
        .collect()
}

impl StatsVisitor {
    /// The place in `cells` of `e`'s cell, new (its groups found) if need be.
    fn cell_of(&mut self, e: &Event<'_>, func: u32, ctx: &Context<'_>) -> usize {
        let phase = match e.region {
            Some(region) => self.names.id(region),
            None => *(self.no_phase).get_or_insert_with(|| self.names.id(NO_PHASE)),
        };
        let key = CellKey {
            layer: e.layer,
            func,
            file: e.file_id,
            rank: e.rank,
            process: e.process,
            phase,
        };
        let slot = key.recent_slot();
        if let Some((k, i)) = self.recent[slot] {
            if k == key {
                return i as usize;
            }
        }
        let i = match self.cell_at.get(&key) {
            Some(&i) => i,
            None => self.new_cell(e, key, ctx),
        };
        self.recent[slot] = Some((key, i as u32));
        i
    }

    /// Adds the cell of `e`, of key `key`: finds its group in each grouping.
    fn new_cell(&mut self, e: &Event<'_>, key: CellKey, ctx: &Context<'_>) -> usize {
        let (func, phase) = (key.func, key.phase);
        for i in 0..self.by.len() {
            let key = match self.by[i] {
                GroupBy::Layer => Some(RawKey::Layer(e.layer)),
                GroupBy::Func => Some(RawKey::Func(e.layer, func)),
                GroupBy::File => e.file_id.map(|f| RawKey::File(f, e.layer)),
                GroupBy::Rank => Some(RawKey::Rank(e.rank, e.layer)),
                GroupBy::Host => Some(RawKey::Host(self.host_id(e.process, ctx), e.layer)),
                GroupBy::Phase => Some(RawKey::Phase(phase, e.layer)),
                // A server's and its disks' containers carry the server's name as their host.
                GroupBy::Server => match e.layer {
                    Layer::Server | Layer::Disk => {
                        Some(RawKey::Host(self.host_id(e.process, ctx), e.layer))
                    }
                    _ => None,
                },
            };
            let group = match key {
                Some(k) => self.groups[i].index_of(k, &mut self.busy) as u32,
                None => NO_GROUP,
            };
            self.cell_groups.push(group);
        }
        let (c, n) = (self.cells.len(), self.by.len());
        for i in 1..n {
            let (first, g) = (self.cell_groups[c * n], self.cell_groups[c * n + i]);
            if self.twins[i].live && !self.twins[i].pair(first, g) {
                self.untwin(i);
            }
        }
        self.cells.push(Sums::default());
        self.set_busy_row(c);
        self.cell_at.insert(key, c);
        c
    }

    /// Writes the row of cell `c` in `cell_busy`.
    fn set_busy_row(&mut self, c: usize) {
        let n = self.by.len();
        if self.cell_busy.len() < (c + 1) * n {
            self.cell_busy.resize((c + 1) * n, NO_BUSY);
        }
        let mut k = c * n;
        for i in 0..n {
            let g = self.cell_groups[c * n + i];
            if g != NO_GROUP && !self.twins[i].live {
                self.cell_busy[k] = self.groups[i].busy_at[g as usize];
                k += 1;
            }
        }
        self.cell_busy[k..(c + 1) * n].fill(NO_BUSY);
    }

    /// Grouping `i` is no longer a twin: its busy times so far are its twin's, and the visits
    /// update them from now on.
    fn untwin(&mut self, i: usize) {
        self.copy_twin_busy(i);
        self.twins[i].live = false;
        for c in 0..self.cells.len() {
            self.set_busy_row(c);
        }
    }

    /// Copies the busy times of the first grouping to their pairs in grouping `i`.
    fn copy_twin_busy(&mut self, i: usize) {
        for (g, &first) in self.twins[i].theirs.iter().enumerate() {
            if first != NO_GROUP {
                let from = self.groups[0].busy_at[first as usize];
                self.busy[self.groups[i].busy_at[g] as usize] = self.busy[from as usize];
            }
        }
    }
}

impl Visitor for StatsVisitor {
    fn visit(&mut self, e: &Event<'_>, ctx: &Context<'_>) {
        let (func, kind) = self.kinds.entry(e);
        let sample = Sample::of(e, kind);
        let c = self.cell_of(e, func, ctx);
        self.cells[c].add(&sample);
        let n = self.by.len();
        for &b in &self.cell_busy[c * n..(c + 1) * n] {
            if b == NO_BUSY {
                break;
            }
            self.busy[b as usize].add(&sample);
        }
    }
}

/// Computes statistics grouped by `by` over the records `scope` counts, streaming the trace's
/// events (one pass; `--by server` adds the server table to the same pass).
pub fn compute(trace: &Trace, by: GroupBy, scope: Scope) -> Result<Stats, StoreError> {
    let ctx = pass::context(trace, scope)?;
    let mut v = StatsVisitor::new(&[by]);
    if by != GroupBy::Server {
        let counts = pass::run(&ctx, &mut [&mut v], &mut |_, _| {})?;
        return Ok(v.into_stats(&ctx, counts));
    }
    let mut servers = ServerVisitor::new(trace);
    let counts = pass::run(&ctx, &mut [&mut v, &mut servers], &mut |_, _| {})?;
    let mut stats = v.into_stats(&ctx, counts);
    stats.servers = Some(servers.table(&ctx, &trace.counters()?));
    Ok(stats)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{self, ev, FILE_A};
    use pioscope_trace::merge::merge;
    use pioscope_trace::raw::fixture::{FixtureEvent as E, RawFileBuilder};
    use pioscope_trace::raw::format::{flags, string_kind};

    /// Two ranks; times in ns (MONOTONIC clock, no offsets, both start at 1_000).
    /// rank 0: write_all [1000,2000) 300 B containing pwrites [1100,1300) 100 B and
    ///         [1200,1500) 200 B (overlapping: another thread in real life), then a failed
    ///         pread [3000,3100) 50 B, and open [500,600).
    /// rank 1: pwrite [1000,1400) 400 B.
    fn trace(dir: &std::path::Path) -> Trace {
        let raw = dir.join("raw");
        std::fs::create_dir(&raw).expect("mkdir");
        let mut a = RawFileBuilder::monotonic(1, 0, 400);
        a.job(&[("rank", "0"), ("size", "2")]);
        a.string(string_kind::FILE, 1, "/f", 0);
        a.events(
            0,
            &[
                E::new(14, 1_100, 200).object(1).size(100).depth(1),
                E::new(14, 1_200, 300).object(1).size(200).depth(1),
                E::new(318, 1_000, 1_000)
                    .object(1)
                    .size(300)
                    .flags(flags::COLLECTIVE)
                    .link(1 << 32 | 1),
                E::new(12, 3_000, 100)
                    .object(1)
                    .size(50)
                    .result(-1)
                    .error(5),
                E::new(1, 500, 100).object(1).result(3),
            ],
        );
        a.end();
        a.write_to(&raw.join("a.praw")).expect("write");
        let mut b = RawFileBuilder::monotonic(2, 0, 400);
        b.job(&[("rank", "1"), ("size", "2")]);
        b.string(string_kind::FILE, 1, "/f", 0);
        b.events(0, &[E::new(14, 1_000, 400).object(1).size(400)]);
        b.end();
        b.write_to(&raw.join("b.praw")).expect("write");
        let out = dir.join("trace");
        merge(&raw, &out, &mut |_| {}).expect("merge");
        Trace::open(&out).expect("open")
    }

    #[test]
    fn arithmetic_by_layer() {
        let dir = tempfile::tempdir().expect("tmp");
        let s = compute(&trace(dir.path()), GroupBy::Layer, Scope::All).expect("stats");
        assert_eq!(s.events, 6);
        assert_eq!(s.rows.len(), 2);
        let posix = &s.rows[0];
        assert_eq!(posix.group, "posix");
        assert_eq!(posix.operations, 5);
        assert_eq!(posix.data_operations, 4);
        assert_eq!(
            posix.errors, 1,
            "only the failed pread; the open returned fd 3"
        );
        assert_eq!(posix.bytes, 700, "the failed pread moves nothing");
        assert_eq!((posix.size_min, posix.size_max), (Some(50), Some(400)));
        assert_eq!(posix.size_mean, Some(750.0 / 4.0));
        assert_eq!(posix.total_time_ns, 200 + 300 + 100 + 100 + 400);
        // rank 0: [500,600) + [1100,1500) + [3000,3100) = 600; rank 1: 400.
        assert_eq!(posix.busy_time_ns, 1_000);
        assert_eq!(posix.ops_per_sec, Some(5.0 / 1e-6));
        assert_eq!(posix.bytes_per_sec, Some(700.0 / 1e-6));
        let mpiio = &s.rows[1];
        assert_eq!(
            (mpiio.group.as_str(), mpiio.bytes, mpiio.busy_time_ns),
            ("mpiio", 300, 1_000)
        );
    }

    /// A group's sums are its cells' merged: counts and sums added, the extremes of the cells
    /// with data operations kept (a cell of metadata calls has none), histograms added.
    #[test]
    fn cells_merge_into_their_group() {
        let sample = |size: Option<u64>, failed: bool| Sample {
            rank: 0,
            duration: 10,
            failed,
            data: size.map(|s| (s, s)),
            start: 0,
            end: 10,
        };
        let (mut a, mut b, mut meta) = (Sums::default(), Sums::default(), Sums::default());
        a.add(&sample(Some(8), false));
        a.add(&sample(Some(100), true));
        b.add(&sample(Some(3), false));
        meta.add(&sample(None, false));
        let mut group = Sums::default();
        for cell in [&meta, &a, &b] {
            group.merge(cell);
        }
        assert_eq!(
            (group.operations, group.data_operations, group.errors),
            (4, 3, 1)
        );
        assert_eq!(
            (group.bytes, group.size_sum, group.total_time),
            (111, 111, 40)
        );
        assert_eq!((group.size_min, group.size_max), (Some(3), Some(100)));
        let bins: Vec<(u64, u64)> = group
            .hist
            .bins()
            .iter()
            .map(|b| (b.bin_min, b.count))
            .collect();
        assert_eq!(bins, vec![(2, 1), (8, 1), (64, 1)]);
    }

    #[test]
    fn application_scope_leaves_out_system_files_and_fileless_records() {
        let dir = tempfile::tempdir().expect("tmp");
        let raw = dir.path().join("raw");
        std::fs::create_dir_all(&raw).expect("mkdir");
        let mut a = RawFileBuilder::monotonic(1, 0, 0);
        a.job(&[("rank", "0"), ("size", "1")]);
        a.string(string_kind::FILE, 1, "/scratch/out.dat", 0);
        a.string(string_kind::FILE, 2, "/proc/self/maps", 0);
        a.events(
            0,
            &[
                E::new(14, 1_000, 100).object(1).size(64),
                E::new(10, 2_000, 100).object(2).size(4096),
                E::new(10, 3_000, 100).size(8),
            ],
        );
        a.end();
        a.write_to(&raw.join("a.praw")).expect("write");
        let out = dir.path().join("trace");
        merge(&raw, &out, &mut |_| {}).expect("merge");
        let t = Trace::open(&out).expect("open");

        let app = compute(&t, GroupBy::Layer, Scope::Application).expect("stats");
        assert_eq!((app.events, app.left_out), (3, 2));
        assert_eq!((app.rows[0].operations, app.rows[0].bytes), (1, 64));
        let all = compute(&t, GroupBy::Layer, Scope::All).expect("stats");
        assert_eq!(
            (all.left_out, all.rows[0].operations, all.rows[0].bytes),
            (0, 3, 4168)
        );
    }

    #[test]
    fn by_func_rank_and_file() {
        let dir = tempfile::tempdir().expect("tmp");
        let t = trace(dir.path());
        let f = compute(&t, GroupBy::Func, Scope::All).expect("stats");
        let names: Vec<&str> = f.rows.iter().map(|r| r.group.as_str()).collect();
        assert_eq!(names, vec!["open", "pread", "pwrite", "MPI_File_write_all"]);
        let open = &f.rows[0];
        assert_eq!((open.operations, open.bytes, open.size_mean), (1, 0, None));
        let r = compute(&t, GroupBy::Rank, Scope::All).expect("stats");
        let keys: Vec<(&str, Layer, u64)> = r
            .rows
            .iter()
            .map(|r| (r.group.as_str(), r.layer, r.bytes))
            .collect();
        assert_eq!(
            keys,
            vec![
                ("0", Layer::Posix, 300),
                ("0", Layer::MpiIo, 300),
                ("1", Layer::Posix, 400)
            ]
        );
        let by_file = compute(&t, GroupBy::File, Scope::All).expect("stats");
        assert_eq!(by_file.rows.len(), 2);
        assert_eq!(
            (by_file.rows[0].group.as_str(), by_file.rows[0].operations),
            ("/f", 5)
        );
        assert_eq!("rank".parse::<GroupBy>(), Ok(GroupBy::Rank));
        assert_eq!("phase".parse::<GroupBy>(), Ok(GroupBy::Phase));
        assert!("phaze".parse::<GroupBy>().is_err());
    }

    #[test]
    fn histogram_bins_are_powers_of_two() {
        assert_eq!(SizeHistogram::bin_of(0), 0);
        assert_eq!(SizeHistogram::bin_of(1), 1);
        assert_eq!(SizeHistogram::bin_of(4095), 12);
        assert_eq!(SizeHistogram::bin_of(4096), 13);
        assert_eq!(SizeHistogram::bin_min(13), 4096);
        assert_eq!(SizeHistogram::bin_of(u64::MAX), 64);
        let dir = tempfile::tempdir().expect("tmp");
        let s = compute(&trace(dir.path()), GroupBy::Layer, Scope::All).expect("stats");
        // posix data requests: 100, 200, 50, 400.
        let bins: Vec<(u64, u64)> = s.rows[0]
            .size_histogram
            .iter()
            .map(|b| (b.bin_min, b.count))
            .collect();
        assert_eq!(bins, vec![(32, 1), (64, 1), (128, 1), (256, 1)]);
        assert_eq!(s.rows[0].bytes_per_op, Some(700.0 / 4.0));
        let json = serde_json::to_value(&s.rows[0]).expect("json");
        assert_eq!(json["size_histogram"][0]["bin_min"], 32);
        assert_eq!(json["size_histogram"][0]["count"], 1);
    }

    /// (group, layer, operations, bytes) of each row.
    fn summary(s: &Stats) -> Vec<(&str, Layer, u64, u64)> {
        s.rows
            .iter()
            .map(|r| (r.group.as_str(), r.layer, r.operations, r.bytes))
            .collect()
    }

    /// Hosts come from meta.json processes; phases from the region column.
    #[test]
    fn by_host_and_phase() {
        let dir = tempfile::tempdir().expect("tmp");
        let mut ranks = Vec::new();
        for (rank, host) in [(0u32, "n1"), (1, "n1"), (2, "n2")] {
            let mut b = testutil::rank(rank, 3, host);
            testutil::region(&mut b, 2, "output");
            b.events(
                0,
                &[
                    ev("pwrite", 100, 10).object(FILE_A).size(8),
                    ev("region", 1_000, 500).object(2),
                    ev("pwrite", 1_100, 100).object(FILE_A).size(64).depth(1),
                ],
            );
            ranks.push(b);
        }
        let t = testutil::trace(dir.path(), ranks);
        let h = compute(&t, GroupBy::Host, Scope::All).expect("stats");
        assert_eq!(
            summary(&h),
            vec![
                ("n1", Layer::Posix, 4, 144),
                ("n1", Layer::Region, 2, 0),
                ("n2", Layer::Posix, 2, 72),
                ("n2", Layer::Region, 1, 0)
            ]
        );
        assert!(compute(&t, GroupBy::Server, Scope::All)
            .expect("stats")
            .rows
            .is_empty());
        let p = compute(&t, GroupBy::Phase, Scope::All).expect("stats");
        assert_eq!(
            summary(&p),
            vec![
                (NO_PHASE, Layer::Posix, 3, 24),
                ("output", Layer::Posix, 3, 192),
                ("output", Layer::Region, 3, 0)
            ]
        );
        // Busy time of the phase rows: 3 ranks x 100 ns of pwrite inside "output".
        assert_eq!(p.rows[1].busy_time_ns, 300);
    }

    /// Every grouping of one visitor gives the rows it gives alone, busy times included: the
    /// functions stay paired with the layers to the end (one function per layer), the phases
    /// stop pairing midway (a region on the second rank), the hosts and ranks at its first
    /// record.
    #[test]
    fn groupings_together_match_each_alone() {
        let dir = tempfile::tempdir().expect("tmp");
        let mut ranks = Vec::new();
        for (rank, host) in [(0u32, "n1"), (1, "n2")] {
            let mut b = testutil::rank(rank, 2, host);
            testutil::region(&mut b, 2, "output");
            let mut events = vec![
                ev("pwrite", 100, 50).object(FILE_A).size(8),
                ev("pwrite", 120, 100).object(FILE_A).size(8),
                ev("pwrite", 400, 10).object(FILE_A).size(8),
            ];
            if rank == 1 {
                events.push(ev("region", 1_000, 500).object(2));
                events.push(ev("pwrite", 1_100, 100).object(FILE_A).size(64).depth(1));
            }
            b.events(0, &events);
            ranks.push(b);
        }
        let t = testutil::trace(dir.path(), ranks);
        let ctx = pass::context(&t, Scope::All).expect("context");
        let mut all = StatsVisitor::new(&GroupBy::ALL);
        pass::run(&ctx, &mut [&mut all], &mut |_, _| {}).expect("pass");
        let together = all.rows(&ctx);
        for (by, rows) in GroupBy::ALL.iter().zip(&together) {
            let alone = compute(&t, *by, Scope::All).expect("stats").rows;
            assert_eq!(rows, &alone, "{by}");
        }
        // Outside regions, per rank [100, 220) and [400, 410).
        let phase = &together[5];
        assert_eq!(
            (phase[0].group.as_str(), phase[0].busy_time_ns),
            (NO_PHASE, 260)
        );
        assert_eq!(together[1][0].busy_time_ns, 360, "pwrite: 130 + 130 + 100");
    }

    /// Server and disk events group by the server's name; rank events are left out.
    #[test]
    fn by_server() {
        let dir = tempfile::tempdir().expect("tmp");
        let mut rank = testutil::rank(0, 1, "n1");
        rank.events(0, &[ev("pwrite", 100, 10).object(FILE_A).size(8)]);
        let mut server = testutil::rank(1, 1, "server-0");
        server.events(
            0,
            &[
                ev("server_write", 120, 50).object(FILE_A).size(8),
                ev("disk_write", 130, 40).size(8).depth(1),
                ev("server_write", 200, 50).object(FILE_A).size(16),
            ],
        );
        let t = testutil::trace(dir.path(), vec![rank, server]);
        let s = compute(&t, GroupBy::Server, Scope::All).expect("stats");
        assert_eq!(
            summary(&s),
            vec![
                ("server-0", Layer::Server, 2, 24),
                ("server-0", Layer::Disk, 1, 8)
            ]
        );
    }
}
