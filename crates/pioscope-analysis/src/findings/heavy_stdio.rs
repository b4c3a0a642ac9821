//! `heavy-stdio`: a large share of the application's I/O time goes through C standard I/O
//! (fwrite, fread, fflush, ...): many small calls through a small stream buffer, each
//! flush a system call, with no way to express parallel access to a shared file.

use pioscope_trace::functions::kind_of;
use pioscope_trace::store::Event;
use pioscope_trace::units;
use pioscope_trace::{Layer, OpKind};

use super::config::Config;
use super::util::{self, General, Keyed, Numbers, Shared};
use super::{Evidence, Finding, Rule};
use crate::pass::{Context, Visitor};

/// Rule id.
pub(crate) const ID: &str = "heavy-stdio";

#[derive(Clone, Copy, Debug, Default)]
struct Acc {
    ops: u64,
    bytes: u64,
    ns: i64,
}

impl Acc {
    fn merge(&mut self, o: &Acc) {
        self.ops += o.ops;
        self.bytes += o.bytes;
        self.ns += o.ns;
    }

    fn add(&mut self, e: &Event<'_>, data: bool) {
        self.ops += 1;
        self.ns += e.duration_ns;
        if data {
            self.bytes += util::moved(e);
        }
    }
}

/// See the module doc.
pub(crate) struct HeavyStdio {
    general: General,
    min_ops: u64,
    min_share: f64,
    shared: Shared,
    io_ns: i64,
    stdio: Acc,
    /// The application's own POSIX data requests: the speed STDIO is compared with.
    posix: Acc,
    /// STDIO calls per (rank, file or -1, function id).
    by: Keyed<(i32, i32, u16), Acc>,
}

impl HeavyStdio {
    pub(crate) fn new(config: &Config, shared: &Shared) -> Self {
        let s = config.section(ID);
        HeavyStdio {
            general: General::new(config),
            min_ops: s.u64("min_ops"),
            min_share: s.f64("min_share"),
            shared: shared.clone(),
            io_ns: 0,
            stdio: Acc::default(),
            posix: Acc::default(),
            by: Keyed::default(),
        }
    }
}

impl Visitor for HeavyStdio {
    fn visit(&mut self, e: &Event<'_>, _ctx: &Context<'_>) {
        let fx = util::facts(&self.shared, e);
        if !fx.top_level {
            return;
        }
        self.io_ns += e.duration_ns;
        let data = fx.data();
        match e.layer {
            Layer::Stdio => {
                self.stdio.add(e, data);
                self.by
                    .at((e.rank, e.file_id.unwrap_or(-1), fx.id()))
                    .add(e, data);
            }
            Layer::Posix if data => self.posix.add(e, true),
            _ => {}
        }
    }
}

impl Rule for HeavyStdio {
    fn conclude(&self, ctx: &Context<'_>) -> Vec<Finding> {
        let s = self.stdio;
        let share = util::ratio(s.ns as f64, self.io_ns as f64);
        if s.ops < self.min_ops || s.ops == 0 || share < self.min_share {
            return Vec::new();
        }
        // The STDIO time beyond what its bytes take through the application's POSIX
        // requests (all of it when there are none to compare with).
        let needed = if self.posix.bytes > 0 {
            s.bytes as f64 * self.posix.ns as f64 / self.posix.bytes as f64
        } else {
            0.0
        };
        let cost = util::per_rank((s.ns as f64 - needed).max(0.0), ctx);
        let mut n = Numbers::default();
        n.int("stdio_calls", s.ops as i64)
            .int("stdio_bytes", s.bytes as i64)
            .int("stdio_time_ns", s.ns)
            .float("io_time_share", share)
            .float("mean_bytes", util::ratio(s.bytes as f64, s.ops as f64));
        let by_func = self.by.group(|k| util::func_name(k.2), Acc::merge);
        let mut by_file = self.by.group(|k| k.1, Acc::merge);
        by_file.remove(&-1);
        let by_rank = self.by.group(|k| k.0, Acc::merge);
        let k = self.general.worst;
        let mut worst = Vec::new();
        let funcs = util::top(by_func.iter().collect(), k, |(_, a)| a.ns);
        for (f, a) in &funcs {
            worst.push(format!(
                "call {f}: {} calls, {}",
                a.ops,
                units::duration_prose(a.ns)
            ));
        }
        for (f, a) in util::top(by_file.iter().collect(), k, |(_, a)| a.ns) {
            worst.push(format!(
                "file {}: {} calls, {}, {}",
                util::file_name(ctx, *f),
                a.ops,
                units::bytes(a.bytes),
                units::duration_prose(a.ns)
            ));
        }
        for (r, a) in util::top(by_rank.iter().collect(), k, |(_, a)| a.ns) {
            worst.push(format!(
                "{}: {} STDIO calls, {}",
                util::rank_name(ctx, *r),
                a.ops,
                units::duration_prose(a.ns)
            ));
        }
        let top = funcs.first().map(|(f, _)| **f).unwrap_or("fwrite");
        vec![self.general.finding(
            ctx,
            ID,
            cost,
            format!(
                "Heavy STDIO: {} calls take {} of the I/O time",
                s.ops,
                units::pct(share)
            ),
            Evidence {
                summary: format!(
                    "{} STDIO calls ({} moved, {} per call on average; mostly {top}) took {} \
                     of the application's {} of I/O time (summed over ranks).",
                    s.ops,
                    units::bytes(s.bytes),
                    units::bytes(util::ratio(s.bytes as f64, s.ops as f64) as u64),
                    units::duration_prose(s.ns),
                    units::duration_prose(self.io_ns)
                ),
                numbers: n.0,
                worst,
            },
            if kind_of(Layer::Stdio, top) == OpKind::Read {
                format!(
                    "Replace the {top} loop with large reads into a memory buffer (fread or \
                     read of several MiB, or MPI-IO for a file shared by ranks) and parse it \
                     there; at least enlarge the stream buffer with \
                     setvbuf(f, NULL, _IOFBF, 4194304) right after fopen."
                )
            } else {
                format!(
                    "Replace the {top} loop with large writes of a memory buffer (write/pwrite \
                     of several MiB, or MPI-IO for a file shared by ranks); at least enlarge \
                     the stream buffer with setvbuf(f, NULL, _IOFBF, 4194304) right after \
                     fopen, and call fflush only when the data must reach the file."
                )
            },
        )]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{ev, flt, none, num, one, Fx};

    /// 1 rank: `n` fwrites of 80 B (5 us each) to a log and one 1 MiB pwrite of 1 ms.
    fn job(n: u64) -> Fx {
        let mut fx = Fx::new(1);
        let log = fx.file("/scratch/run.log");
        let out = fx.file("/scratch/out.dat");
        fx.push(0, ev("pwrite", 10_000, 1_000_000).object(out).size(1 << 20));
        for i in 0..n {
            fx.push(
                0,
                ev("fwrite", 2_000_000 + i * 10_000, 5_000)
                    .object(log)
                    .size(80)
                    .offset(i * 80),
            );
        }
        fx
    }

    #[test]
    fn many_fwrites_fire() {
        let dir = tempfile::tempdir().expect("tmp");
        let t = job(2000).build(dir.path());
        let f = one(&t, ID);
        assert_eq!(num(&f, "stdio_calls"), 2000);
        assert_eq!(num(&f, "stdio_bytes"), 160_000);
        assert_eq!(num(&f, "stdio_time_ns"), 10_000_000);
        assert_eq!(flt(&f, "io_time_share"), 0.9091);
        // 10 ms minus 160 kB at the pwrite's 1 ms per MiB.
        assert_eq!(
            f.cost_ns,
            (10_000_000.0_f64 - 160_000.0 * 1_000_000.0 / 1048576.0).round() as i64
        );
        assert!(f.remedy.contains("setvbuf"));
    }

    #[test]
    fn near_miss_few_calls() {
        let dir = tempfile::tempdir().expect("tmp");
        none(&job(150).build(dir.path()), ID);
    }
}
