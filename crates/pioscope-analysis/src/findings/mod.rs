//! Findings: rules that ride the same single pass as the statistics (as one visitor,
//! [`Rules`]) and conclude with ranked, evidenced problems and concrete remedies.
//!
//! One rule per file, each owning its id, its detection, its cost estimate and its remedy;
//! `TEMPLATE.md` shows how to add one. Thresholds live in `findings.toml` (built in as the
//! defaults, overridable by `--config`); docs/FINDINGS.md describes every rule.
//!
//! Design notes:
//! - A rule keeps state bounded by ranks, files, threads and collective instances, never by
//!   events: traces reach 10^8 records.
//! - `cost_ns` is an estimate of the elapsed time the problem costs in this run: time summed
//!   over ranks is divided by the number of ranks (the saving spread evenly), time on a
//!   critical path (one rank, one collective instance) is counted as it is. Costs of
//!   different findings can overlap (one slow call can show two problems); they are not
//!   meant to be added.
//! - Severity comes from the cost as a share of the job's elapsed time (`[general]`), so a
//!   clean run, where nothing costs much, has no high finding.

use std::collections::BTreeMap;

use serde::Serialize;

use pioscope_trace::store::Event;

use crate::pass::Context;
use util::Facts;

mod config;
mod counters;
mod dispatch;
mod overlap;
mod util;

mod aggregator_placement;
mod cb_buffer_cycles;
mod close_sync;
mod data_sieving;
mod exchange_time;
mod file_per_process;
mod h5_chunk_stripe;
mod h5_frequent_flush;
mod h5_independent_metadata;
mod h5_independent_writes;
mod h5_small_attributes;
mod heavy_stdio;
mod library;
mod load_imbalance;
mod metadata_storm;
mod misaligned;
mod mpiio_blocking;
mod noncontiguous_independent;
mod pnetcdf_blocking;
mod pnetcdf_redef_moves;
mod random_access;
mod rank0_io;
mod redundant_writes;
mod reread;
mod server_cpu;
mod server_imbalance;
mod servers_idle;
mod small_requests;
mod small_storage_accesses;
mod split_requests;

pub use config::{Config, FindingsError, DEFAULTS};
pub use counters::Counters;
pub use dispatch::{Interest, Rules};

/// How much a finding matters: its estimated cost as a share of the job's elapsed time
/// (thresholds in `[general]` of findings.toml).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Costs a large share of the run (`high_share`, default 20 %).
    High,
    /// Worth fixing (`medium_share`, default 5 %).
    Medium,
    /// Minor in this run.
    Low,
}

impl Severity {
    /// `high`, `medium` or `low`.
    pub fn name(self) -> &'static str {
        match self {
            Severity::High => "high",
            Severity::Medium => "medium",
            Severity::Low => "low",
        }
    }
}

/// The facts behind a finding.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Evidence {
    /// One or two sentences with the key numbers.
    pub summary: String,
    /// The numbers, by name (bytes, ns, counts, shares as fractions).
    pub numbers: BTreeMap<String, serde_json::Value>,
    /// The worst files, ranks and calls, by name, worst first.
    pub worst: Vec<String>,
}

/// One problem found in a trace.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Finding {
    /// Rule id, e.g. `small-requests` (docs/FINDINGS.md).
    pub id: String,
    /// Severity.
    pub severity: Severity,
    /// One line.
    pub title: String,
    /// The evidence.
    pub evidence: Evidence,
    /// Estimated elapsed time this problem costs in this run, ns.
    pub cost_ns: i64,
    /// What to change: a hint with its value, a code change, a stripe setting.
    pub remedy: String,
}

/// A finding rule: shown records of the pass (through [`Rules`], with their facts), it
/// concludes with zero or more findings. Send: the rules are a group of visitors, which the
/// pass's workers take turns at running.
pub trait Rule: Send {
    /// One record the scope keeps, in store order, with its facts, worked out once for every
    /// rule (and for a storage server's record, which they do not place, empty facts).
    fn visit(&mut self, e: &Event<'_>, fx: &Facts, ctx: &Context<'_>);

    /// Whether it also sees the records of traced server daemons (as `Visitor` asks).
    fn sees_server_records(&self) -> bool {
        false
    }

    /// After the last record.
    fn finish(&mut self, _ctx: &Context<'_>) {}

    /// The records `visit` looks at; it is not shown the others (see [`Interest`]).
    fn interest(&self) -> Interest {
        Interest::EVERY
    }

    /// Whether `visit` would do nothing with any record of the pass of `ctx` (a storage server
    /// rule on a trace without servers): asked once, before the first record, and then the
    /// rule is shown none. It may set up what `visit` would have at its first record.
    fn idle(&mut self, _ctx: &Context<'_>) -> bool {
        false
    }

    /// The findings, after `finish`.
    fn conclude(&self, ctx: &Context<'_>) -> Vec<Finding>;

    /// The findings of an imported Darshan log without DXT events, judged from its counters
    /// (the rule's second input path; docs/FINDINGS.md says which counters each rule reads).
    /// None for a rule the counters cannot judge.
    fn judge_counters(&self, _counters: &Counters, _ctx: &Context<'_>) -> Vec<Finding> {
        Vec::new()
    }
}

/// The ids of the storage server rules (the report page lists their findings beside the
/// server table too).
pub const SERVER_RULE_IDS: &[&str] = &[
    server_imbalance::ID,
    small_storage_accesses::ID,
    servers_idle::ID,
    server_cpu::ID,
];

/// The ids of every rule, in the order `rules` builds them.
pub const RULE_IDS: &[&str] = &[
    small_requests::ID,
    noncontiguous_independent::ID,
    data_sieving::ID,
    split_requests::ID,
    cb_buffer_cycles::ID,
    aggregator_placement::ID,
    close_sync::ID,
    metadata_storm::ID,
    file_per_process::ID,
    load_imbalance::ID,
    rank0_io::ID,
    random_access::ID,
    misaligned::ID,
    reread::ID,
    redundant_writes::ID,
    mpiio_blocking::ID,
    heavy_stdio::ID,
    exchange_time::ID,
    server_imbalance::ID,
    small_storage_accesses::ID,
    servers_idle::ID,
    server_cpu::ID,
    h5_independent_writes::ID,
    h5_independent_metadata::ID,
    pnetcdf_blocking::ID,
    h5_frequent_flush::ID,
    h5_small_attributes::ID,
    pnetcdf_redef_moves::ID,
    h5_chunk_stripe::ID,
];

/// Every enabled rule, configured, as one visitor of the pass.
pub fn rules(config: &Config) -> Rules {
    let mut v: Vec<Box<dyn Rule>> = Vec::new();
    let on = |id: &str| config.section(id).bool("enabled");
    if on(small_requests::ID) {
        v.push(Box::new(small_requests::SmallRequests::new(config)));
    }
    if on(noncontiguous_independent::ID) {
        v.push(Box::new(
            noncontiguous_independent::NoncontiguousIndependent::new(config),
        ));
    }
    if on(data_sieving::ID) {
        v.push(Box::new(data_sieving::DataSieving::new(config)));
    }
    if on(split_requests::ID) {
        v.push(Box::new(split_requests::SplitRequests::new(config)));
    }
    if on(cb_buffer_cycles::ID) {
        v.push(Box::new(cb_buffer_cycles::CbBufferCycles::new(config)));
    }
    if on(aggregator_placement::ID) {
        v.push(Box::new(aggregator_placement::AggregatorPlacement::new(
            config,
        )));
    }
    if on(close_sync::ID) {
        v.push(Box::new(close_sync::CloseSync::new(config)));
    }
    if on(metadata_storm::ID) {
        v.push(Box::new(metadata_storm::MetadataStorm::new(config)));
    }
    if on(file_per_process::ID) {
        v.push(Box::new(file_per_process::FilePerProcess::new(config)));
    }
    if on(load_imbalance::ID) {
        v.push(Box::new(load_imbalance::LoadImbalance::new(config)));
    }
    if on(rank0_io::ID) {
        v.push(Box::new(rank0_io::Rank0Io::new(config)));
    }
    if on(random_access::ID) {
        v.push(Box::new(random_access::RandomAccess::new(config)));
    }
    if on(misaligned::ID) {
        v.push(Box::new(misaligned::Misaligned::new(config)));
    }
    if on(reread::ID) {
        v.push(Box::new(reread::Reread::new(config)));
    }
    if on(redundant_writes::ID) {
        v.push(Box::new(redundant_writes::RedundantWrites::new(config)));
    }
    if on(mpiio_blocking::ID) {
        v.push(Box::new(mpiio_blocking::MpiioBlocking::new(config)));
    }
    if on(heavy_stdio::ID) {
        v.push(Box::new(heavy_stdio::HeavyStdio::new(config)));
    }
    if on(exchange_time::ID) {
        v.push(Box::new(exchange_time::ExchangeTime::new(config)));
    }
    if on(server_imbalance::ID) {
        v.push(Box::new(server_imbalance::ServerImbalance::new(config)));
    }
    if on(small_storage_accesses::ID) {
        v.push(Box::new(small_storage_accesses::SmallStorageAccesses::new(
            config,
        )));
    }
    if on(servers_idle::ID) {
        v.push(Box::new(servers_idle::ServersIdle::new(config)));
    }
    if on(server_cpu::ID) {
        v.push(Box::new(server_cpu::ServerCpu::new(config)));
    }
    if on(h5_independent_writes::ID) {
        v.push(Box::new(h5_independent_writes::H5IndependentWrites::new(
            config,
        )));
    }
    if on(h5_independent_metadata::ID) {
        v.push(Box::new(
            h5_independent_metadata::H5IndependentMetadata::new(config),
        ));
    }
    if on(pnetcdf_blocking::ID) {
        v.push(Box::new(pnetcdf_blocking::PnetcdfBlocking::new(config)));
    }
    if on(h5_frequent_flush::ID) {
        v.push(Box::new(h5_frequent_flush::H5FrequentFlush::new(config)));
    }
    if on(h5_small_attributes::ID) {
        v.push(Box::new(h5_small_attributes::H5SmallAttributes::new(
            config,
        )));
    }
    if on(pnetcdf_redef_moves::ID) {
        v.push(Box::new(pnetcdf_redef_moves::PnetcdfRedefMoves::new(
            config,
        )));
    }
    if on(h5_chunk_stripe::ID) {
        v.push(Box::new(h5_chunk_stripe::H5ChunkStripe::new(config)));
    }
    Rules::new(v)
}

/// The findings of `rules` (after the pass), ranked: highest cost first, then severity, then
/// id, so the order is stable.
pub fn conclude(rules: &[Box<dyn Rule>], ctx: &Context<'_>) -> Vec<Finding> {
    let mut all: Vec<Finding> = rules.iter().flat_map(|r| r.conclude(ctx)).collect();
    rank(&mut all);
    all
}

/// The findings of `rules` judged from the counters of an imported Darshan log without DXT
/// events (no pass ran), ranked as `conclude` ranks them.
pub fn conclude_from_counters(
    rules: &[Box<dyn Rule>],
    counters: &Counters,
    ctx: &Context<'_>,
) -> Vec<Finding> {
    let mut all: Vec<Finding> = rules
        .iter()
        .flat_map(|r| r.judge_counters(counters, ctx))
        .collect();
    rank(&mut all);
    all
}

/// Sorts findings by cost (highest first), then severity, then id.
pub fn rank(findings: &mut [Finding]) {
    findings.sort_by(|a, b| {
        b.cost_ns
            .cmp(&a.cost_ns)
            .then(a.severity.cmp(&b.severity))
            .then(a.id.cmp(&b.id))
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil;
    use pioscope_trace::store::Trace;

    /// The findings of a real trace directory, printed (`--nocapture`) for a look.
    fn real(dir: &std::path::Path) -> Vec<Finding> {
        let f = testutil::findings(&Trace::open(dir).expect("open"), &Config::default());
        println!("== {}", dir.display());
        for x in &f {
            println!(
                "{} [{}] cost {} : {}\n   {}\n   {:?}\n   worst {:?}\n   remedy: {}",
                x.id,
                x.severity.name(),
                x.cost_ns,
                x.title,
                x.evidence.summary,
                x.evidence.numbers,
                x.evidence.worst,
                x.remedy
            );
        }
        f
    }

    /// The demo traces (`make demo`, or the copies in tests/data, when present) and the clean
    /// run of issue 3 (testdata/, always; PIOSCOPE_CLEAN_TRACE names another).
    #[test]
    fn real_traces_give_sensible_findings() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        for base in ["../../build/demo", "../../tests/data"] {
            let ind = root.join(base).join("hpio-independent");
            if ind.join("meta.json").exists() {
                let f = real(&ind);
                assert!(
                    f.iter().any(|f| f.id == "data-sieving"),
                    "{base}: no data-sieving"
                );
                assert!(f.iter().any(|f| f.id == "noncontiguous-independent"));
            }
            let col = root.join(base).join("hpio-collective");
            if col.join("meta.json").exists() {
                let f = real(&col);
                assert!(
                    f.iter().any(|f| f.id == "exchange-time"),
                    "{base}: no exchange-time"
                );
                assert!(!f.iter().any(|f| f.id == "data-sieving"));
            }
        }
        let mut clean = vec![root.join("testdata/hpio-collective-large-regions")];
        clean.extend(std::env::var_os("PIOSCOPE_CLEAN_TRACE").map(Into::into));
        // The one rule that may be high there is exchange-time: 4 ranks on one node spend
        // 89 % of their collective writes exchanging through one aggregator, and severity
        // follows the share of the job a finding costs, uncapped (issue 13).
        for c in clean {
            let f = real(&c);
            let high: Vec<&str> = f
                .iter()
                .filter(|f| f.severity == Severity::High && f.id != "exchange-time")
                .map(|f| f.id.as_str())
                .collect();
            assert!(high.is_empty(), "clean run has high findings: {high:?}");
        }
    }

    #[test]
    fn a_rule_can_be_turned_off() {
        let c = Config::from_toml(
            "[reread]\nenabled = false\n",
            std::path::Path::new("t.toml"),
        )
        .expect("ok");
        assert_eq!(rules(&c).len(), RULE_IDS.len() - 1);
    }

    #[test]
    fn severity_serializes_lowercase_and_ranking_is_by_cost() {
        assert_eq!(
            serde_json::to_string(&Severity::Medium).expect("json"),
            "\"medium\""
        );
        let f = |id: &str, cost, severity| Finding {
            id: id.into(),
            severity,
            title: String::new(),
            evidence: Evidence::default(),
            cost_ns: cost,
            remedy: String::new(),
        };
        let mut v = vec![
            f("a", 5, Severity::Low),
            f("b", 9, Severity::Medium),
            f("c", 5, Severity::High),
        ];
        rank(&mut v);
        let ids: Vec<&str> = v.iter().map(|f| f.id.as_str()).collect();
        assert_eq!(ids, ["b", "c", "a"]);
        let mut v = vec![
            f("b", 10, Severity::Low),
            f("a", 5, Severity::High),
            f("c", 50, Severity::Low),
            f("d", 10, Severity::High),
        ];
        rank(&mut v);
        let ids: Vec<&str> = v.iter().map(|f| f.id.as_str()).collect();
        assert_eq!(ids, ["c", "d", "b", "a"]);
    }
}
