//! `cb-buffer-cycles`: the collective buffer is smaller than an aggregator's file domain, so
//! each collective call runs several two-phase cycles (exchange, then storage access, again
//! and again), each one re-synchronising all ranks. An aggregator's cycles in one call are its
//! POSIX transfers beneath it (one per cycle: ROMIO writes the collective buffer once per
//! cycle); its file domain is the extent those transfers cover. When the `cb_buffer_size` in
//! force is known and the domain fits fewer buffers than there were transfers, the cycles are
//! ceil(domain / cb_buffer_size): the extra transfers are pieces of one cycle.

use std::collections::BTreeMap;

use pioscope_trace::store::Event;
use pioscope_trace::units;
use pioscope_trace::Layer;

use super::config::Config;
use super::dispatch::{Interest, CALL, IN_COLLECTIVE, POSIX};
use super::util::{self, Call, Facts, General, Numbers, PerCall};
use super::{Evidence, Finding, Rule};
use crate::hints;
use crate::lookup::InstanceIndex;
use crate::pass::Context;

/// Rule id.
pub(crate) const ID: &str = "cb-buffer-cycles";

const MIB: u64 = 1 << 20;

/// One aggregator's storage transfers in one collective call.
#[derive(Clone, Copy, Debug)]
struct Cycles {
    count: u64,
    bytes: u64,
    lo: i64,
    hi: i64,
    prev_end: Option<i64>,
    min_cycle: i64,
}

impl Default for Cycles {
    fn default() -> Self {
        Cycles {
            count: 0,
            bytes: 0,
            lo: i64::MAX,
            hi: i64::MIN,
            prev_end: None,
            min_cycle: i64::MAX,
        }
    }
}

#[derive(Debug, Default)]
struct FileAcc {
    aggregator_calls: u64,
    multi: u64,
    max_cycles: u64,
    max_domain: u64,
    cb_buffer_size: Option<i64>,
    cost_ns: i64,
}

/// See the module doc.
pub(crate) struct CbBufferCycles {
    general: General,
    min_cycles: u64,
    min_share: f64,
    max_cb: u64,
    calls: PerCall<Cycles>,
    aggregator_calls: u64,
    cycles_sum: u64,
    multi: u64,
    /// Per collective instance: (cost of the slowest aggregator's extra cycles, aggregators).
    instances: Vec<(i64, u64)>,
    /// Where each collective instance's entry of `instances` is: a table read per call, not
    /// a tree that grows with the instances.
    instance_at: InstanceIndex,
    by_file: BTreeMap<i32, FileAcc>,
    by_rank: BTreeMap<i32, (u64, u64)>,
    /// The call with the most cycles: (cycles, call, rank, domain).
    worst_call: Option<(u64, Call, u64)>,
}

impl CbBufferCycles {
    pub(crate) fn new(config: &Config) -> Self {
        let s = config.section(ID);
        CbBufferCycles {
            general: General::new(config),
            min_cycles: s.u64("min_cycles").max(2),
            min_share: s.f64("min_share"),
            max_cb: s.u64("max_cb_buffer_size").max(MIB),
            calls: PerCall::default(),
            aggregator_calls: 0,
            cycles_sum: 0,
            multi: 0,
            instances: Vec::new(),
            instance_at: InstanceIndex::default(),
            by_file: BTreeMap::new(),
            by_rank: BTreeMap::new(),
            worst_call: None,
        }
    }

    fn close(&mut self, c: Call, cy: Cycles, ctx: &Context<'_>) {
        if cy.count == 0 {
            return;
        }
        let file = c.file.unwrap_or(-1);
        let domain = (cy.hi - cy.lo).max(0) as u64;
        let cb = ctx
            .hints
            .at::<i64>(c.rank, file, hints::CB_BUFFER_SIZE, c.start);
        // One transfer per cycle, unless the domain fits fewer buffers than there were
        // transfers: then ROMIO wrote the pieces of a cycle one by one (holes it did not
        // read-modify-write), and the buffer count is the cycle count.
        let cycles = match cb {
            Some(b) if b > 0 && domain > 0 => cy.count.min(domain.div_ceil(b as u64)),
            _ => cy.count,
        };
        self.aggregator_calls += 1;
        self.cycles_sum += cycles;
        // Each cycle beyond the first costs at least what the cheapest cycle of the call
        // took (no cycle is shorter than the shortest stretch between two transfers): its
        // exchange and synchronisation come back with every cycle.
        let extra = if cycles >= self.min_cycles {
            self.multi += 1;
            (cycles - 1) as i64 * cy.min_cycle
        } else {
            0
        };
        let key = c.instance_key();
        let instances = &mut self.instances;
        let at = self.instance_at.at(key, || {
            instances.push((0, 0));
            instances.len() - 1
        });
        let inst = &mut instances[at];
        inst.0 = inst.0.max(extra);
        inst.1 += 1;
        let a = self.by_file.entry(file).or_default();
        a.aggregator_calls += 1;
        a.max_cycles = a.max_cycles.max(cycles);
        a.max_domain = a.max_domain.max(domain);
        a.cost_ns += extra;
        if cycles >= self.min_cycles {
            a.multi += 1;
        }
        if a.cb_buffer_size.is_none() {
            a.cb_buffer_size = cb;
        }
        let r = self.by_rank.entry(c.rank).or_default();
        r.0 += 1;
        r.1 = r.1.max(cycles);
        if self.worst_call.is_none_or(|(n, _, _)| cycles > n) {
            self.worst_call = Some((cycles, c, domain));
        }
    }
}

impl Rule for CbBufferCycles {
    fn visit(&mut self, e: &Event<'_>, fx: &Facts, ctx: &Context<'_>) {
        if let Some(c) = fx.call {
            let tracked = c.collective && c.data();
            if let Some((c, cy)) = self.calls.next(e, c, tracked) {
                self.close(c, cy, ctx);
            }
            return;
        }
        if e.layer != Layer::Posix {
            return;
        }
        let Some(p) = fx.parent else { return };
        // A collective write's reads are the read-modify-write of a domain with holes; the
        // cycles are counted by the transfers in the call's direction.
        if fx.kind != p.kind {
            return;
        }
        let Some(cy) = self.calls.child(e, p.id) else {
            return;
        };
        let end = e.end_ns();
        let from = cy.prev_end.unwrap_or(p.start);
        cy.min_cycle = cy.min_cycle.min((end - from).max(0));
        cy.prev_end = Some(end);
        cy.count += 1;
        cy.bytes += util::moved(e);
        if let Some(off) = e.offset {
            cy.lo = cy.lo.min(off);
            cy.hi = cy.hi.max(off + e.size.max(0));
        }
    }

    fn finish(&mut self, ctx: &Context<'_>) {
        for (c, cy) in self.calls.drain() {
            self.close(c, cy, ctx);
        }
    }

    fn interest(&self) -> Interest {
        Interest::any_of(&[CALL, POSIX | IN_COLLECTIVE])
    }

    fn conclude(&self, ctx: &Context<'_>) -> Vec<Finding> {
        let share = util::ratio(self.multi as f64, self.aggregator_calls as f64);
        if self.multi == 0 || share < self.min_share {
            return Vec::new();
        }
        let cost: i64 = self.instances.iter().map(|(c, _)| *c).sum();
        let aggregators = self.instances.iter().map(|(_, a)| *a).max().unwrap_or(1);
        let empty = FileAcc::default();
        let (file, fa) = self
            .by_file
            .iter()
            .max_by_key(|(f, a)| (a.cost_ns, a.multi, -**f))
            .map(|(f, a)| (*f, a))
            .unwrap_or((-1, &empty));
        let domain = fa.max_domain.max(1);
        let fs = util::fs_of(ctx, file);
        // The buffer that makes one cycle: the largest domain rounded up to a MiB.
        let wanted = domain.div_ceil(MIB) * MIB;
        let mean = util::ratio(self.cycles_sum as f64, self.aggregator_calls as f64);
        let mut n = Numbers::default();
        n.int("collective_calls", self.instances.len() as i64)
            .int("aggregator_calls", self.aggregator_calls as i64)
            .int("multi_cycle_calls", self.multi as i64)
            .float("mean_cycles", mean)
            .int("max_cycles", fa.max_cycles as i64)
            .int("max_domain_bytes", domain as i64)
            .int("aggregators_per_call", aggregators as i64);
        if let Some(cb) = fa.cb_buffer_size {
            n.int("cb_buffer_size", cb);
        }
        let remedy = if wanted <= self.max_cb {
            n.int("recommended_cb_buffer_size", wanted as i64);
            format!(
                "Set the hint cb_buffer_size={wanted} ({}) at MPI_File_open \
                 (MPI_Info_set(info, \"cb_buffer_size\", \"{wanted}\")): the largest file \
                 domain of an aggregator, {}, then fits one collective buffer and each call \
                 runs one two-phase cycle instead of up to {}. It costs {} of memory on each \
                 of the {aggregators} aggregator(s).{}",
                units::bytes(wanted),
                units::bytes(domain),
                fa.max_cycles,
                units::bytes(wanted),
                if fs == "lustre" {
                    " On Lustre ROMIO sizes the buffer from the stripe: raise the stripe size \
                     (striping_unit hint or lfs setstripe -S) along with it."
                } else {
                    ""
                }
            )
        } else {
            let more = aggregators * domain.div_ceil(self.max_cb);
            n.int("recommended_cb_buffer_size", self.max_cb as i64)
                .int("recommended_cb_nodes", more as i64);
            format!(
                "The file domain of an aggregator ({}) is larger than a sensible collective \
                 buffer: use more aggregators, cb_nodes={more} (with cb_config_list=\"*:{}\" \
                 if the hosts are few), together with cb_buffer_size={}, so each call runs \
                 one cycle.",
                units::bytes(domain),
                more.div_ceil(aggregators.max(1)),
                self.max_cb
            )
        };
        let k = self.general.worst;
        let mut worst = Vec::new();
        for (f, a) in util::top(self.by_file.iter().collect(), k, |(_, a)| a.cost_ns) {
            worst.push(format!(
                "file {}: up to {} cycles per call, domain {}, cb_buffer_size {}",
                util::file_name(ctx, *f),
                a.max_cycles,
                units::bytes(a.max_domain),
                a.cb_buffer_size
                    .map(|b| units::bytes(b.max(0) as u64))
                    .unwrap_or_else(|| "unknown".into())
            ));
        }
        for (r, (calls, maxc)) in util::top(self.by_rank.iter().collect(), k, |(_, (_, m))| *m) {
            worst.push(format!(
                "aggregator {}: {calls} calls, up to {maxc} cycles",
                util::rank_name(ctx, *r)
            ));
        }
        if let Some((cycles, c, d)) = self.worst_call {
            worst.push(format!(
                "call {} on {}: {cycles} cycles on rank {} for a {} domain",
                c.name(),
                util::file_name(ctx, c.file.unwrap_or(-1)),
                c.rank,
                units::bytes(d)
            ));
        }
        vec![self.general.finding(
            ctx,
            ID,
            cost,
            format!(
                "Collective buffer smaller than the aggregators' file domain: {:.1} two-phase \
                 cycles per call",
                mean
            ),
            Evidence {
                summary: format!(
                    "{} of {} aggregator calls ran {} or more two-phase cycles (mean {:.1}, max \
                     {}); the largest file domain is {} ({domain} B) against cb_buffer_size {}.",
                    self.multi,
                    self.aggregator_calls,
                    self.min_cycles,
                    mean,
                    fa.max_cycles,
                    units::bytes(domain),
                    fa.cb_buffer_size
                        .map(|b| format!("{} ({b} B)", units::bytes(b.max(0) as u64)))
                        .unwrap_or_else(|| "unknown".into())
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
    use crate::testutil::{coll, ev, flt, none, num, one, Fx};

    /// 2 ranks, 3 write_all calls of 8 MiB per rank; rank 0 aggregates a 16 MiB domain in
    /// `cycles` pwrites, the cycles `[100 us, 40 us, ...]` long.
    fn job(cycles: u64) -> Fx {
        let mut fx = Fx::new(2);
        let f = fx.file("/scratch/ckpt.dat");
        for r in 0..2 {
            fx.setting(
                r,
                f,
                "MPI_File_open",
                1_500,
                &[("cb_buffer_size", &(16 * MIB / cycles).to_string())],
            );
            for i in 0..3u64 {
                let t = 10_000 + i * 1_000_000;
                fx.push(
                    r,
                    coll(ev("MPI_File_write_all", t, 500_000), i + 1)
                        .object(f)
                        .size(8 * MIB)
                        .offset(0),
                );
                if r == 0 {
                    let piece = 16 * MIB / cycles;
                    let mut at = t;
                    for j in 0..cycles {
                        let len = if j == 0 { 100_000 } else { 40_000 };
                        at += len;
                        fx.push(
                            0,
                            ev("pwrite", at - 10_000, 10_000)
                                .object(f)
                                .size(piece)
                                .offset(j * piece)
                                .depth(1),
                        );
                    }
                }
            }
        }
        fx
    }

    #[test]
    fn several_cycles_per_call_fire_with_the_buffer_that_makes_one() {
        let dir = tempfile::tempdir().expect("tmp");
        let t = job(4).build(dir.path());
        let f = one(&t, ID);
        assert_eq!(num(&f, "aggregator_calls"), 3);
        assert_eq!(num(&f, "multi_cycle_calls"), 3);
        assert_eq!(flt(&f, "mean_cycles"), 4.0);
        assert_eq!(num(&f, "max_domain_bytes"), (16 * MIB) as i64);
        assert_eq!(num(&f, "cb_buffer_size"), (4 * MIB) as i64);
        assert_eq!(num(&f, "recommended_cb_buffer_size"), (16 * MIB) as i64);
        // 3 calls x 3 extra cycles x the 40 us cheapest cycle.
        assert_eq!(f.cost_ns, 3 * 3 * 40_000);
        assert!(f.remedy.contains("cb_buffer_size=16777216"), "{}", f.remedy);
        assert!(
            f.evidence
                .worst
                .iter()
                .any(|w| w.contains("MPI_File_write_all #")),
            "{:?}",
            f.evidence.worst
        );
    }

    #[test]
    fn near_miss_one_cycle() {
        let dir = tempfile::tempdir().expect("tmp");
        none(&job(1).build(dir.path()), ID);
    }

    #[test]
    fn near_miss_pieces_of_one_cycle_are_not_cycles() {
        // 4 pwrites per call, but the 16 MiB domain fits the 16 MiB buffer: one cycle whose
        // pieces ROMIO wrote one by one.
        let dir = tempfile::tempdir().expect("tmp");
        let mut fx = job(4);
        for r in 0..2 {
            fx.setting(
                r,
                1,
                "MPI_File_set_info",
                1_600,
                &[("cb_buffer_size", "16777216")],
            );
        }
        none(&fx.build(dir.path()), ID);
    }
}
