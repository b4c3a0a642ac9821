//! `file-per-process`: at scale, every rank writes files of its own. Each file costs creates,
//! opens and closes on the metadata server, all ranks at once, and leaves thousands of files
//! to manage afterwards. A file counts as one rank's when no other rank writes it.

use std::collections::BTreeMap;

use pioscope_trace::store::Event;
use pioscope_trace::units;
use pioscope_trace::OpKind;

use super::config::Config;
use super::dispatch::{Interest, TOP};
use super::util::{self, Facts, General, Numbers};
use super::{Evidence, Finding, Rule};
use crate::class;
use crate::lookup::Keyed;
use crate::pass::Context;

/// Rule id.
pub(crate) const ID: &str = "file-per-process";

#[derive(Clone, Copy, Debug, Default)]
struct FileAcc {
    writer: Option<i32>,
    shared: bool,
    bytes: u64,
    meta_ops: u64,
    meta_ns: i64,
}

/// See the module doc.
pub(crate) struct FilePerProcess {
    general: General,
    min_ranks: usize,
    files: Keyed<i32, FileAcc>,
}

impl FilePerProcess {
    pub(crate) fn new(config: &Config) -> Self {
        let s = config.section(ID);
        FilePerProcess {
            general: General::new(config),
            min_ranks: s.u64("min_ranks").max(2) as usize,
            files: Keyed::default(),
        }
    }
}

impl Rule for FilePerProcess {
    fn visit(&mut self, e: &Event<'_>, fx: &Facts, _ctx: &Context<'_>) {
        if !fx.top_level {
            return;
        }
        let Some(f) = e.file_id else { return };
        if fx.kind == OpKind::Write {
            let a = self.files.at(f);
            a.bytes += util::moved(e);
            match a.writer {
                None => a.writer = Some(e.rank),
                Some(w) if w != e.rank => a.shared = true,
                _ => {}
            }
        } else if fx.is(class::METADATA) {
            let a = self.files.at(f);
            a.meta_ops += 1;
            a.meta_ns += e.duration_ns;
        }
    }

    fn interest(&self) -> Interest {
        Interest::any_of(&[TOP])
    }

    fn conclude(&self, ctx: &Context<'_>) -> Vec<Finding> {
        let mut per_rank: BTreeMap<i32, (u64, u64, i64)> = BTreeMap::new();
        let mut meta_ns = 0i64;
        let mut meta_ops = 0u64;
        let mut bytes = 0u64;
        let mut files = 0u64;
        let all = self.files.entries();
        for (_, a) in &all {
            let (Some(w), false) = (a.writer, a.shared) else {
                continue;
            };
            let r = per_rank.entry(w).or_default();
            r.0 += 1;
            r.1 += a.bytes;
            r.2 += a.meta_ns;
            meta_ns += a.meta_ns;
            meta_ops += a.meta_ops;
            bytes += a.bytes;
            files += 1;
        }
        if per_rank.len() < self.min_ranks {
            return Vec::new();
        }
        // One shared file needs one create for the job; the per-rank files' metadata time
        // is the estimate, spread over the ranks.
        let cost = util::per_rank(meta_ns as f64, ctx);
        let ranks = per_rank.len();
        let mut n = Numbers::default();
        n.int("files", files as i64)
            .int("ranks", ranks as i64)
            .float("files_per_rank", files as f64 / ranks as f64)
            .int("bytes", bytes as i64)
            .float("mean_file_bytes", util::ratio(bytes as f64, files as f64))
            .int("metadata_ops", meta_ops as i64)
            .int("metadata_time_ns", meta_ns);
        let k = self.general.worst;
        let mut worst = Vec::new();
        for (r, (c, b, ns)) in util::top(per_rank.iter().collect(), k, |(_, (_, _, ns))| *ns) {
            worst.push(format!(
                "{}: {c} file(s) of its own, {}, {} of metadata calls",
                util::rank_name(ctx, *r),
                units::bytes(*b),
                units::duration_prose(*ns)
            ));
        }
        let own: Vec<&(i32, &FileAcc)> = all
            .iter()
            .filter(|(_, a)| a.writer.is_some() && !a.shared)
            .collect();
        for &(f, a) in util::top(own, k, |(_, a)| a.meta_ns) {
            worst.push(format!(
                "file {}: {} of metadata calls",
                util::file_name(ctx, f),
                units::duration_prose(a.meta_ns)
            ));
        }
        vec![self.general.finding(
            ctx,
            ID,
            cost,
            format!("File per process at scale: {files} files written by {ranks} ranks"),
            Evidence {
                summary: format!(
                    "{ranks} ranks each write files no other rank writes: {files} files of {} \
                     on average, {meta_ops} metadata calls on them taking {} summed over ranks.",
                    units::bytes(util::ratio(bytes as f64, files as f64) as u64),
                    units::duration_prose(meta_ns)
                ),
                numbers: n.0,
                worst,
            },
            "Write one shared file: open it with MPI_File_open on MPI_COMM_WORLD and \
             write each rank's part at its offset with MPI_File_write_at_all (or use \
             HDF5/ADIOS2 with aggregation). If the files must stay, spread them over \
             subdirectories (about 1000 per directory, created once by one rank) and on \
             Lustre give them one stripe: lfs setstripe -c 1 <dir>."
                .into(),
        )]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{ev, flt, none, num, one, Fx};

    /// `ranks` ranks, each creating /scratch/out.<rank> (open 50 us), writing 1 MiB, closing
    /// (30 us).
    fn job(ranks: usize) -> Fx {
        let mut fx = Fx::new(ranks);
        let files: Vec<u32> = (0..ranks)
            .map(|r| fx.file(&format!("/scratch/out.{r}")))
            .collect();
        for (r, f) in files.iter().enumerate() {
            fx.push(r, ev("open", 10_000, 50_000).object(*f).result(3));
            fx.push(r, ev("write", 70_000, 500_000).object(*f).size(1 << 20));
            fx.push(r, ev("close", 600_000, 30_000).object(*f));
        }
        fx
    }

    #[test]
    fn sixty_four_ranks_with_their_own_files_fire() {
        let dir = tempfile::tempdir().expect("tmp");
        let t = job(64).build(dir.path());
        let f = one(&t, ID);
        assert_eq!(num(&f, "files"), 64);
        assert_eq!(num(&f, "ranks"), 64);
        assert_eq!(flt(&f, "files_per_rank"), 1.0);
        assert_eq!(num(&f, "metadata_ops"), 128);
        assert_eq!(num(&f, "metadata_time_ns"), 64 * 80_000);
        assert_eq!(f.cost_ns, 80_000);
        assert!(f.remedy.contains("MPI_File_write_at_all"));
    }

    #[test]
    fn near_miss_below_scale() {
        let dir = tempfile::tempdir().expect("tmp");
        none(&job(63).build(dir.path()), ID);
    }
}
