//! `split-requests`: large MPI-IO requests reach the storage as many small POSIX requests.
//! The application did the right thing (few large calls); the MPI-IO layer undid it, as in
//! the PIOsimHD study where 64 KiB appends became 512-byte writes until a ROMIO hint
//! (`romio_pvfs2_listio_write`) was set.

use pioscope_trace::store::Event;
use pioscope_trace::units;
use pioscope_trace::{Layer, OpKind};

use super::config::Config;
use super::dispatch::{Interest, CALL, IN_CALL, POSIX};
use super::util::{self, Call, Facts, General, Numbers, PerCall, Requests};
use super::{Evidence, Finding, Rule};
use crate::lookup::Keyed;
use crate::pass::Context;

/// Rule id.
pub(crate) const ID: &str = "split-requests";

#[derive(Clone, Copy, Debug, Default)]
struct Acc {
    calls: u64,
    requested: u64,
    posix: Requests,
    cost_ns: f64,
}

/// See the module doc.
pub(crate) struct SplitRequests {
    general: General,
    min_mpiio_bytes: i64,
    max_posix_bytes: f64,
    min_ratio: f64,
    min_calls: u64,
    calls: PerCall<Requests>,
    /// Large MPI-IO data calls seen (split or not).
    large_calls: u64,
    total: Acc,
    by_file: Keyed<i32, Acc>,
    by_rank: Keyed<i32, Acc>,
    by_func: Keyed<&'static str, Acc>,
    reads: u64,
    /// (romio_filesystem_type, romio_ds_write, romio_ds_read) of the first split call.
    hints: Option<(String, String, String)>,
}

impl SplitRequests {
    pub(crate) fn new(config: &Config) -> Self {
        let s = config.section(ID);
        SplitRequests {
            general: General::new(config),
            min_mpiio_bytes: s.u64("min_mpiio_bytes") as i64,
            max_posix_bytes: s.f64("max_posix_bytes"),
            min_ratio: s.f64("min_ratio"),
            min_calls: s.u64("min_calls"),
            calls: PerCall::default(),
            large_calls: 0,
            total: Acc::default(),
            by_file: Keyed::default(),
            by_rank: Keyed::default(),
            by_func: Keyed::default(),
            reads: 0,
            hints: None,
        }
    }

    fn close(&mut self, c: Call, b: Requests, ctx: &Context<'_>) {
        let mean = util::ratio(b.bytes as f64, b.count as f64);
        if (b.count as f64) < self.min_ratio || b.count < 2 || mean > self.max_posix_bytes {
            return;
        }
        // The POSIX requests are latency-bound: one request for the whole call would take
        // about one of them.
        let cost = b.ns as f64 * (1.0 - 1.0 / b.count as f64);
        for a in [
            &mut self.total,
            self.by_file.at(c.file.unwrap_or(-1)),
            self.by_rank.at(c.rank),
            self.by_func.at(c.func),
        ] {
            a.calls += 1;
            a.requested += c.size.max(0) as u64;
            a.posix.merge(&b);
            a.cost_ns += cost;
        }
        if c.kind == OpKind::Read {
            self.reads += 1;
        }
        if self.hints.is_none() {
            if let Some(f) = c.file {
                let s = &ctx.hints;
                let g = |k: &str| s.get(c.rank, f, k, c.start).unwrap_or("").to_string();
                self.hints = Some((
                    g("romio_filesystem_type"),
                    g("romio_ds_write"),
                    g("romio_ds_read"),
                ));
            }
        }
    }
}

impl Rule for SplitRequests {
    fn visit(&mut self, e: &Event<'_>, fx: &Facts, ctx: &Context<'_>) {
        if let Some(c) = fx.call {
            let tracked = c.data() && c.size >= self.min_mpiio_bytes;
            if tracked {
                self.large_calls += 1;
            }
            if let Some((c, b)) = self.calls.next(e, c, tracked) {
                self.close(c, b, ctx);
            }
            return;
        }
        if e.layer != Layer::Posix {
            return;
        }
        let Some(p) = fx.parent else { return };
        // Only the transfers in the call's direction: the reads of a read-modify-write are
        // `data-sieving`'s.
        if fx.kind != p.kind {
            return;
        }
        if let Some(b) = self.calls.child(e, p.id) {
            b.add(e);
        }
    }

    fn finish(&mut self, ctx: &Context<'_>) {
        for (c, b) in self.calls.drain() {
            self.close(c, b, ctx);
        }
    }

    fn interest(&self) -> Interest {
        Interest::any_of(&[CALL, POSIX | IN_CALL])
    }

    fn conclude(&self, ctx: &Context<'_>) -> Vec<Finding> {
        let t = &self.total;
        if t.calls < self.min_calls || t.calls == 0 {
            return Vec::new();
        }
        let cost = util::per_rank(t.cost_ns, ctx);
        let per_call = util::ratio(t.posix.count as f64, t.calls as f64);
        let mean_posix = util::ratio(t.posix.bytes as f64, t.posix.count as f64);
        let mean_call = util::ratio(t.requested as f64, t.calls as f64);
        let mut n = Numbers::default();
        n.int("calls", t.calls as i64)
            .int("large_calls", self.large_calls as i64)
            .int("requested_bytes", t.requested as i64)
            .int("posix_requests", t.posix.count as i64)
            .float("posix_per_call", per_call)
            .float("mean_posix_bytes", mean_posix)
            .int("posix_time_ns", t.posix.ns);
        let k = self.general.worst;
        let mut worst = Vec::new();
        for (f, a) in util::top(self.by_file.entries(), k, |(_, a)| a.cost_ns) {
            worst.push(format!(
                "file {}: {} calls split into {} POSIX requests",
                util::file_name(ctx, f),
                a.calls,
                a.posix.count
            ));
        }
        for (r, a) in util::top(self.by_rank.entries(), k, |(_, a)| a.cost_ns) {
            worst.push(format!(
                "{}: {} POSIX requests in {}",
                util::rank_name(ctx, r),
                a.posix.count,
                units::duration_prose(a.posix.ns)
            ));
        }
        let funcs = util::top(self.by_func.entries(), k, |(_, a)| a.cost_ns);
        for (f, a) in &funcs {
            worst.push(format!(
                "call {f}: {} calls of {} on average, {:.0} POSIX requests each",
                a.calls,
                units::bytes(a.requested / a.calls.max(1)),
                util::ratio(a.posix.count as f64, a.calls as f64)
            ));
        }
        let func = funcs.first().map(|(f, _)| *f).unwrap_or("MPI_File_write");
        let read = self.reads * 2 > t.calls;
        let (fs, ds_w, ds_r) = self.hints.clone().unwrap_or_default();
        let dir = if read { "read" } else { "write" };
        let ds = if read { ds_r } else { ds_w };
        let remedy = if fs.to_ascii_lowercase().contains("pvfs") {
            format!(
                "ROMIO's PVFS2 driver issues each contiguous piece on its own: set the hint \
                 romio_pvfs2_listio_{dir}=enable (MPI_Info_set at MPI_File_open) so one list \
                 I/O request carries all pieces of a call."
            )
        } else if ds == "disable" {
            format!(
                "Data sieving is off (romio_ds_{dir}=disable), so ROMIO issues every piece of \
                 the view separately: set romio_ds_{dir}=enable, or call the collective form \
                 so two-phase I/O merges the pieces (romio_cb_{dir}=enable)."
            )
        } else {
            format!(
                "ROMIO issues each contiguous piece of the request separately: describe the \
                 data with a file view whose pieces are larger, enable data sieving \
                 (romio_ds_{dir}=enable) or use the collective form of {func} so two-phase \
                 I/O merges the pieces (romio_cb_{dir}=enable)."
            )
        };
        vec![self.general.finding(
            ctx,
            ID,
            cost,
            format!(
                "Large MPI-IO requests split into small POSIX requests: {:.0} per call of {}",
                per_call,
                units::bytes(mean_call as u64)
            ),
            Evidence {
                summary: format!(
                    "{} {func} calls of {} on average became {} POSIX requests of {} on \
                     average ({:.0} per call), {} summed over ranks.",
                    t.calls,
                    units::bytes(mean_call as u64),
                    t.posix.count,
                    units::bytes(mean_posix as u64),
                    per_call,
                    units::duration_prose(t.posix.ns)
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
    use crate::testutil::{ev, flt, none, num, one, Fx};

    /// 1 rank, `calls` MPI_File_write of 64 KiB each split into `pieces` pwrites (1 us each).
    fn job(calls: u64, pieces: u64, fs: &str) -> Fx {
        let mut fx = Fx::new(1);
        let f = fx.file("/pvfs/app.log");
        fx.setting(
            0,
            f,
            "MPI_File_open",
            1_500,
            &[("romio_filesystem_type", fs)],
        );
        let piece = 65536 / pieces;
        for i in 0..calls {
            let t = 2_000 + i * 200_000;
            fx.push(
                0,
                ev("MPI_File_write", t, 150_000)
                    .object(f)
                    .size(65536)
                    .offset(i * 65536),
            );
            for j in 0..pieces {
                fx.push(
                    0,
                    ev("pwrite", t + 100 + j * 1_100, 1_000)
                        .object(f)
                        .size(piece)
                        .offset(i * 65536 + j * piece)
                        .depth(1),
                );
            }
        }
        fx
    }

    #[test]
    fn appends_split_into_512_byte_writes_fire_with_the_listio_hint() {
        let dir = tempfile::tempdir().expect("tmp");
        let t = job(4, 128, "PVFS2: the PVFS v2 or OrangeFS file system").build(dir.path());
        let f = one(&t, ID);
        assert_eq!(num(&f, "calls"), 4);
        assert_eq!(num(&f, "posix_requests"), 512);
        assert_eq!(flt(&f, "posix_per_call"), 128.0);
        assert_eq!(flt(&f, "mean_posix_bytes"), 512.0);
        assert_eq!(f.cost_ns, 4 * 127 * 1_000);
        assert!(
            f.remedy.contains("romio_pvfs2_listio_write=enable"),
            "{}",
            f.remedy
        );
    }

    #[test]
    fn near_miss_few_pieces_or_few_calls() {
        let dir = tempfile::tempdir().expect("tmp");
        none(&job(4, 4, "UFS").build(&dir.path().join("big")), ID);
        none(&job(3, 128, "UFS").build(&dir.path().join("few")), ID);
    }
}
