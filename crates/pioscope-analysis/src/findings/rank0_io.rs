//! `rank0-io`: one rank (usually rank 0) does the I/O for everyone: the others gather their
//! data to it and it writes alone, serialising the job's I/O through one process, one link and
//! one client. Counted at the application's own data calls, so the aggregators of collective
//! MPI-IO (which move data beneath the collective calls) do not count as such a rank.

use pioscope_trace::store::Event;
use pioscope_trace::units;

use super::config::Config;
use super::counters::Counters;
use super::dispatch::{Interest, DATA, TOP};
use super::util::{self, Facts, General, Numbers};
use super::{Evidence, Finding, Rule};
use crate::lookup::Keyed;
use crate::pass::Context;

/// Rule id.
pub(crate) const ID: &str = "rank0-io";

/// See the module doc.
pub(crate) struct Rank0Io {
    general: General,
    min_ranks: u64,
    min_share: f64,
    parallelism: u64,
    /// Per (rank, file or -1): data bytes, data time, data calls.
    by: Keyed<(i32, i32), (u64, i64, u64)>,
}

impl Rank0Io {
    pub(crate) fn new(config: &Config) -> Self {
        let s = config.section(ID);
        Rank0Io {
            general: General::new(config),
            min_ranks: s.u64("min_ranks").max(2),
            min_share: s.f64("min_share"),
            parallelism: s.u64("parallelism").max(1),
            by: Keyed::default(),
        }
    }
}

/// Per (rank, file or -1): data bytes, data time, data calls.
type ByRankFile = Keyed<(i32, i32), (u64, i64, u64)>;

impl Rule for Rank0Io {
    fn visit(&mut self, e: &Event<'_>, fx: &Facts, _ctx: &Context<'_>) {
        if e.rank < 0 || !fx.top_level || !fx.data() {
            return;
        }
        let a = self.by.at((e.rank, e.file_id.unwrap_or(-1)));
        a.0 += util::moved(e);
        a.1 += e.duration_ns;
        a.2 += 1;
    }

    fn interest(&self) -> Interest {
        Interest::any_of(&[TOP | DATA])
    }

    fn conclude(&self, ctx: &Context<'_>) -> Vec<Finding> {
        self.judge(&self.by, "traced calls", ctx)
    }

    fn judge_counters(&self, c: &Counters, ctx: &Context<'_>) -> Vec<Finding> {
        let mut by = ByRankFile::default();
        for (k, l) in c.per_rank_file(util::rank_count(ctx) as i32) {
            let a = by.at(k);
            a.0 += l.bytes.round() as u64;
            a.1 += l.ns.round() as i64;
            a.2 += l.ops.round() as u64;
        }
        self.judge(
            &by,
            "Darshan counters: per-rank records, the slowest and fastest rank of shared ones",
            ctx,
        )
    }
}

impl Rank0Io {
    /// The finding, if one rank moves most of the bytes.
    fn judge(&self, by: &ByRankFile, source: &str, ctx: &Context<'_>) -> Vec<Finding> {
        let add = |s: &mut (u64, i64, u64), a: &(u64, i64, u64)| {
            s.0 += a.0;
            s.1 += a.1;
            s.2 += a.2;
        };
        let by_rank = by.group(|k| k.0, add);
        let mut by_file = by.group(|k| k.1, add);
        by_file.remove(&-1);
        let ranks = ctx.trace.meta.job.ranks as u64;
        let total: u64 = by_rank.values().map(|a| a.0).sum();
        let Some((rank, (bytes, ns, calls))) = by_rank
            .iter()
            .max_by_key(|(r, a)| (a.0, -**r))
            .map(|(r, a)| (*r, *a))
        else {
            return Vec::new();
        };
        let share = util::ratio(bytes as f64, total as f64);
        if ranks < self.min_ranks || total == 0 || share < self.min_share {
            return Vec::new();
        }
        // Spread over the ranks, the same I/O would run up to `parallelism` times faster.
        let speedup = self.parallelism.min(ranks).max(1) as f64;
        let cost = (ns as f64 * (1.0 - 1.0 / speedup)).round() as i64;
        let mut n = Numbers::default();
        n.int("rank", rank as i64)
            .int("ranks", ranks as i64)
            .int("rank_bytes", bytes as i64)
            .int("total_bytes", total as i64)
            .float("share", share)
            .int("rank_time_ns", ns)
            .int("rank_calls", calls as i64)
            .int(
                "ranks_with_io",
                by_rank.values().filter(|a| a.0 > 0).count() as i64,
            )
            .text("source", source);
        let k = self.general.worst;
        let mut worst = vec![format!(
            "{}: {} in {calls} calls, {}",
            util::rank_name(ctx, rank),
            units::bytes(bytes),
            units::duration_prose(ns)
        )];
        for (f, a) in util::top(by_file.iter().collect(), k, |(_, a)| a.0) {
            worst.push(format!(
                "file {}: {}",
                util::file_name(ctx, *f),
                units::bytes(a.0)
            ));
        }
        vec![self.general.finding(
            ctx,
            ID,
            cost,
            format!(
                "Rank {rank} does the I/O for everyone: {} of the bytes of {ranks} ranks",
                units::pct(share)
            ),
            Evidence {
                summary: format!(
                    "Rank {rank} moves {} of the job's {} ({}) in {}; the other {} ranks \
                     together move {}.",
                    units::bytes(bytes),
                    units::bytes(total),
                    units::pct(share),
                    units::duration_prose(ns),
                    ranks - 1,
                    units::bytes(total - bytes)
                ),
                numbers: n.0,
                worst,
            },
            format!(
                "Let every rank write its own part instead of gathering to rank {rank}: open \
                 the file on all ranks (MPI_File_open on MPI_COMM_WORLD) and write each part \
                 at its offset with MPI_File_write_at_all (rank x block size), or use \
                 parallel HDF5/netCDF; collective buffering then picks a few aggregators \
                 (cb_nodes) instead of one."
            ),
        )]
    }
}

#[cfg(test)]
mod tests {
    use super::super::counters::testing::counters;
    use super::*;
    use crate::testutil::{ev, findings_from_counters, flt, none, num, one, Fx};

    /// 4 ranks; rank 0 writes 16 x 1 MiB (1 ms each), the others write `other` bytes once.
    fn job(other: u64) -> Fx {
        let mut fx = Fx::new(4);
        let f = fx.file("/scratch/all.dat");
        for i in 0..16u64 {
            fx.push(
                0,
                ev("write", 10_000 + i * 2_000_000, 1_000_000)
                    .object(f)
                    .size(1 << 20)
                    .offset(i << 20),
            );
        }
        for r in 1..4 {
            fx.push(
                r,
                ev("pwrite", 10_000, 100_000)
                    .object(f)
                    .size(other)
                    .offset(64 << 20),
            );
        }
        fx
    }

    #[test]
    fn rank_0_writing_everything_fires() {
        let dir = tempfile::tempdir().expect("tmp");
        let t = job(4096).build(dir.path());
        let f = one(&t, ID);
        assert_eq!(num(&f, "rank"), 0);
        assert_eq!(num(&f, "rank_bytes"), 16 << 20);
        assert_eq!(num(&f, "total_bytes"), (16 << 20) + 3 * 4096);
        assert_eq!(flt(&f, "share"), 0.9993);
        // 16 ms on rank 0, 4 ranks: 3/4 of it.
        assert_eq!(f.cost_ns, 12_000_000);
    }

    #[test]
    fn near_miss_others_write_a_share() {
        let dir = tempfile::tempdir().expect("tmp");
        none(&job(1 << 20).build(dir.path()), ID);
    }

    #[test]
    fn counters_rank_0_writing_alone_fires() {
        let dir = tempfile::tempdir().expect("tmp");
        let mut fx = Fx::new(4);
        let f = fx.file("/scratch/all.dat");
        fx.push(0, ev("MPI_Barrier", 0, 1_000_000_000));
        let t = fx.build(dir.path());
        let c = counters(&[
            ("POSIX", 0, f, "POSIX_WRITES", 16.0),
            ("POSIX", 0, f, "POSIX_BYTES_WRITTEN", (16u64 << 20) as f64),
            ("POSIX", 0, f, "POSIX_F_WRITE_TIME", 0.016),
        ]);
        let found = findings_from_counters(&t, &c, ID);
        let x = found.iter().find(|x| x.id == ID).expect("fires");
        assert_eq!(num(x, "rank_bytes"), 16 << 20);
        assert_eq!(x.cost_ns, 12_000_000);
    }
}
