//! `metadata-storm`: many metadata calls (open, close, stat, create, unlink, mkdir, ...) taking
//! a large share of the application's I/O time. On a parallel file system each is a round
//! trip to the metadata server, and thousands of ranks issuing them at once queue there.

use pioscope_trace::store::Event;
use pioscope_trace::units;

use super::config::Config;
use super::util::{self, General, Keyed, Numbers, Shared};
use super::{Evidence, Finding, Rule};
use crate::class;
use crate::pass::{Context, Visitor};

/// Rule id.
pub(crate) const ID: &str = "metadata-storm";

/// See the module doc.
pub(crate) struct MetadataStorm {
    general: General,
    min_ops: u64,
    min_share: f64,
    shared: Shared,
    io_ns: i64,
    ops: u64,
    ns: i64,
    /// Metadata calls and time per (rank, file or -1, function id).
    by: Keyed<(i32, i32, u16), (u64, i64)>,
    first: Option<i64>,
    last: i64,
}

impl MetadataStorm {
    pub(crate) fn new(config: &Config, shared: &Shared) -> Self {
        let s = config.section(ID);
        MetadataStorm {
            general: General::new(config),
            min_ops: s.u64("min_ops"),
            min_share: s.f64("min_share"),
            shared: shared.clone(),
            io_ns: 0,
            ops: 0,
            ns: 0,
            by: Keyed::default(),
            first: None,
            last: 0,
        }
    }
}

impl Visitor for MetadataStorm {
    fn visit(&mut self, e: &Event<'_>, _ctx: &Context<'_>) {
        let fx = util::facts(&self.shared, e);
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
}

impl Rule for MetadataStorm {
    fn conclude(&self, ctx: &Context<'_>) -> Vec<Finding> {
        let share = util::ratio(self.ns as f64, self.io_ns as f64);
        if self.ops < self.min_ops || self.ops == 0 || share < self.min_share {
            return Vec::new();
        }
        let add = |s: &mut (u64, i64), a: &(u64, i64)| {
            s.0 += a.0;
            s.1 += a.1;
        };
        let by_func = self.by.group(|k| util::func_name(k.2), add);
        let mut by_file = self.by.group(|k| k.1, add);
        by_file.remove(&-1);
        let by_rank = self.by.group(|k| k.0, add);
        let pairs = self
            .by
            .group(|k| (k.0, k.1), |_: &mut (), _| ())
            .into_keys()
            .filter(|k| k.1 >= 0)
            .count();
        // One open and one close per rank and file are needed; the rest could go.
        let needed = (2 * pairs as u64).min(self.ops);
        let avoidable = 1.0 - needed as f64 / self.ops as f64;
        let cost = util::per_rank(self.ns as f64 * avoidable, ctx);
        let window = (self.last - self.first.unwrap_or(0)).max(1);
        let rate = self.ops as f64 / (window as f64 / 1e9);
        let mut n = Numbers::default();
        n.int("metadata_ops", self.ops as i64)
            .int("metadata_time_ns", self.ns)
            .float("io_time_share", share)
            .float("ops_per_second", rate)
            .int("files", by_file.len() as i64)
            .int("rank_file_pairs", pairs as i64)
            .float(
                "ops_per_rank_file",
                util::ratio(self.ops as f64, pairs as f64),
            );
        let k = self.general.worst;
        let mut worst = Vec::new();
        let funcs = util::top(by_func.iter().collect(), k, |(_, (c, _))| *c);
        for (f, (c, ns)) in &funcs {
            worst.push(format!(
                "call {f}: {c} calls, {}",
                units::duration_prose(*ns)
            ));
        }
        for (f, (c, ns)) in util::top(by_file.iter().collect(), k, |(_, (c, _))| *c) {
            worst.push(format!(
                "file {}: {c} metadata calls, {}",
                util::file_name(ctx, *f),
                units::duration_prose(*ns)
            ));
        }
        for (r, (c, ns)) in util::top(by_rank.iter().collect(), k, |(_, (_, ns))| *ns) {
            worst.push(format!(
                "{}: {c} metadata calls, {}",
                util::rank_name(ctx, *r),
                units::duration_prose(*ns)
            ));
        }
        let top = funcs.first().map(|(f, _)| **f).unwrap_or("open");
        let remedy = if class::is_stat(top) {
            format!(
                "Most calls are {top}: cache file attributes instead of asking again (one stat \
                 per file, or none when open's result says enough), and do not check for \
                 existence before every open."
            )
        } else if class::is_open(top) || class::is_close(top) {
            format!(
                "Most calls are {top}: keep files open across steps instead of reopening them \
                 for each write ({:.1} metadata calls per rank and file now); if every rank \
                 creates its own files, write one shared file with MPI-IO instead (see \
                 file-per-process), or let one rank per node do the opens.",
                util::ratio(self.ops as f64, pairs as f64)
            )
        } else {
            format!(
                "Most calls are {top}: batch the namespace changes (create the directories \
                 once, on one rank, then barrier) instead of every rank repeating them."
            )
        };
        vec![self.general.finding(
            ctx,
            ID,
            cost,
            format!(
                "Metadata storm: {} metadata calls take {} of the I/O time",
                self.ops,
                units::pct(share)
            ),
            Evidence {
                summary: format!(
                    "{} metadata calls ({:.0} per second while they lasted) took {} of the \
                     application's {} of I/O time (summed over ranks), on {} file(s).",
                    self.ops,
                    rate,
                    units::duration_prose(self.ns),
                    units::duration_prose(self.io_ns),
                    by_file.len()
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
    use super::*;
    use crate::testutil::{ev, flt, none, num, one, Fx};

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
        // All but one open and one close could go.
        assert_eq!(
            f.cost_ns,
            (20_000_000.0_f64 * (1.0 - 2.0 / 1200.0)).round() as i64
        );
        assert!(
            f.remedy.contains("keep files open") || f.remedy.contains("cache"),
            "{}",
            f.remedy
        );
    }

    #[test]
    fn near_miss_few_calls_or_data_dominated() {
        let dir = tempfile::tempdir().expect("tmp");
        none(&job(300, 10_000).build(&dir.path().join("few")), ID);
        none(&job(400, 200_000).build(&dir.path().join("data")), ID);
    }
}
