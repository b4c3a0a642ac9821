//! `pioscope`: the command line. Parses arguments, dispatches to one module per subcommand
//! (src/commands/), and turns every error into one line on stderr and exit code 2.

mod commands;
mod elf;
mod human;
mod launch;
mod report_html;
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
    Stats(commands::stats::Args),
    Report(commands::report::Args),
    Dump(commands::dump::Args),
    Bench(commands::bench::Args),
    Synth(commands::synth::Args),
    Simulate(commands::simulate::Args),
    Calibrate(commands::calibrate::Args),
    Compare(commands::compare::Args),
    Bounds(commands::bounds::Args),
    Export(commands::export::Args),
    View(commands::view::Args),
}

fn main() -> ExitCode {
    // Bad input never reaches a panic; if a bug does, say so in one line, without a backtrace.
    std::panic::set_hook(Box::new(|info| {
        eprintln!("pioscope: internal error: {info}");
    }));
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run(args) => commands::run::run(args),
        Command::Merge(args) => commands::merge::run(args),
        Command::Stats(args) => commands::stats::run(args),
        Command::Report(args) => commands::report::run(args),
        Command::Dump(args) => commands::dump::run(args),
        Command::Bench(args) => commands::bench::run(args),
        Command::Synth(args) => commands::synth::run(args),
        Command::Simulate(args) => commands::simulate::run(args),
        Command::Calibrate(args) => commands::calibrate::run(args),
        Command::Compare(args) => commands::compare::run(args),
        Command::Bounds(args) => commands::bounds::run(args),
        Command::Export(args) => commands::export::run(args),
        Command::View(args) => commands::view::run(args),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            let msg = format!("{e:#}").replace('\n', " ");
            eprintln!("pioscope: error: {msg}");
            ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_definition_is_valid() {
        Cli::command().debug_assert();
    }
}
