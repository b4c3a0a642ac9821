//! The rules as one visitor of the pass. The facts of each record (`util::Facts`) are worked
//! out once and handed to each rule, and a rule is shown only the records its [`Interest`]
//! names: most records concern a few of the thirty rules, and a call per rule and record was
//! most of the findings' cost.

use std::ops::{Deref, DerefMut};

use pioscope_trace::store::Event;
use pioscope_trace::{Layer, OpKind};
use rustc_hash::FxHashMap;

use super::util::{Facts, SharedState};
use super::Rule;
use crate::pass::{Context, Visitor};
use crate::scope::ScopeFilter;

/// The record is of layer `l`.
pub(crate) const fn layer(l: Layer) -> u32 {
    1 << l as u32
}
/// POSIX records.
pub(crate) const POSIX: u32 = layer(Layer::Posix);
/// STDIO records.
pub(crate) const STDIO: u32 = layer(Layer::Stdio);
/// MPI records.
pub(crate) const MPI: u32 = layer(Layer::Mpi);
/// HDF5 records.
pub(crate) const HDF5: u32 = layer(Layer::Hdf5);
/// PnetCDF records.
pub(crate) const PNETCDF: u32 = layer(Layer::Pnetcdf);
/// An I/O record no other encloses (`Facts::top_level`).
pub(crate) const TOP: u32 = 1 << 16;
/// A top-level MPI-IO call (`Facts::call`).
pub(crate) const CALL: u32 = 1 << 17;
/// A record inside a top-level MPI-IO call (`Facts::parent`).
pub(crate) const IN_CALL: u32 = 1 << 18;
/// Ranks waiting for each other inside a call (`Facts::wait`).
pub(crate) const WAIT: u32 = 1 << 19;
/// A record inside an HDF5 or PnetCDF call (`Facts::library`).
pub(crate) const LIBRARY: u32 = 1 << 20;
/// A read or a write (`Facts::data`).
pub(crate) const DATA: u32 = 1 << 21;
/// A read (`OpKind::Read`).
pub(crate) const READ: u32 = 1 << 22;
/// A write (`OpKind::Write`).
pub(crate) const WRITE: u32 = 1 << 23;
/// A record no traced call encloses (`depth` 0).
pub(crate) const OUTER: u32 = 1 << 24;
/// A record inside a collective top-level MPI-IO call (`Parent::collective`).
pub(crate) const IN_COLLECTIVE: u32 = 1 << 25;
/// A record inside an independent top-level MPI-IO call.
pub(crate) const IN_INDEPENDENT: u32 = 1 << 26;

/// The records a rule looks at: those with every bit of one of its clauses (the constants of
/// this module). A rule's `visit` must do nothing with the others; the facts still follow
/// every record.
#[derive(Clone, Copy, Debug)]
pub struct Interest(&'static [u32]);

impl Interest {
    /// Every record.
    pub const EVERY: Interest = Interest(&[0]);
    /// No record (a rule judged from other sources).
    pub const NONE: Interest = Interest(&[]);

    /// The records with every bit of one of `clauses`.
    pub(crate) const fn any_of(clauses: &'static [u32]) -> Interest {
        Interest(clauses)
    }

    fn takes(self, bits: u32) -> bool {
        self.0.iter().any(|&c| c & !bits == 0)
    }
}

/// The facts of the flags (the bits from `TOP` up), as the low bits of a [`Rules`] table key.
const FLAGS_SHIFT: u32 = 16;
/// Flags in a key.
const FLAGS: usize = 11;

/// The [`Rules`] table key of a record with facts `fx`: its layer, then its flags.
#[inline]
fn key(e: &Event<'_>, fx: &Facts) -> usize {
    let flag = |on: bool, bit: u32| if on { bit >> FLAGS_SHIFT } else { 0 };
    let flags = flag(fx.top_level, TOP)
        | flag(fx.call.is_some(), CALL)
        | flag(fx.parent.is_some(), IN_CALL)
        | flag(fx.wait, WAIT)
        | flag(fx.library.is_some(), LIBRARY)
        | flag(fx.data(), DATA)
        | flag(fx.kind == OpKind::Read, READ)
        | flag(fx.kind == OpKind::Write, WRITE)
        | flag(e.depth == 0, OUTER)
        | flag(fx.parent.is_some_and(|p| p.collective), IN_COLLECTIVE)
        | flag(fx.parent.is_some_and(|p| !p.collective), IN_INDEPENDENT);
    (e.layer as usize) << FLAGS | flags as usize
}

/// The enabled rules (`super::rules`), visiting as one.
pub struct Rules {
    list: Vec<Box<dyn Rule>>,
    /// Per table key (see `key`), the place in `takers` of the rules whose interest takes such
    /// a record: a table of 2-byte entries stays in the cache, as the records' keys vary.
    table: Vec<u16>,
    /// The distinct lists of rules taking a record, each in order, without the rules idle in
    /// this pass (`Rule::idle`).
    takers: Vec<Box<[usize]>>,
    /// Works out the facts of each record.
    state: SharedState,
    /// Whether the table is made (at the first record).
    ready: bool,
    /// Tells a storage server's records (shown only to the rules that see them, outside the
    /// scope of the facts) from the others; None when the pass has none apart (the scope keeps
    /// every record, or the trace has no server).
    servers: Option<ScopeFilter>,
}

impl Rules {
    /// `list`, as one visitor.
    pub(crate) fn new(list: Vec<Box<dyn Rule>>) -> Rules {
        Rules {
            list,
            table: Vec::new(),
            takers: Vec::new(),
            state: SharedState::default(),
            ready: false,
            servers: None,
        }
    }

    /// Makes `table` and `takers` for the pass of `ctx`, and `servers`.
    fn prepare(&mut self, ctx: &Context<'_>) {
        let interests: Vec<Interest> = self
            .list
            .iter_mut()
            .map(|r| {
                if r.idle(ctx) {
                    Interest::NONE
                } else {
                    r.interest()
                }
            })
            .collect();
        let mut places: FxHashMap<Box<[usize]>, u16> = FxHashMap::default();
        self.table = (0..Layer::ALL.len() << FLAGS)
            .map(|k| {
                let bits = 1 << (k >> FLAGS) | ((k & ((1 << FLAGS) - 1)) as u32) << FLAGS_SHIFT;
                let list: Box<[usize]> = (0..interests.len())
                    .filter(|&r| interests[r].takes(bits))
                    .collect();
                let next = places.len() as u16;
                *places.entry(list).or_insert(next)
            })
            .collect();
        let mut takers: Vec<(u16, Box<[usize]>)> =
            places.into_iter().map(|(l, i)| (i, l)).collect();
        takers.sort_unstable_by_key(|(i, _)| *i);
        self.takers = takers.into_iter().map(|(_, l)| l).collect();
        let filter = ScopeFilter::new(ctx.trace, ctx.scope);
        self.servers = filter.separates_servers().then_some(filter);
        self.ready = true;
    }
}

impl Deref for Rules {
    type Target = [Box<dyn Rule>];
    fn deref(&self) -> &Self::Target {
        &self.list
    }
}

impl DerefMut for Rules {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.list
    }
}

impl Visitor for Rules {
    fn visit(&mut self, e: &Event<'_>, ctx: &Context<'_>) {
        if !self.ready {
            self.prepare(ctx);
        }
        // The pass shows a record outside the scope only when it is a server's.
        if self.servers.as_ref().is_some_and(|s| s.is_server_record(e)) {
            for r in self.list.iter_mut().filter(|r| r.sees_server_records()) {
                r.visit(e, &Facts::NONE, ctx);
            }
            return;
        }
        let fx = self.state.enter(e);
        for &r in self.takers[self.table[key(e, fx)] as usize].iter() {
            self.list[r].visit(e, fx, ctx);
        }
    }

    fn sees_server_records(&self) -> bool {
        self.list.iter().any(|r| r.sees_server_records())
    }

    fn finish(&mut self, ctx: &Context<'_>) {
        for r in self.list.iter_mut() {
            r.finish(ctx);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::super::Finding;
    use super::*;
    use crate::pass;
    use crate::scope::Scope;
    use crate::testutil::{self, coll, ev, io, FILE_A};

    /// Records the ids it is shown.
    struct Shown(Interest, Arc<Mutex<Vec<i64>>>);

    impl Rule for Shown {
        fn visit(&mut self, e: &Event<'_>, _fx: &Facts, _ctx: &Context<'_>) {
            self.1.lock().expect("ids").push(e.id);
        }
        fn interest(&self) -> Interest {
            self.0
        }
        fn conclude(&self, _ctx: &Context<'_>) -> Vec<Finding> {
            Vec::new()
        }
    }

    /// Each rule is shown exactly the records one of its clauses takes, in store order.
    #[test]
    fn a_rule_sees_the_records_of_its_interest() {
        let dir = tempfile::tempdir().expect("tmp");
        let mut b = testutil::rank(0, 1, "n1");
        b.events(
            0,
            &[
                coll(io("MPI_File_write_all", 100, 1000, FILE_A, 0, 64), 1),
                io("pwrite", 200, 100, FILE_A, 0, 64).depth(1),
                ev("MPI_Barrier", 2000, 10),
                io("pwrite", 3000, 10, FILE_A, 64, 8),
            ],
        );
        let t = testutil::trace(dir.path(), vec![b]);
        let ctx = pass::context(&t, Scope::Application).expect("context");
        let interests = [
            Interest::EVERY,
            Interest::any_of(&[CALL]),
            Interest::any_of(&[POSIX | IN_CALL]),
            Interest::any_of(&[TOP | DATA]),
            Interest::any_of(&[MPI, CALL]),
            Interest::NONE,
        ];
        let shown: Vec<Arc<Mutex<Vec<i64>>>> = interests.iter().map(|_| Arc::default()).collect();
        let list: Vec<Box<dyn Rule>> = (interests.iter().zip(&shown))
            .map(|(i, s)| Box::new(Shown(*i, Arc::clone(s))) as Box<dyn Rule>)
            .collect();
        let mut rules = Rules::new(list);
        pass::run(&ctx, &mut [&mut rules], &mut |_, _| {}).expect("pass");
        let shown: Vec<Vec<i64>> = shown
            .iter()
            .map(|s| s.lock().expect("ids").clone())
            .collect();
        assert_eq!(
            shown,
            vec![
                vec![0, 1, 2, 3],
                vec![0],
                vec![1],
                vec![0, 3],
                vec![0, 2],
                vec![],
            ]
        );
    }
}
