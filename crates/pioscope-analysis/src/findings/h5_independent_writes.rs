//! `h5-independent-writes`: ranks write pieces of one HDF5 dataset with independent
//! `H5Dwrite`s (the default transfer property list) through the MPI-IO driver, so each
//! rank's small pieces reach the storage one rank at a time. A collective transfer lets ROMIO
//! gather the pieces of all ranks into large contiguous writes.

use std::collections::{BTreeMap, BTreeSet};

use pioscope_trace::store::Event;
use pioscope_trace::{units, Layer, OpKind};

use super::config::Config;
use super::dispatch::{Interest, HDF5, LIBRARY, POSIX};
use super::library;
use super::util::{self, Facts, General, Numbers, Requests};
use super::{Evidence, Finding, Rule};
use crate::hints;
use crate::pass::Context;

/// Rule id.
pub(crate) const ID: &str = "h5-independent-writes";

/// The independent writes of one dataset.
#[derive(Debug, Default)]
struct Dataset {
    writes: Requests,
    ranks: BTreeSet<i32>,
    /// POSIX writes beneath them: the storage's speed for these bytes.
    posix: Requests,
}

/// See the module doc.
pub(crate) struct H5IndependentWrites {
    general: General,
    min_calls: u64,
    min_ranks: usize,
    max_mean_bytes: u64,
    by_dataset: BTreeMap<i32, Dataset>,
}

impl H5IndependentWrites {
    pub(crate) fn new(config: &Config) -> Self {
        let s = config.section(ID);
        H5IndependentWrites {
            general: General::new(config),
            min_calls: s.u64("min_calls"),
            min_ranks: s.u64("min_ranks") as usize,
            max_mean_bytes: s.u64("max_mean_bytes"),
            by_dataset: BTreeMap::new(),
        }
    }

    /// Whether the dataset's file uses another driver than MPI-IO (then no collective
    /// transfer is possible).
    fn not_mpio(ctx: &Context<'_>, dataset: i32) -> bool {
        library::h5_file_of(ctx, dataset)
            .and_then(|f| ctx.hints.any(f, hints::H5_DRIVER))
            .is_some_and(|d| d != "mpio")
    }
}

impl Rule for H5IndependentWrites {
    fn visit(&mut self, e: &Event<'_>, fx: &Facts, _ctx: &Context<'_>) {
        let kind = fx.kind;
        match fx.library {
            None if e.layer == Layer::Hdf5 && e.func == "H5Dwrite" && !e.collective => {
                let Some(d) = e.file_id else { return };
                let a = self.by_dataset.entry(d).or_default();
                a.writes.add(e);
                a.ranks.insert(e.rank);
            }
            Some(c) if c.func == "H5Dwrite" && !c.collective && e.layer == Layer::Posix => {
                if kind != OpKind::Write {
                    return;
                }
                if let Some(a) = c.file.and_then(|d| self.by_dataset.get_mut(&d)) {
                    a.posix.add(e);
                }
            }
            _ => {}
        }
    }

    fn interest(&self) -> Interest {
        Interest::any_of(&[HDF5, POSIX | LIBRARY])
    }

    fn conclude(&self, ctx: &Context<'_>) -> Vec<Finding> {
        let datasets: Vec<(i32, &Dataset)> = self
            .by_dataset
            .iter()
            .filter(|(d, a)| {
                a.ranks.len() >= self.min_ranks
                    && a.writes.bytes / a.writes.count.max(1) <= self.max_mean_bytes
                    && !Self::not_mpio(ctx, **d)
            })
            .map(|(d, a)| (*d, a))
            .collect();
        let mut writes = Requests::default();
        let mut posix = Requests::default();
        let mut ranks = BTreeSet::new();
        for (_, a) in &datasets {
            writes.merge(&a.writes);
            posix.merge(&a.posix);
            ranks.extend(a.ranks.iter().copied());
        }
        if writes.count < self.min_calls || writes.count == 0 {
            return Vec::new();
        }
        // A collective transfer still writes the bytes: at the storage speed seen beneath
        // these calls. The rest of their time is the cost.
        let needed = writes.bytes as f64 * util::ratio(posix.ns as f64, posix.bytes as f64);
        let cost = util::per_rank((writes.ns as f64 - needed).max(0.0), ctx);
        let worst = util::top(datasets.clone(), self.general.worst, |(_, a)| a.writes.ns);
        let mean = writes.bytes / writes.count;

        let mut n = Numbers::default();
        n.int("calls", writes.count as i64)
            .int("bytes", writes.bytes as i64)
            .int("mean_bytes", mean as i64)
            .int("time_ns", writes.ns)
            .int("posix_requests", posix.count as i64)
            .int("posix_time_ns", posix.ns)
            .int("ranks", ranks.len() as i64)
            .int("datasets", datasets.len() as i64);
        let names: Vec<String> = worst
            .iter()
            .map(|(d, a)| {
                format!(
                    "{}: {} independent H5Dwrite, {}",
                    util::file_name(ctx, *d),
                    a.writes.count,
                    units::duration_prose(a.writes.ns)
                )
            })
            .collect();
        let first = worst
            .first()
            .map(|(d, _)| util::file_name(ctx, *d))
            .unwrap_or_default();
        vec![self.general.finding(
            ctx,
            ID,
            cost,
            format!(
                "{} independent H5Dwrite calls by {} ranks on shared datasets",
                writes.count,
                ranks.len()
            ),
            Evidence {
                summary: format!(
                    "{} ranks wrote {} to {} shared dataset(s) in {} independent H5Dwrite calls \
                     of {} on average, taking {} summed over ranks.",
                    ranks.len(),
                    units::bytes(writes.bytes),
                    datasets.len(),
                    writes.count,
                    units::bytes(mean),
                    units::duration_prose(writes.ns)
                ),
                numbers: n.0,
                worst: names,
            },
            format!(
                "Write {first} collectively: create a transfer property list with \
                 H5Pcreate(H5P_DATASET_XFER), call H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE) \
                 and pass it to H5Dwrite on every rank, so ROMIO merges the ranks' pieces into \
                 large writes."
            ),
        )]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{coll, io, none, num, one, Fx};
    use pioscope_trace::raw::format::flags;

    /// 4 ranks, each writing its 16 rows of one shared dataset with an H5Dwrite of 8 KiB
    /// (100 us) each, a MPI_File_write_at and a pwrite64 (20 us) beneath; `collective` sets the
    /// transfer's flag, `driver` the file's `h5.driver`.
    fn job(dir: &std::path::Path, collective: bool, driver: &str) -> pioscope_trace::store::Trace {
        let mut fx = Fx::new(4);
        let file = fx.file("/scratch/out.h5");
        let grid = fx.file("/scratch/out.h5:/grid");
        for r in 0..4usize {
            fx.setting(r, file, "H5Fcreate", 1_000, &[("h5.driver", driver)]);
            for i in 0..16u64 {
                let t = 10_000 + i * 200_000;
                let at = (r as u64 * 16 + i) * 8192;
                let w = io("H5Dwrite", t, 100_000, grid, at, 8192);
                fx.push(r, if collective { coll(w, i + 1) } else { w });
                let m = io("MPI_File_write_at", t + 1_000, 90_000, file, at, 8192).depth(1);
                fx.push(
                    r,
                    if collective {
                        m.flags(flags::COLLECTIVE)
                    } else {
                        m
                    },
                );
                fx.push(
                    r,
                    io("pwrite64", t + 2_000, 20_000, file, at, 8192).depth(2),
                );
            }
        }
        fx.build(dir)
    }

    #[test]
    fn fires_with_its_numbers() {
        let dir = tempfile::tempdir().expect("tmp");
        let f = one(&job(dir.path(), false, "mpio"), ID);
        assert_eq!(num(&f, "calls"), 64);
        assert_eq!(num(&f, "ranks"), 4);
        assert_eq!(num(&f, "datasets"), 1);
        assert_eq!(num(&f, "bytes"), 64 * 8192);
        assert_eq!(num(&f, "mean_bytes"), 8192);
        assert_eq!(num(&f, "time_ns"), 64 * 100_000);
        assert_eq!(num(&f, "posix_requests"), 64);
        assert_eq!(num(&f, "posix_time_ns"), 64 * 20_000);
        // (6.4 ms of H5Dwrite - 1.28 ms the storage took) / 4 ranks.
        assert_eq!(f.cost_ns, 1_280_000);
        assert!(f.evidence.worst[0].starts_with("/scratch/out.h5:/grid: 64 independent"));
        assert!(f
            .remedy
            .contains("H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE)"));
        assert!(f.remedy.contains("/scratch/out.h5:/grid"));
    }

    #[test]
    fn collective_writes_or_another_driver_do_not_fire() {
        let dir = tempfile::tempdir().expect("tmp");
        none(&job(&dir.path().join("c"), true, "mpio"), ID);
        none(&job(&dir.path().join("s"), false, "sec2"), ID);
    }
}
