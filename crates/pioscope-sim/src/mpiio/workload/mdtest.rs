//! `mdtest:`: md-test's metadata phases (bench/md-test.c): each rank, on its own `files`
//! files, creates (MPI_File_open with create on MPI_COMM_SELF + close), stats (open + stat +
//! close) and removes (MPI_File_delete) them, phases separated by barriers.

use crate::model::System;
use crate::mpiio::romio::{self, calls};
use crate::program::{MetaKind, Op, Rank};

use super::{Builder, Generated, Spec, WorkloadError};

const KEYS: &[&str] = &["ranks", "files", "iterations", "dir", "hint.KEY"];

/// Calls per file and iteration, as the trace has them: MPI_File_open + open, MPI_File_close
/// + close; MPI_File_open + open, stat, MPI_File_close + close; MPI_File_delete + unlink.
const CALLS_PER_FILE: u64 = 11;

pub(super) fn generate(s: &mut Spec, system: &System) -> Result<Generated, WorkloadError> {
    let ranks = s.count("ranks", 4, 1)?;
    let nfiles = s.count("files", 100, 1)?;
    let iterations = s.count("iterations", 1, 1)?;
    let dir = s.text("dir", "/sim/pioscope-md-test.d");
    s.within_budget(
        "files",
        nfiles,
        ranks
            .checked_mul(nfiles)
            .and_then(|n| n.checked_mul(iterations))
            .and_then(|n| n.checked_mul(CALLS_PER_FILE)),
    )?;
    let hints = std::mem::take(&mut s.hints);
    let ranks32 = u32::try_from(ranks).map_err(|_| WorkloadError::BadValue {
        kind: "mdtest".into(),
        key: "ranks".into(),
        value: ranks.to_string(),
        why: "too many".into(),
    })?;
    std::mem::replace(s, Spec::parse("mdtest")?).finish(KEYS)?;

    let mut b = Builder::new("mdtest", system, ranks32, &hints)?;
    let ids: Vec<Vec<u32>> = (0..ranks)
        .map(|r| {
            (0..nfiles)
                .map(|i| b.file(format!("{dir}/f.{r}.{i}")))
                .collect()
        })
        .collect();
    let h = b.hints.clone();
    for _ in 0..iterations {
        b.barrier();
        for (r, p) in b.progs.iter_mut().enumerate() {
            for &f in &ids[r] {
                romio::open(p, r as Rank, f, true, false, None, &h);
                romio::close(p, f, false, None);
            }
        }
        b.barrier();
        for (r, p) in b.progs.iter_mut().enumerate() {
            for &f in &ids[r] {
                romio::open(p, r as Rank, f, false, false, None, &h);
                calls::wrap(
                    p,
                    calls::file_call(calls::POSIX_STAT, f, None, 0),
                    [Op::Meta {
                        file: f,
                        kind: MetaKind::Stat,
                    }],
                );
                romio::close(p, f, false, None);
            }
        }
        b.barrier();
        for (r, p) in b.progs.iter_mut().enumerate() {
            for &f in &ids[r] {
                romio::delete(p, f);
            }
        }
        b.barrier();
    }
    Ok(b.finish())
}
