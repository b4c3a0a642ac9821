//! The sampled counters of a trace (counters.parquet) summed up: per node and per traced
//! process the mean and peak CPU, the disk and network bytes and the peak memory (the
//! report's counters section), and a server's CPU series for the server table and findings.

use std::collections::BTreeMap;

use pioscope_trace::store::counters::{name, NODE};
use pioscope_trace::store::{Container, CounterRow};
use serde::Serialize;

/// A CPU time series: user + system percent per sample time.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CpuSeries {
    /// (time ns, percent, interval ns), by time.
    pub samples: Vec<(i64, f64, i64)>,
}

impl CpuSeries {
    /// Mean over the samples, weighted by their intervals (a short last interval, as a
    /// simulated run's, counts for its length); the plain mean when no sample has one.
    pub fn mean(&self) -> Option<f64> {
        if self.samples.is_empty() {
            return None;
        }
        let span: i64 = self.samples.iter().map(|s| s.2.max(0)).sum();
        Some(if span > 0 {
            self.samples
                .iter()
                .map(|s| s.1 * s.2.max(0) as f64)
                .sum::<f64>()
                / span as f64
        } else {
            self.samples.iter().map(|s| s.1).sum::<f64>() / self.samples.len() as f64
        })
    }

    /// Highest sample.
    pub fn peak(&self) -> Option<f64> {
        self.samples.iter().map(|s| s.1).reduce(f64::max)
    }
}

/// User + system CPU of the rows `keep` selects, summed per sample time.
pub fn cpu_series(rows: &[CounterRow], keep: impl Fn(&CounterRow) -> bool) -> CpuSeries {
    let mut by_time: BTreeMap<i64, (f64, i64)> = BTreeMap::new();
    for r in rows
        .iter()
        .filter(|r| (r.counter == name::CPU_USER || r.counter == name::CPU_SYSTEM) && keep(r))
    {
        let e = by_time.entry(r.time_ns).or_default();
        e.0 += r.value;
        e.1 = r.interval_ns;
    }
    CpuSeries {
        samples: by_time.into_iter().map(|(t, (v, i))| (t, v, i)).collect(),
    }
}

/// The CPU of a server: its process's samples, else the samples of a node named like it.
pub fn server_cpu(rows: &[CounterRow], server: Option<&Container>) -> CpuSeries {
    let Some(s) = server else {
        return CpuSeries::default();
    };
    let own = cpu_series(rows, |r| r.process == s.process);
    if !own.samples.is_empty() {
        return own;
    }
    cpu_series(rows, |r| r.process == NODE && r.host == s.host)
}

/// One node's or process's counters, summed up.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CounterSummary {
    /// Host.
    pub host: String,
    /// Container index, -1 for the node.
    pub process: i32,
    /// Samples (of the CPU counters).
    pub samples: u64,
    /// Mean user + system CPU, percent (of all cores for a node, of one core for a process).
    pub cpu_mean_percent: Option<f64>,
    /// Highest user + system CPU, percent.
    pub cpu_peak_percent: Option<f64>,
    /// Mean iowait, percent of all cores (nodes only).
    pub iowait_mean_percent: Option<f64>,
    /// Bytes read from disk over the job.
    pub disk_read_bytes: u64,
    /// Bytes written to disk.
    pub disk_write_bytes: u64,
    /// Bytes received over the network (nodes only).
    pub net_rx_bytes: u64,
    /// Bytes sent over the network (nodes only).
    pub net_tx_bytes: u64,
    /// Highest memory in use, bytes.
    pub mem_peak_bytes: u64,
}

/// Per node and per process, sorted by host then process (nodes first).
pub fn summarize(rows: &[CounterRow]) -> Vec<CounterSummary> {
    let mut groups: BTreeMap<(&str, i32), Vec<&CounterRow>> = BTreeMap::new();
    for r in rows {
        groups
            .entry((r.host.as_str(), r.process))
            .or_default()
            .push(r);
    }
    groups
        .into_iter()
        .map(|((host, process), rs)| {
            let cpu = cpu_series(rows, |r| r.host == host && r.process == process);
            let sum = |n: &str| -> u64 {
                rs.iter()
                    .filter(|r| r.counter == n)
                    .map(|r| r.value.max(0.0))
                    .sum::<f64>() as u64
            };
            let iowait: Vec<f64> = rs
                .iter()
                .filter(|r| r.counter == name::CPU_IOWAIT)
                .map(|r| r.value)
                .collect();
            CounterSummary {
                host: host.to_string(),
                process,
                samples: cpu.samples.len() as u64,
                cpu_mean_percent: cpu.mean(),
                cpu_peak_percent: cpu.peak(),
                iowait_mean_percent: (!iowait.is_empty())
                    .then(|| iowait.iter().sum::<f64>() / iowait.len() as f64),
                disk_read_bytes: sum(name::DISK_READ_BYTES),
                disk_write_bytes: sum(name::DISK_WRITE_BYTES),
                net_rx_bytes: sum(name::NET_RX_BYTES),
                net_tx_bytes: sum(name::NET_TX_BYTES),
                mem_peak_bytes: rs
                    .iter()
                    .filter(|r| r.counter == name::MEM_USED_BYTES)
                    .map(|r| r.value.max(0.0) as u64)
                    .max()
                    .unwrap_or(0),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(host: &str, process: i32, counter: &str, t: i64, v: f64) -> CounterRow {
        CounterRow {
            time_ns: t,
            interval_ns: 100,
            host: host.into(),
            process,
            counter: counter.into(),
            value: v,
        }
    }

    #[test]
    fn summaries_per_node_and_process() {
        let rows = vec![
            row("n1", NODE, name::CPU_USER, 100, 10.0),
            row("n1", NODE, name::CPU_SYSTEM, 100, 5.0),
            row("n1", NODE, name::CPU_USER, 200, 30.0),
            row("n1", NODE, name::CPU_SYSTEM, 200, 15.0),
            row("n1", NODE, name::NET_RX_BYTES, 100, 1000.0),
            row("n1", NODE, name::NET_RX_BYTES, 200, 24.0),
            row("n1", NODE, name::MEM_USED_BYTES, 200, 4096.0),
            row("n1", 0, name::CPU_USER, 100, 99.0),
        ];
        let s = summarize(&rows);
        assert_eq!(s.len(), 2);
        assert_eq!((s[0].process, s[0].samples), (NODE, 2));
        assert_eq!(s[0].cpu_mean_percent, Some(30.0));
        assert_eq!(s[0].cpu_peak_percent, Some(45.0));
        assert_eq!((s[0].net_rx_bytes, s[0].mem_peak_bytes), (1024, 4096));
        assert_eq!((s[1].process, s[1].cpu_peak_percent), (0, Some(99.0)));
    }

    /// A short last interval (a simulated run's) counts for its length: 100 ms at 25 % and
    /// 50 ms at 70 % are 40 % over the 150 ms.
    #[test]
    fn mean_is_weighted_by_interval() {
        let ms = 1_000_000;
        let s = CpuSeries {
            samples: vec![(100 * ms, 25.0, 100 * ms), (150 * ms, 70.0, 50 * ms)],
        };
        assert_eq!(s.mean(), Some(40.0));
        assert_eq!(s.peak(), Some(70.0));
    }
}
