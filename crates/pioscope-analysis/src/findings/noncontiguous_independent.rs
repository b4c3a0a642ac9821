//! `noncontiguous-independent`: ranks access a shared file through noncontiguous views with
//! independent calls, so each rank's request is a scatter of small pieces the storage serves
//! one rank at a time. Collective calls would let ROMIO merge the pieces of all ranks.
//! A call counts as noncontiguous when the view in force has a filetype smaller than its
//! extent (settings.parquet `view.*`) or when ROMIO split it into several POSIX requests.

use std::collections::{BTreeMap, BTreeSet};

use pioscope_trace::functions::kind_of;
use pioscope_trace::store::Event;
use pioscope_trace::units;
use pioscope_trace::{Layer, OpKind};

use super::config::Config;
use super::counters::{names, Counters};
use super::data_sieving::collective_form;
use super::dispatch::{Interest, CALL, DATA, IN_INDEPENDENT, POSIX};
use super::util::{self, Call, Facts, General, Numbers, PerCall, Requests};
use super::{Evidence, Finding, Rule};
use crate::pass::Context;

/// Rule id.
pub(crate) const ID: &str = "noncontiguous-independent";

#[derive(Debug, Default)]
struct FileAcc {
    calls: u64,
    requested: u64,
    call_ns: i64,
    posix: Requests,
    ranks: BTreeSet<i32>,
    reads: u64,
    read_ns: i64,
    /// Time in each function.
    by_func: BTreeMap<&'static str, i64>,
    density: Option<f64>,
}

/// See the module doc.
pub(crate) struct NoncontiguousIndependent {
    general: General,
    min_calls: u64,
    min_ranks: usize,
    calls: PerCall<Requests>,
    by_file: BTreeMap<i32, FileAcc>,
    by_rank: BTreeMap<i32, (u64, i64)>,
}

impl NoncontiguousIndependent {
    pub(crate) fn new(config: &Config) -> Self {
        let s = config.section(ID);
        NoncontiguousIndependent {
            general: General::new(config),
            min_calls: s.u64("min_calls"),
            min_ranks: s.u64("min_ranks") as usize,
            calls: PerCall::default(),
            by_file: BTreeMap::new(),
            by_rank: BTreeMap::new(),
        }
    }

    fn close(&mut self, c: Call, b: Requests, ctx: &Context<'_>) {
        let Some(file) = c.file else { return };
        // The view in force, read once for both questions (noncontiguous, and the density).
        let view = ctx.hints.view(c.rank, file, c.start);
        if !view.is_some_and(|v| v.noncontiguous()) && b.count < 2 {
            return;
        }
        let a = self.by_file.entry(file).or_default();
        a.calls += 1;
        a.requested += c.size.max(0) as u64;
        a.call_ns += c.end - c.start;
        a.posix.merge(&b);
        a.ranks.insert(c.rank);
        if c.kind == OpKind::Read {
            a.reads += 1;
            a.read_ns += c.end - c.start;
        }
        *a.by_func.entry(c.func).or_default() += c.end - c.start;
        if a.density.is_none() {
            a.density = view.and_then(|v| v.density());
        }
        let r = self.by_rank.entry(c.rank).or_default();
        r.0 += 1;
        r.1 += c.end - c.start;
    }
}

impl Rule for NoncontiguousIndependent {
    fn visit(&mut self, e: &Event<'_>, fx: &Facts, ctx: &Context<'_>) {
        if let Some(c) = fx.call {
            let tracked = c.data() && !c.collective;
            if let Some((c, b)) = self.calls.next(e, c, tracked) {
                self.close(c, b, ctx);
            }
            return;
        }
        if e.layer != Layer::Posix || !matches!(fx.kind, OpKind::Read | OpKind::Write) {
            return;
        }
        let Some(p) = fx.parent else { return };
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
        Interest::any_of(&[CALL, POSIX | IN_INDEPENDENT | DATA])
    }

    fn conclude(&self, ctx: &Context<'_>) -> Vec<Finding> {
        self.judge(&self.by_file, &self.by_rank, "traced calls", ctx)
    }

    fn judge_counters(&self, c: &Counters, ctx: &Context<'_>) -> Vec<Finding> {
        let all_ranks: BTreeSet<i32> = (0..util::rank_count(ctx) as i32).collect();
        let mut by_file: BTreeMap<i32, FileAcc> = BTreeMap::new();
        let mut by_rank: BTreeMap<i32, (u64, i64)> = BTreeMap::new();
        // Per file and direction: independent calls where the file has no collective one.
        let mut posix: BTreeMap<i32, Requests> = BTreeMap::new();
        for r in c.records(names::POSIX) {
            posix.entry(r.file).or_default().merge(&Requests {
                count: r.sum(&["POSIX_READS", "POSIX_WRITES"]) as u64,
                bytes: r.sum(&["POSIX_BYTES_READ", "POSIX_BYTES_WRITTEN"]) as u64,
                ns: (r.ns("POSIX_F_READ_TIME") + r.ns("POSIX_F_WRITE_TIME")).round() as i64,
            });
        }
        let mut collective: BTreeMap<(i32, bool), f64> = BTreeMap::new();
        for r in c.records(names::MPIIO) {
            *collective.entry((r.file, true)).or_default() += r.get("MPIIO_COLL_READS");
            *collective.entry((r.file, false)).or_default() += r.get("MPIIO_COLL_WRITES");
        }
        for r in c.records(names::MPIIO) {
            for (reading, calls, bytes, time, func) in [
                (
                    true,
                    "MPIIO_INDEP_READS",
                    "MPIIO_BYTES_READ",
                    "MPIIO_F_READ_TIME",
                    "MPI_File_read",
                ),
                (
                    false,
                    "MPIIO_INDEP_WRITES",
                    "MPIIO_BYTES_WRITTEN",
                    "MPIIO_F_WRITE_TIME",
                    "MPI_File_write",
                ),
            ] {
                let n = r.get(calls);
                if n <= 0.0 || collective.get(&(r.file, reading)).copied().unwrap_or(0.0) > 0.0 {
                    continue;
                }
                let ns = r.ns(time).round() as i64;
                let a = by_file.entry(r.file).or_default();
                a.calls += n as u64;
                a.requested += r.get(bytes) as u64;
                a.call_ns += ns;
                if reading {
                    a.reads += n as u64;
                    a.read_ns += ns;
                }
                *a.by_func.entry(func).or_default() += ns;
                if r.shared() {
                    a.ranks.extend(all_ranks.iter().copied());
                } else {
                    a.ranks.insert(r.rank);
                    let b = by_rank.entry(r.rank).or_default();
                    b.0 += n as u64;
                    b.1 += ns;
                }
            }
        }
        // Noncontiguous: ROMIO split the calls into several POSIX requests each (Darshan
        // records no views).
        by_file.retain(|f, a| {
            a.posix = posix.get(f).copied().unwrap_or_default();
            a.posix.count >= 2 * a.calls
        });
        self.judge(
            &by_file,
            &by_rank,
            "Darshan counters MPIIO_INDEP_*, MPIIO_COLL_* (none on the file), POSIX requests \
             beneath",
            ctx,
        )
    }
}

impl NoncontiguousIndependent {
    /// The finding, if enough independent noncontiguous calls hit shared files.
    fn judge(
        &self,
        by_file: &BTreeMap<i32, FileAcc>,
        by_rank: &BTreeMap<i32, (u64, i64)>,
        source: &str,
        ctx: &Context<'_>,
    ) -> Vec<Finding> {
        let files: Vec<(&i32, &FileAcc)> = by_file
            .iter()
            .filter(|(_, a)| a.ranks.len() >= self.min_ranks)
            .collect();
        let calls: u64 = files.iter().map(|(_, a)| a.calls).sum();
        if calls < self.min_calls || calls == 0 {
            return Vec::new();
        }
        let requested: u64 = files.iter().map(|(_, a)| a.requested).sum();
        let call_ns: i64 = files.iter().map(|(_, a)| a.call_ns).sum();
        let posix_req: u64 = files.iter().map(|(_, a)| a.posix.count).sum();
        let posix_bytes: u64 = files.iter().map(|(_, a)| a.posix.bytes).sum();
        let posix_ns: i64 = files.iter().map(|(_, a)| a.posix.ns).sum();
        let reads: u64 = files.iter().map(|(_, a)| a.reads).sum();
        let ranks: BTreeSet<i32> = files
            .iter()
            .flat_map(|(_, a)| a.ranks.iter().copied())
            .collect();
        // Collective I/O would hand the storage large contiguous requests: the requested
        // bytes at the POSIX speed seen beneath these calls. The rest is the cost.
        let needed = requested as f64 * util::ratio(posix_ns as f64, posix_bytes as f64);
        let cost = util::per_rank((call_ns as f64 - needed).max(0.0), ctx);

        let mut n = Numbers::default();
        n.int("calls", calls as i64)
            .int("read_calls", reads as i64)
            .int("write_calls", (calls - reads) as i64)
            .int("ranks", ranks.len() as i64)
            .int("files", files.len() as i64)
            .int("requested_bytes", requested as i64)
            .int("call_time_ns", call_ns)
            .int("posix_requests", posix_req as i64)
            .float(
                "posix_per_call",
                util::ratio(posix_req as f64, calls as f64),
            )
            .int("posix_bytes", posix_bytes as i64)
            .text("source", source);
        let k = self.general.worst;
        let read_ns: i64 = files.iter().map(|(_, a)| a.read_ns).sum();
        let reading = read_ns * 2 > call_ns;
        let top_files = util::top(files, k, |(_, a)| a.call_ns);
        if let Some(d) = top_files.first().and_then(|(_, a)| a.density) {
            n.float("view_density", d);
        }
        let mut worst = Vec::new();
        for (f, a) in &top_files {
            let dens = a
                .density
                .map(|d| format!(", view holds {} of its extent", units::pct(d)))
                .unwrap_or_default();
            worst.push(format!(
                "file {}: {} independent noncontiguous calls by {} ranks, {} in them{dens}",
                util::file_name(ctx, **f),
                a.calls,
                a.ranks.len(),
                units::duration_prose(a.call_ns)
            ));
        }
        for (r, (c, ns)) in util::top(
            by_rank.iter().filter(|(r, _)| ranks.contains(r)).collect(),
            k,
            |(_, (_, ns))| *ns,
        ) {
            worst.push(format!(
                "{}: {c} calls, {}",
                util::rank_name(ctx, *r),
                units::duration_prose(*ns)
            ));
        }
        // The remedy follows the time: the function and the direction (read or write) that
        // took most of it.
        let func = top_files
            .first()
            .and_then(|(_, a)| {
                a.by_func
                    .iter()
                    .filter(|(f, _)| (kind_of(Layer::MpiIo, f) == OpKind::Read) == reading)
                    .max_by_key(|(_, ns)| **ns)
                    .map(|(f, _)| *f)
            })
            .unwrap_or(if reading {
                "MPI_File_read"
            } else {
                "MPI_File_write"
            });
        worst.push(format!("call {func}"));
        let coll = collective_form(func);
        let hint = if reading {
            "romio_cb_read=enable"
        } else {
            "romio_cb_write=enable"
        };
        vec![self.general.finding(
            ctx,
            ID,
            cost,
            format!(
                "Noncontiguous independent I/O on a shared file: {calls} {func} calls by {} ranks",
                ranks.len()
            ),
            Evidence {
                summary: format!(
                    "{} ranks access {} shared file(s) through noncontiguous views with \
                     independent calls: {calls} calls asking {} took {} summed over ranks, \
                     with {posix_req} POSIX requests beneath ({:.1} per call; {source}).",
                    ranks.len(),
                    top_files.len(),
                    units::bytes(requested),
                    units::duration_prose(call_ns),
                    util::ratio(posix_req as f64, calls as f64)
                ),
                numbers: n.0,
                worst,
            },
            format!(
                "Use the collective call {coll} with the same view on every rank: ROMIO's \
                 two-phase I/O then merges the interleaved pieces of all ranks into large \
                 contiguous requests issued by a few aggregators ({hint} makes sure \
                 collective buffering is used)."
            ),
        )]
    }
}

#[cfg(test)]
mod tests {
    use super::super::counters::testing::counters;
    use super::*;
    use crate::testutil::{ev, findings_from_counters, flt, none, num, one, Fx};

    /// `ranks` ranks x 5 MPI_File_write of 1 KiB through a view of density 1/4, each split
    /// into 4 pwrites of 256 B (1 us each).
    fn job(ranks: usize, calls: u64, view: bool) -> Fx {
        job_of(("MPI_File_write", "pwrite"), ranks, calls, view)
    }

    /// As `job`, with (MPI-IO call, POSIX call) `funcs` of one direction.
    fn job_of(funcs: (&str, &str), ranks: usize, calls: u64, view: bool) -> Fx {
        let mut fx = Fx::new(ranks);
        let f = fx.file("/scratch/shared.dat");
        for r in 0..ranks {
            let extent = if view { "4096" } else { "1024" };
            fx.setting(
                r,
                f,
                "MPI_File_set_view",
                1_500,
                &[
                    ("view.filetype_size", "1024"),
                    ("view.filetype_extent", extent),
                ],
            );
            for i in 0..calls {
                let t = 2_000 + i * 10_000;
                fx.push(
                    r,
                    ev(funcs.0, t, 9_000)
                        .object(f)
                        .size(1024)
                        .offset(r as u64 * 256),
                );
                if view {
                    for j in 0..4 {
                        fx.push(
                            r,
                            ev(funcs.1, t + 100 + j * 1_500, 1_000)
                                .object(f)
                                .size(256)
                                .offset(j * 1024)
                                .depth(1),
                        );
                    }
                } else {
                    fx.push(
                        r,
                        ev(funcs.1, t + 100, 4_000)
                            .object(f)
                            .size(1024)
                            .offset(i * 1024)
                            .depth(1),
                    );
                }
            }
        }
        fx
    }

    /// Issue 13: noncontiguous reads are told to read collectively, with romio_cb_read.
    #[test]
    fn noncontiguous_reads_get_a_read_remedy() {
        let dir = tempfile::tempdir().expect("tmp");
        let f = one(
            &job_of(("MPI_File_read", "pread"), 4, 5, true).build(dir.path()),
            ID,
        );
        assert!(f.remedy.contains("MPI_File_read_all"), "{}", f.remedy);
        assert!(f.remedy.contains("romio_cb_read=enable"), "{}", f.remedy);
        assert!(!f.remedy.contains("write"), "{}", f.remedy);
    }

    #[test]
    fn interleaved_independent_writes_fire() {
        let dir = tempfile::tempdir().expect("tmp");
        let t = job(2, 5, true).build(dir.path());
        let f = one(&t, ID);
        assert_eq!(num(&f, "calls"), 10);
        assert_eq!(num(&f, "ranks"), 2);
        assert_eq!(num(&f, "posix_requests"), 40);
        assert_eq!(flt(&f, "posix_per_call"), 4.0);
        assert_eq!(flt(&f, "view_density"), 0.25);
        // 10 x 9 us, minus 10 KiB at 1 us per 256 B, over 2 ranks.
        assert_eq!(f.cost_ns, (90_000 - 40_000) / 2);
        assert!(f.remedy.contains("MPI_File_write_all"));
    }

    #[test]
    fn near_miss_contiguous_or_one_rank() {
        let dir = tempfile::tempdir().expect("tmp");
        none(&job(2, 5, false).build(&dir.path().join("contig")), ID);
        none(&job(1, 10, true).build(&dir.path().join("one")), ID);
    }

    /// 4 ranks (2 s job) sharing a file: 100 independent MPI-IO writes of 100 MiB in 2 s
    /// summed over ranks, `coll` collective ones, 400 POSIX writes beneath in 0.4 s.
    fn from_counters(coll: f64) -> Vec<Finding> {
        let dir = tempfile::tempdir().expect("tmp");
        let mut fx = Fx::new(4);
        let f = fx.file("/scratch/shared.dat");
        fx.push(0, ev("MPI_Barrier", 0, 2_000_000_000));
        let t = fx.build(dir.path());
        let mib100 = (100u64 << 20) as f64;
        let c = counters(&[
            ("MPI-IO", -1, f, "MPIIO_INDEP_WRITES", 100.0),
            ("MPI-IO", -1, f, "MPIIO_COLL_WRITES", coll),
            ("MPI-IO", -1, f, "MPIIO_BYTES_WRITTEN", mib100),
            ("MPI-IO", -1, f, "MPIIO_F_WRITE_TIME", 2.0),
            ("POSIX", -1, f, "POSIX_WRITES", 400.0),
            ("POSIX", -1, f, "POSIX_BYTES_WRITTEN", mib100),
            ("POSIX", -1, f, "POSIX_F_WRITE_TIME", 0.4),
        ]);
        findings_from_counters(&t, &c, ID)
    }

    #[test]
    fn counters_independent_split_writes_fire_and_collective_files_do_not() {
        let f = from_counters(0.0);
        assert_eq!(f.len(), 1);
        assert_eq!(num(&f[0], "calls"), 100);
        assert_eq!(num(&f[0], "ranks"), 4);
        assert_eq!(num(&f[0], "posix_requests"), 400);
        // 2 s of calls less 0.4 s the storage took for the bytes, over 4 ranks.
        assert_eq!(f[0].cost_ns, 400_000_000);
        assert!(f[0].remedy.contains("MPI_File_write_all"));
        assert!(from_counters(1.0).is_empty());
    }
}
