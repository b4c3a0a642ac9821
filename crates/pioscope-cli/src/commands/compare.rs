//! `pioscope compare`: a traced run against its simulation, call by call: per function, per
//! collective instance, and the calls slower than the model says, with where the model spends
//! their time, and the two runs' server tables lined up. The work is `pioscope_analysis::compare`; this module prints it.
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Parser;
use pioscope_analysis::compare::{self, Comparison, Options, ServerComparison, DEFAULT_THRESHOLD};
use pioscope_analysis::Scope;

use super::stats;
use crate::human;

/// Compare a traced run with its simulation, call by call
///
/// Pairs every rank's top-level calls, and the calls directly beneath them, of OBSERVED (a
/// traced run) and SIMULATED (`pioscope simulate --trace OBSERVED -o SIMULATED`, or any other
/// trace of the same program with the same ranks) by order of occurrence per (rank,
/// function), and beneath each matched pair per function in order. Prints per
/// function and per collective instance the observed and expected (simulated) time, their
/// ratio and the median ratio, the calls without a counterpart, and the top-level calls slower
/// than expected by more than --threshold, most time lost first, each with where its simulated
/// time went (disk, server CPU/queue, network, exchange, other) and how the observed time
/// split over the calls beneath it. When either trace has storage servers, their server
/// tables (`stats --by server`) are lined up too: servers paired by name, else by role and
/// position, each column observed against expected with the model's relative error.
///
/// Example: pioscope compare run-trace sim-trace --threshold 2 --top 10
#[derive(Parser, Debug)]
#[command(after_help = crate::EXIT_CODES)]
pub struct Args {
    /// The traced run
    pub observed: PathBuf,
    /// The simulated run (the expected times)
    pub simulated: PathBuf,
    /// A call is slower than expected when observed / expected exceeds R
    #[arg(long, value_name = "R", default_value_t = DEFAULT_THRESHOLD)]
    pub threshold: f64,
    /// Slow calls listed in the text output (--json lists all)
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub top: usize,
    /// Print everything (every matched call too) as one JSON object
    #[arg(long)]
    pub json: bool,
    /// Count every record, also POSIX/STDIO calls on system files (in both traces)
    #[arg(long)]
    pub all: bool,
}

/// Opens both traces, compares them and prints the result.
pub fn run(args: Args) -> Result<u8> {
    let observed = super::open_trace(&args.observed).context("the observed trace")?;
    let simulated = super::open_trace(&args.simulated).context("the simulated trace")?;
    let opts = Options {
        threshold: args.threshold,
        scope: if args.all {
            Scope::All
        } else {
            Scope::Application
        },
        // Every matched call only for --json: the text shows sums and the slow calls.
        operations: args.json,
    };
    let c = compare::compare(&observed, &simulated, &opts)?;
    if args.json {
        // Streamed: with every matched call the JSON can be far larger than the comparison.
        let mut w = BufWriter::new(io::stdout().lock());
        let written = serde_json::to_writer_pretty(&mut w, &c)
            .map_err(io::Error::from)
            .and_then(|()| writeln!(w))
            .and_then(|()| w.flush());
        match written {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {}
            r => r.context("writing to standard output")?,
        }
        return Ok(0);
    }
    let mut out = super::Output::stdout();
    out.write(format_args!("{}", text(&c, args.top)))?;
    out.finish()?;
    Ok(0)
}

fn ratio(r: Option<f64>) -> String {
    r.map_or_else(|| "-".to_string(), |r| format!("{r:.2}"))
}

fn ns(v: i64) -> String {
    human::duration_ns(v)
}

fn indent(text: &str, by: &str) -> String {
    text.lines().map(|l| format!("{by}{l}\n")).collect()
}

fn error(e: Option<f64>) -> String {
    e.map_or_else(|| "-".to_string(), |e| format!("{:+.1} %", e * 100.0))
}

/// The server tables side by side: per pair one line per column, then per column the median
/// and worst error over the pairs.
fn servers_text(c: &ServerComparison) -> String {
    let mut t = format!(
        "\nstorage servers: {} observed, {} simulated (error = (expected - observed) / observed)\n",
        c.observed_servers, c.simulated_servers
    );
    let name = |n: &Option<String>| n.clone().unwrap_or_else(|| "-".to_string());
    let mut rows: Vec<Vec<String>> = Vec::new();
    for p in &c.servers {
        for (k, v) in p.columns.iter().enumerate() {
            let (o, s) = if k == 0 {
                (name(&p.observed), name(&p.simulated))
            } else {
                (String::new(), String::new())
            };
            rows.push(vec![
                o,
                s,
                stats::server_column_label(v.column).to_string(),
                stats::server_cell(v.column, v.observed),
                stats::server_cell(v.column, v.expected),
                error(v.error),
            ]);
        }
    }
    let header = [
        "observed",
        "simulated",
        "column",
        "observed",
        "expected",
        "error",
    ];
    t.push_str(&indent(&human::table(&header, &rows, 3), "  "));
    if c.columns.iter().all(|s| s.pairs == 0) {
        return t;
    }
    let rows: Vec<Vec<String>> = c
        .columns
        .iter()
        .map(|s| {
            vec![
                stats::server_column_label(s.column).to_string(),
                s.pairs.to_string(),
                s.median_abs_error
                    .map_or_else(|| "-".to_string(), |e| format!("{:.1} %", e * 100.0)),
                error(s.worst_error),
            ]
        })
        .collect();
    t.push_str("\n  per column over the paired servers\n");
    t.push_str(&indent(
        &human::table(&["column", "pairs", "median |error|", "worst"], &rows, 1),
        "  ",
    ));
    t
}

/// The text report.
pub fn text(c: &Comparison, top: usize) -> String {
    let mut t = String::new();
    for (label, s) in [("observed ", &c.observed), ("simulated", &c.simulated)] {
        t.push_str(&format!(
            "{label}  {}: {} ranks, {} top-level calls, {} beneath them, job {}\n",
            s.path,
            s.ranks,
            s.top_level,
            s.children,
            ns(s.job_duration_ns)
        ));
    }
    let by = match c.matched_by {
        compare::MatchedBy::Order => "by order per (rank, function)",
    };
    t.push_str(&format!(
        "matched    {} top-level calls and {} beneath them, {by}\n",
        c.top_level.matched, c.matched_beneath
    ));
    t.push_str(&format!(
        "top level  observed {}, expected {}, ratio {}\n",
        ns(c.top_level.observed_ns),
        ns(c.top_level.expected_ns),
        ratio(c.top_level.ratio)
    ));

    t.push_str("\nper function (ratio = observed / expected; - = nothing expected)\n");
    let rows: Vec<Vec<String>> = c
        .functions
        .iter()
        .map(|f| {
            vec![
                f.func.clone(),
                f.layer.name().to_string(),
                f.totals.matched.to_string(),
                ns(f.totals.observed_ns),
                ns(f.totals.expected_ns),
                ratio(f.totals.ratio),
                ratio(f.median_ratio),
                f.slower.to_string(),
                format!("{}/{}", f.unmatched_observed, f.unmatched_simulated),
            ]
        })
        .collect();
    let slower = format!("> {}", c.threshold);
    let header = [
        "function",
        "layer",
        "matched",
        "observed",
        "expected",
        "ratio",
        "median",
        slower.as_str(),
        "unmatched obs/sim",
    ];
    t.push_str(&indent(&human::table(&header, &rows, 2), "  "));

    if !c.collectives.is_empty() {
        t.push_str("\ncollective instances (each: its slowest rank)\n");
        let rows: Vec<Vec<String>> = c
            .collectives
            .iter()
            .map(|s| {
                let worst = s.worst.and_then(|w| {
                    c.instances
                        .binary_search_by_key(&w, |i| i.instance)
                        .ok()
                        .map(|k| &c.instances[k])
                });
                vec![
                    s.func.clone(),
                    s.totals.matched.to_string(),
                    ns(s.totals.observed_ns),
                    ns(s.totals.expected_ns),
                    ratio(s.totals.ratio),
                    ratio(s.median_ratio),
                    s.slower.to_string(),
                    worst.map_or_else(
                        || "-".to_string(),
                        |w| {
                            format!(
                                "#{} {} vs {}",
                                w.instance,
                                ns(w.observed_ns),
                                ns(w.expected_ns)
                            )
                        },
                    ),
                ]
            })
            .collect();
        let header = [
            "function",
            "instances",
            "observed",
            "expected",
            "ratio",
            "median",
            slower.as_str(),
            "worst",
        ];
        t.push_str(&indent(&human::table(&header, &rows, 1), "  "));
    }

    if let Some(servers) = &c.servers {
        t.push_str(&servers_text(servers));
    }

    if !c.unmatched.is_empty() {
        t.push_str("\nunmatched calls\n");
        let rows: Vec<Vec<String>> = c
            .unmatched
            .iter()
            .map(|u| vec![u.side.to_string(), u.func.clone(), u.count.to_string()])
            .collect();
        let table = human::table(&["side", "function", "calls"], &rows, 2);
        let mut lines = table.lines();
        if let Some(h) = lines.next() {
            t.push_str(&format!("  {h}  first (rank, event)\n"));
        }
        for (line, u) in lines.zip(&c.unmatched) {
            let ex: Vec<String> = u
                .examples
                .iter()
                .map(|(r, id)| format!("r{r} #{id}"))
                .collect();
            t.push_str(&format!("  {line}  {}\n", ex.join(", ")));
        }
    }

    t.push('\n');
    if c.slow.is_empty() {
        t.push_str(&format!(
            "no top-level call is slower than expected by more than {}x\n",
            c.threshold
        ));
        return t;
    }
    let shown = c.slow.len().min(top);
    t.push_str(&format!(
        "slower than expected by more than {}x: {} top-level calls, {} lost{}\n",
        c.threshold,
        c.slow.len(),
        ns(c.slow_lost_ns),
        if shown < c.slow.len() {
            format!(" (top {shown} here, --json lists all)")
        } else {
            String::new()
        }
    ));
    let rows: Vec<Vec<String>> = c.slow[..shown]
        .iter()
        .map(|s| {
            vec![
                s.op.func.clone(),
                s.op.rank.to_string(),
                s.op.observed_id.to_string(),
                s.op.instance
                    .map_or_else(|| "-".to_string(), |i| i.to_string()),
                ns(s.op.observed_ns),
                ns(s.op.expected_ns),
                ratio(s.op.ratio),
                ns(s.lost_ns),
            ]
        })
        .collect();
    let header = [
        "function", "rank", "event", "instance", "observed", "expected", "ratio", "lost",
    ];
    let table = human::table(&header, &rows, 1);
    let width = shown.to_string().len();
    let mut lines = table.lines();
    if let Some(h) = lines.next() {
        t.push_str(&format!("  {:width$}  {h}\n", "#"));
    }
    let pad = " ".repeat(width + 4);
    for (k, (line, s)) in lines.zip(&c.slow).enumerate() {
        t.push_str(&format!("  {:>width$}  {line}\n", k + 1));
        t.push_str(&format!("{pad}model:    {}\n", s.model.text()));
        t.push_str(&format!("{pad}observed: {}\n", s.observed.text()));
    }
    t
}
