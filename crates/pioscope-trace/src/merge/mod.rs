//! Merge: a directory of raw files → a trace store.
//!
//! Two passes keep memory bounded whatever a rank recorded:
//! 1. every file is decoded without keeping its events: headers, strings, job facts, clock
//!    pairs and syncs, settings, the earliest event, how early the records after each point
//!    start (`floors`) and the collective links. That is enough to fit clocks, find the job
//!    start, number files and collective instances;
//! 2. rank by rank, the files of the rank are decoded again, each event converted to a compact
//!    row as the decoder passes it; a row waits (`reorder`: in memory up to a cap, then in
//!    sorted runs on disk) until no record still to come can start before it, then leaves in
//!    store order and is given its parent and region (`nesting`, `emit`) and written (the
//!    store writer encodes on a second thread meanwhile).
//!
//! The store is written by `StoreWriter`, which renames it into place at the end, so a failed
//! merge never leaves something that looks like a trace.
//!
//! Storage server daemons traced in server mode (`servers`) join as containers of kind
//! `server`: their records that overlap the job's window, after the job's processes. A
//! daemon's rotating raw file is several segments (`segments`), joined into one process.

pub mod clock;
pub mod counters;
mod emit;
pub mod facts;
pub mod floors;
pub mod instances;
pub mod messages;
pub mod nesting;
mod reorder;
pub mod segments;
pub mod servers;

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use rustc_hash::FxHashMap;
use thiserror::Error;

use crate::functions::{self, Layer};
use crate::raw::format::{clock_kind, flags, string_kind, RAW_SUFFIX};
use crate::raw::{read_raw_file_with, RawEvent, RawFile};
use crate::scope;
use crate::store::meta::{
    ClockMeta, ContainerKind, FitMethod, JobMeta, Meta, OffsetSource, ProcessMeta,
};
use crate::store::{fs_type_name, FileRow, SettingRow, StoreError, StoreWriter, EVENTS_FILE};
use clock::{median, resolve_fit, Neighbours, OffsetModel, OwnFit, TickFit};
use emit::{Emitter, FileStats};
use floors::StartFloors;
use reorder::{Reorder, Row};
use servers::ServerIdentity;

/// Errors that stop a merge.
#[derive(Debug, Error)]
pub enum MergeError {
    /// The raw directory does not exist.
    #[error("raw directory {} not found", .0.display())]
    RawDirNotFound(PathBuf),
    /// It is not a directory.
    #[error("{} is not a directory of raw files", .0.display())]
    RawDirNotDir(PathBuf),
    /// It holds no raw files.
    #[error("raw directory {} holds no {RAW_SUFFIX} files", .0.display())]
    NoRawFiles(PathBuf),
    /// Every raw file is unusable.
    #[error("no usable raw file in {}: {reasons}", dir.display())]
    NothingUsable {
        /// The raw directory.
        dir: PathBuf,
        /// Why, file by file.
        reasons: String,
    },
    /// The output exists.
    #[error("{} already exists", .0.display())]
    OutputExists(PathBuf),
    /// A raw file changed between the two passes (is the program still running?).
    #[error("raw file {0} changed during the merge (is the traced program still running?)")]
    RawFileChanged(String),
    /// File system error.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The error.
        #[source]
        source: io::Error,
    },
    /// Writing the store failed.
    #[error("writing {}: {source}", path.display())]
    Store {
        /// The table.
        path: PathBuf,
        /// The error.
        #[source]
        source: StoreError,
    },
}

fn io_context(context: impl Into<String>) -> impl FnOnce(io::Error) -> MergeError {
    let context = context.into();
    move |source| MergeError::Io { context, source }
}

/// Progress of a merge in raw bytes decoded (each file is decoded twice).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    /// Bytes done.
    pub done: u64,
    /// Bytes in all.
    pub total: u64,
}

/// Operation and byte totals of one layer, for a run summary.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LayerTotals {
    /// Records.
    pub operations: u64,
    /// Bytes read (see `functions::bytes_moved`).
    pub bytes_read: u64,
    /// Bytes written (see `functions::bytes_moved`).
    pub bytes_written: u64,
}

/// The application's records per layer, for a run summary (`crate::scope`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ApplicationTotals {
    /// Totals per layer of the records `scope::is_application_record` counts.
    pub layers: BTreeMap<Layer, LayerTotals>,
    /// Records left out: POSIX and STDIO on system files or descriptors without a file.
    pub left_out: u64,
}

/// What a merge produced.
#[derive(Clone, Debug)]
pub struct MergeSummary {
    /// The trace directory.
    pub trace_dir: PathBuf,
    /// Its meta.json.
    pub meta: Meta,
    /// Totals of the application's records.
    pub totals: ApplicationTotals,
    /// Things worth telling the user that are not data loss (clock fallbacks).
    pub notes: Vec<String>,
}

/// The raw files (`*.praw`) of a directory, sorted by name: every entry so named but a
/// directory, so that one that is not a regular file (a FIFO, a link to a device) is reported
/// as unusable when read instead of being passed over in silence.
pub fn list_raw_files(dir: &Path) -> Result<Vec<PathBuf>, MergeError> {
    if !dir.exists() {
        return Err(MergeError::RawDirNotFound(dir.to_path_buf()));
    }
    if !dir.is_dir() {
        return Err(MergeError::RawDirNotDir(dir.to_path_buf()));
    }
    let mut files = Vec::new();
    for entry in fs::read_dir(dir).map_err(io_context(format!("listing {}", dir.display())))? {
        let entry = entry.map_err(io_context(format!("listing {}", dir.display())))?;
        let path = entry.path();
        if !path.is_dir()
            && path
                .file_name()
                .is_some_and(|n| n.to_string_lossy().ends_with(RAW_SUFFIX))
        {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

/// One usable raw file (or the segments of one process's rotating raw file, joined) after the
/// first pass.
struct Proc {
    raw: RawFile,
    /// Its raw files: one, or the segments still on disk, oldest first.
    segments: Vec<PathBuf>,
    file_size: u64,
    rank: i32,
    host: String,
    min_event_start: Option<u64>,
    links: Vec<(u64, u64)>,
    fit: TickFit,
    clock_span_ns: u64,
    offset: OffsetModel,
    /// Corrected (reference clock) ns of the tracer start, before subtracting the job start.
    start_abs: i64,
    /// Corrected ns of the earliest thing in the file.
    first_abs: i64,
    index: usize,
    /// (string kind, string id) → global file id or name index.
    strings: FxHashMap<(u16, u32), usize>,
    /// The latest end (start + duration) of an event, in ticks.
    max_event_end: Option<u64>,
    /// How early the records after any point of the file start (pass 2 emits by it).
    floors: StartFloors,
    /// A storage server daemon (from the servers' directory), not a process of the job.
    server: Option<ServerIdentity>,
}

impl Proc {
    /// Reference-clock ns (not yet relative to the job start) at `ticks`.
    fn abs_ns(&self, ticks: u64) -> i64 {
        let mono = self.fit.mono_ns(ticks);
        mono + self.offset.offset_at(mono)
    }

    /// Reference-clock start and duration of a call of `duration` ticks from `start`. Its end
    /// goes through the same line as its start: a clock that drifts against the reference's
    /// (the offset moving between MPI_Init and MPI_Finalize) gives durations in the reference's
    /// ns, and calls that follow or nest on one thread keep doing so after the merge (0 if a
    /// wildly measured drift would run the clock backwards).
    fn abs_span(&self, start: u64, duration: u64) -> (i64, i64) {
        let from = self.abs_ns(start);
        let to = self.abs_ns(start.saturating_add(duration));
        (from, (to - from).max(0))
    }

    /// True when later ticks never give earlier reference ns (the clock line rises and the
    /// offset does not fall faster than time passes), so a start floor in ticks is one in ns.
    fn keeps_order(&self) -> bool {
        self.fit.ns_per_tick > 0.0 && self.offset.slope() > -1.0
    }

    /// Who this is, for messages: `server NAME`, `rank-N` or `pid-N`.
    fn who(&self) -> String {
        if let Some(s) = &self.server {
            format!("server {}", s.name)
        } else if self.rank >= 0 {
            format!("rank-{}", self.rank)
        } else {
            format!("pid-{}", self.raw.header.pid)
        }
    }

    fn label(&self) -> String {
        format!("{} raw file {}", self.who(), self.raw.file_name())
    }

    /// Takes in `next`, the following segment of the same process (`segments`).
    fn append_segment(&mut self, next: Proc) {
        self.raw.append_segment(next.raw);
        self.segments.extend(next.segments);
        self.file_size += next.file_size;
        self.min_event_start = match (self.min_event_start, next.min_event_start) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.max_event_end = self.max_event_end.max(next.max_event_end);
        self.links.extend(next.links);
        self.floors.append(next.floors);
    }
}

/// Joins the segments of each process's rotating raw file into one `Proc` (`segments`).
fn join_segments(procs: Vec<Proc>) -> Vec<Proc> {
    let groups = segments::group(&procs.iter().map(|p| &p.raw).collect::<Vec<_>>());
    let mut slots: Vec<Option<Proc>> = procs.into_iter().map(Some).collect();
    groups
        .into_iter()
        .filter_map(|group| {
            let mut members = group.into_iter().filter_map(|i| slots[i].take());
            let mut first = members.next()?;
            members.for_each(|next| first.append_segment(next));
            Some(first)
        })
        .collect()
}

/// Merges every raw file of `raw_dir` into a new trace directory `out`.
///
/// Damaged files contribute what they hold before the damage and make the trace partial;
/// files that cannot be used at all are listed in the partial reasons. Fails only when nothing
/// can be merged or the output cannot be written.
pub fn merge(
    raw_dir: &Path,
    out: &Path,
    progress: &mut dyn FnMut(Progress),
) -> Result<MergeSummary, MergeError> {
    merge_with_servers(raw_dir, None, out, progress)
}

/// `merge`, with the storage server daemons whose raw files are in `servers_dir` (written in
/// server mode, docs/SERVERS.md) added as `server` containers: the daemons that lived during
/// the job, their records that overlap its window.
pub fn merge_with_servers(
    raw_dir: &Path,
    servers_dir: Option<&Path>,
    out: &Path,
    progress: &mut dyn FnMut(Progress),
) -> Result<MergeSummary, MergeError> {
    merge_holding(raw_dir, servers_dir, out, reorder::DEFAULT_CAP, progress)
}

/// `merge_with_servers` holding at most `cap` records in memory while they wait for store
/// order (more are spilled to sorted runs next to `out`).
fn merge_holding(
    raw_dir: &Path,
    servers_dir: Option<&Path>,
    out: &Path,
    cap: usize,
    progress: &mut dyn FnMut(Progress),
) -> Result<MergeSummary, MergeError> {
    if out.exists() {
        return Err(MergeError::OutputExists(out.to_path_buf()));
    }
    let paths = list_raw_files(raw_dir)?;
    if paths.is_empty() {
        return Err(MergeError::NoRawFiles(raw_dir.to_path_buf()));
    }
    let server_paths = match servers_dir {
        Some(dir) => {
            let found = list_raw_files(dir)?;
            if found.is_empty() {
                return Err(MergeError::NoRawFiles(dir.to_path_buf()));
            }
            found
        }
        None => Vec::new(),
    };
    let sizes: Vec<u64> = paths
        .iter()
        .chain(&server_paths)
        .map(|p| fs::metadata(p).map(|m| m.len()).unwrap_or(0))
        .collect();
    let mut prog = Progress {
        done: 0,
        total: sizes.iter().sum::<u64>() * 2,
    };
    progress(prog);

    // Pass 1: everything but the events.
    let mut procs = Vec::new();
    let mut unusable = Vec::new();
    let world_limit = facts::plausible_world(paths.len());
    let mut doubts = Vec::new();
    for (k, (path, &size)) in paths.iter().chain(&server_paths).zip(&sizes).enumerate() {
        let is_server = k >= paths.len();
        let mut min_start: Option<u64> = None;
        let mut max_end: Option<u64> = None;
        let mut links = Vec::new();
        let mut floors = StartFloors::new();
        let result = read_raw_file_with(path, &mut |e| {
            floors.push(e.start);
            min_start = Some(min_start.map_or(e.start, |m| m.min(e.start)));
            let end = e.start.saturating_add(e.duration);
            max_end = Some(max_end.map_or(end, |m| m.max(end)));
            if is_collective_instance(e.func, e.flags, e.link) {
                links.push((e.link, e.start));
            }
            false
        });
        prog.done += size;
        progress(prog);
        match result {
            Ok(raw) => procs.push(Proc {
                host: raw
                    .job_fact("host")
                    .or_else(|| raw.job_fact("hostname"))
                    .unwrap_or("")
                    .to_string(),
                rank: if is_server {
                    -1
                } else {
                    facts::rank(&raw, world_limit, &mut doubts)
                },
                server: is_server.then(|| {
                    servers::identify(
                        raw.job_fact("host").unwrap_or(""),
                        raw.job_fact("exe"),
                        raw.job_fact("cmdline"),
                    )
                }),
                max_event_end: max_end,
                floors,
                raw,
                segments: vec![path.clone()],
                file_size: size,
                min_event_start: min_start,
                links,
                fit: TickFit::through_mean(&[], 1.0, FitMethod::Assumed),
                clock_span_ns: 0,
                offset: OffsetModel::NONE,
                start_abs: 0,
                first_abs: 0,
                index: 0,
                strings: FxHashMap::default(),
            }),
            Err(e) => unusable.push(e.to_string()),
        }
    }
    let mut procs = join_segments(procs);
    procs.iter_mut().for_each(|p| p.floors.finish());
    if procs.is_empty() {
        return Err(MergeError::NothingUsable {
            dir: raw_dir.to_path_buf(),
            reasons: unusable.join("; "),
        });
    }

    if procs.iter().all(|p| p.server.is_some()) {
        return Err(MergeError::NothingUsable {
            dir: raw_dir.to_path_buf(),
            reasons: unusable.join("; "),
        });
    }

    inherit_ranks(&mut procs);
    let mut notes = fit_clocks(&mut procs);
    notes.extend(
        procs
            .iter()
            .filter_map(|p| segments::dropped_note(&p.who(), &p.raw)),
    );
    resolve_offsets(&mut procs);
    for p in procs.iter_mut() {
        p.start_abs = p.abs_ns(p.raw.header.start_ticks);
        p.first_abs = p
            .min_event_start
            .map_or(p.start_abs, |t| p.abs_ns(t).min(p.start_abs));
    }
    // The job's window comes from its own processes; the servers are cut to it.
    let clients = || procs.iter().filter(|p| p.server.is_none());
    let job_start = clients().map(|p| p.first_abs).min().unwrap_or(0);
    let job_end = clients()
        .map(|p| p.max_event_end.map_or(p.start_abs, |t| p.abs_ns(t)))
        .max()
        .unwrap_or(job_start);
    procs.retain(|p| {
        p.server.is_none()
            || servers::lived_during(
                p.start_abs,
                p.max_event_end.map(|t| p.abs_ns(t)),
                p.raw.ended,
                job_start,
                job_end,
            )
    });
    procs.sort_by(|a, b| {
        (
            a.server.is_some(),
            a.rank,
            a.start_abs,
            a.raw.header.pid,
            &a.raw.path,
        )
            .cmp(&(
                b.server.is_some(),
                b.rank,
                b.start_abs,
                b.raw.header.pid,
                &b.raw.path,
            ))
    });
    for (i, p) in procs.iter_mut().enumerate() {
        p.index = i;
    }

    // Global numbering: files by path, names (regions, communicators), collective instances.
    let mut paths_seen: BTreeMap<String, u64> = BTreeMap::new();
    for p in &procs {
        for s in p.raw.strings.iter().filter(|s| s.kind == string_kind::FILE) {
            let magic = paths_seen.entry(s.text.clone()).or_insert(0);
            if *magic == 0 {
                *magic = s.fs_magic;
            }
        }
    }
    let file_ids: HashMap<&str, usize> = paths_seen
        .keys()
        .enumerate()
        .map(|(i, p)| (p.as_str(), i))
        .collect();
    let mut names: Vec<String> = Vec::new();
    let mut name_ids: HashMap<String, usize> = HashMap::new();
    let mut proc_strings = Vec::with_capacity(procs.len());
    for p in &procs {
        let mut map = FxHashMap::default();
        for s in &p.raw.strings {
            let v = if s.kind == string_kind::FILE {
                file_ids[s.text.as_str()]
            } else {
                *name_ids.entry(s.text.clone()).or_insert_with(|| {
                    names.push(s.text.clone());
                    names.len() - 1
                })
            };
            map.entry((s.kind, s.id)).or_insert(v);
        }
        proc_strings.push(map);
    }
    for (p, map) in procs.iter_mut().zip(proc_strings) {
        p.strings = map;
    }
    let instance_of = instances::densify(
        procs
            .iter()
            .flat_map(|p| p.links.iter().map(move |&(link, t)| (link, p.abs_ns(t)))),
    );

    // Pass 2: events, rank by rank, through the store writer (renamed into place at the end).
    let system_files: Vec<bool> = paths_seen
        .keys()
        .map(|p| scope::is_hidden_path(p))
        .collect();
    let numbering = Numbering {
        job_start,
        job_end,
        instance_of: &instance_of,
        names: &names,
        system_files: &system_files,
    };
    let store_err = |source| MergeError::Store {
        path: out.to_path_buf(),
        source,
    };
    let mut writer = StoreWriter::create(out).map_err(store_err)?;
    let spill_dir = match out.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let buffering = Buffering { cap, spill_dir };
    let (totals, file_stats) = write_events(
        &mut writer,
        &procs,
        &numbering,
        &buffering,
        &mut prog,
        progress,
    )?;
    let clocks: Vec<counters::ProcessClock<'_>> = procs
        .iter()
        .map(|p| counters::ProcessClock {
            host: &p.host,
            pid: p.raw.header.pid,
            process: p.index as i32,
            offset: p.offset,
        })
        .collect();
    let end_ns = writer.end_ns();
    writer.add_counters(counters::read_job_and_servers(
        raw_dir,
        servers_dir,
        &clocks,
        job_start,
        end_ns,
        &mut notes,
    ));
    let settings = settings_rows(&procs, job_start);
    let files: Vec<FileRow> = paths_seen
        .iter()
        .enumerate()
        .map(|(i, (path, &magic))| FileRow {
            file_id: i as i32,
            path: path.clone(),
            fs_type: fs_type_name(magic).to_string(),
            fs_magic: magic as i64,
            ranks: file_stats.get(&i).map_or(0, |s| s.1.len() as i32),
            events: file_stats.get(&i).map_or(0, |s| s.0),
        })
        .collect();
    let merged_paths: Vec<PathBuf> = paths
        .iter()
        .cloned()
        .chain(
            procs
                .iter()
                .filter(|p| p.server.is_some())
                .flat_map(|p| p.segments.iter().cloned()),
        )
        .collect();
    let meta = build_meta(
        &procs,
        &unusable,
        &mut doubts,
        job_start,
        writer.end_ns(),
        &merged_paths,
        paths.len(),
    );
    let finished = writer.finish(&files, &settings, meta).map_err(store_err)?;
    Ok(MergeSummary {
        trace_dir: out.to_path_buf(),
        meta: finished.meta,
        totals,
        notes,
    })
}

/// True for records that belong to a collective instance (see `instances`).
fn is_collective_instance(func: u16, fl: u8, link: u64) -> bool {
    link != 0
        && fl & flags::COLLECTIVE != 0
        && fl & flags::NONBLOCKING == 0
        && Layer::from_id_range(func) == Layer::MpiIo
}

/// A process without a `rank` fact takes its parent's (a forked child), found by ppid on the
/// same host.
fn inherit_ranks(procs: &mut [Proc]) {
    let by_pid: HashMap<(String, u32), i32> = procs
        .iter()
        .map(|p| ((p.host.clone(), p.raw.header.pid), p.rank))
        .collect();
    for _ in 0..8 {
        let mut changed = false;
        for p in procs
            .iter_mut()
            .filter(|p| p.rank < 0 && p.raw.job_fact("rank").is_none())
        {
            if let Some(&r) = by_pid.get(&(p.host.clone(), p.raw.header.ppid)) {
                if r >= 0 {
                    p.rank = r;
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
}

/// Fits every process's ticks → ns line (rules in `clock`); returns notes on fallbacks.
fn fit_clocks(procs: &mut [Proc]) -> Vec<String> {
    let own: Vec<OwnFit> = procs
        .iter()
        .map(|p| OwnFit::of(&p.raw.clock_pairs))
        .collect();
    let good = |host: Option<&str>, same: bool| {
        median(
            procs
                .iter()
                .zip(&own)
                .filter(|(p, _)| p.raw.header.clock_kind == clock_kind::TSC)
                .filter(|(p, _)| host.is_none_or(|h| (h == p.host) == same))
                .filter_map(|(_, o)| o.good_rate())
                .collect(),
        )
    };
    let mut notes = Vec::new();
    let fits: Vec<TickFit> = procs
        .iter()
        .zip(&own)
        .map(|(p, o)| {
            let hz = p.raw.job_fact("tsc_hz").and_then(|v| v.trim().parse::<f64>().ok());
            let neighbours = if p.raw.header.clock_kind == clock_kind::TSC && o.good_rate().is_none() {
                Neighbours { same_host: good(Some(&p.host), true), other_hosts: good(Some(&p.host), false) }
            } else {
                Neighbours::default()
            };
            let fit = resolve_fit(p.raw.header.clock_kind, &p.raw.clock_pairs, o, hz, neighbours);
            if fit.method == FitMethod::Assumed {
                notes.push(format!(
                    "{}: a single clock pair and no other process to learn the TSC rate from; 1 ns per tick assumed, its durations are unreliable",
                    p.label()
                ));
            }
            fit
        })
        .collect();
    for (p, fit) in procs.iter_mut().zip(fits) {
        p.fit = fit;
        p.clock_span_ns = clock::span_ns(&p.raw.clock_pairs);
    }
    notes
}

/// Offsets from each process's own CLOCK_SYNC records, or its parent's (same host, so same
/// CLOCK_MONOTONIC) when it has none: a forked child or a program started by a rank. Processes
/// on the reference rank's host share its clock and get offset 0.
fn resolve_offsets(procs: &mut [Proc]) {
    let own: Vec<OffsetModel> = procs
        .iter()
        .map(|p| OffsetModel::from_syncs(&p.raw.clock_syncs))
        .collect();
    let by_pid: HashMap<(&str, u32), usize> = procs
        .iter()
        .enumerate()
        .map(|(i, p)| ((p.host.as_str(), p.raw.header.pid), i))
        .collect();
    let mut models = own.clone();
    for i in 0..procs.len() {
        if own[i].source != OffsetSource::None {
            continue;
        }
        let mut cur = i;
        for _ in 0..16 {
            let key = (procs[cur].host.as_str(), procs[cur].raw.header.ppid);
            match by_pid.get(&key) {
                Some(&parent) if parent != cur => {
                    if own[parent].source != OffsetSource::None {
                        models[i] = own[parent].inherited();
                        break;
                    }
                    cur = parent;
                }
                _ => break,
            }
        }
    }
    let reference = procs.iter().find(|p| p.rank == 0 && p.server.is_none());
    let reference_host = reference.map(|p| p.host.clone());
    let reference_realtime = reference.map(realtime_minus_monotonic);
    for (p, m) in procs.iter_mut().zip(models) {
        p.offset = if reference_host.as_deref() == Some(p.host.as_str()) {
            m.shared_clock()
        } else if let (Some(_), Some(r), OffsetSource::None) =
            (&p.server, reference_realtime, m.source)
        {
            // A server elsewhere takes no part in the job's clock sync: the hosts' real-time
            // clocks line it up.
            OffsetModel::realtime(p.raw.header.start_mono_ns, realtime_minus_monotonic(p) - r)
        } else {
            m
        };
    }
}

/// CLOCK_REALTIME minus CLOCK_MONOTONIC of a process's host, at its tracer start.
fn realtime_minus_monotonic(p: &Proc) -> i64 {
    p.raw.header.start_unix_ns as i64 - p.raw.header.start_mono_ns as i64
}

/// What pass 1 settled for the whole job and pass 2 applies to every event.
struct Numbering<'a> {
    /// Corrected ns of the job's start: store times are relative to it.
    job_start: i64,
    /// Corrected ns of the end of the job's last record: servers' records after it are left out.
    job_end: i64,
    /// Raw collective link → dense instance number.
    instance_of: &'a HashMap<u64, i32>,
    /// Region and communicator names by global id.
    names: &'a [String],
    /// By global file id: the path is a system or helper file (`scope::is_hidden_path`).
    system_files: &'a [bool],
}

/// Decodes every rank's events again and pushes them to the store writer in store order
/// (`reorder`, `emit`), holding at most `cap` records in memory; returns the application's
/// totals and per-file event and rank counts.
fn write_events(
    writer: &mut StoreWriter,
    procs: &[Proc],
    numbering: &Numbering<'_>,
    buffering: &Buffering<'_>,
    prog: &mut Progress,
    progress: &mut dyn FnMut(Progress),
) -> Result<(ApplicationTotals, FileStats), MergeError> {
    let job_start = numbering.job_start;
    let job_end = numbering.job_end;
    let mut ranks: BTreeMap<i32, Vec<usize>> = BTreeMap::new();
    for (i, p) in procs.iter().enumerate() {
        ranks.entry(p.rank).or_default().push(i);
    }
    let mut emitter = Emitter::new(procs, numbering);
    // Store ns before which a process has no record (None: its clock may run backwards
    // through the offset line, so nothing of its rank leaves before all are in).
    let first_start = |p: &Proc| -> Option<i64> {
        p.min_event_start.map_or(Some(i64::MAX), |t| {
            p.keeps_order().then(|| p.abs_ns(t) - job_start)
        })
    };
    for (&rank, members) in &ranks {
        emitter.start_rank(rank);
        let mut pending = Reorder::new(buffering.cap, buffering.spill_dir);
        for (k, &pi) in members.iter().enumerate() {
            let p = &procs[pi];
            // The processes decoded after this one start no earlier than their first record.
            let later: Option<i64> = members[k + 1..]
                .iter()
                .map(|&j| first_start(&procs[j]))
                .try_fold(i64::MAX, |m, f| f.map(|f| m.min(f)));
            // Each event is converted as the decoder passes it (the raw events are not held;
            // a server's record outside the job's window is marked not kept; a live server's
            // file grows: what pass 1 saw is what is merged) and leaves once no record still
            // to come, of this process or of those after it, can start before it.
            let seen_by_pass_1 = p.raw.event_count;
            let mut decoded = 0u64;
            let mut floor_cache: Option<(u64, i64)> = None;
            let mut failed: Option<MergeError> = None;
            let raw = segments::read_segments_with(&p.segments, &mut |e| {
                if failed.is_some() || decoded >= seen_by_pass_1 {
                    return false;
                }
                let seq = decoded;
                decoded += 1;
                let end = e.start.saturating_add(e.duration);
                let kept = p.server.is_none()
                    || servers::in_window(p.abs_ns(e.start), p.abs_ns(end), job_start, job_end);
                let (start_ns, duration_ns) = p.abs_span(e.start, e.duration);
                let row = Row {
                    start_ns: start_ns - job_start,
                    duration_ns,
                    process: p.index as u32,
                    seq,
                    kept,
                    raw: RawEvent {
                        flags: e.flags & !flags::EXT,
                        ..*e
                    },
                };
                if let Err(e) = pending.push(row) {
                    failed = Some(buffering.spill_error(e));
                    return false;
                }
                let own = match p.floors.floor_after(decoded) {
                    None => Some(i64::MAX),
                    Some(_) if !p.keeps_order() => None,
                    Some(t) => Some(match floor_cache {
                        Some((ticks, ns)) if ticks == t => ns,
                        _ => {
                            let ns = p.abs_ns(t) - job_start;
                            floor_cache = Some((t, ns));
                            ns
                        }
                    }),
                };
                let watermark = own.zip(later).map(|(a, b)| a.min(b)).unwrap_or(i64::MIN);
                if let Err(e) = drain(
                    &mut pending,
                    Some(watermark),
                    &mut emitter,
                    writer,
                    buffering,
                ) {
                    failed = Some(e);
                }
                false
            })
            .map_err(|e| MergeError::RawFileChanged(e.to_string()))?;
            if let Some(e) = failed {
                return Err(e);
            }
            let grown = p.server.is_some() && raw.event_count > seen_by_pass_1;
            if !grown && raw.event_count != seen_by_pass_1 {
                return Err(MergeError::RawFileChanged(p.raw.file_name()));
            }
            prog.done += p.file_size;
            progress(*prog);
        }
        drain(&mut pending, None, &mut emitter, writer, buffering)?;
    }
    Ok((emitter.totals, emitter.file_stats))
}

/// Where pass 2 keeps the records that wait for store order.
struct Buffering<'a> {
    /// Records held in memory at most (`reorder::DEFAULT_CAP`; tests set fewer).
    cap: usize,
    /// The directory of the sorted runs spilled at the cap (the output's).
    spill_dir: &'a Path,
}

impl Buffering<'_> {
    fn spill_error(&self, source: io::Error) -> MergeError {
        MergeError::Io {
            context: format!("spilling sorted records to {}", self.spill_dir.display()),
            source,
        }
    }
}

/// Emits the waiting records that start before `watermark` (all with `None`).
fn drain(
    pending: &mut Reorder,
    watermark: Option<i64>,
    emitter: &mut Emitter<'_>,
    writer: &mut StoreWriter,
    buffering: &Buffering<'_>,
) -> Result<(), MergeError> {
    while let Some(row) = pending
        .pop_before(watermark)
        .map_err(|e| buffering.spill_error(e))?
    {
        emitter
            .emit(&row, writer)
            .map_err(|source| MergeError::Store {
                path: PathBuf::from(EVENTS_FILE),
                source,
            })?;
    }
    Ok(())
}

/// The settings (hints, views) of every process, in rank then time order.
fn settings_rows(procs: &[Proc], job_start: i64) -> Vec<SettingRow> {
    let mut settings = Vec::new();
    for p in procs.iter() {
        for s in &p.raw.settings {
            let (_, func) = functions::describe(s.func);
            let file_id = p
                .strings
                .get(&(string_kind::FILE, s.object))
                .map(|&f| f as i32);
            for (key, value) in &s.values {
                settings.push(SettingRow {
                    rank: p.rank,
                    process: p.index as i32,
                    time_ns: p.abs_ns(s.ticks) - job_start,
                    file_id,
                    func: func.clone(),
                    key: key.clone(),
                    value: value.clone(),
                });
            }
        }
    }
    settings.sort_by_key(|s| (s.rank, s.time_ns, s.process));
    settings
}

/// `paths`: every raw file merged, the job's `job_files` first.
fn build_meta(
    procs: &[Proc],
    unusable: &[String],
    doubts: &mut Vec<String>,
    job_start: i64,
    max_end: i64,
    paths: &[PathBuf],
    job_files: usize,
) -> Meta {
    let mut partial_reasons: Vec<String> = Vec::new();
    let processes: Vec<ProcessMeta> = procs
        .iter()
        .map(|p| {
            let partial = match p.server {
                Some(_) => servers::server_partial_reason(p.raw.partial_reason()),
                None => p.raw.partial_reason(),
            };
            if let Some(reason) = &partial {
                partial_reasons.push(format!("{}: {reason}", p.label()));
            }
            let process = ProcessMeta {
                process: p.index as u32,
                kind: ContainerKind::Process,
                rank: p.rank,
                pid: p.raw.header.pid,
                ppid: p.raw.header.ppid,
                host: p.host.clone(),
                exe: p.raw.job_fact("exe").map(str::to_string),
                cmdline: p.raw.job_fact("cmdline").map(str::to_string),
                forked_from: p.raw.job_fact("forked_from").map(str::to_string),
                threads: p.raw.threads.len() as u32,
                // Filled by the store writer.
                events: 0,
                raw_file: p.raw.file_name(),
                clock: ClockMeta {
                    kind: if p.raw.header.clock_kind == clock_kind::TSC {
                        "tsc"
                    } else {
                        "monotonic"
                    }
                    .to_string(),
                    fit: p.fit.method,
                    pairs: p.fit.pairs,
                    span_ns: p.clock_span_ns,
                    ns_per_tick: p.fit.ns_per_tick,
                    max_residual_ns: p.fit.max_residual_ns,
                    offset_source: p.offset.source,
                    init: p.offset.init,
                    finalize: p.offset.finalize,
                    start_ns: p.start_abs - job_start,
                },
                partial,
                facts: p.raw.job.iter().cloned().collect(),
            };
            match &p.server {
                Some(identity) => servers::server_container(process, identity),
                None => process,
            }
        })
        .collect();
    partial_reasons.extend(unusable.iter().cloned());

    // Ranks are below the plausible world (see `facts`), so is the world: `hosts` is bounded
    // by the number of raw files.
    let max_rank = procs.iter().map(|p| p.rank).max().unwrap_or(-1);
    let world_limit = facts::plausible_world(job_files);
    let size_fact = procs
        .iter()
        .filter_map(|p| facts::world_size(&p.raw, world_limit, doubts))
        .max()
        .unwrap_or(0);
    partial_reasons.append(doubts);
    let ranks = size_fact.max((max_rank + 1).max(0) as u32);
    let mut hosts = vec![String::new(); ranks as usize];
    for p in procs.iter().filter(|p| p.rank >= 0) {
        if let Some(h) = hosts.get_mut(p.rank as usize) {
            if h.is_empty() {
                h.clone_from(&p.host);
            }
        }
    }
    // The reference process: the lowest rank's first process (procs are sorted that way).
    let reference = procs.iter().find(|p| p.rank >= 0).or(procs.first());
    let start_unix_ns = reference.map_or(0, |p| {
        p.raw.header.start_unix_ns as i64 - (p.start_abs - job_start)
    });
    let fact = |key: &str| {
        procs
            .iter()
            .find_map(|p| p.raw.job_fact(key).map(str::to_string))
    };
    let job = JobMeta {
        command: reference.and_then(|p| {
            p.raw
                .job_fact("cmdline")
                .or(p.raw.job_fact("exe"))
                .map(str::to_string)
        }),
        start_unix_ns,
        duration_ns: max_end,
        ranks,
        hosts,
        mpi_library: fact("mpi_library"),
    };
    let mut meta = Meta::new(
        format!("pioscope-trace {}", env!("CARGO_PKG_VERSION")),
        job,
        processes,
    );
    meta.tracer_version = fact("tracer_version");
    meta.partial = !partial_reasons.is_empty();
    meta.partial_reasons = partial_reasons;
    meta.counts.unusable_raw_files = unusable.len() as u64;
    meta.raw_files = paths
        .iter()
        .map(|p| {
            p.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        })
        .collect();
    meta
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::raw::fixture::{FixtureEvent as E, RawFileBuilder};
    use crate::raw::format::sync_phase;
    use crate::store::Trace;

    const OPEN: u16 = 300;
    const WRITE_ALL: u16 = 318;
    const PWRITE: u16 = 14;
    const STAT: u16 = 40;
    const BARRIER: u16 = 430;
    const SEND: u16 = 410;
    const REGION: u16 = 500;

    /// A row read back from the store, owned.
    #[derive(Debug, Clone, PartialEq)]
    struct Row {
        id: i64,
        rank: i32,
        process: i32,
        start: i64,
        dur: i64,
        func: String,
        depth: u8,
        parent: Option<i64>,
        file: Option<i32>,
        offset: Option<i64>,
        result: i64,
        instance: Option<i32>,
        peer: Option<i32>,
        tag: Option<i32>,
        root: Option<i32>,
        comm_size: Option<i32>,
        comm: Option<String>,
        region: Option<String>,
    }

    fn rows(trace: &Trace) -> Vec<Row> {
        let mut out = Vec::new();
        for b in trace.events().expect("events") {
            let b = b.expect("batch");
            for e in b.iter() {
                let mpi = e.mpi.get();
                out.push(Row {
                    id: e.id,
                    rank: e.rank,
                    process: e.process,
                    start: e.start_ns,
                    dur: e.duration_ns,
                    func: e.func.to_string(),
                    depth: e.depth,
                    parent: e.parent,
                    file: e.file_id,
                    offset: e.offset,
                    result: e.result,
                    instance: e.instance,
                    peer: mpi.peer,
                    tag: mpi.tag,
                    root: mpi.root,
                    comm_size: mpi.comm_size,
                    comm: e.comm.map(str::to_string),
                    region: e.region.map(str::to_string),
                });
            }
        }
        out
    }

    /// One rank of a small MPI-IO job: open, two collective writes of two pwrites each inside
    /// a region, a barrier and a send. `t0` is the rank's local CLOCK_MONOTONIC at start.
    fn rank_file(
        rank: u32,
        pid: u32,
        host: &str,
        t0: u64,
        offset_ns: i64,
        drift_ns: i64,
    ) -> RawFileBuilder {
        let mut b = RawFileBuilder::monotonic(pid, 1, t0);
        b.job(&[
            ("rank", &rank.to_string()),
            ("size", "2"),
            ("host", host),
            ("cmdline", "./app out.dat"),
            ("mpi_library", "MPICH 4.1"),
            ("tracer_version", "0.1.0"),
        ]);
        b.string(string_kind::FILE, 1, "/scratch/out.dat", 0x0BD0_0BD0);
        b.string(string_kind::COMMUNICATOR, 1, "world", 0);
        b.string(string_kind::REGION, 2, "checkpoint", 0);
        b.clock_sync(sync_phase::INIT, offset_ns, 500, t0 + 100);
        b.settings(1, OPEN, t0 + 1_100, &[("cb_nodes", "2")]);
        let r = rank as u64;
        let link = |n: u64| 7u64 << 32 | n;
        // Written at call exit: children first.
        b.events(
            0,
            &[
                E::new(OPEN, t0 + 1_000, 200)
                    .object(1)
                    .flags(flags::COLLECTIVE)
                    .result(0),
                E::new(PWRITE, t0 + 2_100, 50)
                    .object(1)
                    .size(32)
                    .offset(r * 64)
                    .depth(2),
                E::new(PWRITE, t0 + 2_400, 60)
                    .object(1)
                    .size(32)
                    .offset(128 + r * 64)
                    .depth(2),
                E::new(WRITE_ALL, t0 + 2_000, 900)
                    .object(1)
                    .size(64)
                    .depth(1)
                    .flags(flags::COLLECTIVE)
                    .link(link(1)),
                E::new(PWRITE, t0 + 3_100, 50)
                    .object(1)
                    .size(32)
                    .offset(256 + r * 64)
                    .depth(2),
                E::new(WRITE_ALL, t0 + 3_000, 500)
                    .object(1)
                    .size(32)
                    .depth(1)
                    .flags(flags::COLLECTIVE)
                    .link(link(2)),
                E::new(REGION, t0 + 1_900, 2_000).object(2),
                E::new(BARRIER, t0 + 5_000, 300)
                    .object(1)
                    .flags(flags::COLLECTIVE)
                    .offset(2),
                E::new(SEND, t0 + 6_000, 100)
                    .object(1)
                    .size(8)
                    .offset((1 - r) << 32 | 99),
            ],
        );
        b.clock_sync(
            sync_phase::FINALIZE,
            offset_ns + drift_ns,
            500,
            t0 + 1_000_100,
        );
        b.end();
        b
    }

    fn job(dir: &Path) {
        rank_file(0, 100, "n1", 10_000_000, 0, 0)
            .write_to(&dir.join("n1-100.praw"))
            .expect("write");
        // Rank 1's clock is 5 µs behind rank 0's, drifting by 100 ns over 1 ms.
        rank_file(1, 200, "n2", 9_990_000, 15_000, 100)
            .write_to(&dir.join("n2-200.praw"))
            .expect("write");
        // A forked child of rank 1: no rank fact, no clock sync.
        let mut c = RawFileBuilder::monotonic(201, 200, 9_998_000);
        c.job(&[("host", "n2"), ("forked_from", "200")]);
        c.string(string_kind::FILE, 1, "/etc/hosts", 0xEF53);
        c.events(0, &[E::new(STAT, 9_998_500, 40).object(1)]);
        c.end();
        c.write_to(&dir.join("n2-201.praw")).expect("write");
    }

    fn merged(dir: &Path) -> (MergeSummary, Trace) {
        let out = dir.join("trace");
        let mut calls = 0;
        let s = merge(&dir.join("raw"), &out, &mut |_| calls += 1).expect("merge");
        assert!(calls >= 3);
        (s, Trace::open(&out).expect("open"))
    }

    fn setup() -> tempfile::TempDir {
        let t = tempfile::tempdir().expect("tmp");
        fs::create_dir(t.path().join("raw")).expect("mkdir");
        t
    }

    #[test]
    fn merges_a_small_mpi_job() {
        let t = setup();
        job(&t.path().join("raw"));
        let (summary, trace) = merged(t.path());
        let m = &trace.meta;
        assert_eq!(m.format, "pioscope-trace");
        assert!(!m.partial, "{:?}", m.partial_reasons);
        assert_eq!(m.job.ranks, 2);
        assert_eq!(m.job.hosts, vec!["n1", "n2"]);
        assert_eq!(m.job.mpi_library.as_deref(), Some("MPICH 4.1"));
        assert_eq!(m.job.command.as_deref(), Some("./app out.dat"));
        assert_eq!(m.tracer_version.as_deref(), Some("0.1.0"));
        assert_eq!(m.counts.events, 19);
        assert_eq!(m.counts.processes, 3);
        assert_eq!(m.counts.settings, 2);
        // Processes: rank 0, rank 1, then the forked child of rank 1 (it inherits the rank).
        let p: Vec<(i32, u32)> = m.processes.iter().map(|p| (p.rank, p.pid)).collect();
        assert_eq!(p, vec![(0, 100), (1, 200), (1, 201)]);
        assert_eq!(m.processes[2].forked_from.as_deref(), Some("200"));
        assert_eq!(m.processes[2].clock.offset_source, OffsetSource::Parent);
        assert_eq!(
            m.processes[1].clock.offset_source,
            OffsetSource::InitFinalize
        );
        // Rank 0 is the reference: its own host's clock, whatever it measured.
        assert_eq!(
            m.processes[0].clock.offset_source,
            OffsetSource::SharedClock
        );
        // All pairs lie within 1 ms: a MONOTONIC clock falls back to rate 1.
        assert_eq!(m.processes[0].clock.fit, FitMethod::Monotonic);

        // Files: sorted by path.
        assert_eq!(trace.files.len(), 2);
        assert_eq!(trace.file_path(0), Some("/etc/hosts"));
        assert_eq!(trace.files[1].fs_type, "lustre");
        assert_eq!((trace.files[1].ranks, trace.files[1].events), (2, 12));

        let rows = rows(&trace);
        assert_eq!(rows.len(), 19);
        assert!(rows.iter().enumerate().all(|(i, r)| r.id == i as i64));
        assert!(rows
            .windows(2)
            .all(|w| (w[0].rank, w[0].start) <= (w[1].rank, w[1].start)));

        // Job start: rank 1's clock reads 9_990_000 at its start, i.e. 10_005_000 on rank 0's.
        // The earliest thing is rank 0's tracer start at 10_000_000.
        let r0: Vec<&Row> = rows.iter().filter(|r| r.rank == 0).collect();
        assert_eq!(r0[0].func, "MPI_File_open");
        assert_eq!(r0[0].start, 1_000);
        assert_eq!(r0[0].result, 0);
        assert_eq!(summary.meta.job.duration_ns, m.job.duration_ns);

        // Nesting: region > write_all > pwrite.
        let region = r0.iter().find(|r| r.func == "region").expect("region");
        let wa: Vec<&&Row> = r0
            .iter()
            .filter(|r| r.func == "MPI_File_write_all")
            .collect();
        let pw: Vec<&&Row> = r0.iter().filter(|r| r.func == "pwrite").collect();
        assert_eq!(region.parent, None);
        assert_eq!(region.region.as_deref(), Some("checkpoint"));
        assert!(wa.iter().all(|w| w.parent == Some(region.id)));
        assert_eq!(pw[0].parent, Some(wa[0].id));
        assert_eq!(pw[1].parent, Some(wa[0].id));
        assert_eq!(pw[2].parent, Some(wa[1].id));
        assert!(pw.iter().all(|p| p.region.as_deref() == Some("checkpoint")));
        assert_eq!(pw[1].offset, Some(128));
        // Collective instances are dense and shared across ranks.
        assert_eq!((wa[0].instance, wa[1].instance), (Some(1), Some(2)));
        let wa1: Vec<&Row> = rows
            .iter()
            .filter(|r| r.rank == 1 && r.func == "MPI_File_write_all")
            .collect();
        assert_eq!((wa1[0].instance, wa1[1].instance), (Some(1), Some(2)));
        assert_eq!(r0[0].instance, None, "open is collective but has no link");
        // MPI fields.
        let barrier = r0
            .iter()
            .find(|r| r.func == "MPI_Barrier")
            .expect("barrier");
        assert_eq!(
            (barrier.root, barrier.comm_size, barrier.offset),
            (Some(0), Some(2), None)
        );
        assert_eq!(barrier.comm.as_deref(), Some("world"));
        let send = r0.iter().find(|r| r.func == "MPI_Send").expect("send");
        assert_eq!((send.peer, send.tag), (Some(1), Some(99)));

        // Rank 1 is corrected onto rank 0's clock: its open at local 9_991_000 + 15_000 offset
        // (+ drift 100 ns/ms * 0.9 µs = 0) = 10_006_000 → 6_000 after the job start.
        let r1_open = rows
            .iter()
            .find(|r| r.rank == 1 && r.func == "MPI_File_open")
            .expect("open");
        assert_eq!(r1_open.start, 6_000);
        // The drift: the send at local +6_000 is 5_900 ns after the INIT sync → +0.59 ns.
        let r1_send = rows
            .iter()
            .find(|r| r.rank == 1 && r.func == "MPI_Send")
            .expect("send");
        assert_eq!(r1_send.start, 6_000 + 5_000 + 1);
        assert_eq!((r1_send.peer, r1_send.tag), (Some(0), Some(99)));
        // The forked child: same clock as its parent, so the parent's offset applies.
        let stat = rows.iter().find(|r| r.func == "stat").expect("stat");
        assert_eq!((stat.rank, stat.process), (1, 2));
        assert_eq!(stat.start, 9_998_500 + 15_000 - 10_000_000);
        assert_eq!(stat.file, Some(0));

        // Settings table.
        let s = trace.settings().expect("settings");
        assert_eq!(s.len(), 2);
        assert_eq!(
            (s[0].rank, s[0].key.as_str(), s[0].value.as_str()),
            (0, "cb_nodes", "2")
        );
        assert_eq!(
            (s[0].func.as_str(), s[0].file_id, s[0].time_ns),
            ("MPI_File_open", Some(1), 1_100)
        );

        assert_eq!(summary.totals.layers[&Layer::Posix].bytes_written, 6 * 32);
        assert_eq!(summary.totals.layers[&Layer::MpiIo].bytes_written, 2 * 96);
    }

    #[test]
    fn damaged_file_makes_a_partial_trace() {
        let t = setup();
        let raw = t.path().join("raw");
        job(&raw);
        let mut b = rank_file(1, 200, "n2", 9_990_000, 15_000, 100);
        let mut damaged = RawFileBuilder::monotonic(300, 1, 10_000_000);
        damaged.job(&[("rank", "3"), ("host", "host-123")]);
        damaged.events(0, &[E::new(PWRITE, 10_000_100, 10).size(1)]);
        let at = damaged.len();
        damaged.events(0, &[E::new(PWRITE, 10_000_200, 10).size(1)]);
        damaged.bytes_mut()[at + 1] = 0;
        damaged
            .write_to(&raw.join("host-123-0.praw"))
            .expect("write");
        // And a file that is not a raw file at all.
        fs::write(raw.join("junk.praw"), b"hello").expect("write");
        b.bytes_mut().clear();
        let (_, trace) = merged(t.path());
        let m = &trace.meta;
        assert!(m.partial);
        assert_eq!(m.partial_reasons.len(), 2, "{:?}", m.partial_reasons);
        assert_eq!(
            m.partial_reasons[0],
            format!(
                "rank-3 raw file host-123-0.praw: corrupt chunk header at byte {at} (bad magic)"
            )
        );
        assert!(
            m.partial_reasons[1].starts_with("raw file junk.praw: truncated file header at byte 0")
        );
        assert_eq!(m.counts.unusable_raw_files, 1);
        let p3 = m.processes.iter().find(|p| p.rank == 3).expect("rank 3");
        assert_eq!(p3.events, 1);
        assert_eq!(m.job.ranks, 4);
        assert_eq!(m.raw_files.len(), 5);
    }

    #[test]
    fn implausible_world_and_rank_facts_are_ignored_not_allocated() {
        // Issue 12: a world size of 10^9 in one raw file made merge allocate 10^9 hosts (32 GB)
        // and abort; the facts are now believed only up to 1024 ranks per raw file.
        let t = setup();
        let raw = t.path().join("raw");
        let mut a = RawFileBuilder::monotonic(5, 1, 1_000);
        a.job(&[("rank", "0"), ("size", "1000000000"), ("host", "n1")]);
        a.events(0, &[E::new(PWRITE, 2_000, 10).size(1)]);
        a.end();
        a.write_to(&raw.join("a.praw")).expect("write");
        let mut b = RawFileBuilder::monotonic(6, 1, 1_000);
        b.job(&[("rank", "1000000000"), ("size", "2"), ("host", "n2")]);
        b.events(0, &[E::new(PWRITE, 3_000, 10).size(1)]);
        b.end();
        b.write_to(&raw.join("b.praw")).expect("write");
        let (_, trace) = merged(t.path());
        let m = &trace.meta;
        assert_eq!(m.job.ranks, 2);
        assert_eq!(m.job.hosts, vec!["n1".to_string(), String::new()]);
        assert_eq!(
            m.processes.iter().map(|p| p.rank).collect::<Vec<_>>(),
            vec![-1, 0]
        );
        assert!(m.partial);
        assert_eq!(
            m.partial_reasons,
            vec![
                "raw file b.praw: rank fact 1000000000 is implausible for the raw files given \
                 (limit 2048), taken as no rank"
                    .to_string(),
                "raw file a.praw: world size fact 1000000000 is implausible for the raw files \
                 given (limit 2048), ignored"
                    .to_string(),
            ]
        );
    }

    #[test]
    fn killed_process_is_reported() {
        let t = setup();
        let mut b = RawFileBuilder::monotonic(5, 1, 1_000);
        b.job(&[("rank", "0")]);
        b.events(0, &[E::new(PWRITE, 2_000, 10).size(1)]);
        b.write_to(&t.path().join("raw/a.praw")).expect("write");
        let (_, trace) = merged(t.path());
        assert_eq!(
            trace.meta.partial_reasons,
            vec![format!(
                "rank-0 raw file a.praw: {}",
                crate::raw::UNFINISHED_REASON
            )]
        );
    }

    #[test]
    fn tsc_clocks_are_fitted_and_shared_on_a_host() {
        let t = setup();
        let raw = t.path().join("raw");
        // 2 GHz TSC: 0.5 ns per tick. Chunks every 10 ms give a least-squares fit.
        let mut a =
            RawFileBuilder::with_clock(clock_kind::TSC, 10, 1, 1_000_000_000, 50_000_000, 0.5);
        a.job(&[("host", "n1")]);
        for i in 0..5u64 {
            let t = 1_000_000_000 + i * 20_000_000;
            a.events(0, &[E::new(PWRITE, t, 2_000).size(1)]);
        }
        a.end();
        a.write_to(&raw.join("a.praw")).expect("write");
        // A short-lived process on the same host: only the header pair and one chunk close by.
        let mut b =
            RawFileBuilder::with_clock(clock_kind::TSC, 11, 10, 1_050_000_000, 75_000_000, 0.5);
        b.job(&[("host", "n1")]);
        b.events(0, &[E::new(STAT, 1_050_000_100, 400)]);
        b.end();
        b.write_to(&raw.join("b.praw")).expect("write");
        let (summary, trace) = merged(t.path());
        assert!(summary.notes.is_empty(), "{:?}", summary.notes);
        let m = &trace.meta;
        assert_eq!(m.job.ranks, 0);
        assert_eq!(m.processes[0].clock.fit, FitMethod::LeastSquares);
        assert!((m.processes[0].clock.ns_per_tick - 0.5).abs() < 1e-9);
        assert_eq!(m.processes[1].clock.fit, FitMethod::SameHost);
        let rows = rows(&trace);
        assert_eq!(rows[0].dur, 1_000);
        let stat = rows.iter().find(|r| r.func == "stat").expect("stat");
        assert_eq!((stat.start, stat.dur), (25_000_050, 200));
        assert_eq!(rows.iter().filter(|r| r.rank == -1).count(), 6);
    }

    /// Issue 19: a drifting clock's calls end on the reference clock too, so a call and the
    /// one that follows it 100 µs later on the same thread stay in order.
    #[test]
    fn durations_follow_the_drift_of_another_hosts_clock() {
        let t = setup();
        let raw = t.path().join("raw");
        for (rank, host, offset, drift) in [(0u32, "n1", 0i64, 0i64), (1, "n2", 0, -2_000_000)] {
            let t0 = 1_000_000_000u64;
            let mut b = RawFileBuilder::monotonic(100 + rank, 1, t0);
            b.job(&[("rank", &rank.to_string()), ("size", "2"), ("host", host)]);
            b.clock_sync(sync_phase::INIT, offset, 500, t0);
            // 0.5 s of barrier, then the next call 100 µs after it ended.
            b.events(
                0,
                &[
                    E::new(BARRIER, t0 + 1_000, 500_000_000),
                    E::new(STAT, t0 + 500_101_000, 1_000),
                ],
            );
            // Reference minus ours drifts by -2 ms per second: our clock runs 0.2 % fast.
            b.clock_sync(
                sync_phase::FINALIZE,
                offset + drift,
                500,
                t0 + 1_000_000_000,
            );
            b.end();
            b.write_to(&raw.join(format!("{host}-{rank}.praw")))
                .expect("write");
        }
        let (_, trace) = merged(t.path());
        let rows = rows(&trace);
        let of = |rank: i32, func: &str| {
            rows.iter()
                .find(|r| r.rank == rank && r.func == func)
                .map(|r| (r.start, r.dur))
                .expect("row")
        };
        assert_eq!(of(0, "MPI_Barrier").1, 500_000_000);
        let (start, dur) = of(1, "MPI_Barrier");
        assert_eq!(dur, 499_000_000, "0.5 s of a 0.2 % fast clock");
        let (next, _) = of(1, "stat");
        assert_eq!(next - (start + dur), 99_800, "100 µs of a 0.2 % fast clock");
    }

    #[test]
    fn lone_tsc_process_assumes_and_says_so() {
        let t = setup();
        // Only the header's pair (the END chunk repeats it): no rate can be learnt.
        let mut a = RawFileBuilder::with_clock(clock_kind::TSC, 10, 1, 1_000, 1_000, 0.5);
        a.end();
        a.write_to(&t.path().join("raw/a.praw")).expect("write");
        let (summary, trace) = merged(t.path());
        assert_eq!(trace.meta.processes[0].clock.fit, FitMethod::Assumed);
        assert_eq!(summary.notes.len(), 1);
        assert!(
            summary.notes[0].contains("1 ns per tick assumed"),
            "{}",
            summary.notes[0]
        );
        assert!(
            summary.notes[0].starts_with("pid-10 raw file a.praw: a single clock pair"),
            "{}",
            summary.notes[0]
        );
    }

    /// Issue 19: a rank with more records than merge may hold waiting for store order (a
    /// region open the whole run holds back everything after its start) spills sorted runs and
    /// still merges every record, in store order, with its parent and region; a forked child of
    /// the rank and a second thread interleave with it.
    #[test]
    fn a_rank_beyond_the_buffer_cap_spills_and_merges_exactly() {
        let t = setup();
        let raw = t.path().join("raw");
        let t0 = 1_000_000u64;
        let mut a = RawFileBuilder::monotonic(100, 1, t0);
        a.job(&[("rank", "0"), ("size", "2"), ("host", "n1")]);
        a.string(string_kind::FILE, 1, "/scratch/out.dat", 0x0BD0_0BD0);
        a.string(string_kind::REGION, 2, "main", 0);
        for i in 0..300u64 {
            let s = t0 + 2_000 + i * 1_000;
            // Written at call exit: the pwrite, then the collective write around it.
            a.events(
                0,
                &[
                    E::new(PWRITE, s + 100, 50).depth(2).object(1).size(8),
                    E::new(WRITE_ALL, s, 500).depth(1).object(1).size(8),
                ],
            );
            a.events(1, &[E::new(STAT, s + 300, 10).object(1)]);
        }
        a.events(0, &[E::new(REGION, t0 + 1_000, 400_000).object(2)]);
        a.end();
        a.write_to(&raw.join("n1-100.praw")).expect("write");
        let mut child = RawFileBuilder::monotonic(101, 100, t0 + 4_000);
        child.job(&[("rank", "0"), ("host", "n1")]);
        child.string(string_kind::FILE, 1, "/scratch/log", 0x0BD0_0BD0);
        for i in 0..100u64 {
            child.events(0, &[E::new(PWRITE, t0 + 5_000 + i * 2_000, 20).object(1)]);
        }
        child.end();
        child.write_to(&raw.join("n1-101.praw")).expect("write");
        let mut b = RawFileBuilder::monotonic(200, 1, t0);
        b.job(&[("rank", "1"), ("size", "2"), ("host", "n1")]);
        b.events(0, &[E::new(BARRIER, t0 + 1_500, 100)]);
        b.end();
        b.write_to(&raw.join("n1-200.praw")).expect("write");

        let merged_holding = |cap: usize, name: &str| {
            let out = t.path().join(name);
            merge_holding(&raw, None, &out, cap, &mut |_| {}).expect("merge");
            let trace = Trace::open(&out).expect("open");
            assert!(!trace.meta.partial, "{:?}", trace.meta.partial_reasons);
            rows(&trace)
        };
        let got = merged_holding(7, "capped");
        assert_eq!(got, merged_holding(reorder::DEFAULT_CAP, "roomy"));
        // No run file is left beside the output.
        let left: Vec<_> = fs::read_dir(t.path())
            .expect("ls")
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".run"))
            .collect();
        assert!(left.is_empty(), "{left:?}");

        assert_eq!(got.len(), 1 + 300 * 3 + 100 + 1);
        let count = |rank: i32, process: i32, func: &str| {
            got.iter()
                .filter(|r| (r.rank, r.process, r.func.as_str()) == (rank, process, func))
                .count()
        };
        assert_eq!(count(0, 0, "pwrite"), 300);
        assert_eq!(count(0, 0, "stat"), 300);
        assert_eq!(count(0, 1, "pwrite"), 100);
        assert_eq!(count(1, 2, "MPI_Barrier"), 1);
        // Ids count up in store order: by rank, then start, process, depth.
        assert!(got.iter().enumerate().all(|(i, r)| r.id == i as i64));
        assert!(got
            .windows(2)
            .all(|w| (w[0].rank, w[0].start, w[0].process, w[0].depth)
                <= (w[1].rank, w[1].start, w[1].process, w[1].depth)));
        let by_id = |id: Option<i64>| id.map(|i| &got[i as usize]);
        let region = &got[0];
        assert_eq!(
            (region.func.as_str(), region.start, region.parent),
            ("region", 1_000, None)
        );
        for r in got.iter().filter(|r| r.rank == 0 && r.process == 0) {
            let parent = by_id(r.parent);
            match r.depth {
                2 => {
                    let p = parent.expect("pwrite's parent");
                    assert_eq!(
                        (p.func.as_str(), p.start),
                        ("MPI_File_write_all", r.start - 100)
                    );
                }
                1 => assert_eq!(parent.map(|p| p.id), Some(region.id)),
                _ => assert!(r.id == region.id || parent.is_none()),
            }
        }
        let main = |r: &&Row| r.region.as_deref() == Some("main");
        assert_eq!(got.iter().filter(main).count(), 1 + 300 * 2);
        assert!(got
            .iter()
            .filter(|r| r.process == 1 || r.func == "stat")
            .all(|r| r.parent.is_none() && r.region.is_none()));
    }

    #[test]
    fn error_cases() {
        let t = setup();
        let out = t.path().join("trace");
        let err = merge(&t.path().join("nope"), &out, &mut |_| {}).expect_err("missing");
        assert!(matches!(err, MergeError::RawDirNotFound(_)));
        let err = merge(&t.path().join("raw"), &out, &mut |_| {}).expect_err("empty");
        assert!(err.to_string().contains("holds no .praw files"), "{err}");
        fs::write(
            t.path().join("raw/bad.praw"),
            b"not a trace at all, certainly not 64 bytes... ......",
        )
        .expect("w");
        let err = merge(&t.path().join("raw"), &out, &mut |_| {}).expect_err("unusable");
        assert!(err.to_string().contains("no usable raw file"), "{err}");
        fs::create_dir(&out).expect("mkdir");
        let err = merge(&t.path().join("raw"), &out, &mut |_| {}).expect_err("exists");
        assert!(matches!(err, MergeError::OutputExists(_)));
        // Nothing half-written is left behind.
        let leftovers: Vec<_> = fs::read_dir(t.path())
            .expect("ls")
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().contains("merging"))
            .collect();
        assert!(leftovers.is_empty());
    }

    /// Issue 14: storage server daemons join the trace as `server` containers, cut to the
    /// job's window; a daemon that ended before the job (a hook script) is left out.
    #[test]
    fn servers_join_within_the_jobs_window() {
        const READV: u16 = 16;
        let t = setup();
        job(&t.path().join("raw"));
        let servers = t.path().join("servers");
        fs::create_dir(&servers).expect("mkdir");
        // A brick daemon on rank 0's host, still running (no END chunk). Rank 0's records
        // span 10_000_000..10_006_100 on this clock.
        let mut b = RawFileBuilder::monotonic(900, 1, 9_000_000);
        b.job(&[
            ("host", "n1"),
            ("exe", "/usr/sbin/glusterfsd"),
            (
                "cmdline",
                "/usr/sbin/glusterfsd -s n1 --brick-name /lab/bricks/b0",
            ),
        ]);
        b.string(string_kind::FILE, 1, "/lab/bricks/b0/out.dat", 0xEF53);
        b.string(string_kind::FILE, 2, "socket:127.0.0.1:49151", 0);
        b.events(
            0,
            &[
                E::new(PWRITE, 9_500_000, 100).object(1).size(64),
                E::new(READV, 10_002_500, 50).object(2).size(96).result(96),
                E::new(PWRITE, 10_002_600, 80).object(1).size(64).result(64),
                E::new(PWRITE, 20_000_000, 100).object(1).size(64),
            ],
        );
        b.write_to(&servers.join("n1-900-0.praw")).expect("write");
        // A hook script glusterd ran long before the job.
        let mut h = RawFileBuilder::monotonic(901, 900, 9_100_000);
        h.job(&[("host", "n1"), ("cmdline", "/bin/sh S29hook.sh")]);
        h.string(string_kind::FILE, 1, "/etc/hosts", 0xEF53);
        h.events(0, &[E::new(STAT, 9_100_500, 40).object(1)]);
        h.end();
        h.write_to(&servers.join("n1-901-0.praw")).expect("write");

        let out = t.path().join("trace");
        merge_with_servers(&t.path().join("raw"), Some(&servers), &out, &mut |_| {})
            .expect("merge");
        let trace = Trace::open(&out).expect("open");
        let m = &trace.meta;
        assert!(!m.partial, "{:?}", m.partial_reasons);
        assert_eq!(m.job.ranks, 2);
        assert_eq!(m.processes.len(), 4);
        let server = &m.processes[3];
        assert_eq!(server.kind, ContainerKind::Server);
        assert_eq!((server.rank, server.pid), (-1, 900));
        assert_eq!(server.host, "n1:/lab/bricks/b0");
        assert_eq!(server.facts["server"], "n1:/lab/bricks/b0");
        assert_eq!(server.facts["role"], "data");
        assert_eq!(server.facts["brick"], "/lab/bricks/b0");
        assert_eq!(server.facts["host"], "n1");
        assert_eq!(server.clock.offset_source, OffsetSource::SharedClock);
        assert_eq!(server.events, 2);
        let path = |f: Option<i32>| trace.file_path(f.expect("file")).expect("path").to_string();
        let got: Vec<(String, String, i64)> = rows(&trace)
            .into_iter()
            .filter(|r| r.process == 3)
            .map(|r| (r.func.clone(), path(r.file), r.start))
            .collect();
        // Rank 0 (same host, same clock) starts the job at its tracer start, 10_000_000.
        assert_eq!(
            got,
            vec![
                ("readv".into(), "socket:127.0.0.1:49151".into(), 2_500),
                ("pwrite".into(), "/lab/bricks/b0/out.dat".into(), 2_600),
            ]
        );
        assert!(rows(&trace).iter().all(|r| r.start >= 0));
    }

    /// Issue 14: the segments of a daemon's rotating raw file left on disk are one container,
    /// and what rotation deleted is told.
    #[test]
    fn rotated_segments_join_into_one_server() {
        let t = setup();
        job(&t.path().join("raw"));
        let servers = t.path().join("servers");
        fs::create_dir(&servers).expect("mkdir");
        // Segments 10 and 11 of pid 900 (0..9 deleted: 70 records, 2240 bytes), each with its
        // own strings; within rank 0's window 10_000_000..10_006_100.
        for (segment, start, dropped) in [(11u32, 10_003_000, "70"), (10, 10_001_000, "60")] {
            let mut b = RawFileBuilder::monotonic(900, 1, start - 500);
            b.job(&[
                ("host", "n1"),
                ("cmdline", "/usr/sbin/glusterfsd --brick-name /b0"),
                ("first_segment", "n1-900-0.praw"),
                ("segment", &segment.to_string()),
                ("dropped_segments", &(segment - 1).to_string()),
                ("dropped_records", dropped),
                ("dropped_bytes", if segment == 11 { "2240" } else { "1920" }),
            ]);
            b.string(string_kind::FILE, 1, "/b0/out.dat", 0xEF53);
            b.events(
                0,
                &[
                    E::new(PWRITE, start, 100).object(1).size(64),
                    E::new(PWRITE, start + 200, 100).object(1).size(64),
                ],
            );
            b.write_to(&servers.join(format!("n1-900-{segment}.praw")))
                .expect("write");
        }
        let out = t.path().join("trace");
        let summary = merge_with_servers(&t.path().join("raw"), Some(&servers), &out, &mut |_| {})
            .expect("merge");
        let trace = Trace::open(&out).expect("open");
        let m = &trace.meta;
        let servers: Vec<_> = m
            .processes
            .iter()
            .filter(|p| p.kind == ContainerKind::Server)
            .collect();
        assert_eq!(servers.len(), 1);
        assert_eq!(servers[0].events, 4);
        assert_eq!(servers[0].raw_file, "n1-900-10.praw");
        assert_eq!(servers[0].facts["dropped_records"], "70");
        assert_eq!(servers[0].facts["segment"], "11");
        let starts: Vec<i64> = rows(&trace)
            .into_iter()
            .filter(|r| r.process == servers[0].process as i32)
            .map(|r| r.start)
            .collect();
        assert_eq!(starts, vec![1_000, 1_200, 3_000, 3_200]);
        assert!(summary.notes.contains(
            &"server n1:/b0: 70 records (2240 bytes) dropped by rotation (10 oldest raw file segments deleted)"
                .to_string()
        ));
    }
}
