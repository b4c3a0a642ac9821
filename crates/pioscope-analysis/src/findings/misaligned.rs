//! `misaligned`: requests of a block or more that start off the file system's block or stripe
//! boundary, so each touches one unit more than it needs (on Lustre, one more stripe: another
//! server, another lock). Counted on every POSIX transfer, inside MPI-IO calls too: that is
//! what the file system sees. The unit: the `striping_unit` hint when the run set one, else
//! `parallel_fs_bytes` on a parallel file system, else `page_bytes`.

use std::collections::HashMap;

use pioscope_trace::store::Event;
use pioscope_trace::units;
use pioscope_trace::Layer;

use super::config::Config;
use super::counters::{names, Counters};
use super::dispatch::{Interest, DATA, POSIX};
use super::util::{self, Facts, General, Numbers};
use super::{Evidence, Finding, Rule};
use crate::lookup::Keyed;
use crate::pass::Context;

/// Rule id.
pub(crate) const ID: &str = "misaligned";

#[derive(Clone, Copy, Debug, Default)]
struct Acc {
    considered: u64,
    misaligned: u64,
    ns: i64,
    cost_ns: f64,
}

impl Acc {
    fn merge(&mut self, d: &Acc) {
        self.considered += d.considered;
        self.misaligned += d.misaligned;
        self.ns += d.ns;
        self.cost_ns += d.cost_ns;
    }
}

/// See the module doc.
pub(crate) struct Misaligned {
    general: General,
    min_requests: u64,
    min_share: f64,
    page: u64,
    parallel: u64,
    units: HashMap<i32, (u64, &'static str)>,
    last_unit: Option<(i32, u64)>,
    total: Acc,
    /// Per (rank, file).
    by: Keyed<(i32, i32), Acc>,
}

impl Misaligned {
    pub(crate) fn new(config: &Config) -> Self {
        let s = config.section(ID);
        Misaligned {
            general: General::new(config),
            min_requests: s.u64("min_requests"),
            min_share: s.f64("min_share"),
            page: s.u64("page_bytes").max(1),
            parallel: s.u64("parallel_fs_bytes").max(1),
            units: HashMap::new(),
            last_unit: None,
            total: Acc::default(),
            by: Keyed::default(),
        }
    }

    /// The alignment unit of `file` and where it comes from.
    fn unit(&mut self, file: i32, ctx: &Context<'_>) -> (u64, &'static str) {
        if let Some(u) = self.units.get(&file) {
            return *u;
        }
        let u = util::stripe_of(ctx, file, self.parallel).unwrap_or((self.page, "page"));
        self.units.insert(file, u);
        u
    }
}

/// Requests misaligned in memory (Darshan's `POSIX_MEM_NOT_ALIGNED`; traces record no buffer
/// addresses): (misaligned, requests).
type Memory = Option<(u64, u64)>;

impl Rule for Misaligned {
    fn visit(&mut self, e: &Event<'_>, fx: &Facts, ctx: &Context<'_>) {
        if e.layer != Layer::Posix || !fx.data() {
            return;
        }
        let (Some(file), Some(off)) = (e.file_id, e.offset) else {
            return;
        };
        let unit = match self.last_unit {
            Some((f, u)) if f == file => u,
            _ => {
                let u = self.unit(file, ctx).0;
                self.last_unit = Some((file, u));
                u
            }
        };
        let size = e.size.max(0) as u64;
        if size < unit || off < 0 {
            return;
        }
        let off = off as u64;
        let mut d = Acc {
            considered: 1,
            ..Acc::default()
        };
        if off % unit != 0 {
            // Units touched against the fewest a request of this size can touch.
            let touched = (off + size - 1) / unit - off / unit + 1;
            let least = size.div_ceil(unit);
            d.misaligned = 1;
            d.ns = e.duration_ns;
            d.cost_ns = e.duration_ns as f64 * (touched - least) as f64 / touched as f64;
        }
        self.total.merge(&d);
        self.by.at((e.rank, file)).merge(&d);
    }

    fn interest(&self) -> Interest {
        Interest::any_of(&[POSIX | DATA])
    }

    fn conclude(&self, ctx: &Context<'_>) -> Vec<Finding> {
        self.judge(
            self.total,
            &self.by,
            &self.units,
            None,
            "traced POSIX requests",
            ctx,
        )
    }

    fn judge_counters(&self, c: &Counters, ctx: &Context<'_>) -> Vec<Finding> {
        let mut total = Acc::default();
        let mut by: Keyed<(i32, i32), Acc> = Keyed::default();
        let mut units: HashMap<i32, (u64, &'static str)> = HashMap::new();
        let (mut mem, mut ops_all) = (0.0, 0.0);
        for r in c.records(names::POSIX) {
            let ops = r.sum(&["POSIX_READS", "POSIX_WRITES"]);
            ops_all += ops;
            mem += r.get("POSIX_MEM_NOT_ALIGNED");
            let unit = (r.get("POSIX_FILE_ALIGNMENT") as u64).max(1);
            units.insert(r.file, (unit, "Darshan POSIX_FILE_ALIGNMENT"));
            // Darshan counts misaligned requests of every size; one smaller than the unit
            // loses nothing by it, so only the requests of a unit or more (the size
            // histogram's bins from the unit up) are considered.
            let large: f64 = ["POSIX_SIZE_READ_", "POSIX_SIZE_WRITE_"]
                .iter()
                .flat_map(|h| r.histogram(h))
                .filter(|(_, lo, _)| *lo >= unit)
                .map(|(n, _, _)| n)
                .sum();
            let misaligned = r.get("POSIX_FILE_NOT_ALIGNED").min(large);
            let ns = r.ns("POSIX_F_READ_TIME") + r.ns("POSIX_F_WRITE_TIME");
            let ns = ns * util::ratio(misaligned, ops);
            // A misaligned request of a unit or more touches one unit more than it needs:
            // half its time for a request of one unit, taken as the estimate.
            let d = Acc {
                considered: large as u64,
                misaligned: misaligned as u64,
                ns: ns.round() as i64,
                cost_ns: ns / 2.0,
            };
            total.merge(&d);
            by.at((r.rank, r.file)).merge(&d);
        }
        self.judge(
            total,
            &by,
            &units,
            Some((mem as u64, ops_all as u64)),
            "Darshan counters POSIX_FILE_NOT_ALIGNED, POSIX_FILE_ALIGNMENT and the size \
             histograms",
            ctx,
        )
    }
}

impl Misaligned {
    /// The finding, if enough requests are misaligned in the file (or, from Darshan's
    /// counters, in memory).
    fn judge(
        &self,
        t: Acc,
        by: &Keyed<(i32, i32), Acc>,
        units: &HashMap<i32, (u64, &'static str)>,
        memory: Memory,
        source: &str,
        ctx: &Context<'_>,
    ) -> Vec<Finding> {
        let share = util::ratio(t.misaligned as f64, t.considered as f64);
        let in_file =
            t.misaligned >= self.min_requests && t.misaligned > 0 && share >= self.min_share;
        let (mem, mem_ops) = memory.unwrap_or((0, 0));
        let mem_share = util::ratio(mem as f64, mem_ops as f64);
        let in_memory = mem >= self.min_requests && mem > 0 && mem_share >= self.min_share;
        if !in_file && !in_memory {
            return Vec::new();
        }
        let cost = util::per_rank(t.cost_ns, ctx);
        let by_file = by.group(|k| k.1, Acc::merge);
        let by_rank = by.group(|k| k.0, Acc::merge);
        let (file, _) = by_file
            .iter()
            .max_by(|a, b| a.1.cost_ns.total_cmp(&b.1.cost_ns))
            .map(|(f, a)| (*f, *a))
            .unwrap_or((-1, Acc::default()));
        let (unit, unit_from) = units.get(&file).copied().unwrap_or((self.page, "page"));
        let mut n = Numbers::default();
        n.int("requests", t.considered as i64)
            .int("misaligned_requests", t.misaligned as i64)
            .float("misaligned_share", share)
            .int("misaligned_time_ns", t.ns)
            .int("unit_bytes", unit as i64)
            .text("unit_from", unit_from)
            .text("source", source);
        if memory.is_some() {
            n.int("mem_not_aligned_requests", mem as i64)
                .float("mem_not_aligned_share", mem_share);
        }
        let k = self.general.worst;
        let mut worst = Vec::new();
        for (f, a) in util::top(by_file.iter().collect(), k, |(_, a)| a.cost_ns) {
            let (u, _) = units.get(f).copied().unwrap_or((self.page, ""));
            worst.push(format!(
                "file {} ({}): {} of {} requests off the {} boundary",
                util::file_name(ctx, *f),
                util::fs_of(ctx, *f),
                a.misaligned,
                a.considered,
                units::bytes(u)
            ));
        }
        // Rank -1: a Darshan record reduced over every rank, no rank to name.
        for (r, a) in util::top(
            by_rank.iter().filter(|(r, _)| **r >= 0).collect(),
            k,
            |(_, a)| a.cost_ns,
        ) {
            worst.push(format!(
                "{}: {} misaligned requests",
                util::rank_name(ctx, *r),
                a.misaligned
            ));
        }
        let ub = units::bytes(unit);
        let mut summary = format!(
            "{} of {} POSIX requests of {ub} or more start off a {ub} boundary ({unit_from}), \
             so each touches one unit more than needed; they take {} summed over ranks \
             ({source}).",
            t.misaligned,
            t.considered,
            units::duration_prose(t.ns)
        );
        let mut remedy = format!(
            "Align the requests to {unit} bytes: make each rank's block a multiple of \
             {ub} and start it on a multiple (pad a header to {ub}). Through MPI-IO set \
             striping_unit={unit} and romio_cb_fr_alignment={unit} so ROMIO aligns the \
             aggregators' file domains; on Lustre, match the stripe to the request size \
             (lfs setstripe -S <size> on the directory)."
        );
        if in_memory {
            summary.push_str(&format!(
                " {mem} of {mem_ops} requests use a buffer misaligned in memory (Darshan \
                 POSIX_MEM_NOT_ALIGNED): a copy per request under O_DIRECT, no cost otherwise."
            ));
            remedy
                .push_str(" Allocate the I/O buffers aligned (posix_memalign(&buf, 4096, size)).");
        }
        let title = if in_file {
            format!(
                "Misaligned requests: {} of the requests start off the {ub} boundary",
                units::pct(share)
            )
        } else {
            format!(
                "Misaligned buffers: {} of the requests use a buffer misaligned in memory",
                units::pct(mem_share)
            )
        };
        vec![self.general.finding(
            ctx,
            ID,
            cost,
            title,
            Evidence {
                summary,
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
    use crate::testutil::{ev, findings_from_counters, flt, none, num, one, Fx, LUSTRE};

    /// 1 rank, 200 pwrites of 1 MiB on Lustre at offsets shifted by `shift` bytes, 1 ms each.
    fn job(shift: u64) -> Fx {
        let mut fx = Fx::new(1);
        let f = fx.file_on("/lustre/ckpt.dat", LUSTRE);
        for i in 0..200u64 {
            fx.push(
                0,
                ev("pwrite", 10_000 + i * 2_000_000, 1_000_000)
                    .object(f)
                    .size(1 << 20)
                    .offset(shift + (i << 20)),
            );
        }
        fx
    }

    #[test]
    fn shifted_stripe_sized_writes_fire() {
        let dir = tempfile::tempdir().expect("tmp");
        let t = job(4096).build(dir.path());
        let f = one(&t, ID);
        assert_eq!(num(&f, "misaligned_requests"), 200);
        assert_eq!(flt(&f, "misaligned_share"), 1.0);
        assert_eq!(num(&f, "unit_bytes"), 1 << 20);
        // Each touches 2 stripes instead of 1: half its time.
        assert_eq!(f.cost_ns, 100_000_000);
        assert!(f.remedy.contains("striping_unit=1048576"), "{}", f.remedy);
    }

    #[test]
    fn near_miss_aligned() {
        let dir = tempfile::tempdir().expect("tmp");
        none(&job(0).build(dir.path()), ID);
    }

    /// A shared POSIX record of 4 ranks (1 s job): 1000 writes of 1-4 MiB, `not_aligned` of
    /// them off the 1 MiB alignment, `mem` misaligned in memory, 0.4 s of writes.
    fn from_counters(not_aligned: f64, mem: f64) -> Vec<Finding> {
        let dir = tempfile::tempdir().expect("tmp");
        let mut fx = Fx::new(4);
        let f = fx.file("/lustre/ckpt.dat");
        fx.push(0, ev("MPI_Barrier", 0, 1_000_000_000));
        let t = fx.build(dir.path());
        let c = counters(&[
            ("POSIX", -1, f, "POSIX_WRITES", 1000.0),
            ("POSIX", -1, f, "POSIX_SIZE_WRITE_1M_4M", 1000.0),
            ("POSIX", -1, f, "POSIX_FILE_ALIGNMENT", 1048576.0),
            ("POSIX", -1, f, "POSIX_FILE_NOT_ALIGNED", not_aligned),
            ("POSIX", -1, f, "POSIX_MEM_NOT_ALIGNED", mem),
            ("POSIX", -1, f, "POSIX_F_WRITE_TIME", 0.4),
        ]);
        findings_from_counters(&t, &c, ID)
    }

    #[test]
    fn counters_misaligned_in_file_or_memory_fire() {
        let f = from_counters(800.0, 0.0);
        assert_eq!(f.len(), 1);
        assert_eq!(num(&f[0], "misaligned_requests"), 800);
        assert_eq!(num(&f[0], "unit_bytes"), 1 << 20);
        // 0.4 s x 800/1000 misaligned, half of it lost, over 4 ranks.
        assert_eq!(f[0].cost_ns, 40_000_000);
        let m = from_counters(0.0, 900.0);
        assert_eq!(m.len(), 1);
        assert_eq!(num(&m[0], "mem_not_aligned_requests"), 900);
        assert_eq!(m[0].cost_ns, 0);
        assert!(m[0].remedy.contains("posix_memalign"));
        assert!(from_counters(10.0, 10.0).is_empty());
    }
}
