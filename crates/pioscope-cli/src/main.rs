//! `pioscope`: the command line. Parses arguments, dispatches to one module per subcommand
//! (src/commands/), and turns every error into one line on stderr and exit code 2.

mod allocator;
mod commands;
mod elf;
mod fleet_html;
mod fleet_inputs;
mod human;
mod launch;
mod mpi_flavour;
mod output_file;
mod report_html;
mod sampler;
mod untraced_mpi;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Exit codes, shown in every --help and in docs/CLI.md.
pub const EXIT_CODES: &str = "\
Exit codes:
  0    success (a partial trace is still a success: a warning names what was lost)
  2    error: bad arguments, missing program or runtime library, TRACE exists, not a trace
       directory, raw directory missing or empty, nothing usable to merge, invalid
       findings config (report --config), I/O failure
  3    `diff --fail-above PCT`: B's I/O time, an I/O layer's or a Darshan module's time grew
       by more than PCT percent
  4    `fleet`: the tables were written but not summary.html (the Python interpreter has no
       duckdb module, or DuckDB's ranking failed)
  N    `run` and `bench`: the traced program's own exit status (128+S if killed by signal S)
  101  internal error (a bug in pioscope; please report it)";

#[derive(Parser, Debug)]
#[command(
    name = "pioscope",
    version,
    about = "Trace, merge and analyse the I/O of parallel (MPI) programs",
    long_about = "pioscope traces every I/O layer of an unmodified program (MPI-IO, MPI, POSIX, \
STDIO, user regions) through LD_PRELOAD, merges the per-process raw files into a trace store \
(Parquet tables + meta.json that pandas and DuckDB read as they are), and summarises it.\n\n\
Typical use:\n  pioscope run -n 64 -- ./app input.nml\n  pioscope report pioscope-trace-app-20250101-120000\n  pioscope stats pioscope-trace-app-20250101-120000 --by func",
    after_help = EXIT_CODES,
    propagate_version = true
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    Run(commands::run::Args),
    Merge(commands::merge::Args),
    Import(commands::import::Args),
    Sample(commands::sample::Args),
    Stats(commands::stats::Args),
    Report(commands::report::Args),
    Fleet(commands::fleet::Args),
    Dump(commands::dump::Args),
    Bench(commands::bench::Args),
    Synth(commands::synth::Args),
    Simulate(commands::simulate::Args),
    Calibrate(commands::calibrate::Args),
    Compare(commands::compare::Args),
    Diff(commands::diff::Args),
    Bounds(commands::bounds::Args),
    Export(commands::export::Args),
    View(commands::view::Args),
    Colours(commands::colours::Args),
}

fn main() -> ExitCode {
    allocator::keep_batch_memory();
    // Bad input never reaches a panic; if a bug does, say so in one line, without a backtrace.
    std::panic::set_hook(Box::new(|info| {
        if pioscope_trace::store::scan::panic_becomes_an_error() {
            return;
        }
        eprintln!(
            "pioscope: internal error: {}",
            panic_line(info.payload(), info.location())
        );
    }));
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if !is_usage_error(e.kind()) => e.exit(),
        Err(e) => {
            eprintln!("pioscope: error: {}", usage_error_line(&e.to_string()));
            return ExitCode::from(2);
        }
    };
    let result = match cli.command {
        Command::Run(args) => commands::run::run(args),
        Command::Merge(args) => commands::merge::run(args),
        Command::Import(args) => commands::import::run(args),
        Command::Sample(args) => commands::sample::run(args),
        Command::Stats(args) => commands::stats::run(args),
        Command::Report(args) => commands::report::run(args),
        Command::Fleet(args) => commands::fleet::run(args),
        Command::Dump(args) => commands::dump::run(args),
        Command::Bench(args) => commands::bench::run(args),
        Command::Synth(args) => commands::synth::run(args),
        Command::Simulate(args) => commands::simulate::run(args),
        Command::Calibrate(args) => commands::calibrate::run(args),
        Command::Compare(args) => commands::compare::run(args),
        Command::Diff(args) => commands::diff::run(args),
        Command::Bounds(args) => commands::bounds::run(args),
        Command::Export(args) => commands::export::run(args),
        Command::View(args) => commands::view::run(args),
        Command::Colours(args) => commands::colours::run(args),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("pioscope: error: {}", error_line(&e));
            ExitCode::from(2)
        }
    }
}

/// An error and its causes as one line, "CONTEXT: CAUSE: ...", leaving out a cause whose text
/// its error already ends with (a library error that prints its source, then the source).
fn error_line(e: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if line.ends_with(&text) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&text);
    }
    // Line breaks become spaces (a parser's message may span lines); any other control
    // character from a quoted path or trace text is escaped.
    human::printable_line(&line.replace('\n', " ")).into_owned()
}

/// Whether clap's `kind` is a mistake in the command line (said in one line, exit 2), not help
/// or a version asked for (or help shown because nothing was given), which clap prints itself.
fn is_usage_error(kind: clap::error::ErrorKind) -> bool {
    use clap::error::ErrorKind::{
        DisplayHelp, DisplayHelpOnMissingArgumentOrSubcommand, DisplayVersion,
    };
    !matches!(
        kind,
        DisplayHelp | DisplayHelpOnMissingArgumentOrSubcommand | DisplayVersion
    )
}

/// clap's usage error as one line: its message and tips without the `error:` prefix, the usage
/// block and the closing hint, line breaks folded, and where help is.
fn usage_error_line(rendered: &str) -> String {
    let message = rendered.split("\n\nUsage:").next().unwrap_or(rendered);
    let message = message.strip_prefix("error: ").unwrap_or(message);
    let message = message.replace("For more information, try '--help'.", "");
    let folded: Vec<&str> = message.split_whitespace().collect();
    format!("{} (see --help)", folded.join(" "))
}

/// A panic as one line (the standard message puts the location and the message on two):
/// "MESSAGE (at FILE:LINE:COLUMN)".
fn panic_line(payload: &dyn std::any::Any, location: Option<&std::panic::Location<'_>>) -> String {
    let message = payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("panic");
    let mut line = message.replace('\n', " ");
    if let Some(l) = location {
        line.push_str(&format!(" (at {l})"));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    /// Regression (issue 12): "cannot read X: No such file: No such file".
    #[test]
    fn an_error_line_says_each_cause_once() {
        #[derive(Debug)]
        struct ReadError(std::io::Error);
        impl std::fmt::Display for ReadError {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "cannot read x.toml: {}", self.0)
            }
        }
        impl std::error::Error for ReadError {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                Some(&self.0)
            }
        }
        let io = std::io::Error::from(std::io::ErrorKind::NotFound);
        let e = anyhow::Error::from(ReadError(io)).context("findings\nconfig");
        assert_eq!(
            error_line(&e),
            "findings config: cannot read x.toml: entity not found"
        );
    }

    /// Regression (issue 12): internal errors were printed on two lines.
    #[test]
    fn a_usage_error_is_one_line() {
        let rendered = "error: the following required arguments were not provided:\n  <TRACE>\n\nUsage: pioscope stats <TRACE>\n\nFor more information, try '--help'.\n";
        assert_eq!(
            usage_error_line(rendered),
            "the following required arguments were not provided: <TRACE> (see --help)"
        );
        let no_usage =
            "error: invalid value 'phaze' for '--by <BY>'\n\nFor more information, try '--help'.\n";
        assert_eq!(
            usage_error_line(no_usage),
            "invalid value 'phaze' for '--by <BY>' (see --help)"
        );
    }

    #[test]
    fn a_panic_is_one_line() {
        let here = std::panic::Location::caller();
        let line = panic_line(&String::from("index out of\nbounds"), Some(here));
        assert_eq!(line, format!("index out of bounds (at {here})"));
        assert_eq!(panic_line(&"boom", None), "boom");
    }

    #[test]
    fn cli_definition_is_valid() {
        Cli::command().debug_assert();
    }
}
