//! `pioscope dump`: the records of a trace as text, one line each, indented by nesting.

use std::path::PathBuf;

use anyhow::Result;
use clap::{Parser, ValueEnum};
use pioscope_analysis::scope::ScopeFilter;
use pioscope_analysis::Scope;
use pioscope_trace::functions::{self, Layer, OpKind};
use pioscope_trace::store::{Event, EventFilter, Trace};

use crate::human;

/// A layer on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LayerArg {
    /// POSIX I/O
    Posix,
    /// C standard I/O
    Stdio,
    /// MPI-IO
    Mpiio,
    /// MPI communication
    Mpi,
    /// User regions
    Region,
    /// Tracer pseudo-calls (request completions)
    Tracer,
    /// Storage server requests (server and simulated traces)
    Server,
    /// Disk accesses beneath a storage server
    Disk,
    /// HDF5 files, datasets, groups and attributes
    Hdf5,
    /// PnetCDF files and variables
    Pnetcdf,
}

impl From<LayerArg> for Layer {
    fn from(l: LayerArg) -> Layer {
        match l {
            LayerArg::Posix => Layer::Posix,
            LayerArg::Stdio => Layer::Stdio,
            LayerArg::Mpiio => Layer::MpiIo,
            LayerArg::Mpi => Layer::Mpi,
            LayerArg::Region => Layer::Region,
            LayerArg::Tracer => Layer::Tracer,
            LayerArg::Server => Layer::Server,
            LayerArg::Disk => Layer::Disk,
            LayerArg::Hdf5 => Layer::Hdf5,
            LayerArg::Pnetcdf => Layer::Pnetcdf,
        }
    }
}

/// Print the records of a trace, one line each
///
/// Records come in store order (rank, then start time), indented by their nesting depth so
/// the POSIX calls inside an MPI-IO call show beneath it. Each line shows: start time (seconds
/// since the job start), duration, rank/process/thread, function, file, offset, size, the
/// result when it differs from the size, errno or MPI error class, collective instance,
/// request, and MPI peer/tag or root/communicator size.
///
/// Like `stats`, it shows the application's records by default: not the POSIX and STDIO
/// calls on system files, ROMIO's helper files, sockets and pipes, nor what the MPI library
/// does inside MPI_Init and MPI_Finalize; `--all` shows every record.
#[derive(Parser, Debug)]
#[command(after_help = crate::EXIT_CODES)]
pub struct Args {
    /// The trace directory
    #[arg(value_name = "TRACE")]
    pub trace: PathBuf,
    /// Only this rank (-1: processes without MPI)
    #[arg(long, value_name = "R", allow_negative_numbers = true)]
    pub rank: Option<i32>,
    /// Only this layer
    #[arg(long, value_enum, value_name = "L")]
    pub layer: Option<LayerArg>,
    /// Stop after N records
    #[arg(long, value_name = "N")]
    pub limit: Option<u64>,
    /// Show every record, system files, sockets and the insides of MPI_Init/MPI_Finalize included
    #[arg(long)]
    pub all: bool,
}

/// Prints the records.
pub fn run(args: Args) -> Result<u8> {
    let trace = super::open_trace(&args.trace)?;
    let layer: Option<Layer> = args.layer.map(Into::into);
    let mut out = super::Output::stdout();
    out.line(format_args!(
        "{:>15}  {:>9}  {:<12}  call",
        "time (s)", "duration", "where"
    ))?;
    let scope = if args.all {
        Scope::All
    } else {
        Scope::Application
    };
    let mut filter = ScopeFilter::new(&trace, scope);
    let mut printed = 0u64;
    let limit = args.limit.unwrap_or(u64::MAX);
    'batches: for batch in trace.events_where(EventFilter { rank: args.rank })? {
        let batch = batch?;
        for e in batch.iter() {
            if printed >= limit || !out.open() {
                break 'batches;
            }
            // The scope sees every record of the rank, so it knows where MPI_Init ends.
            if !filter.keeps(&e)
                || args.rank.is_some_and(|r| r != e.rank)
                || layer.is_some_and(|l| l != e.layer)
            {
                continue;
            }
            out.line(format_args!("{}", line(&trace, &e)))?;
            printed += 1;
        }
    }
    out.finish()?;
    Ok(0)
}

fn seconds(ns: i64) -> String {
    let sign = if ns < 0 { "-" } else { "" };
    let a = ns.unsigned_abs();
    format!("{sign}{}.{:09}", a / 1_000_000_000, a % 1_000_000_000)
}

/// One record as text.
pub fn line(trace: &Trace, e: &Event<'_>) -> String {
    let place = format!("r{} p{} t{}", e.rank, e.process, e.thread);
    let mut s = format!(
        "{:>15}  {:>9}  {:<12}  {}{}",
        seconds(e.start_ns),
        human::duration_ns(e.duration_ns),
        place,
        "  ".repeat(e.depth as usize),
        e.func
    );
    let kind = functions::kind_of(e.layer, e.func);
    if e.layer == Layer::Region {
        if let Some(r) = e.region {
            s.push_str(&format!(" \"{r}\""));
        }
    }
    if let Some(f) = e.file_id {
        match trace.file_path(f) {
            Some(p) => s.push_str(&format!(" {p}")),
            None => s.push_str(&format!(" file#{f}")),
        }
    }
    if let Some(c) = e.comm {
        if c.contains(char::is_whitespace) {
            s.push_str(&format!(" comm=\"{c}\""));
        } else {
            s.push_str(&format!(" comm={c}"));
        }
    }
    if let Some(off) = e.offset {
        if kind != OpKind::Other || off != 0 {
            s.push_str(&format!(" off={off}"));
        }
    }
    if e.size != 0 || matches!(kind, OpKind::Read | OpKind::Write) {
        s.push_str(&format!(" size={}", e.size));
    }
    let mpi = e.mpi.get();
    if let (Some(p), Some(t)) = (mpi.peer, mpi.tag) {
        s.push_str(&format!(" peer={p} tag={t}"));
    }
    if let (Some(r), Some(n)) = (mpi.root, mpi.comm_size) {
        s.push_str(&format!(" root={r} comm_size={n}"));
    }
    if e.result != e.size {
        s.push_str(&format!(" -> {}", e.result));
    }
    if e.error != 0 {
        match e.layer {
            Layer::Posix | Layer::Stdio => {
                let msg = std::io::Error::from_raw_os_error(e.error).to_string();
                let msg = msg.split(" (os error").next().unwrap_or("").to_string();
                s.push_str(&format!(" errno={} ({msg})", e.error));
            }
            // HDF5 keeps its reasons on its error stack: the record says only that it failed.
            Layer::Hdf5 => s.push_str(" failed"),
            _ => s.push_str(&format!(" error_class={}", e.error)),
        }
    }
    if e.collective {
        s.push_str(" collective");
    }
    if let Some(i) = e.instance {
        s.push_str(&format!(" instance={i}"));
    }
    if let Some(r) = mpi.request {
        s.push_str(&format!(" request={r}"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_are_exact() {
        assert_eq!(seconds(1_500), "0.000001500");
        assert_eq!(seconds(12_000_000_001), "12.000000001");
        assert_eq!(seconds(-5), "-0.000000005");
    }
}
