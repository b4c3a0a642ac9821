//! One streaming pass over a trace's events, feeding every analysis at once. Statistics,
//! access patterns and finding rules are visitors: each keeps its own small state, sees the
//! events in store order (rank, then start time: a parent before its children) and concludes
//! at the end. One read of events.parquet, in small batches, serves them all, so the cost of
//! a report grows with the trace once, not once per analysis. The read decodes only the
//! columns visitors read ([`NOT_VISITED`] are left out).

use std::sync::mpsc::{sync_channel, Receiver};
use std::sync::Arc;

use pioscope_trace::store::schema::events as ev;
use pioscope_trace::store::{Event, EventBatch, StoreError, Trace};

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

/// An analysis fed by the pass. Its events lack the columns of [`NOT_VISITED`].
pub trait Visitor {
    /// One event the scope keeps, in store order.
    fn visit(&mut self, event: &Event<'_>, ctx: &Context<'_>);
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

/// Batches decoded ahead of each consumer: a few in flight keep the cores busy while both
/// groups of visitors work at their own pace, with a few small batches in memory at most.
const DECODED_AHEAD: usize = 4;

/// Rows per decoded batch. Both groups of visitors read every row of a batch; a batch this
/// small (2048 rows of about 200 bytes: 0.4 MB) still sits in a core's 4 MB L2 cache when the
/// scope and the visitors read it, beside the decoder's own buffers, with three threads taking
/// turns on two cores. A whole row group (a million rows, hundreds of MB) was read from memory
/// twice; 8192 rows cost 14 % more CPU than 2048 on the 10M trace (perf samples per thread).
const BATCH_ROWS: usize = 2048;

/// Streams every event of the trace once through `visitors` (those the scope keeps), then
/// finishes them. `progress(done, total)` is called after each row group.
///
/// A second thread decodes the next batches while the visitors see this one; the visitors
/// still see every event in store order, on this thread. (A [`run_beside`] with nothing
/// beside: its second group drops the feed at once.)
pub fn run(
    ctx: &Context<'_>,
    visitors: &mut [&mut dyn Visitor],
    progress: &mut dyn FnMut(usize, usize),
) -> Result<PassCounts, StoreError> {
    let (counts, ()) = run_beside(ctx, visitors, |_| {}, progress)?;
    Ok(counts)
}

/// What the scope makes of a row: kept, a server's record outside the scope (shown to the
/// visitors that see those), or left out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Seen {
    Kept,
    Server,
    Out,
}

/// A decoded batch and what the scope makes of each of its rows, decided once, on the thread
/// that decodes, for both groups of visitors.
pub struct Scoped {
    batch: EventBatch,
    seen: Vec<Seen>,
}

impl Scoped {
    fn new(batch: EventBatch, filter: &mut ScopeFilter) -> Scoped {
        let mut seen = Vec::with_capacity(batch.len());
        each_row(&batch, |_, e| {
            seen.push(match filter.keeps(e) {
                true => Seen::Kept,
                false if filter.is_server_record(e) => Seen::Server,
                false => Seen::Out,
            })
        });
        Scoped { batch, seen }
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

/// The events of a pass, handed to the visitors of [`run_beside`]'s second thread.
pub struct Feed<'c, 't> {
    ctx: &'c Context<'t>,
    batches: Receiver<Arc<Scoped>>,
}

impl Feed<'_, '_> {
    /// Shows every event to `visitors` (those the scope keeps), in store order, then finishes
    /// them. Stops early, quietly, when decoding failed: the pass returns that error.
    pub fn visit(self, visitors: &mut [&mut dyn Visitor]) {
        let mut counts = PassCounts::default();
        for batch in self.batches {
            show(&batch, visitors, self.ctx, &mut counts);
        }
        for v in visitors.iter_mut() {
            v.finish(self.ctx);
        }
    }
}

/// Like [`run`], with a second group of visitors on a thread of its own: `beside` is called on
/// that thread, builds its visitors there (so they may share state that cannot cross threads),
/// calls [`Feed::visit`] with them and returns what they concluded.
///
/// Each group sees every event in store order, exactly as in one group: the result of each
/// visitor does not depend on the split. One thread decodes each batch once (its rows built
/// as events there, the scope decided for each) and hands it to both groups, so the visitors'
/// work, which is most of a report's, runs on two cores.
pub fn run_beside<T: Send>(
    ctx: &Context<'_>,
    visitors: &mut [&mut dyn Visitor],
    beside: impl FnOnce(Feed<'_, '_>) -> T + Send,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<(PassCounts, T), StoreError> {
    let mut counts = PassCounts::default();
    let batches = ctx
        .trace
        .events()?
        .in_batches_of(BATCH_ROWS)
        .without(&NOT_VISITED);
    let total = batches.row_groups();
    let beside_result = std::thread::scope(|scope| {
        let (sender, receiver) = sync_channel(DECODED_AHEAD);
        let (beside_sender, beside_receiver) = sync_channel(DECODED_AHEAD);
        scope.spawn(move || {
            let mut filter = ScopeFilter::new(ctx.trace, ctx.scope);
            for batch in batches {
                let batch = batch.map(|b| Arc::new(Scoped::new(b, &mut filter)));
                if let Ok(b) = &batch {
                    // The second group may be gone (it panicked): the pass reports that at
                    // the join, this thread just stops feeding it.
                    let _ = beside_sender.send(Arc::clone(b));
                }
                let failed = batch.is_err();
                // The receiver hangs up only after an error of its own: stop decoding then.
                if sender.send(batch).is_err() || failed {
                    break;
                }
            }
        });
        let second = scope.spawn(move || {
            beside(Feed {
                ctx,
                batches: beside_receiver,
            })
        });
        let mut done = 0;
        for batch in receiver {
            let batch: Arc<Scoped> = batch?;
            show(&batch, visitors, ctx, &mut counts);
            if batch.batch.ends_row_group() {
                done += 1;
                progress(done, total);
            }
        }
        // A panic of the second group is a bug: raise it here as it was.
        Ok::<T, StoreError>(
            second
                .join()
                .unwrap_or_else(|p| std::panic::resume_unwind(p)),
        )
    })?;
    for v in visitors.iter_mut() {
        v.finish(ctx);
    }
    Ok((counts, beside_result))
}

/// Shows the events of one batch to `visitors` (those the scope keeps, and the server
/// records to the visitors that see them), counting them.
fn show(
    scoped: &Scoped,
    visitors: &mut [&mut dyn Visitor],
    ctx: &Context<'_>,
    counts: &mut PassCounts,
) {
    each_row(&scoped.batch, |i, e| {
        counts.events += 1;
        let seen = scoped.seen[i];
        if seen != Seen::Kept {
            counts.left_out += 1;
            if seen == Seen::Out {
                return;
            }
        }
        for v in visitors.iter_mut() {
            if seen == Seen::Kept || v.sees_server_records() {
                v.visit(e, ctx);
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{self, ev, io, FILE_A};

    /// Records the ids it is shown.
    #[derive(Default)]
    struct Ids(Vec<i64>);

    impl Visitor for Ids {
        fn visit(&mut self, event: &Event<'_>, _ctx: &Context<'_>) {
            self.0.push(event.id);
        }
    }

    /// The group beside sees exactly the events the group on the calling thread sees, in the
    /// same (store) order.
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
        let mut here = Ids::default();
        let (counts, beside) = run_beside(
            &ctx,
            &mut [&mut here],
            |feed| {
                let mut ids = Ids::default();
                feed.visit(&mut [&mut ids]);
                ids.0
            },
            &mut |_, _| {},
        )
        .expect("pass");
        assert_eq!((counts.events, counts.left_out), (6, 0));
        assert_eq!(here.0, (0..6).collect::<Vec<i64>>());
        assert_eq!(beside, here.0);
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
        let mpi = |e: &Event<'_>| e.comm.is_some() || e.comm_size.is_some() || e.root.is_some();
        assert_eq!(whole.iter().filter(|e| mpi(e)).count(), 2);
        let expected: Vec<Event<'_>> = whole
            .into_iter()
            .map(|e| Event {
                request: None,
                peer: None,
                tag: None,
                root: None,
                comm_size: None,
                comm: None,
                ..e
            })
            .collect();
        let read: Vec<Event<'_>> = small.iter().flat_map(|b| b.iter()).collect();
        assert_eq!(read, expected);
    }
}
