//! Everything `pioscope report` shows, from one pass: statistics in every grouping, the time
//! breakdown, access patterns, aggregation, and the findings of every rule, gathered in one
//! serializable `Profile` (the `--json` output).

use pioscope_trace::store::meta::{ContainerKind, FACT_MPI_IO, FACT_MPI_IO_PARAMS};
use pioscope_trace::store::{StoreError, Trace};
use serde::Serialize;

use crate::aggregation::{Aggregation, AggregationVisitor};
use crate::breakdown::{Breakdown, BreakdownVisitor};
use crate::counters::{summarize, CounterSummary};
use crate::darshan::{self, DarshanSummary};
use crate::findings::{self, Finding};
use crate::heatmap::{Heatmap, HeatmapVisitor};
use crate::hints;
use crate::pass::{self, Visitor};
use crate::patterns::{self, Patterns, PatternsVisitor};
use crate::scope::Scope;
use crate::servers::{ServerTable, ServerVisitor};
use crate::stats::{GroupBy, StatsRow, StatsVisitor};

/// What a profile counts and how the rules judge.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Which records count.
    pub scope: Scope,
    /// Rule thresholds.
    pub findings: findings::Config,
    /// Pattern options (block size).
    pub patterns: patterns::Options,
}

/// The job as the report heads it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Job {
    /// Command line of the lowest rank.
    pub command: Option<String>,
    /// MPI library.
    pub mpi_library: Option<String>,
    /// MPI-IO implementation, the environment settings that chose or tuned it (the lowest
    /// rank's JOB facts) and the collective buffering hints of the first file that reports
    /// them (`OMPIO (OMPI_MCA_fcoll=vulcan)`, `ROMIO; /f: cb_nodes=2, cb_buffer_size=65536`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mpi_io: Option<String>,
    /// Tracer version.
    pub tracer_version: Option<String>,
    /// MPI ranks (0 without MPI).
    pub ranks: u32,
    /// Processes traced.
    pub processes: u64,
    /// Distinct hosts of the job's processes (not its storage servers'), sorted.
    pub hosts: Vec<String>,
    /// Wall-clock time of the job start, ns since the Unix epoch.
    pub start_unix_ns: i64,
    /// Job duration, ns.
    pub duration_ns: i64,
    /// Something was lost.
    pub partial: bool,
    /// Why.
    pub partial_reasons: Vec<String>,
    /// What was counted.
    pub scope: Scope,
    /// Records read.
    pub events: u64,
    /// Records the scope left out.
    pub left_out: u64,
}

/// Statistics in every grouping (rows as in `pioscope stats --json`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Tables {
    /// By layer.
    pub layer: Vec<StatsRow>,
    /// By function.
    pub func: Vec<StatsRow>,
    /// By file and layer.
    pub file: Vec<StatsRow>,
    /// By rank and layer.
    pub rank: Vec<StatsRow>,
    /// By host and layer.
    pub host: Vec<StatsRow>,
    /// By user phase and layer.
    pub phase: Vec<StatsRow>,
    /// By storage server and layer (server and simulated traces only; absent otherwise).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub server: Vec<StatsRow>,
}

/// Everything the report shows.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Profile {
    /// The job.
    pub job: Job,
    /// Findings, most costly first.
    pub findings: Vec<Finding>,
    /// Time breakdown.
    pub breakdown: Breakdown,
    /// Statistics tables.
    pub tables: Tables,
    /// Access patterns.
    pub patterns: Patterns,
    /// Aggregators, two-phase cycles, data sieving.
    pub aggregation: Aggregation,
    /// Rank-by-time I/O busy time (the HTML page's heat map).
    pub heatmap: Heatmap,
    /// The storage servers' table and what the client calls became on them (traces with
    /// servers only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub servers: Option<ServerTable>,
    /// The sampled counters per node and process (traces with counters only).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub counters: Vec<CounterSummary>,
    /// What an imported Darshan log's counters say, and what the store cannot support
    /// (imported stores only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub darshan: Option<DarshanSummary>,
}

/// The MPI-IO line of the job: the lowest rank's (processes are sorted by rank) implementation
/// and its environment settings, then ROMIO's collective buffering hints as the first file that
/// reports them got them (MPICH reports every hint in force; Open MPI 4.1 only the program's
/// own). None for a trace without the facts (no MPI, older traces).
fn mpi_io(ctx: &pass::Context<'_>) -> Option<String> {
    let facts = &ctx
        .trace
        .meta
        .processes
        .iter()
        .find(|p| p.facts.contains_key(FACT_MPI_IO))?
        .facts;
    let mut line = facts[FACT_MPI_IO].clone();
    if let Some(params) = facts.get(FACT_MPI_IO_PARAMS).filter(|p| !p.is_empty()) {
        line.push_str(&format!(" ({params})"));
    }
    if let Some((file, nodes)) = ctx.hints.first_file_with(hints::CB_NODES) {
        let path = ctx.trace.file_path(file).unwrap_or("?");
        line.push_str(&format!("; {path}: {}={nodes}", hints::CB_NODES));
        if let Some(size) = ctx.hints.any(file, hints::CB_BUFFER_SIZE) {
            line.push_str(&format!(", {}={size}", hints::CB_BUFFER_SIZE));
        }
    }
    Some(line)
}

/// Reads the trace once and computes everything. `progress(done, total)` follows the row
/// groups.
pub fn profile(
    trace: &Trace,
    options: &Options,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Profile, StoreError> {
    let ctx = pass::context(trace, options.scope)?;
    let mut stats = StatsVisitor::new(&GroupBy::ALL);
    let mut breakdown = BreakdownVisitor::new();
    let mut patterns = PatternsVisitor::new(options.patterns);
    let mut aggregation = AggregationVisitor::new();
    let mut heatmap = HeatmapVisitor::for_trace(trace);
    let mut servers = ServerVisitor::new(trace);
    let darshan = darshan::summarize(trace)?;
    // A Darshan log without DXT has no calls for the pass: the rules judge its counters.
    let darshan_counters = match &darshan {
        Some(d) if !d.has_dxt_events => Some(findings::Counters::new(&trace.darshan_counters()?)),
        _ => None,
    };
    let mut rules = findings::rules(&options.findings);
    let counts = {
        let mut visitors: Vec<&mut dyn Visitor> = vec![
            &mut stats,
            &mut breakdown,
            &mut patterns,
            &mut aggregation,
            &mut heatmap,
        ];
        // A trace without servers leaves the server table nothing to see.
        if servers.has_servers() {
            visitors.push(&mut servers);
        }
        // The rules, about half of the visiting, are a group of their own: the pass runs it
        // beside the other visitors.
        pass::run_groups(&ctx, &mut [&mut visitors, &mut [&mut rules]], progress)?
    };
    let found = match &darshan_counters {
        Some(counters) => findings::conclude_from_counters(&rules, counters, &ctx),
        None => findings::conclude(&rules, &ctx),
    };
    let counter_rows = trace.counters()?;
    let server_table = servers
        .has_servers()
        .then(|| servers.table(&ctx, &counter_rows));
    let mut rows = stats.rows(&ctx).into_iter();
    let mut next = || rows.next().unwrap_or_default();
    let tables = Tables {
        layer: next(),
        func: next(),
        file: next(),
        rank: next(),
        host: next(),
        phase: next(),
        server: next(),
    };
    let m = &trace.meta;
    // The job's hosts: a storage server or disk container carries its server's name as host.
    let mut hosts: Vec<String> = m
        .processes
        .iter()
        .filter(|p| p.kind == ContainerKind::Process)
        .map(|p| p.host.clone())
        .collect();
    hosts.sort();
    hosts.dedup();
    Ok(Profile {
        job: Job {
            command: m.job.command.clone(),
            mpi_library: m.job.mpi_library.clone(),
            mpi_io: mpi_io(&ctx),
            tracer_version: m.tracer_version.clone(),
            ranks: m.job.ranks,
            processes: m.counts.processes,
            hosts,
            start_unix_ns: m.job.start_unix_ns,
            duration_ns: m.job.duration_ns,
            partial: m.partial,
            partial_reasons: m.partial_reasons.clone(),
            scope: options.scope,
            events: counts.events,
            left_out: counts.left_out,
        },
        findings: found,
        breakdown: breakdown.result(),
        tables,
        patterns: patterns.result(&ctx),
        aggregation: aggregation.result(&ctx),
        heatmap: heatmap.result(),
        servers: server_table,
        counters: summarize(&counter_rows),
        darshan,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::compute;
    use crate::testutil::{self, coll, io, FILE_A};

    /// One pass gives the same tables as `stats` run alone, and every section.
    #[test]
    fn one_pass_has_every_section() {
        let dir = tempfile::tempdir().expect("tmp");
        let mut ranks = Vec::new();
        for r in 0..2u32 {
            let mut b = testutil::rank(r, 2, if r == 0 { "n1" } else { "n2" });
            let mut evs = vec![coll(io("MPI_File_write_all", 100, 1000, FILE_A, 0, 64), 1)];
            if r == 0 {
                evs.push(io("pwrite", 200, 100, FILE_A, 0, 128).depth(1));
            }
            b.events(0, &evs);
            ranks.push(b);
        }
        let t = testutil::trace(dir.path(), ranks);
        let mut calls = Vec::new();
        let p = profile(&t, &Options::default(), &mut |d, n| calls.push((d, n))).expect("profile");
        assert_eq!(calls, vec![(1, 1)], "progress per row group");
        assert_eq!((p.job.ranks, p.job.events, p.job.left_out), (2, 3, 0));
        assert_eq!(p.job.hosts, vec!["n1".to_string(), "n2".to_string()]);
        for (by, rows) in [
            (GroupBy::Layer, &p.tables.layer),
            (GroupBy::Func, &p.tables.func),
            (GroupBy::File, &p.tables.file),
            (GroupBy::Rank, &p.tables.rank),
            (GroupBy::Host, &p.tables.host),
            (GroupBy::Phase, &p.tables.phase),
        ] {
            let alone = compute(&t, by, Scope::Application).expect("stats");
            assert_eq!(&alone.rows, rows, "{by}");
        }
        assert_eq!(p.breakdown.ranks.len(), 2);
        assert_eq!(p.aggregation.aggregators.len(), 1);
        assert_eq!(p.patterns.files.len(), 1);
        let v = serde_json::to_value(&p).expect("json");
        for key in [
            "job",
            "findings",
            "breakdown",
            "tables",
            "patterns",
            "aggregation",
            "heatmap",
        ] {
            assert!(v.get(key).is_some(), "{key}");
        }
    }
}
