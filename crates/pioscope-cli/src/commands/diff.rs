//! `pioscope diff`: run against run, as text or JSON, with an exit status for regressions above
//! a threshold (a CI guard). The work is `pioscope_analysis::diff`; this module profiles both
//! traces (as `report` does) and prints the result.
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Parser;
use pioscope_analysis::diff::{self, Change, Diff, Options, RowDiff, Side, DEFAULT_TOP};
use pioscope_trace::store::Trace;

use super::report::{cut_note, indent, profile_options, profile_with_progress, MAX_ROWS};
use crate::human;

/// Exit status when a regression is above `--fail-above`.
pub const EXIT_REGRESSION: u8 = 3;

/// Compare two runs: time per layer, function, file and rank, findings, changed calls
///
/// Profiles A (the baseline) and B (the run judged) as `pioscope report` does, and prints side
/// by side: the ranks' I/O time and the job's duration; the findings that appeared,
/// disappeared, got worse or better (by rule); time per layer, per function, per file and per
/// rank with the change B - A and its percentage of A (rows of one run only show "-" on the
/// other side); and the top-level calls whose time changed most, paired as `pioscope compare`
/// pairs them (the k-th call of a function on a rank in A with the k-th in B), with the calls
/// of one run only counted per function. A and B can be traced runs or imported Darshan logs,
/// with different numbers of ranks or files.
///
/// With --fail-above PCT the exit status is 3 when B's I/O time, or the time of one of its
/// I/O layers (POSIX, STDIO, MPI-IO, HDF5, PnetCDF), or for imported Darshan logs of one
/// module's counters, grew by more than PCT percent of A's (a layer or module A does not have
/// counts as grown); the regressions are listed last.
///
/// Example: pioscope diff baseline-trace new-trace --fail-above 10%
#[derive(Parser, Debug)]
#[command(after_help = crate::EXIT_CODES)]
pub struct Args {
    /// The baseline run (a trace directory)
    #[arg(value_name = "A")]
    pub a: PathBuf,
    /// The run compared with it
    #[arg(value_name = "B")]
    pub b: PathBuf,
    /// Exit with status 3 when B's I/O time or an I/O layer's time grew by more than PCT
    /// percent of A's ("10" or "10%")
    #[arg(long, value_name = "PCT", value_parser = percent)]
    pub fail_above: Option<f64>,
    /// Calls whose time changed most: how many to list (text and JSON)
    #[arg(long, value_name = "N", default_value_t = DEFAULT_TOP)]
    pub top: usize,
    /// Print JSON (for scripts and CI): one object with every section
    #[arg(long)]
    pub json: bool,
    /// Finding thresholds for both runs: a TOML file overriding the defaults (docs/FINDINGS.md)
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Count every record, system files and sockets included (in both runs)
    #[arg(long)]
    pub all: bool,
}

/// A percentage: "10", "10%" or "2.5 %"; 0 or more.
fn percent(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let t = t.strip_suffix('%').unwrap_or(t).trim_end();
    match t.parse::<f64>() {
        Ok(v) if v >= 0.0 && v.is_finite() => Ok(v),
        _ => Err(format!(
            "expected a percentage of 0 or more such as 10 or 10%, not {s:?}"
        )),
    }
}

/// Profiles both runs and diffs them (the report page's `--against` uses it too).
pub fn diff_traces(
    a: &Trace,
    b: (&Trace, &pioscope_analysis::Profile),
    options: &pioscope_analysis::profile::Options,
    opts: &Options,
) -> Result<Diff> {
    let pa = profile_with_progress(a, options).context("profiling A")?;
    Ok(diff::diff((a, &pa), b, opts)?)
}

/// Diffs the two traces and prints the result.
pub fn run(args: Args) -> Result<u8> {
    let a = super::open_trace(&args.a).context("trace A")?;
    let b = super::open_trace(&args.b).context("trace B")?;
    let options = profile_options(args.config.as_deref(), args.all)?;
    let pb = profile_with_progress(&b, &options).context("profiling B")?;
    let opts = Options {
        scope: options.scope,
        top: args.top,
        fail_above: args.fail_above,
    };
    let d = diff_traces(&a, (&b, &pb), &options, &opts)?;
    let mut out = super::Output::stdout();
    if args.json {
        out.line(format_args!("{}", serde_json::to_string_pretty(&d)?))?;
    } else {
        out.write(format_args!("{}", render(&d)))?;
    }
    out.finish()?;
    Ok(if d.regressions.is_empty() {
        0
    } else {
        EXIT_REGRESSION
    })
}

fn ns(v: i64) -> String {
    human::duration_ns(v)
}

/// A signed time: "+1.20 ms", "-3 ns", "0 ns".
fn delta(v: i64) -> String {
    if v > 0 {
        format!("+{}", ns(v))
    } else {
        ns(v)
    }
}

/// "A -> B (+change, +percent)".
fn change_summary(c: &Change) -> String {
    format!(
        "{} -> {} ({}, {})",
        ns(c.a_ns),
        ns(c.b_ns),
        delta(c.delta_ns),
        percent_text(c)
    )
}

/// The change in percent of A: "+12.5%"; "new" when A had none, "-" when neither had any.
fn percent_text(c: &Change) -> String {
    match c.percent {
        Some(p) => format!("{p:+.1}%"),
        None if c.b_ns > 0 => "new".to_string(),
        None => "-".to_string(),
    }
}

fn side_line(label: &str, s: &Side) -> String {
    format!(
        "{label}  {}: {} ranks, job {}, {} events\n",
        s.path,
        s.ranks,
        ns(s.duration_ns),
        s.events
    )
}

/// A table of lined-up rows: group (and layer), operations and time on both sides, the change.
fn rows_table(rows: &[RowDiff], first: &str, with_layer: bool) -> String {
    if rows.is_empty() {
        // A store without calls: a counters-only Darshan log.
        return "  none in either run\n".to_string();
    }
    let opt = |m: Option<diff::Measure>, f: fn(diff::Measure) -> String| {
        m.map_or_else(|| "-".to_string(), f)
    };
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let mut c = vec![r.group.clone()];
            if with_layer {
                c.push(r.layer.map_or("-", |l| l.name()).to_string());
            }
            c.extend([
                opt(r.a, |m| m.operations.to_string()),
                opt(r.b, |m| m.operations.to_string()),
                opt(r.a, |m| ns(m.time_ns)),
                opt(r.b, |m| ns(m.time_ns)),
                delta(r.change.delta_ns),
                percent_text(&r.change),
            ]);
            c
        })
        .collect();
    let mut header = vec![first];
    if with_layer {
        header.push("layer");
    }
    header.extend(["ops A", "ops B", "time A", "time B", "change", "%"]);
    indent(&human::table(
        &header,
        &cells,
        if with_layer { 2 } else { 1 },
    ))
}

/// The text of a diff.
pub fn render(d: &Diff) -> String {
    let mut t = String::new();
    t.push_str(&side_line("A", &d.a));
    t.push_str(&side_line("B", &d.b));
    t.push('\n');
    let headline: Vec<Vec<String>> = [("I/O time", &d.io_time), ("job", &d.duration)]
        .into_iter()
        .map(|(what, c)| {
            vec![
                what.to_string(),
                ns(c.a_ns),
                ns(c.b_ns),
                delta(c.delta_ns),
                percent_text(c),
            ]
        })
        .collect();
    t.push_str(&indent(&human::table(
        &["", "A", "B", "change", "%"],
        &headline,
        1,
    )));
    findings_text(&mut t, d);

    t.push_str("\nTime per layer (layers nest: compare rows, do not add them)\n");
    t.push_str(&rows_table(&d.layers, "layer", false));
    for (title, rows, first, with_layer) in [
        (
            "Functions, largest change first",
            &d.functions,
            "function",
            true,
        ),
        ("Files, largest change first", &d.files, "file", true),
        ("Ranks, largest change first", &d.ranks, "rank", true),
    ] {
        t.push_str(&format!("\n{title}\n"));
        let shown = rows.len().min(MAX_ROWS);
        t.push_str(&rows_table(&rows[..shown], first, with_layer));
        cut_note(&mut t, shown, rows.len(), "rows");
    }
    if !d.darshan.is_empty() {
        t.push_str("\nDarshan counters per module (reads + writes; read, write and metadata time summed over ranks)\n");
        t.push_str(&rows_table(&d.darshan, "module", false));
    }
    calls_text(&mut t, d);
    gate_text(&mut t, d);
    t
}

fn findings_text(t: &mut String, d: &Diff) {
    let count = |s: diff::Status| d.findings.iter().filter(|f| f.status == s).count();
    let summary: Vec<String> = [
        diff::Status::Appeared,
        diff::Status::Worse,
        diff::Status::Disappeared,
        diff::Status::Better,
        diff::Status::Unchanged,
    ]
    .into_iter()
    .filter(|&s| count(s) > 0)
    .map(|s| format!("{} {}", count(s), s.name()))
    .collect();
    if summary.is_empty() {
        t.push_str("\nFindings: none in either run\n");
        return;
    }
    t.push_str(&format!("\nFindings: {}\n", summary.join(", ")));
    let sev = |s: Option<pioscope_analysis::findings::Severity>| {
        s.map_or_else(|| "-".to_string(), |s| s.name().to_string())
    };
    let cost = |c: Option<i64>| c.map_or_else(|| "-".to_string(), ns);
    let rows: Vec<Vec<String>> = d
        .findings
        .iter()
        .map(|f| {
            vec![
                f.status.name().to_string(),
                f.id.clone(),
                format!("{} -> {}", sev(f.severity_a), sev(f.severity_b)),
                cost(f.cost_a_ns),
                cost(f.cost_b_ns),
            ]
        })
        .collect();
    let header = ["status", "rule", "severity A -> B", "cost A", "cost B"];
    t.push_str(&indent(&human::table(&header, &rows, 3)));
}

fn calls_text(t: &mut String, d: &Diff) {
    let c = &d.calls;
    t.push_str(&format!(
        "\nCalls whose time changed most ({} top-level calls paired by order per (rank, function): {})\n",
        c.paired,
        change_summary(&c.paired_time),
    ));
    if c.changed.is_empty() {
        t.push_str("  none changed\n");
    } else {
        let file = |a: &Option<String>, b: &Option<String>| match (a, b) {
            (Some(a), Some(b)) if a != b => format!("{a} / {b}"),
            (Some(p), _) | (None, Some(p)) => p.clone(),
            (None, None) => "-".to_string(),
        };
        let rows: Vec<Vec<String>> = c
            .changed
            .iter()
            .map(|x| {
                vec![
                    x.rank.to_string(),
                    x.func.clone(),
                    file(&x.file_a, &x.file_b),
                    x.id_a.to_string(),
                    x.id_b.to_string(),
                    ns(x.change.a_ns),
                    ns(x.change.b_ns),
                    delta(x.change.delta_ns),
                    percent_text(&x.change),
                ]
            })
            .collect();
        let header = [
            "rank", "function", "file", "id A", "id B", "A", "B", "change", "%",
        ];
        t.push_str(&indent(&human::table(&header, &rows, 3)));
    }
    for side in ["A", "B"] {
        let list: Vec<String> = c
            .unpaired
            .iter()
            .filter(|u| u.side == side)
            .map(|u| format!("{} {}", u.func, u.count))
            .collect();
        if !list.is_empty() {
            t.push_str(&format!("  only in {side}: {}\n", list.join(", ")));
        }
    }
}

fn gate_text(t: &mut String, d: &Diff) {
    let Some(pct) = d.fail_above else { return };
    if d.regressions.is_empty() {
        t.push_str(&format!(
            "\nNo regression above {pct}% (I/O time, I/O layers, Darshan modules)\n"
        ));
        return;
    }
    t.push_str(&format!(
        "\nRegressions above {pct}% (exit status {EXIT_REGRESSION})\n"
    ));
    for r in &d.regressions {
        t.push_str(&format!("  {}: {}\n", r.measure, change_summary(&r.change)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentages_parse_with_or_without_the_sign() {
        assert_eq!(percent("10"), Ok(10.0));
        assert_eq!(percent("10%"), Ok(10.0));
        assert_eq!(percent(" 2.5 %"), Ok(2.5));
        assert_eq!(percent("0"), Ok(0.0));
        for bad in ["-1", "ten", "%", "nan", "inf", ""] {
            assert!(percent(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn changes_read_with_sign_and_percent() {
        assert_eq!(delta(1_500_000), "+1.50 ms");
        assert_eq!(delta(-20), "-20 ns");
        assert_eq!(percent_text(&Change::new(200, 250)), "+25.0%");
        assert_eq!(percent_text(&Change::new(0, 5)), "new");
        assert_eq!(percent_text(&Change::new(0, 0)), "-");
        assert_eq!(percent_text(&Change::new(10, 0)), "-100.0%");
    }
}
