//! Generated workloads for `pioscope simulate --workload SPEC`: the HPIO noncontiguous
//! benchmark, an IOR-like sequential/strided pattern, md-test metadata phases and PVFS2's
//! mpi-io-test, each compiled through `romio` into a `Job` that looks like the traced
//! benchmark of bench/; MPI communication patterns (`comm`) and a Jacobi-like application
//! (`jacobi`: compute, halo exchange, periodic output).
//!
//! Spec: `KIND:key=value,...` (`hpio:ranks=4,region_size=32,mode=collective`); `hint.KEY=VALUE`
//! sets an MPI-IO hint on the workload's files. Every key is documented in docs/MODEL.md,
//! "Workloads and replay". `synth` is apart: it writes a synthetic trace store directly, for
//! the scale benchmarks.

mod comm;
mod hpio;
mod ior;
mod jacobi;
mod mdtest;
mod mpi_io_test;
mod phases;
pub mod spec;
pub mod synth;

use thiserror::Error;

use crate::model::System;
use crate::mpiio::romio::{self, calls, Hints, Pattern, Request, RomioError};
use crate::program::{FileId, Job, Op, Rank};

pub use spec::Spec;

/// Errors in a workload spec.
#[derive(Debug, Error, PartialEq)]
pub enum WorkloadError {
    /// Not `kind:key=value,...`.
    #[error("workload spec item {item:?} is not key=value")]
    Syntax {
        /// The item.
        item: String,
    },
    /// A key given twice.
    #[error("workload key {key} is given twice")]
    Duplicate {
        /// The key.
        key: String,
    },
    /// Unknown workload kind.
    #[error("unknown workload {kind:?} (known: hpio, ior, mdtest, mpi-io-test, comm, jacobi)")]
    UnknownKind {
        /// The kind.
        kind: String,
    },
    /// A key this workload does not have.
    #[error("{kind} workload has no key {key} (given {key}={value}; known keys: {known})")]
    UnknownKey {
        /// The workload.
        kind: String,
        /// The key.
        key: String,
        /// Its value.
        value: String,
        /// Keys it has.
        known: String,
    },
    /// A value that does not fit the key.
    #[error("{kind} workload: {key}={value:?}: {why}")]
    BadValue {
        /// The workload.
        kind: String,
        /// The key.
        key: String,
        /// The value.
        value: String,
        /// What is wrong.
        why: String,
    },
    /// Data calls that would make more file accesses than a job built in memory may hold.
    #[error(
        "{kind} workload: its data calls would make more than {max} file accesses or \
         collective-buffer cycles (one per region, and one per buffer of bytes); use fewer \
         regions, fewer ranks or larger buffers"
    )]
    TooManyAccesses {
        /// The workload.
        kind: String,
        /// The budget ([`spec::MAX_CALLS`]).
        max: u64,
    },
    /// A hint or placement problem.
    #[error(transparent)]
    Romio(#[from] RomioError),
}

/// A generated job and what it moves (for the summary's throughput).
#[derive(Clone, Debug)]
pub struct Generated {
    /// The per-rank programs.
    pub job: Job,
    /// Application bytes written (what the benchmark counts, not what sieving moves).
    pub bytes_written: u64,
    /// Application bytes read.
    pub bytes_read: u64,
    /// The hints every file of the workload uses (the model's defaults and the spec's
    /// `hint.KEY=VALUE`).
    pub hints: Hints,
}

/// Parses and generates a workload on `system`.
pub fn generate(spec: &str, system: &System) -> Result<Generated, WorkloadError> {
    let mut s = Spec::parse(spec)?;
    let mut out = match s.kind.as_str() {
        "hpio" => hpio::generate(&mut s, system)?,
        "ior" => ior::generate(&mut s, system)?,
        "mdtest" | "md-test" => mdtest::generate(&mut s, system)?,
        "mpi-io-test" => mpi_io_test::generate(&mut s, system)?,
        "comm" => comm::generate(&mut s, system)?,
        "jacobi" => jacobi::generate(&mut s, system)?,
        _ => {
            return Err(WorkloadError::UnknownKind {
                kind: s.kind.clone(),
            })
        }
    };
    out.job.description = format!("workload {}", spec.trim());
    Ok(out)
}

/// Builds a job: per-rank programs, files, the hints of each file and collective instances.
pub(crate) struct Builder {
    kind: &'static str,
    pub progs: Vec<Vec<Op>>,
    pub files: Vec<String>,
    pub node_of: Vec<u32>,
    pub hints: Hints,
    instance: u32,
    written: u64,
    read: u64,
    /// Upper bound of the file accesses and collective-buffer cycles of the data calls built.
    accesses: u64,
}

impl Builder {
    /// `ranks` ranks of workload `kind` on `system`, with the spec's hints applied over the
    /// model's defaults.
    pub fn new(
        kind: &'static str,
        system: &System,
        ranks: u32,
        spec_hints: &[(String, String)],
    ) -> Result<Builder, WorkloadError> {
        let node_of = romio::rank_nodes(system, ranks)?;
        let mut hints = Hints::from_system(system);
        for (k, v) in spec_hints {
            hints.set(k, v)?;
        }
        Ok(Builder {
            kind,
            progs: vec![Vec::new(); ranks as usize],
            files: Vec::new(),
            node_of,
            hints,
            instance: 0,
            written: 0,
            read: 0,
            accesses: 0,
        })
    }

    /// Counts `n` more accesses, failing beyond [`spec::MAX_CALLS`] before anything is built:
    /// the ops of one call grow with its regions and bytes, not with the counts a spec
    /// checks, so a few calls over 10^17 regions must be refused here.
    fn spend(&mut self, n: Option<u64>) -> Result<(), WorkloadError> {
        match n.and_then(|n| self.accesses.checked_add(n)) {
            Some(total) if total <= spec::MAX_CALLS => {
                self.accesses = total;
                Ok(())
            }
            _ => Err(WorkloadError::TooManyAccesses {
                kind: self.kind.to_string(),
                max: spec::MAX_CALLS,
            }),
        }
    }

    pub fn file(&mut self, path: String) -> FileId {
        self.files.push(path);
        (self.files.len() - 1) as FileId
    }

    /// The next collective instance (dense from 1, as merge numbers them).
    pub fn instance(&mut self) -> u32 {
        self.instance += 1;
        self.instance
    }

    /// A top-level MPI_Barrier on every rank.
    pub fn barrier(&mut self) {
        for p in self.progs.iter_mut() {
            calls::wrap(
                p,
                calls::mpi_collective(calls::MPI_BARRIER, 0),
                [Op::Barrier],
            );
        }
    }

    /// `ns` of computation on every rank (the application's work between two outputs).
    pub fn compute(&mut self, ns: u64) {
        if ns == 0 {
            return;
        }
        for p in self.progs.iter_mut() {
            p.push(Op::Compute { ns });
        }
    }

    /// A top-level small collective (MPI_Allreduce of timings) on every rank.
    pub fn allreduce(&mut self, size: u64) {
        for p in self.progs.iter_mut() {
            calls::small_collective(p, calls::MPI_ALLREDUCE, size);
        }
    }

    /// Collective open of `file` by every rank.
    pub fn open_all(&mut self, file: FileId, create: bool) {
        let i = self.instance();
        for (r, p) in self.progs.iter_mut().enumerate() {
            romio::open(p, r as Rank, file, create, true, Some(i), &self.hints);
        }
    }

    pub fn set_view_all(&mut self, file: FileId, disp: impl Fn(Rank) -> u64) {
        let i = self.instance();
        for (r, p) in self.progs.iter_mut().enumerate() {
            romio::set_view(p, file, disp(r as Rank), Some(i));
        }
    }

    pub fn sync_all(&mut self, file: FileId) {
        let i = self.instance();
        for p in self.progs.iter_mut() {
            romio::sync(p, file, true, Some(i));
        }
    }

    pub fn close_all(&mut self, file: FileId) {
        let i = self.instance();
        for p in self.progs.iter_mut() {
            romio::close(p, file, true, Some(i));
        }
    }

    fn count(&mut self, req: &Request, bytes: u64) {
        match req.kind {
            crate::program::IoKind::Write => self.written += bytes,
            crate::program::IoKind::Read => self.read += bytes,
        }
    }

    /// A collective data call of every rank.
    pub fn collective(&mut self, req: &Request, patterns: &[Pattern]) -> Result<(), WorkloadError> {
        // Two-phase: one cycle per collective buffer of the aggregate extent, per aggregator.
        let (lo, hi) = patterns
            .iter()
            .filter_map(Pattern::extent)
            .fold((u64::MAX, 0), |(lo, hi), (a, b)| (lo.min(a), hi.max(b)));
        let span = hi.saturating_sub(lo);
        self.spend(
            (span / self.hints.mpiio.cb_buffer_size)
                .checked_add(1)
                .and_then(|c| c.checked_mul(self.progs.len() as u64)),
        )?;
        let i = self.instance();
        let bytes: u64 = patterns.iter().map(Pattern::bytes).sum();
        self.count(req, bytes);
        romio::twophase::collective_into(
            &mut self.progs,
            req,
            patterns,
            &self.node_of,
            &self.hints,
            i,
            &[],
        );
        Ok(())
    }

    /// An independent data call of one rank.
    pub fn independent(
        &mut self,
        rank: Rank,
        req: &Request,
        pattern: &Pattern,
    ) -> Result<(), WorkloadError> {
        // One access per piece, or one data-sieving window per buffer (a window starts at a
        // piece or continues one longer than the buffer).
        let buffer = self
            .hints
            .mpiio
            .ind_rd_buffer_size
            .min(self.hints.mpiio.ind_wr_buffer_size);
        self.spend(
            pattern
                .pieces()
                .checked_add(pattern.bytes() / buffer)
                .and_then(|n| n.checked_add(1)),
        )?;
        self.count(req, pattern.bytes());
        let hints = self.hints.clone();
        romio::independent(&mut self.progs[rank as usize], req, pattern, &hints, None);
        Ok(())
    }

    pub fn finish(self) -> Generated {
        Generated {
            job: Job {
                programs: self.progs,
                files: self.files,
                description: String::new(),
            },
            bytes_written: self.written,
            bytes_read: self.read,
            hints: self.hints,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mpiio::romio::tests_support::system;

    #[test]
    fn errors_name_key_and_value() {
        let s = system();
        let e = generate("hpio:ranks=4,region_size=abc", &s).unwrap_err();
        assert_eq!(
            e.to_string(),
            "hpio workload: region_size=\"abc\": not a size (e.g. 4096, 64K, 4M)"
        );
        let e = generate("hpio:ranks=4,colour=blue", &s).unwrap_err();
        assert!(
            e.to_string().contains("no key colour (given colour=blue"),
            "{e}"
        );
        let e = generate("hpio:mode=sideways", &s).unwrap_err();
        assert!(
            e.to_string()
                .contains("mode=\"sideways\": expected one of independent, collective"),
            "{e}"
        );
        let e = generate("fio:ranks=2", &s).unwrap_err();
        assert!(matches!(e, WorkloadError::UnknownKind { .. }));
        let e = generate("hpio:ranks=1000", &s).unwrap_err();
        assert!(e.to_string().contains("do not fit"), "{e}");
        let e = generate("hpio:ranks=4,hint.cb_buffer_size=lots", &s).unwrap_err();
        assert!(e.to_string().contains("cb_buffer_size=\"lots\""), "{e}");
        let e = generate("ior:ranks=2,block=1M,transfer=3K", &s).unwrap_err();
        assert!(e.to_string().contains("transfer=\"3K\""), "{e}");
        let e = generate("hpio:ranks", &s).unwrap_err();
        assert!(matches!(e, WorkloadError::Syntax { .. }));
    }

    #[test]
    fn counts_making_too_many_calls_are_refused() {
        // Issue 12: mdtest:files=1000000000000 aborted with out-of-memory.
        let s = system();
        let e = generate("mdtest:files=1000000000000", &s).unwrap_err();
        assert_eq!(
            e.to_string(),
            "mdtest workload: files=\"1000000000000\": too many: the workload would make \
             more than 10000000 calls"
        );
        let e = generate("ior:block=1G,transfer=1,segments=2", &s).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("ior workload: segments=\"2\": too many"),
            "{e}"
        );
        let e = generate("hpio:iterations=100000000", &s).unwrap_err();
        assert!(e.to_string().contains("too many"), "{e}");
        assert!(generate("mdtest:files=1000", &s).is_ok());
        // Found by fuzzing: 11 calls per file (MPI-IO and POSIX), 12.2 million calls, 2 GB.
        let e = generate("mdtest:ranks=1,files=1111112", &s).unwrap_err();
        assert!(e.to_string().contains("too many"), "{e}");
        assert!(generate("mdtest:ranks=1,files=909090", &s).is_ok());
        // Found by fuzzing: collective mpi-io-test calls exchange with every rank (2.2 GB).
        let e = generate(
            "mpi-io-test:ranks=4,blocks=41650,block_size=64K,collective=true,iterations=9",
            &s,
        )
        .unwrap_err();
        assert!(e.to_string().contains("too many"), "{e}");
        // Found by fuzzing: collective ior calls exchange with every rank too (4 million
        // calls, over 2 GB); the same transfers independent stay within the budget.
        let collective =
            "ior:ranks=4,block=2M,transfer=2,pattern=strided,file=shared,op=write,collective=true";
        let e = generate(collective, &s).unwrap_err();
        assert!(e.to_string().contains("too many"), "{e}");
        assert!(generate(&collective.replace("=true", "=false"), &s).is_ok());
    }

    #[test]
    fn regions_making_too_many_accesses_are_refused() {
        // Issue 12 (fuzzing, workload_spec): one rank's call over 10^17 regions ran for ever
        // building its data-sieving windows (that file also ends past 2^63: see below); a
        // collective call over 1 PiB built 10^8 cycles.
        let s = system();
        let e = generate("hpio:ranks=1,region_count=10000000000000", &s).unwrap_err();
        assert_eq!(
            e,
            WorkloadError::TooManyAccesses {
                kind: "hpio".into(),
                max: spec::MAX_CALLS
            }
        );
        let e = generate("ior:ranks=2,block=1024T,transfer=1024T,collective=true", &s).unwrap_err();
        assert!(matches!(e, WorkloadError::TooManyAccesses { .. }), "{e}");
        // A scale benchmark's job still builds (bench/perf/sim_speed.py, on pvfs2-2009).
        let nodes = ["nodes.count=5000".to_string()];
        let pvfs = crate::model::load::system("pvfs2-2009", &nodes).expect("preset");
        let spec = "hpio:ranks=10000,region_count=1024,mode=collective,op=write";
        assert!(generate(spec, &pvfs).is_ok());
    }

    #[test]
    fn files_ending_past_i64_are_refused() {
        // Issue 12 (fuzzing, workload_spec): offsets overflowed u64 (a panic with overflow
        // checks, a wrapped offset without).
        let s = system();
        let e = generate("hpio:ranks=1,region_count=00100000001566746937", &s).unwrap_err();
        assert!(e.to_string().contains("too large"), "{e}");
        let e = generate("hpio:ranks=2,region_count=10000000,region_size=1T", &s).unwrap_err();
        assert_eq!(
            e.to_string(),
            "hpio workload: region_count=\"10000000\": too large: the file would end past 2^63 - 1 bytes"
        );
        let e = generate("ior:ranks=2,block=1T,transfer=1T,segments=4500000", &s).unwrap_err();
        assert!(e.to_string().starts_with("ior workload: block="), "{e}");
    }
}
