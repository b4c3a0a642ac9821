//! What every export shares: the containers of a trace (hosts, ranks, servers, disks and their
//! threads), their names, and the I/O throughput counter's buckets (colours come from
//! `pioscope_trace::colours`, the table the pages draw with).

use std::collections::BTreeMap;

use pioscope_trace::store::meta::{ContainerKind, Meta};

use crate::Options;

/// One container of events: a meta.json `processes` entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Container {
    /// Index in meta.json `processes` (the events' `process`).
    pub process: i32,
    /// Application process, server or disk.
    pub kind: ContainerKind,
    /// MPI rank (-1 for servers, disks, processes without MPI).
    pub rank: i32,
    /// Host name ("" if unknown; a server's or disk's server name).
    pub host: String,
    /// Display name: `rank 3`, `pid 1234`, `server-0`, `server-0 disk 1`.
    pub name: String,
    /// Threads (at least 1).
    pub threads: u32,
}

/// The containers of the exported ranks, in meta.json order.
pub fn containers(meta: &Meta, opts: &Options) -> Vec<Container> {
    meta.processes
        .iter()
        .filter(|p| opts.keeps_rank(p.rank))
        .map(|p| {
            let name = match p.kind {
                ContainerKind::Process if p.rank >= 0 => {
                    // A forked child keeps its parent's rank: tell them apart by pid.
                    let twins = meta
                        .processes
                        .iter()
                        .filter(|q| q.rank == p.rank && q.kind == ContainerKind::Process)
                        .count();
                    if twins > 1 {
                        format!("rank {} pid {}", p.rank, p.pid)
                    } else {
                        format!("rank {}", p.rank)
                    }
                }
                ContainerKind::Process => format!("pid {}", p.pid),
                ContainerKind::Server => p.host.clone(),
                ContainerKind::Disk => format!(
                    "{} disk {}",
                    p.facts.get("server").unwrap_or(&p.host),
                    p.facts.get("disk").map_or("0", |s| s.as_str())
                ),
            };
            Container {
                process: p.process as i32,
                kind: p.kind,
                rank: p.rank,
                host: if p.host.is_empty() {
                    "unknown-host".to_string()
                } else {
                    p.host.clone()
                },
                name,
                threads: p.threads.max(1),
            }
        })
        .collect()
}

/// The hosts of some containers, in order of first appearance.
pub fn hosts(containers: &[Container]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for c in containers {
        if !out.contains(&c.host) {
            out.push(c.host.clone());
        }
    }
    out
}

/// Width of a throughput bucket: about 200 buckets over the job, at least 1 µs.
pub fn bucket_ns(meta: &Meta) -> i64 {
    (meta.job.duration_ns / 200).max(1_000)
}

/// Bytes moved per bucket of one container: a data call's bytes count in the bucket where it
/// ends (when the data is there).
#[derive(Clone, Debug, Default)]
pub struct Throughput {
    /// Bucket index → bytes.
    pub buckets: BTreeMap<i64, u64>,
}

impl Throughput {
    /// Adds a call that moved `bytes` and ended at `end_ns`.
    pub fn add(&mut self, end_ns: i64, bytes: u64, bucket_ns: i64) {
        if bytes > 0 {
            *self.buckets.entry(end_ns.max(0) / bucket_ns).or_default() += bytes;
        }
    }

    /// The series: (bucket start ns, MB/s over the bucket), with a 0 after each run of busy
    /// buckets so that the line drops when the I/O stops.
    pub fn series(&self, bucket_ns: i64) -> Vec<(i64, f64)> {
        let mut out = Vec::new();
        let mut prev: Option<i64> = None;
        for (&b, &bytes) in &self.buckets {
            if let Some(p) = prev {
                if b > p + 1 {
                    out.push(((p + 1) * bucket_ns, 0.0));
                }
            }
            out.push((b * bucket_ns, bytes as f64 / bucket_ns as f64 * 1e3));
            prev = Some(b);
        }
        if let Some(p) = prev {
            out.push(((p + 1) * bucket_ns, 0.0));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn throughput_series_drops_to_zero_between_bursts() {
        let mut t = Throughput::default();
        t.add(1_500, 1_000, 1_000); // bucket 1: 1000 bytes per 1000 ns = 1000 MB/s
        t.add(1_900, 1_000, 1_000);
        t.add(5_000, 500, 1_000); // bucket 5
        t.add(5_000, 0, 1_000);
        assert_eq!(
            t.series(1_000),
            vec![(1_000, 2000.0), (2_000, 0.0), (5_000, 500.0), (6_000, 0.0)]
        );
    }
}
