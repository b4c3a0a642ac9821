//! `pnetcdf-blocking`: a rank moves many small pieces of PnetCDF variables with blocking
//! `ncmpi_put_*`/`ncmpi_get_*` calls (the var, vara, vars and varn families), each its own
//! round of MPI-IO (for the `_all` forms its own collective). The nonblocking interface queues
//! the pieces (`ncmpi_iput_vara`, flagged NONBLOCKING by the runtime) and `ncmpi_wait_all`
//! moves them together in one MPI-IO call of all of them.

use std::collections::BTreeMap;

use pioscope_trace::functions;
use pioscope_trace::raw::format::flags;
use pioscope_trace::store::Event;
use pioscope_trace::{units, Layer, OpKind};

use super::config::Config;
use super::dispatch::{Interest, LIBRARY, PNETCDF, POSIX};
use super::util::{self, Facts, General, Numbers, Requests};
use super::{Evidence, Finding, Rule};
use crate::pass::Context;

/// Rule id.
pub(crate) const ID: &str = "pnetcdf-blocking";

/// The blocking vara calls of one direction.
#[derive(Debug, Default)]
struct Direction {
    calls: Requests,
    /// POSIX transfers beneath them: the storage's speed for these bytes.
    posix: Requests,
    /// Time per variable.
    by_variable: BTreeMap<i32, (u64, i64)>,
    /// Time per function (its independent form's name).
    by_family: BTreeMap<&'static str, i64>,
}

impl Direction {
    /// Time beyond what the storage needed for the bytes (at the speed seen beneath).
    fn overhead_ns(&self) -> f64 {
        let needed =
            self.calls.bytes as f64 * util::ratio(self.posix.ns as f64, self.posix.bytes as f64);
        (self.calls.ns as f64 - needed).max(0.0)
    }
}

/// See the module doc.
pub(crate) struct PnetcdfBlocking {
    general: General,
    min_calls_per_rank: f64,
    max_mean_bytes: u64,
    puts: Direction,
    gets: Direction,
}

impl PnetcdfBlocking {
    pub(crate) fn new(config: &Config) -> Self {
        let s = config.section(ID);
        PnetcdfBlocking {
            general: General::new(config),
            min_calls_per_rank: s.f64("min_calls_per_rank"),
            max_mean_bytes: s.u64("max_mean_bytes"),
            puts: Direction::default(),
            gets: Direction::default(),
        }
    }

    /// The direction of a blocking data call (`func` is a PnetCDF function).
    fn direction(&mut self, func: &str, nonblocking: bool) -> Option<&mut Direction> {
        match (functions::kind_of(Layer::Pnetcdf, func), nonblocking) {
            (OpKind::Write, false) => Some(&mut self.puts),
            (OpKind::Read, false) => Some(&mut self.gets),
            _ => None,
        }
    }
}

impl Rule for PnetcdfBlocking {
    fn visit(&mut self, e: &Event<'_>, fx: &Facts, _ctx: &Context<'_>) {
        let kind = fx.kind;
        match fx.library {
            None if e.layer == Layer::Pnetcdf => {
                let nonblocking = e.flags & flags::NONBLOCKING != 0;
                let Some(f) = functions::by_id(e.func_id) else {
                    return;
                };
                let Some(d) = self.direction(f.name, nonblocking) else {
                    return;
                };
                d.calls.add(e);
                let family = f.name.strip_suffix("_all").unwrap_or(f.name);
                *d.by_family.entry(family).or_default() += e.duration_ns;
                let v = d.by_variable.entry(e.file_id.unwrap_or(-1)).or_default();
                v.0 += 1;
                v.1 += e.duration_ns;
            }
            Some(c) if e.layer == Layer::Posix => {
                if let Some(d) = self.direction(c.func, c.nonblocking) {
                    if matches!(kind, OpKind::Read | OpKind::Write) {
                        d.posix.add(e);
                    }
                }
            }
            _ => {}
        }
    }

    fn interest(&self) -> Interest {
        Interest::any_of(&[PNETCDF, POSIX | LIBRARY])
    }

    fn conclude(&self, ctx: &Context<'_>) -> Vec<Finding> {
        let ranks = util::rank_count(ctx);
        let small = |d: &Direction| {
            d.calls.count > 0
                && d.calls.count as f64 / ranks as f64 >= self.min_calls_per_rank
                && d.calls.bytes / d.calls.count <= self.max_mean_bytes
        };
        let dirs: Vec<(&str, &Direction)> = [("put", &self.puts), ("get", &self.gets)]
            .into_iter()
            .filter(|(_, d)| small(d))
            .collect();
        // The remedy follows the time: the direction whose calls cost most.
        let Some(&(verb, main)) = util::top(dirs.clone(), 1, |(_, d)| d.overhead_ns()).first()
        else {
            return Vec::new();
        };
        let mut calls = Requests::default();
        let mut overhead = 0.0;
        for (_, d) in &dirs {
            calls.merge(&d.calls);
            overhead += d.overhead_ns();
        }
        let cost = util::per_rank(overhead, ctx);
        let per_rank = calls.count as f64 / ranks as f64;
        let worst = util::top(
            main.by_variable.iter().collect(),
            self.general.worst,
            |(_, (_, ns))| *ns,
        );
        let names: Vec<String> = worst
            .iter()
            .map(|(v, (n, ns))| {
                format!(
                    "{}: {n} blocking ncmpi_{verb}_*, {}",
                    util::file_name(ctx, **v),
                    units::duration_prose(*ns)
                )
            })
            .collect();
        // The remedy names the blocking function that took most time, and its queued form.
        let family = util::top(main.by_family.iter().collect(), 1, |(_, ns)| **ns)
            .first()
            .map_or("ncmpi_put_vara", |(f, _)| **f);
        let queued = family.replacen("ncmpi_", "ncmpi_i", 1);
        let mut n = Numbers::default();
        n.int("calls", calls.count as i64)
            .float("calls_per_rank", per_rank)
            .int("bytes", calls.bytes as i64)
            .int("mean_bytes", (calls.bytes / calls.count) as i64)
            .int("time_ns", calls.ns)
            .int("put_calls", self.puts.calls.count as i64)
            .int("get_calls", self.gets.calls.count as i64);
        vec![self.general.finding(
            ctx,
            ID,
            cost,
            format!(
                "{} blocking PnetCDF put/get calls ({per_rank:.0} per rank)",
                calls.count
            ),
            Evidence {
                summary: format!(
                    "{} blocking ncmpi_put_*/ncmpi_get_* calls of {} on average took {} \
                     summed over ranks, each its own MPI-IO call.",
                    calls.count,
                    units::bytes(calls.bytes / calls.count),
                    units::duration_prose(calls.ns)
                ),
                numbers: n.0,
                worst: names,
            },
            format!(
                "Post the pieces with {queued} ({queued}_<type>) instead of {family} and \
                 complete them together with one ncmpi_wait_all(ncid, NC_REQ_ALL, NULL, NULL), \
                 so PnetCDF moves them in one MPI-IO call."
            ),
        )]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{coll, ev, io, none, num, one, Fx};

    /// 2 ranks each writing 4 KiB pieces of variables `temp` and `rho` in turn, 8 pieces per
    /// rank: blocking ncmpi_put_vara_all (50 us each, a collective MPI-IO write and a pwrite64
    /// of 10 us beneath), or `nonblocking` ncmpi_iput_vara and one ncmpi_wait_all.
    fn job(dir: &std::path::Path, nonblocking: bool) -> pioscope_trace::store::Trace {
        let mut fx = Fx::new(2);
        let file = fx.file("/scratch/out.nc");
        let vars = [
            fx.file("/scratch/out.nc:temp"),
            fx.file("/scratch/out.nc:rho"),
        ];
        for r in 0..2usize {
            for i in 0..8u64 {
                let t = 10_000 + i * 100_000;
                let at = (i * 2 + r as u64) * 4096;
                let var = vars[i as usize % 2];
                if nonblocking {
                    let queued = io("ncmpi_iput_vara", t, 2_000, var, 0, 4096);
                    fx.push(r, queued.flags(flags::NONBLOCKING));
                    continue;
                }
                fx.push(r, io("ncmpi_put_vara_all", t, 50_000, var, 0, 4096));
                let w = io("MPI_File_write_at_all", t + 1_000, 45_000, file, at, 4096);
                fx.push(r, coll(w, i + 1).depth(1));
                fx.push(
                    r,
                    io("pwrite64", t + 2_000, 10_000, file, at, 4096).depth(2),
                );
            }
            if nonblocking {
                fx.push(
                    r,
                    ev("ncmpi_wait_all", 900_000, 60_000).object(file).size(8),
                );
            }
        }
        fx.build(dir)
    }

    #[test]
    fn fires_with_its_numbers() {
        let dir = tempfile::tempdir().expect("tmp");
        let f = one(&job(dir.path(), false), ID);
        assert_eq!(num(&f, "calls"), 16);
        assert_eq!(num(&f, "put_calls"), 16);
        assert_eq!(num(&f, "get_calls"), 0);
        assert_eq!(num(&f, "bytes"), 16 * 4096);
        assert_eq!(num(&f, "mean_bytes"), 4096);
        assert_eq!(num(&f, "time_ns"), 16 * 50_000);
        // (800 us of calls - 160 us the storage took) / 2 ranks.
        assert_eq!(f.cost_ns, 320_000);
        assert_eq!(f.evidence.worst.len(), 2);
        assert!(f.evidence.worst[0].contains(": 8 blocking ncmpi_put_*, "));
        assert!(f
            .remedy
            .contains("ncmpi_iput_vara (ncmpi_iput_vara_<type>) instead of ncmpi_put_vara"));
        assert!(f.remedy.contains("ncmpi_wait_all"));
    }

    #[test]
    fn nonblocking_calls_do_not_fire() {
        let dir = tempfile::tempdir().expect("tmp");
        none(&job(dir.path(), true), ID);
    }
}
