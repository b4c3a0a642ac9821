//! The Darshan counters of an imported log as the rules read them (their second input path,
//! `Rule::judge_counters`, for a log without DXT events): records by module, each a
//! (file, rank) with its counters by name. `rank` is `SHARED` (-1) for a record Darshan
//! reduced over every rank (a file all ranks opened). Darshan's cumulative times are seconds
//! summed over ranks; they are turned into ns here.

use std::collections::{BTreeMap, BTreeSet};

use pioscope_trace::store::darshan_counters::SHARED;
use pioscope_trace::store::DarshanCounterRow;

/// One Darshan record: a module's counters for one file and one rank (or `SHARED`).
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Record {
    /// files.parquet `file_id`.
    pub file: i32,
    /// Rank, or `SHARED`.
    pub rank: i32,
    counters: BTreeMap<String, f64>,
}

impl Record {
    /// A counter's value; 0 for a counter the record lacks or Darshan could not keep (-1,
    /// unset floats).
    pub(crate) fn get(&self, name: &str) -> f64 {
        self.counters.get(name).copied().unwrap_or(0.0).max(0.0)
    }

    /// The sum of several counters.
    pub(crate) fn sum(&self, names: &[&str]) -> f64 {
        names.iter().map(|n| self.get(n)).sum()
    }

    /// A time counter (`*_F_*_TIME`, seconds) in ns.
    pub(crate) fn ns(&self, name: &str) -> f64 {
        self.get(name) * 1e9
    }

    /// The histogram `prefix<bin>` (e.g. `POSIX_SIZE_READ_`): (requests, lower, upper) per
    /// bin of `SIZE_BINS`.
    pub(crate) fn histogram(&self, prefix: &str) -> Vec<(f64, u64, u64)> {
        SIZE_BINS
            .iter()
            .map(|(suffix, lo, hi)| (self.get(&format!("{prefix}{suffix}")), *lo, *hi))
            .collect()
    }

    /// Reduced over every rank (a file all ranks opened).
    pub(crate) fn shared(&self) -> bool {
        self.rank == SHARED
    }
}

/// Darshan's access size histogram bins: counter suffix, lower and upper bound in bytes
/// (`POSIX_SIZE_READ_<suffix>`, `MPIIO_SIZE_WRITE_AGG_<suffix>`, ...).
pub(crate) const SIZE_BINS: [(&str, u64, u64); 10] = [
    ("0_100", 0, 100),
    ("100_1K", 100, 1 << 10),
    ("1K_10K", 1 << 10, 10 << 10),
    ("10K_100K", 10 << 10, 100 << 10),
    ("100K_1M", 100 << 10, 1 << 20),
    ("1M_4M", 1 << 20, 4 << 20),
    ("4M_10M", 4 << 20, 10 << 20),
    ("10M_100M", 10 << 20, 100 << 20),
    ("100M_1G", 100 << 20, 1 << 30),
    ("1G_PLUS", 1 << 30, 1 << 32),
];

/// I/O of one rank on one file, estimated from the counters.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Load {
    /// Read, write and metadata time, ns.
    pub ns: f64,
    /// Bytes read and written.
    pub bytes: f64,
    /// Read and write calls.
    pub ops: f64,
}

impl Load {
    /// Adds `share` of `o`.
    fn add(&mut self, o: &Load, share: f64) {
        self.ns += o.ns * share;
        self.bytes += o.bytes * share;
        self.ops += o.ops * share;
    }
}

/// Every record of an imported log, by module (`POSIX`, `MPI-IO`, `STDIO`, ...), each
/// module's records in (file, rank) order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Counters {
    modules: BTreeMap<String, Vec<Record>>,
}

impl Counters {
    /// Groups darshan.parquet rows into records.
    pub fn new(rows: &[DarshanCounterRow]) -> Counters {
        let mut by: BTreeMap<(&str, i32, i32), BTreeMap<String, f64>> = BTreeMap::new();
        for r in rows {
            // Layout components (LUSTRE) are not I/O records: the rules read none of them.
            if r.component != 0 {
                continue;
            }
            if let Some(v) = r.value {
                by.entry((r.module.as_str(), r.file_id, r.rank))
                    .or_default()
                    .insert(r.counter.clone(), v);
            }
        }
        let mut modules: BTreeMap<String, Vec<Record>> = BTreeMap::new();
        for ((m, file, rank), counters) in by {
            modules.entry(m.to_string()).or_default().push(Record {
                file,
                rank,
                counters,
            });
        }
        Counters { modules }
    }

    /// The records of `module` (none if the log has no such module).
    pub(crate) fn records(&self, module: &str) -> &[Record] {
        self.modules.get(module).map_or(&[], Vec::as_slice)
    }

    /// Whether the log has records of `module`.
    pub(crate) fn has(&self, module: &str) -> bool {
        !self.records(module).is_empty()
    }

    /// Files opened through MPI-IO: their POSIX records are ROMIO's requests beneath.
    pub(crate) fn mpiio_files(&self) -> BTreeSet<i32> {
        self.records(names::MPIIO).iter().map(|r| r.file).collect()
    }

    /// The POSIX records of files not opened through MPI-IO: the application's own POSIX
    /// requests.
    pub(crate) fn own_posix(&self) -> Vec<&Record> {
        let mpiio = self.mpiio_files();
        self.records(names::POSIX)
            .iter()
            .filter(|r| !mpiio.contains(&r.file))
            .collect()
    }

    /// The application's own records, with their counter prefix (`MPIIO`, `POSIX`,
    /// `STDIO`): MPI-IO's, POSIX's on files not opened through MPI-IO, STDIO's.
    pub(crate) fn application(&self) -> Vec<(&'static str, &Record)> {
        let mut v: Vec<(&'static str, &Record)> = Vec::new();
        v.extend(self.records(names::MPIIO).iter().map(|r| ("MPIIO", r)));
        v.extend(self.own_posix().into_iter().map(|r| ("POSIX", r)));
        v.extend(self.records(names::STDIO).iter().map(|r| ("STDIO", r)));
        v
    }

    /// The application's I/O time: read, write and metadata time of its own records
    /// (`application`), ns summed over ranks.
    pub(crate) fn io_ns(&self) -> f64 {
        self.application()
            .iter()
            .map(|(p, r)| {
                ["F_READ_TIME", "F_WRITE_TIME", "F_META_TIME"]
                    .iter()
                    .map(|t| r.ns(&format!("{p}_{t}")))
                    .sum::<f64>()
            })
            .sum()
    }

    /// The application's I/O per (rank, file) over `ranks` ranks (`application` records):
    /// a rank's record as it is; a record reduced over every rank gives its slowest and
    /// fastest rank (Darshan's `*_SLOWEST_RANK`, `*_FASTEST_RANK` with their time and bytes)
    /// what Darshan says, and the other ranks even shares of the rest.
    pub(crate) fn per_rank_file(&self, ranks: i32) -> BTreeMap<(i32, i32), Load> {
        let mut out: BTreeMap<(i32, i32), Load> = BTreeMap::new();
        for (p, r) in self.application() {
            let k = |s: &str| format!("{p}_{s}");
            let whole = Load {
                ns: r.ns(&k("F_READ_TIME")) + r.ns(&k("F_WRITE_TIME")) + r.ns(&k("F_META_TIME")),
                bytes: r.get(&k("BYTES_READ")) + r.get(&k("BYTES_WRITTEN")),
                ops: r.sum(&[&k("READS"), &k("WRITES")]),
            };
            if !r.shared() {
                out.entry((r.rank, r.file)).or_default().add(&whole, 1.0);
                continue;
            }
            let end = |rank: &str, time: &str, bytes: &str| {
                let l = Load {
                    ns: r.ns(&k(time)),
                    bytes: r.get(&k(bytes)),
                    ops: 0.0,
                };
                (r.get(&k(rank)) as i32, l)
            };
            let mut ends = vec![end(
                "SLOWEST_RANK",
                "F_SLOWEST_RANK_TIME",
                "SLOWEST_RANK_BYTES",
            )];
            let fastest = end("FASTEST_RANK", "F_FASTEST_RANK_TIME", "FASTEST_RANK_BYTES");
            if fastest.0 != ends[0].0 {
                ends.push(fastest);
            }
            let mut rest = Load { ops: 0.0, ..whole };
            for (_, l) in &ends {
                rest.ns = (rest.ns - l.ns).max(0.0);
                rest.bytes = (rest.bytes - l.bytes).max(0.0);
            }
            let others = (ranks - ends.len() as i32).max(1) as f64;
            // Darshan keeps no per-rank count of calls: every rank gets an even share.
            let ops = whole.ops / ranks.max(1) as f64;
            for rank in 0..ranks {
                let a = out.entry((rank, r.file)).or_default();
                match ends.iter().find(|e| e.0 == rank) {
                    Some((_, l)) => a.add(l, 1.0),
                    None => a.add(&rest, 1.0 / others),
                }
                a.ops += ops;
            }
        }
        out
    }
}

/// Darshan module names and the counters the rules read, by their Darshan names.
pub(crate) mod names {
    /// POSIX module.
    pub const POSIX: &str = "POSIX";
    /// MPI-IO module.
    pub const MPIIO: &str = "MPI-IO";
    /// STDIO module.
    pub const STDIO: &str = "STDIO";
    /// HDF5 file module (its presence says the job used HDF5).
    pub const H5F: &str = "H5F";
}

#[cfg(test)]
pub(crate) mod testing {
    //! Counter fixtures for the rules' tests.
    use pioscope_trace::store::DarshanCounterRow;

    use super::Counters;

    /// Counters from (module, rank, file, counter, value) tuples.
    pub(crate) fn counters(rows: &[(&str, i32, u32, &str, f64)]) -> Counters {
        let rows: Vec<DarshanCounterRow> = rows
            .iter()
            .map(|(m, rank, file, c, v)| DarshanCounterRow {
                module: (*m).into(),
                rank: *rank,
                file_id: *file as i32,
                component: 0,
                counter: (*c).into(),
                value: Some(*v),
            })
            .collect();
        Counters::new(&rows)
    }
}

#[cfg(test)]
mod tests {
    use super::testing::counters;
    use super::*;

    #[test]
    fn rows_group_into_records_and_unkept_values_read_zero() {
        let c = counters(&[
            ("POSIX", -1, 0, "POSIX_WRITES", 10.0),
            ("POSIX", -1, 0, "POSIX_F_WRITE_TIME", 0.5),
            ("POSIX", 3, 1, "POSIX_WRITES", 2.0),
            ("POSIX", 3, 1, "POSIX_READS", -1.0),
            ("STDIO", 0, 2, "STDIO_WRITES", 1.0),
        ]);
        let p = c.records(names::POSIX);
        assert_eq!(p.len(), 2);
        assert!(p[0].shared() && !p[1].shared());
        assert_eq!(p[0].ns("POSIX_F_WRITE_TIME"), 5e8);
        assert_eq!(p[1].get("POSIX_READS"), 0.0);
        assert!(c.has(names::STDIO) && !c.has(names::MPIIO));
        // No MPI-IO: POSIX and STDIO are the application's; 0.5 s of POSIX time.
        assert_eq!(c.application().len(), 3);
        assert_eq!(c.io_ns(), 5e8);
        // 4 ranks: the shared record's 0.5 s goes evenly (no slowest rank named: rank 0 is
        // both ends, with 0 s), rank 3 keeps its own record.
        let l = c.per_rank_file(4);
        assert_eq!(l[&(3, 1)].ops, 2.0);
        assert_eq!(l[&(1, 0)].ns, 5e8 / 3.0);
        assert_eq!(l[&(0, 0)].ns, 0.0);
    }
}
