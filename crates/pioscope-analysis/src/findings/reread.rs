//! `reread`: the same bytes read more than once, by the same rank (a cache would do) or by
//! several ranks (one read and a broadcast would do). Counted on POSIX and STDIO reads of the
//! application and on POSIX reads beneath MPI-IO reads; reads beneath MPI-IO writes are
//! ROMIO's read-modify-write (`data-sieving`), not rereads.
//!
//! The ranges read are tracked by `overlap` (bounded by `max_ranges` per rank and file).

use pioscope_trace::store::Event;
use pioscope_trace::units;
use pioscope_trace::{Layer, OpKind};

use super::config::Config;
use super::counters::Counters;
use super::dispatch::{Interest, POSIX, READ, STDIO};
use super::overlap::{Overlap, Tally};
use super::util::{self, Facts, General, Numbers};
use super::{Evidence, Finding, Rule};
use crate::pass::Context;

/// Rule id.
pub(crate) const ID: &str = "reread";

/// See the module doc.
pub(crate) struct Reread {
    general: General,
    min_bytes: u64,
    min_share: f64,
    read: Overlap,
}

impl Reread {
    pub(crate) fn new(config: &Config) -> Self {
        let s = config.section(ID);
        Reread {
            general: General::new(config),
            min_bytes: s.u64("min_bytes"),
            min_share: s.f64("min_share"),
            read: Overlap::new(s.u64("max_ranges") as usize),
        }
    }
}

impl Rule for Reread {
    fn visit(&mut self, e: &Event<'_>, fx: &Facts, _ctx: &Context<'_>) {
        if !matches!(e.layer, Layer::Posix | Layer::Stdio) || fx.kind != OpKind::Read {
            return;
        }
        let counted = fx.top_level || fx.parent.is_some_and(|p| p.kind == OpKind::Read);
        let (true, Some(file), Some(off)) = (counted, e.file_id, e.offset) else {
            return;
        };
        self.read
            .add(e.rank, file, off, util::moved(e), e.duration_ns);
    }

    fn interest(&self) -> Interest {
        Interest::any_of(&[POSIX | READ, STDIO | READ])
    }

    fn conclude(&self, ctx: &Context<'_>) -> Vec<Finding> {
        self.judge(&self.read.tally(), "traced reads", ctx)
    }

    fn judge_counters(&self, c: &Counters, ctx: &Context<'_>) -> Vec<Finding> {
        let t = Tally::from_counters(
            c.own_posix(),
            "POSIX_BYTES_READ",
            "POSIX_MAX_BYTE_READ",
            "POSIX_F_READ_TIME",
        );
        self.judge(
            &t,
            "lower bound from Darshan counters POSIX_BYTES_READ, POSIX_MAX_BYTE_READ",
            ctx,
        )
    }
}

impl Reread {
    /// The finding, if enough of the bytes read were read again.
    fn judge(&self, t: &Tally, source: &str, ctx: &Context<'_>) -> Vec<Finding> {
        let Some((read, again, share)) = t.again(self.min_bytes, self.min_share) else {
            return Vec::new();
        };
        let (_, within, across) = t.totals();
        let cost = util::per_rank(t.again_ns(), ctx);
        let mut n = Numbers::default();
        n.int("read_bytes", read as i64)
            .int("reread_bytes", again as i64)
            .float("reread_share", share)
            .int("reread_same_rank_bytes", within as i64)
            .int("reread_other_rank_bytes", across as i64)
            .int("files", t.files_again() as i64)
            .int("untracked_rank_files", t.untracked_rank_files as i64)
            .text("source", source);
        let worst = t.worst(ctx, self.general.worst, "read");
        let remedy = if across > within {
            "Several ranks read the same data: read it once (on one rank, or one rank per node) \
             and share it with MPI_Bcast, or read it with a collective MPI_File_read_all so \
             ROMIO reads each byte once and distributes it."
        } else {
            "Ranks read the same data again: keep what was read in memory (or map the file) \
             instead of reading it for every step; if memory is short, read the union of what \
             the steps need once, in large requests."
        };
        vec![self.general.finding(
            ctx,
            ID,
            cost,
            format!(
                "Rereading the same data: {} of the bytes read are read again",
                units::pct(share)
            ),
            Evidence {
                summary: format!(
                    "Of {} read, {} were read before: {} again by the same rank, {} by another \
                     rank ({source}).",
                    units::bytes(read),
                    units::bytes(again),
                    units::bytes(within),
                    units::bytes(across)
                ),
                numbers: n.0,
                worst,
            },
            remedy.into(),
        )]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{ev, flt, none, num, one, Fx};

    /// `ranks` ranks each reading the same 8 MiB input in 1 MiB preads (1 ms each), `passes`
    /// times.
    fn job(ranks: usize, passes: u64) -> Fx {
        let mut fx = Fx::new(ranks);
        let f = fx.file("/scratch/input.nc");
        for r in 0..ranks {
            let mut t = 10_000;
            for _ in 0..passes {
                for i in 0..8u64 {
                    fx.push(
                        r,
                        ev("pread", t, 1_000_000)
                            .object(f)
                            .size(1 << 20)
                            .offset(i << 20),
                    );
                    t += 1_100_000;
                }
            }
        }
        fx
    }

    #[test]
    fn every_rank_reading_the_same_input_fires() {
        let dir = tempfile::tempdir().expect("tmp");
        let t = job(4, 1).build(dir.path());
        let f = one(&t, ID);
        assert_eq!(num(&f, "read_bytes"), 32 << 20);
        assert_eq!(num(&f, "reread_bytes"), 24 << 20);
        assert_eq!(num(&f, "reread_other_rank_bytes"), 24 << 20);
        assert_eq!(num(&f, "reread_same_rank_bytes"), 0);
        assert_eq!(flt(&f, "reread_share"), 0.75);
        // 32 ms of reads, 3/4 of them again, over 4 ranks.
        assert_eq!(f.cost_ns, 6_000_000);
        assert!(f.remedy.contains("MPI_Bcast"));
    }

    #[test]
    fn one_rank_reading_twice_fires_with_the_cache_remedy() {
        let dir = tempfile::tempdir().expect("tmp");
        let f = one(&job(1, 3).build(dir.path()), ID);
        assert_eq!(num(&f, "reread_same_rank_bytes"), 16 << 20);
        assert!(f.remedy.contains("memory"));
    }

    #[test]
    fn near_miss_each_byte_once_or_too_little() {
        let dir = tempfile::tempdir().expect("tmp");
        none(&job(1, 1).build(&dir.path().join("once")), ID);
        // 2 ranks x 8 MiB: 8 MiB read again, below min_bytes (16 MiB).
        none(&job(2, 1).build(&dir.path().join("two")), ID);
    }
}
