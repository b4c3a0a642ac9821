//! `pioscope simulate`: runs a generated workload or a replayed trace on a system model and
//! writes the simulated trace store, with a summary (simulated time, per-function totals,
//! throughput beside the analytic bound).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use clap::Parser;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use pioscope_sim::engine;
use pioscope_sim::model::System;
use pioscope_sim::model::{bounds, load};
use pioscope_sim::mpiio::output::{StoreRecorder, StoreSummary};
use pioscope_sim::mpiio::{replay, workload};
use pioscope_sim::program::{IoKind, Job};
use pioscope_trace::functions::{self, Layer};
use pioscope_trace::store::SettingRow;

use crate::human;

/// Simulate a workload or replay a trace on a system model
///
/// Runs a generated workload (--workload) or the calls of a traced run (--trace) through the
/// discrete-event simulator with ROMIO's MPI-IO strategies, on a preset (local, pvfs2-2009,
/// lustre-fdr) or a model file, and writes the simulated trace store to OUT (the same format
/// as a traced run, with server and disk containers): `pioscope stats`, `report` and `view`
/// read it. The same inputs and seed give byte-identical output. Workloads, replay and the
/// model are described in docs/MODEL.md.
///
/// Examples:
///   pioscope simulate --workload hpio:ranks=4,region_size=32,mode=collective -o sim
///   pioscope simulate --trace run1 --system pvfs2-2009 --set cb_buffer_size=64M -o what-if
#[derive(Parser, Debug)]
#[command(after_help = crate::EXIT_CODES)]
#[command(group(clap::ArgGroup::new("input").required(true).args(["workload", "trace"])))]
pub struct Args {
    /// A generated workload: hpio:, ior:, mdtest:, mpi-io-test:, comm: or jacobi: with
    /// KEY=V,... (keys in docs/MODEL.md; hint.NAME=VALUE sets an MPI-IO hint)
    #[arg(long, value_name = "SPEC")]
    pub workload: Option<String>,
    /// A trace directory whose calls are replayed (compute gaps kept, MPI-IO re-planned)
    #[arg(long, value_name = "TRACE")]
    pub trace: Option<PathBuf>,
    /// System model: a preset name (local, pvfs2-2009, lustre-fdr) or a TOML file
    #[arg(long, value_name = "PRESET|FILE", default_value = "local")]
    pub system: String,
    /// Override a model field, e.g. cb_buffer_size=64M or storage.disk.sequential=100MB/s
    /// (repeatable; applied in order after the model is read)
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
    /// Random seed (the same seed gives the same output)
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub seed: u64,
    /// The simulated trace directory to create
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    pub output: PathBuf,
    /// Replace OUT if it is an existing trace
    #[arg(long)]
    pub force: bool,
}

/// What was simulated, for the summary.
struct Input {
    job: Job,
    written: u64,
    read: u64,
    settings: Vec<SettingRow>,
    what: String,
}

/// Runs the simulation and prints the summary.
pub fn run(args: Args) -> Result<u8> {
    let system = load::system(&args.system, &args.sets)?;
    let input = build_input(&args, &system)?;
    super::prepare_output(&args.output, args.force)?;

    let ranks = input.job.programs.len() as u32;
    let mut rec = StoreRecorder::new(&system, ranks);
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("{spinner} simulating: {msg} {elapsed}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    let shown = bar.clone();
    rec.on_progress(move |records, t| {
        shown.set_message(format!(
            "{records} calls, simulated time {}",
            human::duration_ns(t as i64)
        ));
    });
    bar.enable_steady_tick(Duration::from_millis(200));
    let t0 = Instant::now();
    let result = engine::run(&system, &input.job, args.seed, &mut rec);
    bar.finish_and_clear();
    let run = result.context("simulation failed")?;
    let wall = t0.elapsed();
    let command = format!(
        "pioscope simulate {} --system {}{} --seed {}",
        input.what,
        args.system,
        args.sets
            .iter()
            .map(|s| format!(" --set {s}"))
            .collect::<String>(),
        args.seed
    );
    let store = rec
        .write(
            &args.output,
            &system,
            &input.job.files,
            &input.settings,
            &command,
        )
        .with_context(|| format!("writing {}", args.output.display()))?;
    eprintln!(
        "pioscope: {} engine events in {} ({} events/s)",
        run.events,
        human::duration_ns(wall.as_nanos() as i64),
        human::rate(run.events as f64 / wall.as_secs_f64().max(1e-9))
    );
    let mut out = super::Output::stdout();
    out.write(format_args!(
        "{}",
        summary_text(&system, &input, &store, run.end_ns)
    ))?;
    out.line(format_args!("trace: {}", args.output.display()))?;
    out.finish()?;
    Ok(0)
}

fn build_input(args: &Args, system: &System) -> Result<Input> {
    if let Some(spec) = &args.workload {
        let g = workload::generate(spec, system).context("--workload")?;
        let settings = (0..g.job.files.len() as u32)
            .flat_map(|f| g.hints.setting_rows(f))
            .collect();
        return Ok(Input {
            job: g.job,
            written: g.bytes_written,
            read: g.bytes_read,
            settings,
            what: format!("--workload {spec}"),
        });
    }
    let dir = args
        .trace
        .as_ref()
        .context("--workload or --trace is required")?;
    let trace = super::open_trace(dir)?;
    let r = replay::replay(&trace, system, &replay::hint_overrides(&args.sets))
        .with_context(|| format!("replaying {}", dir.display()))?;
    let settings = r
        .file_hints
        .iter()
        .enumerate()
        .flat_map(|(f, h)| h.setting_rows(f as u32))
        .collect();
    Ok(Input {
        job: r.job,
        written: r.bytes_written,
        read: r.bytes_read,
        settings,
        what: format!("--trace {}", dir.display()),
    })
}

/// The summary: deterministic for the same inputs (golden tests compare it).
fn summary_text(system: &System, input: &Input, store: &StoreSummary, end_ns: u64) -> String {
    let mut s = String::new();
    let ranks = input.job.programs.len();
    s.push_str(&format!(
        "simulated {} on {}: {} ranks, {} files\n",
        input
            .what
            .trim_start_matches("--workload ")
            .trim_start_matches("--trace "),
        system.name,
        ranks,
        input.job.files.len()
    ));
    s.push_str(&format!(
        "simulated time {}, {} events in the trace\n",
        human::duration_ns(end_ns as i64),
        store.events
    ));
    // Per function, by layer.
    let mut rows: Vec<(Layer, &String, _)> = store
        .funcs
        .iter()
        .map(|(name, t)| {
            let layer = functions::by_name(name).map_or(Layer::Tracer, |f| f.layer);
            (layer, name, t)
        })
        .collect();
    rows.sort_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
    let table: Vec<Vec<String>> = rows
        .iter()
        .map(|(layer, name, t)| {
            vec![
                layer.name().to_string(),
                name.to_string(),
                t.calls.to_string(),
                if t.bytes > 0 {
                    human::bytes(t.bytes)
                } else {
                    "-".to_string()
                },
                human::duration_ns(t.time_ns as i64),
            ]
        })
        .collect();
    let t = human::table(
        &["layer", "function", "calls", "bytes", "time (sum)"],
        &table,
        2,
    );
    for line in t.lines() {
        s.push_str("  ");
        s.push_str(line);
        s.push('\n');
    }
    let secs = end_ns as f64 / 1e9;
    for (kind, bytes, posix) in [
        (
            IoKind::Write,
            input.written,
            ["pwrite", "pwrite64", "write"],
        ),
        (IoKind::Read, input.read, ["pread", "pread64", "read"]),
    ] {
        if bytes == 0 {
            continue;
        }
        // The ceiling for the storage-level requests the run made: all ranks as clients,
        // the mean POSIX request size.
        let (n, b) = posix
            .iter()
            .filter_map(|f| store.funcs.get(*f))
            .fold((0u64, 0u64), |(n, b), t| (n + t.calls, b + t.bytes));
        let req = b.checked_div(n).unwrap_or(bytes);
        let bound = bounds::throughput(system, ranks as u32, req, kind);
        let ceiling = bound.for_volume(b.max(bytes) as f64);
        let rate = if secs > 0.0 { bytes as f64 / secs } else { 0.0 };
        s.push_str(&format!(
            "{}: {} in {} = {} (bound {} for {} clients with {} requests, limited by {}; {} at the storage)\n",
            if kind == IoKind::Write { "write" } else { "read" },
            human::bytes(bytes),
            human::duration_ns(end_ns as i64),
            human::throughput(rate),
            human::throughput(ceiling),
            ranks,
            human::bytes(req),
            bound.limited_by,
            human::bytes(b),
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn args_need_one_input() {
        use clap::CommandFactory;
        let cmd = Args::command();
        assert!(cmd
            .clone()
            .try_get_matches_from(["simulate", "-o", "x"])
            .is_err());
        assert!(cmd
            .clone()
            .try_get_matches_from(["simulate", "-o", "x", "--workload", "hpio", "--trace", "t"])
            .is_err());
        assert!(cmd
            .try_get_matches_from(["simulate", "-o", "x", "--workload", "hpio"])
            .is_ok());
    }
}
