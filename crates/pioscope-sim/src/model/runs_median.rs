//! Several calibrations of one machine folded into one set of measurements, each the median
//! of its runs (`pioscope calibrate --from-runs A B C`). On a shared machine one calibration's
//! rates move by tens of percent from run to run; the fit of the medians follows what the
//! machine usually does, not one run's luck. docs/MODEL.md, "Calibration".

use std::cmp::Ordering;
use std::collections::BTreeMap;

use crate::model::calibrate::{
    ExchangePoint, IoRun, Machine, Measurements, MetaRun, NetRuns, StorageRuns,
};
use crate::model::daemon_cpu::DaemonCpu;

/// Why runs cannot be folded: they are not calibrations of the same benchmarks.
#[derive(Debug, thiserror::Error)]
pub enum MedianError {
    /// No runs at all.
    #[error("no runs to take the median of")]
    Empty,
    /// A measurement one run has and another lacks (a --quick run beside a full one, other -n).
    #[error("run {run} has no {what} that run 1 has: the runs are not of the same calibration (--quick, -n and the file system must match)")]
    Missing {
        /// 1-based position of the run that lacks it.
        run: usize,
        /// The measurement, as the fit table names it.
        what: String,
    },
    /// A fact that must agree between the runs does not.
    #[error("run {run} differs from run 1 in {what}: the runs are not of the same calibration")]
    Differs {
        /// 1-based position of the run.
        run: usize,
        /// The fact.
        what: &'static str,
    },
}

/// The median of each measurement over `runs` (the middle value; of an even count the faster of
/// the middle two). A data or metadata run is taken whole from the run whose time is the
/// median, so its rate and its time per request stay one measurement. Facts of the machine
/// that the fit reads as they are (CPUs, ranks, FUSE) must agree; its memory is the median, the
/// rest (host, date, directory) is the first run's.
pub fn median(runs: &[Measurements]) -> Result<Measurements, MedianError> {
    let first = runs.first().ok_or(MedianError::Empty)?;
    for (i, r) in runs.iter().enumerate().skip(1) {
        let run = i + 1;
        let same = |what, ok: bool| {
            if ok {
                Ok(())
            } else {
                Err(MedianError::Differs { run, what })
            }
        };
        same("same_node", r.net.same_node == first.net.same_node)?;
        same(
            "the ranks of the synchronizations",
            r.net.ranks == first.net.ranks,
        )?;
        same("O_DIRECT", r.storage.direct == first.storage.direct)?;
        same("the CPUs", r.machine.cpus == first.machine.cpus)?;
        same("the ranks", r.machine.ranks == first.machine.ranks)?;
        same("FUSE", r.machine.fuse == first.machine.fuse)?;
        same(
            "the daemons' CPU being measured",
            r.machine.daemon_cpu.is_some() == first.machine.daemon_cpu.is_some(),
        )?;
    }
    Ok(Measurements {
        net: NetRuns {
            same_node: first.net.same_node,
            points: keyed(
                runs,
                |m| &m.net.points,
                |p| p.size,
                |p| format!("ping-pong {} B", p.size),
                |p| p.one_way_s,
            )?,
            ranks: first.net.ranks,
            barrier_s: optional(runs.iter().map(|m| m.net.barrier_s)),
            alltoall_s: optional(runs.iter().map(|m| m.net.alltoall_s)),
            exchange: keyed(
                runs,
                |m| &m.net.exchange,
                |e: &ExchangePoint| (e.bytes, e.pieces),
                |e| format!("exchange cycle of {} B in {} pieces", e.bytes, e.pieces),
                |e| e.s,
            )?,
            fresh_memory_bytes_per_s: optional(runs.iter().map(|m| m.net.fresh_memory_bytes_per_s)),
        },
        storage: StorageRuns {
            direct: first.storage.direct,
            runs: keyed(
                runs,
                |m| &m.storage.runs,
                |r: &IoRun| (r.mode.clone(), r.pattern.clone(), r.concurrency, r.size),
                |r| {
                    format!(
                        "{} {} of {} B x{}",
                        r.mode, r.pattern, r.size, r.concurrency
                    )
                },
                |r| r.per_request_s,
            )?,
            metadata: keyed(
                runs,
                |m| &m.storage.metadata,
                |r: &MetaRun| (r.op.clone(), r.concurrency),
                |r| format!("{} x{}", r.op, r.concurrency),
                |r| r.per_op_s,
            )?,
        },
        machine: Machine {
            mem_available: middle_by(
                runs.iter().map(|m| m.machine.mem_available).collect(),
                |a, b| a.cmp(b),
            ),
            daemon_cpu: daemon_cpu(runs),
            ..first.machine.clone()
        },
    })
}

/// Per key of the first run's rows, the row whose `time` is the median over the runs.
fn keyed<T: Clone, K: Ord>(
    runs: &[Measurements],
    rows: impl Fn(&Measurements) -> &Vec<T>,
    key: impl Fn(&T) -> K,
    name: impl Fn(&T) -> String,
    time: impl Fn(&T) -> f64,
) -> Result<Vec<T>, MedianError> {
    let indexed: Vec<BTreeMap<K, &T>> = runs
        .iter()
        .map(|m| rows(m).iter().map(|t| (key(t), t)).collect())
        .collect();
    rows(&runs[0])
        .iter()
        .map(|row| {
            let k = key(row);
            let found = indexed
                .iter()
                .enumerate()
                .map(|(i, by_key)| {
                    by_key.get(&k).copied().ok_or_else(|| MedianError::Missing {
                        run: i + 1,
                        what: name(row),
                    })
                })
                .collect::<Result<Vec<&T>, _>>()?;
            Ok(middle_by(found, |a, b| time(a).total_cmp(&time(b))).clone())
        })
        .collect()
}

/// The median of the values present (None when no run has one).
fn optional(values: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    let present: Vec<f64> = values.flatten().collect();
    (!present.is_empty()).then(|| middle_by(present, f64::total_cmp))
}

/// The daemons' CPU costs, each the median over the runs (present in all or in none).
fn daemon_cpu(runs: &[Measurements]) -> Option<DaemonCpu> {
    let all: Vec<&DaemonCpu> = runs
        .iter()
        .filter_map(|m| m.machine.daemon_cpu.as_ref())
        .collect();
    let first = all.first()?;
    let field =
        |f: fn(&DaemonCpu) -> f64| middle_by(all.iter().map(|d| f(d)).collect(), f64::total_cmp);
    Some(DaemonCpu {
        client_per_request_s: field(|d| d.client_per_request_s),
        client_per_byte_s: field(|d| d.client_per_byte_s),
        servers: first.servers,
        server_per_request_s: field(|d| d.server_per_request_s),
        server_per_byte_s: field(|d| d.server_per_byte_s),
    })
}

/// The middle element in `order` (of an even count the lower of the middle two). Not empty.
fn middle_by<T>(mut values: Vec<T>, order: impl Fn(&T, &T) -> Ordering) -> T {
    values.sort_by(&order);
    values.swap_remove((values.len() - 1) / 2)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::calibrate::NetPoint;

    fn io(size: u64, per_request_s: f64) -> IoRun {
        IoRun {
            mode: "write-cached".into(),
            pattern: "sequential".into(),
            concurrency: 2,
            size,
            requests: 8,
            per_request_s,
            bytes_per_s: 2.0 * size as f64 / per_request_s,
        }
    }

    fn runs(one_way_s: f64, writes: Vec<IoRun>, mem: u64) -> Measurements {
        Measurements {
            net: NetRuns {
                same_node: true,
                points: vec![NetPoint { size: 1, one_way_s }],
                ranks: 4,
                barrier_s: Some(one_way_s + 1.0),
                alltoall_s: None,
                exchange: vec![],
                fresh_memory_bytes_per_s: None,
            },
            storage: StorageRuns {
                direct: true,
                runs: writes,
                metadata: vec![MetaRun {
                    op: "create".into(),
                    concurrency: 1,
                    per_op_s: one_way_s,
                    ops_per_s: 1.0 / one_way_s,
                }],
            },
            machine: Machine {
                mem_available: mem,
                ranks: 4,
                cpus: 2,
                ..Machine::default()
            },
        }
    }

    /// Three runs: each measurement is the middle one, a data run is taken whole from the run
    /// whose time is the median (its rate with it), rows keep the first run's order.
    #[test]
    fn each_measurement_is_the_median_of_the_runs() {
        let m = median(&[
            runs(3e-6, vec![io(4096, 4e-6), io(65536, 30e-6)], 300),
            runs(1e-6, vec![io(65536, 10e-6), io(4096, 6e-6)], 100),
            runs(2e-6, vec![io(4096, 5e-6), io(65536, 20e-6)], 200),
        ])
        .unwrap();
        assert_eq!(m.net.points[0].one_way_s, 2e-6);
        assert_eq!(m.net.barrier_s, Some(2e-6 + 1.0));
        assert_eq!(m.net.alltoall_s, None);
        assert_eq!(m.storage.metadata[0].per_op_s, 2e-6);
        let sizes: Vec<u64> = m.storage.runs.iter().map(|r| r.size).collect();
        assert_eq!(sizes, [4096, 65536]);
        assert_eq!(m.storage.runs[0].per_request_s, 5e-6);
        assert_eq!(m.storage.runs[0].bytes_per_s, 2.0 * 4096.0 / 5e-6);
        assert_eq!(m.storage.runs[1].per_request_s, 20e-6);
        assert_eq!(m.machine.mem_available, 200);
    }

    /// Of two runs, the faster of the middle two.
    #[test]
    fn of_an_even_count_the_faster_middle_one() {
        let m = median(&[runs(3e-6, vec![], 1), runs(1e-6, vec![], 2)]).unwrap();
        assert_eq!(m.net.points[0].one_way_s, 1e-6);
    }

    /// Runs of different calibrations are refused, naming the run and the measurement.
    #[test]
    fn runs_of_different_calibrations_are_refused() {
        let err =
            median(&[runs(1e-6, vec![io(4096, 4e-6)], 1), runs(1e-6, vec![], 1)]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "run 2 has no write-cached sequential of 4096 B x2 that run 1 has: the runs are not \
             of the same calibration (--quick, -n and the file system must match)"
        );
        let mut other = runs(1e-6, vec![], 1);
        other.machine.fuse = true;
        let err = median(&[runs(1e-6, vec![], 1), other]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "run 2 differs from run 1 in FUSE: the runs are not of the same calibration"
        );
        assert!(matches!(median(&[]), Err(MedianError::Empty)));
    }
}
