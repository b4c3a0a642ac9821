//! What ROMIO did beneath MPI-IO: which ranks acted as aggregators of collective calls (and on
//! which hosts), how many two-phase cycles each collective call took against the number the
//! collective buffer implies, and how much data sieving read and wrote beneath independent
//! calls.
//!
//! Definitions (also in docs/CLI.md, `pioscope report`):
//! - the POSIX calls of an MPI-IO call: POSIX data calls (read/write family) whose nearest
//!   enclosing MPI-IO call on the thread is that call (found through the nesting, not the
//!   `parent` column, so an MPI_Waitall in between does not hide them);
//! - aggregator: a rank with POSIX data calls beneath at least one collective MPI-IO data call
//!   (`collective` flag). Hosts come from meta.json `processes[].host`; a host without one is a
//!   host whose ranks took part in collective calls but none aggregated;
//! - cycles of one collective call on an aggregator: its POSIX writes beneath a collective
//!   write (reads beneath a collective read). Expected cycles: ceil(domain / cb_buffer_size),
//!   where the domain is the span of the file the aggregator accessed in that call (lowest
//!   offset to highest end of those POSIX calls) and cb_buffer_size the hint in force for the
//!   rank and file at the call (settings.parquet);
//! - data sieving: beneath independent MPI-IO calls, POSIX bytes read and written against the
//!   bytes requested; a write call with both reads and writes beneath is a read-modify-write.

use std::collections::{BTreeMap, BTreeSet};

use pioscope_trace::functions::{self, Layer, OpKind};
use pioscope_trace::store::Event;
use serde::Serialize;

use crate::hints::{self, Timeline};
use crate::lookup::InstanceIndex;
use crate::nesting::{Frame, Nesting};
use crate::pass::{Context, Visitor};
use crate::stats::PerFunc;

/// Direction of a data call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Reads.
    Read,
    /// Writes.
    Write,
}

/// A rank that acted as aggregator.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Aggregator {
    /// The rank.
    pub rank: i32,
    /// Its host.
    pub host: String,
    /// Collective calls in which it issued POSIX data calls.
    pub calls: u64,
    /// POSIX data calls beneath collective calls.
    pub posix_operations: u64,
    /// Bytes they moved.
    pub posix_bytes: u64,
}

/// Aggregators of one host.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HostAggregators {
    /// Host name.
    pub host: String,
    /// Ranks on it that took part in collective MPI-IO.
    pub ranks: u64,
    /// Of those, aggregators.
    pub aggregators: u64,
}

/// Two-phase cycles of one aggregator on one file and direction.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Cycles {
    /// The file.
    pub path: String,
    /// The aggregator.
    pub rank: i32,
    /// Its host.
    pub host: String,
    /// Collective writes or reads.
    pub direction: Direction,
    /// Collective calls in which it did I/O in this direction.
    pub calls: u64,
    /// Fewest cycles in one call.
    pub cycles_min: u64,
    /// Mean cycles per call.
    pub cycles_mean: f64,
    /// Most cycles in one call.
    pub cycles_max: u64,
    /// Mean of ceil(domain / cb_buffer_size) over the calls where the hint is known.
    pub expected_mean: Option<f64>,
    /// Mean file domain per call, bytes.
    pub domain_mean: f64,
    /// cb_buffer_size in force at the last call, if known.
    pub cb_buffer_size: Option<u64>,
    /// Calls with more than one cycle.
    pub multi_cycle_calls: u64,
}

/// Data sieving beneath independent MPI-IO calls of one rank on one file and direction.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Sieving {
    /// The file.
    pub path: String,
    /// The rank.
    pub rank: i32,
    /// Independent writes or reads.
    pub direction: Direction,
    /// Independent MPI-IO calls.
    pub calls: u64,
    /// Bytes those calls requested (moved, as statistics count them).
    pub requested_bytes: u64,
    /// POSIX bytes read beneath them.
    pub posix_read_bytes: u64,
    /// POSIX bytes written beneath them.
    pub posix_written_bytes: u64,
    /// POSIX data calls beneath them.
    pub posix_operations: u64,
    /// Write calls with both POSIX reads and writes beneath (read-modify-write).
    pub rmw_calls: u64,
    /// (posix read + written) / requested.
    pub amplification: Option<f64>,
}

/// Aggregation and sieving of a trace.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Aggregation {
    /// Distinct collective MPI-IO data calls (collective instances).
    pub collective_calls: u64,
    /// Collective MPI-IO data call records (one per rank and call).
    pub collective_call_records: u64,
    /// Ranks that took part in collective MPI-IO data calls.
    pub participants: u64,
    /// Ranks that acted as aggregators, by rank.
    pub aggregators: Vec<Aggregator>,
    /// Per host with participants, by host.
    pub hosts: Vec<HostAggregators>,
    /// Hosts with participants but no aggregator.
    pub hosts_without_aggregator: Vec<String>,
    /// Two-phase cycles per aggregator, file and direction.
    pub cycles: Vec<Cycles>,
    /// Data sieving per rank, file and direction (only where POSIX calls were beneath).
    pub sieving: Vec<Sieving>,
}

#[derive(Clone, Copy, Debug)]
struct Call {
    collective: bool,
    file: Option<i32>,
    direction: Direction,
    start: i64,
    requested: u64,
    reads: u64,
    writes: u64,
    read_bytes: u64,
    written_bytes: u64,
    /// Span of the POSIX calls of the call's direction: (lowest offset, highest end).
    span: Option<(i64, i64)>,
}

#[derive(Debug, Default)]
struct CycleAcc {
    calls: u64,
    sum: u64,
    min: Option<u64>,
    max: u64,
    expected_sum: u64,
    expected_calls: u64,
    domain_sum: u128,
    cb: Option<u64>,
    multi: u64,
}

#[derive(Debug, Default)]
struct SieveAcc {
    calls: u64,
    requested: u64,
    read_bytes: u64,
    written_bytes: u64,
    operations: u64,
    rmw: u64,
}

/// The aggregation visitor.
#[derive(Debug)]
pub struct AggregationVisitor {
    kinds: PerFunc<OpKind>,
    nesting: Nesting<Option<Call>>,
    /// The collective instances seen, by their dense number (a table: a hash set of the
    /// instances outgrew the caches in a long trace), and how many.
    instances: InstanceIndex,
    distinct_instances: u64,
    records: u64,
    participants: BTreeMap<i32, String>,
    aggregators: BTreeMap<i32, Aggregator>,
    cycles: BTreeMap<(i32, i32, Direction), CycleAcc>,
    sieving: BTreeMap<(i32, i32, Direction), SieveAcc>,
    /// The rank being read (None before the first event) and its host.
    current: Option<i32>,
    rank: i32,
    host: String,
    /// The calls a record closed, kept between records (no allocation per record).
    closed: Vec<Call>,
    /// The cb_buffer_size values of the (rank, file) of the last collective call concluded.
    cb_buffer: Option<((i32, i32), Timeline<u64>)>,
}

impl Default for AggregationVisitor {
    fn default() -> Self {
        Self::new()
    }
}

impl AggregationVisitor {
    /// A new visitor.
    pub fn new() -> Self {
        AggregationVisitor {
            kinds: PerFunc::new(functions::kind_of),
            nesting: Nesting::new(),
            instances: InstanceIndex::default(),
            distinct_instances: 0,
            records: 0,
            participants: BTreeMap::new(),
            aggregators: BTreeMap::new(),
            cycles: BTreeMap::new(),
            sieving: BTreeMap::new(),
            current: None,
            rank: 0,
            host: String::new(),
            closed: Vec::new(),
            cb_buffer: None,
        }
    }

    /// Concludes one MPI-IO data call once it has ended.
    fn close(&mut self, c: Call, ctx: &Context<'_>) {
        let Some(file) = c.file else { return };
        let posix_ops = c.reads + c.writes;
        if c.collective {
            if posix_ops == 0 {
                return;
            }
            let a = self
                .aggregators
                .entry(self.rank)
                .or_insert_with(|| Aggregator {
                    rank: self.rank,
                    host: self.host.clone(),
                    calls: 0,
                    posix_operations: 0,
                    posix_bytes: 0,
                });
            a.calls += 1;
            a.posix_operations += posix_ops;
            a.posix_bytes += c.read_bytes + c.written_bytes;
            let cycles = match c.direction {
                Direction::Write => c.writes,
                Direction::Read => c.reads,
            };
            if cycles == 0 {
                return;
            }
            let domain = c.span.map_or(0, |(lo, hi)| (hi - lo).max(0) as u64);
            let key = (self.rank, file);
            if self.cb_buffer.as_ref().is_none_or(|(k, _)| *k != key) {
                let values = ctx.hints.timeline(self.rank, file, hints::CB_BUFFER_SIZE);
                self.cb_buffer = Some((key, values));
            }
            let cb = (self.cb_buffer.as_ref()).and_then(|(_, values)| values.at(c.start));
            let acc = self
                .cycles
                .entry((file, self.rank, c.direction))
                .or_default();
            acc.calls += 1;
            acc.sum += cycles;
            acc.min = Some(acc.min.map_or(cycles, |m| m.min(cycles)));
            acc.max = acc.max.max(cycles);
            acc.domain_sum += domain as u128;
            if cycles > 1 {
                acc.multi += 1;
            }
            if let Some(cb) = cb.filter(|&b| b > 0) {
                acc.cb = Some(cb);
                acc.expected_sum += domain.div_ceil(cb).max(1);
                acc.expected_calls += 1;
            }
        } else {
            let acc = self
                .sieving
                .entry((file, self.rank, c.direction))
                .or_default();
            acc.calls += 1;
            acc.requested += c.requested;
            acc.read_bytes += c.read_bytes;
            acc.written_bytes += c.written_bytes;
            acc.operations += posix_ops;
            if c.direction == Direction::Write && c.reads > 0 && c.writes > 0 {
                acc.rmw += 1;
            }
        }
    }

    fn drain(&mut self, ctx: &Context<'_>) {
        let mut closed = Vec::new();
        self.nesting.drain(|c| closed.extend(c));
        for c in closed {
            self.close(c, ctx);
        }
    }

    /// The result, after the pass.
    pub fn result(&self, ctx: &Context<'_>) -> Aggregation {
        let path = |f: i32| ctx.trace.file_path(f).unwrap_or("?").to_string();
        let host_of = |rank: i32| {
            self.participants
                .get(&rank)
                .cloned()
                .or_else(|| self.aggregators.get(&rank).map(|a| a.host.clone()))
                .unwrap_or_default()
        };
        let mut hosts: BTreeMap<String, HostAggregators> = BTreeMap::new();
        for (rank, host) in &self.participants {
            let h = hosts
                .entry(host.clone())
                .or_insert_with(|| HostAggregators {
                    host: host.clone(),
                    ranks: 0,
                    aggregators: 0,
                });
            h.ranks += 1;
            if self.aggregators.contains_key(rank) {
                h.aggregators += 1;
            }
        }
        let hosts_without_aggregator = hosts
            .values()
            .filter(|h| h.aggregators == 0)
            .map(|h| h.host.clone())
            .collect();
        let mut cycles: Vec<Cycles> = self
            .cycles
            .iter()
            .map(|(&(f, rank, direction), a)| Cycles {
                path: path(f),
                rank,
                host: host_of(rank),
                direction,
                calls: a.calls,
                cycles_min: a.min.unwrap_or(0),
                cycles_mean: a.sum as f64 / a.calls.max(1) as f64,
                cycles_max: a.max,
                expected_mean: (a.expected_calls > 0)
                    .then(|| a.expected_sum as f64 / a.expected_calls as f64),
                domain_mean: a.domain_sum as f64 / a.calls.max(1) as f64,
                cb_buffer_size: a.cb,
                multi_cycle_calls: a.multi,
            })
            .collect();
        cycles.sort_by(|a, b| (&a.path, a.rank, a.direction).cmp(&(&b.path, b.rank, b.direction)));
        let mut sieving: Vec<Sieving> = self
            .sieving
            .iter()
            .filter(|(_, a)| a.operations > 0)
            .map(|(&(f, rank, direction), a)| Sieving {
                path: path(f),
                rank,
                direction,
                calls: a.calls,
                requested_bytes: a.requested,
                posix_read_bytes: a.read_bytes,
                posix_written_bytes: a.written_bytes,
                posix_operations: a.operations,
                rmw_calls: a.rmw,
                amplification: (a.requested > 0)
                    .then(|| (a.read_bytes + a.written_bytes) as f64 / a.requested as f64),
            })
            .collect();
        sieving.sort_by(|a, b| (&a.path, a.rank, a.direction).cmp(&(&b.path, b.rank, b.direction)));
        Aggregation {
            collective_calls: self.distinct_instances,
            collective_call_records: self.records,
            participants: self.participants.len() as u64,
            aggregators: self.aggregators.values().cloned().collect(),
            hosts: hosts.into_values().collect(),
            hosts_without_aggregator,
            cycles,
            sieving,
        }
    }

    /// The ranks that aggregated, for tests and rules.
    pub fn aggregator_ranks(&self) -> BTreeSet<i32> {
        self.aggregators.keys().copied().collect()
    }
}

impl Visitor for AggregationVisitor {
    fn visit(&mut self, e: &Event<'_>, ctx: &Context<'_>) {
        if self.current != Some(e.rank) {
            // Calls still open belong to the previous rank: conclude them under its number.
            self.drain(ctx);
            self.current = Some(e.rank);
            self.rank = e.rank;
            self.host = ctx.host_of_process(e.process).to_string();
        }
        let kind = self.kinds.get(e);
        let data = matches!(kind, OpKind::Read | OpKind::Write);
        let direction = if kind == OpKind::Read {
            Direction::Read
        } else {
            Direction::Write
        };
        let mut closed = std::mem::take(&mut self.closed);
        let stack = self.nesting.enter(e, |c| closed.extend(c));
        match e.layer {
            Layer::MpiIo => {
                let call = data.then_some(Call {
                    collective: e.collective,
                    file: e.file_id,
                    direction,
                    start: e.start_ns,
                    requested: functions::bytes_moved(e.size.max(0) as u64, e.result, e.error),
                    reads: 0,
                    writes: 0,
                    read_bytes: 0,
                    written_bytes: 0,
                    span: None,
                });
                // Every MPI-IO call gets a frame, data or not, so a POSIX call beneath an
                // MPI_File_close is not charged to an enclosing write.
                stack.push(Frame::of(e, call));
                if data && e.collective {
                    self.records += 1;
                    if let Some(i) = e.instance {
                        let distinct = &mut self.distinct_instances;
                        // The place of a new instance: its order of first appearance.
                        self.instances.at(i64::from(i), || {
                            *distinct += 1;
                            *distinct as usize - 1
                        });
                    }
                    if !self.participants.contains_key(&e.rank) {
                        self.participants.insert(e.rank, self.host.clone());
                    }
                }
            }
            Layer::Posix | Layer::Stdio if data => {
                // The nearest MPI-IO frame: the last pushed (only MPI-IO calls push).
                if let Some(Some(c)) = stack.last_mut().map(|f| &mut f.data) {
                    let moved = functions::bytes_moved(e.size.max(0) as u64, e.result, e.error);
                    if direction == Direction::Read {
                        c.reads += 1;
                        c.read_bytes += moved;
                    } else {
                        c.writes += 1;
                        c.written_bytes += moved;
                    }
                    if direction == c.direction {
                        if let Some(off) = e.offset {
                            let end = off + e.size.max(0);
                            c.span = Some(
                                c.span
                                    .map_or((off, end), |(lo, hi)| (lo.min(off), hi.max(end))),
                            );
                        }
                    }
                }
            }
            _ => {}
        }
        for c in closed.drain(..) {
            self.close(c, ctx);
        }
        self.closed = closed;
    }

    fn finish(&mut self, ctx: &Context<'_>) {
        self.drain(ctx);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{self, coll, ev, io, FILE_A};

    const MIB: u64 = 1 << 20;

    /// 4 ranks, n1 = {0, 1}, n2 = {2, 3}; two collective writes (instances 2, 3). Rank 0
    /// aggregates: per call a pread of its domain (two-phase read-modify-write) and three
    /// 4 MiB pwrites covering 12 MiB with a 4 MiB cb_buffer_size (3 cycles expected); in the
    /// second call one pwrite sits beneath an MPI_Waitall. Rank 1 does an independent write of
    /// 1000 B sieved as a 64 KiB read + 64 KiB write, and an independent read of 100 B sieved
    /// as a 4 KiB read.
    fn job(dir: &std::path::Path) -> pioscope_trace::store::Trace {
        let mut ranks = Vec::new();
        for r in 0..4u32 {
            let host = if r < 2 { "n1" } else { "n2" };
            let mut b = testutil::rank(r, 4, host);
            b.settings(
                FILE_A,
                testutil::id("MPI_File_open"),
                0,
                &[("cb_buffer_size", "4194304"), ("cb_nodes", "1")],
            );
            let mut evs = Vec::new();
            for (call, t0) in [(2u64, 1_000u64), (3, 100_000)] {
                evs.push(coll(
                    io(
                        "MPI_File_write_all",
                        t0,
                        50_000,
                        FILE_A,
                        r as u64 * 64,
                        4096,
                    ),
                    call,
                ));
                if r == 0 {
                    evs.push(io("pread", t0 + 100, 1000, FILE_A, 0, 12 * MIB).depth(1));
                    evs.push(io("pwrite", t0 + 2_000, 1000, FILE_A, 0, 4 * MIB).depth(1));
                    evs.push(io("pwrite", t0 + 4_000, 1000, FILE_A, 4 * MIB, 4 * MIB).depth(1));
                    if call == 3 {
                        evs.push(ev("MPI_Waitall", t0 + 5_000, 2000).depth(1));
                        evs.push(io("pwrite", t0 + 6_000, 500, FILE_A, 8 * MIB, 4 * MIB).depth(2));
                    } else {
                        evs.push(io("pwrite", t0 + 6_000, 1000, FILE_A, 8 * MIB, 4 * MIB).depth(1));
                    }
                }
            }
            if r == 1 {
                evs.push(io("MPI_File_write_at", 200_000, 5_000, FILE_A, 100, 1000));
                evs.push(io("pread", 200_100, 1000, FILE_A, 0, 65_536).depth(1));
                evs.push(io("pwrite", 201_200, 1000, FILE_A, 0, 65_536).depth(1));
                evs.push(io("MPI_File_read_at", 210_000, 5_000, FILE_A, 100, 100));
                evs.push(io("pread", 210_100, 1000, FILE_A, 0, 4096).depth(1));
            }
            b.events(0, &evs);
            ranks.push(b);
        }
        testutil::trace(dir, ranks)
    }

    #[test]
    fn aggregators_hosts_and_cycles() {
        let dir = tempfile::tempdir().expect("tmp");
        let t = job(dir.path());
        let (a, set) = testutil::run(&t, AggregationVisitor::new(), |v, c| {
            (v.result(c), v.aggregator_ranks())
        });
        assert_eq!(set.into_iter().collect::<Vec<_>>(), vec![0]);
        assert_eq!(
            (
                a.collective_calls,
                a.collective_call_records,
                a.participants
            ),
            (2, 8, 4)
        );
        let g = &a.aggregators[0];
        assert_eq!(
            (
                g.rank,
                g.host.as_str(),
                g.calls,
                g.posix_operations,
                g.posix_bytes
            ),
            (0, "n1", 2, 8, 2 * 24 * MIB)
        );
        let hosts: Vec<(&str, u64, u64)> = a
            .hosts
            .iter()
            .map(|h| (h.host.as_str(), h.ranks, h.aggregators))
            .collect();
        assert_eq!(hosts, vec![("n1", 2, 1), ("n2", 2, 0)]);
        assert_eq!(a.hosts_without_aggregator, vec!["n2".to_string()]);
        assert_eq!(a.cycles.len(), 1);
        let c = &a.cycles[0];
        assert_eq!(
            (
                c.rank,
                c.direction,
                c.calls,
                c.cycles_min,
                c.cycles_max,
                c.multi_cycle_calls
            ),
            (0, Direction::Write, 2, 3, 3, 2),
            "the pread of the read-modify-write is not a cycle; the pwrite under Waitall is"
        );
        assert_eq!(c.cycles_mean, 3.0);
        assert_eq!(c.domain_mean, (12 * MIB) as f64);
        assert_eq!(
            (c.expected_mean, c.cb_buffer_size),
            (Some(3.0), Some(4 * MIB))
        );
    }

    #[test]
    fn data_sieving_volume() {
        let dir = tempfile::tempdir().expect("tmp");
        let t = job(dir.path());
        let a = testutil::run(&t, AggregationVisitor::new(), |v, c| v.result(c));
        assert_eq!(a.sieving.len(), 2);
        let w = a
            .sieving
            .iter()
            .find(|s| s.direction == Direction::Write)
            .expect("w");
        assert_eq!(
            (
                w.rank,
                w.calls,
                w.requested_bytes,
                w.posix_read_bytes,
                w.posix_written_bytes
            ),
            (1, 1, 1000, 65_536, 65_536)
        );
        assert_eq!((w.posix_operations, w.rmw_calls), (2, 1));
        assert_eq!(w.amplification, Some(131_072.0 / 1000.0));
        let r = a
            .sieving
            .iter()
            .find(|s| s.direction == Direction::Read)
            .expect("r");
        assert_eq!(
            (
                r.requested_bytes,
                r.posix_read_bytes,
                r.posix_written_bytes,
                r.rmw_calls
            ),
            (100, 4096, 0, 0)
        );
        assert_eq!(r.amplification, Some(40.96));
    }

    /// Without a cb_buffer_size hint the expected cycles are unknown, not invented.
    #[test]
    fn no_hint_no_expectation() {
        let dir = tempfile::tempdir().expect("tmp");
        let mut b = testutil::rank(0, 1, "n1");
        b.events(
            0,
            &[
                coll(io("MPI_File_read_all", 0, 1000, FILE_A, 0, 10), 1),
                io("pread", 10, 100, FILE_A, 0, 10).depth(1),
            ],
        );
        let t = testutil::trace(dir.path(), vec![b]);
        let a = testutil::run(&t, AggregationVisitor::new(), |v, c| v.result(c));
        let c = &a.cycles[0];
        assert_eq!(
            (c.direction, c.cycles_max, c.expected_mean),
            (Direction::Read, 1, None)
        );
        assert!(a.hosts_without_aggregator.is_empty());
    }
}
