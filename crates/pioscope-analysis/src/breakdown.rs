//! Where each rank's time goes: the share of its wall time in each layer, function and user
//! phase, and its I/O time split into data, metadata, sync and close.
//!
//! Definitions (also in docs/CLI.md, `pioscope report`):
//! - wall time of a rank: from its first record's start to its last record's end;
//! - layer and function time: the durations of the *outermost* calls of each layer only, so a
//!   call nested in a call of the same layer (an MPI_File_write_at that ROMIO issues inside
//!   MPI_File_write_all, an MPI_Allreduce inside MPI_Bcast) never counts twice. Layers do nest
//!   into each other (the pwrites of a collective write count at posix and their
//!   MPI_File_write_all at mpiio), so layer shares do not add up;
//! - I/O time: the outermost I/O call (POSIX, STDIO or MPI-IO, not inside another I/O call),
//!   classed by its function (`IoClass`); MPI time: outermost MPI calls outside any I/O call;
//!   other: the rest of the wall time (computation, untraced calls). I/O + MPI + other = wall
//!   for a single-threaded rank; with several recording threads the traced times are summed
//!   and other is clamped at 0;
//! - phase time: the time during which the phase is the innermost user region of the thread
//!   (a region's own duration minus that of regions nested in it); "(none)" is the rest of the
//!   wall time. Each phase also carries the I/O split of the I/O calls made in it, so an output
//!   phase dominated by close (the OLAM case) shows at a glance;
//! - waiting: the MPI calls directly inside an MPI-IO call that moves no data (the barrier in
//!   a collective `MPI_File_close`, the agreement in `MPI_File_open`) are ranks waiting for
//!   each other, not the file system: their time leaves the call's class for `wait`
//!   (`crate::class::is_wait`).

use pioscope_trace::functions::Layer;
use pioscope_trace::store::Event;
use serde::Serialize;

use crate::class::{io_class, is_io_layer, is_wait, IoClass};
use crate::lookup::{Keyed, Recent, RecentMap};
use crate::nesting::{Frame, Nesting};
use crate::pass::{Context, Visitor};
use crate::stats::{Names, PerFunc, NO_PHASE};

/// I/O time by class, ns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct IoSplit {
    /// Data (reads and writes).
    pub data_ns: i64,
    /// Metadata.
    pub metadata_ns: i64,
    /// Sync.
    pub sync_ns: i64,
    /// Close.
    pub close_ns: i64,
    /// Waiting for other ranks inside MPI-IO calls that move no data.
    pub wait_ns: i64,
}

impl IoSplit {
    /// The time of one class.
    pub fn get(&self, c: IoClass) -> i64 {
        match c {
            IoClass::Data => self.data_ns,
            IoClass::Metadata => self.metadata_ns,
            IoClass::Sync => self.sync_ns,
            IoClass::Close => self.close_ns,
            IoClass::Wait => self.wait_ns,
        }
    }

    fn add(&mut self, c: IoClass, ns: i64) {
        match c {
            IoClass::Data => self.data_ns += ns,
            IoClass::Metadata => self.metadata_ns += ns,
            IoClass::Sync => self.sync_ns += ns,
            IoClass::Close => self.close_ns += ns,
            IoClass::Wait => self.wait_ns += ns,
        }
    }

    fn merge(&mut self, o: &IoSplit) {
        for c in IoClass::ALL {
            self.add(c, o.get(c));
        }
    }

    /// Moves `ns` of class `c` to waiting.
    fn move_to_wait(&mut self, c: IoClass, ns: i64) {
        self.add(c, -ns);
        self.wait_ns += ns;
    }

    /// Every class.
    pub fn total_ns(&self) -> i64 {
        IoClass::ALL.iter().map(|&c| self.get(c)).sum()
    }
}

/// Time of one layer, function or phase and its share of the wall time.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Part {
    /// Layer, function or phase name.
    pub name: String,
    /// The layer (functions only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub layer: Option<Layer>,
    /// Time, ns.
    pub time_ns: i64,
    /// time / wall time.
    pub share: f64,
    /// I/O split of the I/O calls made in the phase (phases only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub io: Option<IoSplit>,
}

/// Shares of the wall time at a glance.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Shares {
    /// I/O (all classes).
    pub io: f64,
    /// I/O data.
    pub data: f64,
    /// I/O metadata.
    pub metadata: f64,
    /// I/O sync.
    pub sync: f64,
    /// I/O close.
    pub close: f64,
    /// Waiting for other ranks inside I/O calls.
    pub wait: f64,
    /// MPI communication outside I/O calls.
    pub mpi: f64,
    /// The rest.
    pub other: f64,
}

/// The breakdown of one rank, or of all ranks together.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RankBreakdown {
    /// The rank (-1: processes without MPI); None for the sum over ranks.
    pub rank: Option<i32>,
    /// Its host (of its first process); None for the sum.
    pub host: Option<String>,
    /// Wall time (summed over ranks for the sum), ns.
    pub wall_ns: i64,
    /// Outermost I/O calls by class, ns.
    pub io: IoSplit,
    /// Outermost I/O calls, ns.
    pub io_ns: i64,
    /// Outermost MPI calls outside I/O calls, ns.
    pub mpi_ns: i64,
    /// The rest of the wall time, ns.
    pub other_ns: i64,
    /// Each of the above / wall time.
    pub shares: Shares,
    /// Time at the outermost call of each layer (layers nest: shares do not add up).
    pub layers: Vec<Part>,
    /// Time at the outermost call of each function's layer, by function, largest first.
    pub functions: Vec<Part>,
    /// Time with each phase as the innermost user region (adds up to the wall time), largest
    /// first.
    pub phases: Vec<Part>,
}

/// Time breakdowns of a trace.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Breakdown {
    /// The sum over all ranks (shares of the summed wall time).
    pub total: RankBreakdown,
    /// One entry per rank, by rank.
    pub ranks: Vec<RankBreakdown>,
}

#[derive(Clone, Copy, Debug)]
struct Open {
    layer: Layer,
    region: Option<u32>,
    /// The class of an outermost I/O call.
    io: Option<IoClass>,
    /// The phase its time went to.
    phase: u32,
}

#[derive(Debug, Default)]
struct PhaseAcc {
    self_ns: i64,
    io: IoSplit,
}

#[derive(Debug)]
struct RankAcc {
    /// The rank's host (a `names` number), from its first record.
    host: Option<u32>,
    first: i64,
    last: i64,
    layers: [i64; Layer::ALL.len()],
    /// Time by function, at the function's place in [`BreakdownVisitor`]'s `func_keys`
    /// (None: no outermost call of it on the rank).
    funcs: Vec<Option<i64>>,
    /// Per phase (a `names` number) with time or I/O.
    phases: RecentMap<u32, PhaseAcc>,
    io: IoSplit,
    mpi: i64,
}

impl Default for RankAcc {
    /// No records yet: the extremes start past every time.
    fn default() -> Self {
        RankAcc {
            host: None,
            first: i64::MAX,
            last: i64::MIN,
            layers: [0; Layer::ALL.len()],
            funcs: Vec::new(),
            phases: RecentMap::default(),
            io: IoSplit::default(),
            mpi: 0,
        }
    }
}

impl RankAcc {
    /// Adds `ns` to the function at place `f` (of `func_keys`).
    fn add_func(&mut self, f: usize, ns: i64) {
        if self.funcs.len() <= f {
            self.funcs.resize(f + 1, None);
        }
        *self.funcs[f].get_or_insert(0) += ns;
    }
}

fn layer_index(l: Layer) -> usize {
    Layer::ALL.iter().position(|&x| x == l).unwrap_or(0)
}

/// The breakdown visitor.
#[derive(Debug)]
pub struct BreakdownVisitor {
    names: Names,
    /// I/O class of each function (its number keys `func_keys`).
    classes: PerFunc<Option<IoClass>>,
    /// Every (layer, function number) with time, in order of first appearance: the ranks'
    /// `funcs` are indexed by place here, found through `func_at`.
    func_keys: Vec<(Layer, u32)>,
    func_at: Recent<(Layer, u32)>,
    nesting: Nesting<Open>,
    /// Per rank (the current one held aside: the records come rank by rank).
    ranks: Keyed<i32, RankAcc>,
    none: Option<u32>,
}

impl Default for BreakdownVisitor {
    fn default() -> Self {
        Self::new()
    }
}

impl BreakdownVisitor {
    /// A new visitor.
    pub fn new() -> Self {
        BreakdownVisitor {
            names: Names::default(),
            classes: PerFunc::new(io_class),
            func_keys: Vec::new(),
            func_at: Recent::default(),
            nesting: Nesting::new(),
            ranks: Keyed::default(),
            none: None,
        }
    }

    fn none_phase(&mut self) -> u32 {
        match self.none {
            Some(i) => i,
            None => {
                let i = self.names.id(NO_PHASE);
                self.none = Some(i);
                i
            }
        }
    }

    /// The result, after the pass.
    pub fn result(&self) -> Breakdown {
        let mut ranks = Vec::new();
        let mut sum = RankAcc::default();
        let mut wall_sum = 0;
        let mut none_sum = PhaseAcc::default();
        for (rank, acc) in self.ranks.entries() {
            let (b, none) = self.finish_rank(Some(rank), acc, acc.last - acc.first);
            wall_sum += b.wall_ns;
            none_sum.self_ns += none.self_ns;
            none_sum.io.merge(&none.io);
            for i in 0..6 {
                sum.layers[i] += acc.layers[i];
            }
            for (f, t) in acc.funcs.iter().enumerate() {
                if let Some(t) = t {
                    sum.add_func(f, *t);
                }
            }
            for (k, p) in acc.phases.iter() {
                let s = sum.phases.entry(*k);
                s.self_ns += p.self_ns;
                s.io.merge(&p.io);
            }
            sum.io.merge(&acc.io);
            sum.mpi += acc.mpi;
            ranks.push(b);
        }
        let (mut total, _) = self.finish_rank(None, &sum, wall_sum);
        // The sum's "(none)" phase is the sum of the ranks' (each clamped on its own).
        total.phases.retain(|p| p.name != NO_PHASE);
        total.phases.push(part(
            NO_PHASE,
            None,
            none_sum.self_ns,
            wall_sum,
            Some(none_sum.io),
        ));
        sort_parts(&mut total.phases);
        Breakdown { total, ranks }
    }

    fn finish_rank(
        &self,
        rank: Option<i32>,
        acc: &RankAcc,
        wall: i64,
    ) -> (RankBreakdown, PhaseAcc) {
        let io_ns = acc.io.total_ns();
        let other = (wall - io_ns - acc.mpi).max(0);
        let sh = |x: i64| share(x, wall);
        let layers = Layer::ALL
            .iter()
            .enumerate()
            .filter(|(i, _)| acc.layers[*i] > 0)
            .map(|(i, l)| part(l.name(), None, acc.layers[i], wall, None))
            .collect();
        let mut funcs: Vec<Part> = (acc.funcs.iter().zip(&self.func_keys))
            .filter_map(|(t, &(l, f))| Some(part(self.classes.name(f), Some(l), (*t)?, wall, None)))
            .collect();
        sort_parts(&mut funcs);
        let none_id = self.names.lookup(NO_PHASE);
        let mut in_regions = 0;
        let mut phases: Vec<Part> = Vec::new();
        let mut none = PhaseAcc::default();
        for &(name, ref p) in acc.phases.iter() {
            if Some(name) == none_id {
                none.io = p.io;
                continue;
            }
            in_regions += p.self_ns.max(0);
            phases.push(part(
                self.names.get(name),
                None,
                p.self_ns.max(0),
                wall,
                Some(p.io),
            ));
        }
        none.self_ns = (wall - in_regions).max(0);
        phases.push(part(NO_PHASE, None, none.self_ns, wall, Some(none.io)));
        sort_parts(&mut phases);
        let b = RankBreakdown {
            rank,
            // The total (no rank) has no host.
            host: rank.and(acc.host).map(|h| self.names.get(h).to_string()),
            wall_ns: wall,
            io: acc.io,
            io_ns,
            mpi_ns: acc.mpi,
            other_ns: other,
            shares: Shares {
                io: sh(io_ns),
                data: sh(acc.io.data_ns),
                metadata: sh(acc.io.metadata_ns),
                sync: sh(acc.io.sync_ns),
                close: sh(acc.io.close_ns),
                wait: sh(acc.io.wait_ns),
                mpi: sh(acc.mpi),
                other: sh(other),
            },
            layers,
            functions: funcs,
            phases,
        };
        (b, none)
    }
}

fn share(x: i64, wall: i64) -> f64 {
    if wall > 0 {
        x as f64 / wall as f64
    } else {
        0.0
    }
}

fn part(name: &str, layer: Option<Layer>, t: i64, wall: i64, io: Option<IoSplit>) -> Part {
    Part {
        name: name.to_string(),
        layer,
        time_ns: t,
        share: share(t, wall),
        io,
    }
}

/// Largest first, then by name (stable output).
fn sort_parts(v: &mut [Part]) {
    v.sort_by(|a, b| b.time_ns.cmp(&a.time_ns).then_with(|| a.name.cmp(&b.name)));
}

impl Visitor for BreakdownVisitor {
    fn visit(&mut self, e: &Event<'_>, ctx: &Context<'_>) {
        let (func, class) = self.classes.entry(e);
        let phase = match e.region {
            Some(r) => self.names.id(r),
            None => self.none_phase(),
        };
        let (func_keys, key) = (&mut self.func_keys, (e.layer, func));
        let names = &mut self.names;
        let acc = self.ranks.at(e.rank);
        acc.host
            .get_or_insert_with(|| names.id(ctx.host_of_process(e.process)));
        acc.first = acc.first.min(e.start_ns);
        acc.last = acc.last.max(e.end_ns());
        let stack = self.nesting.enter(e, |_| {});
        let d = e.duration_ns.max(0);
        let same_layer_above = stack.iter().any(|f| f.data.layer == e.layer);
        let io_above = stack.iter().any(|f| is_io_layer(f.data.layer));
        if !same_layer_above {
            acc.layers[layer_index(e.layer)] += d;
            let f = self.func_at.at(key, || {
                func_keys.push(key);
                func_keys.len() - 1
            });
            acc.add_func(f, d);
        }
        match e.layer {
            Layer::Region => {
                // Own time minus nested regions: the enclosing region loses this one's span.
                acc.phases.entry(phase).self_ns += d;
                if let Some(outer) = stack.iter().rev().find_map(|f| f.data.region) {
                    acc.phases.entry(outer).self_ns -= d;
                }
            }
            Layer::Mpi if !same_layer_above && !io_above => acc.mpi += d,
            _ => {}
        }
        let outermost_io = stack
            .iter()
            .find(|f| is_io_layer(f.data.layer))
            .map(|f| (f.depth, f.data));
        if let Some((
            depth,
            Open {
                layer,
                io: Some(c),
                phase: io_phase,
                ..
            },
        )) = outermost_io
        {
            if is_wait(e.layer, e.depth, layer, depth, c) {
                acc.io.move_to_wait(c, d);
                acc.phases.entry(io_phase).io.move_to_wait(c, d);
            }
        }
        let io = class.filter(|_| !io_above);
        if let Some(c) = io {
            acc.io.add(c, d);
            acc.phases.entry(phase).io.add(c, d);
        }
        stack.push(Frame::of(
            e,
            Open {
                layer: e.layer,
                region: (e.layer == Layer::Region).then_some(phase),
                io,
                phase,
            },
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{self, coll, ev, io, region, FILE_A};

    /// One rank (times in ns, depth in brackets):
    ///   [0] region output        0..1000
    ///     [1] MPI_File_write_all 100..400   [2] pwrite 150..250
    ///     [1] MPI_File_close     500..800   [2] close  600..700
    ///     [1] MPI_Barrier        850..900
    ///   [0] MPI_File_open        1000..1100
    ///   [0] region compute       1200..2000
    ///     [1] MPI_Bcast          1300..1400 [2] MPI_Allreduce 1320..1340 (nested: not again)
    ///     [1] region inner       1500..1600
    fn one_rank(dir: &std::path::Path) -> pioscope_trace::store::Trace {
        let mut b = testutil::rank(0, 1, "n1");
        region(&mut b, 10, "output");
        region(&mut b, 11, "compute");
        region(&mut b, 12, "inner");
        b.events(
            0,
            &[
                ev("region", 0, 1000).object(10),
                coll(io("MPI_File_write_all", 100, 300, FILE_A, 0, 64), 2).depth(1),
                io("pwrite", 150, 100, FILE_A, 0, 64).depth(2),
                coll(ev("MPI_File_close", 500, 300).object(FILE_A), 3).depth(1),
                ev("close", 600, 100).object(FILE_A).depth(2),
                ev("MPI_Barrier", 850, 50).depth(1),
                coll(ev("MPI_File_open", 1000, 100).object(FILE_A), 1),
                ev("region", 1200, 800).object(11),
                ev("MPI_Bcast", 1300, 100).size(4).depth(1),
                ev("MPI_Allreduce", 1320, 20).size(4).depth(2),
                ev("region", 1500, 100).object(12).depth(1),
            ],
        );
        testutil::trace(dir, vec![b])
    }

    fn get<'a>(parts: &'a [Part], name: &str) -> &'a Part {
        parts
            .iter()
            .find(|p| p.name == name)
            .unwrap_or_else(|| panic!("no {name} in {parts:?}"))
    }

    #[test]
    fn outermost_calls_classes_and_phases() {
        let dir = tempfile::tempdir().expect("tmp");
        let t = one_rank(dir.path());
        let b = testutil::run(&t, BreakdownVisitor::new(), |v, _| v.result());
        assert_eq!(b.ranks.len(), 1);
        let r = &b.ranks[0];
        assert_eq!((r.rank, r.host.as_deref()), (Some(0), Some("n1")));
        assert_eq!(r.wall_ns, 2000);
        assert_eq!(
            r.io,
            IoSplit {
                data_ns: 300,
                metadata_ns: 100,
                sync_ns: 0,
                close_ns: 300,
                wait_ns: 0,
            },
            "pwrite and close are inside MPI-IO calls: counted once, at the outermost"
        );
        assert_eq!(r.io_ns, 700);
        assert_eq!(
            r.mpi_ns, 150,
            "Barrier 50 + Bcast 100; the Allreduce inside Bcast is not added"
        );
        assert_eq!(r.other_ns, 2000 - 700 - 150);
        let s = r.shares;
        assert!((s.io + s.mpi + s.other - 1.0).abs() < 1e-12);
        assert!((s.data + s.metadata + s.sync + s.close - s.io).abs() < 1e-12);
        assert_eq!(s.close, 300.0 / 2000.0);

        // Layers: outermost call of each layer.
        assert_eq!(get(&r.layers, "mpiio").time_ns, 700);
        assert_eq!(get(&r.layers, "posix").time_ns, 200);
        assert_eq!(get(&r.layers, "mpi").time_ns, 150);
        assert_eq!(
            get(&r.layers, "region").time_ns,
            1800,
            "inner is inside compute"
        );
        assert_eq!(get(&r.functions, "MPI_Bcast").time_ns, 100);
        assert!(r.functions.iter().all(|f| f.name != "MPI_Allreduce"));
        assert_eq!(get(&r.functions, "pwrite").layer, Some(Layer::Posix));

        // Phases: innermost region; they add up to the wall time.
        assert_eq!(get(&r.phases, "output").time_ns, 1000);
        assert_eq!(get(&r.phases, "compute").time_ns, 700);
        assert_eq!(get(&r.phases, "inner").time_ns, 100);
        assert_eq!(get(&r.phases, NO_PHASE).time_ns, 200);
        let sum: f64 = r.phases.iter().map(|p| p.share).sum();
        assert!((sum - 1.0).abs() < 1e-12, "{sum}");
        let out_io = get(&r.phases, "output").io.expect("io");
        assert_eq!((out_io.data_ns, out_io.close_ns), (300, 300));
        assert_eq!(get(&r.phases, NO_PHASE).io.expect("io").metadata_ns, 100);
        assert_eq!(r.phases[0].name, "output", "largest first");
    }

    /// Issue 13: the barrier inside a collective MPI_File_close and the allreduce inside
    /// MPI_File_open are waiting, not close or open time; the exchange inside a collective
    /// write stays data.
    #[test]
    fn mpi_inside_mpiio_metadata_calls_is_waiting() {
        let dir = tempfile::tempdir().expect("tmp");
        let mut b = testutil::rank(0, 1, "n1");
        b.events(
            0,
            &[
                coll(ev("MPI_File_open", 0, 100).object(FILE_A), 1),
                ev("MPI_Allreduce", 10, 60).size(4).depth(1),
                ev("open", 80, 10).object(FILE_A).depth(1),
                coll(io("MPI_File_write_all", 200, 300, FILE_A, 0, 64), 2),
                ev("MPI_Alltoall", 210, 100).size(4).depth(1),
                io("pwrite", 350, 100, FILE_A, 0, 64).depth(1),
                coll(ev("MPI_File_close", 600, 400).object(FILE_A), 3),
                ev("close", 610, 20).object(FILE_A).depth(1),
                ev("MPI_Barrier", 640, 350).depth(1),
                ev("MPI_Allreduce", 650, 50).size(4).depth(2),
            ],
        );
        let t = testutil::trace(dir.path(), vec![b]);
        let br = testutil::run(&t, BreakdownVisitor::new(), |v, _| v.result());
        let r = &br.ranks[0];
        assert_eq!(
            r.io,
            IoSplit {
                data_ns: 300,
                metadata_ns: 40,
                sync_ns: 0,
                close_ns: 50,
                wait_ns: 410,
            },
            "open 100 - allreduce 60, close 400 - barrier 350 (its nested allreduce not again)"
        );
        assert_eq!(r.io_ns, 800);
        assert_eq!(r.mpi_ns, 0, "inside I/O calls: not MPI time outside I/O");
        assert_eq!(get(&r.phases, NO_PHASE).io.expect("io").wait_ns, 410);
        assert_eq!(r.shares.wait, 410.0 / 1000.0);
    }

    #[test]
    fn total_sums_ranks() {
        let dir = tempfile::tempdir().expect("tmp");
        let mut a = testutil::rank(0, 2, "n1");
        a.events(
            0,
            &[
                io("pwrite", 0, 400, FILE_A, 0, 8),
                ev("fsync", 600, 400).object(FILE_A),
            ],
        );
        let mut c = testutil::rank(1, 2, "n2");
        c.events(
            0,
            &[
                io("pread", 0, 100, FILE_A, 0, 8),
                ev("close", 900, 100).object(FILE_A),
            ],
        );
        let t = testutil::trace(dir.path(), vec![a, c]);
        let b = testutil::run(&t, BreakdownVisitor::new(), |v, _| v.result());
        let tot = &b.total;
        assert_eq!((tot.rank, tot.host.clone()), (None, None));
        assert_eq!(tot.wall_ns, 2000);
        assert_eq!(
            tot.io,
            IoSplit {
                data_ns: 500,
                metadata_ns: 0,
                sync_ns: 400,
                close_ns: 100,
                wait_ns: 0,
            }
        );
        assert_eq!(tot.other_ns, 1000);
        assert_eq!(tot.shares.io, 0.5);
        assert_eq!(get(&tot.phases, NO_PHASE).time_ns, 2000);
        assert_eq!(b.ranks[1].host.as_deref(), Some("n2"));
    }
}
