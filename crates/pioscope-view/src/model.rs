//! One trace as the viewer holds it: the store, its rows in display order (grouped by host,
//! servers and disks below), the function table, the level-of-detail index (built on open when
//! missing) with its long calls, and the small tables kept in memory (settings, messages).

use std::collections::HashMap;
use std::path::Path;

use pioscope_trace::functions::{self, Layer};
use pioscope_trace::store::lod::{self, span_columns as sc, LodMeta};
use pioscope_trace::store::meta::ContainerKind;
use pioscope_trace::store::schema::events as ev;
use pioscope_trace::store::{
    Containers, CounterRow, Pred, RowMap, SettingRow, StoreError, StrCol, Table, Trace, EVENTS_FILE,
};
use serde::Serialize;

/// Function ids given to names functions.def does not know (and not of the form func_<id>).
const EXTRA_FUNC_IDS: u32 = 100_000;
/// One timeline row.
#[derive(Clone, Debug, Serialize)]
pub struct RowInfo {
    /// Display index (dense 0..n).
    pub row: u32,
    /// `process`, `server` or `disk`.
    pub kind: &'static str,
    /// What the page shows.
    pub label: String,
    /// MPI rank (-1 without).
    pub rank: i32,
    /// Index into meta.json processes.
    pub process: i32,
    /// Thread number.
    pub thread: i32,
    /// Host (the server's name for servers and disks).
    #[serde(skip)]
    pub host: String,
}

/// Rows of one host, in display order.
#[derive(Clone, Debug, Serialize)]
pub struct Group {
    /// Host name.
    pub host: String,
    /// Its rows.
    pub rows: Vec<RowInfo>,
}

/// A function present in the trace.
#[derive(Clone, Debug, Serialize)]
pub struct FuncEntry {
    /// functions.def id (or an id above 100000 for a name it does not know).
    pub id: u32,
    /// Name as stored.
    pub name: String,
    /// Layer name.
    pub layer: String,
    /// Calls in the trace.
    pub calls: u64,
}

/// A long call of lod_spans.parquet.
#[derive(Clone, Copy, Debug)]
pub struct LongSpan {
    /// Event id.
    pub id: i64,
    /// Start, ns.
    pub start: i64,
    /// Duration, ns.
    pub dur: i64,
    /// Depth.
    pub depth: u8,
    /// Function id.
    pub func: u32,
}

/// The level-of-detail index of a trace.
#[derive(Debug)]
pub struct Lod {
    /// lod.parquet.
    pub table: Table,
    /// Its description.
    pub meta: LodMeta,
    /// Long calls per display row, by start.
    pub spans: Vec<Vec<LongSpan>>,
    /// The view's function id of each function of the index (its `func` column).
    pub func_ids: Vec<u32>,
}

/// A matched message, rows resolved.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Message {
    /// Sending row.
    pub from_row: u32,
    /// Receiving row.
    pub to_row: u32,
    /// Send call start, ns.
    pub send: i64,
    /// Receive completion, ns.
    pub recv: i64,
    /// Bytes.
    pub bytes: i64,
    /// Send event id.
    #[serde(skip)]
    pub send_id: i64,
    /// Receive event id.
    #[serde(skip)]
    pub recv_id: i64,
}

/// One open trace.
#[derive(Debug)]
pub struct TraceView {
    /// 0 or 1.
    pub index: usize,
    /// Directory name.
    pub name: String,
    /// The store.
    pub trace: Trace,
    /// events.parquet.
    pub events: Table,
    /// The index (None only if it could not be built, e.g. a read-only trace).
    pub lod: Option<Lod>,
    /// Rows in display order.
    pub rows: Vec<RowInfo>,
    /// Host groups.
    pub groups: Vec<Group>,
    /// Canonical (lod) row → display row.
    pub canon_to_display: Vec<u32>,
    /// Display row → canonical row.
    pub display_to_canon: Vec<u32>,
    /// (process, thread) → canonical row.
    pub row_map: RowMap,
    /// Functions present.
    pub functions: Vec<FuncEntry>,
    /// Name → function id.
    pub func_ids: HashMap<String, u32>,
    /// Function id → (name, layer).
    pub func_by_id: HashMap<u32, (String, String)>,
    /// settings.parquet.
    pub settings: Vec<SettingRow>,
    /// Matched messages by send time (empty without messages.parquet).
    pub messages: Vec<Message>,
    /// Per message, the latest send or receive of it and every message before it: where the
    /// messages touching a window start ([`TraceView::messages_near`]).
    message_reach: Vec<i64>,
    /// Sampled counters (empty without counters.parquet).
    pub counters: Vec<CounterRow>,
}

/// The id of a function name.
pub fn func_id_of(name: &str) -> Option<u32> {
    if let Some(f) = functions::by_name(name) {
        return Some(f.id as u32);
    }
    name.strip_prefix("func_").and_then(|n| n.parse().ok())
}

impl TraceView {
    /// Opens a trace; builds its index first when it has none (`note` gets progress text).
    pub fn open(
        dir: &Path,
        index: usize,
        note: &mut dyn FnMut(&str),
    ) -> Result<TraceView, StoreError> {
        let trace = Trace::open(dir)?;
        let name = dir
            .canonicalize()
            .ok()
            .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_else(|| dir.display().to_string());
        let events = Table::open(&dir.join(EVENTS_FILE))?;
        let mut lod_meta = lod::read_meta(&trace)?;
        if lod_meta.is_none() {
            note(&format!(
                "building the level-of-detail index of {} ({} events)",
                dir.display(),
                trace.meta.counts.events
            ));
            let clock = std::time::Instant::now();
            match lod::build(&trace, &mut |_, _| {}) {
                Ok(s) => {
                    note(&format!(
                        "index built: {} buckets in {} levels, {:.1} s",
                        s.buckets,
                        s.meta.levels,
                        clock.elapsed().as_secs_f64()
                    ));
                    lod_meta = Some(s.meta);
                }
                Err(e) => note(&format!(
                    "cannot build the level-of-detail index ({e}); windows are computed from the events"
                )),
            }
        }

        let containers = Containers::new(&trace.meta);
        let row_map = RowMap::new(containers.rows());
        let (rows, groups, display_to_canon) = display_rows(&containers);
        let mut canon_to_display = vec![0u32; containers.rows().len()];
        for (d, &c) in display_to_canon.iter().enumerate() {
            canon_to_display[c as usize] = d as u32;
        }

        let mut view = TraceView {
            index,
            name,
            trace,
            events,
            lod: None,
            rows,
            groups,
            canon_to_display,
            display_to_canon,
            row_map,
            functions: Vec::new(),
            func_ids: HashMap::new(),
            func_by_id: HashMap::new(),
            settings: Vec::new(),
            messages: Vec::new(),
            message_reach: Vec::new(),
            counters: Vec::new(),
        };
        let funcs: Vec<(String, String, u64)> = match &lod_meta {
            Some(m) => m
                .functions
                .iter()
                .map(|f| (f.name.clone(), f.layer.clone(), f.calls))
                .collect(),
            None => view.scan_functions()?,
        };
        let mut extra = EXTRA_FUNC_IDS;
        for (name, layer, calls) in funcs {
            if view.func_ids.contains_key(&name) {
                continue;
            }
            let id = func_id_of(&name).unwrap_or_else(|| {
                extra += 1;
                extra
            });
            view.func_ids.insert(name.clone(), id);
            view.func_by_id.insert(id, (name.clone(), layer.clone()));
            view.functions.push(FuncEntry {
                id,
                name,
                layer,
                calls,
            });
        }
        view.functions.sort_by_key(|f| f.id);
        if let Some(meta) = lod_meta {
            view.lod = match view.load_index(meta) {
                Ok(lod) => Some(lod),
                // Damaged past its footer (the spans, the page index): it is derived from the
                // events, so build it again rather than refuse to start.
                Err(e) => {
                    note(&format!(
                        "rebuilding the damaged level-of-detail index of {} ({e})",
                        dir.display()
                    ));
                    match lod::build(&view.trace, &mut |_, _| {}) {
                        Ok(s) => Some(view.load_index(s.meta)?),
                        Err(e) => {
                            note(&format!(
                                "cannot build the level-of-detail index ({e}); windows are computed from the events"
                            ));
                            None
                        }
                    }
                }
            };
        }
        view.settings = view.trace.settings().unwrap_or_default();
        // Counters are a side track: an unreadable table shows none rather than no trace.
        view.counters = view.trace.counters().unwrap_or_default();
        view.messages = view.read_messages(note);
        view.message_reach = view
            .messages
            .iter()
            .scan(i64::MIN, |reach, m| {
                *reach = (*reach).max(m.recv.max(m.send));
                Some(*reach)
            })
            .collect();
        Ok(view)
    }

    /// Function names and layers by a scan of events.parquet (only without an index).
    fn scan_functions(&self) -> Result<Vec<(String, String, u64)>, StoreError> {
        let mut seen: HashMap<(String, String), u64> = HashMap::new();
        let mut order = Vec::new();
        for sel in self.events.select(&[]) {
            for b in self.events.read(&sel, &[ev::FUNC, ev::LAYER])? {
                let c = self.events.columns(&b);
                let (f, l) = (c.str(ev::FUNC)?, c.str(ev::LAYER)?);
                for i in 0..b.num_rows() {
                    let key = (f.text(i).to_string(), l.text(i).to_string());
                    let n = seen.entry(key.clone()).or_insert_with(|| {
                        order.push(key);
                        0
                    });
                    *n += 1;
                }
            }
        }
        Ok(order
            .into_iter()
            .map(|k| {
                let n = seen[&k];
                (k.0, k.1, n)
            })
            .collect())
    }

    /// The index whose description is `meta`: lod.parquet opened, its long spans read.
    fn load_index(&self, meta: lod::LodMeta) -> Result<Lod, StoreError> {
        let table = Table::open(&self.trace.dir.join(lod::LOD_FILE))?;
        let spans = self.read_spans()?;
        let func_ids = meta
            .functions
            .iter()
            .map(|f| self.func_id(&f.name))
            .collect();
        Ok(Lod {
            table,
            meta,
            spans,
            func_ids,
        })
    }

    fn read_spans(&self) -> Result<Vec<Vec<LongSpan>>, StoreError> {
        let mut spans = vec![Vec::new(); self.rows.len()];
        let t = Table::open(&self.trace.dir.join(lod::LOD_SPANS_FILE))?;
        for sel in t.select(&[]) {
            for b in t.read(&sel, &[])? {
                let c = t.columns(&b);
                let (row, id, start) = (c.int(sc::ROW)?, c.int(sc::ID)?, c.int(sc::START_NS)?);
                let (dur, depth) = (c.int(sc::DURATION_NS)?, c.int(sc::DEPTH)?);
                let func = c.str(sc::FUNC)?;
                for i in 0..b.num_rows() {
                    let Some(&d) = self.canon_to_display.get(row.value(i) as usize) else {
                        continue;
                    };
                    spans[d as usize].push(LongSpan {
                        id: id.value(i),
                        start: start.value(i),
                        dur: dur.value(i),
                        depth: depth.value(i) as u8,
                        func: self.func_id(func.text(i)),
                    });
                }
            }
        }
        for s in &mut spans {
            s.sort_by_key(|x| (x.start, x.depth));
        }
        Ok(spans)
    }

    /// The messages to draw; none (with a note saying why) when messages.parquet cannot be
    /// read, e.g. in a trace written before the table existed.
    fn read_messages(&self, note: &mut dyn FnMut(&str)) -> Vec<Message> {
        let rows = match self.trace.messages() {
            Ok(rows) => rows,
            Err(e) => {
                note(&format!("no message arrows: {e}"));
                return Vec::new();
            }
        };
        let mut out: Vec<Message> = rows
            .iter()
            .filter_map(|m| {
                let f = self.display_row(m.send_process, m.send_thread)?;
                let t = self.display_row(m.recv_process, m.recv_thread)?;
                Some(Message {
                    from_row: f,
                    to_row: t,
                    send: m.send_ns,
                    recv: m.recv_ns,
                    bytes: m.bytes,
                    send_id: m.send_id,
                    recv_id: m.recv_id,
                })
            })
            .collect();
        out.sort_by_key(|m| (m.send, m.recv));
        out
    }

    /// The messages that may have a send or receive in [t0, t1): sent before t1, from the first
    /// one that it or an earlier one reaches t0 (millions of messages are not all scanned for
    /// a window near the end of the trace). The caller still checks each one.
    pub fn messages_near(&self, t0: i64, t1: i64) -> &[Message] {
        let end = self.messages.partition_point(|m| m.send < t1);
        let start = self.message_reach[..end].partition_point(|&r| r < t0);
        &self.messages[start..end]
    }

    /// The display row of an event's (process, thread).
    pub fn display_row(&self, process: i32, thread: i32) -> Option<u32> {
        let c = self.row_map.row(process, thread)?;
        self.canon_to_display.get(c as usize).copied()
    }

    /// The id of a function name (0 if unknown to this trace and to functions.def).
    pub fn func_id(&self, name: &str) -> u32 {
        self.func_ids
            .get(name)
            .copied()
            .or_else(|| func_id_of(name))
            .unwrap_or(0)
    }

    /// The layer name of a function id.
    pub fn func_layer(&self, id: u32) -> String {
        match self.func_by_id.get(&id) {
            Some((_, l)) => l.clone(),
            None => functions::describe(id.min(u16::MAX as u32) as u16)
                .0
                .name()
                .to_string(),
        }
    }

    /// The name of a function id.
    pub fn func_name(&self, id: u32) -> String {
        match self.func_by_id.get(&id) {
            Some((n, _)) => n.clone(),
            None => functions::describe(id.min(u16::MAX as u32) as u16).1,
        }
    }

    /// Job duration, ns.
    pub fn duration(&self) -> i64 {
        self.trace.meta.job.duration_ns.max(1)
    }

    /// How far before a window an exact read must start to see every call covering it; and
    /// whether the long calls table covers the rest.
    pub fn lookback(&self) -> (i64, bool) {
        match &self.lod {
            Some(l) => (l.meta.long_ns, true),
            None => (i64::MAX / 4, false),
        }
    }

    /// The long calls (lod_spans.parquet) of `rows` that start before `from`, so that an exact
    /// read from `from` misses them, and still run after `t0`: each with its row's index in
    /// `rows`. Nothing without an index (the exact read then starts early enough).
    pub fn long_spans<'a>(
        &'a self,
        rows: &'a [u32],
        from: i64,
        t0: i64,
    ) -> impl Iterator<Item = (usize, &'a LongSpan)> + 'a {
        let lod = self.lod.as_ref();
        rows.iter().enumerate().flat_map(move |(k, &r)| {
            lod.and_then(|l| l.spans.get(r as usize))
                .into_iter()
                .flatten()
                .take_while(move |s| s.start < from)
                .filter(move |s| s.start + s.dur > t0)
                .map(move |s| (k, s))
        })
    }

    /// An exact read of the window [t0, t1) over `rows`: where it starts (`t0` minus the
    /// lookback) and the predicates selecting its events; filter them with [`in_window`] and
    /// add [`TraceView::long_spans`].
    pub fn window_preds(&self, rows: &[u32], t0: i64, t1: i64) -> (i64, Vec<Pred>) {
        let from = t0.saturating_sub(self.lookback().0);
        (from, self.event_preds(rows, from, t1.saturating_sub(1)))
    }

    /// Predicates selecting the events of `rows` (display rows) starting in [from, to].
    pub fn event_preds(&self, rows: &[u32], from: i64, to: i64) -> Vec<Pred> {
        let mut ranks: Vec<i64> = rows
            .iter()
            .filter_map(|&r| self.rows.get(r as usize))
            .map(|r| r.rank as i64)
            .collect();
        ranks.sort_unstable();
        ranks.dedup();
        let mut ranges: Vec<(i64, i64)> = Vec::new();
        for r in ranks {
            match ranges.last_mut() {
                Some(last) if last.1 + 1 == r => last.1 = r,
                _ => ranges.push((r, r)),
            }
        }
        vec![
            Pred {
                column: ev::RANK,
                ranges,
            },
            Pred::range(ev::START_NS, from, to),
        ]
    }
}

/// True when a call read by an exact scan from `from` (see [`TraceView::lookback`]) shows in
/// the window [t0, t1): it starts in [from, t1) and ends after `t0`, or is an instant at or
/// after `t0`. Calls starting before `from` come from [`TraceView::long_spans`].
pub fn in_window(start: i64, dur: i64, from: i64, t0: i64, t1: i64) -> bool {
    start < t1 && start >= from && (start + dur > t0 || (dur == 0 && start >= t0))
}

/// Rows in display order: application rows grouped by host (hosts in order of first rank),
/// then each server with its disks.
fn display_rows(containers: &Containers) -> (Vec<RowInfo>, Vec<Group>, Vec<u32>) {
    let canon = containers.rows();
    let mut groups: Vec<(&str, Vec<u32>)> = Vec::new();
    let mut server_groups: Vec<(&str, Vec<u32>)> = Vec::new();
    for (c, r) in canon.iter().enumerate() {
        let Some(k) = containers.get(r.process) else {
            continue;
        };
        let list = match k.kind {
            ContainerKind::Process => &mut groups,
            ContainerKind::Server | ContainerKind::Disk => &mut server_groups,
        };
        match list.iter_mut().find(|g| g.0 == k.group()) {
            Some(g) => g.1.push(c as u32),
            None => list.push((k.group(), vec![c as u32])),
        }
    }
    groups.extend(server_groups);
    let mut rows = Vec::new();
    let mut out_groups = Vec::new();
    let mut display_to_canon = Vec::new();
    for (host, members) in groups {
        let mut g = Group {
            host: host.to_string(),
            rows: Vec::new(),
        };
        for c in members {
            let r = canon[c as usize];
            let Some(k) = containers.get(r.process) else {
                continue;
            };
            let info = RowInfo {
                row: rows.len() as u32,
                kind: match k.kind {
                    ContainerKind::Process => "process",
                    ContainerKind::Server => "server",
                    ContainerKind::Disk => "disk",
                },
                label: k.thread_label(r.thread),
                rank: k.rank,
                process: r.process,
                thread: r.thread,
                host: host.to_string(),
            };
            display_to_canon.push(c);
            g.rows.push(info.clone());
            rows.push(info);
        }
        out_groups.push(g);
    }
    (rows, out_groups, display_to_canon)
}

/// Per dictionary key of a `func` column: its function id (computed once per key).
pub fn func_keys(view: &TraceView, col: &StrCol) -> Vec<u32> {
    col.map_keys(|name| view.func_id(name))
}

/// The layer of a name, as the store spells it.
pub fn layer_name(l: &str) -> &'static str {
    Layer::from_name(l).unwrap_or(Layer::Tracer).name()
}
