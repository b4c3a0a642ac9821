//! `pioscope stats`: per-layer, -function, -file, -rank, -host, -phase or -server statistics of a trace.

use std::path::PathBuf;

use anyhow::Result;
use clap::{Parser, ValueEnum};
use pioscope_analysis::compare::servers::ServerColumn;
use pioscope_analysis::servers::ServerTable;
use pioscope_analysis::{compute, GroupBy, Scope, Stats, StatsRow};
use pioscope_trace::units;

use crate::human;

/// Grouping of `--by`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum By {
    /// One row per layer (posix, stdio, mpiio, mpi, region, tracer, server, disk)
    Layer,
    /// One row per function
    Func,
    /// One row per file and layer (records without a file are left out)
    File,
    /// One row per rank and layer
    Rank,
    /// One row per host and layer (hosts of the processes in meta.json)
    Host,
    /// One row per user phase (innermost user region, "(none)" outside regions) and layer
    Phase,
    /// One row per storage server and layer (server and disk events of server or simulated
    /// traces)
    Server,
}

impl From<By> for GroupBy {
    fn from(b: By) -> GroupBy {
        match b {
            By::Layer => GroupBy::Layer,
            By::Func => GroupBy::Func,
            By::File => GroupBy::File,
            By::Rank => GroupBy::Rank,
            By::Host => GroupBy::Host,
            By::Phase => GroupBy::Phase,
            By::Server => GroupBy::Server,
        }
    }
}

/// Show I/O statistics of a trace
///
/// For each group: operations, bytes moved by successful reads and writes (message bytes for
/// MPI), request size min/mean/max, total time (sum of call durations), busy time (per rank
/// the union of the calls' intervals, summed over ranks), operations per second and
/// throughput over the busy time, and failed calls. --json adds bytes per operation and the
/// request sizes in power-of-two bins (`size_histogram`).
///
/// --by server first prints one row per storage server with PIOviz's columns (network and
/// storage load in operations per second of the job, storage accesses, bytes per access,
/// mean CPU of the server process from the sampled counters, storage throughput over the busy
/// time, busy fraction) and what each client function became on the servers; --json has them
/// under `servers`.
///
/// Every row is one layer. Layers nest (an MPI_File_write_all issues pwrites), so the same
/// bytes show once at mpiio and again at posix: compare rows of one layer, do not add layers.
///
/// By default POSIX and STDIO records on system files (/proc, /sys, /dev but not /dev/shm,
/// /etc, /usr, /lib, /run) and on descriptors without a file (sockets, pipes) are left out:
/// an MPI library's start-up reads hundreds of them. --all counts them.
#[derive(Parser, Debug)]
#[command(after_help = crate::EXIT_CODES)]
pub struct Args {
    /// The trace directory
    #[arg(value_name = "TRACE")]
    pub trace: PathBuf,
    /// What one row stands for
    #[arg(long, value_enum, default_value_t = By::Layer)]
    pub by: By,
    /// Print JSON (for scripts) instead of a table
    #[arg(long)]
    pub json: bool,
    /// Count every record, system files and sockets included
    #[arg(long)]
    pub all: bool,
}

/// Prints the statistics.
pub fn run(args: Args) -> Result<u8> {
    let trace = super::open_trace(&args.trace)?;
    let scope = if args.all {
        Scope::All
    } else {
        Scope::Application
    };
    let stats = compute(&trace, args.by.into(), scope)?;
    let mut out = super::Output::stdout();
    if args.json {
        out.line(format_args!("{}", serde_json::to_string_pretty(&stats)?))?;
    } else {
        out.write(format_args!("{}", render(&stats)))?;
    }
    out.finish()?;
    Ok(0)
}

fn opt(v: Option<u64>) -> String {
    v.map_or_else(|| "-".to_string(), human::bytes)
}

/// The text table.
pub fn render(s: &Stats) -> String {
    let mut text = String::new();
    let ranks = if s.ranks > 0 {
        format!("{} ranks", s.ranks)
    } else {
        "no MPI".to_string()
    };
    text.push_str(&format!(
        "{ranks}, {} processes, {} events, job {}{}\n\n",
        s.processes,
        s.events,
        human::duration_ns(s.duration_ns),
        if s.partial {
            ", PARTIAL trace (see meta.json)"
        } else {
            ""
        }
    ));
    if let Some(servers) = &s.servers {
        text.push_str(&server_table(servers));
    }
    // A real server's records are its POSIX calls, all in the server table: no `server` or
    // `disk` rows to add, and nothing missing to say.
    let servers_shown = s.servers.as_ref().is_some_and(|t| !t.servers.is_empty());
    if s.rows.is_empty() {
        if !servers_shown {
            text.push_str("no records\n");
        }
    } else {
        text.push_str(&table(s.group_by, &s.rows));
    }
    if s.left_out > 0 {
        text.push_str(&format!(
            "\n{} records left out: POSIX/STDIO on system files, helper files or descriptors without a file, and what runs inside MPI_Init/MPI_Finalize (--all counts them)\n",
            s.left_out
        ));
    }
    text
}

/// The server table (PIOviz's columns) and what the client calls became on the servers, then
/// a blank line; nothing for a trace without servers.
pub fn server_table(t: &ServerTable) -> String {
    if t.servers.is_empty() {
        return String::new();
    }
    let mut header = vec!["server"];
    header.extend(ServerColumn::ALL.map(server_column_label));
    let rows: Vec<Vec<String>> = t
        .servers
        .iter()
        .map(|r| {
            let mut row = vec![r.server.clone()];
            row.extend(ServerColumn::ALL.map(|c| server_cell(c, c.value(r))));
            row
        })
        .collect();
    let mut text = human::table(&header, &rows, 1);
    if !t.calls.is_empty() {
        text.push_str("\nclient calls on the servers:\n");
        for c in &t.calls {
            text.push_str(&format!("  {}\n", c.summary));
        }
    }
    if t.untied_server_ops > 0 {
        text.push_str(&format!(
            "  {} server data operations tied to no client call\n",
            t.untied_server_ops
        ));
    }
    text.push('\n');
    text
}

/// The header of a server table column (here and in `pioscope compare`).
pub fn server_column_label(c: ServerColumn) -> &'static str {
    match c {
        ServerColumn::NetworkOpsPerSec => "net ops/s",
        ServerColumn::StorageOpsPerSec => "storage ops/s",
        ServerColumn::StorageAccesses => "accesses",
        ServerColumn::BytesPerAccess => "bytes/access",
        ServerColumn::CpuPercent => "CPU %",
        ServerColumn::Throughput => "throughput",
        ServerColumn::BusyFraction => "busy",
    }
}

/// A server table cell: `v` in the column's unit, `-` when absent.
pub fn server_cell(c: ServerColumn, v: Option<f64>) -> String {
    let Some(v) = v else {
        return "-".to_string();
    };
    match c {
        ServerColumn::NetworkOpsPerSec | ServerColumn::StorageOpsPerSec => human::rate(v),
        ServerColumn::StorageAccesses => format!("{v:.0}"),
        ServerColumn::BytesPerAccess => human::bytes(v.round() as u64),
        ServerColumn::CpuPercent => format!("{v:.1}"),
        ServerColumn::Throughput => human::throughput(v),
        ServerColumn::BusyFraction => units::pct(v),
    }
}

/// The statistics table of `rows` grouped by `by` (also used by `pioscope report`).
pub fn table(by: GroupBy, rows: &[StatsRow]) -> String {
    let mut header = vec![by.name()];
    if by != GroupBy::Layer {
        header.push("layer");
    }
    let left = header.len();
    header.extend([
        "ops",
        "bytes",
        "size min",
        "mean",
        "max",
        "total time",
        "busy time",
        "ops/s",
        "throughput",
        "errors",
    ]);
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let mut row = vec![r.group.clone()];
            if by != GroupBy::Layer {
                row.push(r.layer.name().to_string());
            }
            row.extend([
                r.operations.to_string(),
                human::bytes(r.bytes),
                opt(r.size_min),
                opt(r.size_mean.map(|m| m.round() as u64)),
                opt(r.size_max),
                human::duration_ns(r.total_time_ns),
                human::duration_ns(r.busy_time_ns),
                r.ops_per_sec.map_or_else(|| "-".to_string(), human::rate),
                r.bytes_per_sec
                    .filter(|_| r.data_operations > 0)
                    .map_or_else(|| "-".to_string(), human::throughput),
                r.errors.to_string(),
            ]);
            row
        })
        .collect();
    human::table(&header, &rows, left)
}
