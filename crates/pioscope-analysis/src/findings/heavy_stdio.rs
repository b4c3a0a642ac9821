//! `heavy-stdio`: a large share of the application's I/O time goes through C standard I/O
//! (fwrite, fread, fflush, ...): many small calls through a small stream buffer, each
//! flush a system call, with no way to express parallel access to a shared file.

use pioscope_trace::functions::{by_name, kind_of};
use pioscope_trace::store::Event;
use pioscope_trace::units;
use pioscope_trace::{Layer, OpKind};

use super::config::Config;
use super::counters::{names, Counters};
use super::dispatch::{Interest, TOP};
use super::util::{self, Facts, General, Numbers};
use super::{Evidence, Finding, Rule};
use crate::lookup::Keyed;
use crate::pass::Context;

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
    io_ns: i64,
    stdio: Acc,
    /// The application's own POSIX data requests: the speed STDIO is compared with.
    posix: Acc,
    /// STDIO calls per (rank, file or -1, function id).
    by: Keyed<(i32, i32, u16), Acc>,
}

impl HeavyStdio {
    pub(crate) fn new(config: &Config) -> Self {
        let s = config.section(ID);
        HeavyStdio {
            general: General::new(config),
            min_ops: s.u64("min_ops"),
            min_share: s.f64("min_share"),
            io_ns: 0,
            stdio: Acc::default(),
            posix: Acc::default(),
            by: Keyed::default(),
        }
    }
}

/// What a judgment reads, from events or counters.
struct Seen<'a> {
    /// The application's I/O time, ns summed over ranks.
    io_ns: i64,
    stdio: Acc,
    /// The application's own POSIX data requests.
    posix: Acc,
    by: &'a Keyed<(i32, i32, u16), Acc>,
    source: &'a str,
}

/// Darshan's STDIO counters: (calls, the call they stand for, its time counter or None for
/// a share of `STDIO_F_META_TIME` by count, bytes counter).
const COUNTERS: [(&str, &str, Option<&str>, Option<&str>); 5] = [
    (
        "STDIO_READS",
        "fread",
        Some("STDIO_F_READ_TIME"),
        Some("STDIO_BYTES_READ"),
    ),
    (
        "STDIO_WRITES",
        "fwrite",
        Some("STDIO_F_WRITE_TIME"),
        Some("STDIO_BYTES_WRITTEN"),
    ),
    ("STDIO_OPENS", "fopen", None, None),
    ("STDIO_FLUSHES", "fflush", None, None),
    ("STDIO_SEEKS", "fseek", None, None),
];

impl Rule for HeavyStdio {
    fn visit(&mut self, e: &Event<'_>, fx: &Facts, _ctx: &Context<'_>) {
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

    fn interest(&self) -> Interest {
        Interest::any_of(&[TOP])
    }

    fn conclude(&self, ctx: &Context<'_>) -> Vec<Finding> {
        self.judge(
            &Seen {
                io_ns: self.io_ns,
                stdio: self.stdio,
                posix: self.posix,
                by: &self.by,
                source: "traced calls",
            },
            ctx,
        )
    }

    fn judge_counters(&self, c: &Counters, ctx: &Context<'_>) -> Vec<Finding> {
        let mut by: Keyed<(i32, i32, u16), Acc> = Keyed::default();
        let mut stdio = Acc::default();
        for r in c.records(names::STDIO) {
            let meta_calls: f64 = COUNTERS
                .iter()
                .filter(|k| k.2.is_none())
                .map(|k| r.get(k.0))
                .sum();
            for (calls, func, time, bytes) in COUNTERS {
                let n = r.get(calls);
                if n <= 0.0 {
                    continue;
                }
                let ns = match time {
                    Some(t) => r.ns(t),
                    None => r.ns("STDIO_F_META_TIME") * util::ratio(n, meta_calls),
                };
                let a = Acc {
                    ops: n as u64,
                    bytes: bytes.map_or(0.0, |b| r.get(b)) as u64,
                    ns: ns.round() as i64,
                };
                stdio.merge(&a);
                by.at((r.rank, r.file, by_name(func).map_or(0, |f| f.id)))
                    .merge(&a);
            }
        }
        let mut posix = Acc::default();
        for r in c.own_posix() {
            posix.merge(&Acc {
                ops: r.sum(&["POSIX_READS", "POSIX_WRITES"]) as u64,
                bytes: r.sum(&["POSIX_BYTES_READ", "POSIX_BYTES_WRITTEN"]) as u64,
                ns: (r.ns("POSIX_F_READ_TIME") + r.ns("POSIX_F_WRITE_TIME")).round() as i64,
            });
        }
        self.judge(
            &Seen {
                io_ns: c.io_ns().round() as i64,
                stdio,
                posix,
                by: &by,
                source: "Darshan counters STDIO_*, the metadata time shared by count",
            },
            ctx,
        )
    }
}

impl HeavyStdio {
    /// The finding, if STDIO calls are many and take much of the I/O time.
    fn judge(&self, seen: &Seen<'_>, ctx: &Context<'_>) -> Vec<Finding> {
        let s = seen.stdio;
        let share = util::ratio(s.ns as f64, seen.io_ns as f64);
        if s.ops < self.min_ops || s.ops == 0 || share < self.min_share {
            return Vec::new();
        }
        // The STDIO time beyond what its bytes take through the application's POSIX
        // requests (all of it when there are none to compare with).
        let needed = if seen.posix.bytes > 0 {
            s.bytes as f64 * seen.posix.ns as f64 / seen.posix.bytes as f64
        } else {
            0.0
        };
        let cost = util::per_rank((s.ns as f64 - needed).max(0.0), ctx);
        let mut n = Numbers::default();
        n.int("stdio_calls", s.ops as i64)
            .int("stdio_bytes", s.bytes as i64)
            .int("stdio_time_ns", s.ns)
            .float("io_time_share", share)
            .float("mean_bytes", util::ratio(s.bytes as f64, s.ops as f64))
            .text("source", seen.source);
        let by_func = seen.by.group(|k| util::func_name(k.2), Acc::merge);
        let mut by_file = seen.by.group(|k| k.1, Acc::merge);
        by_file.remove(&-1);
        let by_rank = seen.by.group(|k| k.0, Acc::merge);
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
        // Rank -1: a Darshan record reduced over every rank, no rank to name.
        for (r, a) in util::top(
            by_rank.iter().filter(|(r, _)| **r >= 0).collect(),
            k,
            |(_, a)| a.ns,
        ) {
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
                     of the application's {} of I/O time (summed over ranks; {}).",
                    s.ops,
                    units::bytes(s.bytes),
                    units::bytes(util::ratio(s.bytes as f64, s.ops as f64) as u64),
                    units::duration_prose(s.ns),
                    units::duration_prose(seen.io_ns),
                    seen.source
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
    use super::super::counters::testing::counters;
    use super::*;
    use crate::testutil::{ev, findings_from_counters, flt, none, num, one, Fx};

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

    /// 1 rank (1 s job): `n` fwrites of 80 B in 0.2 s, and 1 MiB written by POSIX in 1 ms.
    fn from_counters(n: f64) -> Vec<Finding> {
        let dir = tempfile::tempdir().expect("tmp");
        let mut fx = Fx::new(1);
        let log = fx.file("/scratch/run.log");
        let out = fx.file("/scratch/out.dat");
        fx.push(0, ev("MPI_Barrier", 0, 1_000_000_000));
        let t = fx.build(dir.path());
        let c = counters(&[
            ("STDIO", 0, log, "STDIO_WRITES", n),
            ("STDIO", 0, log, "STDIO_BYTES_WRITTEN", n * 80.0),
            ("STDIO", 0, log, "STDIO_F_WRITE_TIME", 0.2),
            ("POSIX", 0, out, "POSIX_WRITES", 1.0),
            ("POSIX", 0, out, "POSIX_BYTES_WRITTEN", 1048576.0),
            ("POSIX", 0, out, "POSIX_F_WRITE_TIME", 0.001),
        ]);
        findings_from_counters(&t, &c, ID)
    }

    #[test]
    fn counters_many_fwrites_fire_and_few_do_not() {
        let f = from_counters(5000.0);
        assert_eq!(f.len(), 1);
        assert_eq!(num(&f[0], "stdio_calls"), 5000);
        assert_eq!(num(&f[0], "stdio_bytes"), 400_000);
        // 0.2 s less 400 kB at the POSIX speed (1 ms per MiB).
        assert_eq!(
            f[0].cost_ns,
            (2e8 - 400_000.0 * 1e6 / 1048576.0_f64).round() as i64
        );
        assert!(f[0].evidence.worst[0].starts_with("call fwrite: 5000 calls"));
        assert!(from_counters(500.0).is_empty());
    }
}
