//! `metadata-storm`: many metadata calls (open, close, stat, create, unlink, mkdir, ...) taking
//! a large share of the application's I/O time. On a parallel file system each is a round
//! trip to the metadata server, and thousands of ranks issuing them at once queue there.
//!
//! Evidence and remedy follow the time, not the call count (on mdtest a few milliseconds of
//! close must not hide seconds of rmdir); the cost is the metadata time actually spent, the
//! waiting for other ranks inside `MPI_File_open`/`close` taken out (`Facts::wait`).

use pioscope_trace::functions::by_name;
use pioscope_trace::store::Event;
use pioscope_trace::units;

use super::config::Config;
use super::counters::Counters;
use super::dispatch::{Interest, TOP, WAIT};
use super::util::{self, Facts, General, Numbers};
use super::{Evidence, Finding, Rule};
use crate::class;
use crate::lookup::Keyed;
use crate::pass::Context;

/// Rule id.
pub(crate) const ID: &str = "metadata-storm";

/// Metadata calls per rank and file up to which each file is taken as opened once (create,
/// close and a stat or two): keeping it open saves nothing.
const FEW_PER_FILE: f64 = 4.0;

/// See the module doc.
pub(crate) struct MetadataStorm {
    general: General,
    min_ops: u64,
    min_share: f64,
    io_ns: i64,
    ops: u64,
    ns: i64,
    /// Metadata calls and time per (rank, file or -1, function id).
    by: Keyed<(i32, i32, u16), (u64, i64)>,
    first: Option<i64>,
    last: i64,
}

impl MetadataStorm {
    pub(crate) fn new(config: &Config) -> Self {
        let s = config.section(ID);
        MetadataStorm {
            general: General::new(config),
            min_ops: s.u64("min_ops"),
            min_share: s.f64("min_share"),
            io_ns: 0,
            ops: 0,
            ns: 0,
            by: Keyed::default(),
            first: None,
            last: 0,
        }
    }
}

/// Metadata calls and time per (rank, file or -1, function id).
type ByRankFileFunc = Keyed<(i32, i32, u16), (u64, i64)>;

/// What a judgment reads, from events or counters.
struct Seen<'a> {
    /// The application's I/O time, ns summed over ranks.
    io_ns: i64,
    /// Metadata calls.
    ops: u64,
    /// Their time, ns summed over ranks.
    ns: i64,
    by: &'a ByRankFileFunc,
    /// The time from the first metadata call to the end of the last, ns.
    window_ns: i64,
    source: &'a str,
}

/// Darshan's metadata counters of one module (by counter prefix): its counters of calls with
/// the call each stands for, and its metadata time (shared among the calls by their count).
struct ModuleCounters {
    prefix: &'static str,
    calls: &'static [(&'static str, &'static str)],
    meta: &'static str,
}

const COUNTERS: [ModuleCounters; 3] = [
    ModuleCounters {
        prefix: "MPIIO",
        calls: &[("MPIIO_OPENS", "MPI_File_open")],
        meta: "MPIIO_F_META_TIME",
    },
    ModuleCounters {
        prefix: "POSIX",
        calls: &[("POSIX_OPENS", "open"), ("POSIX_STATS", "stat")],
        meta: "POSIX_F_META_TIME",
    },
    ModuleCounters {
        prefix: "STDIO",
        calls: &[("STDIO_OPENS", "fopen")],
        meta: "STDIO_F_META_TIME",
    },
];

impl Rule for MetadataStorm {
    fn visit(&mut self, e: &Event<'_>, fx: &Facts, _ctx: &Context<'_>) {
        if fx.wait {
            // Ranks waiting for each other inside an open, close, sync or set_view: not I/O.
            self.io_ns -= e.duration_ns;
            if let Some(p) = fx.parent.filter(|p| p.class & class::METADATA != 0) {
                self.ns -= e.duration_ns;
                self.by.at((e.rank, p.file.unwrap_or(-1), p.func)).1 -= e.duration_ns;
            }
            return;
        }
        if !fx.top_level {
            return;
        }
        self.io_ns += e.duration_ns;
        if !fx.is(class::METADATA) {
            return;
        }
        self.ops += 1;
        self.ns += e.duration_ns;
        self.first = Some(self.first.map_or(e.start_ns, |f| f.min(e.start_ns)));
        self.last = self.last.max(e.end_ns());
        let a = self.by.at((e.rank, e.file_id.unwrap_or(-1), fx.id()));
        a.0 += 1;
        a.1 += e.duration_ns;
    }

    fn interest(&self) -> Interest {
        Interest::any_of(&[WAIT, TOP])
    }

    fn conclude(&self, ctx: &Context<'_>) -> Vec<Finding> {
        self.judge(
            &Seen {
                io_ns: self.io_ns,
                ops: self.ops,
                ns: self.ns,
                by: &self.by,
                window_ns: self.last - self.first.unwrap_or(0),
                source: "traced calls",
            },
            ctx,
        )
    }

    fn judge_counters(&self, c: &Counters, ctx: &Context<'_>) -> Vec<Finding> {
        let mut by = ByRankFileFunc::default();
        let (mut ops, mut ns) = (0u64, 0.0);
        // The application's own records (POSIX beneath MPI-IO is ROMIO's).
        for (prefix, r) in c.application() {
            for m in COUNTERS.iter().filter(|m| m.prefix == prefix) {
                let meta_ns = r.ns(m.meta);
                let n: f64 = m.calls.iter().map(|(k, _)| r.get(k)).sum();
                for (k, func) in m.calls {
                    let count = r.get(k);
                    if count <= 0.0 {
                        continue;
                    }
                    let t = meta_ns * util::ratio(count, n);
                    let a = by.at((r.rank, r.file, by_name(func).map_or(0, |f| f.id)));
                    a.0 += count as u64;
                    a.1 += t.round() as i64;
                    ops += count as u64;
                    ns += t;
                }
            }
        }
        self.judge(
            &Seen {
                io_ns: c.io_ns().round() as i64,
                ops,
                ns: ns.round() as i64,
                by: &by,
                window_ns: util::job_ns(ctx),
                source: "Darshan counters *_OPENS, *_STATS, *_F_META_TIME (the time shared by \
                         count)",
            },
            ctx,
        )
    }
}

impl MetadataStorm {
    /// The finding, if the metadata calls are many and take much of the I/O time.
    fn judge(&self, s: &Seen<'_>, ctx: &Context<'_>) -> Vec<Finding> {
        let share = util::ratio(s.ns as f64, s.io_ns as f64);
        if s.ops < self.min_ops || s.ops == 0 || share < self.min_share {
            return Vec::new();
        }
        let add = |s: &mut (u64, i64), a: &(u64, i64)| {
            s.0 += a.0;
            s.1 += a.1;
        };
        let by_func = s.by.group(|k| util::func_name(k.2), add);
        let mut by_file = s.by.group(|k| k.1, add);
        by_file.remove(&-1);
        let by_rank = s.by.group(|k| k.0, add);
        let pairs = self
            .by
            .group(|k| (k.0, k.1), |_: &mut (), _| ())
            .into_keys()
            .filter(|k| k.1 >= 0)
            .count();
        // The remedies remove the calls (fewer files, files kept open, one rank doing the
        // namespace work): the time they took is what the storm costs.
        let cost = util::per_rank(s.ns as f64, ctx);
        let per_pair = util::ratio(s.ops as f64, pairs as f64);
        let window = s.window_ns.max(1);
        let rate = s.ops as f64 / (window as f64 / 1e9);
        let mut n = Numbers::default();
        n.int("metadata_ops", s.ops as i64)
            .int("metadata_time_ns", s.ns)
            .float("io_time_share", share)
            .float("ops_per_second", rate)
            .int("files", by_file.len() as i64)
            .int("rank_file_pairs", pairs as i64)
            .float("ops_per_rank_file", per_pair)
            .text("source", s.source);
        let k = self.general.worst;
        let mut worst = Vec::new();
        let funcs = util::top(by_func.iter().collect(), k, |(_, (_, ns))| *ns);
        for (f, (c, ns)) in &funcs {
            worst.push(format!(
                "call {f}: {c} calls, {}",
                units::duration_prose(*ns)
            ));
        }
        for (f, (c, ns)) in util::top(by_file.iter().collect(), k, |(_, (_, ns))| *ns) {
            worst.push(format!(
                "file {}: {c} metadata calls, {}",
                util::file_name(ctx, *f),
                units::duration_prose(*ns)
            ));
        }
        // Rank -1: a Darshan record reduced over every rank, no rank to name.
        for (r, (c, ns)) in util::top(
            by_rank.iter().filter(|(r, _)| **r >= 0).collect(),
            k,
            |(_, (_, ns))| *ns,
        ) {
            worst.push(format!(
                "{}: {c} metadata calls, {}",
                util::rank_name(ctx, *r),
                units::duration_prose(*ns)
            ));
        }
        let top = funcs.first().map(|(f, _)| **f).unwrap_or("open");
        let top_ns = funcs.first().map_or(0, |(_, (_, ns))| *ns);
        let most = format!(
            "Most of the metadata time ({} of {}) is {top}",
            units::duration_prose(top_ns),
            units::duration_prose(s.ns)
        );
        let remedy = if class::is_stat(top) {
            format!(
                "{most}: cache file attributes instead of asking again (one stat \
                 per file, or none when open's result says enough), and do not check for \
                 existence before every open."
            )
        } else if (class::is_open(top) || class::is_close(top)) && per_pair <= FEW_PER_FILE {
            format!(
                "{most}: the ranks create {} files and open each about once ({per_pair:.1} \
                 metadata calls per rank and file), so there is nothing to keep open; write \
                 fewer, larger files instead: one shared file through MPI-IO (see \
                 file-per-process), or the many small outputs of a rank packed into one file.",
                by_file.len()
            )
        } else if class::is_open(top) || class::is_close(top) {
            format!(
                "{most}: keep files open across steps instead of reopening them for each \
                 write ({per_pair:.1} metadata calls per rank and file now), or let one rank \
                 per node do the opens."
            )
        } else if matches!(top, "unlink" | "rmdir" | "MPI_File_delete") {
            format!(
                "{most}: every rank removing its own files and directories at once queues at \
                 the metadata server; remove fewer, larger files, remove a whole tree from \
                 one rank per directory (or after the job), or reuse the directories instead \
                 of removing and creating them again."
            )
        } else {
            format!(
                "{most}: batch the namespace changes (create the directories \
                 once, on one rank, then barrier) instead of every rank repeating them."
            )
        };
        vec![self.general.finding(
            ctx,
            ID,
            cost,
            format!(
                "Metadata storm: {} metadata calls take {} of the I/O time",
                s.ops,
                units::pct(share)
            ),
            Evidence {
                summary: format!(
                    "{} metadata calls ({:.0} per second while they lasted) took {} of the \
                     application's {} of I/O time (summed over ranks), on {} file(s) ({}).",
                    s.ops,
                    rate,
                    units::duration_prose(s.ns),
                    units::duration_prose(s.io_ns),
                    by_file.len(),
                    s.source
                ),
                numbers: n.0,
                worst,
            },
            remedy,
        )]
    }
}

#[cfg(test)]
mod tests {
    use super::super::counters::testing::counters;
    use super::*;
    use crate::testutil::{coll, ev, findings_from_counters, flt, none, num, one, Fx};

    /// 1 rank: `n` rounds of stat + open + pwrite 1 KiB + close on one file; stat and open
    /// 20 us each, close 10 us, pwrite `write` ns.
    fn job(n: u64, write: u64) -> Fx {
        let mut fx = Fx::new(1);
        let f = fx.file("/scratch/log.txt");
        for i in 0..n {
            let t = 10_000 + i * 1_000_000;
            fx.push(0, ev("stat", t, 20_000).object(f));
            fx.push(0, ev("open", t + 30_000, 20_000).object(f).result(3));
            fx.push(0, ev("pwrite", t + 60_000, write).object(f).size(1024));
            fx.push(0, ev("close", t + 60_000 + write + 1_000, 10_000).object(f));
        }
        fx
    }

    #[test]
    fn reopening_for_every_write_fires() {
        let dir = tempfile::tempdir().expect("tmp");
        let t = job(400, 10_000).build(dir.path());
        let f = one(&t, ID);
        assert_eq!(num(&f, "metadata_ops"), 1200);
        assert_eq!(num(&f, "metadata_time_ns"), 400 * 50_000);
        assert_eq!(flt(&f, "io_time_share"), 0.8333, "50 of 60 us per round");
        assert_eq!(num(&f, "rank_file_pairs"), 1);
        assert_eq!(f.cost_ns, 20_000_000, "the metadata time spent");
        assert!(
            f.remedy.contains("keep files open") || f.remedy.contains("cache"),
            "{}",
            f.remedy
        );
    }

    /// Issue 13, mdtest-like: per rank 1000 files created, stated, closed and removed in a
    /// few directories that are then removed slowly. The evidence and the remedy follow the
    /// time (rmdir first), not the call count.
    #[test]
    fn evidence_ordered_by_time_rmdir_first() {
        let mut fx = Fx::new(2);
        let dir_ids: Vec<u32> = (0..10)
            .map(|i| fx.file(&format!("/scratch/md/d{i}")))
            .collect();
        for r in 0..2 {
            let mut t = 0;
            for &d in &dir_ids {
                fx.push(r, ev("mkdir", t, 1_000_000).object(d));
                t += 1_000_000;
            }
            for i in 0..1000 {
                let f = fx.file(&format!("/scratch/md/d{}/f{r}.{i}", i % 10));
                fx.push(r, ev("open", t, 50_000).object(f).result(3));
                fx.push(r, ev("close", t + 60_000, 3_000).object(f));
                fx.push(r, ev("stat", t + 70_000, 20_000).object(f));
                fx.push(r, ev("unlink", t + 100_000, 100_000).object(f));
                t += 300_000;
            }
            for &d in &dir_ids {
                fx.push(r, ev("rmdir", t, 500_000_000).object(d));
                t += 500_000_000;
            }
        }
        let dir = tempfile::tempdir().expect("tmp");
        let f = one(&fx.build(dir.path()), ID);
        assert!(
            f.evidence.worst[0].starts_with("call rmdir: 20 calls"),
            "{:?}",
            f.evidence.worst
        );
        assert!(
            f.evidence.worst[1].starts_with("call unlink"),
            "{:?}",
            f.evidence.worst
        );
        assert!(
            f.remedy.starts_with("Most of the metadata time"),
            "{}",
            f.remedy
        );
        assert!(f.remedy.contains("is rmdir"), "{}", f.remedy);
        assert!(f.remedy.contains("remove a whole tree"), "{}", f.remedy);
        let per_rank =
            10 * 1_000_000 + 1000 * (50_000 + 3_000 + 20_000 + 100_000) + 10 * 500_000_000;
        assert_eq!(f.cost_ns, per_rank, "every metadata call's time, per rank");
    }

    /// Issue 13: 1000 create + write + close per rank, the opens taking nearly all the I/O
    /// time: the cost is that time, not the calls beyond one open and close per file.
    #[test]
    fn creating_many_files_costs_the_open_time() {
        let mut fx = Fx::new(2);
        for r in 0..2 {
            for i in 0..1000u64 {
                let f = fx.file(&format!("/scratch/out/f{r}.{i}"));
                let t = i * 7_000_000;
                fx.push(r, ev("open", t, 6_300_000).object(f).result(3));
                fx.push(r, ev("write", t + 6_400_000, 100_000).object(f).size(4096));
                fx.push(r, ev("close", t + 6_600_000, 5_000).object(f));
            }
        }
        let dir = tempfile::tempdir().expect("tmp");
        let f = one(&fx.build(dir.path()), ID);
        assert_eq!(f.cost_ns, 1000 * 6_305_000);
        assert!(f.remedy.contains("is open"), "{}", f.remedy);
        assert!(f.remedy.contains("fewer, larger files"), "{}", f.remedy);
    }

    /// Issue 13: the agreement inside MPI_File_open (ranks waiting for each other) is not
    /// metadata time.
    #[test]
    fn waiting_inside_mpi_file_open_is_not_metadata() {
        // Opens of `own` ns plus `wait` ns of MPI_Allreduce inside them.
        let build = |own: u64, wait: u64, dir: &std::path::Path| {
            let mut fx = Fx::new(2);
            let f = fx.file("/scratch/step.dat");
            for r in 0..2 {
                for i in 0..600u64 {
                    let t = i * 1_000_000;
                    fx.push(r, coll(ev("MPI_File_open", t, own + wait).object(f), i + 1));
                    fx.push(r, ev("MPI_Allreduce", t + 5_000, wait).size(4).depth(1));
                    fx.push(
                        r,
                        ev("MPI_File_write", t + 200_000, 50_000).object(f).size(64),
                    );
                    fx.push(
                        r,
                        coll(
                            ev("MPI_File_close", t + 300_000, 10_000).object(f),
                            i + 1001,
                        ),
                    );
                }
            }
            fx.build(dir)
        };
        let dir = tempfile::tempdir().expect("tmp");
        none(&build(10_000, 90_000, &dir.path().join("waiting")), ID);
        // The same time spent in the opens themselves is a storm.
        let f = one(&build(100_000, 0, &dir.path().join("slow-opens")), ID);
        assert_eq!(num(&f, "metadata_time_ns"), 2 * 600 * 110_000);
    }

    #[test]
    fn near_miss_few_calls_or_data_dominated() {
        let dir = tempfile::tempdir().expect("tmp");
        none(&job(300, 10_000).build(&dir.path().join("few")), ID);
        none(&job(400, 200_000).build(&dir.path().join("data")), ID);
    }

    /// A POSIX record of rank 0 (1 rank, 1 s job): `opens` opens and `stats` stats in 0.5 s
    /// of metadata time, 0.1 s of writes.
    fn from_counters(opens: f64, stats: f64) -> Vec<Finding> {
        let dir = tempfile::tempdir().expect("tmp");
        let mut fx = Fx::new(1);
        let f = fx.file("/scratch/log.txt");
        fx.push(0, ev("MPI_Barrier", 0, 1_000_000_000));
        let t = fx.build(dir.path());
        let c = counters(&[
            ("POSIX", 0, f, "POSIX_OPENS", opens),
            ("POSIX", 0, f, "POSIX_STATS", stats),
            ("POSIX", 0, f, "POSIX_F_META_TIME", 0.5),
            ("POSIX", 0, f, "POSIX_F_WRITE_TIME", 0.1),
        ]);
        findings_from_counters(&t, &c, ID)
    }

    #[test]
    fn counters_many_opens_fire_and_few_do_not() {
        let f = from_counters(3000.0, 1000.0);
        assert_eq!(f.len(), 1);
        assert_eq!(num(&f[0], "metadata_ops"), 4000);
        assert_eq!(num(&f[0], "metadata_time_ns"), 500_000_000);
        assert_eq!(flt(&f[0], "io_time_share"), 0.8333);
        // Opens took 3/4 of the metadata time: they lead the evidence.
        assert!(f[0].evidence.worst[0].starts_with("call open: 3000 calls"));
        assert_eq!(f[0].cost_ns, 500_000_000);
        assert!(from_counters(100.0, 100.0).is_empty());
    }
}
