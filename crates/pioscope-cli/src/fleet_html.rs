//! The summary page of `pioscope fleet` (summary.html): the fleet's totals, the jobs with the
//! most I/O time, every finding rule ranked by its cost summed over the fleet, and the inputs
//! that failed, as DuckDB ranked them (`pioscope_analysis::fleet::ranking`). One static file
//! with no script: tables for people, with data attributes (`data-table`, `data-input`,
//! `data-finding`, and the exact figures behind the rounded ones) for the tests and for
//! scripts that scrape it.

use std::fmt::Write as _;

use pioscope_analysis::fleet::ranking::{RankedJob, Ranking};
use pioscope_trace::units::{bytes, duration_ns, pct};

use crate::report_html::escape_html;

/// The page's file name in the fleet directory.
pub const SUMMARY_FILE: &str = "summary.html";

const CSS: &str = "body{font:14px system-ui,sans-serif;margin:1.5em;color:#222}\
table{border-collapse:collapse;margin:.5em 0 1.5em}\
th,td{border-bottom:1px solid #ddd;padding:.25em .6em;text-align:right}\
th{background:#f4f4f4}td.text,th.text{text-align:left}\
td.error{color:#a00;text-align:left}p.note{color:#555}";

/// The page.
pub fn page(r: &Ranking) -> String {
    let t = &r.totals;
    let mut h = String::new();
    h.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    h.push_str("<title>pioscope fleet</title>\n<style>");
    h.push_str(CSS);
    h.push_str("</style>\n</head>\n<body>\n<h1>pioscope fleet</h1>\n");
    let _ = writeln!(
        h,
        "<p id=\"totals\" data-inputs=\"{}\" data-failed=\"{}\" data-findings=\"{}\" \
         data-bytes-read=\"{}\" data-bytes-written=\"{}\" data-io-ns=\"{}\" data-wall-ns=\"{}\">\
         {} inputs, {} profiled, {} failed; {} findings; {} read, {} written; I/O {} of {} ranks' \
         wall time ({})</p>",
        t.inputs,
        t.failed,
        t.findings,
        t.bytes_read,
        t.bytes_written,
        t.io_ns,
        t.wall_ns,
        t.inputs,
        t.inputs - t.failed,
        t.failed,
        t.findings,
        bytes(t.bytes_read),
        bytes(t.bytes_written),
        duration_ns(t.io_ns),
        duration_ns(t.wall_ns),
        if t.wall_ns > 0 {
            pct(t.io_ns as f64 / t.wall_ns as f64)
        } else {
            "-".to_string()
        },
    );
    jobs(&mut h, r);
    rules(&mut h, r);
    errors(&mut h, r);
    h.push_str("</body>\n</html>\n");
    h
}

fn header(h: &mut String, table: &str, columns: &[&str], text_columns: usize) {
    let _ = write!(h, "<table data-table=\"{table}\">\n<thead><tr>");
    for (i, c) in columns.iter().enumerate() {
        let class = if i < text_columns {
            " class=\"text\""
        } else {
            ""
        };
        let _ = write!(h, "<th{class}>{c}</th>");
    }
    h.push_str("</tr></thead>\n<tbody>\n");
}

fn jobs(h: &mut String, r: &Ranking) {
    let top = &r.jobs;
    let _ = writeln!(
        h,
        "<h2>Jobs by I/O time</h2>\n<p class=\"note\">The {} profiled jobs with the most I/O time \
         (summed over ranks), of {}; jobs.parquet has every one.</p>",
        top.len(),
        r.totals.inputs - r.totals.failed
    );
    header(
        h,
        "jobs",
        &[
            "#",
            "job",
            "kind",
            "costliest finding",
            "ranks",
            "duration",
            "I/O time",
            "I/O share",
            "read",
            "written",
            "its cost",
        ],
        4,
    );
    for (i, j) in top.iter().enumerate() {
        job_row(h, i + 1, j);
    }
    h.push_str("</tbody>\n</table>\n");
}

fn job_row(h: &mut String, position: usize, j: &RankedJob) {
    let _ = writeln!(
        h,
        "<tr data-input=\"{}\" data-io-ns=\"{}\"><td class=\"text\">{position}</td><td class=\"text\" title=\"{}\">{}</td>\
         <td class=\"text\">{}</td><td class=\"text\">{}</td><td>{}</td><td>{}</td><td>{}</td>\
         <td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
        escape_html(&j.input),
        j.io_ns,
        escape_html(&j.input),
        escape_html(&j.job),
        escape_html(&j.kind),
        escape_html(j.top_finding.as_deref().unwrap_or(if j.findings_judged {
            "none"
        } else {
            "not judged"
        })),
        j.ranks,
        duration_ns(j.duration_ns),
        duration_ns(j.io_ns),
        pct(j.io_share),
        bytes(j.bytes_read),
        bytes(j.bytes_written),
        j.top_finding_cost_ns.map_or_else(|| "-".to_string(), duration_ns),
    );
}

fn rules(h: &mut String, r: &Ranking) {
    h.push_str(
        "<h2>Findings across the fleet</h2>\n<p class=\"note\">Each rule's estimated cost summed \
         over the jobs it was found in, costliest first (docs/FINDINGS.md); findings.parquet \
         has every finding.</p>\n",
    );
    header(
        h,
        "findings",
        &[
            "#",
            "finding",
            "worst job",
            "jobs",
            "findings",
            "high",
            "medium",
            "low",
            "total cost",
            "worst cost",
        ],
        3,
    );
    for (i, x) in r.rules.iter().enumerate() {
        let _ = writeln!(
            h,
            "<tr data-finding=\"{}\" data-cost-ns=\"{}\" data-worst-cost-ns=\"{}\" \
             data-worst-input=\"{}\"><td class=\"text\">{}</td><td class=\"text\">{}</td>\
             <td class=\"text\" title=\"{}\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td>{}</td><td>{}</td><td>{}</td></tr>",
            escape_html(&x.finding),
            x.cost_ns,
            x.worst_cost_ns,
            escape_html(&x.worst_input),
            i + 1,
            escape_html(&x.finding),
            escape_html(&x.worst_title),
            escape_html(&x.worst_input),
            x.jobs,
            x.findings,
            x.high,
            x.medium,
            x.low,
            duration_ns(x.cost_ns),
            duration_ns(x.worst_cost_ns),
        );
    }
    h.push_str("</tbody>\n</table>\n");
}

fn errors(h: &mut String, r: &Ranking) {
    let t = &r.totals;
    if t.failed == 0 {
        return;
    }
    let _ = writeln!(
        h,
        "<h2>Inputs that failed</h2>\n<p class=\"note\">{} of them{}; jobs.parquet has each \
         with its error.</p>",
        t.failed,
        if t.failed > r.errors.len() as u64 {
            format!(", the first {} by name here", r.errors.len())
        } else {
            String::new()
        }
    );
    header(h, "errors", &["input", "kind", "error"], 3);
    for j in &r.errors {
        let _ = writeln!(
            h,
            "<tr data-input=\"{}\"><td class=\"text\">{}</td><td class=\"text\">{}</td>\
             <td class=\"error\">{}</td></tr>",
            escape_html(&j.input),
            escape_html(&j.input),
            escape_html(&j.kind),
            escape_html(&j.error),
        );
    }
    h.push_str("</tbody>\n</table>\n");
}

#[cfg(test)]
mod tests {
    use super::*;
    use pioscope_analysis::fleet::ranking::{FailedInput, Totals};

    #[test]
    fn what_the_inputs_say_is_escaped() {
        let r = Ranking {
            totals: Totals {
                inputs: 1,
                failed: 1,
                ..Totals::default()
            },
            errors: vec![FailedInput {
                input: "<b>x</b>".into(),
                kind: "unknown".into(),
                error: "bad \"log\" & <worse>".into(),
            }],
            ..Ranking::default()
        };
        let page = page(&r);
        assert!(page.contains("data-input=\"&lt;b&gt;x&lt;/b&gt;\""));
        assert!(page.contains("bad &quot;log&quot; &amp; &lt;worse&gt;"));
        assert!(!page.contains("<b>x"));
    }
}
