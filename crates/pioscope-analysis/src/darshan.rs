//! What an imported Darshan log says beyond its DXT events: per module, the operations, bytes
//! and time of Darshan's counters (darshan.parquet), per rank and per file the application's
//! I/O they give (the viewer's summaries of a log without DXT), and what the store cannot
//! support (a log without DXT has no calls: the rules judge its counters, and those that need
//! calls cannot be judged). docs/IMPORT.md.

use std::collections::BTreeMap;

use pioscope_trace::store::{DarshanCounterRow, StoreError, Trace};
use serde::Serialize;

use crate::findings::Counters;

/// The counters that give one module's totals: (module, read ops, write ops, bytes read,
/// bytes written, read time, write time, metadata time). Times are Darshan's cumulative
/// seconds over every rank.
const MODULE_COUNTERS: &[ModuleCounters] = &[
    ModuleCounters {
        module: "POSIX",
        reads: &["POSIX_READS"],
        writes: &["POSIX_WRITES"],
        prefix: "POSIX",
    },
    ModuleCounters {
        module: "MPI-IO",
        reads: &[
            "MPIIO_INDEP_READS",
            "MPIIO_COLL_READS",
            "MPIIO_SPLIT_READS",
            "MPIIO_NB_READS",
        ],
        writes: &[
            "MPIIO_INDEP_WRITES",
            "MPIIO_COLL_WRITES",
            "MPIIO_SPLIT_WRITES",
            "MPIIO_NB_WRITES",
        ],
        prefix: "MPIIO",
    },
    ModuleCounters {
        module: "STDIO",
        reads: &["STDIO_READS"],
        writes: &["STDIO_WRITES"],
        prefix: "STDIO",
    },
    ModuleCounters {
        module: "H5D",
        reads: &["H5D_READS"],
        writes: &["H5D_WRITES"],
        prefix: "H5D",
    },
    ModuleCounters {
        module: "PNETCDF_VAR",
        reads: &[
            "PNETCDF_VAR_INDEP_READS",
            "PNETCDF_VAR_COLL_READS",
            "PNETCDF_VAR_NB_READS",
        ],
        writes: &[
            "PNETCDF_VAR_INDEP_WRITES",
            "PNETCDF_VAR_COLL_WRITES",
            "PNETCDF_VAR_NB_WRITES",
        ],
        prefix: "PNETCDF_VAR",
    },
];

struct ModuleCounters {
    module: &'static str,
    reads: &'static [&'static str],
    writes: &'static [&'static str],
    /// Counter prefix: `<prefix>_BYTES_READ`, `<prefix>_F_READ_TIME`, ...
    prefix: &'static str,
}

/// One module's totals over every record.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ModuleTotals {
    /// Darshan module.
    pub module: String,
    /// Records (file × rank, or file for records reduced over all ranks).
    pub records: u64,
    /// Files with a record.
    pub files: u64,
    /// Read operations.
    pub reads: u64,
    /// Write operations.
    pub writes: u64,
    /// Bytes read.
    pub bytes_read: u64,
    /// Bytes written.
    pub bytes_written: u64,
    /// Time in reads, ns summed over ranks.
    pub read_time_ns: i64,
    /// Time in writes, ns summed over ranks.
    pub write_time_ns: i64,
    /// Time in metadata operations (open, close, stat, seek, sync...), ns summed over ranks.
    pub meta_time_ns: i64,
}

/// What the imported log holds besides events.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct DarshanSummary {
    /// Per module with I/O counters, in the order of `MODULE_COUNTERS`.
    pub modules: Vec<ModuleTotals>,
    /// Whether the store has DXT events (calls to judge findings on; without them the
    /// findings come from the counters).
    pub has_dxt_events: bool,
    /// What the store cannot support, one sentence each.
    pub cannot_support: Vec<String>,
}

/// The summary of an imported Darshan log; None for a store not imported from one.
pub fn summarize(
    trace: &Trace,
) -> Result<Option<DarshanSummary>, pioscope_trace::store::StoreError> {
    let rows = trace.darshan_counters()?;
    if rows.is_empty() {
        return Ok(None);
    }
    let has_dxt_events = trace.meta.counts.events > 0;
    let mut cannot_support = vec![
        "Darshan records no MPI calls besides MPI-IO: the time ranks wait for each other, \
         the exchange of collective I/O and message costs are not in the log"
            .to_string(),
    ];
    if has_dxt_events {
        cannot_support.push(
            "DXT does not say which call made a segment nor whether it was collective: \
             rules on collective use and on call nesting see independent calls only"
                .to_string(),
        );
    } else {
        cannot_support.push(
            "the log has no DXT trace: the findings are judged from Darshan's counters, which \
             have no timeline, so rules that need calls (collective buffering, exchange, \
             sieving, close and sync) are not judged (run the job with \
             DXT_ENABLE_IO_TRACE=1, or under pioscope run)"
                .to_string(),
        );
    }
    Ok(Some(DarshanSummary {
        modules: module_totals(&rows),
        has_dxt_events,
        cannot_support,
    }))
}

fn module_totals(rows: &[DarshanCounterRow]) -> Vec<ModuleTotals> {
    let mut out = Vec::new();
    for m in MODULE_COUNTERS {
        let mine: Vec<&DarshanCounterRow> = rows.iter().filter(|r| r.module == m.module).collect();
        if mine.is_empty() {
            continue;
        }
        let mut by_counter: BTreeMap<&str, f64> = BTreeMap::new();
        let mut records = std::collections::BTreeSet::new();
        let mut files = std::collections::BTreeSet::new();
        for r in &mine {
            // Darshan leaves counters it could not keep at -1: they count nothing.
            *by_counter.entry(r.counter.as_str()).or_default() += r.value.unwrap_or(0.0).max(0.0);
            records.insert((r.file_id, r.rank));
            files.insert(r.file_id);
        }
        let sum = |names: &[&str]| {
            names
                .iter()
                .map(|n| by_counter.get(n).copied().unwrap_or(0.0))
                .sum::<f64>()
        };
        let one = |suffix: &str| {
            by_counter
                .get(format!("{}_{suffix}", m.prefix).as_str())
                .copied()
                .unwrap_or(0.0)
        };
        let ns = |s: f64| (s * 1e9).round() as i64;
        out.push(ModuleTotals {
            module: m.module.to_string(),
            records: records.len() as u64,
            files: files.len() as u64,
            reads: sum(m.reads) as u64,
            writes: sum(m.writes) as u64,
            bytes_read: one("BYTES_READ") as u64,
            bytes_written: one("BYTES_WRITTEN") as u64,
            read_time_ns: ns(one("F_READ_TIME")),
            write_time_ns: ns(one("F_WRITE_TIME")),
            meta_time_ns: ns(one("F_META_TIME")),
        });
    }
    out
}

/// One rank's or one file's I/O as Darshan's counters give it.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Load {
    /// The rank, or the file (files.parquet `file_id`).
    pub key: i32,
    /// Read, write and metadata time, ns.
    pub io_ns: i64,
    /// Bytes read and written.
    pub bytes: u64,
    /// Files the rank did I/O on, or ranks that did I/O on the file.
    pub with: u32,
}

/// Per rank and per file, the application's I/O (MPI-IO's records, POSIX's on files not
/// opened through MPI-IO, STDIO's, as the rules count it: a record Darshan reduced over every
/// rank is shared out by its slowest and fastest rank and evenly over the others), each list
/// from the most I/O time down.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Loads {
    /// Per rank.
    pub ranks: Vec<Load>,
    /// Per file.
    pub files: Vec<Load>,
}

/// The per-rank and per-file I/O of an imported log's counters (empty lists for a store not
/// imported from Darshan).
pub fn loads(trace: &Trace) -> Result<Loads, StoreError> {
    let counters = Counters::new(&trace.darshan_counters()?);
    let per = counters.per_rank_file(trace.meta.job.ranks as i32);
    let mut ranks: BTreeMap<i32, Load> = BTreeMap::new();
    let mut files: BTreeMap<i32, Load> = BTreeMap::new();
    for (&(rank, file), l) in &per {
        if l.ns <= 0.0 && l.bytes <= 0.0 {
            continue;
        }
        for (map, key) in [(&mut ranks, rank), (&mut files, file)] {
            let e = map.entry(key).or_insert_with(|| Load {
                key,
                ..Load::default()
            });
            e.io_ns += l.ns.round() as i64;
            e.bytes += l.bytes.round() as u64;
            e.with += 1;
        }
    }
    let ranked = |m: BTreeMap<i32, Load>| {
        let mut v: Vec<Load> = m.into_values().collect();
        v.sort_by(|a, b| b.io_ns.cmp(&a.io_ns).then(a.key.cmp(&b.key)));
        v
    };
    Ok(Loads {
        ranks: ranked(ranks),
        files: ranked(files),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(module: &str, rank: i32, file: i32, counter: &str, value: f64) -> DarshanCounterRow {
        DarshanCounterRow {
            module: module.into(),
            rank,
            file_id: file,
            component: 0,
            counter: counter.into(),
            value: Some(value),
        }
    }

    #[test]
    fn totals_sum_every_record_and_ignore_unkept_counters() {
        let rows = vec![
            row("POSIX", -1, 0, "POSIX_WRITES", 10.0),
            row("POSIX", -1, 0, "POSIX_BYTES_WRITTEN", 4096.0),
            row("POSIX", -1, 0, "POSIX_F_WRITE_TIME", 0.5),
            row("POSIX", 3, 1, "POSIX_WRITES", 2.0),
            row("POSIX", 3, 1, "POSIX_BYTES_WRITTEN", 100.0),
            row("POSIX", 3, 1, "POSIX_F_META_TIME", 0.25),
            row("POSIX", 3, 1, "POSIX_READS", -1.0),
            row("MPI-IO", -1, 0, "MPIIO_COLL_WRITES", 4.0),
            row("MPI-IO", -1, 0, "MPIIO_INDEP_WRITES", 1.0),
            row("LUSTRE", -1, 0, "LUSTRE_COMP_STRIPE_SIZE", 1048576.0),
        ];
        let t = module_totals(&rows);
        assert_eq!(t.len(), 2);
        assert_eq!(
            t[0],
            ModuleTotals {
                module: "POSIX".into(),
                records: 2,
                files: 2,
                reads: 0,
                writes: 12,
                bytes_read: 0,
                bytes_written: 4196,
                read_time_ns: 0,
                write_time_ns: 500_000_000,
                meta_time_ns: 250_000_000,
            }
        );
        assert_eq!((t[1].module.as_str(), t[1].writes), ("MPI-IO", 5));
    }
}
