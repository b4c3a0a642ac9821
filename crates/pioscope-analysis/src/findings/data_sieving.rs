//! `data-sieving`: ROMIO's read-modify-write for independent noncontiguous writes. Beneath an
//! independent MPI-IO write, POSIX reads mean ROMIO read a whole sieve buffer
//! (`ind_wr_buffer_size`) to patch the requested pieces into it and write it back: the
//! storage moves the holes twice. The evidence is the volume moved against the volume asked.

use std::collections::BTreeMap;

use pioscope_trace::store::Event;
use pioscope_trace::units;
use pioscope_trace::{Layer, OpKind};

use super::config::Config;
use super::dispatch::{Interest, CALL, IN_INDEPENDENT, POSIX};
use super::util::{self, Call, Facts, General, Numbers, PerCall, Requests};
use super::{Evidence, Finding, Rule};
use crate::lookup::Keyed;
use crate::pass::Context;

/// Rule id.
pub(crate) const ID: &str = "data-sieving";

/// POSIX traffic beneath one MPI-IO write.
#[derive(Clone, Copy, Debug, Default)]
struct Beneath {
    read: Requests,
    write: Requests,
}

#[derive(Clone, Copy, Debug, Default)]
struct Acc {
    calls: u64,
    requested: u64,
    call_ns: i64,
    posix: Beneath,
}

impl Acc {
    fn add(&mut self, c: &Call, b: &Beneath) {
        self.calls += 1;
        self.requested += c.size.max(0) as u64;
        self.call_ns += c.end - c.start;
        self.posix.read.merge(&b.read);
        self.posix.write.merge(&b.write);
    }
}

/// See the module doc.
pub(crate) struct DataSieving {
    general: General,
    min_calls: u64,
    min_amplification: f64,
    calls: PerCall<Beneath>,
    total: Acc,
    by_rank: Keyed<i32, Acc>,
    by_file: Keyed<i32, Acc>,
    by_func: Keyed<&'static str, Acc>,
    /// ind_wr_buffer_size and romio_ds_write seen on the worst file's first sieved call.
    hints: BTreeMap<i32, (Option<i64>, Option<String>)>,
    /// The file of the last sieved call (its `hints` are known).
    hints_file: Option<i32>,
}

impl DataSieving {
    pub(crate) fn new(config: &Config) -> Self {
        let s = config.section(ID);
        DataSieving {
            general: General::new(config),
            min_calls: s.u64("min_calls"),
            min_amplification: s.f64("min_amplification"),
            calls: PerCall::default(),
            total: Acc::default(),
            by_rank: Keyed::default(),
            by_file: Keyed::default(),
            by_func: Keyed::default(),
            hints: BTreeMap::new(),
            hints_file: None,
        }
    }

    fn close(&mut self, c: Call, b: Beneath, ctx: &Context<'_>) {
        if b.read.count == 0 {
            return;
        }
        self.total.add(&c, &b);
        self.by_rank.at(c.rank).add(&c, &b);
        let file = c.file.unwrap_or(-1);
        self.by_file.at(file).add(&c, &b);
        self.by_func.at(c.func).add(&c, &b);
        // Consecutive calls mostly share their file: its hints are known then.
        if self.hints_file == Some(file) {
            return;
        }
        self.hints_file = Some(file);
        self.hints.entry(file).or_insert_with(|| {
            let s = &ctx.hints;
            let buf = s.at::<i64>(c.rank, file, "ind_wr_buffer_size", c.start);
            let ds = s
                .get(c.rank, file, "romio_ds_write", c.start)
                .map(str::to_string);
            (buf, ds)
        });
    }
}

impl Rule for DataSieving {
    fn visit(&mut self, e: &Event<'_>, fx: &Facts, ctx: &Context<'_>) {
        if let Some(c) = fx.call {
            let tracked = c.kind == OpKind::Write && !c.collective;
            if let Some((c, b)) = self.calls.next(e, c, tracked) {
                self.close(c, b, ctx);
            }
            return;
        }
        if e.layer != Layer::Posix {
            return;
        }
        let Some(p) = fx.parent else { return };
        let Some(b) = self.calls.child(e, p.id) else {
            return;
        };
        match fx.kind {
            OpKind::Read => {
                b.read.add(e);
            }
            OpKind::Write => {
                b.write.add(e);
            }
            _ => {}
        }
    }

    fn finish(&mut self, ctx: &Context<'_>) {
        for (c, b) in self.calls.drain() {
            self.close(c, b, ctx);
        }
    }

    fn interest(&self) -> Interest {
        Interest::any_of(&[CALL, POSIX | IN_INDEPENDENT])
    }

    fn conclude(&self, ctx: &Context<'_>) -> Vec<Finding> {
        let t = &self.total;
        let moved = t.posix.read.bytes + t.posix.write.bytes;
        let amp = util::ratio(moved as f64, t.requested as f64);
        if t.calls < self.min_calls || t.calls == 0 || amp < self.min_amplification {
            return Vec::new();
        }
        // Without sieving the call would write the requested bytes at the POSIX write speed
        // seen beneath it; the rest of the call's time is the sieve: the reads, the extra
        // writes, the copying into the buffer and the file locks.
        let ns_per_byte = util::ratio(t.posix.write.ns as f64, t.posix.write.bytes as f64);
        let needed = t.requested as f64 * ns_per_byte;
        let cost = util::per_rank((t.call_ns as f64 - needed).max(0.0), ctx);

        let worst_file = self
            .by_file
            .entries()
            .into_iter()
            .max_by_key(|(_, a)| a.call_ns)
            .map(|(f, _)| f)
            .unwrap_or(-1);
        let (buf, ds) = self.hints.get(&worst_file).cloned().unwrap_or((None, None));

        let mut n = Numbers::default();
        n.int("calls", t.calls as i64)
            .int("requested_bytes", t.requested as i64)
            .int("read_bytes", t.posix.read.bytes as i64)
            .int("written_bytes", t.posix.write.bytes as i64)
            .float("amplification", amp)
            .int("posix_reads", t.posix.read.count as i64)
            .int("posix_writes", t.posix.write.count as i64)
            .int("posix_read_time_ns", t.posix.read.ns)
            .int("posix_write_time_ns", t.posix.write.ns)
            .int("call_time_ns", t.call_ns)
            .int("ranks", self.by_rank.entries().len() as i64);
        if let Some(b) = buf {
            n.int("ind_wr_buffer_size", b);
        }
        if let Some(d) = &ds {
            n.text("romio_ds_write", d);
        }

        let k = self.general.worst;
        let mut worst = Vec::new();
        for (f, a) in util::top(self.by_file.entries(), k, |(_, a)| a.call_ns) {
            worst.push(format!(
                "file {}: {} sieved writes, {} asked, {} read + {} written",
                util::file_name(ctx, f),
                a.calls,
                units::bytes(a.requested),
                units::bytes(a.posix.read.bytes),
                units::bytes(a.posix.write.bytes)
            ));
        }
        for (r, a) in util::top(self.by_rank.entries(), k, |(_, a)| a.call_ns) {
            worst.push(format!(
                "{}: {} calls, {} in them, {:.1}x the bytes asked",
                util::rank_name(ctx, r),
                a.calls,
                units::duration_prose(a.call_ns),
                util::ratio(
                    (a.posix.read.bytes + a.posix.write.bytes) as f64,
                    a.requested as f64
                )
            ));
        }
        for (f, a) in util::top(self.by_func.entries(), k, |(_, a)| a.call_ns) {
            worst.push(format!(
                "call {f}: {} read-modify-writes, {} POSIX reads beneath",
                a.calls, a.posix.read.count
            ));
        }
        let func = self
            .by_func
            .entries()
            .into_iter()
            .max_by_key(|(_, a)| a.call_ns)
            .map(|(f, _)| f)
            .unwrap_or("MPI_File_write");
        let coll = collective_form(func);
        let buf_text = buf
            .map(|b| format!(" (sieve buffer ind_wr_buffer_size={b})"))
            .unwrap_or_default();
        vec![self.general.finding(
            ctx,
            ID,
            cost,
            format!(
                "Data sieving read-modify-write: {:.1}x the bytes asked moved by {func}",
                amp
            ),
            Evidence {
                summary: format!(
                    "{} independent writes asked for {} but ROMIO read {} and wrote {} \
                     beneath them{buf_text}: {:.1}x the volume, {} in these calls summed \
                     over ranks.",
                    t.calls,
                    units::bytes(t.requested),
                    units::bytes(t.posix.read.bytes),
                    units::bytes(t.posix.write.bytes),
                    amp,
                    units::duration_prose(t.call_ns)
                ),
                numbers: n.0,
                worst,
            },
            format!(
                "Write collectively: {coll} with the same file view lets ROMIO's two-phase \
                 I/O merge the interleaved pieces of all ranks, so each aggregator reads and \
                 writes its file domain once instead of every rank sieving the whole extent \
                 (set romio_cb_write=enable to force it). If the pieces are large, turn \
                 sieving off instead: romio_ds_write=disable. If each rank's data can be \
                 made contiguous in the file (one block per rank), no sieving is needed."
            ),
        )]
    }
}

/// The collective form of an independent data call: MPI_File_write -> MPI_File_write_all.
pub(crate) fn collective_form(func: &str) -> String {
    match func {
        "MPI_File_write" | "MPI_File_read" | "MPI_File_write_at" | "MPI_File_read_at" => {
            format!("{func}_all")
        }
        "MPI_File_iwrite" | "MPI_File_iread" | "MPI_File_iwrite_at" | "MPI_File_iread_at" => {
            format!("{func}_all")
        }
        "MPI_File_write_shared" => "MPI_File_write_ordered".into(),
        "MPI_File_read_shared" => "MPI_File_read_ordered".into(),
        _ => "MPI_File_write_all".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{ev, flt, none, num, one, Fx};

    /// 2 ranks x `calls` MPI_File_write of 1 KiB at 10 us intervals, each with a pread and a
    /// pwrite of `block` bytes beneath (or no pread when `rmw` is false).
    fn job(calls: u64, block: u64, rmw: bool) -> Fx {
        let mut fx = Fx::new(2);
        let f = fx.file("/scratch/shared.dat");
        for r in 0..2 {
            fx.setting(
                r,
                f,
                "MPI_File_open",
                1_500,
                &[
                    ("ind_wr_buffer_size", "524288"),
                    ("romio_ds_write", "automatic"),
                ],
            );
            for i in 0..calls {
                let t = 2_000 + i * 10_000;
                fx.push(
                    r,
                    ev("MPI_File_write", t, 8_000)
                        .object(f)
                        .size(1024)
                        .offset(i * 4096),
                );
                if rmw {
                    fx.push(
                        r,
                        ev("pread", t + 100, 2_000)
                            .object(f)
                            .size(block)
                            .offset(i * 4096)
                            .depth(1),
                    );
                }
                fx.push(
                    r,
                    ev("pwrite", t + 3_000, 4_000)
                        .object(f)
                        .size(block)
                        .offset(i * 4096)
                        .depth(1),
                );
            }
        }
        fx
    }

    #[test]
    fn reads_beneath_independent_writes_fire_with_the_volumes() {
        let dir = tempfile::tempdir().expect("tmp");
        let t = job(4, 4096, true).build(dir.path());
        let f = one(&t, ID);
        assert_eq!(num(&f, "calls"), 8);
        assert_eq!(num(&f, "requested_bytes"), 8 * 1024);
        assert_eq!(num(&f, "read_bytes"), 8 * 4096);
        assert_eq!(num(&f, "written_bytes"), 8 * 4096);
        assert_eq!(flt(&f, "amplification"), 8.0);
        assert_eq!(num(&f, "posix_read_time_ns"), 8 * 2_000);
        assert_eq!(num(&f, "ind_wr_buffer_size"), 524288);
        // 8 calls x 8 us, minus 8 KiB at the 4 us-per-4 KiB write speed, over 2 ranks.
        assert_eq!(f.cost_ns, (8 * 8_000 - 8 * 1_000) / 2);
        assert!(f.remedy.contains("MPI_File_write_all"), "{}", f.remedy);
        assert!(f.evidence.worst[0].contains("/scratch/shared.dat"));
    }

    #[test]
    fn near_miss_no_reads_or_little_extra_volume() {
        let dir = tempfile::tempdir().expect("tmp");
        none(&job(4, 4096, false).build(&dir.path().join("noread")), ID);
        // 1 KiB asked, 512 B read and 512 B written: amplification 1.
        none(&job(4, 512, true).build(&dir.path().join("small")), ID);
        // 2 sieved calls in all: below min_calls = 4.
        none(&job(1, 4096, true).build(&dir.path().join("few")), ID);
    }
}
