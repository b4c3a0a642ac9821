//! `close-sync`: output dominated by closing or syncing files rather than writing them. The
//! OLAM study saw an output phase spent in close, because the small writes sat in the page
//! cache and were flushed at close. Counted on written files, at the application's own calls
//! (`MPI_File_close` once, not again for the `close` ROMIO makes beneath it).
//!
//! Two kinds of time are not counted as the problem: ranks waiting for each other in the MPI
//! communication inside a collective close or sync (the barrier of `MPI_File_close`: the
//! slowest rank's cost, not the file system's; `Facts::wait`), and the sync the program asks
//! for once per open file (the first sync after an open: the durability of a checkpoint, IOR's
//! `-e`). Syncs beyond that one in the same open, after every step, are the avoidable ones.

use std::collections::{BTreeMap, BTreeSet};

use pioscope_trace::store::Event;
use pioscope_trace::units;
use pioscope_trace::OpKind;

use super::config::Config;
use super::dispatch::{Interest, IN_CALL, TOP, WAIT};
use super::util::{self, Facts, General, Numbers};
use super::{Evidence, Finding, Rule};
use crate::class;
use crate::lookup::Keyed;
use crate::pass::Context;

/// Rule id.
pub(crate) const ID: &str = "close-sync";

#[derive(Clone, Copy, Debug, Default)]
struct Acc {
    write_ns: i64,
    close_ns: i64,
    /// Avoidable syncs: beyond the first of an open.
    sync_ns: i64,
    /// The first sync of each open: asked for.
    requested_sync_ns: i64,
    /// Waiting for other ranks inside closes and syncs.
    wait_ns: i64,
    closes: u64,
    syncs: u64,
    requested_syncs: u64,
}

impl Acc {
    fn add(&mut self, o: &Acc) {
        self.write_ns += o.write_ns;
        self.close_ns += o.close_ns;
        self.sync_ns += o.sync_ns;
        self.requested_sync_ns += o.requested_sync_ns;
        self.wait_ns += o.wait_ns;
        self.closes += o.closes;
        self.syncs += o.syncs;
        self.requested_syncs += o.requested_syncs;
    }
    fn tail(&self) -> i64 {
        self.close_ns + self.sync_ns
    }
}

/// See the module doc.
pub(crate) struct CloseSync {
    general: General,
    min_share: f64,
    min_time_ns: f64,
    by_rank_file: Keyed<(i32, i32), Acc>,
    /// Per (rank, file): synced since it was last opened.
    synced: Keyed<(i32, i32), bool>,
    /// The last top-level sync: its id and whether it was the requested one.
    last_sync: Option<(i64, bool)>,
    written: BTreeSet<i32>,
    last_written: Option<i32>,
    /// The current region's sums, folded into by_region when the region changes.
    region: Option<(String, Acc)>,
    /// Per user region (phase): close + sync and write time, on any file.
    by_region: BTreeMap<String, Acc>,
}

impl CloseSync {
    pub(crate) fn new(config: &Config) -> Self {
        let s = config.section(ID);
        CloseSync {
            general: General::new(config),
            min_share: s.f64("min_share"),
            min_time_ns: s.u64("min_time_ns") as f64,
            by_rank_file: Keyed::default(),
            synced: Keyed::default(),
            last_sync: None,
            written: BTreeSet::new(),
            last_written: None,
            region: None,
            by_region: BTreeMap::new(),
        }
    }
}

impl CloseSync {
    /// What a top-level call on `file` adds (None: nothing, it is no write, close or sync).
    fn call(&mut self, e: &Event<'_>, fx: &util::Facts, file: i32) -> Option<Acc> {
        let mut d = Acc::default();
        if fx.kind == OpKind::Write {
            d.write_ns = e.duration_ns;
            if self.last_written != Some(file) {
                self.written.insert(file);
                self.last_written = Some(file);
            }
        } else if fx.is(class::CLOSE) {
            d.close_ns = e.duration_ns;
            d.closes = 1;
        } else if fx.is(class::SYNC) {
            let synced = self.synced.at((e.rank, file));
            let requested = !*synced;
            *synced = true;
            self.last_sync = Some((e.id, requested));
            if requested {
                d.requested_sync_ns = e.duration_ns;
                d.requested_syncs = 1;
            } else {
                d.sync_ns = e.duration_ns;
                d.syncs = 1;
            }
        } else {
            if fx.func.is_some_and(|f| class::is_open(f.name)) {
                *self.synced.at((e.rank, file)) = false;
            }
            return None;
        }
        Some(d)
    }

    /// Ranks waiting for each other inside close or sync `p`: moved out of its time.
    fn waiting(&self, e: &Event<'_>, p: util::Parent) -> Acc {
        let mut d = Acc {
            wait_ns: e.duration_ns,
            ..Acc::default()
        };
        if p.class & class::CLOSE != 0 {
            d.close_ns = -e.duration_ns;
        } else if self.last_sync == Some((p.id, true)) {
            d.requested_sync_ns = -e.duration_ns;
        } else {
            d.sync_ns = -e.duration_ns;
        }
        d
    }
}

impl Rule for CloseSync {
    fn visit(&mut self, e: &Event<'_>, fx: &Facts, _ctx: &Context<'_>) {
        let (file, d) = match fx.parent {
            Some(p) if fx.wait && p.class & (class::CLOSE | class::SYNC) != 0 => {
                let Some(file) = p.file else { return };
                (file, self.waiting(e, p))
            }
            _ if fx.top_level => {
                let Some(file) = e.file_id else { return };
                let Some(d) = self.call(e, fx, file) else {
                    return;
                };
                (file, d)
            }
            _ => return,
        };
        self.by_rank_file.at((e.rank, file)).add(&d);
        if let Some(r) = e.region {
            match &mut self.region {
                Some((name, a)) if name == r => a.add(&d),
                _ => {
                    if let Some((name, a)) = self.region.take() {
                        self.by_region.entry(name).or_default().add(&a);
                    }
                    self.region = Some((r.to_string(), d));
                }
            }
        }
    }

    fn interest(&self) -> Interest {
        Interest::any_of(&[IN_CALL | WAIT, TOP])
    }

    fn conclude(&self, ctx: &Context<'_>) -> Vec<Finding> {
        let mut total = Acc::default();
        let mut by_file: BTreeMap<i32, Acc> = BTreeMap::new();
        let mut by_rank: BTreeMap<i32, Acc> = BTreeMap::new();
        for ((r, f), a) in self.by_rank_file.entries() {
            if !self.written.contains(&f) {
                continue;
            }
            total.add(a);
            by_file.entry(f).or_default().add(a);
            by_rank.entry(r).or_default().add(a);
        }
        let all = total.write_ns + total.tail() + total.requested_sync_ns;
        let share = util::ratio(total.tail() as f64, all as f64);
        let ranks = util::rank_count(ctx) as f64;
        let per_rank = total.tail() as f64 / ranks;
        if total.tail() == 0 || share < self.min_share || per_rank < self.min_time_ns {
            return Vec::new();
        }
        // Deferred to the next open, a close (and the write-back it forces) overlaps the
        // computation in between: all of it is the estimate, spread over the ranks.
        let cost = per_rank.round() as i64;
        let mut n = Numbers::default();
        n.int("write_time_ns", total.write_ns)
            .int("close_time_ns", total.close_ns)
            .int("sync_time_ns", total.sync_ns)
            .int("closes", total.closes as i64)
            .int("syncs", total.syncs as i64)
            .int("requested_sync_time_ns", total.requested_sync_ns)
            .int("requested_syncs", total.requested_syncs as i64)
            .int("wait_time_ns", total.wait_ns)
            .float("close_sync_share", share)
            .int("files", by_file.len() as i64);
        let k = self.general.worst;
        let mut worst = Vec::new();
        for (f, a) in util::top(by_file.iter().collect(), k, |(_, a)| a.tail()) {
            worst.push(format!(
                "file {}: close {} + sync {} against {} writing",
                util::file_name(ctx, *f),
                units::duration_prose(a.close_ns),
                units::duration_prose(a.sync_ns),
                units::duration_prose(a.write_ns)
            ));
        }
        for (r, a) in util::top(by_rank.iter().collect(), k, |(_, a)| a.tail()) {
            worst.push(format!(
                "{}: {} closing and syncing, {} writing",
                util::rank_name(ctx, *r),
                units::duration_prose(a.tail()),
                units::duration_prose(a.write_ns)
            ));
        }
        let mut by_region = self.by_region.clone();
        if let Some((name, a)) = &self.region {
            by_region.entry(name.clone()).or_default().add(a);
        }
        for (g, a) in util::top(
            by_region.iter().filter(|(_, a)| a.tail() > 0).collect(),
            k,
            |(_, a)| a.tail(),
        ) {
            worst.push(format!(
                "phase {g}: {} closing and syncing, {} writing",
                units::duration_prose(a.tail()),
                units::duration_prose(a.write_ns)
            ));
        }
        let what = if total.close_ns >= total.sync_ns {
            "close"
        } else {
            "sync"
        };
        vec![self.general.finding(
            ctx,
            ID,
            cost,
            format!(
                "Output dominated by {what}: close and sync take {} of the output time",
                units::pct(share)
            ),
            Evidence {
                summary: format!(
                    "On {} written file(s), {} closes took {} and {} syncs beyond the first of \
                     each open took {}, against {} writing and {} in the {} sync(s) asked for \
                     once per open (summed over ranks; {} waiting for other ranks inside \
                     collective closes and syncs not counted).",
                    by_file.len(),
                    total.closes,
                    units::duration_prose(total.close_ns),
                    total.syncs,
                    units::duration_prose(total.sync_ns),
                    units::duration_prose(total.write_ns),
                    units::duration_prose(total.requested_sync_ns),
                    total.requested_syncs,
                    units::duration_prose(total.wait_ns)
                ),
                numbers: n.0,
                worst,
            },
            if total.close_ns >= total.sync_ns {
                "Defer the close: close the file of step N when opening the file of step \
                 N+1 (or after the next compute phase), so the write-back of the buffered \
                 data overlaps the computation instead of stalling the output phase, and \
                 write in larger requests so less is left for close to flush."
            } else {
                "Sync once per file, when the data must be durable (a checkpoint), instead \
                 of after every step: each extra fsync/MPI_File_sync waits for the storage \
                 while the file stays open."
            }
            .into(),
        )]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{coll, ev, flt, none, num, one, Fx};

    /// 2 ranks, 5 steps: open, write 1 ms, fsync `sync` ns, close 4 ms.
    fn job(sync: u64, close: u64) -> Fx {
        let mut fx = Fx::new(2);
        let f = fx.file("/scratch/hist.h5");
        for r in 0..2 {
            for i in 0..5u64 {
                let t = 10_000 + i * 20_000_000;
                fx.push(r, ev("open", t, 10_000).object(f).result(3));
                fx.push(r, ev("pwrite", t + 20_000, 1_000_000).object(f).size(4096));
                fx.push(r, ev("fsync", t + 1_100_000, sync).object(f));
                fx.push(r, ev("close", t + 8_000_000, close).object(f));
            }
        }
        fx
    }

    #[test]
    fn close_heavy_output_fires() {
        let dir = tempfile::tempdir().expect("tmp");
        let t = job(2_000_000, 4_000_000).build(dir.path());
        let f = one(&t, ID);
        assert_eq!(num(&f, "write_time_ns"), 10_000_000);
        assert_eq!(num(&f, "close_time_ns"), 40_000_000);
        assert_eq!(num(&f, "sync_time_ns"), 0, "one sync per open: asked for");
        assert_eq!(num(&f, "requested_sync_time_ns"), 20_000_000);
        assert_eq!(num(&f, "requested_syncs"), 10);
        assert_eq!(num(&f, "closes"), 10);
        assert_eq!(flt(&f, "close_sync_share"), 0.5714, "40 of 70 ms");
        assert_eq!(f.cost_ns, 20_000_000);
        assert!(f.title.contains("close"));
        assert!(f.remedy.contains("N+1"));
    }

    /// Issue 13: the fsync a program asks for once per file (IOR's `-e`) is no finding, even
    /// when it takes most of the output time; a sync after every write of one open is.
    #[test]
    fn requested_sync_is_not_avoidable() {
        let build = |syncs_per_open: u64, dir: &std::path::Path| {
            let mut fx = Fx::new(2);
            let f = fx.file("/scratch/ior.dat");
            for r in 0..2 {
                fx.push(r, ev("open", 0, 10_000).object(f).result(3));
                for i in 0..syncs_per_open {
                    let t = 100_000 + i * 100_000_000;
                    fx.push(r, ev("pwrite", t, 1_000_000).object(f).size(1 << 20));
                    fx.push(r, ev("fsync", t + 2_000_000, 90_000_000).object(f));
                }
                fx.push(r, ev("close", 900_000_000, 100_000).object(f));
            }
            fx.build(dir)
        };
        let dir = tempfile::tempdir().expect("tmp");
        none(&build(1, &dir.path().join("ior-e")), ID);
        let f = one(&build(4, &dir.path().join("every-step")), ID);
        assert_eq!(num(&f, "syncs"), 6, "3 per rank beyond the first");
        assert_eq!(num(&f, "requested_syncs"), 2);
        assert_eq!(
            f.cost_ns, 270_100_000,
            "3 avoidable syncs of 90 ms and the close, per rank"
        );
        assert!(f.remedy.contains("Sync once per file"), "{}", f.remedy);
    }

    /// Issue 13: a collective MPI_File_close that is mostly its barrier (ranks waiting for the
    /// slowest) is no close problem.
    #[test]
    fn barrier_in_collective_close_is_waiting() {
        let build = |barrier: u64, dir: &std::path::Path| {
            let mut fx = Fx::new(2);
            let f = fx.file("/scratch/hpio.dat");
            for r in 0..2 {
                fx.push(r, coll(ev("MPI_File_open", 0, 10_000).object(f), 1));
                fx.push(
                    r,
                    coll(
                        ev("MPI_File_write_all", 20_000, 300_000)
                            .object(f)
                            .size(1 << 20),
                        2,
                    ),
                );
                fx.push(
                    r,
                    ev("pwrite", 30_000, 250_000)
                        .object(f)
                        .size(1 << 20)
                        .depth(1),
                );
                fx.push(
                    r,
                    coll(ev("MPI_File_close", 400_000, 36_900_000).object(f), 3),
                );
                fx.push(r, ev("close", 410_000, 100_000).object(f).depth(1));
                fx.push(r, ev("MPI_Barrier", 700_000, barrier).depth(1));
            }
            fx.build(dir)
        };
        let dir = tempfile::tempdir().expect("tmp");
        none(&build(36_600_000, &dir.path().join("barrier")), ID);
        // The same close without the barrier is slow itself.
        let f = one(&build(0, &dir.path().join("slow-close")), ID);
        assert_eq!(num(&f, "close_time_ns"), 2 * 36_900_000);
        assert_eq!(num(&f, "wait_time_ns"), 0);
    }

    #[test]
    fn near_miss_quick_closes() {
        let dir = tempfile::tempdir().expect("tmp");
        none(&job(100_000, 200_000).build(dir.path()), ID);
    }
}
