//! `pioscope report`: what a trace says about its I/O, from one pass over the events: the job,
//! where the time goes, the findings ranked by cost, key tables, access patterns and
//! aggregators; as terminal text or (`--json`) one object with every section.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Result;
use clap::Parser;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use pioscope_analysis::aggregation::{Direction, Sieving};
use pioscope_analysis::breakdown::{RankBreakdown, Shares};
use pioscope_analysis::findings;
use pioscope_analysis::patterns::{self, Pattern, Sharing};
use pioscope_analysis::profile::{self, Options, Profile};
use pioscope_analysis::{GroupBy, Scope};
use pioscope_trace::functions::Layer;

use crate::human;

/// Findings shown in text (all of them are in --json).
pub const TOP_FINDINGS: usize = 5;
/// Lines of a finding's worst files, ranks and calls in text.
pub const WORST_LINES: usize = 3;
/// Ranks listed one by one in text before the table is cut to the busiest.
pub const MAX_RANK_ROWS: usize = 16;
/// Rows of the longer tables (files, functions, cycles, patterns) in text.
pub const MAX_ROWS: usize = 12;
/// Width of the time bar.
const BAR: usize = 50;

/// Summarise a trace: time breakdown, findings, tables, patterns, aggregators
///
/// Reads the trace once and prints a compact summary: the job; where the ranks' wall time
/// went (I/O split into data, metadata, sync and close; MPI; the rest), per rank and per user
/// phase; the findings ranked by the time they cost, each with its evidence and remedy; I/O per
/// layer, the costliest functions and request sizes; per file sharing, read/write mix and
/// independent vs collective MPI-IO; access patterns (contiguous, strided, random) and
/// alignment; the aggregators of collective MPI-IO, two-phase cycles and data-sieving volume;
/// metadata rates. --json prints every section in full as one object (see docs/CLI.md).
///
/// A progress bar shows on stderr while the events are read (only on a terminal).
#[derive(Parser, Debug)]
#[command(after_help = crate::EXIT_CODES)]
pub struct Args {
    /// The trace directory
    #[arg(value_name = "TRACE")]
    pub trace: PathBuf,
    /// Print JSON (for scripts and CI): one object with every section
    #[arg(long)]
    pub json: bool,
    /// Finding thresholds: a TOML file overriding the defaults (docs/FINDINGS.md)
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Count every record, system files and sockets included (as `stats --all`)
    #[arg(long)]
    pub all: bool,
    /// Also write the report as one self-contained HTML page (charts, sortable tables, heat
    /// map; opens from disk, no network) to FILE (docs/REPORT.md)
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
}

/// Prints the report.
pub fn run(args: Args) -> Result<u8> {
    let trace = super::open_trace(&args.trace)?;
    if let Some(path) = &args.html {
        // Before the minutes of reading, not after.
        crate::output_file::check_file(path, true)?;
    }
    let options = options(args.config.as_deref(), args.all)?;
    // The row groups to read (the Parquet footer only), so the bar is right from the start.
    let row_groups = trace.events()?.row_groups() as u64;
    let bar = ProgressBar::with_draw_target(Some(row_groups), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len} row groups {elapsed}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    bar.set_prefix("reading");
    bar.enable_steady_tick(Duration::from_millis(200));
    let result = profile::profile(&trace, &options, &mut |done, total| {
        bar.set_length(total as u64);
        bar.set_position(done as u64);
    });
    bar.finish_and_clear();
    let p = result?;
    if let Some(path) = &args.html {
        let page = crate::report_html::page(&p)?;
        // A report page has always replaced an earlier one; never a device or a directory.
        crate::output_file::write(path, true, page.as_bytes())?;
    }
    let mut out = super::Output::stdout();
    if args.json {
        out.line(format_args!("{}", serde_json::to_string_pretty(&p)?))?;
    } else {
        out.write(format_args!("{}", render(&p)))?;
    }
    out.finish()?;
    Ok(0)
}

/// The profile options of `--config FILE` and `--all` (report and fleet share them).
pub fn options(config: Option<&Path>, all: bool) -> Result<Options> {
    let findings = match config {
        Some(path) => findings::Config::from_file(path)?,
        None => findings::Config::default(),
    };
    Ok(Options {
        scope: if all { Scope::All } else { Scope::Application },
        findings,
        ..Options::default()
    })
}

fn pct(x: f64) -> String {
    format!("{:.1}%", x * 100.0)
}

fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// A bar of BAR characters: data D, metadata M, sync S, close C, MPI ~, other '.'.
fn time_bar(s: &Shares) -> String {
    let parts = [
        ('D', s.data),
        ('M', s.metadata),
        ('S', s.sync),
        ('C', s.close),
        ('W', s.wait),
        ('~', s.mpi),
    ];
    let total: f64 = parts.iter().map(|p| p.1).sum::<f64>() + s.other;
    let scale = if total > 1.0 { 1.0 / total } else { 1.0 };
    let mut bar = String::new();
    let mut cum = 0.0;
    let mut drawn = 0usize;
    for (c, share) in parts {
        cum += share * scale;
        let upto = ((cum * BAR as f64).round() as usize).min(BAR);
        while drawn < upto {
            bar.push(c);
            drawn += 1;
        }
    }
    while drawn < BAR {
        bar.push('.');
        drawn += 1;
    }
    bar
}

fn bytes_opt(v: Option<u64>) -> String {
    v.map_or_else(|| "-".to_string(), human::bytes)
}

fn ratio_opt(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |x| format!("{x:.1}"))
}

/// A stride in exact bytes, with the binary unit beside when it is not a round number.
fn stride_text(s: i64) -> String {
    let n = s.unsigned_abs();
    let sign = if s < 0 { "-" } else { "" };
    let exact = human::bytes(n);
    if n < 1024 || exact.contains(".0 ") && n.is_power_of_two() {
        format!("{sign}{exact}")
    } else {
        format!("{sign}{n} B ({sign}{exact})")
    }
}

fn cut_note(text: &mut String, shown: usize, total: usize, what: &str) {
    if total > shown {
        let _ = writeln!(
            text,
            "  ... {} more {what} (--json lists all)",
            total - shown
        );
    }
}

/// Indents every line of a table by two spaces.
fn indent(table: &str) -> String {
    table.lines().map(|l| format!("  {l}\n")).collect()
}

/// The text report.
pub fn render(p: &Profile) -> String {
    let mut t = String::new();
    job(&mut t, p);
    time(&mut t, p);
    findings_text(&mut t, p);
    darshan(&mut t, p);
    io_tables(&mut t, p);
    files(&mut t, p);
    access_patterns(&mut t, p);
    aggregation(&mut t, p);
    metadata(&mut t, p);
    t
}

fn job(t: &mut String, p: &Profile) {
    let j = &p.job;
    let ranks = if j.ranks > 0 {
        plural(j.ranks as u64, "rank", "ranks")
    } else {
        "no MPI".to_string()
    };
    let hosts = if j.hosts.len() <= 4 {
        format!(" ({})", j.hosts.join(", "))
    } else {
        String::new()
    };
    let _ = writeln!(
        t,
        "job      {ranks} on {}{hosts}, {}, {}, {} events",
        plural(j.hosts.len() as u64, "host", "hosts"),
        plural(j.processes, "process", "processes"),
        human::duration_ns(j.duration_ns),
        j.events
    );
    if let Some(c) = &j.command {
        let _ = writeln!(t, "command  {c}");
    }
    if let Some(m) = &j.mpi_library {
        let first = m.split_whitespace().collect::<Vec<_>>().join(" ");
        let _ = writeln!(t, "MPI      {first}");
    }
    if j.left_out > 0 {
        let _ = writeln!(
            t,
            "scope    {} records left out: POSIX/STDIO on system files, helper files or descriptors without a file, and what runs inside MPI_Init/MPI_Finalize (--all counts them)",
            j.left_out
        );
    }
    if j.partial {
        let _ = writeln!(
            t,
            "PARTIAL  trace incomplete: {}",
            j.partial_reasons.join("; ")
        );
    }
}

fn rank_row(b: &RankBreakdown) -> Vec<String> {
    let s = &b.shares;
    vec![
        b.rank.map_or_else(|| "all".to_string(), |r| r.to_string()),
        b.host.clone().unwrap_or_default(),
        human::duration_ns(b.wall_ns),
        pct(s.io),
        pct(s.data),
        pct(s.metadata),
        pct(s.sync),
        pct(s.close),
        pct(s.wait),
        pct(s.mpi),
        pct(s.other),
    ]
}

fn time(t: &mut String, p: &Profile) {
    let b = &p.breakdown;
    let total = &b.total;
    let s = &total.shares;
    let _ = writeln!(
        t,
        "\nTime: share of the ranks' wall time ({} in all)",
        human::duration_ns(total.wall_ns)
    );
    let _ = writeln!(t, "  [{}]", time_bar(s));
    let _ = writeln!(
        t,
        "  I/O {} (D data {}, M metadata {}, S sync {}, C close {}, W waiting for other ranks {}), \
         ~ MPI {}, . other {}",
        pct(s.io),
        pct(s.data),
        pct(s.metadata),
        pct(s.sync),
        pct(s.close),
        pct(s.wait),
        pct(s.mpi),
        pct(s.other)
    );
    if total.io_ns > 0 {
        let io = &total.io;
        let (name, v) = [
            ("data", io.data_ns),
            ("metadata", io.metadata_ns),
            ("sync", io.sync_ns),
            ("close", io.close_ns),
            ("waiting for other ranks", io.wait_ns),
        ]
        .into_iter()
        .max_by_key(|x| x.1)
        .unwrap_or(("data", 0));
        let _ = writeln!(
            t,
            "  I/O time is {} {name} ({} of {})",
            pct(v as f64 / total.io_ns as f64),
            human::duration_ns(v),
            human::duration_ns(total.io_ns)
        );
    }
    let header = [
        "rank", "host", "wall", "I/O", "data", "metadata", "sync", "close", "wait", "MPI", "other",
    ];
    let mut ranks: Vec<&RankBreakdown> = b.ranks.iter().collect();
    let cut = ranks.len() > MAX_RANK_ROWS;
    if cut {
        ranks.sort_by(|a, b| {
            b.shares
                .io
                .total_cmp(&a.shares.io)
                .then_with(|| a.rank.cmp(&b.rank))
        });
        ranks.truncate(MAX_RANK_ROWS / 2);
        let _ = writeln!(t, "  the {} ranks with the largest I/O share:", ranks.len());
    }
    let rows: Vec<Vec<String>> = ranks.iter().map(|r| rank_row(r)).collect();
    t.push('\n');
    t.push_str(&indent(&human::table(&header, &rows, 2)));
    if cut {
        let mut io: Vec<f64> = b.ranks.iter().map(|r| r.shares.io).collect();
        io.sort_by(|a, b| a.total_cmp(b));
        let _ = writeln!(
            t,
            "  I/O share over {} ranks: min {}, median {}, max {} (--json lists every rank)",
            io.len(),
            pct(io[0]),
            pct(io[io.len() / 2]),
            pct(io[io.len() - 1])
        );
    }
    // Phases, when the program marked any.
    let phases: Vec<_> = total
        .phases
        .iter()
        .filter(|ph| ph.name != pioscope_analysis::stats::NO_PHASE || total.phases.len() > 1)
        .collect();
    if phases.len() > 1 {
        let _ = writeln!(
            t,
            "\n  User phases (time as the innermost region; I/O split of the calls made in it):"
        );
        let header = [
            "phase", "time", "share", "I/O", "data", "metadata", "sync", "close", "wait",
        ];
        let rows: Vec<Vec<String>> = phases
            .iter()
            .map(|ph| {
                let io = ph.io.unwrap_or_default();
                let iot = io.total_ns();
                let of = |x: i64| {
                    if iot > 0 {
                        pct(x as f64 / iot as f64)
                    } else {
                        "-".to_string()
                    }
                };
                vec![
                    ph.name.clone(),
                    human::duration_ns(ph.time_ns),
                    pct(ph.share),
                    human::duration_ns(iot),
                    of(io.data_ns),
                    of(io.metadata_ns),
                    of(io.sync_ns),
                    of(io.close_ns),
                    of(io.wait_ns),
                ]
            })
            .collect();
        t.push_str(&indent(&human::table(&header, &rows, 1)));
    }
}

fn findings_text(t: &mut String, p: &Profile) {
    let f = &p.findings;
    if p.darshan.as_ref().is_some_and(|d| !d.has_dxt_events) {
        let _ = writeln!(
            t,
            "\nFindings: not judged (the store has no calls: see below)"
        );
        return;
    }
    if f.is_empty() {
        let _ = writeln!(t, "\nFindings: none");
        return;
    }
    let _ = writeln!(
        t,
        "\nFindings: {}, most costly first{}",
        f.len(),
        if f.len() > TOP_FINDINGS {
            format!(" (top {TOP_FINDINGS} here, --json lists all)")
        } else {
            String::new()
        }
    );
    for (i, x) in f.iter().take(TOP_FINDINGS).enumerate() {
        let _ = writeln!(
            t,
            "  {}. [{}] {}: {} (costs about {})",
            i + 1,
            x.severity.name(),
            x.id,
            x.title,
            human::duration_ns(x.cost_ns)
        );
        if !x.evidence.summary.is_empty() {
            let _ = writeln!(t, "     {}", x.evidence.summary);
        }
        for (j, w) in x.evidence.worst.iter().take(WORST_LINES).enumerate() {
            let _ = writeln!(t, "     {} {w}", if j == 0 { "worst:" } else { "      " });
        }
        if x.evidence.worst.len() > WORST_LINES {
            let _ = writeln!(
                t,
                "            ... {} more",
                x.evidence.worst.len() - WORST_LINES
            );
        }
        if !x.remedy.is_empty() {
            let _ = writeln!(t, "     remedy: {}", x.remedy);
        }
    }
}

/// An imported Darshan log: what it cannot support, and its counters per module.
fn darshan(t: &mut String, p: &Profile) {
    let Some(d) = &p.darshan else {
        return;
    };
    let _ = writeln!(t, "\nImported from a Darshan log: what it cannot support");
    for line in &d.cannot_support {
        let _ = writeln!(t, "  - {line}");
    }
    let _ = writeln!(t, "\nDarshan counters per module (times summed over ranks)");
    let header = [
        "module",
        "records",
        "files",
        "reads",
        "writes",
        "read",
        "written",
        "read time",
        "write time",
        "meta time",
    ];
    let rows: Vec<Vec<String>> = d
        .modules
        .iter()
        .map(|m| {
            vec![
                m.module.clone(),
                m.records.to_string(),
                m.files.to_string(),
                m.reads.to_string(),
                m.writes.to_string(),
                human::bytes(m.bytes_read),
                human::bytes(m.bytes_written),
                human::duration_ns(m.read_time_ns),
                human::duration_ns(m.write_time_ns),
                human::duration_ns(m.meta_time_ns),
            ]
        })
        .collect();
    t.push_str(&indent(&human::table(&header, &rows, 1)));
}

/// The sampled counters per node and process: CPU mean and peak, disk and network bytes,
/// peak memory.
fn counters(t: &mut String, p: &Profile) {
    if p.counters.is_empty() {
        return;
    }
    let _ = writeln!(
        t,
        "\nCounters (CPU: % of all cores for a node, of one core for a process)"
    );
    let header = [
        "host",
        "process",
        "samples",
        "CPU mean",
        "CPU peak",
        "disk read",
        "disk written",
        "net in",
        "net out",
        "memory peak",
    ];
    let pct = |v: Option<f64>| v.map_or_else(|| "-".to_string(), |v| format!("{v:.1}"));
    let rows: Vec<Vec<String>> = p
        .counters
        .iter()
        .map(|c| {
            vec![
                c.host.clone(),
                if c.process < 0 {
                    "node".to_string()
                } else {
                    c.process.to_string()
                },
                c.samples.to_string(),
                pct(c.cpu_mean_percent),
                pct(c.cpu_peak_percent),
                human::bytes(c.disk_read_bytes),
                human::bytes(c.disk_write_bytes),
                human::bytes(c.net_rx_bytes),
                human::bytes(c.net_tx_bytes),
                human::bytes(c.mem_peak_bytes),
            ]
        })
        .collect();
    t.push_str(&indent(&human::table(&header, &rows, 2)));
}

fn io_tables(t: &mut String, p: &Profile) {
    let _ = writeln!(
        t,
        "\nI/O by layer (layers nest: compare rows, do not add them)"
    );
    if p.tables.layer.is_empty() {
        let _ = writeln!(t, "  no records");
    } else {
        t.push_str(&indent(&crate::commands::stats::table(
            GroupBy::Layer,
            &p.tables.layer,
        )));
    }

    if let Some(servers) = &p.servers {
        let _ = writeln!(
            t,
            "\nStorage servers (loads per second of the job, CPU from the sampled counters)"
        );
        t.push_str(&indent(&crate::commands::stats::server_table(servers)));
    }
    counters(t, p);

    if !p.tables.server.is_empty() {
        let _ = writeln!(
            t,
            "\nStorage servers by layer (requests served, and their disks' accesses)"
        );
        t.push_str(&indent(&crate::commands::stats::table(
            GroupBy::Server,
            &p.tables.server,
        )));
    }

    // Costliest functions: time at the outermost call of their layer, all ranks.
    let funcs = &p.breakdown.total.functions;
    let by_name: BTreeMap<(&str, Layer), &pioscope_analysis::StatsRow> = p
        .tables
        .func
        .iter()
        .map(|r| ((r.group.as_str(), r.layer), r))
        .collect();
    let shown: Vec<_> = funcs
        .iter()
        .filter(|f| f.time_ns > 0 && f.layer != Some(Layer::Region))
        .take(MAX_ROWS)
        .collect();
    if !shown.is_empty() {
        let _ = writeln!(
            t,
            "\nFunctions by time (outermost call of each layer, share of the ranks' wall time)"
        );
        let header = ["function", "layer", "calls", "bytes", "time", "share"];
        let rows: Vec<Vec<String>> = shown
            .iter()
            .map(|f| {
                let layer = f.layer.unwrap_or(Layer::Tracer);
                let row = by_name.get(&(f.name.as_str(), layer));
                vec![
                    f.name.clone(),
                    layer.name().to_string(),
                    row.map_or_else(|| "-".to_string(), |r| r.operations.to_string()),
                    row.map_or_else(|| "-".to_string(), |r| human::bytes(r.bytes)),
                    human::duration_ns(f.time_ns),
                    pct(f.share),
                ]
            })
            .collect();
        t.push_str(&indent(&human::table(&header, &rows, 2)));
        let n = funcs
            .iter()
            .filter(|f| f.time_ns > 0 && f.layer != Some(Layer::Region))
            .count();
        cut_note(t, shown.len(), n, "functions");
    }

    // Request sizes of the file layers.
    let layers: Vec<&pioscope_analysis::StatsRow> = p
        .tables
        .layer
        .iter()
        .filter(|r| r.layer.is_file_layer() && r.data_operations > 0)
        .collect();
    if !layers.is_empty() {
        let mut bins: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
        for (i, r) in layers.iter().enumerate() {
            for b in &r.size_histogram {
                bins.entry(b.bin_min)
                    .or_insert_with(|| vec![0; layers.len()])[i] = b.count;
            }
        }
        let _ = writeln!(t, "\nRequest sizes (data calls per power-of-two bin)");
        let mut header = vec!["size"];
        header.extend(layers.iter().map(|r| r.layer.name()));
        let rows: Vec<Vec<String>> = bins
            .iter()
            .map(|(&b, counts)| {
                let label = if b == 0 {
                    "0 B".to_string()
                } else {
                    format!(">= {}", human::bytes(b))
                };
                let mut row = vec![label];
                row.extend(counts.iter().map(|c| c.to_string()));
                row
            })
            .collect();
        t.push_str(&indent(&human::table(&header, &rows, 1)));
    }
}

fn files(t: &mut String, p: &Profile) {
    let mut files: Vec<_> = p
        .patterns
        .files
        .iter()
        .filter(|f| {
            f.reads + f.writes > 0 || f.mpiio.independent_calls + f.mpiio.collective_calls > 0
        })
        .collect();
    if files.is_empty() {
        return;
    }
    files.sort_by(|a, b| {
        (b.read_bytes + b.written_bytes)
            .cmp(&(a.read_bytes + a.written_bytes))
            .then_with(|| a.path.cmp(&b.path))
    });
    let n = files.len();
    let shared = files
        .iter()
        .filter(|f| f.sharing == Sharing::Shared)
        .count();
    let _ = writeln!(
        t,
        "\nFiles with data: {n} ({shared} shared, {} per process)",
        n - shared
    );
    let header = [
        "file",
        "fs",
        "ranks",
        "read",
        "written",
        "MPI-IO indep",
        "coll",
        "POSIX/indep",
        "POSIX/coll",
        "stripe",
    ];
    let rows: Vec<Vec<String>> = files
        .iter()
        .take(MAX_ROWS)
        .map(|f| {
            vec![
                f.path.clone(),
                f.fs_type.clone(),
                f.ranks.to_string(),
                human::bytes(f.read_bytes),
                human::bytes(f.written_bytes),
                f.mpiio.independent_calls.to_string(),
                f.mpiio.collective_calls.to_string(),
                ratio_opt(f.mpiio.posix_per_independent),
                ratio_opt(f.mpiio.posix_per_collective),
                bytes_opt(f.stripe_size),
            ]
        })
        .collect();
    t.push_str(&indent(&human::table(&header, &rows, 2)));
    cut_note(t, rows.len(), n, "files");
}

fn access_patterns(t: &mut String, p: &Profile) {
    let pa = &p.patterns;
    if pa.accesses.is_empty() {
        return;
    }
    // One row per (file, layer, direction), ranks grouped by pattern.
    let mut keys: Vec<(&str, Layer)> = pa
        .accesses
        .iter()
        .map(|a| (a.path.as_str(), a.layer))
        .collect();
    keys.dedup();
    let mut rows = Vec::new();
    for (path, layer) in keys {
        let accs: Vec<_> = pa
            .accesses
            .iter()
            .filter(|a| a.path == path && a.layer == layer)
            .collect();
        let accesses: u64 = accs.iter().map(|a| a.accesses).sum();
        let misaligned: u64 = accs.iter().map(|a| a.misaligned_block).sum();
        let stripe: Option<u64> = accs
            .iter()
            .filter_map(|a| a.misaligned_stripe)
            .reduce(|x, y| x + y);
        let noncontig = accs.iter().filter(|a| a.noncontiguous_view).count();
        for (write, dir) in [(false, "read"), (true, "write")] {
            let groups = patterns::rank_groups(&pa.accesses, path, layer, write);
            if groups.is_empty() {
                continue;
            }
            let ops: u64 = accs
                .iter()
                .filter_map(|a| {
                    if write {
                        a.write.as_ref()
                    } else {
                        a.read.as_ref()
                    }
                })
                .map(|s| s.operations)
                .sum();
            let text: Vec<String> = groups
                .iter()
                .map(|(pat, stride, n)| {
                    let name = match (pat, stride) {
                        (Pattern::Strided, Some(0)) => "strided 0 B (same offset)".to_string(),
                        (Pattern::Strided, Some(s)) => format!("strided {}", stride_text(*s)),
                        (Pattern::Single, _) => "single (1 per open)".to_string(),
                        (p, _) => p.name().to_string(),
                    };
                    format!("{name} x{n}")
                })
                .collect();
            let mut pattern = text.join(", ");
            if layer == Layer::MpiIo && noncontig > 0 {
                pattern.push_str(&format!("; noncontiguous view x{noncontig}"));
            }
            rows.push(vec![
                path.to_string(),
                layer.name().to_string(),
                dir.to_string(),
                ops.to_string(),
                pattern,
                if accesses > 0 {
                    pct(misaligned as f64 / accesses as f64)
                } else {
                    "-".to_string()
                },
                match stripe {
                    Some(m) if accesses > 0 => pct(m as f64 / accesses as f64),
                    _ => "-".to_string(),
                },
            ]);
        }
    }
    let _ = writeln!(
        t,
        "\nAccess patterns (successive offsets per rank; x N = ranks; misaligned to the {} block / the stripe)",
        human::bytes(pa.block_size)
    );
    let header = [
        "file",
        "layer",
        "dir",
        "calls",
        "pattern (ranks)",
        "misaligned",
        "stripe",
    ];
    let n = rows.len();
    rows.truncate(MAX_ROWS);
    // The pattern column is text: left-align it by putting it before the numbers' columns?
    // Keep the order and left-align the first five columns.
    t.push_str(&indent(&human::table(&header, &rows, 5)));
    cut_note(t, rows.len(), n, "rows");
}

fn aggregation(t: &mut String, p: &Profile) {
    let a = &p.aggregation;
    if a.collective_call_records > 0 {
        let aggs: Vec<String> = a
            .aggregators
            .iter()
            .take(MAX_ROWS)
            .map(|g| format!("{} ({})", g.rank, g.host))
            .collect();
        let _ = writeln!(
            t,
            "\nCollective MPI-IO: {} on {}; {} aggregating: {}{}",
            plural(a.collective_calls, "call", "calls"),
            plural(a.participants, "rank", "ranks"),
            a.aggregators.len(),
            if aggs.is_empty() {
                "none".to_string()
            } else {
                format!("rank {}", aggs.join(", "))
            },
            if a.aggregators.len() > MAX_ROWS {
                ", ..."
            } else {
                ""
            }
        );
        let hosts: Vec<String> = a
            .hosts
            .iter()
            .take(MAX_ROWS)
            .map(|h| format!("{} {} of {}", h.host, h.aggregators, h.ranks))
            .collect();
        let _ = writeln!(
            t,
            "  aggregators per host: {}{}; hosts without one: {}",
            hosts.join(", "),
            if a.hosts.len() > MAX_ROWS {
                ", ..."
            } else {
                ""
            },
            if a.hosts_without_aggregator.is_empty() {
                "none".to_string()
            } else {
                a.hosts_without_aggregator.join(", ")
            }
        );
        if !a.cycles.is_empty() {
            let _ = writeln!(
                t,
                "  Two-phase cycles per collective call (expected: ceil(domain / cb_buffer_size))"
            );
            let header = [
                "file",
                "rank",
                "dir",
                "calls",
                "cycles min",
                "mean",
                "max",
                "expected",
                "domain",
                "cb_buffer_size",
            ];
            let rows: Vec<Vec<String>> = a
                .cycles
                .iter()
                .take(MAX_ROWS)
                .map(|c| {
                    vec![
                        c.path.clone(),
                        c.rank.to_string(),
                        dir_name(c.direction).to_string(),
                        c.calls.to_string(),
                        c.cycles_min.to_string(),
                        format!("{:.1}", c.cycles_mean),
                        c.cycles_max.to_string(),
                        ratio_opt(c.expected_mean),
                        human::bytes(c.domain_mean.round() as u64),
                        bytes_opt(c.cb_buffer_size),
                    ]
                })
                .collect();
            t.push_str(&indent(&indent(&human::table(&header, &rows, 3))));
            cut_note(t, rows.len(), a.cycles.len(), "aggregators");
        }
    }
    if !a.sieving.is_empty() {
        // Summed over ranks per (file, direction).
        let mut sums: BTreeMap<(&str, Direction), (u64, Sieving)> = BTreeMap::new();
        for s in &a.sieving {
            let e = sums
                .entry((s.path.as_str(), s.direction))
                .or_insert_with(|| {
                    (
                        0,
                        Sieving {
                            calls: 0,
                            requested_bytes: 0,
                            posix_read_bytes: 0,
                            posix_written_bytes: 0,
                            posix_operations: 0,
                            rmw_calls: 0,
                            amplification: None,
                            ..s.clone()
                        },
                    )
                });
            e.0 += 1;
            e.1.calls += s.calls;
            e.1.requested_bytes += s.requested_bytes;
            e.1.posix_read_bytes += s.posix_read_bytes;
            e.1.posix_written_bytes += s.posix_written_bytes;
            e.1.posix_operations += s.posix_operations;
            e.1.rmw_calls += s.rmw_calls;
        }
        let _ = writeln!(
            t,
            "\nBeneath independent MPI-IO (data sieving: POSIX bytes against bytes requested)"
        );
        let header = [
            "file",
            "dir",
            "ranks",
            "calls",
            "requested",
            "POSIX read",
            "POSIX written",
            "POSIX calls",
            "read-modify-write",
            "amplification",
        ];
        let rows: Vec<Vec<String>> = sums
            .iter()
            .take(MAX_ROWS)
            .map(|((path, dir), (ranks, s))| {
                let amp = (s.requested_bytes > 0).then(|| {
                    (s.posix_read_bytes + s.posix_written_bytes) as f64 / s.requested_bytes as f64
                });
                vec![
                    path.to_string(),
                    dir_name(*dir).to_string(),
                    ranks.to_string(),
                    s.calls.to_string(),
                    human::bytes(s.requested_bytes),
                    human::bytes(s.posix_read_bytes),
                    human::bytes(s.posix_written_bytes),
                    s.posix_operations.to_string(),
                    s.rmw_calls.to_string(),
                    amp.map_or_else(|| "-".to_string(), |x| format!("{x:.2}x")),
                ]
            })
            .collect();
        t.push_str(&indent(&human::table(&header, &rows, 2)));
        cut_note(t, rows.len(), sums.len(), "rows");
    }
}

fn dir_name(d: Direction) -> &'static str {
    match d {
        Direction::Read => "read",
        Direction::Write => "write",
    }
}

fn metadata(t: &mut String, p: &Profile) {
    let m = &p.patterns.metadata;
    if m.operations + m.mpiio_operations == 0 {
        return;
    }
    let top: Vec<String> = m
        .by_function
        .iter()
        .take(6)
        .map(|(f, n)| format!("{f} {n}"))
        .collect();
    let _ = writeln!(
        t,
        "\nMetadata: {} POSIX/STDIO calls ({}/s over the job, {} in them){}; {} MPI-IO calls",
        m.operations,
        m.per_sec.map_or_else(|| "-".to_string(), human::rate),
        human::duration_ns(m.time_ns),
        if top.is_empty() {
            String::new()
        } else {
            format!(": {}", top.join(", "))
        },
        m.mpiio_operations
    );
    if let Some(r) = m.busiest_rank {
        let _ = writeln!(
            t,
            "  busiest rank {r}: {} POSIX/STDIO metadata calls",
            m.busiest_rank_operations
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bar_follows_the_shares() {
        let s = Shares {
            io: 0.5,
            data: 0.2,
            metadata: 0.1,
            sync: 0.0,
            close: 0.1,
            wait: 0.1,
            mpi: 0.3,
            other: 0.2,
        };
        let b = time_bar(&s);
        assert_eq!(b.chars().count(), BAR);
        assert_eq!(
            b,
            format!(
                "{}{}{}{}{}",
                "D".repeat(10),
                "M".repeat(5),
                "C".repeat(5),
                "W".repeat(5),
                "~".repeat(15)
            ) + &".".repeat(10)
        );
        // Several threads can push the traced time past the wall time: scaled, never longer.
        let over = Shares {
            data: 1.5,
            io: 1.5,
            mpi: 0.5,
            ..Shares::default()
        };
        assert_eq!(time_bar(&over), "D".repeat(38) + &"~".repeat(12));
    }

    #[test]
    fn strides_are_exact() {
        assert_eq!(stride_text(160), "160 B");
        assert_eq!(stride_text(4 << 20), "4.0 MiB");
        assert_eq!(stride_text(524_800), "524800 B (512.5 KiB)");
        assert_eq!(stride_text(-2048), "-2.0 KiB");
        assert_eq!(stride_text(3072), "3072 B (3.0 KiB)");
    }
}
