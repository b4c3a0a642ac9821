//! `random-access`: small requests that jump around the file. Each request after the first on
//! a rank and file is contiguous (starts where the previous one ended), strided (moves by the
//! same distance as the previous step) or random (anything else). Counted at the
//! application's POSIX and STDIO requests; MPI-IO calls are left out (ROMIO sorts and merges
//! what reaches the storage, and their offsets go through the file view).

use pioscope_trace::store::Event;
use pioscope_trace::units;
use pioscope_trace::{Layer, OpKind};

use super::config::Config;
use super::counters::Counters;
use super::dispatch::{Interest, DATA, POSIX, STDIO, TOP};
use super::util::{self, Facts, General, Numbers, Requests};
use super::{Evidence, Finding, Rule};
use crate::lookup::Keyed;
use crate::pass::Context;

/// Rule id.
pub(crate) const ID: &str = "random-access";

#[derive(Clone, Copy, Debug, Default)]
struct Stream {
    prev_off: i64,
    prev_end: i64,
    step: Option<i64>,
    started: bool,
}

/// See the module doc.
pub(crate) struct RandomAccess {
    general: General,
    max_bytes: i64,
    min_requests: u64,
    min_share: f64,
    streams: Keyed<(i32, i32, bool), Stream>,
    random: Requests,
    sequential: Requests,
    /// Random requests per (rank, file).
    by: Keyed<(i32, i32), Requests>,
    reads: u64,
    /// Time of the random reads.
    read_ns: i64,
}

impl RandomAccess {
    pub(crate) fn new(config: &Config) -> Self {
        let s = config.section(ID);
        RandomAccess {
            general: General::new(config),
            max_bytes: s.u64("max_bytes") as i64,
            min_requests: s.u64("min_requests"),
            min_share: s.f64("min_share"),
            streams: Keyed::default(),
            random: Requests::default(),
            sequential: Requests::default(),
            by: Keyed::default(),
            reads: 0,
            read_ns: 0,
        }
    }
}

/// What a judgment reads, from events or counters.
struct Seen<'a> {
    random: Requests,
    sequential: Requests,
    /// Random requests per (rank, file).
    by: &'a Keyed<(i32, i32), Requests>,
    /// Random reads and their time.
    reads: u64,
    read_ns: i64,
    source: &'a str,
}

impl Rule for RandomAccess {
    fn visit(&mut self, e: &Event<'_>, fx: &Facts, _ctx: &Context<'_>) {
        if !fx.top_level || !matches!(e.layer, Layer::Posix | Layer::Stdio) {
            return;
        }
        let k = fx.kind;
        if !matches!(k, OpKind::Read | OpKind::Write) {
            return;
        }
        let (Some(file), Some(off)) = (e.file_id, e.offset) else {
            return;
        };
        let s = self.streams.at((e.rank, file, k == OpKind::Read));
        let started = s.started;
        let contiguous = off == s.prev_end;
        let step = off - s.prev_off;
        let strided = s.step == Some(step) && step != 0;
        s.step = Some(step);
        s.prev_off = off;
        s.prev_end = off + e.size.max(0);
        s.started = true;
        if !started || e.size >= self.max_bytes {
            return;
        }
        if contiguous || strided {
            self.sequential.add(e);
            return;
        }
        self.random.add(e);
        self.by.at((e.rank, file)).add(e);
        if k == OpKind::Read {
            self.reads += 1;
            self.read_ns += e.duration_ns;
        }
    }

    fn interest(&self) -> Interest {
        Interest::any_of(&[TOP | POSIX | DATA, TOP | STDIO | DATA])
    }

    fn conclude(&self, ctx: &Context<'_>) -> Vec<Finding> {
        self.judge(
            &Seen {
                random: self.random,
                sequential: self.sequential,
                by: &self.by,
                reads: self.reads,
                read_ns: self.read_ns,
                source: "traced requests",
            },
            ctx,
        )
    }

    fn judge_counters(&self, c: &Counters, ctx: &Context<'_>) -> Vec<Finding> {
        let (mut random, mut sequential) = (Requests::default(), Requests::default());
        let mut by: Keyed<(i32, i32), Requests> = Keyed::default();
        let (mut reads, mut read_ns) = (0.0, 0.0);
        // The application's own POSIX requests (beneath MPI-IO they are ROMIO's).
        for r in c.own_posix() {
            for (ops, seq, hist, bytes, time, reading) in [
                (
                    "POSIX_READS",
                    "POSIX_SEQ_READS",
                    "POSIX_SIZE_READ_",
                    "POSIX_BYTES_READ",
                    "POSIX_F_READ_TIME",
                    true,
                ),
                (
                    "POSIX_WRITES",
                    "POSIX_SEQ_WRITES",
                    "POSIX_SIZE_WRITE_",
                    "POSIX_BYTES_WRITTEN",
                    "POSIX_F_WRITE_TIME",
                    false,
                ),
            ] {
                let n = r.get(ops);
                if n <= 0.0 {
                    continue;
                }
                // Darshan: SEQ counts requests at a higher offset than the previous one
                // (contiguous or forward strides); the others are random. Only the share
                // below max_bytes (the size histogram) counts, each request taking the
                // record's mean size and time.
                let small: f64 = r
                    .histogram(hist)
                    .iter()
                    .filter(|(_, lo, _)| *lo < self.max_bytes as u64)
                    .map(|(k, _, _)| k)
                    .sum();
                let rnd = ((n - r.get(seq)).max(0.0) * util::ratio(small, n)).round();
                let (size, ns) = (r.get(bytes) / n, r.ns(time) / n);
                let part = |k: f64| Requests {
                    count: k as u64,
                    bytes: (k * size).round() as u64,
                    ns: (k * ns).round() as i64,
                };
                random.merge(&part(rnd));
                sequential.merge(&part(n - rnd));
                by.at((r.rank, r.file)).merge(&part(rnd));
                if reading {
                    reads += rnd;
                    read_ns += rnd * ns;
                }
            }
        }
        self.judge(
            &Seen {
                random,
                sequential,
                by: &by,
                reads: reads as u64,
                read_ns: read_ns.round() as i64,
                source: "Darshan counters POSIX_SEQ_*, the size histograms, each request at \
                         its record's mean size and time",
            },
            ctx,
        )
    }
}

impl RandomAccess {
    /// The finding, if enough small requests are random.
    fn judge(&self, s: &Seen<'_>, ctx: &Context<'_>) -> Vec<Finding> {
        let r = s.random;
        let classified = r.count + s.sequential.count;
        let share = util::ratio(r.count as f64, classified as f64);
        if r.count < self.min_requests || r.count == 0 || share < self.min_share {
            return Vec::new();
        }
        // Against the sequential requests of the same run: the random ones' time beyond what
        // their bytes take at the sequential speed. No sequential requests: no estimate.
        let seq = s.sequential;
        let cost = if seq.bytes > 0 {
            let needed = r.bytes as f64 * seq.ns as f64 / seq.bytes as f64;
            util::per_rank((r.ns as f64 - needed).max(0.0), ctx)
        } else {
            0
        };
        let mut n = Numbers::default();
        n.int("random_requests", r.count as i64)
            .int("sequential_requests", seq.count as i64)
            .float("random_share", share)
            .int("random_bytes", r.bytes as i64)
            .float(
                "mean_random_bytes",
                util::ratio(r.bytes as f64, r.count as f64),
            )
            .int("random_time_ns", r.ns)
            .int("random_reads", s.reads as i64)
            .text("source", s.source);
        if seq.bytes > 0 {
            n.float(
                "random_ns_per_byte",
                util::ratio(r.ns as f64, r.bytes as f64),
            )
            .float(
                "sequential_ns_per_byte",
                util::ratio(seq.ns as f64, seq.bytes as f64),
            );
        }
        let by_file = s.by.group(|k| k.1, Requests::merge);
        let by_rank = s.by.group(|k| k.0, Requests::merge);
        let k = self.general.worst;
        let mut worst = Vec::new();
        for (f, a) in util::top(by_file.iter().collect(), k, |(_, a)| a.ns) {
            worst.push(format!(
                "file {}: {} random requests, {}",
                util::file_name(ctx, *f),
                a.count,
                units::duration_prose(a.ns)
            ));
        }
        // Rank -1: a Darshan record reduced over every rank, no rank to name.
        for (rk, a) in util::top(
            by_rank.iter().filter(|(r, _)| **r >= 0).collect(),
            k,
            |(_, a)| a.ns,
        ) {
            worst.push(format!(
                "{}: {} random requests, {}",
                util::rank_name(ctx, *rk),
                a.count,
                units::duration_prose(a.ns)
            ));
        }
        // The remedy follows the direction that took most of the random requests' time.
        let reads = s.read_ns * 2 > r.ns;
        let remedy = if reads {
            "Read in offset order: sort the requests by offset before issuing them, or read \
             the needed range in one large request and index it in memory; through MPI-IO, a \
             file view with a collective read (MPI_File_read_all) lets ROMIO sort and merge \
             the pieces of all ranks."
        } else {
            "Write in offset order: collect the records in memory and write them sorted, in \
             large blocks; through MPI-IO, a file view with a collective write \
             (MPI_File_write_all) lets ROMIO sort and merge the pieces of all ranks."
        };
        vec![self.general.finding(
            ctx,
            ID,
            cost,
            format!(
                "Random access: {} of the small requests jump around the file",
                units::pct(share)
            ),
            Evidence {
                summary: format!(
                    "{} of {classified} requests below {} neither continue the previous one \
                     nor keep its stride ({} on average, {} summed over ranks){} ({}).",
                    r.count,
                    units::bytes(self.max_bytes as u64),
                    units::bytes(util::ratio(r.bytes as f64, r.count as f64) as u64),
                    units::duration_prose(r.ns),
                    if seq.bytes > 0 {
                        format!(
                            "; per byte they take {:.1}x the sequential requests",
                            util::ratio(
                                util::ratio(r.ns as f64, r.bytes as f64),
                                util::ratio(seq.ns as f64, seq.bytes as f64)
                            )
                        )
                    } else {
                        "; no sequential requests to compare, so no cost estimate".into()
                    },
                    s.source
                ),
                numbers: n.0,
                worst,
            },
            remedy.into(),
        )]
    }
}

#[cfg(test)]
mod tests {
    use super::super::counters::testing::counters;
    use super::*;
    use crate::testutil::{ev, findings_from_counters, flt, none, num, one, Fx};

    /// 1 rank: 20 sequential preads of 4 KiB (2 us each), then 200 preads of 4 KiB (20 us)
    /// at scattered offsets (or in order when `random` is false).
    fn job(random: bool) -> Fx {
        let mut fx = Fx::new(1);
        let f = fx.file("/scratch/table.db");
        let mut t = 10_000;
        for i in 0..20u64 {
            fx.push(
                0,
                ev("pread", t, 2_000).object(f).size(4096).offset(i * 4096),
            );
            t += 3_000;
        }
        for i in 0..200u64 {
            let block = if random {
                (i * i * 31 + i * 17) % 1000
            } else {
                20 + i
            };
            fx.push(
                0,
                ev("pread", t, 20_000)
                    .object(f)
                    .size(4096)
                    .offset(block * 4096 + 1_000_000),
            );
            t += 30_000;
        }
        fx
    }

    #[test]
    fn scattered_small_reads_fire() {
        let dir = tempfile::tempdir().expect("tmp");
        let t = job(true).build(dir.path());
        let f = one(&t, ID);
        // The first permuted read follows the sequential run with a jump: random too.
        assert_eq!(num(&f, "random_requests"), 200);
        assert_eq!(num(&f, "sequential_requests"), 19);
        assert_eq!(flt(&f, "random_share"), 0.9132);
        assert_eq!(num(&f, "random_time_ns"), 4_000_000);
        // 200 x 20 us minus 200 x 4 KiB at 2 us per 4 KiB.
        assert_eq!(f.cost_ns, 4_000_000 - 400_000);
        assert!(f.remedy.starts_with("Read in offset order"));
    }

    #[test]
    fn near_miss_in_order() {
        let dir = tempfile::tempdir().expect("tmp");
        none(&job(false).build(dir.path()), ID);
    }

    /// 1 rank (1 s job): a record of 1000 reads of 4 KiB, `seq` of them sequential, in 0.1 s,
    /// and another file read sequentially (500 reads) at 10x the speed per byte.
    fn from_counters(seq: f64) -> Vec<Finding> {
        let dir = tempfile::tempdir().expect("tmp");
        let mut fx = Fx::new(1);
        let f = fx.file("/scratch/index.db");
        let g = fx.file("/scratch/data.bin");
        fx.push(0, ev("MPI_Barrier", 0, 1_000_000_000));
        let t = fx.build(dir.path());
        let c = counters(&[
            ("POSIX", 0, f, "POSIX_READS", 1000.0),
            ("POSIX", 0, f, "POSIX_SEQ_READS", seq),
            ("POSIX", 0, f, "POSIX_SIZE_READ_1K_10K", 1000.0),
            ("POSIX", 0, f, "POSIX_BYTES_READ", 4096000.0),
            ("POSIX", 0, f, "POSIX_F_READ_TIME", 0.1),
            ("POSIX", 0, g, "POSIX_READS", 500.0),
            ("POSIX", 0, g, "POSIX_SEQ_READS", 500.0),
            ("POSIX", 0, g, "POSIX_SIZE_READ_1K_10K", 500.0),
            ("POSIX", 0, g, "POSIX_BYTES_READ", 2048000.0),
            ("POSIX", 0, g, "POSIX_F_READ_TIME", 0.005),
        ]);
        findings_from_counters(&t, &c, ID)
    }

    #[test]
    fn counters_random_reads_fire_and_sequential_do_not() {
        let f = from_counters(100.0);
        assert_eq!(f.len(), 1);
        assert_eq!(num(&f[0], "random_requests"), 900);
        assert_eq!(num(&f[0], "sequential_requests"), 600);
        assert_eq!(num(&f[0], "random_reads"), 900);
        // 90 ms of random reads; the sequential ones (100 of the first file at 100 us, 500
        // of the second at 10 us: 15 ms for 600 x 4 KiB) would move their bytes in 22.5 ms.
        assert_eq!(num(&f[0], "random_time_ns"), 90_000_000);
        assert_eq!(f[0].cost_ns, 67_500_000);
        assert!(from_counters(990.0).is_empty());
    }
}
