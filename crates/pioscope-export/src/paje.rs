//! Pajé export (ViTE, pajeng): containers Host > Rank > Thread (and Host > Server > Thread,
//! Host > Disk > Thread when the trace has storage containers), one state per call pushed and
//! popped on its thread (user region > MPI-IO > POSIX nest as on the thread), entity values per
//! function coloured by layer, a link per MPI message, and an I/O throughput variable per
//! rank, server and disk.
//!
//! Pajé wants the whole file in time order, while the store is sorted by rank, then time. So:
//! 1. one pass over the events (store order) finds each rank's rows, the threads, and the
//!    throughput buckets (small);
//! 2. one cursor per rank (`EventBatches::open_rows`, a few thousand rows in memory each)
//!    turns its calls into time-ordered push/pop records, and a k-way merge over the cursors,
//!    the variable changes and the link starts and ends writes the file.
//!
//! Memory is bounded by ranks x cursor batch + messages, never by the events.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap, HashMap};
use std::io::Write;
use std::path::Path;

use pioscope_trace::colours;
use pioscope_trace::functions;
use pioscope_trace::store::messages::MessageRow;
use pioscope_trace::store::meta::ContainerKind;
use pioscope_trace::store::reader::EventBatches;
use pioscope_trace::store::{Event, Trace, EVENTS_FILE};
use pioscope_trace::Layer;

use crate::model::{self, Container, Throughput};
use crate::{data_bytes, ExportError, Options, Progress, Summary};

/// Rows each rank cursor decodes at a time.
const CURSOR_ROWS: usize = 4096;

/// The header: every event definition this writer uses (field names as pajeng expects).
pub const HEADER: &str = "\
%EventDef PajeDefineContainerType 0
%       Alias string
%       Type string
%       Name string
%EndEventDef
%EventDef PajeDefineStateType 1
%       Alias string
%       Type string
%       Name string
%EndEventDef
%EventDef PajeDefineVariableType 2
%       Alias string
%       Type string
%       Name string
%       Color color
%EndEventDef
%EventDef PajeDefineLinkType 3
%       Alias string
%       Type string
%       StartContainerType string
%       EndContainerType string
%       Name string
%EndEventDef
%EventDef PajeDefineEntityValue 4
%       Alias string
%       Type string
%       Name string
%       Color color
%EndEventDef
%EventDef PajeCreateContainer 5
%       Time date
%       Alias string
%       Type string
%       Container string
%       Name string
%EndEventDef
%EventDef PajeDestroyContainer 6
%       Time date
%       Type string
%       Name string
%EndEventDef
%EventDef PajeSetVariable 7
%       Time date
%       Type string
%       Container string
%       Value double
%EndEventDef
%EventDef PajePushState 8
%       Time date
%       Type string
%       Container string
%       Value string
%EndEventDef
%EventDef PajePopState 9
%       Time date
%       Type string
%       Container string
%EndEventDef
%EventDef PajeStartLink 10
%       Time date
%       Type string
%       Container string
%       Value string
%       StartContainer string
%       Key string
%EndEventDef
%EventDef PajeEndLink 11
%       Time date
%       Type string
%       Container string
%       Value string
%       EndContainer string
%       Key string
%EndEventDef
";

/// Pajé type aliases per container kind: (container type, thread type, state type, variable
/// type).
fn types(kind: ContainerKind) -> (&'static str, &'static str, &'static str, &'static str) {
    match kind {
        ContainerKind::Process => ("CT_Rank", "CT_Thread", "ST_Call", "V_Rank"),
        ContainerKind::Server => ("CT_Server", "CT_SThread", "ST_Server", "V_Server"),
        ContainerKind::Disk => ("CT_Disk", "CT_DThread", "ST_Disk", "V_Disk"),
    }
}

/// Seconds with nanosecond digits: Pajé dates are plain numbers.
fn secs(ns: i64) -> String {
    let sign = if ns < 0 { "-" } else { "" };
    let a = ns.unsigned_abs();
    format!("{sign}{}.{:09}", a / 1_000_000_000, a % 1_000_000_000)
}

/// Quotes a name for the file (Pajé strings are double-quoted; quotes inside are dropped).
fn q(s: &str) -> String {
    format!("\"{}\"", s.replace(['"', '\n'], " "))
}

fn colour((r, g, b): (f32, f32, f32)) -> String {
    format!("\"{r:.2} {g:.2} {b:.2}\"")
}

/// A record of one rank's stream, in the order the stream yields them.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Rec {
    Push {
        t: i64,
        process: i32,
        thread: i32,
        func: String,
    },
    Pop {
        t: i64,
        process: i32,
        thread: i32,
    },
}

impl Rec {
    fn time(&self) -> i64 {
        match self {
            Rec::Push { t, .. } | Rec::Pop { t, .. } => *t,
        }
    }
}

/// An open call on a thread's stack.
#[derive(Clone, Copy, Debug)]
struct Open {
    end: i64,
    depth: u8,
}

/// Turns one rank's calls (in store order: by start, a parent before its children) into push
/// and pop records in time order, every thread keeping its own stack.
///
/// Pops happen at the call's end, but never after a later sibling starts (overlapping siblings
/// are cut where the next begins) and never before anything already written (a child that
/// outlives its parent by a rounding error pops its parent at its own end): Pajé's stacks and
/// its global time order both hold.
#[derive(Default)]
struct RankStream {
    stacks: HashMap<(i32, i32), Vec<Open>>,
    /// (end, process, thread, depth) of each stack's top, possibly stale.
    tops: BinaryHeap<Reverse<(i64, i32, i32, u8)>>,
    last: i64,
    out: std::collections::VecDeque<Rec>,
}

impl RankStream {
    /// Pops everything that ends at or before `until` (all of it when None), in time order.
    fn drain_until(&mut self, until: Option<i64>) {
        while let Some(&Reverse((end, p, t, depth))) = self.tops.peek() {
            if until.is_some_and(|u| end > u) {
                break;
            }
            self.tops.pop();
            let stack = self.stacks.entry((p, t)).or_default();
            // Stale: not the top any more (a child was pushed) or already popped.
            if !stack
                .last()
                .is_some_and(|o| o.end == end && o.depth == depth)
            {
                continue;
            }
            self.pop(p, t, end);
        }
    }

    fn pop(&mut self, p: i32, t: i32, at: i64) {
        let stack = self.stacks.entry((p, t)).or_default();
        if stack.pop().is_none() {
            return;
        }
        let time = at.max(self.last);
        self.last = time;
        self.out.push_back(Rec::Pop {
            t: time,
            process: p,
            thread: t,
        });
        if let Some(top) = stack.last() {
            self.tops.push(Reverse((top.end, p, t, top.depth)));
        }
    }

    /// Takes the next call of the rank.
    fn push(&mut self, e: &Event<'_>) {
        let key = (e.process, e.thread);
        self.drain_until(Some(e.start_ns));
        // Calls at the same or a deeper level on this thread end before this one starts.
        while let Some(top) = self.stacks.get(&key).and_then(|s| s.last().copied()) {
            if top.depth < e.depth {
                break;
            }
            self.pop(key.0, key.1, top.end.min(e.start_ns));
        }
        let time = e.start_ns.max(self.last);
        self.last = time;
        self.out.push_back(Rec::Push {
            t: time,
            process: e.process,
            thread: e.thread,
            func: e.func.to_string(),
        });
        let open = Open {
            end: e.end_ns().max(time),
            depth: e.depth,
        };
        self.stacks.entry(key).or_default().push(open);
        self.tops
            .push(Reverse((open.end, key.0, key.1, open.depth)));
    }
}

/// A cursor over one rank's rows yielding its records.
struct Cursor {
    batches: EventBatches,
    stream: RankStream,
    done: bool,
    read: u64,
}

impl Cursor {
    /// The next record, reading more rows when the stream cannot yet say what comes next.
    fn next(&mut self, opts: &Options) -> Result<Option<Rec>, ExportError> {
        loop {
            // A pop queued is final once no later push can precede it: records are produced
            // in time order, so anything queued can go.
            if let Some(r) = self.stream.out.pop_front() {
                return Ok(Some(r));
            }
            if self.done {
                return Ok(None);
            }
            match self.batches.next() {
                Some(batch) => {
                    let batch = batch?;
                    self.read += batch.len() as u64;
                    for e in batch.iter() {
                        if opts.keeps(&e) {
                            self.stream.push(&e);
                        }
                    }
                }
                None => {
                    self.done = true;
                    self.stream.drain_until(None);
                }
            }
        }
    }
}

/// What the first pass learns.
#[derive(Default)]
struct Survey {
    /// Rank → (first row, rows).
    ranks: BTreeMap<i32, (u64, u64)>,
    /// Process → the threads its kept events name (a set, not a count: a damaged thread id
    /// of 10^9 declares one container, not 10^9).
    threads: HashMap<i32, BTreeSet<i32>>,
    /// Process → throughput buckets.
    throughput: BTreeMap<i32, Throughput>,
    /// Function names seen that functions.def does not know.
    extra_funcs: Vec<(Layer, String)>,
}

fn survey(
    trace: &Trace,
    opts: &Options,
    kind_of: &HashMap<i32, ContainerKind>,
    bucket: i64,
    progress: &mut dyn FnMut(u64),
) -> Result<Survey, ExportError> {
    let mut s = Survey::default();
    let mut read = 0u64;
    for batch in trace.events()? {
        let batch = batch?;
        for e in batch.iter() {
            let r = s.ranks.entry(e.rank).or_insert((e.id as u64, 0));
            r.1 += 1;
            if !opts.keeps(&e) {
                continue;
            }
            // Every state names its container, which must have been declared.
            if !kind_of.contains_key(&e.process) {
                return Err(ExportError::UnknownProcess {
                    id: e.id,
                    process: e.process,
                });
            }
            s.threads.entry(e.process).or_default().insert(e.thread);
            s.throughput
                .entry(e.process)
                .or_default()
                .add(e.end_ns(), data_bytes(&e), bucket);
            if e.func_id == 0 && !s.extra_funcs.iter().any(|(_, f)| f == e.func) {
                s.extra_funcs.push((e.layer, e.func.to_string()));
            }
        }
        read += batch.len() as u64;
        progress(read / 2);
    }
    Ok(s)
}

/// Writes `trace` as a Pajé trace file `out`.
pub fn export(
    trace: &Trace,
    out: &Path,
    opts: &Options,
    progress: Progress<'_>,
) -> Result<Summary, ExportError> {
    let mut w = crate::create_output(out)?;
    let r = write(trace, &mut w, opts, progress).and_then(|s| {
        w.flush()?;
        Ok(s)
    });
    crate::name_output(r, out)
}

fn write(
    trace: &Trace,
    w: &mut impl Write,
    opts: &Options,
    progress: Progress<'_>,
) -> Result<Summary, ExportError> {
    let meta = &trace.meta;
    let bucket = model::bucket_ns(meta);
    let containers: Vec<Container> = model::containers(meta, opts);
    let kind_of: HashMap<i32, ContainerKind> =
        containers.iter().map(|c| (c.process, c.kind)).collect();
    let s = survey(trace, opts, &kind_of, bucket, progress)?;
    let hosts = model::hosts(&containers);
    let mut summary = Summary::default();

    w.write_all(HEADER.as_bytes())?;
    // Types.
    writeln!(w, "0 CT_Host 0 \"Host\"")?;
    let kinds: Vec<ContainerKind> = [
        ContainerKind::Process,
        ContainerKind::Server,
        ContainerKind::Disk,
    ]
    .into_iter()
    .filter(|k| *k == ContainerKind::Process || containers.iter().any(|c| c.kind == *k))
    .collect();
    for &kind in &kinds {
        let (ct, tt, st, vt) = types(kind);
        let name = match kind {
            ContainerKind::Process => "Rank",
            ContainerKind::Server => "Server",
            ContainerKind::Disk => "Disk",
        };
        writeln!(w, "0 {ct} CT_Host \"{name}\"")?;
        writeln!(w, "0 {tt} {ct} \"Thread\"")?;
        writeln!(w, "1 {st} {tt} \"{name} call\"")?;
        writeln!(w, "2 {vt} {ct} \"I/O throughput (MB/s)\" \"0.9 0.5 0.1\"")?;
        // Entity values: every function of these layers, in the shade of its layer the pages
        // draw it with.
        let mut n = 0;
        let funcs = functions::all()
            .iter()
            .map(|f| (f.layer, f.name.to_string()))
            .chain(s.extra_funcs.iter().cloned());
        for (layer, func) in funcs {
            let layer_ok = match kind {
                ContainerKind::Process => !matches!(layer, Layer::Server | Layer::Disk),
                ContainerKind::Server => layer == Layer::Server,
                ContainerKind::Disk => layer == Layer::Disk,
            };
            if layer_ok {
                writeln!(
                    w,
                    "4 {st}_{n} {st} {} {}",
                    q(&func),
                    colour(colours::function_colour(layer, &func).rgb())
                )?;
                n += 1;
            }
        }
    }
    writeln!(w, "3 L_Msg 0 CT_Thread CT_Thread \"MPI message\"")?;

    // Containers, at time 0.
    let zero = secs(0);
    for (i, h) in hosts.iter().enumerate() {
        writeln!(w, "5 {zero} H{i} CT_Host 0 {}", q(h))?;
    }
    for c in &containers {
        let (ct, tt, _, _) = types(c.kind);
        let h = hosts.iter().position(|h| *h == c.host).unwrap_or(0);
        writeln!(w, "5 {zero} P{} {ct} H{h} {}", c.process, q(&c.label))?;
        let listed = 0..c.threads as i32;
        let seen = s.threads.get(&c.process).into_iter().flatten().copied();
        let threads: BTreeSet<i32> = listed.chain(seen).collect();
        for t in threads {
            writeln!(
                w,
                "5 {zero} P{}T{t} {tt} P{} {}",
                c.process,
                c.process,
                q(&format!("{} thread {t}", c.label))
            )?;
        }
    }

    // Sources of the merge: rank cursors, variable changes, link starts, link ends.
    let epath = trace.dir.join(EVENTS_FILE);
    let mut cursors: Vec<Cursor> = Vec::new();
    for (&rank, &(first, rows)) in &s.ranks {
        if opts.keeps_rank(rank) {
            cursors.push(Cursor {
                batches: EventBatches::open_rows(&epath, first, rows, CURSOR_ROWS)?,
                stream: RankStream::default(),
                done: false,
                read: 0,
            });
        }
    }
    let mut vars: Vec<(i64, i32, f64)> = Vec::new();
    for (&p, t) in &s.throughput {
        if kind_of.contains_key(&p) {
            vars.extend(t.series(bucket).into_iter().map(|(ts, v)| (ts, p, v)));
        }
    }
    vars.sort_by_key(|v| (v.0, v.1));
    let messages: Vec<MessageRow> = trace
        .messages()?
        .into_iter()
        .filter(|m| {
            opts.keeps_message(m)
                && kind_of.contains_key(&m.send_process)
                && kind_of.contains_key(&m.recv_process)
        })
        .collect();
    let mut ends: Vec<usize> = (0..messages.len()).collect();
    ends.sort_by_key(|&i| (messages[i].recv_ns, i));

    // Heap entries: (time, source order, source index); source order puts, at equal times,
    // variables first, then link ends, calls, link starts.
    const VAR: u8 = 0;
    const LINK_END: u8 = 1;
    const CALL: u8 = 2;
    const LINK_START: u8 = 3;
    // A link end whose start is not written yet waits behind the starts of its time.
    const LINK_END_LATE: u8 = 4;
    let mut heads: Vec<Option<Rec>> = Vec::with_capacity(cursors.len());
    let mut heap: BinaryHeap<Reverse<(i64, u8, usize)>> = BinaryHeap::new();
    for (i, c) in cursors.iter_mut().enumerate() {
        let r = c.next(opts)?;
        if let Some(r) = &r {
            heap.push(Reverse((r.time(), CALL, i)));
        }
        heads.push(r);
    }
    let (mut vi, mut si, mut ei) = (0usize, 0usize, 0usize);
    if let Some(v) = vars.first() {
        heap.push(Reverse((v.0, VAR, 0)));
    }
    if let Some(m) = messages.first() {
        heap.push(Reverse((m.send_ns, LINK_START, 0)));
    }
    if let Some(&i) = ends.first() {
        heap.push(Reverse((messages[i].recv_ns, LINK_END, 0)));
    }
    let total_read = |cursors: &[Cursor]| cursors.iter().map(|c| c.read).sum::<u64>();
    let half = meta.counts.events / 2;
    let mut since_progress = 0u32;
    // Links can end before they start when the clocks of two hosts disagree; Pajé needs
    // time order only, so such a link's end is written at its start.
    let mut last_time = 0i64;
    while let Some(Reverse((_, source, i))) = heap.pop() {
        match source {
            VAR => {
                let (t, p, v) = vars[vi];
                let (_, _, _, vt) = types(kind_of[&p]);
                writeln!(w, "7 {} {vt} P{p} {v:.6}", secs(t.max(last_time)))?;
                last_time = last_time.max(t);
                summary.counters += 1;
                vi += 1;
                if let Some(v) = vars.get(vi) {
                    heap.push(Reverse((v.0, VAR, 0)));
                }
            }
            LINK_START => {
                let m = &messages[si];
                let t = m.send_ns.max(last_time);
                last_time = t;
                writeln!(
                    w,
                    "10 {} L_Msg 0 {} P{}T{} m{si}",
                    secs(t),
                    q(&format!("{} B tag {}", m.bytes, m.tag)),
                    m.send_process,
                    m.send_thread
                )?;
                si += 1;
                if let Some(m) = messages.get(si) {
                    heap.push(Reverse((m.send_ns, LINK_START, 0)));
                }
            }
            LINK_END | LINK_END_LATE => {
                let k = ends[ei];
                let m = &messages[k];
                if k >= si {
                    // Its start is not written yet (clock skew): come back after it.
                    heap.push(Reverse((
                        messages[si].send_ns.max(m.recv_ns),
                        LINK_END_LATE,
                        0,
                    )));
                    continue;
                }
                let t = m.recv_ns.max(last_time);
                last_time = t;
                writeln!(
                    w,
                    "11 {} L_Msg 0 {} P{}T{} m{k}",
                    secs(t),
                    q(&format!("{} B tag {}", m.bytes, m.tag)),
                    m.recv_process,
                    m.recv_thread
                )?;
                summary.messages += 1;
                ei += 1;
                if let Some(&k) = ends.get(ei) {
                    heap.push(Reverse((messages[k].recv_ns, LINK_END, 0)));
                }
            }
            _ => {
                let Some(rec) = heads[i].take() else { continue };
                let t = rec.time().max(last_time);
                last_time = t;
                match rec {
                    Rec::Push {
                        process,
                        thread,
                        func,
                        ..
                    } => {
                        let (_, _, st, _) = types(kind_of[&process]);
                        writeln!(w, "8 {} {st} P{process}T{thread} {}", secs(t), q(&func))?;
                        summary.events += 1;
                    }
                    Rec::Pop {
                        process, thread, ..
                    } => {
                        let (_, _, st, _) = types(kind_of[&process]);
                        writeln!(w, "9 {} {st} P{process}T{thread}", secs(t))?;
                    }
                }
                let next = cursors[i].next(opts)?;
                if let Some(r) = &next {
                    heap.push(Reverse((r.time(), CALL, i)));
                }
                heads[i] = next;
                since_progress += 1;
                if since_progress >= 65_536 {
                    since_progress = 0;
                    progress(half + total_read(&cursors) / 2);
                }
            }
        }
    }
    progress(meta.counts.events);
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(start: i64, dur: i64, depth: u8, thread: i32, func: &'static str) -> Event<'static> {
        Event {
            thread,
            depth,
            ..Event::call(Layer::Posix, func, start, dur)
        }
    }

    fn records(events: &[Event<'static>]) -> Vec<String> {
        let mut s = RankStream::default();
        for e in events {
            s.push(e);
        }
        s.drain_until(None);
        s.out
            .iter()
            .map(|r| match r {
                Rec::Push {
                    t, thread, func, ..
                } => format!("{t} push {thread} {func}"),
                Rec::Pop { t, thread, .. } => format!("{t} pop {thread}"),
            })
            .collect()
    }

    #[test]
    fn nested_calls_push_and_pop_in_time_order() {
        let r = records(&[
            ev(0, 100, 0, 0, "MPI_File_write_all"),
            ev(10, 20, 1, 0, "pwrite"),
            ev(15, 100, 0, 1, "write"), // another thread, interleaved
            ev(40, 20, 1, 0, "pwrite"),
            ev(200, 0, 0, 0, "close"),
        ]);
        assert_eq!(
            r,
            vec![
                "0 push 0 MPI_File_write_all",
                "10 push 0 pwrite",
                "15 push 1 write",
                "30 pop 0",
                "40 push 0 pwrite",
                "60 pop 0",
                "100 pop 0",
                "115 pop 1",
                "200 push 0 close",
                "200 pop 0",
            ]
        );
    }

    #[test]
    fn overlapping_siblings_and_long_children_keep_stacks_whole() {
        let r = records(&[
            ev(0, 50, 0, 0, "a"),
            ev(10, 60, 1, 0, "child-outlives-parent"),
            ev(40, 10, 0, 0, "sibling-overlaps"),
        ]);
        // The child's pop comes first; the parent pops no later than the sibling's push.
        assert_eq!(
            r,
            vec![
                "0 push 0 a",
                "10 push 0 child-outlives-parent",
                "40 pop 0",
                "40 pop 0",
                "40 push 0 sibling-overlaps",
                "50 pop 0",
            ]
        );
    }

    #[test]
    fn dates_are_seconds_with_nanoseconds() {
        assert_eq!(secs(0), "0.000000000");
        assert_eq!(secs(1_234_567_890), "1.234567890");
        assert_eq!(secs(-5), "-0.000000005");
    }
}
