//! compare's view of one trace: rank after rank, the top-level calls and the calls directly
//! beneath them, read streaming (the store is sorted by rank, so a rank's calls are one run of
//! rows); nothing but the current rank's calls is kept.
//!
//! User regions are transparent (an `MPI_File_write_all` inside a region is still top level,
//! as the replay sees it) and tracer pseudo-calls are skipped. Only the rank's first process
//! (meta.json order) and its thread 0 count: a replay simulates one call sequence per rank.

use pioscope_trace::functions::Layer;
use pioscope_trace::store::meta::ContainerKind;
use pioscope_trace::store::{EventBatch, EventBatches, StoreError, Trace};
use rustc_hash::FxHashMap;

use crate::scope::{Scope, ScopeFilter};

/// "No index": an unmatched operation.
pub(crate) const NONE: u32 = u32::MAX;

/// The bit of `Op::func` marking a top-level call.
const TOP: u32 = 1 << 31;

/// Function names of both traces, interned so that operations carry a small number.
#[derive(Debug, Default)]
pub(crate) struct Names {
    list: Vec<(String, Layer)>,
    index: FxHashMap<String, u32>,
}

impl Names {
    /// The number of `name`.
    pub fn intern(&mut self, name: &str, layer: Layer) -> u32 {
        if let Some(&i) = self.index.get(name) {
            return i;
        }
        let i = self.list.len() as u32;
        self.list.push((name.to_string(), layer));
        self.index.insert(name.to_string(), i);
        i
    }

    /// The name of number `i`.
    pub fn name(&self, i: u32) -> &str {
        self.list.get(i as usize).map_or("", |n| n.0.as_str())
    }

    /// How many names.
    pub fn len(&self) -> usize {
        self.list.len()
    }

    /// The layer of number `i`.
    pub fn layer(&self, i: u32) -> Layer {
        self.list.get(i as usize).map_or(Layer::Tracer, |n| n.1)
    }
}

/// One call: a top-level call of its rank or a call directly beneath one (40 bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Op {
    /// Its `id` in events.parquet.
    pub id: i64,
    /// Start, ns since job start.
    pub start: i64,
    /// Duration, ns.
    pub dur: i64,
    /// Function (`Names`), with the `TOP` bit for a top-level call.
    func_top: u32,
    /// Collective instance, -1 if none.
    pub instance: i32,
    /// Its file (`file_id`), -1 if none.
    pub file: i32,
}

impl Op {
    /// End, ns.
    pub fn end(&self) -> i64 {
        self.start + self.dur
    }

    /// A top-level call.
    pub fn is_top(&self) -> bool {
        self.func_top & TOP != 0
    }

    /// Its function (`Names`).
    pub fn func(&self) -> u32 {
        self.func_top & !TOP
    }
}

/// The calls directly beneath top-level call `top` of a rank's list: they follow it.
pub(crate) fn children(ops: &[Op], top: usize) -> std::ops::Range<usize> {
    let first = top + 1;
    let mut end = first;
    while end < ops.len() && !ops[end].is_top() {
        end += 1;
    }
    first..end
}

/// Why reading stopped.
#[derive(Debug)]
pub(crate) enum ReadError {
    /// The store could not be read.
    Store(StoreError),
    /// Rank `.0` came after a higher rank: the store is not sorted by rank.
    Unsorted(i32),
}

impl From<StoreError> for ReadError {
    fn from(e: StoreError) -> Self {
        ReadError::Store(e)
    }
}

/// An open call on the rank's stack while reading.
struct Frame {
    depth: u8,
    end: i64,
    /// The level its descendants are at (0 top, 1 child, 2 deeper).
    child_level: u8,
}

/// Reads a trace rank after rank.
pub(crate) struct Reader {
    batches: EventBatches,
    batch: Option<EventBatch>,
    pos: usize,
    filter: ScopeFilter,
    primary: FxHashMap<i32, i32>,
    rank: Option<i32>,
    ops: Vec<Op>,
    stack: Vec<Frame>,
    /// The last function name seen and its number (names repeat in runs).
    last: (String, u32),
}

/// Which container (process) is the one compared for each rank, keyed by rank: a map, not a
/// vector indexed by rank, so a damaged store's rank of 10^9 (or `job.ranks` of 10^9) costs
/// one entry, not gigabytes.
fn primary_processes(trace: &Trace) -> FxHashMap<i32, i32> {
    let mut primary = FxHashMap::default();
    for p in &trace.meta.processes {
        if p.kind != ContainerKind::Process || p.rank < 0 {
            continue;
        }
        primary.entry(p.rank).or_insert(p.process as i32);
    }
    primary
}

impl Reader {
    /// Starts reading `trace` (the events `scope` keeps).
    pub fn new(trace: &Trace, scope: Scope) -> Result<Self, StoreError> {
        Ok(Reader {
            batches: trace.events()?,
            batch: None,
            pos: 0,
            filter: ScopeFilter::new(trace, scope),
            primary: primary_processes(trace),
            rank: None,
            ops: Vec::new(),
            stack: Vec::new(),
            last: (String::new(), NONE),
        })
    }

    /// The next rank with calls and its calls in store order (a top-level call, the calls
    /// beneath it, the next top-level call); None at the end.
    pub fn next_rank(&mut self, names: &mut Names) -> Result<Option<(u32, Vec<Op>)>, ReadError> {
        loop {
            let exhausted = self.batch.as_ref().is_none_or(|b| self.pos >= b.len());
            if exhausted {
                match self.batches.next() {
                    Some(b) => {
                        self.batch = Some(b?);
                        self.pos = 0;
                        continue;
                    }
                    None => {
                        self.batch = None;
                        return Ok(self.finish_rank(None));
                    }
                }
            }
            let Some(batch) = self.batch.as_ref() else {
                continue;
            };
            while self.pos < batch.len() {
                let e = batch.get(self.pos);
                if e.rank >= 0 && Some(e.rank) != self.rank {
                    if let Some(cur) = self.rank {
                        if e.rank < cur {
                            return Err(ReadError::Unsorted(e.rank));
                        }
                        // Not consumed: it starts the next rank.
                        let next = e.rank;
                        return Ok(self.finish_rank(Some(next)));
                    }
                    self.rank = Some(e.rank);
                }
                self.pos += 1;
                if e.rank < 0
                    || e.thread != 0
                    || self.primary.get(&e.rank) != Some(&e.process)
                    || !self.filter.keeps(&e)
                {
                    continue;
                }
                visit(&e, &mut self.stack, &mut self.ops, names, &mut self.last);
            }
        }
    }

    /// Hands back the calls of the rank read so far and moves on to `next`.
    fn finish_rank(&mut self, next: Option<i32>) -> Option<(u32, Vec<Op>)> {
        let done = self.rank.take();
        self.rank = next;
        self.stack.clear();
        let ops = std::mem::take(&mut self.ops);
        done.map(|r| (r as u32, ops))
    }
}

fn visit(
    e: &pioscope_trace::store::Event<'_>,
    stack: &mut Vec<Frame>,
    ops: &mut Vec<Op>,
    names: &mut Names,
    last: &mut (String, u32),
) {
    while stack
        .last()
        .is_some_and(|f| f.depth >= e.depth || f.end < e.start_ns)
    {
        stack.pop();
    }
    let level = stack.last().map_or(0, |f| f.child_level);
    match e.layer {
        Layer::Tracer | Layer::Server | Layer::Disk => return,
        Layer::Region => {
            stack.push(Frame {
                depth: e.depth,
                end: e.end_ns(),
                child_level: level,
            });
            return;
        }
        _ => {}
    }
    if level <= 1 {
        if last.1 == NONE || last.0 != e.func {
            *last = (e.func.to_string(), names.intern(e.func, e.layer));
        }
        ops.push(Op {
            id: e.id,
            start: e.start_ns,
            dur: e.duration_ns.max(0),
            func_top: last.1 | if level == 0 { TOP } else { 0 },
            instance: e.instance.unwrap_or(-1),
            file: e.file_id.unwrap_or(-1),
        });
    }
    stack.push(Frame {
        depth: e.depth,
        end: e.end_ns(),
        child_level: level.saturating_add(1).min(2),
    });
}
