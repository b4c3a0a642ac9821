//! One streaming pass over a trace's events, feeding every analysis at once. Statistics,
//! access patterns and finding rules are visitors: each keeps its own small state, sees the
//! events in store order (rank, then start time: a parent before its children) and concludes
//! at the end. One read of events.parquet, row group by row group, serves them all, so the
//! cost of a report grows with the trace once, not once per analysis.

use pioscope_trace::store::{Event, StoreError, Trace};

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

/// An analysis fed by the pass.
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

/// Row groups decoded ahead of the visitors: one in flight while the visitors work on the
/// previous one keeps both cores busy with at most two decoded row groups in memory.
const DECODED_AHEAD: usize = 1;

/// Streams every event of the trace once through `visitors` (those the scope keeps), then
/// finishes them. `progress(done, total)` is called after each row group.
///
/// Decoding Parquet and visiting take about the same time, so a second thread decodes row
/// group n+1 while the visitors see row group n; the visitors still see every event in store
/// order, on this thread.
pub fn run(
    ctx: &Context<'_>,
    visitors: &mut [&mut dyn Visitor],
    progress: &mut dyn FnMut(usize, usize),
) -> Result<PassCounts, StoreError> {
    let mut filter = ScopeFilter::new(ctx.trace, ctx.scope);
    let mut counts = PassCounts::default();
    let batches = ctx.trace.events()?;
    let total = batches.row_groups();
    std::thread::scope(|scope| {
        let (sender, receiver) = std::sync::mpsc::sync_channel(DECODED_AHEAD);
        scope.spawn(move || {
            for batch in batches {
                let failed = batch.is_err();
                // The receiver hangs up only after an error of its own: stop decoding then.
                if sender.send(batch).is_err() || failed {
                    break;
                }
            }
        });
        for (done, batch) in receiver.into_iter().enumerate() {
            let batch = batch?;
            for e in batch.iter() {
                counts.events += 1;
                let kept = filter.keeps(&e);
                if !kept {
                    counts.left_out += 1;
                    if !filter.is_server_record(&e) {
                        continue;
                    }
                }
                for v in visitors.iter_mut() {
                    if kept || v.sees_server_records() {
                        v.visit(&e, ctx);
                    }
                }
            }
            progress(done + 1, total);
        }
        Ok::<(), StoreError>(())
    })?;
    for v in visitors.iter_mut() {
        v.finish(ctx);
    }
    Ok(counts)
}
