//! `close-sync`: output dominated by closing or syncing files rather than writing them. The
//! OLAM study saw an output phase spent in close, because the small writes sat in the page
//! cache and were flushed at close. Counted on written files, at the application's own calls
//! (`MPI_File_close` once, not again for the `close` ROMIO makes beneath it).

use std::collections::{BTreeMap, BTreeSet};

use pioscope_trace::store::Event;
use pioscope_trace::units;
use pioscope_trace::OpKind;

use super::config::Config;
use super::util::{self, General, Keyed, Numbers, Shared};
use super::{Evidence, Finding, Rule};
use crate::class;
use crate::pass::{Context, Visitor};

/// Rule id.
pub(crate) const ID: &str = "close-sync";

#[derive(Clone, Copy, Debug, Default)]
struct Acc {
    write_ns: i64,
    close_ns: i64,
    sync_ns: i64,
    closes: u64,
    syncs: u64,
}

impl Acc {
    fn add(&mut self, o: &Acc) {
        self.write_ns += o.write_ns;
        self.close_ns += o.close_ns;
        self.sync_ns += o.sync_ns;
        self.closes += o.closes;
        self.syncs += o.syncs;
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
    shared: Shared,
    by_rank_file: Keyed<(i32, i32), Acc>,
    written: BTreeSet<i32>,
    last_written: Option<i32>,
    /// The current region's sums, folded into by_region when the region changes.
    region: Option<(String, Acc)>,
    /// Per user region (phase): close + sync and write time, on any file.
    by_region: BTreeMap<String, Acc>,
}

impl CloseSync {
    pub(crate) fn new(config: &Config, shared: &Shared) -> Self {
        let s = config.section(ID);
        CloseSync {
            general: General::new(config),
            min_share: s.f64("min_share"),
            min_time_ns: s.u64("min_time_ns") as f64,
            shared: shared.clone(),
            by_rank_file: Keyed::default(),
            written: BTreeSet::new(),
            last_written: None,
            region: None,
            by_region: BTreeMap::new(),
        }
    }
}

impl Visitor for CloseSync {
    fn visit(&mut self, e: &Event<'_>, _ctx: &Context<'_>) {
        let fx = util::facts(&self.shared, e);
        if !fx.top_level {
            return;
        }
        let Some(file) = e.file_id else { return };
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
            d.sync_ns = e.duration_ns;
            d.syncs = 1;
        } else {
            return;
        }
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
}

impl Rule for CloseSync {
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
        let all = total.write_ns + total.tail();
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
                    "On {} written file(s), {} closes took {} and {} syncs took {}, against {} \
                     writing (summed over ranks).",
                    by_file.len(),
                    total.closes,
                    units::duration_prose(total.close_ns),
                    total.syncs,
                    units::duration_prose(total.sync_ns),
                    units::duration_prose(total.write_ns)
                ),
                numbers: n.0,
                worst,
            },
            "Defer the close: close the file of step N when opening the file of step \
             N+1 (or after the next compute phase), so the write-back of the buffered \
             data overlaps the computation instead of stalling the output phase. Drop \
             fsync/MPI_File_sync after every step unless that step must be durable \
             (a checkpoint), and write in larger requests so less is left for close \
             to flush."
                .into(),
        )]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{ev, flt, none, num, one, Fx};

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
        assert_eq!(num(&f, "sync_time_ns"), 20_000_000);
        assert_eq!(num(&f, "closes"), 10);
        assert_eq!(flt(&f, "close_sync_share"), 0.8571, "60 of 70 ms");
        assert_eq!(f.cost_ns, 30_000_000);
        assert!(f.title.contains("close"));
        assert!(f.remedy.contains("N+1"));
    }

    #[test]
    fn near_miss_quick_closes() {
        let dir = tempfile::tempdir().expect("tmp");
        none(&job(100_000, 200_000).build(dir.path()), ID);
    }
}
