//! `aggregator-placement`: the two-phase aggregators (ranks doing POSIX transfers inside
//! collective MPI-IO calls) are badly spread over the hosts: several on one host while the
//! job has other hosts (they share the host's link and contend in the exchange, as the Lustre
//! placement study found with ROMIO's blocked layout), or hosts taking part in the collective
//! I/O without any aggregator (their link sits idle). A single-host job has nothing to place.

use std::collections::{BTreeMap, BTreeSet};

use pioscope_trace::store::Event;
use pioscope_trace::Layer;

use super::config::Config;
use super::dispatch::{Interest, CALL, DATA, IN_COLLECTIVE, POSIX};
use super::util::{self, Call, Facts, General, Numbers, PerCall};
use super::{Evidence, Finding, Rule};
use crate::hints;
use crate::lookup::InstanceIndex;
use crate::pass::Context;

/// Rule id.
pub(crate) const ID: &str = "aggregator-placement";

#[derive(Debug, Default)]
struct FileAcc {
    participants: BTreeSet<i32>,
    aggregators: BTreeSet<i32>,
}

/// See the module doc.
pub(crate) struct AggregatorPlacement {
    general: General,
    max_per_host: usize,
    min_calls: u64,
    by_file: BTreeMap<i32, FileAcc>,
    /// Per collective instance, in the order first seen: the instance's file and the storage
    /// ns per aggregator rank (the conclusion only sums over them, in any order).
    instances: Vec<(i32, BTreeMap<i32, i64>)>,
    /// Where each instance's entry is in `instances`.
    instance_at: InstanceIndex,
    /// Storage time beneath each open collective call.
    calls: PerCall<i64>,
}

impl AggregatorPlacement {
    pub(crate) fn new(config: &Config) -> Self {
        let s = config.section(ID);
        AggregatorPlacement {
            general: General::new(config),
            max_per_host: s.u64("max_per_host").max(1) as usize,
            min_calls: s.u64("min_calls").max(1),
            by_file: BTreeMap::new(),
            instances: Vec::new(),
            instance_at: InstanceIndex::default(),
            calls: PerCall::default(),
        }
    }
}

impl AggregatorPlacement {
    fn close(&mut self, c: Call, storage_ns: i64) {
        let Some(f) = c.file else { return };
        let acc = self.by_file.entry(f).or_default();
        acc.participants.insert(c.rank);
        let key = c.instance_key();
        let instances = &mut self.instances;
        let at = self.instance_at.at(key, || {
            instances.push((f, BTreeMap::new()));
            instances.len() - 1
        });
        if storage_ns > 0 {
            acc.aggregators.insert(c.rank);
            *instances[at].1.entry(c.rank).or_default() += storage_ns;
        }
    }
}

/// Aggregators per host of one file, and the participating hosts without one.
struct Layout<'c> {
    per_host: BTreeMap<&'c str, Vec<i32>>,
    without: Vec<&'c str>,
}

impl AggregatorPlacement {
    fn layout<'c>(&self, ctx: &'c Context<'_>, a: &FileAcc) -> Layout<'c> {
        let mut per_host: BTreeMap<&str, Vec<i32>> = BTreeMap::new();
        for r in &a.aggregators {
            per_host.entry(util::host_of(ctx, *r)).or_default().push(*r);
        }
        let hosts: BTreeSet<&str> = a
            .participants
            .iter()
            .map(|r| util::host_of(ctx, *r))
            .collect();
        let without = hosts
            .iter()
            .filter(|h| !per_host.contains_key(*h))
            .copied()
            .collect();
        Layout { per_host, without }
    }
}

impl Rule for AggregatorPlacement {
    fn visit(&mut self, e: &Event<'_>, fx: &Facts, _ctx: &Context<'_>) {
        if let Some(c) = fx.call {
            let tracked = c.collective && c.data();
            if let Some((c, ns)) = self.calls.next(e, c, tracked) {
                self.close(c, ns);
            }
            return;
        }
        if e.layer != Layer::Posix || !fx.data() {
            return;
        }
        let Some(p) = fx.parent else { return };
        if let Some(ns) = self.calls.child(e, p.id) {
            *ns += e.duration_ns;
        }
    }

    fn finish(&mut self, _ctx: &Context<'_>) {
        for (c, ns) in self.calls.drain() {
            self.close(c, ns);
        }
    }

    fn interest(&self) -> Interest {
        Interest::any_of(&[CALL, POSIX | IN_COLLECTIVE | DATA])
    }

    fn conclude(&self, ctx: &Context<'_>) -> Vec<Finding> {
        let mut bad: Vec<(i32, &FileAcc, Layout<'_>)> = Vec::new();
        for (f, a) in &self.by_file {
            if a.aggregators.is_empty() {
                continue;
            }
            let l = self.layout(ctx, a);
            let hosts = l.per_host.len() + l.without.len();
            let crowded = l.per_host.values().any(|v| v.len() > self.max_per_host);
            if hosts >= 2 && (crowded || !l.without.is_empty()) {
                bad.push((*f, a, l));
            }
        }
        let calls = self
            .instances
            .iter()
            .filter(|(f, _)| bad.iter().any(|(b, _, _)| b == f))
            .count() as u64;
        if bad.is_empty() || calls < self.min_calls {
            return Vec::new();
        }
        // Per call: the storage time of the busiest host beyond an even spread of the same
        // work over every participating host.
        let mut cost = 0i64;
        for (f, per_rank) in &self.instances {
            let Some((_, _, l)) = bad.iter().find(|(b, _, _)| b == f) else {
                continue;
            };
            let mut per_host: BTreeMap<&str, i64> = BTreeMap::new();
            for (r, ns) in per_rank {
                *per_host.entry(util::host_of(ctx, *r)).or_default() += ns;
            }
            let hosts = (l.per_host.len() + l.without.len()).max(1) as f64;
            let total: i64 = per_host.values().sum();
            let max = per_host.values().copied().max().unwrap_or(0);
            cost += (max as f64 - total as f64 / hosts).max(0.0).round() as i64;
        }
        let (file, acc, l) = &bad[0];
        let hosts = l.per_host.len() + l.without.len();
        let most = l.per_host.values().map(Vec::len).max().unwrap_or(0);
        let aggs = acc.aggregators.len();
        let s = &ctx.hints;
        let cb_nodes = s.any(*file, hints::CB_NODES).map(str::to_string);
        let cb_config = s.any(*file, "cb_config_list").map(str::to_string);
        let mut n = Numbers::default();
        n.int("collective_calls", calls as i64)
            .int("aggregators", aggs as i64)
            .int("hosts", hosts as i64)
            .int("hosts_without_aggregator", l.without.len() as i64)
            .int("max_aggregators_per_host", most as i64)
            .int("ranks", acc.participants.len() as i64);
        if let Some(c) = &cb_nodes {
            n.text("cb_nodes", c);
        }
        if let Some(c) = &cb_config {
            n.text("cb_config_list", c);
        }
        let k = self.general.worst;
        let mut worst = Vec::new();
        for (f, a, l) in bad.iter().take(k) {
            let layout: Vec<String> = l
                .per_host
                .iter()
                .map(|(h, rs)| format!("{h}: ranks {rs:?}"))
                .collect();
            worst.push(format!(
                "file {}: {} aggregators ({}){}",
                util::file_name(ctx, *f),
                a.aggregators.len(),
                layout.join("; "),
                if l.without.is_empty() {
                    String::new()
                } else {
                    format!("; none on {}", l.without.join(", "))
                }
            ));
        }
        for (h, rs) in util::top(l.per_host.iter().collect(), k, |(_, rs)| rs.len()) {
            if rs.len() > self.max_per_host {
                worst.push(format!("host {h}: {} aggregators (ranks {rs:?})", rs.len()));
            }
        }
        for h in l.without.iter().take(k) {
            worst.push(format!("host {h}: no aggregator"));
        }
        let crowded = most > self.max_per_host;
        let title = if crowded && !l.without.is_empty() {
            format!(
                "Aggregators crowd {most} to a host while {} host(s) have none",
                l.without.len()
            )
        } else if crowded {
            format!("Up to {most} aggregators share one host")
        } else {
            format!(
                "{} of {hosts} hosts take part in collective I/O without an aggregator",
                l.without.len()
            )
        };
        let remedy = format!(
            "Spread the aggregators one per host: set cb_config_list=\"*:{}\" and \
             cb_nodes={} at MPI_File_open{}, or place the ranks round-robin over the hosts \
             (mpiexec -map-by node / srun --distribution=cyclic) so ROMIO's blocked choice \
             of aggregators lands on different hosts; each host's link then carries its share \
             of the exchange.",
            self.max_per_host,
            hosts * self.max_per_host,
            cb_nodes
                .as_ref()
                .map(|c| format!(" (now cb_nodes={c})"))
                .unwrap_or_default()
        );
        vec![self.general.finding(
            ctx,
            ID,
            cost,
            title,
            Evidence {
                summary: format!(
                    "{aggs} aggregator(s) over {hosts} host(s) on {}: up to {most} on one host, \
                     {} host(s) without one, over {calls} collective calls.",
                    util::file_name(ctx, *file),
                    l.without.len()
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
    use crate::testutil::{coll, ev, none, num, one, Fx};

    /// 4 ranks on hosts a, a, b, b; 2 write_all calls; the aggregators are `aggs`, each
    /// writing 100 us per call.
    fn job(aggs: &[usize]) -> Fx {
        let mut fx = Fx::new(4).hosts(&["a", "a", "b", "b"]);
        let f = fx.file("/scratch/c.dat");
        for i in 0..2u64 {
            let t = 10_000 + i * 1_000_000;
            for r in 0..4 {
                fx.push(
                    r,
                    coll(ev("MPI_File_write_all", t, 500_000), i + 1)
                        .object(f)
                        .size(1024),
                );
                if aggs.contains(&r) {
                    fx.push(
                        r,
                        ev("pwrite", t + 10_000, 100_000)
                            .object(f)
                            .size(2048)
                            .depth(1),
                    );
                }
            }
        }
        fx
    }

    #[test]
    fn two_aggregators_on_one_host_and_none_on_the_other_fire() {
        let dir = tempfile::tempdir().expect("tmp");
        let t = job(&[0, 1]).build(dir.path());
        let f = one(&t, ID);
        assert_eq!(num(&f, "aggregators"), 2);
        assert_eq!(num(&f, "hosts"), 2);
        assert_eq!(num(&f, "hosts_without_aggregator"), 1);
        assert_eq!(num(&f, "max_aggregators_per_host"), 2);
        assert_eq!(num(&f, "collective_calls"), 2);
        // Per call: host a 200 us, even spread 100 us.
        assert_eq!(f.cost_ns, 2 * 100_000);
        assert!(
            f.evidence
                .worst
                .iter()
                .any(|w| w.contains("host b: no aggregator")),
            "{:?}",
            f.evidence.worst
        );
        assert!(f.remedy.contains("cb_config_list=\"*:1\"") && f.remedy.contains("cb_nodes=2"));
    }

    #[test]
    fn near_miss_one_aggregator_per_host() {
        let dir = tempfile::tempdir().expect("tmp");
        none(&job(&[0, 2]).build(dir.path()), ID);
    }
}
