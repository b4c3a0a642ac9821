//! `pioscope bench`: run one of the bundled MPI I/O benchmarks, traced or not.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Command;

use anyhow::{Context, Result};
use clap::{Parser, ValueEnum};

use super::bench_tas::{self, TasOptions};
use super::run::{execute, RunOptions, RuntimeKind};
use crate::launch::{self, IgnoreInterrupts};

/// The bundled benchmarks (built from bench/ as <bin dir>/pioscope-NAME).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum BenchName {
    /// HPIO-style noncontiguous I/O (contiguous/noncontiguous in memory and file)
    Hpio,
    /// large contiguous MPI-IO writes and reads of a shared file (PVFS2's mpi-io-test)
    #[value(name = "mpi-io-test")]
    MpiIoTest,
    /// metadata operations (create, stat, remove) on many files
    #[value(name = "md-test")]
    MdTest,
    /// the TAS experiment: --workload on the GlusterFS lab with disk, null and tmpfs bricks,
    /// beside the network bound (needs root; docs/SERVERS.md)
    Tas,
}

impl BenchName {
    /// The benchmark's binary; None for `tas`, an experiment that runs its `--workload`.
    fn binary(self) -> Option<&'static str> {
        match self {
            BenchName::Hpio => Some("pioscope-hpio"),
            BenchName::MpiIoTest => Some("pioscope-mpi-io-test"),
            BenchName::MdTest => Some("pioscope-md-test"),
            BenchName::Tas => None,
        }
    }
}

/// Run a bundled MPI I/O benchmark (optionally traced)
///
/// Runs <bin dir>/pioscope-NAME as `LAUNCHER -n N pioscope-NAME ARGS`, where the bin dir is
/// $PIOSCOPE_BIN_DIR or the directory of the pioscope executable. Arguments after -- go to
/// the benchmark (see `pioscope-NAME --help`). With --trace TRACE it runs exactly as
/// `pioscope run -n N -o TRACE -- pioscope-NAME ARGS` does.
///
/// Examples:
///   pioscope bench hpio -n 8
///   pioscope bench mpi-io-test -n 4 --trace mpiio.trace -- --collective --block-size 1M
///   pioscope bench tas -n 4 -- --blocks 64 --block-size 1M
#[derive(Parser, Debug)]
#[command(
    after_help = crate::EXIT_CODES,
    verbatim_doc_comment,
    override_usage = "pioscope bench [OPTIONS] NAME [-- ARGS...]"
)]
pub struct Args {
    /// Which benchmark
    #[arg(value_enum, value_name = "NAME")]
    pub name: BenchName,
    /// Number of MPI processes
    #[arg(short = 'n', value_name = "N", default_value_t = 4)]
    pub n: u32,
    /// MPI launcher
    #[arg(long, value_name = "L", default_value = "mpiexec")]
    pub launcher: String,
    /// Trace the run into this trace directory
    #[arg(long, value_name = "TRACE")]
    pub trace: Option<PathBuf>,
    /// With --trace: replace TRACE if it is an existing trace
    #[arg(long)]
    pub force: bool,
    /// With --trace: add the storage servers whose raw files are in DIR (as `pioscope run`)
    #[arg(long, value_name = "DIR", requires = "trace")]
    pub servers: Option<PathBuf>,
    /// With tas: the benchmark it runs (hpio or mpi-io-test)
    #[arg(long, value_enum, value_name = "NAME", default_value_t = BenchName::MpiIoTest)]
    pub workload: BenchName,
    /// Arguments for the benchmark (after --)
    #[arg(value_name = "ARGS", last = true)]
    pub args: Vec<OsString>,
}

/// Runs the benchmark; returns its exit code.
pub fn run(args: Args) -> Result<u8> {
    let name = if args.name == BenchName::Tas {
        if !matches!(args.workload, BenchName::Hpio | BenchName::MpiIoTest) {
            anyhow::bail!("bench tas --workload must be hpio or mpi-io-test");
        }
        if args.trace.is_some() {
            anyhow::bail!("bench tas runs untraced clients: --trace does not apply");
        }
        args.workload
    } else {
        args.name
    };
    let binary = name
        .binary()
        .context("bench tas --workload must be hpio or mpi-io-test")?;
    let bin = launch::bin_dir()?.join(binary);
    if launch::find_program(&bin.to_string_lossy()).is_none() {
        anyhow::bail!(
            "benchmark {} not found (build the benchmarks in bench/, or set PIOSCOPE_BIN_DIR)",
            bin.display()
        );
    }
    if args.name == BenchName::Tas {
        if args.n == 0 {
            anyhow::bail!("-n must be at least 1");
        }
        return bench_tas::run(TasOptions {
            n: args.n,
            launcher: args.launcher,
            benchmark: bin,
            args: args.args,
        });
    }
    if args.trace.is_some() {
        return execute(RunOptions {
            n: Some(args.n),
            launcher: args.launcher,
            output: args.trace,
            keep_raw: false,
            force: args.force,
            servers: args.servers,
            runtime: RuntimeKind::Mpi,
            counters: Some(crate::sampler::DEFAULT_PERIOD),
            program: bin.into_os_string(),
            args: args.args,
        });
    }
    if args.n == 0 {
        anyhow::bail!("-n must be at least 1");
    }
    let launcher = launch::find_program(&args.launcher).with_context(|| {
        format!(
            "launcher not found: {} (choose one with --launcher)",
            args.launcher
        )
    })?;
    let mut child = Command::new(launcher)
        .arg("-n")
        .arg(args.n.to_string())
        .arg(&bin)
        .args(&args.args)
        .spawn()
        .with_context(|| format!("starting {}", args.launcher))?;
    let status = {
        let _guard = IgnoreInterrupts::new();
        child.wait().context("waiting for the benchmark")?
    };
    Ok(launch::exit_code(status))
}
