//! `server-imbalance`: one storage server is busy much longer than the others. Clients wait for
//! the slowest server of each request, so the busiest one sets the pace while the others sit
//! idle: the difference to the mean is time the job loses. Only the servers that store data are
//! compared (not a management daemon, nor a simulated metadata server).

use pioscope_trace::store::Event;
use pioscope_trace::units;

use super::config::Config;
use super::util::{Facts, General, Numbers};
use super::{Evidence, Finding, Rule};
use crate::pass::{Context, Visitor};
use crate::servers::ServerVisitor;

/// Rule id.
pub(crate) const ID: &str = "server-imbalance";

/// See the module doc.
pub(crate) struct ServerImbalance {
    general: General,
    min_servers: u64,
    min_ratio: f64,
    min_busy_ns: i64,
    servers: Option<ServerVisitor>,
}

impl ServerImbalance {
    pub(crate) fn new(config: &Config) -> Self {
        let s = config.section(ID);
        ServerImbalance {
            general: General::new(config),
            min_servers: s.u64("min_servers").max(2),
            min_ratio: s.f64("min_ratio"),
            min_busy_ns: s.u64("min_busy_ns") as i64,
            servers: None,
        }
    }
}

impl Rule for ServerImbalance {
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
        let sums = v.data_sums();
        if (sums.len() as u64) < self.min_servers {
            return Vec::new();
        }
        let mean = sums.iter().map(|(_, a)| a.busy_ns as f64).sum::<f64>() / sums.len() as f64;
        let Some((name, top)) = sums
            .iter()
            .max_by_key(|(n, a)| (a.busy_ns, std::cmp::Reverse(*n)))
        else {
            return Vec::new();
        };
        let ratio = top.busy_ns as f64 / mean.max(1.0);
        if top.busy_ns < self.min_busy_ns || ratio < self.min_ratio {
            return Vec::new();
        }
        let total_bytes: u64 = sums.iter().map(|(_, a)| a.storage_bytes).sum();
        let bytes_share = top.storage_bytes as f64 / total_bytes.max(1) as f64;
        let cost = (top.busy_ns as f64 - mean).round() as i64;
        let mut n = Numbers::default();
        n.int("servers", sums.len() as i64)
            .int("busiest_busy_ns", top.busy_ns)
            .int("mean_busy_ns", mean.round() as i64)
            .float("ratio", ratio)
            .float("busiest_bytes_share", bytes_share);
        let mut worst: Vec<(&str, i64)> = sums.iter().map(|(n, a)| (*n, a.busy_ns)).collect();
        worst.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        let worst = worst
            .iter()
            .take(self.general.worst)
            .map(|(n, b)| format!("{n}: busy {}", units::duration_ns(*b)))
            .collect();
        vec![self.general.finding(
            ctx,
            ID,
            cost,
            format!(
                "Server {name} is busy {ratio:.1}x as long as the mean of {} servers",
                sums.len()
            ),
            Evidence {
                summary: format!(
                    "{name} was busy {} against a mean of {} over {} servers, and stored {} of the bytes.",
                    units::duration_prose(top.busy_ns),
                    units::duration_prose(mean.round() as i64),
                    sums.len(),
                    units::pct(bytes_share),
                ),
                numbers: n.0,
                worst,
            },
            format!(
                "Spread the data over all {} servers: stripe the file across every server \
                 (MPI-IO hint striping_factor={}, or the file system's stripe count), or \
                 distribute the files evenly (on a distributed volume, more files than bricks).",
                sums.len(),
                sums.len()
            ),
        )]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{flt, none, num, one, servers_store, servers_trace};

    #[test]
    fn fires_with_its_numbers() {
        let dir = tempfile::tempdir().expect("tmp");
        // server-0 busy 40 ms, server-1 busy 10 ms: mean 25 ms, ratio 1.6.
        let t = servers_trace(
            dir.path(),
            &[(4, 10_000_000, 1 << 20), (1, 10_000_000, 1 << 20)],
        );
        let f = one(&t, ID);
        assert_eq!(num(&f, "busiest_busy_ns"), 40_000_000);
        assert_eq!(num(&f, "mean_busy_ns"), 25_000_000);
        assert_eq!(f.cost_ns, 15_000_000);
        assert_eq!(flt(&f, "busiest_bytes_share"), 0.8);
        assert!(f.title.contains("server-0"));
    }

    #[test]
    fn even_servers_do_not_fire() {
        let dir = tempfile::tempdir().expect("tmp");
        let t = servers_trace(
            dir.path(),
            &[(2, 10_000_000, 1 << 20), (2, 10_000_000, 1 << 20)],
        );
        none(&t, ID);
    }

    /// GlusterFS's glusterd is a server container that stores no data: two even bricks beside
    /// it are balanced (counting it, the mean would fall to two thirds and the rule fire).
    #[test]
    fn a_management_daemon_is_no_peer_of_the_data_servers() {
        let dir = tempfile::tempdir().expect("tmp");
        let mut s = servers_store(&[(2, 10_000_000, 1 << 20), (2, 10_000_000, 1 << 20)]);
        s.servers.push(("glusterd@vm".into(), Vec::new()));
        s.management.push("glusterd@vm".into());
        none(&s.build(dir.path()), ID);
    }
}
