//! `pioscope export`: a trace → Pajé, Chrome trace JSON, OTF2 or CSV, for other viewers.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{anyhow, bail, Result};
use clap::Parser;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use pioscope_export::{export, Format, Options};

use crate::output_file::Staged;

/// Export a trace to Pajé, Chrome trace JSON, OTF2 or CSV
///
/// Writes the events of TRACE for another viewer: `paje` (a Pajé file for ViTE and pajeng),
/// `chrome` (trace event JSON for Perfetto and chrome://tracing), `otf2` (an OTF2 archive
/// directory for Vampir; OUT/traces.otf2 is its anchor file) or `csv` (every event column, file
/// paths resolved). docs/EXPORTS.md says what becomes what in each format.
///
/// Example: pioscope export run1 --to chrome -o run1.json --rank 0 --rank 1 --from 1s --to-time 2s
#[derive(Parser, Debug)]
#[command(after_help = crate::EXIT_CODES)]
pub struct Args {
    /// The trace directory
    pub trace: PathBuf,
    /// Output format
    #[arg(long = "to", value_name = "FORMAT", value_parser = parse_format)]
    pub format: Format,
    /// Output file (a directory for otf2)
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    pub output: PathBuf,
    /// Replace OUT if it exists (for otf2: only a directory holding an OTF2 archive or nothing)
    #[arg(long)]
    pub force: bool,
    /// Export only this rank (repeat for several); default: every rank, server and disk
    #[arg(long = "rank", value_name = "R")]
    pub ranks: Vec<i32>,
    /// Export only calls that end at or after T (ns since job start, or with a unit: 1.5s,
    /// 200ms, 10us, 500ns)
    #[arg(long = "from", value_name = "T", value_parser = parse_time)]
    pub from: Option<i64>,
    /// Export only calls that start at or before T (same units as --from)
    #[arg(long = "to-time", value_name = "T", value_parser = parse_time)]
    pub to_time: Option<i64>,
}

fn parse_format(s: &str) -> Result<Format, String> {
    s.parse()
}

/// A time: integer nanoseconds, or a number with a unit (s, ms, us, ns).
pub fn parse_time(s: &str) -> Result<i64, String> {
    let s = s.trim();
    let (num, scale) = if let Some(n) = s.strip_suffix("ns") {
        (n, 1.0)
    } else if let Some(n) = s.strip_suffix("us") {
        (n, 1e3)
    } else if let Some(n) = s.strip_suffix("ms") {
        (n, 1e6)
    } else if let Some(n) = s.strip_suffix('s') {
        (n, 1e9)
    } else {
        (s, 1.0)
    };
    match num.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok((v * scale).round() as i64),
        _ => Err(format!(
            "{s:?} is not a time (ns, or a number with s, ms, us or ns)"
        )),
    }
}

/// Stages OUT (the rules are in [`crate::output_file`]): a file, or for OTF2 a directory that
/// `--force` replaces only when it holds an OTF2 archive (or nothing).
fn stage(args: &Args) -> Result<Staged> {
    if args.format == Format::Otf2 {
        let is_archive = |dir: &Path| dir.join("traces.otf2").is_file();
        Staged::directory(&args.output, args.force, ("an OTF2 archive", &is_archive))
    } else {
        Staged::file(&args.output, args.force)
    }
}

/// Runs the export.
pub fn run(args: Args) -> Result<u8> {
    let trace = super::open_trace(&args.trace)?;
    if let (Some(a), Some(b)) = (args.from, args.to_time) {
        if a > b {
            bail!("--from must not be after --to-time");
        }
    }
    let staged = stage(&args)?;
    let opts = Options {
        ranks: args.ranks.clone(),
        from_ns: args.from,
        to_ns: args.to_time,
    };
    let bar =
        ProgressBar::with_draw_target(Some(trace.meta.counts.events), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len} events {elapsed}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    bar.set_prefix(format!("exporting to {}", args.format));
    bar.enable_steady_tick(Duration::from_millis(200));
    let result = export(&trace, args.format, staged.path(), &opts, &mut |n| {
        bar.set_position(n)
    });
    bar.finish_and_clear();
    // On error `staged` is dropped and its temporary removed: half a file would load in no
    // viewer, and the old OUT stays as it was. Errors name OUT, not the temporary.
    let summary = result.map_err(|e| {
        anyhow!(
            "exporting {} to {}: {}",
            args.trace.display(),
            args.format,
            e.to_string().replace(
                &staged.path().display().to_string(),
                &args.output.display().to_string()
            )
        )
    })?;
    staged.commit()?;
    let mut out = super::Output::stdout();
    out.line(format_args!(
        "{} events, {} messages, {} counter samples → {} ({})",
        summary.events,
        summary.messages,
        summary.counters,
        args.output.display(),
        args.format
    ))?;
    out.finish()?;
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_take_units() {
        assert_eq!(parse_time("1500"), Ok(1500));
        assert_eq!(parse_time("1.5s"), Ok(1_500_000_000));
        assert_eq!(parse_time("200ms"), Ok(200_000_000));
        assert_eq!(parse_time("10us"), Ok(10_000));
        assert_eq!(parse_time("7ns"), Ok(7));
        assert!(parse_time("-1s").is_err());
        assert!(parse_time("soon").is_err());
    }
}
