//! `pioscope export`: a trace → Pajé, Chrome trace JSON, OTF2 or CSV, for other viewers.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use clap::Parser;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use pioscope_export::{export, Format, Options};

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

/// Makes sure OUT can be written: refuses to replace anything without --force, and even with
/// it never removes a directory that is not an OTF2 archive (or empty).
fn prepare(args: &Args) -> Result<()> {
    let out = &args.output;
    if out.symlink_metadata().is_err() {
        return Ok(());
    }
    if !args.force {
        bail!(
            "{} already exists (use --force to replace it)",
            out.display()
        );
    }
    if out.is_dir() {
        let empty = std::fs::read_dir(out).map(|mut d| d.next().is_none())?;
        if args.format != Format::Otf2 || !(empty || out.join("traces.otf2").is_file()) {
            bail!(
                "refusing to replace {}: it is a directory{}",
                out.display(),
                if args.format == Format::Otf2 {
                    " that holds no OTF2 archive"
                } else {
                    ""
                }
            );
        }
        std::fs::remove_dir_all(out).with_context(|| format!("removing {}", out.display()))?;
    } else {
        std::fs::remove_file(out).with_context(|| format!("removing {}", out.display()))?;
    }
    Ok(())
}

/// Runs the export.
pub fn run(args: Args) -> Result<u8> {
    let trace = super::open_trace(&args.trace)?;
    if let (Some(a), Some(b)) = (args.from, args.to_time) {
        if a > b {
            bail!("--from must not be after --to-time");
        }
    }
    prepare(&args)?;
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
    let result = export(&trace, args.format, &args.output, &opts, &mut |n| {
        bar.set_position(n)
    });
    bar.finish_and_clear();
    if result.is_err() {
        // Half a file would load in no viewer; leave nothing rather than something broken.
        let _ = if args.output.is_dir() {
            std::fs::remove_dir_all(&args.output)
        } else {
            std::fs::remove_file(&args.output)
        };
    }
    let summary =
        result.with_context(|| format!("exporting {} to {}", args.trace.display(), args.format))?;
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
