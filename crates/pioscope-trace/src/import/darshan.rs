//! A Darshan log → a trace store. Darshan's own reader does the parsing: `darshan_read.py`
//! (PyDarshan over libdarshan-util) runs as a child process and writes the log as JSON lines;
//! this file turns what it read into the store: one container per rank, files from Darshan's name
//! records and mount table, every module's counters in darshan.parquet, the HEATMAP module's
//! bins in darshan_heatmap.parquet, and DXT segments as events (POSIX segments nested under the
//! MPI-IO segment that encloses them in time). The mapping is documented in docs/IMPORT.md.
//! Running the reader is darshan_reader.rs's.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

pub use super::darshan_reader::DarshanReader;
use super::darshan_reader::{DxtLine, HeatmapLine, Log};
use crate::functions::Layer;
use crate::input_file;
use crate::store::darshan_counters::DarshanCounterRow;
use crate::store::darshan_heatmap::DarshanHeatmapRow;
use crate::store::meta::{ClockMeta, ContainerKind, JobMeta, Meta, ProcessMeta};
use crate::store::{Event, FileRow, StoreError, StoreWriter};

/// `DARSHAN_MAGIC_NR` of darshan-log-format.h: the header's second field, after the 8-byte
/// version string.
const MAGIC: u64 = 6_567_223;

/// The first bytes of a file [`sniff`] looks at.
pub const SNIFF_BYTES: usize = 16;

/// Whether a file starting with `head` is a Darshan log: a version string ("3.41") then the
/// magic number, in either byte order (a log keeps the byte order of the machine that wrote
/// it; Darshan's reader swaps).
pub fn sniff(head: &[u8]) -> bool {
    let Some(magic) = head.get(8..SNIFF_BYTES) else {
        return false;
    };
    let magic: [u8; 8] = magic.try_into().unwrap_or_default();
    head[0].is_ascii_digit()
        && (u64::from_le_bytes(magic) == MAGIC || u64::from_be_bytes(magic) == MAGIC)
}

/// Why a log could not be imported.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// The log cannot be opened (missing, a directory, a FIFO, ...).
    #[error("{}: {source}", path.display())]
    Open {
        /// The log.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// The Python interpreter that runs Darshan's reader could not be started.
    #[error("cannot run {python} (Darshan's reader, PyDarshan, runs in Python; set PIOSCOPE_PYTHON to another interpreter): {source}")]
    Python {
        /// The interpreter.
        python: String,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// Darshan's reader refused the log, or PyDarshan is missing.
    #[error("{}: {message}", path.display())]
    Reader {
        /// The log.
        path: PathBuf,
        /// What the reader said.
        message: String,
    },
    /// The store could not be written.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// What an import produced.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ImportSummary {
    /// Ranks of the job (containers in the store).
    pub ranks: u32,
    /// Files (Darshan records' names) in the store.
    pub files: usize,
    /// Counter rows (darshan.parquet).
    pub counters: usize,
    /// Events made from DXT segments.
    pub events: u64,
    /// Modules in the log, with their record counts.
    pub modules: BTreeMap<String, u64>,
    /// Why the store is partial (Darshan's own partial flags, modules not imported).
    pub partial_reasons: Vec<String>,
}

/// One DXT segment on its way to becoming an event.
struct Segment {
    rank: i32,
    mpiio: bool,
    write: bool,
    record: u64,
    offset: i64,
    length: i64,
    start_ns: i64,
    end_ns: i64,
}

/// Imports the Darshan log `log` as a new trace store at `out`, running Darshan's reader with
/// `python` (for many logs, [`DarshanReader::import`] keeps one reader for all of them).
pub fn import_darshan(log: &Path, out: &Path, python: &str) -> Result<ImportSummary, ImportError> {
    DarshanReader::new(python).import(log, out)
}

impl DarshanReader {
    /// Imports the Darshan log `log` as a new trace store at `out` with this reader.
    pub fn import(&mut self, log: &Path, out: &Path) -> Result<ImportSummary, ImportError> {
        input_file::open_regular(log).map_err(|source| ImportError::Open {
            path: log.to_path_buf(),
            source,
        })?;
        let parsed = self.read(log)?;
        write_store(log, out, parsed)
    }
}

/// The DXT lines' segments, and each rank's host as DXT names it.
fn segments(dxt: Vec<DxtLine>) -> (Vec<Segment>, BTreeMap<i32, String>) {
    let mut hosts = BTreeMap::new();
    let mut segments = Vec::new();
    for d in dxt {
        let mpiio = d.module == "DXT_MPIIO";
        if !d.host.is_empty() {
            hosts.entry(d.rank).or_insert(d.host);
        }
        segments.extend(
            d.segments
                .into_iter()
                .map(|(offset, length, s, e)| Segment {
                    rank: d.rank,
                    mpiio,
                    write: d.op == "write",
                    record: d.id,
                    offset,
                    length,
                    start_ns: seconds_to_ns(s),
                    end_ns: seconds_to_ns(e).max(seconds_to_ns(s)),
                }),
        );
    }
    (segments, hosts)
}

/// The HEATMAP lines as store rows, by module, rank and bin: only the bins with I/O.
fn heatmap_rows(mut heatmaps: Vec<HeatmapLine>) -> Vec<DarshanHeatmapRow> {
    heatmaps.sort_by(|a, b| (&a.module, a.rank).cmp(&(&b.module, b.rank)));
    let mut rows = Vec::new();
    for h in &heatmaps {
        let width_ns = seconds_to_ns(h.bin_width_s);
        let bins = h.read.iter().zip(&h.write).enumerate();
        for (bin, (&read_bytes, &write_bytes)) in bins {
            if read_bytes != 0 || write_bytes != 0 {
                rows.push(DarshanHeatmapRow {
                    module: h.module.clone(),
                    rank: h.rank,
                    bin: bin as i32,
                    start_ns: width_ns.saturating_mul(bin as i64),
                    width_ns,
                    read_bytes,
                    write_bytes,
                });
            }
        }
    }
    rows
}

/// DXT times are seconds since the job start, as doubles.
fn seconds_to_ns(s: f64) -> i64 {
    if s.is_finite() && s > 0.0 {
        (s * 1e9).round().min(i64::MAX as f64) as i64
    } else {
        0
    }
}

/// The file system of `path`: the type of the longest mount point that contains it.
fn fs_type(mounts: &[(String, String)], path: &str) -> String {
    mounts
        .iter()
        .filter(|(point, _)| {
            path.starts_with(point.as_str())
                && (point.ends_with('/')
                    || path.len() == point.len()
                    || path[point.len()..].starts_with('/'))
        })
        .max_by_key(|(point, _)| point.len())
        .map_or_else(|| "unknown".to_string(), |(_, t)| t.clone())
}

fn write_store(log: &Path, out: &Path, parsed: Log) -> Result<ImportSummary, ImportError> {
    let Log {
        job,
        names,
        counters,
        dxt,
        heatmaps,
        skipped,
        complaints,
    } = parsed;
    let job = job.expect("checked by the reader");
    let (mut segments, hosts) = segments(dxt);

    // Files: every record that has counters or segments, ids in path order.
    let name_of = |id: u64| {
        names
            .get(&id)
            .cloned()
            .unwrap_or_else(|| format!("<darshan record {id:#018x}>"))
    };
    let mut paths: Vec<String> = counters
        .iter()
        .map(|c| c.id)
        .chain(segments.iter().map(|s| s.record))
        .map(name_of)
        .collect();
    paths.sort();
    paths.dedup();
    let file_id: HashMap<&str, i32> = paths
        .iter()
        .enumerate()
        .map(|(i, p)| (p.as_str(), i as i32))
        .collect();
    let id_of = |record: u64| file_id[name_of(record).as_str()];

    let top_rank = segments
        .iter()
        .map(|s| s.rank)
        .chain(counters.iter().map(|c| c.rank))
        .max()
        .unwrap_or(-1);
    let ranks = job.job.nprocs.max((top_rank + 1) as u32);

    let mut writer = StoreWriter::create(out)?;
    // Store order: rank, start; an MPI-IO segment before the POSIX segments it encloses.
    segments.sort_by_key(|s| (s.rank, s.start_ns, !s.mpiio, std::cmp::Reverse(s.end_ns)));
    let mut file_ranks: Vec<BTreeMap<i32, ()>> = vec![BTreeMap::new(); paths.len()];
    let mut file_events = vec![0i64; paths.len()];
    let mut enclosing: Option<(i32, i64, i64)> = None; // (rank, id, end) of the last MPI-IO event
    for s in &segments {
        let id = writer.rows() as i64;
        let file = id_of(s.record);
        let parent = match enclosing {
            Some((rank, pid, end)) if !s.mpiio && rank == s.rank && s.end_ns <= end => Some(pid),
            _ => None,
        };
        let (layer, func) = match (s.mpiio, s.write) {
            (true, true) => (Layer::MpiIo, "MPI_File_write_at"),
            (true, false) => (Layer::MpiIo, "MPI_File_read_at"),
            (false, true) => (Layer::Posix, "pwrite"),
            (false, false) => (Layer::Posix, "pread"),
        };
        writer.push(&Event {
            id,
            rank: s.rank,
            process: s.rank,
            depth: u8::from(parent.is_some()),
            parent,
            file_id: Some(file),
            offset: Some(s.offset),
            size: s.length,
            result: s.length,
            ..Event::call(layer, func, s.start_ns, s.end_ns - s.start_ns)
        })?;
        if s.mpiio {
            enclosing = Some((s.rank, id, s.end_ns));
        }
        file_ranks[file as usize].insert(s.rank, ());
        file_events[file as usize] += 1;
    }

    let mut rows = Vec::new();
    for c in &counters {
        let file = id_of(c.id);
        if c.rank >= 0 {
            file_ranks[file as usize].insert(c.rank, ());
        }
        for (counter, value) in c.counters.iter().chain(&c.fcounters) {
            rows.push(DarshanCounterRow {
                module: c.module.clone(),
                rank: c.rank,
                file_id: file,
                component: c.component,
                counter: counter.clone(),
                value: *value,
            });
        }
    }
    let counter_rows = rows.len();
    writer.add_darshan_counters(rows);
    writer.add_darshan_heatmap(heatmap_rows(heatmaps));

    let files: Vec<FileRow> = paths
        .iter()
        .enumerate()
        .map(|(i, path)| FileRow {
            file_id: i as i32,
            path: path.clone(),
            fs_type: fs_type(&job.mounts, path),
            fs_magic: 0,
            // A record Darshan reduced over every rank stands for all of them.
            ranks: if counters
                .iter()
                .any(|c| c.rank < 0 && id_of(c.id) == i as i32)
            {
                ranks as i32
            } else {
                file_ranks[i].len() as i32
            },
            events: file_events[i],
        })
        .collect();

    let j = &job.job;
    let start_unix_ns = j.start_time_sec * 1_000_000_000 + j.start_time_nsec;
    let span_ns = ((j.end_time_sec * 1_000_000_000 + j.end_time_nsec) - start_unix_ns).max(0);
    let duration_ns = span_ns.max(writer.end_ns());
    let host_of = |r: i32| hosts.get(&r).cloned().unwrap_or_default();
    let mut facts = BTreeMap::from([
        ("source".to_string(), "darshan".to_string()),
        ("darshan_jobid".to_string(), j.jobid.to_string()),
        ("darshan_uid".to_string(), j.uid.to_string()),
        ("darshan_log_version".to_string(), j.log_ver.clone()),
        ("darshan_reader".to_string(), job.reader.clone()),
    ]);
    for (k, v) in &j.metadata {
        facts.insert(format!("darshan_{k}"), v.clone());
    }
    let processes = (0..ranks as i32)
        .map(|r| {
            let mut p = ProcessMeta::generated(
                r as u32,
                ContainerKind::Process,
                r,
                host_of(r),
                ClockMeta::exact("darshan", duration_ns as u64, 0),
            );
            p.exe = Some(job.exe.clone());
            p.cmdline = Some(job.exe.clone());
            p.facts = facts.clone();
            p.facts.insert("rank".into(), r.to_string());
            p
        })
        .collect();
    let mut meta = Meta::new(
        format!("pioscope import darshan ({})", job.reader),
        JobMeta {
            command: Some(job.exe.clone()),
            start_unix_ns,
            duration_ns,
            ranks,
            hosts: (0..ranks as i32).map(host_of).collect(),
            mpi_library: None,
        },
        processes,
    );
    meta.tracer_version = j.metadata.get("lib_ver").map(|v| format!("darshan {v}"));
    meta.raw_files = vec![log.file_name().map_or_else(
        || log.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )];
    for (module, info) in &job.modules {
        if info.partial {
            meta.partial_reasons.push(format!(
                "darshan module {module} (version {}): Darshan flagged its records partial (it ran out of record memory; DXT: the trace was truncated)",
                info.version
            ));
        }
    }
    for (module, why) in &skipped {
        meta.partial_reasons
            .push(format!("darshan module {module}: not imported ({why})"));
    }
    for complaint in &complaints {
        meta.partial_reasons
            .push(format!("Darshan's reader (libdarshan-util): {complaint}"));
    }
    meta.partial = !meta.partial_reasons.is_empty();
    let summary = ImportSummary {
        ranks,
        files: files.len(),
        counters: counter_rows,
        events: writer.rows(),
        modules: job
            .modules
            .iter()
            .map(|(m, i)| (m.clone(), i.records))
            .collect(),
        partial_reasons: meta.partial_reasons.clone(),
    };
    writer.finish(&files, &[], meta)?;
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_take_the_longest_mount_that_contains_them() {
        let mounts = vec![
            ("/".to_string(), "ext4".to_string()),
            ("/scratch".to_string(), "lustre".to_string()),
            ("/scratch2".to_string(), "gpfs".to_string()),
        ];
        assert_eq!(fs_type(&mounts, "/scratch/a/b"), "lustre");
        assert_eq!(fs_type(&mounts, "/scratch2/x"), "gpfs");
        assert_eq!(fs_type(&mounts, "/scratchy"), "ext4");
        assert_eq!(fs_type(&[], "<STDOUT>"), "unknown");
    }

    #[test]
    fn logs_are_told_by_their_magic_in_either_byte_order() {
        let mut head = b"3.41\0\0\0\0".to_vec();
        head.extend(MAGIC.to_le_bytes());
        assert!(sniff(&head));
        head.truncate(8);
        head.extend(MAGIC.to_be_bytes());
        assert!(sniff(&head));
        assert!(!sniff(&head[..12]));
        assert!(!sniff(b"PAR1 is not a Darshan log"));
    }

    #[test]
    fn dxt_seconds_become_nanoseconds() {
        assert_eq!(seconds_to_ns(0.005374908447265625), 5_374_908);
        assert_eq!(seconds_to_ns(-1.0), 0);
        assert_eq!(seconds_to_ns(f64::NAN), 0);
    }
}
