//! `servers-idle`: the clients wait in I/O calls while no storage server is working. The time
//! then goes to the exchange between ranks (two-phase), the client library or the network,
//! not to the storage: faster disks or more servers would not help.
//!
//! Measured on a fixed grid over the job (`bins` intervals): per bin, the clients' share of
//! time in top-level I/O calls (summed over ranks, divided by the ranks) and the time any
//! server operation (network or storage) covers. The cost is the client wait during which no
//! server worked. State: two numbers per bin.

use pioscope_trace::store::meta::ContainerKind;
use pioscope_trace::store::{Containers, Event};
use pioscope_trace::units;

use super::config::Config;
use super::util::{self, Facts, General, Numbers};
use super::{Evidence, Finding, Rule};
use crate::pass::Context;
use crate::servers::{classify, ServerWork};

/// Rule id.
pub(crate) const ID: &str = "servers-idle";

/// See the module doc.
pub(crate) struct ServersIdle {
    general: General,
    bins: usize,
    min_wait_ns: i64,
    min_share: f64,
    kinds: Option<Vec<ContainerKind>>,
    /// Some container is a server (known with `kinds`): without one there is nothing to judge.
    has_servers: bool,
    /// Client time in top-level I/O per bin, summed over ranks, ns.
    client: Vec<f64>,
    /// Server operation time per bin, summed over servers, ns.
    server: Vec<f64>,
}

impl ServersIdle {
    pub(crate) fn new(config: &Config) -> Self {
        let s = config.section(ID);
        let bins = s.u64("bins").clamp(1, 100_000) as usize;
        ServersIdle {
            general: General::new(config),
            bins,
            min_wait_ns: s.u64("min_wait_ns") as i64,
            min_share: s.f64("min_share"),
            kinds: None,
            has_servers: false,
            client: vec![0.0; bins],
            server: vec![0.0; bins],
        }
    }

    fn width(&self, ctx: &Context<'_>) -> f64 {
        (ctx.trace.meta.job.duration_ns.max(1) as f64 / self.bins as f64).max(1.0)
    }
}

/// Adds the interval [s, t) to `grid` (bins of `width` ns).
fn spread(grid: &mut [f64], width: f64, s: i64, t: i64) {
    let (s, t) = (s.max(0) as f64, t.max(0) as f64);
    let last = grid.len() - 1;
    let (b0, b1) = (
        ((s / width) as usize).min(last),
        ((t / width) as usize).min(last),
    );
    for (b, cell) in grid.iter_mut().enumerate().take(b1 + 1).skip(b0) {
        let lo = s.max(b as f64 * width);
        let hi = if b == last {
            t
        } else {
            t.min((b + 1) as f64 * width)
        };
        *cell += (hi - lo).max(0.0);
    }
}

impl Rule for ServersIdle {
    fn sees_server_records(&self) -> bool {
        true
    }

    fn visit(&mut self, e: &Event<'_>, fx: &Facts, ctx: &Context<'_>) {
        // A job without servers has no finding (`conclude`): its events add nothing.
        if self.idle(ctx) {
            return;
        }
        let Some(kinds) = &self.kinds else { return };
        let kind = kinds
            .get(e.process.max(0) as usize)
            .copied()
            .unwrap_or_default();
        let width = self.width(ctx);
        if kind == ContainerKind::Process {
            if fx.top_level && e.rank >= 0 {
                spread(&mut self.client, width, e.start_ns, e.end_ns());
            }
            return;
        }
        let path = e.file_id.and_then(|f| ctx.trace.file_path(f));
        if classify(kind, e.layer, e.func, path).is_some_and(|op| op.work != ServerWork::Other) {
            spread(&mut self.server, width, e.start_ns, e.end_ns());
        }
    }

    fn idle(&mut self, ctx: &Context<'_>) -> bool {
        if self.kinds.is_none() {
            let kinds: Vec<ContainerKind> = Containers::new(&ctx.trace.meta)
                .all()
                .iter()
                .map(|c| c.kind)
                .collect();
            self.has_servers = kinds.contains(&ContainerKind::Server);
            self.kinds = Some(kinds);
        }
        !self.has_servers
    }

    fn conclude(&self, ctx: &Context<'_>) -> Vec<Finding> {
        if !self.has_servers {
            return Vec::new();
        }
        let ranks = util::rank_count(ctx).max(1) as f64;
        let width = self.width(ctx);
        let wait: f64 = self.client.iter().sum::<f64>() / ranks;
        let idle: f64 = self
            .client
            .iter()
            .zip(&self.server)
            .map(|(c, s)| c / ranks * (1.0 - (s / width).min(1.0)))
            .sum();
        let share = idle / wait.max(1.0);
        if (wait as i64) < self.min_wait_ns || share < self.min_share {
            return Vec::new();
        }
        let cost = idle.round() as i64;
        let mut n = Numbers::default();
        n.int("client_wait_ns", wait.round() as i64)
            .int("idle_wait_ns", cost)
            .float("idle_share", share);
        vec![self.general.finding(
            ctx,
            ID,
            cost,
            format!(
                "The servers were idle for {} of the time clients waited in I/O",
                units::pct(share)
            ),
            Evidence {
                summary: format!(
                    "Each rank waited {} in I/O calls on average; during {} of it no storage server was working.",
                    units::duration_prose(wait.round() as i64),
                    units::duration_prose(cost),
                ),
                numbers: n.0,
                worst: Vec::new(),
            },
            "The storage is not the bottleneck: look at the exchange between ranks (the \
             exchange-time finding; fewer, larger two-phase cycles with a larger cb_buffer_size, \
             or cb_nodes set to the number of nodes), the client library, or the network."
                .into(),
        )]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{flt, none, num, one, rec, servers_trace, ServerStore};

    #[test]
    fn fires_with_its_numbers() {
        let dir = tempfile::tempdir().expect("tmp");
        // Two ranks wait 100 ms in MPI_File_write_all; the one server works 20 ms of it.
        let mut s = ServerStore::default();
        let f = s.file("/mnt/vol/out");
        let b = s.file("/bricks/b0/out");
        for _ in 0..2 {
            s.clients.push(vec![rec(
                "MPI_File_write_all",
                0,
                100_000_000,
                f,
                0,
                1 << 20,
            )]);
        }
        s.servers.push((
            "server-0".into(),
            vec![rec("pwrite64", 80_000_000, 20_000_000, b, 0, 1 << 21)],
        ));
        let t = s.build(dir.path());
        let f = one(&t, ID);
        assert_eq!(num(&f, "client_wait_ns"), 100_000_000);
        assert_eq!(num(&f, "idle_wait_ns"), 80_000_000);
        assert_eq!(flt(&f, "idle_share"), 0.8);
        assert_eq!(f.cost_ns, 80_000_000);
    }

    #[test]
    fn busy_servers_do_not_fire() {
        let dir = tempfile::tempdir().expect("tmp");
        none(&servers_trace(dir.path(), &[(10, 10_000_000, 1 << 20)]), ID);
    }
}
