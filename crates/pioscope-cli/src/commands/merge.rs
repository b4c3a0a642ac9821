//! `pioscope merge`: raw files of a traced run → a trace store.

use std::path::PathBuf;

use anyhow::Result;
use clap::Parser;

/// Merge a directory of raw files into a trace
///
/// Reads every *.praw file of RAW_DIR (one per traced process, written by the pioscope
/// runtime), converts clocks to nanoseconds since the job start on rank 0's clock, rebuilds
/// call nesting and collective instances, and writes the trace directory TRACE (meta.json,
/// events.parquet, files.parquet, settings.parquet).
///
/// A damaged or cut-short raw file does not stop the merge: everything before the damage is
/// kept, the trace is marked partial, and a warning names the file and byte offset (exit 0).
///
/// With --servers DIR, the raw files of storage server daemons traced in server mode
/// (docs/SERVERS.md) join the trace: each daemon that lived during the job becomes a
/// container of kind `server`, with its records that overlap the job's time window.
#[derive(Parser, Debug)]
#[command(after_help = crate::EXIT_CODES)]
pub struct Args {
    /// Directory of raw files (*.praw)
    #[arg(value_name = "RAW_DIR")]
    pub raw_dir: PathBuf,
    /// The trace directory to create
    #[arg(short = 'o', long = "output", value_name = "TRACE")]
    pub output: PathBuf,
    /// Replace TRACE if it is an existing trace
    #[arg(long)]
    pub force: bool,
    /// Directory of the storage servers' raw files (server mode) to add to the trace
    #[arg(long, value_name = "DIR")]
    pub servers: Option<PathBuf>,
}

/// Runs the merge.
pub fn run(args: Args) -> Result<u8> {
    super::prepare_output(&args.output, args.force)?;
    let summary = super::merge_with_progress(&args.raw_dir, args.servers.as_deref(), &args.output)?;
    super::print_warnings(&summary);
    let mut out = super::Output::stdout();
    out.write(format_args!("{}", super::summary_text(&summary, None)))?;
    out.finish()?;
    Ok(0)
}
