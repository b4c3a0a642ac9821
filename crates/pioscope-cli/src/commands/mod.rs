//! One module per subcommand, each with an `Args` struct (its flags and help text), a
//! `run(args) -> Result<u8>` returning the exit code, and its tests. Shared steps (preparing an
//! output directory, merging with a progress bar, printing a summary) live here.
//!
//! Template for a new subcommand `foo` (add `Foo(commands::foo::Args)` to `Command` in main.rs
//! and a section to docs/CLI.md):
//!
//! ```text
//! //! `pioscope foo`: one line on what it shows.
//! use anyhow::Result;
//! use clap::Parser;
//!
//! /// One-line help (the first line shows in `pioscope --help`).
//! ///
//! /// Longer help: what it reads, what it prints, an example.
//! #[derive(Parser, Debug)]
//! #[command(after_help = crate::EXIT_CODES)]
//! pub struct Args {
//!     /// The trace directory.
//!     pub trace: std::path::PathBuf,
//! }
//!
//! pub fn run(args: Args) -> Result<u8> {
//!     let trace = super::open_trace(&args.trace)?;
//!     let mut out = super::Output::stdout();
//!     out.line(format_args!("{} events", trace.meta.counts.events))?;
//!     Ok(0)
//! }
//! ```

pub mod bench;
pub mod bench_tas;
pub mod bounds;
pub mod calibrate;
mod calibrate_daemons;
pub mod colours;
pub mod compare;
pub mod diff;
pub mod dump;
pub mod export;
pub mod fleet;
pub mod import;
pub mod merge;
pub mod report;
pub mod run;
pub mod sample;
pub mod simulate;
pub mod stats;
pub mod synth;
pub mod view;

use std::fmt;
use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use pioscope_trace::merge::{merge_with_servers, MergeSummary, Progress};
use pioscope_trace::store::{Trace, META_FILE};

use crate::{human, output_file};

/// Opens a trace directory with a clear error.
pub fn open_trace(dir: &Path) -> Result<Trace> {
    Ok(Trace::open(dir)?)
}

/// Makes sure the trace directory `path` can be created (the rules are in
/// [`crate::output_file`]): refuses if it exists, unless `force` and it is a trace (or an empty
/// directory), which is then removed. Never deletes anything else.
pub fn prepare_output(path: &Path, force: bool) -> Result<()> {
    output_file::prepare_directory(path, force, ("a pioscope trace", &is_trace))
}

/// Whether `dir` holds a pioscope trace (its meta.json).
fn is_trace(dir: &Path) -> bool {
    dir.join(META_FILE).is_file()
}

/// Merges with a progress bar on stderr (hidden when stderr is not a terminal).
pub fn merge_with_progress(
    raw_dir: &Path,
    servers: Option<&Path>,
    out: &Path,
) -> Result<MergeSummary> {
    let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("{prefix} [{bar:30}] {bytes}/{total_bytes} {elapsed}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    bar.set_prefix("merging");
    bar.enable_steady_tick(Duration::from_millis(200));
    let result = merge_with_servers(raw_dir, servers, out, &mut |p: Progress| {
        bar.set_length(p.total);
        bar.set_position(p.done);
    });
    bar.finish_and_clear();
    Ok(result?)
}

/// Warns about everything lost (partial reasons) and clock fallbacks, on stderr.
pub fn print_warnings(summary: &MergeSummary) {
    for reason in &summary.meta.partial_reasons {
        warn(&format!("trace is partial: {reason}"));
    }
    for note in &summary.notes {
        warn(note);
    }
}

/// Prints `pioscope: warning: MESSAGE` on standard error, as one line of printable text (it
/// may quote raw file names and what the trace says).
pub fn warn(message: &str) {
    eprintln!("pioscope: warning: {}", human::printable_line(message));
}

/// The short summary after `run` and `merge`.
pub fn summary_text(summary: &MergeSummary, wall: Option<Duration>) -> String {
    let m = &summary.meta;
    let mut s = String::new();
    let ranks = if m.job.ranks > 0 {
        format!("{} ranks", m.job.ranks)
    } else {
        "no MPI".to_string()
    };
    s.push_str(&format!(
        "{ranks}, {} processes, {} events, {} files, job {}",
        m.counts.processes,
        m.counts.events,
        m.counts.files,
        human::duration_ns(m.job.duration_ns)
    ));
    if let Some(w) = wall {
        s.push_str(&format!(
            ", wall {}",
            human::duration_ns(w.as_nanos() as i64)
        ));
    }
    s.push('\n');
    for (layer, t) in &summary.totals.layers {
        if t.bytes_read + t.bytes_written == 0 {
            s.push_str(&format!("  {:<7} {} calls\n", layer.name(), t.operations));
        } else {
            s.push_str(&format!(
                "  {:<7} {} calls, {} written, {} read\n",
                layer.name(),
                t.operations,
                human::bytes(t.bytes_written),
                human::bytes(t.bytes_read)
            ));
        }
    }
    if summary.totals.left_out > 0 {
        s.push_str(&format!(
            "  ({} POSIX/STDIO records on system or helper files or descriptors without a file not counted)\n",
            summary.totals.left_out
        ));
    }
    if m.partial {
        let n = m.partial_reasons.len();
        s.push_str(&format!(
            "partial: yes ({n} reason{}, listed in meta.json)\n",
            if n == 1 { "" } else { "s" }
        ));
    } else {
        s.push_str("partial: no\n");
    }
    s.push_str(&format!("trace: {}\n", summary.trace_dir.display()));
    s
}

/// Buffered stdout that treats a closed pipe (`pioscope dump | head`) as a normal end.
pub struct Output {
    out: BufWriter<io::Stdout>,
    closed: bool,
}

impl Output {
    /// Standard output.
    pub fn stdout() -> Self {
        Output {
            out: BufWriter::new(io::stdout()),
            closed: false,
        }
    }

    /// False once the reader went away; callers stop producing.
    pub fn open(&self) -> bool {
        !self.closed
    }

    /// Writes text, control characters escaped (`human::printable_text`): it quotes the trace.
    pub fn write(&mut self, args: fmt::Arguments<'_>) -> Result<()> {
        if self.closed {
            return Ok(());
        }
        let text = fmt::format(args);
        match self.out.write_all(human::printable_text(&text).as_bytes()) {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(())
            }
            r => Ok(r.context("writing to standard output")?),
        }
    }

    /// Writes a line.
    pub fn line(&mut self, args: fmt::Arguments<'_>) -> Result<()> {
        self.write(format_args!("{args}\n"))
    }

    /// Flushes.
    pub fn finish(mut self) -> Result<()> {
        if self.closed {
            return Ok(());
        }
        match self.out.flush() {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
            r => Ok(r.context("writing to standard output")?),
        }
    }
}
