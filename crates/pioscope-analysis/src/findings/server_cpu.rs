//! `server-cpu`: a storage server's process ran its CPU at the limit for a good part of the
//! job (sampled counters, counters.parquet). Requests then queue behind the CPU, not the
//! disks: the server's threads, not its storage, set the pace.

use pioscope_trace::store::meta::ContainerKind;
use pioscope_trace::store::{Containers, Event};
use pioscope_trace::units;

use super::config::Config;
use super::dispatch::Interest;
use super::util::{Facts, General, Numbers};
use super::{Evidence, Finding, Rule};
use crate::counters::server_cpu;
use crate::pass::Context;

/// Rule id.
pub(crate) const ID: &str = "server-cpu";

/// See the module doc.
pub(crate) struct ServerCpu {
    general: General,
    min_percent: f64,
    min_share: f64,
    min_samples: u64,
}

impl ServerCpu {
    pub(crate) fn new(config: &Config) -> Self {
        let s = config.section(ID);
        ServerCpu {
            general: General::new(config),
            min_percent: s.f64("min_percent"),
            min_share: s.f64("min_share"),
            min_samples: s.u64("min_samples").max(1),
        }
    }
}

impl Rule for ServerCpu {
    fn visit(&mut self, _e: &Event<'_>, _fx: &Facts, _ctx: &Context<'_>) {}

    fn interest(&self) -> Interest {
        Interest::NONE
    }

    fn conclude(&self, ctx: &Context<'_>) -> Vec<Finding> {
        // A damaged counters table costs this rule only; the report still reads the events.
        let Ok(rows) = ctx.trace.counters() else {
            return Vec::new();
        };
        if rows.is_empty() {
            return Vec::new();
        }
        let containers = Containers::new(&ctx.trace.meta);
        let mut out = Vec::new();
        for c in containers
            .all()
            .iter()
            .filter(|c| c.kind == ContainerKind::Server)
        {
            let cpu = server_cpu(&rows, Some(c));
            let n = cpu.samples.len() as u64;
            let hot: Vec<&(i64, f64, i64)> = cpu
                .samples
                .iter()
                .filter(|s| s.1 >= self.min_percent)
                .collect();
            let share = hot.len() as f64 / n.max(1) as f64;
            if n < self.min_samples || share < self.min_share {
                continue;
            }
            let cost: i64 = hot.iter().map(|s| s.2).sum();
            let (mean, peak) = (cpu.mean().unwrap_or(0.0), cpu.peak().unwrap_or(0.0));
            let mut num = Numbers::default();
            num.int("samples", n as i64)
                .int("saturated_samples", hot.len() as i64)
                .float("saturated_share", share)
                .float("mean_percent", mean)
                .float("peak_percent", peak)
                .int("saturated_ns", cost);
            out.push(self.general.finding(
                ctx,
                ID,
                cost,
                format!(
                    "Server {} ran its CPU at {:.0} % or more in {} of the samples",
                    c.label,
                    self.min_percent,
                    units::pct(share)
                ),
                Evidence {
                    summary: format!(
                        "{}: mean CPU {mean:.0} %, peak {peak:.0} % of one core; {} of {n} samples at {:.0} % or more ({}).",
                        c.label,
                        hot.len(),
                        self.min_percent,
                        units::duration_prose(cost)
                    ),
                    numbers: num.0,
                    worst: vec![c.label.clone()],
                },
                "Give the server more CPU: more server threads (GlusterFS server.event-threads \
                 and performance.io-thread-count), more servers, or fewer, larger requests."
                    .into(),
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{flt, none, num, one, rec, ServerStore};
    use pioscope_trace::store::counters::name;
    use pioscope_trace::store::CounterRow;

    fn store(dir: &std::path::Path, user: f64) -> pioscope_trace::store::Trace {
        let mut s = ServerStore::default();
        let f = s.file("/mnt/vol/out");
        let b = s.file("/bricks/b0/out");
        s.clients.push(vec![rec(
            "MPI_File_write_all",
            0,
            1_000_000_000,
            f,
            0,
            1 << 20,
        )]);
        s.servers.push((
            "server-0".into(),
            vec![rec("pwrite64", 0, 1_000_000_000, b, 0, 1 << 20)],
        ));
        // 10 samples of the server process (container 1), 100 ms each; 6 at `user` + 5.
        for i in 0..10 {
            for (counter, v) in [
                (name::CPU_USER, if i < 6 { user } else { 10.0 }),
                (name::CPU_SYSTEM, 5.0),
            ] {
                s.counters.push(CounterRow {
                    time_ns: (i + 1) * 100_000_000,
                    interval_ns: 100_000_000,
                    host: "server-0".into(),
                    process: 1,
                    counter: counter.into(),
                    value: v,
                });
            }
        }
        s.build(dir)
    }

    #[test]
    fn fires_with_its_numbers() {
        let dir = tempfile::tempdir().expect("tmp");
        let f = one(&store(dir.path(), 93.0), ID);
        assert_eq!(num(&f, "samples"), 10);
        assert_eq!(num(&f, "saturated_samples"), 6);
        assert_eq!(num(&f, "saturated_ns"), 600_000_000);
        assert_eq!(flt(&f, "peak_percent"), 98.0);
        assert_eq!(f.cost_ns, 600_000_000);
    }

    #[test]
    fn a_cool_server_does_not_fire() {
        let dir = tempfile::tempdir().expect("tmp");
        none(&store(dir.path(), 50.0), ID);
    }
}
