//! `pnetcdf-redef-moves`: the program re-enters define mode (`ncmpi_redef`) after writing
//! data and adds to the header; if the header outgrows the space reserved for it, the
//! `ncmpi_enddef` that follows moves every variable's data further down the file, a rewrite
//! of all that was written. Reserving header space up front avoids the move. A move reads the
//! data back before writing it further down; an enddef that only rewrites the header (rank 0
//! writes it after every redef) reads nothing, so the reads beneath tell a move.

use std::collections::{BTreeMap, BTreeSet};

use pioscope_trace::store::Event;
use pioscope_trace::{units, Layer, OpKind};

use super::config::Config;
use super::dispatch::{Interest, LIBRARY, PNETCDF, POSIX};
use super::util::{self, Facts, General, Numbers, Requests};
use super::{Evidence, Finding, Rule};
use crate::pass::Context;

/// Rule id.
pub(crate) const ID: &str = "pnetcdf-redef-moves";

/// The `ncmpi_enddef`s that closed a `ncmpi_redef` on one file.
#[derive(Debug, Default)]
struct File {
    enddefs: u64,
    ns: i64,
    /// POSIX reads beneath them: the data moved, read back.
    read_back: Requests,
    /// POSIX writes beneath them: the data written further down (and the header).
    written: Requests,
}

/// See the module doc.
pub(crate) struct PnetcdfRedefMoves {
    general: General,
    min_moves: u64,
    /// Per (rank, file), a `ncmpi_redef` not yet closed.
    in_redef: BTreeSet<(i32, i32)>,
    /// The enddef closing a redef, by its id, and its file.
    closing: Option<(i64, i32)>,
    by_file: BTreeMap<i32, File>,
}

impl PnetcdfRedefMoves {
    pub(crate) fn new(config: &Config) -> Self {
        let s = config.section(ID);
        PnetcdfRedefMoves {
            general: General::new(config),
            min_moves: s.u64("min_moves"),
            in_redef: BTreeSet::new(),
            closing: None,
            by_file: BTreeMap::new(),
        }
    }
}

impl Rule for PnetcdfRedefMoves {
    fn visit(&mut self, e: &Event<'_>, fx: &Facts, _ctx: &Context<'_>) {
        let kind = fx.kind;
        match fx.library {
            None if e.layer == Layer::Pnetcdf => {
                let Some(file) = e.file_id else { return };
                match e.func {
                    "ncmpi_redef" => {
                        self.in_redef.insert((e.rank, file));
                    }
                    "ncmpi_enddef" | "ncmpi__enddef" if self.in_redef.remove(&(e.rank, file)) => {
                        let f = self.by_file.entry(file).or_default();
                        f.enddefs += 1;
                        f.ns += e.duration_ns;
                        self.closing = Some((e.id, file));
                    }
                    _ => {}
                }
            }
            Some(c) if e.layer == Layer::Posix => {
                let Some((_, file)) = self.closing.filter(|(id, _)| *id == c.id) else {
                    return;
                };
                let f = self.by_file.entry(file).or_default();
                match kind {
                    OpKind::Read => f.read_back.add(e),
                    OpKind::Write => f.written.add(e),
                    _ => {}
                }
            }
            _ => {}
        }
    }

    fn interest(&self) -> Interest {
        Interest::any_of(&[PNETCDF, POSIX | LIBRARY])
    }

    fn conclude(&self, ctx: &Context<'_>) -> Vec<Finding> {
        let files: Vec<(&i32, &File)> = self
            .by_file
            .iter()
            .filter(|(_, f)| f.read_back.bytes > 0)
            .collect();
        let enddefs: u64 = files.iter().map(|(_, f)| f.enddefs).sum();
        if enddefs == 0 || enddefs < self.min_moves {
            return Vec::new();
        }
        let ns: i64 = files.iter().map(|(_, f)| f.ns).sum();
        let mut moved = Requests::default();
        let mut written = Requests::default();
        for (_, f) in &files {
            moved.merge(&f.read_back);
            written.merge(&f.written);
        }
        let cost = util::per_rank(ns as f64, ctx);
        let worst = util::top(files.clone(), self.general.worst, |(_, f)| f.ns);
        let names: Vec<String> = worst
            .iter()
            .map(|(file, f)| {
                format!(
                    "{}: {} ncmpi_enddef after ncmpi_redef moved {}, {}",
                    util::file_name(ctx, **file),
                    f.enddefs,
                    units::bytes(f.read_back.bytes),
                    units::duration_prose(f.ns)
                )
            })
            .collect();
        let mut n = Numbers::default();
        n.int("enddefs", enddefs as i64)
            .int("time_ns", ns)
            .int("moved_bytes", moved.bytes as i64)
            .int("move_reads", moved.count as i64)
            .int("move_writes", written.count as i64)
            .int("files", files.len() as i64);
        vec![self.general.finding(
            ctx,
            ID,
            cost,
            format!(
                "Header growth after ncmpi_redef moved {}",
                units::bytes(moved.bytes)
            ),
            Evidence {
                summary: format!(
                    "{enddefs} ncmpi_enddef calls after ncmpi_redef rewrote {} of data to make \
                     room for a larger header, taking {} summed over ranks.",
                    units::bytes(moved.bytes),
                    units::duration_prose(ns)
                ),
                numbers: n.0,
                worst: names,
            },
            "Define every dimension, variable and attribute before the first ncmpi_enddef, or \
             reserve header space there: ncmpi__enddef(ncid, h_minfree, v_align, v_minfree, \
             r_align) with h_minfree the bytes the header grows by (or the hint \
             nc_header_align_size in the MPI_Info given to ncmpi_create)."
                .into(),
        )]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{ev, io, none, num, one, Fx};

    /// 2 ranks: ncmpi_enddef, ncmpi_redef, then an ncmpi_enddef of 300 us that moves `moved`
    /// bytes beneath (a pread64 of 50 us and a pwrite64 of 150 us per rank); rank 0 also
    /// rewrites the header (a pwrite64 of 2 KiB at 0).
    fn job(dir: &std::path::Path, moved: u64) -> pioscope_trace::store::Trace {
        let mut fx = Fx::new(2);
        let file = fx.file("/scratch/out.nc");
        for r in 0..2usize {
            fx.push(r, ev("ncmpi_enddef", 10_000, 5_000).object(file));
            fx.push(r, ev("ncmpi_redef", 100_000, 5_000).object(file));
            fx.push(r, ev("ncmpi_enddef", 200_000, 300_000).object(file));
            if r == 0 {
                fx.push(r, io("pwrite64", 210_000, 10_000, file, 0, 2048).depth(2));
            }
            if moved > 0 {
                let back = io("pread64", 250_000, 50_000, file, 4096, moved);
                fx.push(r, back.depth(2));
                let w = io("pwrite64", 300_000, 150_000, file, 8192, moved);
                fx.push(r, w.depth(2));
            }
        }
        fx.build(dir)
    }

    #[test]
    fn fires_with_its_numbers() {
        let dir = tempfile::tempdir().expect("tmp");
        let f = one(&job(dir.path(), 65536), ID);
        assert_eq!(num(&f, "enddefs"), 2);
        assert_eq!(num(&f, "time_ns"), 600_000);
        assert_eq!(num(&f, "moved_bytes"), 2 * 65536);
        assert_eq!(num(&f, "move_reads"), 2);
        assert_eq!(num(&f, "move_writes"), 3);
        assert_eq!(num(&f, "files"), 1);
        // Both enddefs' 300 us, over 2 ranks.
        assert_eq!(f.cost_ns, 300_000);
        assert!(f.evidence.worst[0].starts_with("/scratch/out.nc: 2 ncmpi_enddef after"));
        assert!(f.remedy.contains("ncmpi__enddef(ncid, h_minfree"));
    }

    #[test]
    fn an_enddef_that_rewrites_only_the_header_does_not_fire() {
        let dir = tempfile::tempdir().expect("tmp");
        none(&job(dir.path(), 0), ID);
    }
}
