//! The simulated servers' CPU as counters.parquet rows: the CPU spans the engine reports,
//! summed over the sampling intervals of `pioscope run`'s sampler at its default 10 Hz, so the
//! server table and the report read a simulated server's CPU as they read a real one's.
//!
//! A request's own CPU time is the daemon's (`cpu_user_pct`), a memory copy the kernel's
//! (`cpu_system_pct`); both in percent of one core, over the interval that ends at the sample.

use pioscope_trace::store::counters::name;
use pioscope_trace::store::CounterRow;

use crate::program::{CpuActivity, CpuWork};

/// Sampling interval, ns: the sampler's default 10 Hz.
pub const SAMPLE_INTERVAL_NS: u64 = 100_000_000;

/// CPU busy time per server and interval: [request ns, copy ns].
#[derive(Clone, Debug, Default)]
pub struct ServerCpuSamples {
    busy: Vec<Vec<[u64; 2]>>,
}

impl ServerCpuSamples {
    /// Adds one span, split over the intervals it covers.
    pub fn add(&mut self, a: &CpuActivity) {
        let s = a.server as usize;
        if self.busy.len() <= s {
            self.busy.resize(s + 1, Vec::new());
        }
        let bins = &mut self.busy[s];
        let slot = match a.work {
            CpuWork::Request => 0,
            CpuWork::Copy => 1,
        };
        let mut t = a.start_ns;
        while t < a.end_ns {
            let bin = (t / SAMPLE_INTERVAL_NS) as usize;
            let bin_end = (bin as u64 + 1) * SAMPLE_INTERVAL_NS;
            let until = a.end_ns.min(bin_end);
            if bins.len() <= bin {
                bins.resize(bin + 1, [0, 0]);
            }
            bins[bin][slot] += until - t;
            t = until;
        }
    }

    /// The rows of `servers` servers over a job of `end_ns`: every interval of every server
    /// (idle ones too, as a sampler reports them), the last one ending at `end_ns`; server `s`
    /// is container `process(s)` on host `host(s)`.
    pub fn rows(
        &self,
        servers: u32,
        end_ns: u64,
        process: impl Fn(u32) -> u32,
        host: impl Fn(u32) -> String,
    ) -> Vec<CounterRow> {
        let intervals = end_ns.div_ceil(SAMPLE_INTERVAL_NS);
        let mut rows = Vec::new();
        for s in 0..servers {
            let bins = self.busy.get(s as usize).map_or(&[][..], |b| b.as_slice());
            for k in 0..intervals {
                let start = k * SAMPLE_INTERVAL_NS;
                let end = end_ns.min(start + SAMPLE_INTERVAL_NS);
                let busy = bins.get(k as usize).copied().unwrap_or([0, 0]);
                for (counter, ns) in [(name::CPU_USER, busy[0]), (name::CPU_SYSTEM, busy[1])] {
                    rows.push(CounterRow {
                        time_ns: end as i64,
                        interval_ns: (end - start) as i64,
                        host: host(s),
                        process: process(s) as i32,
                        counter: counter.to_string(),
                        value: ns as f64 / (end - start) as f64 * 100.0,
                    });
                }
            }
        }
        rows
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(server: u32, work: CpuWork, start_ns: u64, end_ns: u64) -> CpuActivity {
        CpuActivity {
            server,
            work,
            start_ns,
            end_ns,
        }
    }

    /// A 50 ms request across the first interval's end, a 10 ms copy in the second; the job
    /// ends at 150 ms, so the second interval is 50 ms long.
    #[test]
    fn spans_split_over_intervals() {
        let ms: u64 = 1_000_000;
        let mut c = ServerCpuSamples::default();
        c.add(&span(1, CpuWork::Request, 75 * ms, 125 * ms));
        c.add(&span(1, CpuWork::Copy, 130 * ms, 140 * ms));
        let rows = c.rows(2, 150 * ms, |s| 4 + s, |s| format!("server-{s}"));
        let got: Vec<(&str, i32, &str, u64, u64, f64)> = rows
            .iter()
            .map(|r| {
                (
                    r.host.as_str(),
                    r.process,
                    r.counter.as_str(),
                    r.time_ns as u64,
                    r.interval_ns as u64,
                    r.value,
                )
            })
            .collect();
        let (u, s) = (name::CPU_USER, name::CPU_SYSTEM);
        assert_eq!(
            got,
            vec![
                ("server-0", 4, u, 100 * ms, 100 * ms, 0.0),
                ("server-0", 4, s, 100 * ms, 100 * ms, 0.0),
                ("server-0", 4, u, 150 * ms, 50 * ms, 0.0),
                ("server-0", 4, s, 150 * ms, 50 * ms, 0.0),
                ("server-1", 5, u, 100 * ms, 100 * ms, 25.0),
                ("server-1", 5, s, 100 * ms, 100 * ms, 0.0),
                ("server-1", 5, u, 150 * ms, 50 * ms, 50.0),
                ("server-1", 5, s, 150 * ms, 50 * ms, 20.0),
            ]
        );
    }
}
