//! `h5-independent-metadata`: every rank reads or writes the HDF5 file's metadata (superblock,
//! object headers, B-trees, heaps) itself, with independent MPI-IO beneath `H5Fopen`,
//! `H5Dcreate2`, `H5Fclose` and the other non-transfer calls, because the file access property
//! list left collective metadata off (`h5.coll_metadata_write`, `h5.all_coll_metadata_ops`
//! = 0). The same small accesses then reach the storage once per rank; collective metadata
//! has one rank read and broadcast, and writes the cache's entries in one collective call.

use std::collections::BTreeMap;

use pioscope_trace::store::Event;
use pioscope_trace::{units, Layer, OpKind};

use super::config::Config;
use super::dispatch::{Interest, LIBRARY, POSIX};
use super::util::{self, Facts, General, Numbers, Requests};
use super::{Evidence, Finding, Rule};
use crate::lookup::Keyed;
use crate::pass::Context;

/// Rule id.
pub(crate) const ID: &str = "h5-independent-metadata";

/// The setting that makes metadata writes collective (0/1, MPI-IO driver only).
const COLL_WRITE: &str = "h5.coll_metadata_write";
/// The setting that makes metadata reads collective.
const COLL_OPS: &str = "h5.all_coll_metadata_ops";

/// Metadata reads and writes of one rank on one file.
#[derive(Debug, Default)]
struct Access {
    reads: Requests,
    writes: Requests,
}

/// See the module doc.
pub(crate) struct H5IndependentMetadata {
    general: General,
    min_ranks: usize,
    min_requests: u64,
    /// Per (file, rank).
    by: Keyed<(i32, i32), Access>,
}

impl H5IndependentMetadata {
    pub(crate) fn new(config: &Config) -> Self {
        let s = config.section(ID);
        H5IndependentMetadata {
            general: General::new(config),
            min_ranks: s.u64("min_ranks") as usize,
            min_requests: s.u64("min_requests"),
            by: Keyed::default(),
        }
    }
}

/// An HDF5 call that moves no dataset elements: what it reads or writes is metadata.
fn is_metadata_call(func: &str) -> bool {
    func.starts_with("H5") && !matches!(func, "H5Dwrite" | "H5Dread")
}

impl Rule for H5IndependentMetadata {
    fn visit(&mut self, e: &Event<'_>, fx: &Facts, ctx: &Context<'_>) {
        let kind = fx.kind;
        let Some(c) = fx.library else {
            return;
        };
        if e.layer != Layer::Posix || !is_metadata_call(c.func) {
            return;
        }
        let Some(file) = e.file_id else { return };
        let key = match kind {
            OpKind::Read => COLL_OPS,
            OpKind::Write => COLL_WRITE,
            _ => return,
        };
        // Only files whose access properties were recorded with collective metadata off.
        if ctx.hints.get(e.rank, file, key, e.start_ns) != Some("0") {
            return;
        }
        let a = self.by.at((file, e.rank));
        if kind == OpKind::Read {
            a.reads.add(e);
        } else {
            a.writes.add(e);
        }
    }

    fn interest(&self) -> Interest {
        Interest::any_of(&[POSIX | LIBRARY])
    }

    fn conclude(&self, ctx: &Context<'_>) -> Vec<Finding> {
        // Per file: the ranks' accesses, in rank order.
        let mut files: BTreeMap<i32, Vec<(i32, &Access)>> = BTreeMap::new();
        for ((file, rank), a) in self.by.entries() {
            files.entry(file).or_default().push((rank, a));
        }
        files.retain(|_, ranks| ranks.len() >= self.min_ranks);
        let (mut reads, mut writes) = (Requests::default(), Requests::default());
        // With collective metadata one rank still does the accesses: the busiest rank's time
        // per file stays, the others' is the saving.
        let mut kept_ns = 0;
        let mut ranks = 0;
        for accs in files.values() {
            ranks = ranks.max(accs.len());
            for (_, a) in accs {
                reads.merge(&a.reads);
                writes.merge(&a.writes);
            }
            kept_ns += accs
                .iter()
                .map(|(_, a)| a.reads.ns + a.writes.ns)
                .max()
                .unwrap_or(0);
        }
        let requests = reads.count + writes.count;
        if requests < self.min_requests || requests == 0 {
            return Vec::new();
        }
        let total_ns = reads.ns + writes.ns;
        let cost = util::per_rank((total_ns - kept_ns) as f64, ctx);
        let file_ns = |accs: &Vec<(i32, &Access)>| -> i64 {
            accs.iter().map(|(_, a)| a.reads.ns + a.writes.ns).sum()
        };
        let worst = util::top(files.iter().collect(), self.general.worst, |(_, accs)| {
            file_ns(accs)
        });
        let names: Vec<String> = worst
            .iter()
            .map(|(f, accs)| {
                format!(
                    "{}: {} ranks, {}",
                    util::file_name(ctx, **f),
                    accs.len(),
                    units::duration_prose(file_ns(accs))
                )
            })
            .collect();
        // The remedy follows the time: reads want all_coll_metadata_ops, writes
        // coll_metadata_write; the costlier first, both when both took time.
        let mut calls = vec![
            (reads.ns, "H5Pset_all_coll_metadata_ops(fapl, 1)"),
            (writes.ns, "H5Pset_coll_metadata_write(fapl, 1)"),
        ];
        calls.retain(|(ns, _)| *ns > 0);
        calls.sort_by_key(|(ns, _)| -ns);
        let calls: Vec<&str> = calls.into_iter().map(|(_, c)| c).collect();
        let mut n = Numbers::default();
        n.int("requests", requests as i64)
            .int("reads", reads.count as i64)
            .int("read_bytes", reads.bytes as i64)
            .int("read_time_ns", reads.ns)
            .int("writes", writes.count as i64)
            .int("write_bytes", writes.bytes as i64)
            .int("write_time_ns", writes.ns)
            .int("ranks", ranks as i64)
            .int("files", files.len() as i64);
        vec![self.general.finding(
            ctx,
            ID,
            cost,
            format!("HDF5 metadata read and written by every rank ({ranks} ranks)"),
            Evidence {
                summary: format!(
                    "{ranks} ranks each accessed the metadata of {} HDF5 file(s) themselves: \
                     {} reads and {} writes of {} beneath HDF5 calls, taking {} summed over \
                     ranks.",
                    files.len(),
                    reads.count,
                    writes.count,
                    units::bytes(reads.bytes + writes.bytes),
                    units::duration_prose(total_ns)
                ),
                numbers: n.0,
                worst: names,
            },
            format!(
                "Turn on collective metadata in the file access property list before \
                 H5Fcreate/H5Fopen: {}.",
                calls.join(" and ")
            ),
        )]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{ev, io, none, num, one, Fx};

    /// 4 ranks opening one HDF5 file: beneath H5Fopen 4 reads of 512 B (30 us each), beneath
    /// H5Fclose 2 writes of 1 KiB (50 us each), through independent MPI-IO; `collective` is
    /// the value of both collective metadata settings.
    fn job(dir: &std::path::Path, collective: &str) -> pioscope_trace::store::Trace {
        let mut fx = Fx::new(4);
        let file = fx.file("/scratch/out.h5");
        for r in 0..4usize {
            fx.setting(
                r,
                file,
                "H5Fopen",
                5_000,
                &[
                    ("h5.driver", "mpio"),
                    (COLL_WRITE, collective),
                    (COLL_OPS, collective),
                ],
            );
            fx.push(r, ev("H5Fopen", 10_000, 200_000).object(file));
            for i in 0..4u64 {
                let t = 20_000 + i * 40_000;
                fx.push(
                    r,
                    io("MPI_File_read_at", t, 35_000, file, i * 512, 512).depth(1),
                );
                fx.push(
                    r,
                    io("pread64", t + 1_000, 30_000, file, i * 512, 512).depth(2),
                );
            }
            fx.push(r, ev("H5Fclose", 300_000, 200_000).object(file));
            for i in 0..2u64 {
                let t = 310_000 + i * 60_000;
                fx.push(
                    r,
                    io("MPI_File_write_at", t, 55_000, file, i * 1024, 1024).depth(1),
                );
                fx.push(
                    r,
                    io("pwrite64", t + 1_000, 50_000, file, i * 1024, 1024).depth(2),
                );
            }
        }
        fx.build(dir)
    }

    #[test]
    fn fires_with_its_numbers() {
        let dir = tempfile::tempdir().expect("tmp");
        let f = one(&job(dir.path(), "0"), ID);
        assert_eq!(num(&f, "requests"), 24);
        assert_eq!(num(&f, "reads"), 16);
        assert_eq!(num(&f, "read_bytes"), 16 * 512);
        assert_eq!(num(&f, "read_time_ns"), 16 * 30_000);
        assert_eq!(num(&f, "writes"), 8);
        assert_eq!(num(&f, "write_bytes"), 8 * 1024);
        assert_eq!(num(&f, "write_time_ns"), 8 * 50_000);
        assert_eq!((num(&f, "ranks"), num(&f, "files")), (4, 1));
        // (880 us over the ranks - the 220 us one rank still spends) / 4 ranks.
        assert_eq!(f.cost_ns, 165_000);
        assert_eq!(f.evidence.worst, ["/scratch/out.h5: 4 ranks, 880.0 us"]);
        // Reads took more: their call comes first.
        assert!(f.remedy.ends_with(
            "H5Pset_all_coll_metadata_ops(fapl, 1) and H5Pset_coll_metadata_write(fapl, 1)."
        ));
    }

    #[test]
    fn collective_metadata_does_not_fire() {
        let dir = tempfile::tempdir().expect("tmp");
        none(&job(dir.path(), "1"), ID);
    }
}
