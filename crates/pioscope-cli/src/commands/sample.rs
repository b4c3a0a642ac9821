//! `pioscope sample`: the counters sampler in the foreground, for storage servers and other
//! processes outside `pioscope run` (the lab scripts start it beside the daemons).

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use clap::Parser;

use crate::launch::StopSignals;
use crate::sampler::{self, Sampler, Targets};

/// Sample node and process counters into a raw directory
///
/// Every interval, reads the node's CPU (user, system, iowait), disk reads and writes
/// (/proc/diskstats), network bytes (/proc/net/dev) and memory, and the CPU, storage bytes and
/// resident memory of the chosen processes, and appends them to DIR/<host>-<pid>.pcnt. Runs
/// until SIGINT or SIGTERM. Merging DIR (with the runtime's raw files of the same processes)
/// puts the samples in counters.parquet on the trace's time base; samples of processes that
/// were not traced count for the node only.
///
/// Examples:
///   pioscope sample --out srv.raw --match glusterfsd
///   pioscope sample --out srv.raw --interval 50ms --pid 4242 --pid 4243
#[derive(Parser, Debug)]
#[command(after_help = crate::EXIT_CODES, verbatim_doc_comment)]
pub struct Args {
    /// Directory to write the counter file into (created if missing)
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Time between samples
    #[arg(long, value_name = "TIME", default_value = sampler::DEFAULT_INTERVAL, value_parser = sampler::parse_interval)]
    pub interval: Duration,
    /// Sample this process (repeatable)
    #[arg(long = "pid", value_name = "PID", conflicts_with = "name")]
    pub pids: Vec<u32>,
    /// Sample the processes of this name (comm or argv[0]'s base name), found again each round
    #[arg(long = "match", value_name = "NAME")]
    pub name: Option<String>,
}

/// Samples until a stop signal.
pub fn run(args: Args) -> Result<u8> {
    let targets = match (args.name, args.pids) {
        (Some(n), _) => Targets::Named(n),
        (None, p) if !p.is_empty() => Targets::Pids(p),
        (None, _) => bail!("name the processes to sample with --pid PID or --match NAME"),
    };
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("creating {}", args.out.display()))?;
    let mut s = Sampler::create(&args.out, targets)
        .with_context(|| format!("creating a counter file in {}", args.out.display()))?;
    let signals = StopSignals::catch_interrupt();
    loop {
        s.round().context("writing the counter file")?;
        if signals.wait(args.interval) {
            s.round().context("writing the counter file")?;
            return Ok(0);
        }
    }
}
