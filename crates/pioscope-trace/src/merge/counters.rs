//! The sampler's counter files of a raw directory, put on the trace's time base: a sample's
//! CLOCK_MONOTONIC time plus its host's offset to the reference clock (the offset model of a
//! traced process on that host), minus the job start; its pid becomes the container of the
//! traced process with that pid on that host. Samples of processes that were not traced (the
//! launcher, MPI's proxies) and samples outside the job are left out.

use std::collections::HashSet;
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

/// The counters of the job's raw directory and, with `servers_dir`, of the servers' samplers:
/// their processes' samples, and their node samples only for hosts the job's sampler did not
/// sample (one series per node, not two overlaid).
pub fn read_job_and_servers(
    raw_dir: &Path,
    servers_dir: Option<&Path>,
    processes: &[ProcessClock<'_>],
    job_start: i64,
    end_ns: i64,
    notes: &mut Vec<String>,
) -> Vec<CounterRow> {
    let mut rows = read(raw_dir, processes, job_start, end_ns, notes);
    if let Some(dir) = servers_dir {
        let sampled_nodes: HashSet<String> = rows
            .iter()
            .filter(|r| r.process == NODE)
            .map(|r| r.host.clone())
            .collect();
        rows.extend(
            read(dir, processes, job_start, end_ns, notes)
                .into_iter()
                .filter(|r| r.process != NODE || !sampled_nodes.contains(&r.host)),
        );
    }
    rows
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

    /// The servers' sampler adds its processes' samples; its node samples only for a host the
    /// job's sampler did not cover.
    #[test]
    fn servers_samplers_add_their_processes_and_only_unsampled_nodes() {
        let dir = tempfile::tempdir().expect("tmp");
        let (job, servers) = (dir.path().join("job"), dir.path().join("servers"));
        for d in [&job, &servers] {
            std::fs::create_dir(d).expect("mkdir");
        }
        let file = |host: &str, lines: &[&str]| {
            format!("pioscope-counters 1\nhost {host}\n{}\n", lines.join("\n"))
        };
        std::fs::write(
            job.join("n1-10.pcnt"),
            file(
                "n1",
                &["1000 100 -1 cpu_user_pct 5", "1000 100 77 cpu_user_pct 50"],
            ),
        )
        .expect("write");
        std::fs::write(
            servers.join("n1-20.pcnt"),
            file(
                "n1",
                &["1000 100 -1 cpu_user_pct 6", "1000 100 88 cpu_user_pct 90"],
            ),
        )
        .expect("write");
        std::fs::write(
            servers.join("n2-30.pcnt"),
            file("n2", &["1000 100 -1 cpu_user_pct 7"]),
        )
        .expect("write");
        let procs = [
            ProcessClock {
                host: "n1",
                pid: 77,
                process: 0,
                offset: OffsetModel::NONE,
            },
            ProcessClock {
                host: "n1",
                pid: 88,
                process: 4,
                offset: OffsetModel::NONE,
            },
        ];
        let mut notes = Vec::new();
        let mut rows: Vec<(String, i32, f64)> =
            read_job_and_servers(&job, Some(&servers), &procs, 0, 10_000, &mut notes)
                .into_iter()
                .map(|r| (r.host, r.process, r.value))
                .collect();
        rows.sort_by(|a, b| a.partial_cmp(b).expect("no NaN"));
        assert_eq!(
            rows,
            [
                ("n1".to_string(), NODE, 5.0),
                ("n1".to_string(), 0, 50.0),
                ("n1".to_string(), 4, 90.0),
                ("n2".to_string(), NODE, 7.0),
            ]
        );
        assert!(notes.is_empty(), "{notes:?}");
    }

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
