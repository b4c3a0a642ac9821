//! `StoreWriter`: the one way a trace store comes into being. Merge, the simulator and synth
//! push their events in store order and hand over the small tables and meta.json at the end;
//! the writer owns everything else: the MPI messages (matched while the events stream past),
//! the counts in meta.json, the viewer's level-of-detail index and the atomic rename.
//!
//! Design: every table is written into a hidden sibling directory that is renamed into place
//! by `finish`, so a failed or interrupted writer (an error, a panic, a dropped writer) never
//! leaves something that looks like a trace: the directory's guard removes it on drop.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::counters::{self, write_counters, CounterRow, COUNTERS_FILE};
use super::darshan_counters::{write_darshan_counters, DarshanCounterRow, DARSHAN_FILE};
use super::darshan_heatmap::{write_darshan_heatmap, DarshanHeatmapRow, DARSHAN_HEATMAP_FILE};
use super::lod::{self, LodSummary};
use super::matching::Matcher;
use super::messages::{write_messages, MESSAGES_FILE};
use super::meta::Meta;
use super::writer::{write_files, write_settings, EventWriter, FileRow, SettingRow};
use super::{Event, StoreError, Trace, EVENTS_FILE, FILES_FILE, META_FILE, SETTINGS_FILE};

/// Writes one trace store (see the module note).
pub struct StoreWriter {
    out: PathBuf,
    tmp: HiddenDir,
    events: EventWriter,
    matcher: Matcher,
    /// Events pushed per `process` value (meta.json `processes[].events`).
    per_process: Vec<u64>,
    end_ns: i64,
    /// Sampled counters, written as counters.parquet by `finish`.
    counters: Vec<CounterRow>,
    /// Counters of an imported Darshan log, written as darshan.parquet when there are any.
    darshan: Vec<DarshanCounterRow>,
    /// The HEATMAP bins of an imported Darshan log, written as darshan_heatmap.parquet when
    /// there are any.
    darshan_heatmap: Vec<DarshanHeatmapRow>,
}

/// The hidden directory a store is written into; removed on drop unless it was renamed.
struct HiddenDir {
    path: PathBuf,
    renamed: bool,
}

impl Drop for HiddenDir {
    fn drop(&mut self) {
        if !self.renamed {
            let _ = fs::remove_dir_all(&self.path);
        }
    }
}

/// What `finish` wrote.
#[derive(Clone, Debug)]
pub struct FinishedStore {
    /// The meta.json written, with its counts filled in.
    pub meta: Meta,
    /// The level-of-detail index.
    pub lod: LodSummary,
    /// Time spent building the index (benchmarks report it apart).
    pub lod_build: Duration,
}

impl StoreWriter {
    /// Starts a store that will appear at `out`, which must not exist yet (its parent must).
    pub fn create(out: &Path) -> Result<StoreWriter, StoreError> {
        if out.symlink_metadata().is_ok() {
            return Err(StoreError::Exists(out.to_path_buf()));
        }
        let tmp = hidden_sibling(out);
        if tmp.exists() {
            fs::remove_dir_all(&tmp).map_err(|e| StoreError::io(&tmp, e))?;
        }
        fs::create_dir(&tmp).map_err(|e| StoreError::io(&tmp, e))?;
        let tmp = HiddenDir {
            path: tmp,
            renamed: false,
        };
        Ok(StoreWriter {
            out: out.to_path_buf(),
            events: EventWriter::create(&tmp.path.join(EVENTS_FILE))?,
            tmp,
            matcher: Matcher::new(),
            per_process: Vec::new(),
            end_ns: 0,
            counters: Vec::new(),
            darshan: Vec::new(),
            darshan_heatmap: Vec::new(),
        })
    }

    /// Appends one event. Events must come in store order: rank, then start time (then
    /// process, thread, depth); `id` is the row number (`rows()` before the push).
    pub fn push(&mut self, e: &Event<'_>) -> Result<(), StoreError> {
        self.events.push(e)?;
        self.matcher.observe(e);
        let p = e.process.max(0) as usize;
        if p >= self.per_process.len() {
            self.per_process.resize(p + 1, 0);
        }
        self.per_process[p] += 1;
        self.end_ns = self.end_ns.max(e.end_ns());
        Ok(())
    }

    /// Adds sampled counters (any order; counters.parquet is sorted by host, process,
    /// counter and time).
    pub fn add_counters(&mut self, rows: impl IntoIterator<Item = CounterRow>) {
        self.counters.extend(rows);
    }

    /// Adds the counters of an imported Darshan log (darshan.parquet, in the order given).
    pub fn add_darshan_counters(&mut self, rows: impl IntoIterator<Item = DarshanCounterRow>) {
        self.darshan.extend(rows);
    }

    /// Adds the HEATMAP bins of an imported Darshan log (darshan_heatmap.parquet, in the order
    /// given).
    pub fn add_darshan_heatmap(&mut self, rows: impl IntoIterator<Item = DarshanHeatmapRow>) {
        self.darshan_heatmap.extend(rows);
    }

    /// Events pushed so far (the id of the next one).
    pub fn rows(&self) -> u64 {
        self.events.rows()
    }

    /// The latest end of the events pushed so far, ns (0 before the first).
    pub fn end_ns(&self) -> i64 {
        self.end_ns
    }

    /// Writes the remaining tables and meta.json (its counts and every process's event count
    /// filled in from what was written), builds the level-of-detail index and renames the
    /// store into place.
    pub fn finish(
        self,
        files: &[FileRow],
        settings: &[SettingRow],
        mut meta: Meta,
    ) -> Result<FinishedStore, StoreError> {
        let StoreWriter {
            out,
            mut tmp,
            events,
            matcher,
            per_process,
            end_ns: _,
            mut counters,
            darshan,
            darshan_heatmap,
        } = self;
        let dir = tmp.path.clone();
        let events = events.finish()?;
        write_files(&dir.join(FILES_FILE), files)?;
        write_settings(&dir.join(SETTINGS_FILE), settings)?;
        let matched = matcher.finish();
        write_messages(&dir.join(MESSAGES_FILE), &matched.messages)?;
        counters::sort(&mut counters);
        write_counters(&dir.join(COUNTERS_FILE), &counters)?;
        if !darshan.is_empty() {
            write_darshan_counters(&dir.join(DARSHAN_FILE), &darshan)?;
        }
        if !darshan_heatmap.is_empty() {
            write_darshan_heatmap(&dir.join(DARSHAN_HEATMAP_FILE), &darshan_heatmap)?;
        }

        for p in &mut meta.processes {
            p.events = per_process.get(p.process as usize).copied().unwrap_or(0);
        }
        let c = &mut meta.counts;
        c.events = events;
        c.files = files.len() as u64;
        c.settings = settings.len() as u64;
        c.processes = meta.processes.len() as u64;
        c.messages = matched.messages.len() as u64;
        c.counters = counters.len() as u64;
        c.darshan_counters = darshan.len() as u64;
        c.darshan_heatmap = darshan_heatmap.len() as u64;
        c.unmatched_sends = matched.unmatched_sends;
        c.unmatched_receives = matched.unmatched_receives;
        let mpath = dir.join(META_FILE);
        // Compact: indentation was a third of the file, which a small trace pays per event
        // (`jq . meta.json` shows it indented).
        let text = serde_json::to_string(&meta)? + "\n";
        fs::write(&mpath, text).map_err(|e| StoreError::io(&mpath, e))?;

        // The viewer's index is built from the finished tables.
        let clock = Instant::now();
        let lod = lod::build(&Trace::open(&dir)?, &mut |_, _| {})?;
        let lod_build = clock.elapsed();

        fs::rename(&dir, &out).map_err(|e| StoreError::io(&out, e))?;
        tmp.renamed = true;
        Ok(FinishedStore {
            meta,
            lod,
            lod_build,
        })
    }
}

/// `.NAME.writing-PID` beside `out`: the same file system, so the final rename is atomic.
fn hidden_sibling(out: &Path) -> PathBuf {
    let name = out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "trace".into());
    let parent = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    parent.join(format!(".{name}.writing-{}", std::process::id()))
}
