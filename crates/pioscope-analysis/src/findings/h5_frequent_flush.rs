//! `h5-frequent-flush`: ranks call `H5Fflush` again and again (every step), each time writing
//! the metadata cache and, with the MPI-IO driver, syncing the file on every rank
//! (`MPI_File_sync`). `H5Fclose` flushes anyway: one flush where the file must be consistent
//! on storage is enough.

use pioscope_trace::store::Event;
use pioscope_trace::{units, Layer};

use super::config::Config;
use super::dispatch::{Interest, HDF5};
use super::util::{self, Facts, General, Numbers};
use super::{Evidence, Finding, Rule};
use crate::lookup::Keyed;
use crate::pass::Context;

/// Rule id.
pub(crate) const ID: &str = "h5-frequent-flush";

/// See the module doc.
pub(crate) struct H5FrequentFlush {
    general: General,
    min_flushes_per_rank: f64,
    /// (flushes, ns) per (file, rank).
    by: Keyed<(i32, i32), (u64, i64)>,
}

impl H5FrequentFlush {
    pub(crate) fn new(config: &Config) -> Self {
        let s = config.section(ID);
        H5FrequentFlush {
            general: General::new(config),
            min_flushes_per_rank: s.f64("min_flushes_per_rank"),
            by: Keyed::default(),
        }
    }
}

impl Rule for H5FrequentFlush {
    fn visit(&mut self, e: &Event<'_>, _fx: &Facts, _ctx: &Context<'_>) {
        if e.layer != Layer::Hdf5 || e.func != "H5Fflush" {
            return;
        }
        let a = self.by.at((e.file_id.unwrap_or(-1), e.rank));
        a.0 += 1;
        a.1 += e.duration_ns;
    }

    fn interest(&self) -> Interest {
        Interest::any_of(&[HDF5])
    }

    fn conclude(&self, ctx: &Context<'_>) -> Vec<Finding> {
        let entries = self.by.entries();
        let flushes: u64 = entries.iter().map(|(_, a)| a.0).sum();
        let ns: i64 = entries.iter().map(|(_, a)| a.1).sum();
        let ranks = util::rank_count(ctx);
        let per_rank = flushes as f64 / ranks as f64;
        if flushes == 0 || per_rank < self.min_flushes_per_rank {
            return Vec::new();
        }
        // One flush per rank and file stays (at its mean time); the others are the cost.
        let saved: f64 = entries
            .iter()
            .map(|(_, (n, t))| *t as f64 * (*n - 1) as f64 / *n as f64)
            .sum();
        let cost = util::per_rank(saved, ctx);
        let by_file = self.by.group(
            |(f, _)| *f,
            |s: &mut (u64, i64), a| {
                s.0 += a.0;
                s.1 += a.1;
            },
        );
        let worst = util::top(
            by_file.iter().collect(),
            self.general.worst,
            |(_, (_, t))| *t,
        );
        let names: Vec<String> = worst
            .iter()
            .map(|(f, (n, t))| {
                format!(
                    "{}: {n} H5Fflush, {}",
                    util::file_name(ctx, **f),
                    units::duration_prose(*t)
                )
            })
            .collect();
        let first = worst
            .first()
            .map(|(f, _)| util::file_name(ctx, **f))
            .unwrap_or_default();
        let mut n = Numbers::default();
        n.int("flushes", flushes as i64)
            .float("flushes_per_rank", per_rank)
            .int("time_ns", ns)
            .int("files", by_file.len() as i64);
        vec![self.general.finding(
            ctx,
            ID,
            cost,
            format!("{flushes} H5Fflush calls ({per_rank:.0} per rank)"),
            Evidence {
                summary: format!(
                    "Ranks flushed {} HDF5 file(s) {flushes} times ({per_rank:.1} per rank), \
                     taking {} summed over ranks.",
                    by_file.len(),
                    units::duration_prose(ns)
                ),
                numbers: n.0,
                worst: names,
            },
            format!(
                "Call H5Fflush on {first} only where the file must be complete on storage (a \
                 checkpoint another program reads), not every step: H5Fclose flushes anyway."
            ),
        )]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{ev, none, num, one, Fx};

    /// 2 ranks flushing one HDF5 file `flushes` times, 100 us each.
    fn job(dir: &std::path::Path, flushes: u64) -> pioscope_trace::store::Trace {
        let mut fx = Fx::new(2);
        let file = fx.file("/scratch/out.h5");
        for r in 0..2usize {
            for i in 0..flushes {
                fx.push(
                    r,
                    ev("H5Fflush", 10_000 + i * 200_000, 100_000).object(file),
                );
            }
        }
        fx.build(dir)
    }

    #[test]
    fn fires_with_its_numbers() {
        let dir = tempfile::tempdir().expect("tmp");
        let f = one(&job(dir.path(), 10), ID);
        assert_eq!(num(&f, "flushes"), 20);
        assert_eq!(num(&f, "time_ns"), 2_000_000);
        assert_eq!(num(&f, "files"), 1);
        // 9 of each rank's 10 flushes, 100 us each, over 2 ranks.
        assert_eq!(f.cost_ns, 900_000);
        assert_eq!(f.evidence.worst, ["/scratch/out.h5: 20 H5Fflush, 2.00 ms"]);
        assert!(f
            .remedy
            .starts_with("Call H5Fflush on /scratch/out.h5 only where"));
    }

    #[test]
    fn a_few_flushes_do_not_fire() {
        let dir = tempfile::tempdir().expect("tmp");
        none(&job(dir.path(), 3), ID);
    }
}
