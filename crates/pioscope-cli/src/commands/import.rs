//! `pioscope import darshan`: a Darshan log → a trace store.

use std::path::PathBuf;

use anyhow::Result;
use clap::{Parser, Subcommand};
use pioscope_trace::import::darshan::{import_darshan, ImportSummary};

use crate::human;

/// Make a trace store from another tool's records
///
/// `pioscope import darshan LOG -o TRACE` reads a Darshan log (format 3.x) with Darshan's own
/// reader (PyDarshan over libdarshan-util, which `make deps` installs) and writes a trace
/// store: one container per rank, the log's files, every module's counters in
/// darshan.parquet, the HEATMAP module's bytes per rank and time bin in
/// darshan_heatmap.parquet, and, where the log has DXT traces, one event per DXT segment (POSIX
/// segments nested under the MPI-IO segment that encloses them). stats, report, dump, view
/// (for a log without DXT: its heat map and the ranks and files with the most I/O time) and
/// export then work on it. docs/IMPORT.md gives the mapping.
#[derive(Parser, Debug)]
#[command(after_help = crate::EXIT_CODES)]
pub struct Args {
    #[command(subcommand)]
    source: Source,
}

#[derive(Subcommand, Debug)]
enum Source {
    /// Import a Darshan log (*.darshan)
    ///
    /// Modules Darshan marked partial (it ran out of record memory, or DXT's trace memory)
    /// and modules the reader cannot carry are named as warnings, and the store is marked
    /// partial with the reason (exit 0).
    Darshan(DarshanArgs),
}

#[derive(Parser, Debug)]
#[command(after_help = crate::EXIT_CODES)]
struct DarshanArgs {
    /// The Darshan log
    #[arg(value_name = "LOG")]
    log: PathBuf,
    /// The trace directory to create
    #[arg(short = 'o', long = "output", value_name = "TRACE")]
    output: PathBuf,
    /// Replace TRACE if it is an existing trace
    #[arg(long)]
    force: bool,
    /// Python interpreter with PyDarshan (`darshan` on PyPI) [default: $PIOSCOPE_PYTHON, else
    /// python3]
    #[arg(long, value_name = "PYTHON")]
    python: Option<String>,
}

/// Runs the import.
pub fn run(args: Args) -> Result<u8> {
    let Source::Darshan(a) = args.source;
    super::prepare_output(&a.output, a.force)?;
    let summary = import_darshan(&a.log, &a.output, &python(a.python))?;
    for reason in &summary.partial_reasons {
        super::warn(&format!("trace is partial: {reason}"));
    }
    let mut out = super::Output::stdout();
    out.write(format_args!("{}", summary_text(&summary, &a.output)))?;
    out.finish()?;
    Ok(0)
}

/// The Python interpreter that runs Darshan's reader: `--python`, else $PIOSCOPE_PYTHON, else
/// python3 (import and fleet share it).
pub fn python(flag: Option<String>) -> String {
    flag.or_else(|| std::env::var("PIOSCOPE_PYTHON").ok())
        .unwrap_or_else(|| "python3".to_string())
}

fn summary_text(s: &ImportSummary, out: &std::path::Path) -> String {
    let modules: Vec<String> = s.modules.iter().map(|(m, n)| format!("{m} {n}")).collect();
    format!(
        "imported {} ranks, {} files, {} counters, {} DXT events (records per module: {})\ntrace: {}\n",
        s.ranks,
        s.files,
        s.counters,
        s.events,
        modules.join(", "),
        human::printable_text(&out.display().to_string()),
    )
}
