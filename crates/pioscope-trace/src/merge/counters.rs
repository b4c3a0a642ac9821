//! The sampler's counter files of a raw directory, put on the trace's time base: a sample's
//! CLOCK_MONOTONIC time plus its host's offset to the reference clock (the offset model of a
//! traced process on that host), minus the job start; its pid becomes the container of the
//! traced process with that pid on that host. Samples of processes that were not traced (the
//! launcher, MPI's proxies) and samples outside the job are left out.

use std::path::Path;

use crate::raw::counters::{read_counter_dir, RawCounterFile};
use crate::store::counters::{CounterRow, NODE};

use super::clock::OffsetModel;

/// What the counters need of one traced process.
#[derive(Clone, Copy, Debug)]
pub struct ProcessClock<'a> {
    /// Its host.
    pub host: &'a str,
    /// Its pid.
    pub pid: u32,
    /// Its container index.
    pub process: i32,
    /// Its clock offset to the reference.
    pub offset: OffsetModel,
}

/// The counters of every raw counter file in `dir` on the trace's clock (`job_start`:
/// reference ns of time 0; `end_ns`: the job's end, trace time). A file that cannot be read
/// is skipped with a note.
pub fn read(
    dir: &Path,
    processes: &[ProcessClock<'_>],
    job_start: i64,
    end_ns: i64,
    notes: &mut Vec<String>,
) -> Vec<CounterRow> {
    match read_counter_dir(dir) {
        Ok(files) => files
            .iter()
            .flat_map(|f| on_trace_clock(f, processes, job_start, end_ns))
            .collect(),
        Err(e) => {
            notes.push(format!("counter files of {} skipped: {e}", dir.display()));
            Vec::new()
        }
    }
}

/// The rows of one file.
pub fn on_trace_clock(
    file: &RawCounterFile,
    processes: &[ProcessClock<'_>],
    job_start: i64,
    end_ns: i64,
) -> Vec<CounterRow> {
    let on_host: Vec<&ProcessClock<'_>> =
        processes.iter().filter(|p| p.host == file.host).collect();
    // A host without a traced process has no measured offset: its clock is taken as the
    // reference's (true on one host, the common case for servers started beside the job).
    let offset = on_host.first().map_or(OffsetModel::NONE, |p| p.offset);
    file.samples
        .iter()
        .filter_map(|s| {
            let process = if s.pid < 0 {
                NODE
            } else {
                on_host.iter().find(|p| i64::from(p.pid) == s.pid)?.process
            };
            let time_ns = s.mono_ns + offset.offset_at(s.mono_ns) - job_start;
            (time_ns >= 0 && time_ns - s.interval_ns <= end_ns).then(|| CounterRow {
                time_ns,
                interval_ns: s.interval_ns,
                host: file.host.clone(),
                process,
                counter: s.counter.clone(),
                value: s.value,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::raw::counters::RawSample;

    #[test]
    fn samples_move_to_the_trace_clock_and_untraced_pids_drop() {
        let sample = |mono_ns, pid| RawSample {
            mono_ns,
            interval_ns: 100,
            pid,
            counter: "cpu_user_pct".into(),
            value: 50.0,
        };
        let file = RawCounterFile {
            path: "n1-1.pcnt".into(),
            host: "n1".into(),
            samples: vec![
                sample(900, -1),
                sample(1_500, -1),
                sample(1_500, 77),
                sample(1_500, 99),
                sample(9_000, -1),
            ],
        };
        let procs = [ProcessClock {
            host: "n1",
            pid: 77,
            process: 3,
            offset: OffsetModel::NONE,
        }];
        let rows = on_trace_clock(&file, &procs, 1_000, 2_000);
        let got: Vec<(i64, i32)> = rows.iter().map(|r| (r.time_ns, r.process)).collect();
        assert_eq!(got, vec![(500, NODE), (500, 3)]);
    }
}
