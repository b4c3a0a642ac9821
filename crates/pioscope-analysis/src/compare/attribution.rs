//! Where the time of a call went: its duration split into disk, server, network, message
//! exchange and the rest, from the calls beneath it and (in a simulated trace) the activity of
//! the storage servers and disks for its rank while it ran.
//!
//! The split is a partition of the call's interval, so the parts add up to its duration. Each
//! instant goes to the first that applies:
//! 1. inside an I/O call beneath it (POSIX/STDIO; the call itself when nothing is beneath it
//!    and it is not an MPI call)
//!    - a disk of a server is busy while that server serves this rank: **disk**;
//!    - a server serves this rank (server events with `peer` = the rank): **server** (CPU,
//!      queueing, cache);
//!    - else **network** (the request and data travelling; latency, bandwidth, sharing), or
//!      **io** when the trace has no server containers at all (nothing to split it with);
//! 2. inside an MPI call beneath it (the two-phase exchange, the offset exchange), or an MPI
//!    call with nothing beneath it (a barrier): **exchange**;
//! 3. a disk or server working for this rank outside the calls beneath (a model that issues
//!    I/O without a call around it): **disk**, **server**;
//! 4. anything else (MPI-IO bookkeeping, locks, time between the calls beneath it): **other**.
//!
//! Server and disk events are read in a second streaming pass over the rank -1 row groups of
//! the simulated trace, keeping only those overlapping a call being explained.

use pioscope_trace::functions::Layer;
use pioscope_trace::store::meta::ContainerKind;
use pioscope_trace::store::{Containers, EventFilter, StoreError, Trace};
use rustc_hash::FxHashMap;
use serde::Serialize;

use super::ops::{children, Names, Op};

/// A call's duration split by where it went, ns (the parts add up to the duration).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Breakdown {
    /// A disk busy for this rank's request.
    pub disk_ns: i64,
    /// A server handling this rank's request while no disk works for it: CPU, queue, cache.
    pub server_ns: i64,
    /// I/O outside any server activity: messages to and from the servers.
    pub network_ns: i64,
    /// I/O calls in a trace without server containers (not split further).
    pub io_ns: i64,
    /// MPI calls beneath the call: the two-phase exchange, offset exchanges.
    pub exchange_ns: i64,
    /// The rest of the call.
    pub other_ns: i64,
}

impl Breakdown {
    /// The parts with their names for people, largest first (ties in the fixed order).
    pub fn parts(&self) -> Vec<(&'static str, i64)> {
        let mut p = vec![
            ("disk", self.disk_ns),
            ("server CPU/queue", self.server_ns),
            ("network", self.network_ns),
            ("I/O", self.io_ns),
            ("MPI exchange", self.exchange_ns),
            ("other", self.other_ns),
        ];
        p.retain(|x| x.1 > 0);
        p.sort_by_key(|x| std::cmp::Reverse(x.1));
        p
    }

    /// "62% disk, 30% network, 8% server CPU/queue" (parts under 0.5% left out; "nothing"
    /// for an empty call).
    pub fn text(&self) -> String {
        let total: i64 = self.parts().iter().map(|p| p.1).sum();
        if total <= 0 {
            return "no time".to_string();
        }
        let parts: Vec<String> = self
            .parts()
            .into_iter()
            .filter(|p| p.1 as f64 / total as f64 >= 0.005)
            .map(|(name, ns)| format!("{:.0}% {name}", ns as f64 * 100.0 / total as f64))
            .collect();
        parts.join(", ")
    }
}

const DISK: usize = 0;
const SERVER: usize = 1;
const IO: usize = 2;
const EXCHANGE: usize = 3;

/// The partition of [start, end) given labelled intervals (clipped to it).
fn partition(start: i64, end: i64, intervals: &[(usize, i64, i64)], servers: bool) -> Breakdown {
    let mut edges: Vec<(i64, i32, usize)> = Vec::with_capacity(intervals.len() * 2);
    for &(cat, s, e) in intervals {
        let (s, e) = (s.max(start), e.min(end));
        if s < e {
            edges.push((s, 1, cat));
            edges.push((e, -1, cat));
        }
    }
    edges.sort_unstable();
    let mut b = Breakdown::default();
    let mut count = [0i32; 4];
    let mut t = start;
    let add = |b: &mut Breakdown, count: &[i32; 4], from: i64, to: i64| {
        let d = to - from;
        if d <= 0 {
            return;
        }
        if count[IO] > 0 {
            if count[DISK] > 0 {
                b.disk_ns += d;
            } else if count[SERVER] > 0 {
                b.server_ns += d;
            } else if servers {
                b.network_ns += d;
            } else {
                b.io_ns += d;
            }
        } else if count[EXCHANGE] > 0 {
            b.exchange_ns += d;
        } else if count[DISK] > 0 {
            b.disk_ns += d;
        } else if count[SERVER] > 0 {
            b.server_ns += d;
        } else {
            b.other_ns += d;
        }
    };
    for (at, delta, cat) in edges {
        add(&mut b, &count, t, at);
        t = at;
        count[cat] += delta;
    }
    add(&mut b, &count, t, end);
    b
}

/// The intervals of the calls beneath top-level call `top` of a rank's list, labelled I/O or
/// exchange (the call itself when nothing is beneath it).
fn child_intervals(ops: &[Op], names: &Names, top: usize) -> Vec<(usize, i64, i64)> {
    let kids = children(ops, top);
    if kids.is_empty() {
        // Nothing beneath: an MPI call is communication, anything else (POSIX, MPI-IO
        // metadata) is I/O of its own.
        let o = &ops[top];
        let cat = if names.layer(o.func()) == Layer::Mpi {
            EXCHANGE
        } else {
            IO
        };
        return vec![(cat, o.start, o.end())];
    }
    kids.filter_map(|c| {
        let o = &ops[c];
        match names.layer(o.func()) {
            Layer::Posix | Layer::Stdio => Some((IO, o.start, o.end())),
            Layer::Mpi => Some((EXCHANGE, o.start, o.end())),
            _ => None,
        }
    })
    .collect()
}

/// The split of an observed call (no server data: I/O, exchange, other).
pub(crate) fn observed(ops: &[Op], names: &Names, top: usize) -> Breakdown {
    let o = &ops[top];
    partition(o.start, o.end(), &child_intervals(ops, names, top), false)
}

/// A simulated top-level call waiting for its split: what the calls beneath it say, before
/// the servers and disks are read.
#[derive(Debug)]
pub(crate) struct Pending {
    rank: i32,
    start: i64,
    end: i64,
    intervals: Vec<(usize, i64, i64)>,
}

/// Notes simulated top-level call `top` of `rank` for `simulated`.
pub(crate) fn pending(ops: &[Op], names: &Names, rank: u32, top: usize) -> Pending {
    let o = &ops[top];
    Pending {
        rank: rank as i32,
        start: o.start,
        end: o.end(),
        intervals: child_intervals(ops, names, top),
    }
}

/// Splits the pending simulated calls with the server and disk activity of the simulated
/// trace; one breakdown per call, in order.
pub(crate) fn simulated(
    trace: &Trace,
    mut calls: Vec<Pending>,
) -> Result<Vec<Breakdown>, StoreError> {
    // Servers by name (servers first, then disks of unlisted servers); each server and disk
    // container maps to its server.
    let containers = Containers::new(&trace.meta);
    let mut server_ids: FxHashMap<&str, u32> = FxHashMap::default();
    let mut server_of: Vec<Option<u32>> = vec![None; containers.all().len()];
    for kind in [ContainerKind::Server, ContainerKind::Disk] {
        for c in containers.all().iter().filter(|c| c.kind == kind) {
            let Some(name) = c.server.as_deref() else {
                continue;
            };
            let n = server_ids.len() as u32;
            let id = *server_ids.entry(name).or_insert(n);
            if let Some(slot) = server_of.get_mut(c.process as usize) {
                *slot = Some(id);
            }
        }
    }
    let servers = !server_ids.is_empty();
    if servers && !calls.is_empty() {
        add_server_activity(trace, &mut calls, &server_of, server_ids.len())?;
    }
    Ok(calls
        .iter()
        .map(|c| partition(c.start, c.end, &c.intervals, servers))
        .collect())
}

/// Adds SERVER intervals (this rank's requests) and DISK intervals (a disk of that server busy
/// during them) to each call's intervals.
fn add_server_activity(
    trace: &Trace,
    calls: &mut [Pending],
    server_of: &[Option<u32>],
    nservers: usize,
) -> Result<(), StoreError> {
    // Calls of each rank sorted by start (top-level calls of one rank do not overlap).
    let mut by_rank: FxHashMap<i32, Vec<(i64, i64, usize)>> = FxHashMap::default();
    for (k, c) in calls.iter().enumerate() {
        by_rank.entry(c.rank).or_default().push((c.start, c.end, k));
    }
    for v in by_rank.values_mut() {
        v.sort_unstable();
    }
    // Every call's interval, merged, to keep only the disk accesses that can matter.
    let mut all: Vec<(i64, i64)> = calls.iter().map(|c| (c.start, c.end)).collect();
    all.sort_unstable();
    let mut merged: Vec<(i64, i64)> = Vec::new();
    for (s, e) in all {
        match merged.last_mut() {
            Some(m) if s <= m.1 => m.1 = m.1.max(e),
            _ => merged.push((s, e)),
        }
    }
    // (call, server, start, end) of this rank's requests; disk accesses per server.
    let mut pieces: Vec<(usize, u32, i64, i64)> = Vec::new();
    let mut disks: Vec<Vec<(i64, i64)>> = vec![Vec::new(); nservers];
    let filter = EventFilter { rank: Some(-1) };
    for batch in trace.events_where(filter)? {
        let batch = batch?;
        for e in batch.iter() {
            if e.rank >= 0 {
                continue;
            }
            let Some(Some(server)) = server_of.get(e.process.max(0) as usize).copied() else {
                continue;
            };
            let (s, end) = (e.start_ns, e.end_ns());
            match e.layer {
                Layer::Server => {
                    let Some(list) = e.mpi.get().peer.and_then(|p| by_rank.get(&p)) else {
                        continue;
                    };
                    // Calls starting before the piece ends, scanned back while they overlap.
                    let upto = list.partition_point(|c| c.0 < end);
                    for c in list[..upto].iter().rev() {
                        if c.1 <= s {
                            break;
                        }
                        pieces.push((c.2, server, s.max(c.0), end.min(c.1)));
                    }
                }
                Layer::Disk => {
                    let k = merged.partition_point(|m| m.1 <= s);
                    if merged.get(k).is_some_and(|m| m.0 < end) {
                        disks[server as usize].push((s, end));
                    }
                }
                _ => {}
            }
        }
    }
    let mut longest = vec![0i64; nservers];
    for (d, l) in disks.iter_mut().zip(longest.iter_mut()) {
        d.sort_unstable();
        *l = d.iter().map(|x| x.1 - x.0).max().unwrap_or(0);
    }
    for (call, server, s, e) in pieces {
        let iv = &mut calls[call].intervals;
        iv.push((SERVER, s, e));
        let d = &disks[server as usize];
        let upto = d.partition_point(|x| x.0 < e);
        for x in d[..upto].iter().rev() {
            if x.0 + longest[server as usize] <= s {
                break;
            }
            if x.1 > s {
                iv.push((DISK, x.0.max(s), x.1.min(e)));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partition_follows_the_priorities_and_adds_up() {
        // A 100 ns call: I/O child 10..90, server 20..80, disk 30..50; exchange 0..10.
        let iv = [
            (IO, 10, 90),
            (SERVER, 20, 80),
            (DISK, 30, 50),
            (EXCHANGE, 0, 10),
        ];
        let b = partition(0, 100, &iv, true);
        assert_eq!(
            b,
            Breakdown {
                disk_ns: 20,
                server_ns: 40,
                network_ns: 20,
                io_ns: 0,
                exchange_ns: 10,
                other_ns: 10,
            }
        );
        assert_eq!(
            b.text(),
            "40% server CPU/queue, 20% disk, 20% network, 10% MPI exchange, 10% other"
        );
        // Server activity for the rank outside any call beneath counts as server time, inside
        // an exchange as exchange; I/O without server activity stays I/O without servers.
        let iv = [(SERVER, 0, 60), (EXCHANGE, 0, 20), (IO, 50, 150)];
        let b = partition(0, 100, &iv, false);
        assert_eq!(
            (b.exchange_ns, b.server_ns, b.io_ns, b.other_ns),
            (20, 40, 40, 0)
        );
        assert_eq!(partition(5, 5, &iv, true).text(), "no time");
    }
}
