//! `mpiio-blocking`: the job reads (writes) with blocking MPI-IO calls only, never the
//! nonblocking forms (`MPI_File_iwrite*`, split collectives `*_begin`/`*_end`), while its ranks
//! also compute: the time in the blocking calls could overlap that computation (Drishti's
//! M06, M07).
//!
//! Cost: per rank, the blocking calls' time, up to the rank's time outside I/O and MPI calls
//! (only that much can be hidden), summed over ranks and divided by them; the rule fires from
//! `min_time_share` of the job's elapsed time. On a Darshan log without DXT the
//! same from the counters: `MPIIO_NB_READS` (`_WRITES`) zero, blocking time
//! `MPIIO_F_READ_TIME` (`_WRITE_TIME`), the time outside I/O from the job's run time less its
//! I/O time (averaged over ranks: Darshan reduces shared files over every rank).

use std::collections::BTreeMap;

use pioscope_trace::functions;
use pioscope_trace::store::Event;
use pioscope_trace::{units, Layer, OpKind};

use super::config::Config;
use super::counters::{names, Counters};
use super::dispatch::{Interest, HDF5, MPI, OUTER, TOP};
use super::util::{self, Facts, General, Numbers};
use super::{Evidence, Finding, Rule};
use crate::lookup::Keyed;
use crate::pass::Context;

/// Rule id.
pub(crate) const ID: &str = "mpiio-blocking";

/// Whether an MPI-IO function is a nonblocking or split-collective form (its transfer can
/// overlap computation).
fn overlaps(func: &str) -> bool {
    func.starts_with("MPI_File_i") || func.ends_with("_begin") || func.ends_with("_end")
}

/// The MPI-IO counters of one direction (reads, then writes), and the call each blocking
/// counter stands for in the evidence.
struct DirectionCounters {
    nonblocking: &'static str,
    collective: &'static str,
    independent: &'static str,
    time: &'static str,
    collective_func: &'static str,
    independent_func: &'static str,
}

const COUNTERS: [DirectionCounters; 2] = [
    DirectionCounters {
        nonblocking: "MPIIO_NB_READS",
        collective: "MPIIO_COLL_READS",
        independent: "MPIIO_INDEP_READS",
        time: "MPIIO_F_READ_TIME",
        collective_func: "MPI_File_read_all",
        independent_func: "MPI_File_read",
    },
    DirectionCounters {
        nonblocking: "MPIIO_NB_WRITES",
        collective: "MPIIO_COLL_WRITES",
        independent: "MPIIO_INDEP_WRITES",
        time: "MPIIO_F_WRITE_TIME",
        collective_func: "MPI_File_write_all",
        independent_func: "MPI_File_write",
    },
];

/// What one direction shows.
#[derive(Clone, Debug, Default)]
struct Direction {
    /// Blocking calls.
    blocking: u64,
    /// Nonblocking (or split) calls.
    nonblocking: u64,
    /// Blocking time per rank, ns.
    by_rank: BTreeMap<i32, i64>,
    /// Blocking time per function.
    by_func: BTreeMap<&'static str, i64>,
    /// Blocking time per file.
    by_file: BTreeMap<i32, i64>,
}

impl Direction {
    fn ns(&self) -> i64 {
        self.by_rank.values().sum()
    }
}

/// The evidence of one judgment, from events or counters.
struct Judged {
    reads: Direction,
    writes: Direction,
    /// Time each rank could hide the blocking calls behind, ns (its time outside I/O); rank -1
    /// stands for all ranks when the counters make them alike.
    outside_io_ns: BTreeMap<i32, f64>,
    hdf5: bool,
    /// Where the numbers come from, for the summary.
    source: &'static str,
}

/// See the module doc.
pub(crate) struct MpiioBlocking {
    general: General,
    min_time_share: f64,
    reads: Direction,
    writes: Direction,
    /// Top-level I/O and MPI time per rank, ns: not computation.
    busy_by_rank: Keyed<i32, i64>,
    hdf5: bool,
}

impl MpiioBlocking {
    pub(crate) fn new(config: &Config) -> Self {
        let s = config.section(ID);
        MpiioBlocking {
            general: General::new(config),
            min_time_share: s.f64("min_time_share"),
            reads: Direction::default(),
            writes: Direction::default(),
            busy_by_rank: Keyed::default(),
            hdf5: false,
        }
    }

    /// The finding, if a direction without nonblocking calls has blocking time worth it.
    fn judge(&self, j: &Judged, ctx: &Context<'_>) -> Vec<Finding> {
        let ranks = util::rank_count(ctx) as f64;
        let job = util::job_ns(ctx) as f64;
        // Only a direction that never overlaps counts (Drishti's trigger).
        let dirs: Vec<(&str, &Direction)> = [("read", &j.reads), ("write", &j.writes)]
            .into_iter()
            .filter(|(_, d)| d.nonblocking == 0 && d.blocking > 0)
            .collect();
        let Some(&(verb, main)) = util::top(dirs.clone(), 1, |(_, d)| d.ns()).first() else {
            return Vec::new();
        };
        let mut hidden = 0.0;
        let mut blocking_ns = 0;
        let mut calls = 0;
        let mut per_rank: BTreeMap<i32, i64> = BTreeMap::new();
        for (_, d) in &dirs {
            blocking_ns += d.ns();
            calls += d.blocking;
            for (r, ns) in &d.by_rank {
                *per_rank.entry(*r).or_default() += ns;
            }
        }
        for (r, ns) in &per_rank {
            hidden += (*ns as f64).min(j.outside_io_ns.get(r).copied().unwrap_or(0.0));
        }
        let cost = util::per_rank(hidden, ctx);
        if (cost as f64) < self.min_time_share * job || cost == 0 {
            return Vec::new();
        }
        let outside: f64 = j.outside_io_ns.values().sum::<f64>() / ranks;
        let mut n = Numbers::default();
        n.int("blocking_calls", calls as i64)
            .int("blocking_time_ns", blocking_ns)
            .int(
                "blocking_read_time_ns",
                if j.reads.nonblocking == 0 {
                    j.reads.ns()
                } else {
                    0
                },
            )
            .int(
                "blocking_write_time_ns",
                if j.writes.nonblocking == 0 {
                    j.writes.ns()
                } else {
                    0
                },
            )
            .int("outside_io_per_rank_ns", outside.round() as i64)
            .text("source", j.source);
        let k = self.general.worst;
        let mut worst = Vec::new();
        for (f, ns) in util::top(main.by_func.iter().collect(), k, |(_, ns)| **ns) {
            worst.push(format!("{f}: {} blocking", units::duration_prose(*ns)));
        }
        for (f, ns) in util::top(main.by_file.iter().collect(), k, |(_, ns)| **ns) {
            worst.push(format!(
                "file {}: {} of blocking {verb}s",
                util::file_name(ctx, *f),
                units::duration_prose(*ns)
            ));
        }
        // The remedy names the blocking function that took most time, and its overlapping form.
        let func = util::top(main.by_func.iter().collect(), 1, |(_, ns)| **ns)
            .first()
            .map(|(f, _)| **f);
        let instead = match func {
            Some(f) if f.ends_with("_all") => format!(
                "{f}_begin ... {f}_end (split collective), or MPI_File_i{}",
                &f["MPI_File_".len()..]
            ),
            Some(f) if f.starts_with("MPI_File_") => {
                format!("MPI_File_i{}", &f["MPI_File_".len()..])
            }
            _ => format!("MPI_File_i{verb}_at_all"),
        };
        let mut remedy = format!(
            "Start the {verb}s with {instead}, compute while they proceed, and complete them \
             with MPI_Wait (MPI_Waitall) before the buffer is reused{}.",
            match func {
                Some(f) => format!(" (instead of {f})"),
                None => String::new(),
            }
        );
        if j.hdf5 {
            remedy.push_str(
                " Through HDF5: the asynchronous VOL connector (vol-async, H5ESwait) makes \
                 H5Dwrite/H5Dread return before the data is moved.",
            );
        }
        vec![self.general.finding(
            ctx,
            ID,
            cost,
            format!(
                "Blocking MPI-IO {verb}s only: {} per rank that could overlap computation",
                units::duration_prose((blocking_ns as f64 / ranks).round() as i64)
            ),
            Evidence {
                summary: format!(
                    "{calls} blocking MPI-IO calls took {} summed over ranks and no nonblocking \
                     form was used; each rank spends {} outside I/O that they could overlap \
                     ({}).",
                    units::duration_prose(blocking_ns),
                    units::duration_prose(outside.round() as i64),
                    j.source
                ),
                numbers: n.0,
                worst,
            },
            remedy,
        )]
    }
}

impl Rule for MpiioBlocking {
    fn visit(&mut self, e: &Event<'_>, fx: &Facts, _ctx: &Context<'_>) {
        self.hdf5 |= e.layer == Layer::Hdf5;
        // Communication outside I/O (barriers, exchanges, MPI_Init) is not computation
        // either: nothing overlaps it.
        if e.layer == Layer::Mpi && e.depth == 0 {
            *self.busy_by_rank.at(e.rank) += e.duration_ns;
        }
        if !fx.top_level {
            return;
        }
        *self.busy_by_rank.at(e.rank) += e.duration_ns;
        if fx.call.is_none() {
            return;
        }
        let Some(f) = functions::by_id(e.func_id) else {
            return;
        };
        let d = match fx.kind {
            OpKind::Read => &mut self.reads,
            OpKind::Write => &mut self.writes,
            _ => return,
        };
        if overlaps(f.name) {
            d.nonblocking += 1;
            return;
        }
        d.blocking += 1;
        *d.by_rank.entry(e.rank).or_default() += e.duration_ns;
        *d.by_func.entry(f.name).or_default() += e.duration_ns;
        *d.by_file.entry(e.file_id.unwrap_or(-1)).or_default() += e.duration_ns;
    }

    fn interest(&self) -> Interest {
        Interest::any_of(&[HDF5, MPI | OUTER, TOP])
    }

    fn conclude(&self, ctx: &Context<'_>) -> Vec<Finding> {
        let job = util::job_ns(ctx) as f64;
        // The ranks that made calls: a rank without any has no blocking time to hide (and
        // meta.json's rank count is not trusted to size anything).
        let outside_io_ns = self
            .busy_by_rank
            .entries()
            .into_iter()
            .map(|(r, &busy)| (r, (job - busy as f64).max(0.0)))
            .collect();
        self.judge(
            &Judged {
                reads: self.reads.clone(),
                writes: self.writes.clone(),
                outside_io_ns,
                hdf5: self.hdf5,
                source: "traced calls",
            },
            ctx,
        )
    }

    fn judge_counters(&self, c: &Counters, ctx: &Context<'_>) -> Vec<Finding> {
        let ranks = util::rank_count(ctx);
        let mut j = Judged {
            reads: Direction::default(),
            writes: Direction::default(),
            outside_io_ns: BTreeMap::new(),
            hdf5: c.has(names::H5F),
            source: "Darshan counters MPIIO_*_READS/WRITES, MPIIO_F_*_TIME, averaged over ranks",
        };
        // Counters have no per-call time: the blocking time goes to the average rank and the
        // functions are named by their Darshan counter.
        for r in c.records(names::MPIIO) {
            for (d, k) in [(&mut j.reads, &COUNTERS[0]), (&mut j.writes, &COUNTERS[1])] {
                d.nonblocking += r.get(k.nonblocking) as u64;
                let (coll, indep) = (r.get(k.collective), r.get(k.independent));
                d.blocking += (coll + indep) as u64;
                if coll + indep > 0.0 {
                    let ns = r.ns(k.time).round() as i64;
                    *d.by_file.entry(r.file).or_default() += ns;
                    let func = if coll >= indep {
                        k.collective_func
                    } else {
                        k.independent_func
                    };
                    *d.by_func.entry(func).or_default() += ns;
                }
            }
        }
        // Counters make every rank alike: one entry, rank -1, stands for all of them, with the
        // blocking time and the time outside I/O of all ranks summed (min(k·a, k·b) is k·min(a, b),
        // so the hidden time is the same as rank by rank, with nothing sized by the rank count).
        let outside = (util::job_ns(ctx) as f64 - c.io_ns() / ranks as f64).max(0.0);
        for d in [&mut j.reads, &mut j.writes] {
            let ns = d.by_file.values().sum::<i64>();
            d.by_rank.insert(-1, ns);
        }
        j.outside_io_ns = BTreeMap::from([(-1, outside * ranks as f64)]);
        self.judge(&j, ctx)
    }
}

#[cfg(test)]
mod tests {
    use super::super::counters::testing::counters;
    use super::*;
    use crate::testutil::{coll, findings_from_counters, io, none, num, one, Fx};

    /// 2 ranks, 4 steps each: 20 ms of computation, then a 10 ms `func` of 1 MiB (collective
    /// for the `_all` forms).
    fn job(dir: &std::path::Path, func: &str) -> pioscope_trace::store::Trace {
        let mut fx = Fx::new(2);
        let f = fx.file("/scratch/out.dat");
        for r in 0..2usize {
            for i in 0..4u64 {
                let t = 20_000_000 + i * 30_000_000;
                let w = io(func, t, 10_000_000, f, (i * 2 + r as u64) << 20, 1 << 20);
                fx.push(
                    r,
                    if func.ends_with("_all") {
                        coll(w, i + 1)
                    } else {
                        w
                    },
                );
            }
        }
        fx.build(dir)
    }

    #[test]
    fn blocking_writes_between_computation_fire() {
        let dir = tempfile::tempdir().expect("tmp");
        let f = one(&job(dir.path(), "MPI_File_write_at_all"), ID);
        assert_eq!(num(&f, "blocking_calls"), 8);
        assert_eq!(num(&f, "blocking_write_time_ns"), 80_000_000);
        assert_eq!(num(&f, "blocking_read_time_ns"), 0);
        // Each rank blocks 40 ms and computes longer than that: all 40 ms could hide.
        assert_eq!(f.cost_ns, 40_000_000);
        assert!(f.remedy.contains("MPI_File_write_at_all_begin"));
        assert!(f.remedy.contains("MPI_File_iwrite_at_all"));
        assert!(f.evidence.worst[0].starts_with("MPI_File_write_at_all: "));
    }

    #[test]
    fn nonblocking_writes_do_not_fire() {
        let dir = tempfile::tempdir().expect("tmp");
        none(&job(dir.path(), "MPI_File_iwrite_at"), ID);
    }

    /// Darshan counters of 4 ranks writing a shared file: `nb` nonblocking writes, 0.8 s of
    /// blocking collective writes summed over ranks, in a job of `job_ms`.
    fn from_counters(nb: f64) -> Vec<Finding> {
        let dir = tempfile::tempdir().expect("tmp");
        let mut fx = Fx::new(4);
        let f = fx.file("/scratch/out.dat");
        fx.push(0, io("pwrite", 0, 1_000_000_000, f, 0, 1));
        let t = fx.build(dir.path());
        let c = counters(&[
            ("MPI-IO", -1, f, "MPIIO_COLL_WRITES", 64.0),
            ("MPI-IO", -1, f, "MPIIO_NB_WRITES", nb),
            ("MPI-IO", -1, f, "MPIIO_F_WRITE_TIME", 0.8),
        ]);
        findings_from_counters(&t, &c, ID)
    }

    #[test]
    fn counters_without_nonblocking_writes_fire() {
        let f = from_counters(0.0);
        assert_eq!(f.len(), 1);
        assert_eq!(num(&f[0], "blocking_calls"), 64);
        // 0.2 s per rank blocking, 0.8 s outside I/O: all of it could hide.
        assert_eq!(f[0].cost_ns, 200_000_000);
        assert!(f[0].remedy.contains("MPI_File_write_all_begin"));
        assert!(from_counters(2.0).is_empty());
    }
}
