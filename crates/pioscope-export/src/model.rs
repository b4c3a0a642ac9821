//! What every export shares: the containers of a trace (hosts, ranks, servers, disks and their
//! threads), their names, and the I/O throughput counter's buckets (colours come from
//! `pioscope_trace::colours`, the table the pages draw with).

use std::collections::BTreeMap;

pub use pioscope_trace::store::containers::Container;
use pioscope_trace::store::containers::Containers;
use pioscope_trace::store::meta::Meta;

use crate::Options;

/// The containers of the exported ranks, in meta.json order, as `store::Containers` labels
/// them; a container without a host is put on `unknown-host`.
pub fn containers(meta: &Meta, opts: &Options) -> Vec<Container> {
    Containers::new(meta)
        .all()
        .iter()
        .filter(|c| opts.keeps_rank(c.rank))
        .map(|c| {
            let mut c = c.clone();
            if c.host.is_empty() {
                c.host = "unknown-host".to_string();
            }
            c
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
