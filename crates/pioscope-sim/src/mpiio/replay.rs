//! Trace replay: a trace store → a `Job`. Each rank's top-level calls (main thread; user
//! regions and HDF5 and PnetCDF calls seen through) are replayed in order with the gaps between
//! them kept as `Compute`; MPI-IO data calls are re-planned through `romio` with the hints and
//! view the trace recorded (settings.parquet), so a what-if (`--set cb_buffer_size=...`)
//! changes what ROMIO would do;
//! POSIX calls become `Io`/`Meta`; MPI messages become Isend/Irecv/WaitAll; collectives on the
//! whole job become a barrier. `Call::observed_id` keeps the observed event id.
//!
//! The engine's barriers span every rank, so only a collective every rank took part in may
//! synchronize: an MPI-IO collective's ranks are those holding its `instance` (a file opened on
//! MPI_COMM_SELF or a sub-communicator numbers its own instances), an MPI collective's are its
//! `comm_size`. A collective among fewer ranks runs on each of them alone (a collective among
//! one rank is no synchronization; the wait inside a sub-communicator is not modelled).
//!
//! How each kind of call is approximated is listed in docs/MODEL.md, "Workloads and replay".

use std::collections::{BTreeMap, HashMap};

use pioscope_trace::functions::{self, Layer};
use pioscope_trace::store::meta::ContainerKind;
use pioscope_trace::store::{SettingRow, StoreError, Trace};
use thiserror::Error;

use crate::model::System;
use crate::mpiio::romio::{self, calls, Hints, Pattern, Request, RomioError};
use crate::program::{Call, FileId, IoKind, Job, MetaKind, Op, Rank};

/// Errors replaying a trace.
#[derive(Debug, Error)]
pub enum ReplayError {
    /// The store could not be read.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The trace has no MPI ranks.
    #[error("the trace has no MPI ranks to replay")]
    NoRanks,
    /// Placement.
    #[error(transparent)]
    Romio(#[from] RomioError),
}

/// What a replay produced.
#[derive(Clone, Debug)]
pub struct Replayed {
    /// The job.
    pub job: Job,
    /// Per simulated file: the trace's file_id.
    pub observed_files: Vec<i32>,
    /// Application bytes written by MPI-IO and POSIX top-level calls.
    pub bytes_written: u64,
    /// Application bytes read.
    pub bytes_read: u64,
    /// Top-level calls replayed.
    pub calls: u64,
    /// Top-level calls not replayed as such (kept as compute): unknown functions, system files,
    /// messages on sub-communicators.
    pub as_compute: u64,
    /// Hints in force per simulated file (rank 0's at its first use).
    pub file_hints: Vec<Hints>,
}

/// One event, owned.
#[derive(Clone, Debug)]
struct Ev {
    id: i64,
    start: u64,
    dur: u64,
    func: u16,
    name: &'static str,
    layer: Layer,
    file: Option<i32>,
    offset: Option<u64>,
    size: u64,
    collective: bool,
    instance: Option<i32>,
    request: Option<i64>,
    peer: Option<i32>,
    comm_size: Option<i32>,
    world: bool,
}

/// A top-level call and the calls beneath it.
struct Top {
    ev: Ev,
    children: Vec<Ev>,
}

/// Records the replay looks through to the calls inside: user regions, and the I/O libraries
/// above MPI-IO (HDF5, PnetCDF), whose MPI-IO and POSIX calls are what the model re-plans;
/// the library's own time between them stays as compute gaps.
fn replayed_through(layer: Layer) -> bool {
    matches!(layer, Layer::Region | Layer::Hdf5 | Layer::Pnetcdf)
}

/// Per rank and file: the settings rows, by time.
type SettingsIndex = HashMap<(i32, i32), Vec<SettingRow>>;

/// Paths whose I/O is the system's, not the application's (MPI_Init reading /proc, hwloc).
fn is_system_path(p: &str) -> bool {
    [
        "/proc/",
        "/sys/",
        "/dev/",
        "/usr/",
        "/etc/",
        "/lib",
        "/run/",
        "/var/run/",
    ]
    .iter()
    .any(|s| p.starts_with(s))
        || matches!(p, "/" | "/sys" | "/proc" | "/dev")
}

/// The MPI-IO hints among `--set KEY=VALUE` overrides of the model (`cb_buffer_size=64M`,
/// `mpiio.cb_write=disable`, `stripe_size=1M`), as ROMIO hint names: on replay they win over
/// the hints the trace recorded, so a what-if changes what ROMIO does.
pub fn hint_overrides(sets: &[String]) -> Vec<(String, String)> {
    sets.iter()
        .filter_map(|s| {
            let (k, v) = s.split_once('=')?;
            let k = k.trim();
            let k = k.strip_prefix("mpiio.").unwrap_or(k);
            let v = v.trim().to_string();
            let pair = match k {
                "cb_write" | "cb_read" | "ds_write" | "ds_read" => (format!("romio_{k}"), v),
                "cb_per_node" => {
                    let n = if v == "0" { "*".to_string() } else { v };
                    ("cb_config_list".to_string(), format!("*:{n}"))
                }
                "stripe_size" | "layout.stripe_size" => ("striping_unit".to_string(), v),
                "stripe_count" | "layout.stripe_count" => ("striping_factor".to_string(), v),
                "cb_buffer_size"
                | "cb_nodes"
                | "ind_wr_buffer_size"
                | "ind_rd_buffer_size"
                | "aggregator_placement"
                | "file_domain"
                | "overlap_exchange"
                | "romio_cb_write"
                | "romio_cb_read"
                | "romio_ds_write"
                | "romio_ds_read"
                | "cb_config_list" => (k.to_string(), v),
                _ => return None,
            };
            Some(pair)
        })
        .collect()
}

/// Reads the trace and builds the job on `system`; `overrides` (hint name, value) win over
/// the hints the trace recorded (see [`hint_overrides`]).
pub fn replay(
    trace: &Trace,
    system: &System,
    overrides: &[(String, String)],
) -> Result<Replayed, ReplayError> {
    let ranks = trace.meta.job.ranks;
    if ranks == 0 {
        return Err(ReplayError::NoRanks);
    }
    let node_of = romio::rank_nodes(system, ranks)?;
    // The first process of each rank (a forked child keeps its parent's rank; skip it).
    let mut main_process: Vec<Option<u32>> = vec![None; ranks as usize];
    for p in &trace.meta.processes {
        if p.kind == ContainerKind::Process && p.rank >= 0 && (p.rank as u32) < ranks {
            let slot = &mut main_process[p.rank as usize];
            if slot.is_none() {
                *slot = Some(p.process);
            }
        }
    }

    // Top-level calls per rank, regions see-through.
    let mut tops: Vec<Vec<Top>> = (0..ranks).map(|_| Vec::new()).collect();
    let mut stacks: Vec<Vec<(bool, u8)>> = vec![Vec::new(); ranks as usize];
    for batch in trace.events()? {
        let batch = batch?;
        for e in batch.iter() {
            if e.rank < 0 || e.rank as u32 >= ranks || e.thread != 0 {
                continue;
            }
            if main_process[e.rank as usize] != Some(e.process as u32) {
                continue;
            }
            let r = e.rank as usize;
            let info = functions::by_id(e.func_id);
            let name = info.map_or("", |f| f.name);
            let mpi = e.mpi.get();
            let ev = Ev {
                id: e.id,
                start: e.start_ns.max(0) as u64,
                dur: e.duration_ns.max(0) as u64,
                func: e.func_id,
                name,
                layer: e.layer,
                file: e.file_id,
                offset: e.offset.map(|o| o.max(0) as u64),
                size: e.size.max(0) as u64,
                collective: e.collective,
                instance: e.instance,
                request: mpi.request,
                peer: mpi.peer,
                comm_size: mpi.comm_size,
                world: e
                    .comm
                    .is_some_and(|c| c == "world" || c == "MPI_COMM_WORLD"),
            };
            // Enclosing records: (replayed through, depth).
            let st = &mut stacks[r];
            st.truncate(e.depth as usize);
            let top_level = st.iter().all(|(through, _)| *through);
            let through = replayed_through(e.layer);
            st.push((through, e.depth));
            if through {
                continue;
            }
            if top_level {
                tops[r].push(Top {
                    ev,
                    children: Vec::new(),
                });
            } else if let Some(t) = tops[r].last_mut() {
                t.children.push(ev);
            }
        }
    }

    let mut settings: SettingsIndex = HashMap::new();
    for s in trace.settings()? {
        if let Some(f) = s.file_id {
            settings.entry((s.rank, f)).or_default().push(s);
        }
    }
    for v in settings.values_mut() {
        v.sort_by_key(|s| s.time_ns);
    }

    let mut b = ReplayBuilder {
        trace,
        system,
        overrides,
        settings,
        instance_ranks: instance_ranks(&tops),
        files: Vec::new(),
        file_map: HashMap::new(),
        file_hints: Vec::new(),
        written: 0,
        read: 0,
        calls: 0,
        as_compute: 0,
    };
    // Pass 1: per rank, steps; collective data calls collected by instance.
    let mut steps: Vec<Vec<Step>> = Vec::with_capacity(ranks as usize);
    let mut colls: BTreeMap<i32, Coll> = BTreeMap::new();
    for (r, rank_tops) in tops.iter().enumerate() {
        let mut out = Vec::new();
        let mut cur = Vec::new();
        let mut t = 0u64;
        let mut slots = SlotMap::new(ranks);
        for top in rank_tops {
            let e = &top.ev;
            if e.start > t {
                cur.push(Op::Compute { ns: e.start - t });
            }
            t = t.max(e.start + e.dur);
            b.calls += 1;
            if let Some((coll_key, req, pattern, hints)) = b.collective_data(r as Rank, top) {
                let c = colls.entry(coll_key).or_insert_with(|| Coll {
                    req,
                    patterns: vec![None; ranks as usize],
                    observed: vec![None; ranks as usize],
                    hints,
                });
                c.patterns[r] = Some(pattern);
                c.observed[r] = Some(e.id);
                out.push(Step::Ops(std::mem::take(&mut cur)));
                out.push(Step::Collective(coll_key));
                continue;
            }
            b.top(r as Rank, top, &mut cur, &mut slots);
        }
        out.push(Step::Ops(cur));
        steps.push(out);
    }

    // Pass 2: plan each collective; one whose ranks are not the whole job is replayed as
    // independent calls (the engine's barriers span every rank).
    let mut planned: HashMap<i32, Vec<Vec<Op>>> = HashMap::new();
    for (key, c) in colls {
        let whole = c.patterns.iter().all(Option::is_some);
        let ops = if whole {
            let patterns: Vec<Pattern> = c
                .patterns
                .into_iter()
                .map(Option::unwrap_or_default)
                .collect();
            romio::twophase::collective(
                &c.req,
                &patterns,
                &node_of,
                &c.hints,
                key as u32,
                &c.observed,
            )
        } else {
            c.patterns
                .iter()
                .zip(&c.observed)
                .map(|(p, o)| {
                    let mut prog = Vec::new();
                    if let Some(p) = p {
                        romio::independent(&mut prog, &c.req, p, &c.hints, *o);
                        if let Some(Op::Begin(call)) = prog.first_mut() {
                            call.collective = true;
                            call.instance = Some(key as u32);
                        }
                    }
                    prog
                })
                .collect()
        };
        planned.insert(key, ops);
    }
    let mut programs = Vec::with_capacity(ranks as usize);
    for (r, st) in steps.into_iter().enumerate() {
        let mut prog = Vec::new();
        for s in st {
            match s {
                Step::Ops(o) => prog.extend(o),
                Step::Collective(k) => {
                    if let Some(v) = planned.get_mut(&k) {
                        prog.extend(std::mem::take(&mut v[r]));
                    }
                }
            }
        }
        programs.push(prog);
    }
    let observed_files = b.files.iter().map(|(id, _)| *id).collect();
    let files = b.files.into_iter().map(|(_, p)| p).collect();
    Ok(Replayed {
        job: Job {
            programs,
            files,
            description: format!(
                "replay of {}",
                trace
                    .meta
                    .job
                    .command
                    .clone()
                    .unwrap_or_else(|| trace.dir.display().to_string())
            ),
        },
        observed_files,
        bytes_written: b.written,
        bytes_read: b.read,
        calls: b.calls,
        as_compute: b.as_compute,
        file_hints: b.file_hints,
    })
}

enum Step {
    Ops(Vec<Op>),
    Collective(i32),
}

struct Coll {
    req: Request,
    patterns: Vec<Option<Pattern>>,
    observed: Vec<Option<i64>>,
    hints: Hints,
}

/// Request ids → engine slots of one rank.
struct SlotMap {
    by_request: HashMap<i64, u32>,
    free: Vec<u32>,
    next: u32,
}

impl SlotMap {
    /// Replayed messages use slots above the ones ROMIO's exchanges use (at most two per
    /// peer and cycle, two cycles in flight: 4 × ranks), so a request pending across an
    /// MPI-IO call does not collide with them.
    fn new(ranks: u32) -> SlotMap {
        SlotMap {
            by_request: HashMap::new(),
            free: Vec::new(),
            next: 4 * ranks + 8,
        }
    }

    fn take(&mut self, request: Option<i64>) -> u32 {
        let s = self.free.pop().unwrap_or_else(|| {
            self.next += 1;
            self.next
        });
        if let Some(q) = request {
            self.by_request.insert(q, s);
        }
        s
    }
    fn complete(&mut self, requests: &[i64]) -> Vec<u32> {
        let mut out = Vec::new();
        for q in requests {
            if let Some(s) = self.by_request.remove(q) {
                out.push(s);
                self.free.push(s);
            }
        }
        out
    }
    fn complete_all(&mut self) -> Vec<u32> {
        let mut out: Vec<u32> = self.by_request.drain().map(|(_, s)| s).collect();
        out.sort_unstable();
        self.free.extend(out.iter().copied());
        out
    }
}

struct ReplayBuilder<'a> {
    trace: &'a Trace,
    system: &'a System,
    overrides: &'a [(String, String)],
    settings: SettingsIndex,
    /// Per MPI-IO collective instance: how many ranks took part in it.
    instance_ranks: HashMap<i32, u32>,
    /// Simulated files: (trace file_id, path).
    files: Vec<(i32, String)>,
    file_map: HashMap<i32, FileId>,
    file_hints: Vec<Hints>,
    written: u64,
    read: u64,
    calls: u64,
    as_compute: u64,
}

/// The view of a file as settings.parquet recorded it.
#[derive(Clone, Debug, Default, PartialEq)]
struct View {
    disp: u64,
    filetype_size: u64,
    extent: u64,
    runs: Option<u64>,
    flat: Option<Vec<(u64, u64)>>,
}

impl ReplayBuilder<'_> {
    fn file(&mut self, id: i32) -> Option<FileId> {
        if let Some(&f) = self.file_map.get(&id) {
            return Some(f);
        }
        let path = self.trace.file_path(id)?.to_string();
        if is_system_path(&path) {
            return None;
        }
        let f = self.files.len() as FileId;
        self.files.push((id, path));
        self.file_map.insert(id, f);
        let h = self.hints_at(0, id, u64::MAX);
        self.file_hints.push(h);
        Some(f)
    }

    /// Latest value per key for (rank, file) at or before t.
    fn values_at(&self, rank: Rank, file: i32, t: u64) -> HashMap<&str, &str> {
        let mut out = HashMap::new();
        if let Some(rows) = self.settings.get(&(rank as i32, file)) {
            for s in rows.iter().take_while(|s| s.time_ns.max(0) as u64 <= t) {
                out.insert(s.key.as_str(), s.value.as_str());
            }
        }
        out
    }

    fn hints_at(&self, rank: Rank, file: i32, t: u64) -> Hints {
        let mut h = Hints::from_system(self.system);
        for (k, v) in self.values_at(rank, file, t) {
            // A value ROMIO reported but this model cannot take is left at the default.
            let _ = h.set(k, v);
        }
        for (k, v) in self.overrides {
            let _ = h.set(k, v);
        }
        h
    }

    /// The view in force at t: the runtime writes a view as one group of rows at one time
    /// (disp, sizes, datarep always; runs and flat only when it could flatten the filetype),
    /// so the view is the latest group, not the latest value of each key: a set_view without
    /// `view.flat` must not inherit the open's.
    fn view_at(&self, rank: Rank, file: i32, t: u64) -> View {
        let mut vals: HashMap<&str, &str> = HashMap::new();
        if let Some(rows) = self.settings.get(&(rank as i32, file)) {
            let group = rows
                .iter()
                .filter(|s| s.time_ns.max(0) as u64 <= t && s.key == "view.disp")
                .map(|s| s.time_ns)
                .next_back();
            if let Some(g) = group {
                for s in rows
                    .iter()
                    .filter(|s| s.time_ns == g && s.key.starts_with("view."))
                {
                    vals.insert(s.key.as_str(), s.value.as_str());
                }
            }
        }
        let num = |k: &str| vals.get(k).and_then(|v| v.trim().parse::<u64>().ok());
        // A vector filetype too large to flatten comes as count:length:stride.
        let vector = vals.get("view.vector").and_then(|v| {
            let mut it = v.split(':').map(|x| x.trim().parse::<u64>().ok());
            let (count, len, stride) = (it.next()??, it.next()??, it.next()??);
            (count <= 1 << 24).then(|| (0..count).map(|i| (i * stride, len)).collect::<Vec<_>>())
        });
        let flat = vector.or_else(|| {
            vals.get("view.flat").and_then(|v| {
                v.split(',')
                    .filter(|s| !s.trim().is_empty())
                    .map(|run| {
                        let (o, l) = run.split_once(':')?;
                        Some((o.trim().parse().ok()?, l.trim().parse().ok()?))
                    })
                    .collect::<Option<Vec<(u64, u64)>>>()
            })
        });
        View {
            disp: num("view.disp").unwrap_or(0),
            filetype_size: num("view.filetype_size").unwrap_or(1).max(1),
            extent: num("view.filetype_extent").unwrap_or(1).max(1),
            runs: num("view.runs"),
            flat,
        }
    }

    /// The bytes an MPI-IO data call touched: from the view when it says enough, else from
    /// the observed children (see docs/MODEL.md).
    fn pattern(&self, rank: Rank, top: &Top, kind: IoKind) -> Pattern {
        let e = &top.ev;
        let Some(fid) = e.file else {
            return Pattern::empty();
        };
        let size = e.size;
        let offset = e.offset.unwrap_or(0);
        if size == 0 {
            return Pattern::empty();
        }
        let v = self.view_at(rank, fid, e.start);
        if v.filetype_size >= v.extent {
            return Pattern::contiguous(offset, size);
        }
        if let Some(flat) = v.flat.as_ref().filter(|f| !f.is_empty()) {
            return tile(&v, flat, offset, size);
        }
        // Pieces: the view's run count, else ROMIO's own offset/length lists (16 bytes per
        // piece) sent in the first exchange of a two-phase call, else the POSIX children of an
        // independent call without sieving (one access per piece), else one piece per
        // extent/size share of each filetype.
        let tiles = size.div_ceil(v.filetype_size).max(1);
        let mut k = v.runs.map(|r| r * tiles);
        if k.is_none() && e.collective {
            let mut sent = 0;
            for c in &top.children {
                match c.name {
                    "MPI_Isend" => sent += c.size,
                    "MPI_Allreduce" => break,
                    _ => {}
                }
            }
            if sent >= 16 {
                k = Some(sent / 16);
            }
        }
        if k.is_none() {
            let posix = match kind {
                IoKind::Write => ["pwrite", "pwrite64", "write"],
                IoKind::Read => ["pread", "pread64", "read"],
            };
            let pieces: Vec<(u64, u64)> = top
                .children
                .iter()
                .filter(|c| posix.contains(&c.name))
                .filter_map(|c| Some((c.offset?, c.size)))
                .collect();
            let total: u64 = pieces.iter().map(|p| p.1).sum();
            if !pieces.is_empty() && total == size {
                return Pattern::Runs(romio::Runs::new(pieces));
            }
        }
        let k = k
            .unwrap_or_else(|| tiles * (v.extent / v.filetype_size).max(1))
            .clamp(1, size);
        let len = size / k;
        let stride = (tiles * v.extent / k).max(len + 1);
        if size % k == 0 {
            return Pattern::vector(offset, k, len, stride);
        }
        // Keep every byte: the first size mod k pieces one byte longer.
        let extra = size % k;
        Pattern::Runs(romio::Runs::new(
            (0..k)
                .map(|i| (offset + i * stride, len + u64::from(i < extra)))
                .collect(),
        ))
    }

    /// A collective MPI-IO data call: its instance, request, pattern and hints.
    fn collective_data(&mut self, rank: Rank, top: &Top) -> Option<(i32, Request, Pattern, Hints)> {
        let e = &top.ev;
        if e.layer != Layer::MpiIo || !e.collective {
            return None;
        }
        let kind = data_kind(e.name)?;
        let instance = e.instance?;
        let fid = e.file?;
        let file = self.file(fid)?;
        let pattern = self.pattern(rank, top, kind);
        self.count(kind, pattern.bytes());
        let hints = self.hints_at(rank, fid, e.start);
        Some((
            instance,
            Request {
                func: e.func,
                file,
                kind,
            },
            pattern,
            hints,
        ))
    }

    fn count(&mut self, kind: IoKind, bytes: u64) {
        match kind {
            IoKind::Write => self.written += bytes,
            IoKind::Read => self.read += bytes,
        }
    }

    /// Replays one top-level call (not a collective data call) into `out`.
    fn top(&mut self, rank: Rank, top: &Top, out: &mut Vec<Op>, slots: &mut SlotMap) {
        let e = &top.ev;
        let observed = |c: &mut Call| c.observed_id = Some(e.id);
        let begin = out.len();
        let handled = match e.layer {
            Layer::MpiIo => self.mpiio(rank, top, out),
            Layer::Posix | Layer::Stdio => self.posix(e, out),
            Layer::Mpi => self.mpi(top, out, slots),
            _ => false,
        };
        if handled {
            if let Some(Op::Begin(c)) = out.get_mut(begin) {
                observed(c);
            }
            return;
        }
        out.truncate(begin);
        self.as_compute += 1;
        let mut c = calls::call(e.func);
        c.size = e.size;
        c.file = e.file.and_then(|f| self.file_map.get(&f).copied());
        c.collective = e.collective;
        observed(&mut c);
        calls::wrap(out, c, [Op::Compute { ns: e.dur }]);
    }

    /// Whether MPI-IO collective `e` of `rank` spans the whole job, so it may synchronize:
    /// every rank holds its instance; without an instance, the communicator size the file's
    /// open recorded is the job's (a trace without it: assumed so).
    fn spans_job(&self, rank: Rank, e: &Ev) -> bool {
        if !e.collective {
            return false;
        }
        let ranks = self.trace.meta.job.ranks;
        if let Some(i) = e.instance {
            return self.instance_ranks.get(&i).is_some_and(|&n| n == ranks);
        }
        let Some(fid) = e.file else {
            return true;
        };
        self.values_at(rank, fid, e.start)
            .get("open.comm_size")
            .and_then(|v| v.trim().parse::<u32>().ok())
            .is_none_or(|size| size == ranks)
    }

    fn mpiio(&mut self, rank: Rank, top: &Top, out: &mut Vec<Op>) -> bool {
        let e = &top.ev;
        let Some(fid) = e.file else {
            return false;
        };
        let Some(file) = self.file(fid) else {
            return false;
        };
        let instance = e.instance.map(|i| i as u32);
        let hints = self.hints_at(rank, fid, e.start);
        let begin = out.len();
        let job_wide = self.spans_job(rank, e);
        match e.name {
            "MPI_File_open" => {
                let vals = self.values_at(rank, fid, e.start);
                // MPI_MODE_CREATE is 1 in MPICH and Open MPI.
                let create = vals
                    .get("open.amode")
                    .and_then(|v| v.parse::<i64>().ok())
                    .is_some_and(|a| a & 1 != 0);
                romio::open(out, rank, file, create, job_wide, instance, &hints);
            }
            "MPI_File_close" => romio::close(out, file, job_wide, instance),
            "MPI_File_sync" => romio::sync(out, file, e.collective, instance),
            "MPI_File_set_view" => {
                if job_wide {
                    romio::set_view(out, file, e.offset.unwrap_or(0), instance);
                } else {
                    return false;
                }
            }
            "MPI_File_delete" => romio::delete(out, file),
            name => {
                let Some(kind) = data_kind(name) else {
                    return false;
                };
                let pattern = self.pattern(rank, top, kind);
                self.count(kind, pattern.bytes());
                let req = Request {
                    func: e.func,
                    file,
                    kind,
                };
                // Independent, or a collective without an instance (run alone).
                romio::independent(out, &req, &pattern, &hints, Some(e.id));
            }
        }
        // An open or close among fewer ranks than the job runs alone but stays collective.
        if matches!(e.name, "MPI_File_open" | "MPI_File_close") {
            if let Some(Op::Begin(c)) = out.get_mut(begin) {
                c.collective = e.collective;
            }
        }
        true
    }

    fn posix(&mut self, e: &Ev, out: &mut Vec<Op>) -> bool {
        let Some(fid) = e.file else {
            return false;
        };
        let Some(file) = self.file(fid) else {
            return false;
        };
        let kind = functions::by_id(e.func).map(|f| f.kind());
        let call = calls::file_call(e.func, file, e.offset, e.size);
        let op = match kind {
            Some(functions::OpKind::Write) => {
                self.written += e.size;
                Op::Io {
                    file,
                    kind: IoKind::Write,
                    offset: e.offset.unwrap_or(0),
                    bytes: e.size,
                }
            }
            Some(functions::OpKind::Read) => {
                self.read += e.size;
                Op::Io {
                    file,
                    kind: IoKind::Read,
                    offset: e.offset.unwrap_or(0),
                    bytes: e.size,
                }
            }
            _ => {
                let m = match e.name {
                    "open" | "open64" | "openat" | "openat64" | "fopen" | "fopen64" | "fdopen" => {
                        MetaKind::Open
                    }
                    "creat" | "creat64" => MetaKind::Create,
                    "close" | "fclose" => MetaKind::Close,
                    "fsync" | "fdatasync" => MetaKind::Sync,
                    "unlink" | "rmdir" => MetaKind::Remove,
                    n if n.contains("stat") => MetaKind::Stat,
                    _ => return false,
                };
                Op::Meta { file, kind: m }
            }
        };
        calls::wrap(out, call, [op]);
        true
    }

    fn mpi(&mut self, top: &Top, out: &mut Vec<Op>, slots: &mut SlotMap) -> bool {
        let e = &top.ev;
        let mut c = calls::call(e.func);
        c.size = e.size;
        c.collective = e.collective;
        let ranks = self.trace.meta.job.ranks as i32;
        let peer = e.peer.filter(|&p| p >= 0 && p < ranks).map(|p| p as Rank);
        if functions::is_mpi_collective(e.name) {
            // A collective of the whole job synchronizes it: a barrier (its data volume is
            // not modelled). On a smaller communicator: the observed time.
            if e.comm_size.is_some_and(|s| s == ranks) {
                calls::wrap(out, c, [Op::Barrier]);
                return true;
            }
            return false;
        }
        if functions::is_point_to_point(e.name) {
            let Some(p) = peer.filter(|_| e.world) else {
                return false;
            };
            c.peer = Some(p);
            let mut ops = Vec::new();
            match e.name {
                "MPI_Isend" | "MPI_Issend" => {
                    ops.push(Op::Isend {
                        to: p,
                        bytes: e.size,
                        slot: slots.take(e.request),
                    });
                }
                "MPI_Irecv" => {
                    ops.push(Op::Irecv {
                        from: p,
                        bytes: e.size,
                        slot: slots.take(e.request),
                    });
                }
                "MPI_Recv" => {
                    let s = slots.take(None);
                    ops.push(Op::Irecv {
                        from: p,
                        bytes: e.size,
                        slot: s,
                    });
                    ops.push(Op::WaitAll { slots: vec![s] });
                    slots.free.push(s);
                }
                "MPI_Sendrecv" => {
                    // Same peer both ways is the common (exchange) case.
                    let (s1, s2) = (slots.take(None), slots.take(None));
                    ops.push(Op::Irecv {
                        from: p,
                        bytes: e.size,
                        slot: s1,
                    });
                    ops.push(Op::Isend {
                        to: p,
                        bytes: e.size,
                        slot: s2,
                    });
                    ops.push(Op::WaitAll {
                        slots: vec![s1, s2],
                    });
                    slots.free.extend([s1, s2]);
                }
                _ => {
                    let s = slots.take(None);
                    ops.push(Op::Isend {
                        to: p,
                        bytes: e.size,
                        slot: s,
                    });
                    ops.push(Op::WaitAll { slots: vec![s] });
                    slots.free.push(s);
                }
            }
            calls::wrap(out, c, ops);
            return true;
        }
        if e.name.starts_with("MPI_Wait") || e.name.starts_with("MPI_Test") {
            let reqs: Vec<i64> = top.children.iter().filter_map(|k| k.request).collect();
            let done = if reqs.is_empty() && e.name.starts_with("MPI_Wait") {
                slots.complete_all()
            } else {
                slots.complete(&reqs)
            };
            let ops = if done.is_empty() {
                vec![Op::Compute { ns: e.dur }]
            } else {
                vec![Op::WaitAll { slots: done }]
            };
            calls::wrap(out, c, ops);
            return true;
        }
        false
    }
}

/// Per MPI-IO collective instance: the number of ranks whose top-level calls hold it.
fn instance_ranks(tops: &[Vec<Top>]) -> HashMap<i32, u32> {
    let mut count = HashMap::new();
    for rank_tops in tops {
        let mine: std::collections::BTreeSet<i32> = rank_tops
            .iter()
            .filter(|t| t.ev.layer == Layer::MpiIo && t.ev.collective)
            .filter_map(|t| t.ev.instance)
            .collect();
        for i in mine {
            *count.entry(i).or_insert(0) += 1;
        }
    }
    count
}

/// Read or write, for MPI-IO data calls (split-collective `_end` and non-data calls: None).
fn data_kind(name: &str) -> Option<IoKind> {
    if name.ends_with("_end") {
        return None;
    }
    if name.starts_with("MPI_File_write") || name.starts_with("MPI_File_iwrite") {
        Some(IoKind::Write)
    } else if name.starts_with("MPI_File_read") || name.starts_with("MPI_File_iread") {
        Some(IoKind::Read)
    } else {
        None
    }
}

/// `size` bytes from file offset `offset` through a view whose filetype holds `flat` runs
/// (offsets relative to disp) and tiles every `extent` bytes.
fn tile(v: &View, flat: &[(u64, u64)], offset: u64, size: u64) -> Pattern {
    let rel = offset.saturating_sub(v.disp);
    let mut tile_no = rel / v.extent;
    let in_tile = rel % v.extent;
    // The run holding the first byte (or the next one after it).
    let mut i = flat
        .iter()
        .position(|&(o, l)| o + l > in_tile)
        .unwrap_or(flat.len());
    let mut skip = flat.get(i).map_or(0, |&(o, _)| in_tile.saturating_sub(o));
    let mut left = size;
    let mut pieces = Vec::new();
    let limit = 50_000_000usize;
    while left > 0 && pieces.len() < limit {
        if i >= flat.len() {
            i = 0;
            tile_no += 1;
        }
        let (o, l) = flat[i];
        let take = (l - skip).min(left);
        pieces.push((v.disp + tile_no * v.extent + o + skip, take));
        left -= take;
        skip = 0;
        i += 1;
    }
    Pattern::Runs(romio::Runs::new(pieces))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiles_a_flat_view() {
        let v = View {
            disp: 100,
            filetype_size: 8,
            extent: 20,
            runs: Some(2),
            flat: Some(vec![(0, 4), (10, 4)]),
        };
        let p = tile(&v, v.flat.as_ref().unwrap(), 112, 10);
        let Pattern::Runs(r) = p else { panic!() };
        assert_eq!(r.as_slice(), &[(112, 2), (120, 4), (130, 4)]);
    }

    #[test]
    fn overrides_from_sets() {
        let sets = vec![
            "cb_buffer_size=64M".to_string(),
            "mpiio.cb_write=disable".to_string(),
            "cb_per_node=0".to_string(),
            "storage.disk.rpm=7200".to_string(),
        ];
        assert_eq!(
            hint_overrides(&sets),
            vec![
                ("cb_buffer_size".to_string(), "64M".to_string()),
                ("romio_cb_write".to_string(), "disable".to_string()),
                ("cb_config_list".to_string(), "*:*".to_string()),
            ]
        );
    }

    #[test]
    fn system_paths() {
        assert!(is_system_path("/proc/self/maps"));
        assert!(is_system_path("/dev/shm/x"));
        assert!(!is_system_path("/tmp/x.dat"));
        assert!(!is_system_path("/scratch/a"));
    }

    /// One recorded event of a hand-made trace: (rank, start, func, file, offset, size,
    /// collective instance, communicator size).
    type Row = (
        i32,
        i64,
        &'static str,
        Option<i32>,
        i64,
        i64,
        Option<i32>,
        Option<i32>,
    );

    /// Writes a two-rank trace of `rows` (in store order) on files /scratch/self.dat (0) and
    /// /scratch/shared.dat (1), with the open settings the runtime records.
    fn write_trace(dir: &std::path::Path, rows: &[Row], settings: &[SettingRow]) -> Trace {
        use pioscope_trace::store::meta::{ClockMeta, JobMeta, Meta, ProcessMeta};
        use pioscope_trace::store::{Event, FileRow, MpiArgs, MpiRef, StoreWriter};
        let out = dir.join("trace");
        let mut w = StoreWriter::create(&out).unwrap();
        for (id, &(rank, start, func, file, offset, size, instance, comm_size)) in
            rows.iter().enumerate()
        {
            let info = functions::by_name(func).unwrap();
            let collective = instance.is_some() || comm_size.is_some();
            w.push(&Event {
                id: id as i64,
                rank,
                process: rank,
                thread: 0,
                start_ns: start,
                duration_ns: 1000,
                layer: info.layer,
                func,
                func_id: info.id,
                depth: 0,
                parent: None,
                file_id: file,
                offset: file.map(|_| offset),
                size,
                result: size,
                error: 0,
                flags: 0,
                collective,
                instance,
                mpi: MpiRef::to(&MpiArgs {
                    comm_size,
                    ..MpiArgs::NONE
                }),
                comm: comm_size.map(|n| if n == 1 { "self" } else { "world" }),
                region: None,
            })
            .unwrap();
        }
        let files: Vec<FileRow> = ["/scratch/self.dat", "/scratch/shared.dat"]
            .iter()
            .enumerate()
            .map(|(i, p)| FileRow {
                file_id: i as i32,
                path: p.to_string(),
                fs_type: "lustre".to_string(),
                fs_magic: 0,
                ranks: 2 - i as i32 % 2,
                events: 0,
            })
            .collect();
        let processes = (0..2)
            .map(|r| {
                ProcessMeta::generated(
                    r,
                    ContainerKind::Process,
                    r as i32,
                    "node0".to_string(),
                    ClockMeta::exact("test", 100_000, 0),
                )
            })
            .collect();
        let job = JobMeta {
            command: Some("test".to_string()),
            start_unix_ns: 0,
            duration_ns: 100_000,
            ranks: 2,
            hosts: vec!["node0".to_string(); 2],
            mpi_library: None,
        };
        w.finish(
            &files,
            settings,
            Meta::new("test".to_string(), job, processes),
        )
        .unwrap();
        Trace::open(&out).unwrap()
    }

    fn open_settings(rank: i32, time_ns: i64, file: i32, comm_size: u32) -> Vec<SettingRow> {
        [
            ("open.amode", "37"),
            ("open.comm_size", &comm_size.to_string()),
        ]
        .iter()
        .map(|(k, v)| SettingRow {
            rank,
            process: rank,
            time_ns,
            file_id: Some(file),
            func: "MPI_File_open".to_string(),
            key: k.to_string(),
            value: v.to_string(),
        })
        .collect()
    }

    /// The outermost calls each rank made in a simulation.
    #[derive(Default)]
    struct TopCalls(Vec<Vec<(&'static str, bool)>>);

    impl crate::program::Recorder for TopCalls {
        fn call(&mut self, rank: Rank, depth: u8, call: &Call, _: u64, _: u64) {
            if depth == 0 {
                let r = rank as usize;
                if self.0.len() <= r {
                    self.0.resize(r + 1, Vec::new());
                }
                let name = functions::by_id(call.func).map_or("?", |f| f.name);
                self.0[r].push((name, call.collective));
            }
        }
        fn server(&mut self, _: &crate::program::ServerActivity) {}
        fn disk(&mut self, _: &crate::program::DiskActivity) {}
    }

    /// Issue 13: a file one rank opens on MPI_COMM_SELF (IOR's existence check) made the
    /// replay wait at a barrier for ranks that never came (a deadlock in the engine).
    #[test]
    fn a_file_opened_on_comm_self_replays_without_waiting_for_other_ranks() {
        let (s, w) = (Some(0), Some(1));
        let rows: Vec<Row> = vec![
            // Rank 0 alone: open on SELF, write, close, a barrier on SELF.
            (0, 0, "MPI_File_open", s, 0, 0, Some(1), None),
            (0, 2000, "MPI_File_write_at", s, 0, 4096, None, None),
            (0, 4000, "MPI_File_close", s, 0, 0, Some(2), None),
            (0, 5500, "MPI_Barrier", None, 0, 0, None, Some(1)),
            // Both ranks: the shared file on MPI_COMM_WORLD, and a barrier on it.
            (0, 10000, "MPI_File_open", w, 0, 0, Some(3), None),
            (0, 12000, "MPI_File_write_at_all", w, 0, 4096, Some(4), None),
            (0, 14000, "MPI_File_close", w, 0, 0, Some(5), None),
            (0, 16000, "MPI_Barrier", None, 0, 0, None, Some(2)),
            (1, 10000, "MPI_File_open", w, 0, 0, Some(3), None),
            (
                1,
                12000,
                "MPI_File_write_at_all",
                w,
                4096,
                4096,
                Some(4),
                None,
            ),
            (1, 14000, "MPI_File_close", w, 0, 0, Some(5), None),
            (1, 16000, "MPI_Barrier", None, 0, 0, None, Some(2)),
        ];
        let mut settings = open_settings(0, 0, 0, 1);
        settings.extend(open_settings(0, 10000, 1, 2));
        settings.extend(open_settings(1, 10000, 1, 2));
        let tmp = tempfile::tempdir().unwrap();
        let trace = write_trace(tmp.path(), &rows, &settings);
        let sys = crate::model::load::system("local", &[]).unwrap();
        let r = replay(&trace, &sys, &[]).unwrap();
        assert_eq!(r.bytes_written, 3 * 4096);
        // The barrier on SELF keeps its observed time; everything else is modelled.
        assert_eq!(r.as_compute, 1);
        // The same number of whole-job barriers on both ranks: none from the SELF calls.
        let barriers: Vec<usize> = r
            .job
            .programs
            .iter()
            .map(|p| p.iter().filter(|o| matches!(o, Op::Barrier)).count())
            .collect();
        assert_eq!(barriers[0], barriers[1], "{barriers:?}");
        let mut calls = TopCalls::default();
        crate::engine::run(&sys, &r.job, 1, &mut calls).expect("the replay runs to the end");
        let world = [
            ("MPI_File_open", true),
            ("MPI_File_write_at_all", true),
            ("MPI_File_close", true),
            ("MPI_Barrier", true),
        ];
        let mut rank0 = vec![
            ("MPI_File_open", true),
            ("MPI_File_write_at", false),
            ("MPI_File_close", true),
            ("MPI_Barrier", true),
        ];
        rank0.extend(world);
        assert_eq!(calls.0, vec![rank0, world.to_vec()]);
    }

    #[test]
    fn kinds() {
        assert_eq!(data_kind("MPI_File_write_at_all"), Some(IoKind::Write));
        assert_eq!(data_kind("MPI_File_iread"), Some(IoKind::Read));
        assert_eq!(data_kind("MPI_File_write_all_end"), None);
        assert_eq!(data_kind("MPI_File_open"), None);
    }
}
