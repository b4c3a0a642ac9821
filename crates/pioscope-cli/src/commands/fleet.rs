//! `pioscope fleet`: many jobs at once. Finds the trace stores and Darshan logs under the
//! directories given, profiles each as `report` does (a Darshan log imported first, into a
//! scratch store that is removed after, by the worker's own long-lived Darshan reader), on
//! every core, and streams one row per job and one
//! per finding into jobs.parquet and findings.parquet: memory holds one profile per worker,
//! never the fleet. Then DuckDB ranks the written tables for summary.html (fleet/ranking.rs);
//! the tables stay when the ranking cannot run, with exit status 4.

use std::fs;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use clap::Parser;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use pioscope_analysis::fleet::ranking;
use pioscope_analysis::fleet::table::{TableWriter, FINDINGS_FILE, JOBS_FILE};
use pioscope_analysis::fleet::{self, FindingRow, InputKind, JobRow};
use pioscope_analysis::profile::{self, Options};
use pioscope_trace::import::darshan::DarshanReader;
use pioscope_trace::store::Trace;

use crate::fleet_html::{self, SUMMARY_FILE};
use crate::fleet_inputs::{self, Input};
use crate::output_file::Staged;

/// The scratch directory inside the staged output where Darshan logs are imported (and where
/// DuckDB spills).
const SCRATCH: &str = ".scratch";

/// The exit status when the tables were written but summary.html was not (main.rs EXIT_CODES).
const NO_SUMMARY: u8 = 4;

/// Profile many jobs at once: one table row per job, findings ranked across the fleet
///
/// Walks the directories given for pioscope trace stores (directories with meta.json) and
/// Darshan logs (recognised by their first bytes, whatever their name), profiles every job as
/// `pioscope report` does (Darshan logs are imported first, as `pioscope import darshan`
/// does, into a scratch store removed after), on several cores, and writes the directory OUT:
/// jobs.parquet, one row per input (size, duration, I/O time and share, bytes, the costliest
/// finding and its cost; an input that failed, a damaged log or an unreadable store, is a row
/// with its error); findings.parquet, one row per finding of every job with its estimated
/// cost; summary.html, the jobs with the most I/O time, every finding rule ranked by its cost
/// over the fleet, and the inputs that failed, ranked by DuckDB (the Python module `duckdb`,
/// in the interpreter of --python) over the tables.
///
/// Memory stays bounded whatever the number of jobs: rows are written as they come, and
/// DuckDB's memory is capped (it spills to disk). The tables' columns and the ranking's SQL,
/// which also runs on Spark, are in docs/FORMAT.md "Fleet tables". Failed inputs do not fail
/// the command (exit 0); without DuckDB the tables are written but not summary.html (exit 4).
/// A progress bar shows on stderr.
#[derive(Parser, Debug)]
#[command(after_help = crate::EXIT_CODES)]
pub struct Args {
    /// Directories (walked) or single inputs: trace stores and Darshan logs
    #[arg(value_name = "DIR", required = true)]
    pub inputs: Vec<PathBuf>,
    /// The fleet directory to create (jobs.parquet, findings.parquet, summary.html)
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    pub output: PathBuf,
    /// Replace OUT if it is an earlier fleet directory
    #[arg(long)]
    pub force: bool,
    /// Jobs profiled at once [default: the number of cores]
    #[arg(short = 'j', long, value_name = "N")]
    pub jobs: Option<usize>,
    /// Finding thresholds: a TOML file overriding the defaults (docs/FINDINGS.md)
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Count every record, system files and sockets included (as `report --all`)
    #[arg(long)]
    pub all: bool,
    /// Python interpreter with PyDarshan, for the Darshan logs, and duckdb, for the ranking
    /// [default: $PIOSCOPE_PYTHON, else python3]
    #[arg(long, value_name = "PYTHON")]
    pub python: Option<String>,
}

/// Whether `dir` is a fleet directory (`--force` replaces only those).
fn is_fleet(dir: &Path) -> bool {
    dir.join(JOBS_FILE).is_file()
}

/// What every worker needs.
struct Job<'a> {
    options: &'a Options,
    python: &'a str,
    scratch: &'a Path,
}

/// Runs the fleet.
pub fn run(args: Args) -> Result<u8> {
    if args.jobs == Some(0) {
        bail!("--jobs must be at least 1");
    }
    if let Some(missing) = args.inputs.iter().find(|p| p.symlink_metadata().is_err()) {
        bail!("{} does not exist", missing.display());
    }
    let staged = Staged::directory(&args.output, args.force, ("a fleet", &is_fleet))?;
    let options = super::report::profile_options(args.config.as_deref(), args.all)?;
    let python = super::import::python(args.python);
    let inputs = fleet_inputs::find(&args.inputs);
    if inputs.is_empty() {
        bail!("no trace store or Darshan log found under the directories given");
    }
    let out = staged.path().to_path_buf();
    fs::create_dir(&out).with_context(|| format!("creating {}", args.output.display()))?;
    let scratch = out.join(SCRATCH);
    fs::create_dir(&scratch).with_context(|| format!("creating {}", scratch.display()))?;
    let table = |name: &str| out.join(name);
    let mut jobs = TableWriter::<JobRow>::create(&table(JOBS_FILE))?;
    let mut findings = TableWriter::<FindingRow>::create(&table(FINDINGS_FILE))?;
    let mut failed = 0u64;

    let bar =
        ProgressBar::with_draw_target(Some(inputs.len() as u64), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len} jobs {elapsed} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    bar.set_prefix("profiling");
    bar.enable_steady_tick(Duration::from_millis(200));
    let workers = args
        .jobs
        .or_else(|| std::thread::available_parallelism().ok().map(|n| n.get()))
        .unwrap_or(1)
        .min(inputs.len());
    let job = Job {
        options: &options,
        python: &python,
        scratch: &scratch,
    };
    let next = AtomicUsize::new(0);
    // A small queue: a worker waits rather than pile up rows the writer has not taken.
    let (tx, rx) = mpsc::sync_channel::<(JobRow, Vec<FindingRow>)>(2 * workers);
    let written: Result<()> = std::thread::scope(|s| {
        for _ in 0..workers {
            let tx = tx.clone();
            let (next, inputs, job) = (&next, &inputs, &job);
            s.spawn(move || {
                // One Darshan reader per worker, started on its first log and kept for the
                // next ones: PyDarshan's start-up is paid once per worker, not once per log.
                let mut reader = DarshanReader::new(job.python);
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(input) = inputs.get(i) else { break };
                    if tx.send(job.rows(i, input, &mut reader)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        for (row, found) in rx {
            failed += u64::from(row.error.is_some());
            bar.set_message(row.job.clone());
            jobs.push(row)?;
            for f in found {
                findings.push(f)?;
            }
            bar.inc(1);
        }
        Ok(())
    });
    bar.finish_and_clear();
    written?;
    let (rows, finding_rows) = (jobs.rows(), findings.rows());
    jobs.finish()?;
    findings.finish()?;
    // DuckDB spills into the scratch directory, removed with it.
    let ranked = ranking::rank(
        &python,
        &args.output,
        &table(JOBS_FILE),
        &table(FINDINGS_FILE),
        &scratch,
    );
    fs::remove_dir_all(&scratch).with_context(|| format!("removing {}", scratch.display()))?;
    if let Ok(r) = &ranked {
        fs::write(table(SUMMARY_FILE), fleet_html::page(r))
            .with_context(|| format!("writing {SUMMARY_FILE}"))?;
    }
    // The tables are the fleet's primary output: kept even when the ranking failed.
    staged.commit()?;
    let mut out = super::Output::stdout();
    out.write(format_args!(
        "{rows} jobs ({} profiled, {failed} failed), {finding_rows} findings\nfleet: {}\n",
        rows - failed,
        args.output.display()
    ))?;
    out.finish()?;
    match ranked {
        Ok(_) => Ok(0),
        Err(e) => {
            eprintln!(
                "pioscope: error: {SUMMARY_FILE} not written (the tables are): {}",
                crate::human::printable_line(&e.to_string())
            );
            Ok(NO_SUMMARY)
        }
    }
}

impl Job<'_> {
    /// The rows of input `i`: its profile's, or one with the error (a panic included: one
    /// bad input never ends the fleet).
    fn rows(
        &self,
        i: usize,
        input: &Input,
        reader: &mut DarshanReader,
    ) -> (JobRow, Vec<FindingRow>) {
        let name = input.job_name();
        let path = input.path.display().to_string();
        let result = catch_unwind(AssertUnwindSafe(|| {
            self.profile(i, input, &path, &name, reader)
        }));
        let error = match result {
            Ok(Ok(rows)) => return rows,
            Ok(Err(e)) => format!("{e:#}"),
            Err(_) => {
                // The panic may have left the reader mid-log: the next log gets a new one.
                *reader = DarshanReader::new(self.python);
                "internal error while profiling it (a bug in pioscope)".to_string()
            }
        };
        (fleet::failed(&path, input.kind, &name, error), Vec::new())
    }

    fn profile(
        &self,
        i: usize,
        input: &Input,
        path: &str,
        name: &str,
        reader: &mut DarshanReader,
    ) -> Result<(JobRow, Vec<FindingRow>)> {
        match input.kind {
            InputKind::Unknown => Err(anyhow!(input.error.clone().unwrap_or_default())),
            InputKind::Trace => self.profile_store(&input.path, path, name, input.kind),
            InputKind::Darshan => {
                let store = self.scratch.join(i.to_string());
                let result = reader
                    .import(&input.path, &store)
                    .map_err(anyhow::Error::from)
                    .and_then(|_| self.profile_store(&store, path, name, input.kind));
                // Removed whatever happened; what a failed import left goes with the scratch.
                let _ = fs::remove_dir_all(&store);
                result
            }
        }
    }

    fn profile_store(
        &self,
        store: &Path,
        path: &str,
        name: &str,
        kind: InputKind,
    ) -> Result<(JobRow, Vec<FindingRow>)> {
        let trace = Trace::open(store)?;
        let p = profile::profile(&trace, self.options, &mut |_, _| {})?;
        Ok(fleet::rows(path, kind, name, &trace, &p))
    }
}
