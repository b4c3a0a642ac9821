//! Output phases of an application, as the `ior` and `hpio` workloads repeat them: compute
//! between iterations (`compute=DURATION`), a new file per iteration (`files=new-per-iteration`)
//! and when a written file is closed (`close=immediate|deferred`: deferred closes it when the
//! next file is opened, so its flush overlaps the compute, as "close the previous output when
//! the next one opens" in shared/BACKGROUND.md). The keys are in docs/MODEL.md, "Workloads and
//! replay".

use super::{Spec, WorkloadError};

/// The keys this module reads, for the workloads' lists of known keys.
pub(super) const KEYS: [&str; 3] = ["compute", "files", "close"];

/// Total compute time a job may hold, so simulated times stay far from overflowing (2^62 ns:
/// about 146 years).
const MAX_COMPUTE_NS: u64 = 1 << 62;

/// How a workload's iterations are laid out in time and files.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Phases {
    /// Compute time between two iterations (every rank), ns.
    pub compute_ns: u64,
    /// Each iteration writes (or reads) a file of its own.
    pub new_file_per_iteration: bool,
    /// A file is finished (synced if the workload syncs, closed) when the next one is opened,
    /// the last at the end of the job; otherwise at the end of its own iteration.
    pub deferred_close: bool,
}

impl Phases {
    /// Reads `compute`, `files` and `close` from `s` for a workload of `iterations`.
    pub fn parse(s: &mut Spec, iterations: u64) -> Result<Phases, WorkloadError> {
        let compute_ns = s.time("compute", 0)?;
        if compute_ns
            .checked_mul(iterations.saturating_sub(1))
            .is_none_or(|total| total > MAX_COMPUTE_NS)
        {
            return Err(WorkloadError::BadValue {
                kind: s.kind.clone(),
                key: "compute".into(),
                value: format!("{compute_ns}ns"),
                why: "too long: compute × iterations must stay under 2^62 ns".into(),
            });
        }
        let new_file_per_iteration = s.choice("files", &["same", "new-per-iteration"])? != "same";
        let deferred_close = s.choice("close", &["immediate", "deferred"])? == "deferred";
        Ok(Phases {
            compute_ns,
            new_file_per_iteration,
            deferred_close,
        })
    }

    /// The path iteration `it` uses: `path`, or `path.NNNN` with a new file per iteration.
    pub fn path(&self, path: &str, it: u64) -> String {
        if self.new_file_per_iteration {
            format!("{path}.{it:04}")
        } else {
            path.to_string()
        }
    }

    /// Which of the workload's files (one per iteration, or one in all) iteration `it` uses.
    pub fn file_index(&self, it: u64) -> usize {
        if self.new_file_per_iteration {
            it as usize
        } else {
            0
        }
    }

    /// How many files (or sets of per-process files) the workload's iterations use.
    pub fn files(&self, iterations: u64) -> u64 {
        if self.new_file_per_iteration {
            iterations
        } else {
            1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::generate;
    use crate::engine::testutil::{system, Log};
    use crate::model::System;
    use crate::mpiio::romio::calls;
    use crate::program::{Job, Op};

    /// The engine tests' system with one data server and a client cache flushing 1 MiB at 10
    /// MB/s (F = 104,857,600 ns a file), copying at 10 GB/s.
    fn cached() -> System {
        let mut sys = system();
        sys.storage.data_servers = 1;
        sys.client_cache.size = 64 << 20;
        sys.client_cache.flush_rate = 1e7;
        sys.client_cache.memory_bandwidth = 1e10;
        sys.client_cache.flush_chunk = 1 << 20;
        sys
    }

    const FLUSH_NS: u64 = 104_857_600;

    /// The top-level calls of rank 0 (function and file) and its computes (the time, no file).
    fn outline(job: &Job) -> Vec<(u16, Option<u32>)> {
        let mut depth = 0;
        let mut out = Vec::new();
        for op in &job.programs[0] {
            match op {
                Op::Begin(c) => {
                    if depth == 0 {
                        out.push((c.func, c.file));
                    }
                    depth += 1;
                }
                Op::End => depth -= 1,
                Op::Compute { ns } if depth == 0 => out.push((0, Some(*ns as u32))),
                _ => {}
            }
        }
        out
    }

    #[test]
    fn deferred_close_finishes_a_file_when_the_next_one_opens() {
        let spec = "ior:ranks=1,block=1M,transfer=1M,iterations=2,fsync=true,compute=2ms,\
                    files=new-per-iteration,close=deferred";
        let g = generate(spec, &cached()).expect("workload");
        assert_eq!(g.job.files, vec!["/sim/ior.dat.0000", "/sim/ior.dat.0001"]);
        use calls::*;
        let (f0, f1) = (Some(0), Some(1));
        assert_eq!(
            outline(&g.job),
            vec![
                (MPI_BARRIER, None),
                (MPI_FILE_OPEN, f0),
                (MPI_FILE_WRITE_AT, f0),
                (MPI_ALLREDUCE, None),
                (0, Some(2_000_000)),
                (MPI_BARRIER, None),
                (MPI_FILE_SYNC, f0),
                (MPI_FILE_CLOSE, f0),
                (MPI_FILE_OPEN, f1),
                (MPI_FILE_WRITE_AT, f1),
                (MPI_ALLREDUCE, None),
                (MPI_FILE_SYNC, f1),
                (MPI_FILE_CLOSE, f1),
            ]
        );
        // The defaults: one file, synced and closed in its own iteration, no compute.
        let g = generate("hpio:ranks=1,iterations=2", &cached()).expect("workload");
        assert_eq!(g.job.files, vec!["/sim/pioscope-hpio.dat"]);
        let o = outline(&g.job);
        assert_eq!(o.len(), 2 * 7);
        assert_eq!(
            &o[4..7],
            &[
                (MPI_FILE_SYNC, Some(0)),
                (MPI_FILE_CLOSE, Some(0)),
                (MPI_ALLREDUCE, None)
            ]
        );
    }

    fn job_end(sys: &System, spec: &str) -> u64 {
        let g = generate(spec, sys).expect("workload");
        crate::engine::run(sys, &g.job, 1, &mut Log::default())
            .expect("run")
            .end_ns
    }

    #[test]
    fn deferred_close_hides_the_flush_or_the_compute_in_each_iteration_but_the_last() {
        // Three iterations, each a new 1 MiB file flushed in F: a deferred close waits for what
        // is left of the flush after the compute C, an immediate one for all of it, so the job
        // is (iterations - 1) × min(C, F) shorter.
        let sys = cached();
        for (workload, rest) in [
            ("ior", "block=1M,transfer=1M,fsync=true"),
            ("hpio", "file=contig,region_size=1K,region_count=1024"),
        ] {
            for compute in [50_000_000, 200_000_000] {
                let spec = |close: &str| {
                    format!(
                        "{workload}:ranks=1,{rest},iterations=3,compute={compute}ns,\
                         files=new-per-iteration,close={close}"
                    )
                };
                let immediate = job_end(&sys, &spec("immediate"));
                let deferred = job_end(&sys, &spec("deferred"));
                assert_eq!(
                    immediate - deferred,
                    2 * u64::min(compute, FLUSH_NS),
                    "{workload}, compute {compute}"
                );
            }
        }
        // Without a client cache, closing later changes nothing: the writes went through.
        let mut off = cached();
        off.client_cache.size = 0;
        let spec = |close: &str| {
            format!(
                "ior:ranks=1,block=1M,transfer=1M,iterations=3,compute=50ms,\
                 files=new-per-iteration,close={close}"
            )
        };
        assert_eq!(
            job_end(&off, &spec("immediate")),
            job_end(&off, &spec("deferred"))
        );
    }

    #[test]
    fn bad_phase_keys_are_named() {
        let s = cached();
        let e = generate("ior:compute=soon", &s).unwrap_err();
        assert!(e.to_string().contains("compute=\"soon\""), "{e}");
        let e = generate("hpio:close=later", &s).unwrap_err();
        assert!(
            e.to_string()
                .contains("expected one of immediate, deferred"),
            "{e}"
        );
        let e = generate("ior:iterations=3,compute=1e30s", &s).unwrap_err();
        assert!(e.to_string().contains("too long"), "{e}");
    }
}
