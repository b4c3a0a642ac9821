//! `small-storage-accesses`: the servers' storage moved the data in many more accesses than
//! its size needs. Each access pays a fixed cost (a seek, a request to the device, a journal
//! entry), so small accesses leave the disks' bandwidth unused.

use pioscope_trace::store::Event;
use pioscope_trace::units;

use super::config::Config;
use super::util::{Facts, General, Numbers};
use super::{Evidence, Finding, Rule};
use crate::pass::{Context, Visitor};
use crate::servers::ServerVisitor;

/// Rule id.
pub(crate) const ID: &str = "small-storage-accesses";

/// See the module doc.
pub(crate) struct SmallStorageAccesses {
    general: General,
    min_accesses: u64,
    max_bytes: u64,
    target_bytes: u64,
    min_factor: f64,
    servers: Option<ServerVisitor>,
}

impl SmallStorageAccesses {
    pub(crate) fn new(config: &Config) -> Self {
        let s = config.section(ID);
        SmallStorageAccesses {
            general: General::new(config),
            min_accesses: s.u64("min_accesses"),
            max_bytes: s.u64("max_bytes"),
            target_bytes: s.u64("target_bytes").max(1),
            min_factor: s.f64("min_factor"),
            servers: None,
        }
    }
}

impl Rule for SmallStorageAccesses {
    fn sees_server_records(&self) -> bool {
        true
    }

    fn visit(&mut self, e: &Event<'_>, _fx: &Facts, ctx: &Context<'_>) {
        self.servers
            .get_or_insert_with(|| ServerVisitor::loads(ctx.trace))
            .visit(e, ctx);
    }

    fn idle(&mut self, ctx: &Context<'_>) -> bool {
        !self
            .servers
            .get_or_insert_with(|| ServerVisitor::loads(ctx.trace))
            .has_servers()
    }

    fn conclude(&self, ctx: &Context<'_>) -> Vec<Finding> {
        let Some(v) = &self.servers else {
            return Vec::new();
        };
        let sums = v.sums();
        let accesses: u64 = sums.iter().map(|(_, a)| a.storage_accesses).sum();
        let bytes: u64 = sums.iter().map(|(_, a)| a.storage_bytes).sum();
        let time: i64 = sums.iter().map(|(_, a)| a.storage_time_ns).sum();
        if accesses < self.min_accesses.max(1) {
            return Vec::new();
        }
        let mean = bytes as f64 / accesses as f64;
        let needed = bytes.div_ceil(self.target_bytes).max(1);
        let factor = accesses as f64 / needed as f64;
        if mean >= self.max_bytes as f64 || factor < self.min_factor {
            return Vec::new();
        }
        // The storage time the extra accesses take, spread over the servers working at once.
        let servers = sums
            .iter()
            .filter(|(_, a)| a.storage_accesses > 0)
            .count()
            .max(1);
        let saved = 1.0 - needed as f64 / accesses as f64;
        let cost = (time as f64 * saved / servers as f64).round() as i64;
        let mut n = Numbers::default();
        n.int("accesses", accesses as i64)
            .int("bytes", bytes as i64)
            .int("needed_accesses", needed as i64)
            .float("mean_bytes", mean)
            .int("storage_time_ns", time);
        let mut worst: Vec<(&str, u64, u64)> = sums
            .iter()
            .map(|(n, a)| (*n, a.storage_accesses, a.storage_bytes))
            .filter(|w| w.1 > 0)
            .collect();
        worst.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        let worst = worst
            .iter()
            .take(self.general.worst)
            .map(|(n, a, b)| format!("{n}: {a} accesses of {} on average", units::bytes(b / a)))
            .collect();
        vec![self.general.finding(
            ctx,
            ID,
            cost,
            format!(
                "{accesses} storage accesses of {} on average where {needed} of {} would do",
                units::bytes(mean.round() as u64),
                units::bytes(self.target_bytes)
            ),
            Evidence {
                summary: format!(
                    "The servers moved {} in {accesses} storage accesses ({factor:.0}x the {needed} accesses of {} it needs), taking {} of storage time.",
                    units::bytes(bytes),
                    units::bytes(self.target_bytes),
                    units::duration_prose(time),
                ),
                numbers: n.0,
                worst,
            },
            format!(
                "Make the accesses reach the servers larger: collective I/O (romio_cb_write=enable) \
                 with cb_buffer_size={} and a stripe size of at least {}, larger application \
                 requests, or the server's write-behind/aggregation (e.g. GlusterFS \
                 performance.write-behind-window-size).",
                self.target_bytes,
                units::bytes(self.target_bytes)
            ),
        )]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{none, num, one, servers_trace};

    #[test]
    fn fires_with_its_numbers() {
        let dir = tempfile::tempdir().expect("tmp");
        // 2 servers x 100 accesses of 4 KiB, 1 ms each: 800 KiB needs one 4 MiB access.
        let t = servers_trace(
            dir.path(),
            &[(100, 1_000_000, 4096), (100, 1_000_000, 4096)],
        );
        let f = one(&t, ID);
        assert_eq!(num(&f, "accesses"), 200);
        assert_eq!(num(&f, "needed_accesses"), 1);
        assert_eq!(num(&f, "bytes"), 200 * 4096);
        // 200 ms of storage time x (1 - 1/200) over 2 servers.
        assert_eq!(f.cost_ns, 99_500_000);
    }

    #[test]
    fn large_accesses_do_not_fire() {
        let dir = tempfile::tempdir().expect("tmp");
        let t = servers_trace(dir.path(), &[(100, 1_000_000, 4 << 20)]);
        none(&t, ID);
    }
}
