//! One streaming pass over a trace's events, feeding every analysis at once. Statistics,
//! access patterns and finding rules are visitors: each keeps its own small state, sees the
//! events in store order (rank, then start time: a parent before its children) and concludes
//! at the end. One read of events.parquet, in small batches, serves them all, so the cost of
//! a report grows with the trace once, not once per analysis. The read decodes only the
//! columns visitors read ([`NOT_VISITED`] are left out).

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

use pioscope_trace::store::schema::events as ev;
use pioscope_trace::store::{Event, EventBatch, EventBatches, StoreError, Trace};

use crate::hints::Hints;
use crate::scope::{Scope, ScopeFilter};

/// What every visitor may consult besides the events: the trace (meta.json, files) and its
/// settings (MPI-IO hints and views, small).
pub struct Context<'t> {
    /// The open trace.
    pub trace: &'t Trace,
    /// settings.parquet, indexed.
    pub hints: Hints,
    /// What the pass counts.
    pub scope: Scope,
}

impl Context<'_> {
    /// The host of process `process` (meta.json `processes`; "" if unknown).
    pub fn host_of_process(&self, process: i32) -> &str {
        let processes = &self.trace.meta.processes;
        usize::try_from(process)
            .ok()
            .and_then(|i| processes.get(i))
            .map_or("", |p| p.host.as_str())
    }
}

/// The columns of events.parquet no visitor reads: the pass does not decode them, and its
/// events have them empty (None). A visitor that needs one takes it out of this list.
pub const NOT_VISITED: [&str; 6] = [
    ev::REQUEST,
    ev::PEER,
    ev::TAG,
    ev::ROOT,
    ev::COMM_SIZE,
    ev::COMM,
];

/// An analysis fed by the pass. Its events lack the columns of [`NOT_VISITED`]. Send: the
/// pass's workers take turns at running a group of visitors.
pub trait Visitor: Send {
    /// One event the scope keeps, in store order.
    fn visit(&mut self, event: &Event<'_>, ctx: &Context<'_>);
    /// The events of a batch, in store order, `visit`ed where `shown` is true. One loop per
    /// visitor and batch rather than a call through the table per event: the visitor's state
    /// stays in the cache through the batch, and its own `visit` is called directly.
    fn visit_rows(&mut self, events: &[Event<'_>], shown: &[bool], ctx: &Context<'_>) {
        for (e, _) in events.iter().zip(shown).filter(|(_, shown)| **shown) {
            self.visit(e, ctx);
        }
    }
    /// Whether it also sees the records of traced server daemons, which the application scope
    /// leaves out (the server table: they are its subject).
    fn sees_server_records(&self) -> bool {
        false
    }
    /// After the last event.
    fn finish(&mut self, _ctx: &Context<'_>) {}
}

/// Counts of one pass.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PassCounts {
    /// Events read.
    pub events: u64,
    /// Events the scope left out (not shown to the visitors).
    pub left_out: u64,
}

/// Builds the context of `trace` (reads and indexes settings.parquet).
pub fn context(trace: &Trace, scope: Scope) -> Result<Context<'_>, StoreError> {
    Ok(Context {
        trace,
        hints: Hints::new(&trace.settings()?),
        scope,
    })
}

/// Batches decoded and not yet seen by every group. A few: their memory is reused while still
/// in the cache (32 made the rows' build 50 % dearer: fresh memory, zeroed by the kernel),
/// and the workers find work anyway, each taking whichever stage can go on.
const DECODED_AHEAD: usize = 4;

/// Rows per decoded batch. Every group of visitors reads every row of a batch; a batch this
/// small (4096 rows of about 200 bytes: 0.8 MB) is still in the caches when the scope and the
/// visitors read it. A whole row group (a million rows, hundreds of MB) was read from memory
/// twice. Since the rows are built in blocks that stay in the L1 cache (`EventBatch`), 4096
/// rows cost 5 % less CPU than 2048 (fewer steps of the pass, fewer calls into the decoder:
/// 22.6 s against 23.7 s on 100M events, median of 4 interleaved); 8192 no less than 4096.
const BATCH_ROWS: usize = 4096;

/// Streams every event of the trace once through `visitors` (those the scope keeps), then
/// finishes them. `progress(done, total)` is called after each row group, on this thread.
/// (A [`run_groups`] of one group: decoding and visiting are still two stages, run side by
/// side on a machine of two cores or more.)
pub fn run(
    ctx: &Context<'_>,
    visitors: &mut [&mut dyn Visitor],
    progress: &mut dyn FnMut(usize, usize),
) -> Result<PassCounts, StoreError> {
    run_groups(ctx, &mut [visitors], progress)
}

/// A decoded batch and what the scope makes of each of its rows, decided once, when it is
/// decoded, for every group of visitors: kept, or a server's record outside the scope (shown
/// only to the visitors that see those), or left out.
pub struct Scoped {
    batch: EventBatch,
    /// Per row: the scope keeps it.
    kept: Vec<bool>,
    /// Per row: the scope keeps it or it is a server's record.
    kept_or_server: Vec<bool>,
    left_out: u64,
}

impl Scoped {
    fn new(batch: EventBatch, filter: &mut ScopeFilter) -> Scoped {
        let mut kept = Vec::with_capacity(batch.len());
        let mut kept_or_server = Vec::with_capacity(batch.len());
        each_row(&batch, |_, e| {
            let keeps = filter.keeps(e);
            kept.push(keeps);
            kept_or_server.push(keeps || filter.is_server_record(e));
        });
        let left_out = kept.iter().filter(|k| !**k).count() as u64;
        Scoped {
            batch,
            kept,
            kept_or_server,
            left_out,
        }
    }

    /// Which rows `visitor` is shown.
    fn shown_to(&self, visitor: &dyn Visitor) -> &[bool] {
        match visitor.sees_server_records() {
            true => &self.kept_or_server,
            false => &self.kept,
        }
    }
}

/// Calls `f` with each row of `batch` and its number, in order. Rows that lack no string are
/// lent as the batch holds them; the others are built, by index rather than `batch.iter()`:
/// in place, not built and moved.
#[inline]
fn each_row(batch: &EventBatch, mut f: impl FnMut(usize, &Event<'_>)) {
    match batch.whole_rows() {
        Some(rows) => rows.iter().enumerate().for_each(|(i, e)| f(i, e)),
        None => (0..batch.len()).for_each(|i| f(i, &batch.get(i))),
    }
}

/// The decoding stage: the store's batches in order, each scoped as it is decoded.
struct Decoder {
    batches: EventBatches,
    filter: ScopeFilter,
}

impl Decoder {
    fn next(&mut self) -> Option<Result<Arc<Scoped>, StoreError>> {
        let batch = self.batches.next()?;
        Some(batch.map(|b| Arc::new(Scoped::new(b, &mut self.filter))))
    }
}

/// One group of visitors and how far it has got: `visitors` is None while a worker shows
/// them a batch.
struct Lane<'g, 'v> {
    visitors: Option<&'g mut [&'v mut dyn Visitor]>,
    /// Number of the next batch it sees.
    next: usize,
}

/// What the workers of a pass share, under one lock. Each stage (decoding, and each group of
/// visitors) is taken off the board by the worker that runs it for one batch and put back
/// after: no two workers run one stage, so each group sees the batches in store order, and a
/// worker that finishes a step takes whichever stage can go on, so no core waits while there
/// is work (three threads, one per stage, on two cores left one idle a quarter of the time).
struct Board<'g, 'v> {
    /// None while a worker decodes.
    decoder: Option<Box<Decoder>>,
    decoded_all: bool,
    /// Batches decoded and not yet seen by every group, oldest first.
    ready: VecDeque<Arc<Scoped>>,
    /// Number of the batch at the front of `ready`.
    first: usize,
    lanes: Vec<Lane<'g, 'v>>,
    /// Row groups the first group has seen whole.
    row_groups_seen: usize,
    /// Events the first group has been through (every group sees the same).
    counts: PassCounts,
    error: Option<StoreError>,
    /// A worker panicked: the others stop, and the pass raises the panic.
    abandoned: bool,
}

/// A worker's next step.
enum Step<'g, 'v> {
    Decode(Box<Decoder>),
    Visit(usize, &'g mut [&'v mut dyn Visitor], Arc<Scoped>),
    Wait,
    Stop,
}

/// A stage of the pass: decoding, or a group of visitors (by number).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Stage {
    Decoding,
    Group(usize),
}

impl<'g, 'v> Board<'g, 'v> {
    /// The worker's last stage again when it can go on (its state stays in that core's cache),
    /// else the group furthest behind that has a batch to see, else decoding while fewer than
    /// [`DECODED_AHEAD`] batches wait; else waiting, or stopping when all is done (or failed).
    fn take_step(&mut self, last: Option<Stage>) -> Step<'g, 'v> {
        if self.abandoned || self.error.is_some() {
            return Step::Stop;
        }
        let end = self.first + self.ready.len();
        let can_visit = |l: &Lane<'_, '_>| l.visitors.is_some() && l.next < end;
        let can_decode = !self.decoded_all && self.ready.len() < DECODED_AHEAD;
        let stage = match last {
            Some(Stage::Group(g)) if can_visit(&self.lanes[g]) => Some(Stage::Group(g)),
            Some(Stage::Decoding) if can_decode && self.decoder.is_some() => Some(Stage::Decoding),
            _ => (self.lanes.iter().enumerate())
                .filter(|(_, l)| can_visit(l))
                .min_by_key(|(_, l)| l.next)
                .map(|(g, _)| Stage::Group(g))
                .or((can_decode && self.decoder.is_some()).then_some(Stage::Decoding)),
        };
        match stage {
            Some(Stage::Group(g)) => {
                let lane = &mut self.lanes[g];
                let visitors = lane.visitors.take().expect("a lane that can visit");
                Step::Visit(g, visitors, Arc::clone(&self.ready[lane.next - self.first]))
            }
            Some(Stage::Decoding) => Step::Decode(self.decoder.take().expect("checked")),
            None if self.decoded_all
                && self
                    .lanes
                    .iter()
                    .all(|l| l.visitors.is_some() && l.next == end) =>
            {
                Step::Stop
            }
            None => Step::Wait,
        }
    }

    fn decoded(&mut self, decoder: Box<Decoder>, batch: Option<Result<Arc<Scoped>, StoreError>>) {
        self.decoder = Some(decoder);
        match batch {
            None => self.decoded_all = true,
            Some(Ok(b)) if !self.lanes.is_empty() => self.ready.push_back(b),
            // No group to see it: the pass only reads the events through.
            Some(Ok(_)) => {}
            Some(Err(e)) => self.error = Some(e),
        }
    }

    fn visited(&mut self, g: usize, visitors: &'g mut [&'v mut dyn Visitor], batch: &Scoped) {
        let lane = &mut self.lanes[g];
        lane.visitors = Some(visitors);
        lane.next += 1;
        if g == 0 {
            self.counts.events += batch.kept.len() as u64;
            self.counts.left_out += batch.left_out;
            self.row_groups_seen += usize::from(batch.batch.ends_row_group());
        }
        let slowest = self
            .lanes
            .iter()
            .map(|l| l.next)
            .min()
            .unwrap_or(self.first);
        while self.first < slowest {
            self.ready.pop_front();
            self.first += 1;
        }
    }
}

/// The board and the signal that it changed.
struct Shared<'g, 'v> {
    board: Mutex<Board<'g, 'v>>,
    changed: Condvar,
}

impl<'g, 'v> Shared<'g, 'v> {
    fn lock(&self) -> MutexGuard<'_, Board<'g, 'v>> {
        // A worker panics only outside the lock (in a visitor or the decoder).
        self.board.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs steps until the pass is done, failed or abandoned. `report` is called after each
    /// step, and at the end, with the row groups seen so far (the last may have been seen by
    /// another worker).
    fn work(&self, ctx: &Context<'_>, report: &mut dyn FnMut(usize)) {
        let _abandon = AbandonOnPanic(self);
        let mut board = self.lock();
        let mut last = None;
        loop {
            match board.take_step(last) {
                Step::Stop => break,
                Step::Wait => {
                    board = self
                        .changed
                        .wait(board)
                        .unwrap_or_else(PoisonError::into_inner);
                    continue;
                }
                Step::Decode(mut decoder) => {
                    last = Some(Stage::Decoding);
                    drop(board);
                    let batch = decoder.next();
                    board = self.lock();
                    board.decoded(decoder, batch);
                }
                Step::Visit(g, visitors, batch) => {
                    last = Some(Stage::Group(g));
                    drop(board);
                    show(&batch, visitors, ctx);
                    board = self.lock();
                    board.visited(g, visitors, &batch);
                }
            }
            self.changed.notify_all();
            let seen = board.row_groups_seen;
            drop(board);
            report(seen);
            board = self.lock();
        }
        let seen = board.row_groups_seen;
        drop(board);
        self.changed.notify_all();
        report(seen);
    }
}

/// Stops the other workers when this one panics (its stage is gone with it).
struct AbandonOnPanic<'s, 'g, 'v>(&'s Shared<'g, 'v>);

impl Drop for AbandonOnPanic<'_, '_, '_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.lock().abandoned = true;
            self.0.changed.notify_all();
        }
    }
}

/// Workers of a pass: one per stage (decoding, each group), at most one per core, the
/// calling thread among them.
fn workers(groups: usize) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    cores.clamp(1, groups + 1)
}

/// Streams every event of the trace once through each group of visitors (those the scope
/// keeps), then finishes them. `progress(done, total)` is called after each row group, on this
/// thread.
///
/// Each group sees every event in store order, exactly as alone: the result of each visitor
/// does not depend on the groups. Each batch is decoded once (its rows built as events, the
/// scope decided for each) and shown to every group; the decoding and the groups are stages
/// that the pass's workers take in turn, so a group of visitors, most of a report's work, runs
/// beside the decoding and the other groups on the machine's cores.
pub fn run_groups(
    ctx: &Context<'_>,
    groups: &mut [&mut [&mut dyn Visitor]],
    progress: &mut dyn FnMut(usize, usize),
) -> Result<PassCounts, StoreError> {
    let batches = ctx
        .trace
        .events()?
        .in_batches_of(BATCH_ROWS)
        .without(&NOT_VISITED);
    let total = batches.row_groups();
    let workers = workers(groups.len());
    let lanes = (groups.iter_mut())
        .map(|visitors| Lane {
            visitors: Some(&mut **visitors),
            next: 0,
        })
        .collect();
    let shared = Shared {
        board: Mutex::new(Board {
            decoder: Some(Box::new(Decoder {
                batches,
                filter: ScopeFilter::new(ctx.trace, ctx.scope),
            })),
            decoded_all: false,
            ready: VecDeque::new(),
            first: 0,
            lanes,
            row_groups_seen: 0,
            counts: PassCounts::default(),
            error: None,
            abandoned: false,
        }),
        changed: Condvar::new(),
    };
    std::thread::scope(|scope| {
        let helpers: Vec<_> = (1..workers)
            .map(|_| scope.spawn(|| shared.work(ctx, &mut |_| {})))
            .collect();
        let mut reported = 0;
        shared.work(ctx, &mut |seen| {
            if seen > reported {
                reported = seen;
                progress(seen, total);
            }
        });
        // A panic of a worker is a bug: raise it here as it was.
        for helper in helpers {
            helper
                .join()
                .unwrap_or_else(|p| std::panic::resume_unwind(p));
        }
    });
    let board = shared
        .board
        .into_inner()
        .unwrap_or_else(PoisonError::into_inner);
    if let Some(e) = board.error {
        return Err(e);
    }
    let counts = board.counts;
    drop(board);
    for visitors in groups.iter_mut() {
        for v in visitors.iter_mut() {
            v.finish(ctx);
        }
    }
    Ok(counts)
}

/// Shows the events of one batch to `visitors` (those the scope keeps, and the server
/// records to the visitors that see them).
fn show(scoped: &Scoped, visitors: &mut [&mut dyn Visitor], ctx: &Context<'_>) {
    match scoped.batch.whole_rows() {
        Some(rows) => {
            for v in visitors.iter_mut() {
                let shown = scoped.shown_to(&**v);
                v.visit_rows(rows, shown, ctx);
            }
        }
        None => each_row(&scoped.batch, |i, e| {
            for v in visitors.iter_mut() {
                if scoped.shown_to(&**v)[i] {
                    v.visit(e, ctx);
                }
            }
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{self, ev, io, FILE_A};
    use pioscope_trace::store::MpiRef;

    /// Records the ids it is shown.
    #[derive(Default)]
    struct Ids(Vec<i64>);

    impl Visitor for Ids {
        fn visit(&mut self, event: &Event<'_>, _ctx: &Context<'_>) {
            self.0.push(event.id);
        }
    }

    /// Each group sees exactly the events the other sees, in the same (store) order.
    #[test]
    fn both_groups_see_every_kept_event_in_store_order() {
        let dir = tempfile::tempdir().expect("tmp");
        let mut ranks = Vec::new();
        for r in 0..2u32 {
            let mut b = testutil::rank(r, 2, "n1");
            b.events(
                0,
                &[
                    io("pwrite", 100, 10, FILE_A, 0, 8),
                    ev("MPI_Barrier", 200, 10),
                    io("pread", 300, 10, FILE_A, 0, 8),
                ],
            );
            ranks.push(b);
        }
        let t = testutil::trace(dir.path(), ranks);
        let ctx = context(&t, Scope::Application).expect("context");
        let (mut here, mut beside) = (Ids::default(), Ids::default());
        let counts = run_groups(
            &ctx,
            &mut [&mut [&mut here], &mut [&mut beside]],
            &mut |_, _| {},
        )
        .expect("pass");
        assert_eq!((counts.events, counts.left_out), (6, 0));
        assert_eq!(here.0, (0..6).collect::<Vec<i64>>());
        assert_eq!(beside.0, here.0);
    }

    /// A pass without a group of visitors reads the events through and ends (more batches
    /// than are decoded ahead: none is ever seen by every group).
    #[test]
    fn a_pass_without_groups_ends() {
        let dir = tempfile::tempdir().expect("tmp");
        let mut b = testutil::rank(0, 1, "n1");
        let rows = (DECODED_AHEAD + 1) * BATCH_ROWS;
        let calls: Vec<_> = (0..rows as u64)
            .map(|i| ev("MPI_Barrier", 100 * (i + 1), 10))
            .collect();
        b.events(0, &calls);
        let t = testutil::trace(dir.path(), vec![b]);
        let ctx = context(&t, Scope::Application).expect("context");
        let counts = run_groups(&ctx, &mut [], &mut |_, _| {}).expect("pass");
        assert_eq!(counts, PassCounts::default());
    }

    /// Panics at its third event.
    struct Fails(u32);

    impl Visitor for Fails {
        fn visit(&mut self, _event: &Event<'_>, _ctx: &Context<'_>) {
            self.0 += 1;
            assert!(self.0 < 3, "visitor fails");
        }
    }

    /// A visitor that panics makes the pass panic with its message, whichever worker ran it;
    /// the other workers stop instead of waiting for its group.
    #[test]
    fn a_panicking_visitor_ends_the_pass() {
        let dir = tempfile::tempdir().expect("tmp");
        let mut b = testutil::rank(0, 1, "n1");
        let calls: Vec<_> = (0..5)
            .map(|i| ev("MPI_Barrier", 100 * (i + 1), 10))
            .collect();
        b.events(0, &calls);
        let t = testutil::trace(dir.path(), vec![b]);
        let ctx = context(&t, Scope::Application).expect("context");
        let panic = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let (mut ids, mut fails) = (Ids::default(), Fails(0));
            run_groups(
                &ctx,
                &mut [&mut [&mut ids], &mut [&mut fails]],
                &mut |_, _| {},
            )
        }))
        .expect_err("the pass panics");
        assert_eq!(panic.downcast_ref::<&str>(), Some(&"visitor fails"));
    }

    /// The pass's read, in small batches without the columns no visitor reads, holds the same
    /// events in the same order as one batch per row group (those columns empty), the last
    /// batch of the row group marked as such.
    #[test]
    fn small_batches_hold_the_same_events() {
        let dir = tempfile::tempdir().expect("tmp");
        let mut b = testutil::rank(0, 1, "n1");
        b.events(
            0,
            &[
                io("pwrite", 100, 10, FILE_A, 0, 8),
                ev("MPI_Barrier", 200, 10),
                io("pread", 300, 10, FILE_A, 8, 8),
                ev("MPI_Barrier", 400, 10),
                io("pwrite", 500, 10, FILE_A, 16, 8),
            ],
        );
        let t = testutil::trace(dir.path(), vec![b]);
        let whole: Vec<EventBatch> = t
            .events()
            .expect("events")
            .map(|b| b.expect("batch"))
            .collect();
        let small: Vec<EventBatch> = (t.events().expect("events").in_batches_of(2))
            .without(&NOT_VISITED)
            .map(|b| b.expect("batch"))
            .collect();
        let ends: Vec<(usize, bool)> = small
            .iter()
            .map(|b| (b.len(), b.ends_row_group()))
            .collect();
        assert_eq!(ends, vec![(2, false), (2, false), (1, true)]);
        // The whole read has the barriers' MPI columns; the pass's has none of the columns it
        // leaves out.
        let whole: Vec<Event<'_>> = whole.iter().flat_map(|b| b.iter()).collect();
        let mpi = |e: &Event<'_>| e.comm.is_some() || e.mpi != MpiRef::NONE;
        assert_eq!(whole.iter().filter(|e| mpi(e)).count(), 2);
        let expected: Vec<Event<'_>> = whole
            .into_iter()
            .map(|e| Event {
                mpi: MpiRef::NONE,
                comm: None,
                ..e
            })
            .collect();
        let read: Vec<Event<'_>> = small.iter().flat_map(|b| b.iter()).collect();
        assert_eq!(read, expected);
    }
}
