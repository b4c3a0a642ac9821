//! `redundant-writes`: the same bytes of a file written more than once, by the same rank (a
//! block rewritten every step) or by several ranks (all writing the same header or halo):
//! only the last write survives, the others cost storage time for nothing (Drishti's P10).
//! Counted on the application's top-level POSIX and STDIO writes; the writes ROMIO makes
//! beneath MPI-IO calls rewrite holes by design (read-modify-write: `data-sieving`).
//!
//! On a Darshan log without DXT no counter says which bytes were written: per file, the
//! bytes written beyond its highest byte written plus one (`POSIX_BYTES_WRITTEN` against
//! `POSIX_MAX_BYTE_WRITTEN`, over the file's records) must have been written again. That is a
//! lower bound (a rewrite inside a file with holes does not show).

use pioscope_trace::store::Event;
use pioscope_trace::units;
use pioscope_trace::{Layer, OpKind};

use super::config::Config;
use super::counters::Counters;
use super::dispatch::{Interest, POSIX, STDIO, TOP, WRITE};
use super::overlap::{Overlap, Tally};
use super::util::{self, Facts, General, Numbers};
use super::{Evidence, Finding, Rule};
use crate::pass::Context;

/// Rule id.
pub(crate) const ID: &str = "redundant-writes";

/// See the module doc.
pub(crate) struct RedundantWrites {
    general: General,
    min_bytes: u64,
    min_share: f64,
    written: Overlap,
}

impl RedundantWrites {
    pub(crate) fn new(config: &Config) -> Self {
        let s = config.section(ID);
        RedundantWrites {
            general: General::new(config),
            min_bytes: s.u64("min_bytes"),
            min_share: s.f64("min_share"),
            written: Overlap::new(s.u64("max_ranges") as usize),
        }
    }

    /// The finding, if enough of the bytes written were written again.
    fn judge(&self, t: &Tally, source: &str, ctx: &Context<'_>) -> Vec<Finding> {
        let Some((written, again, share)) = t.again(self.min_bytes, self.min_share) else {
            return Vec::new();
        };
        let (_, within, across) = t.totals();
        let cost = util::per_rank(t.again_ns(), ctx);
        let mut n = Numbers::default();
        n.int("written_bytes", written as i64)
            .int("rewritten_bytes", again as i64)
            .float("rewritten_share", share)
            .int("rewritten_same_rank_bytes", within as i64)
            .int("rewritten_other_rank_bytes", across as i64)
            .int("files", t.files_again() as i64)
            .int("untracked_rank_files", t.untracked_rank_files as i64)
            .text("source", source);
        let worst = t.worst(ctx, self.general.worst, "written");
        let remedy = if across > within {
            "Several ranks write the same bytes and only the last write survives: let one rank \
             write each shared piece (the header, the overlapping halo) and the others skip it, \
             or write through a collective MPI_File_write_all with views that do not overlap."
        } else {
            "Ranks write the same bytes again: write each block once, when it is final (keep \
             it in memory until then), or give each step its own offset or file if every \
             version must be kept."
        };
        vec![self.general.finding(
            ctx,
            ID,
            cost,
            format!(
                "Redundant writes: {} of the bytes written are written again",
                units::pct(share)
            ),
            Evidence {
                summary: format!(
                    "Of {} written, {} overwrote bytes written before: {} by the same rank, \
                     {} by another rank ({source}).",
                    units::bytes(written),
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

impl Rule for RedundantWrites {
    fn visit(&mut self, e: &Event<'_>, fx: &Facts, _ctx: &Context<'_>) {
        if !fx.top_level || !matches!(e.layer, Layer::Posix | Layer::Stdio) {
            return;
        }
        let (OpKind::Write, Some(file), Some(off)) = (fx.kind, e.file_id, e.offset) else {
            return;
        };
        self.written
            .add(e.rank, file, off, util::moved(e), e.duration_ns);
    }

    fn interest(&self) -> Interest {
        Interest::any_of(&[TOP | POSIX | WRITE, TOP | STDIO | WRITE])
    }

    fn conclude(&self, ctx: &Context<'_>) -> Vec<Finding> {
        self.judge(&self.written.tally(), "traced writes", ctx)
    }

    fn judge_counters(&self, c: &Counters, ctx: &Context<'_>) -> Vec<Finding> {
        let t = Tally::from_counters(
            c.own_posix(),
            "POSIX_BYTES_WRITTEN",
            "POSIX_MAX_BYTE_WRITTEN",
            "POSIX_F_WRITE_TIME",
        );
        self.judge(
            &t,
            "lower bound from Darshan counters POSIX_BYTES_WRITTEN, POSIX_MAX_BYTE_WRITTEN",
            ctx,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::super::counters::testing::counters;
    use super::*;
    use crate::testutil::{ev, findings_from_counters, flt, none, num, one, Fx};

    /// `ranks` ranks each writing 1 MiB pieces (1 ms each) of an 8 MiB file: `same` writes the
    /// same 8 MiB region on every rank (a shared header), else each rank its own region;
    /// `passes` times.
    fn job(ranks: usize, passes: u64, same: bool) -> Fx {
        let mut fx = Fx::new(ranks);
        let f = fx.file("/scratch/out.dat");
        for r in 0..ranks {
            let base = if same { 0 } else { (r as u64) << 23 };
            let mut t = 10_000;
            for _ in 0..passes {
                for i in 0..8u64 {
                    fx.push(
                        r,
                        ev("pwrite", t, 1_000_000)
                            .object(f)
                            .size(1 << 20)
                            .offset(base + (i << 20)),
                    );
                    t += 1_100_000;
                }
            }
        }
        fx
    }

    #[test]
    fn every_rank_writing_the_same_region_fires() {
        let dir = tempfile::tempdir().expect("tmp");
        let f = one(&job(4, 1, true).build(dir.path()), ID);
        assert_eq!(num(&f, "written_bytes"), 32 << 20);
        assert_eq!(num(&f, "rewritten_other_rank_bytes"), 24 << 20);
        assert_eq!(num(&f, "rewritten_same_rank_bytes"), 0);
        assert_eq!(flt(&f, "rewritten_share"), 0.75);
        // 32 ms of writes, 3/4 of them again, over 4 ranks.
        assert_eq!(f.cost_ns, 6_000_000);
        assert!(f.remedy.contains("one rank"));
    }

    #[test]
    fn one_rank_rewriting_its_block_fires_with_the_write_once_remedy() {
        let dir = tempfile::tempdir().expect("tmp");
        let f = one(&job(1, 3, false).build(dir.path()), ID);
        assert_eq!(num(&f, "rewritten_same_rank_bytes"), 16 << 20);
        assert!(f.remedy.contains("once"));
    }

    #[test]
    fn near_miss_disjoint_regions_or_too_little() {
        let dir = tempfile::tempdir().expect("tmp");
        none(&job(4, 1, false).build(&dir.path().join("disjoint")), ID);
        // 2 ranks x 8 MiB on the same region: 8 MiB again, below min_bytes (16 MiB).
        none(&job(2, 1, true).build(&dir.path().join("two")), ID);
    }

    #[test]
    fn counters_give_the_lower_bound() {
        let dir = tempfile::tempdir().expect("tmp");
        let mut fx = Fx::new(4);
        let f = fx.file("/scratch/out.dat");
        fx.push(0, ev("MPI_Barrier", 0, 100_000_000));
        let t = fx.build(dir.path());
        // Shared record: 64 MiB written, highest byte 16 MiB - 1: 48 MiB again, in 0.4 s.
        let c = counters(&[
            ("POSIX", -1, f, "POSIX_BYTES_WRITTEN", (64u64 << 20) as f64),
            (
                "POSIX",
                -1,
                f,
                "POSIX_MAX_BYTE_WRITTEN",
                ((16u64 << 20) - 1) as f64,
            ),
            ("POSIX", -1, f, "POSIX_F_WRITE_TIME", 0.4),
        ]);
        let found = findings_from_counters(&t, &c, ID);
        let x = found.iter().find(|x| x.id == ID).expect("fires");
        assert_eq!(num(x, "rewritten_other_rank_bytes"), 48 << 20);
        // 0.4 s x 3/4 over 4 ranks.
        assert_eq!(x.cost_ns, 75_000_000);
        // The highest byte covers what was written: nothing.
        let c = counters(&[
            ("POSIX", -1, f, "POSIX_BYTES_WRITTEN", (64u64 << 20) as f64),
            (
                "POSIX",
                -1,
                f,
                "POSIX_MAX_BYTE_WRITTEN",
                ((64u64 << 20) - 1) as f64,
            ),
        ]);
        assert!(findings_from_counters(&t, &c, ID).is_empty());
    }
}
