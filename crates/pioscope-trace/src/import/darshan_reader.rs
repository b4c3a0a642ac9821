//! Darshan's reader as a long-lived child process: `darshan_read.py` (PyDarshan over
//! libdarshan-util) is started once and reads log after log, so that `pioscope fleet` pays
//! PyDarshan's start-up (about a second) once per worker instead of once per log. This file
//! owns the process (started on the first log, started again after it died) and the protocol:
//! a log's hex-encoded path on the child's stdin, its JSON lines back on stdout up to an "end"
//! line, gathered into a [`Log`] for darshan.rs to turn into a store.

use std::collections::{BTreeMap, HashMap};
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use serde::Deserialize;

use super::darshan::ImportError;

/// The reader script, run by the Python interpreter given.
const READER: &str = include_str!("darshan_read.py");

/// One line of the reader's output.
#[derive(Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
enum Line {
    Job(JobLine),
    Name { id: u64, path: String },
    Counters(CounterLine),
    Dxt(DxtLine),
    Heatmap(HeatmapLine),
    Skipped { module: String, why: String },
    Stderr { text: String },
    Error { message: String },
    End,
}

/// The job, its modules and mount table (the reader's first line).
#[derive(Deserialize)]
pub(crate) struct JobLine {
    pub(crate) exe: String,
    pub(crate) job: DarshanJob,
    pub(crate) modules: BTreeMap<String, ModuleInfo>,
    pub(crate) mounts: Vec<(String, String)>,
    pub(crate) reader: String,
}

/// Darshan's job record.
#[derive(Deserialize)]
pub(crate) struct DarshanJob {
    #[serde(default)]
    pub(crate) uid: i64,
    #[serde(default)]
    pub(crate) jobid: i64,
    #[serde(default)]
    pub(crate) nprocs: u32,
    #[serde(default)]
    pub(crate) start_time_sec: i64,
    #[serde(default)]
    pub(crate) start_time_nsec: i64,
    #[serde(default)]
    pub(crate) end_time_sec: i64,
    #[serde(default)]
    pub(crate) end_time_nsec: i64,
    #[serde(default)]
    pub(crate) log_ver: String,
    #[serde(default)]
    pub(crate) metadata: BTreeMap<String, String>,
}

/// A module of the log.
#[derive(Deserialize)]
pub(crate) struct ModuleInfo {
    pub(crate) version: u32,
    pub(crate) partial: bool,
    pub(crate) records: u64,
}

/// The counters of one record (of one layout component for LUSTRE).
#[derive(Deserialize)]
pub(crate) struct CounterLine {
    pub(crate) module: String,
    pub(crate) rank: i32,
    pub(crate) id: u64,
    #[serde(default)]
    pub(crate) component: i32,
    pub(crate) counters: BTreeMap<String, Option<f64>>,
    pub(crate) fcounters: BTreeMap<String, Option<f64>>,
}

/// The DXT segments of one record and direction.
#[derive(Deserialize)]
pub(crate) struct DxtLine {
    pub(crate) module: String,
    pub(crate) rank: i32,
    pub(crate) id: u64,
    pub(crate) host: String,
    pub(crate) op: String,
    pub(crate) segments: Vec<(i64, i64, f64, f64)>,
}

/// The HEATMAP bins of one module and rank: bytes read and written per time bin.
#[derive(Deserialize)]
pub(crate) struct HeatmapLine {
    pub(crate) module: String,
    pub(crate) rank: i32,
    pub(crate) bin_width_s: f64,
    pub(crate) read: Vec<i64>,
    pub(crate) write: Vec<i64>,
}

/// Everything read from one log.
#[derive(Default)]
pub(crate) struct Log {
    pub(crate) job: Option<JobLine>,
    pub(crate) names: HashMap<u64, String>,
    pub(crate) counters: Vec<CounterLine>,
    pub(crate) dxt: Vec<DxtLine>,
    pub(crate) heatmaps: Vec<HeatmapLine>,
    pub(crate) skipped: Vec<(String, String)>,
    /// What libdarshan-util complained of on stderr while the log still opened (a damaged
    /// module it skipped).
    pub(crate) complaints: Vec<String>,
}

/// The running child.
struct Running {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    /// The child's last stderr line outside a log (a Python traceback when it died).
    last_stderr: Arc<Mutex<String>>,
    drain: JoinHandle<()>,
}

/// Darshan's reader, started on the first log it is given and kept for the next ones.
pub struct DarshanReader {
    python: String,
    running: Option<Running>,
}

impl DarshanReader {
    /// A reader run by the Python interpreter `python` (not started yet).
    pub fn new(python: &str) -> Self {
        DarshanReader {
            python: python.to_string(),
            running: None,
        }
    }

    /// Reads `log`. A reader that dies on a log (libdarshan-util crashing on a damaged one) is
    /// an error for that log; the next log starts a new one.
    pub(crate) fn read(&mut self, log: &Path) -> Result<Log, ImportError> {
        let running = match self.running.take() {
            Some(r) => r,
            None => self.start()?,
        };
        match Self::exchange(running, log) {
            Ok((parsed, running)) => {
                self.running = Some(running);
                parsed
            }
            Err(e) => Err(e),
        }
    }

    fn start(&self) -> Result<Running, ImportError> {
        let mut child = Command::new(&self.python)
            .arg("-c")
            .arg(READER)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|source| ImportError::Python {
                python: self.python.clone(),
                source,
            })?;
        let (Some(stdin), Some(stdout), Some(mut stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            unreachable!("all three are piped");
        };
        let last_stderr = Arc::new(Mutex::new(String::new()));
        let last = Arc::clone(&last_stderr);
        // Drained beside stdout so that neither blocks; only the last line is kept.
        let drain = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = stderr.read_to_string(&mut text);
            if let Some(line) = text.lines().rev().find(|l| !l.trim().is_empty()) {
                *last.lock().unwrap_or_else(|e| e.into_inner()) = line.to_string();
            }
        });
        Ok(Running {
            child,
            stdin,
            stdout: BufReader::new(stdout),
            last_stderr,
            drain,
        })
    }

    /// Sends `log` and collects its lines up to "end". The outer error means the child is gone
    /// (it died, or spoke out of protocol and was killed); the inner one is the log's own.
    #[allow(clippy::type_complexity)]
    fn exchange(
        mut running: Running,
        log: &Path,
    ) -> Result<(Result<Log, ImportError>, Running), ImportError> {
        let mut request = hex(log.as_os_str().as_bytes());
        request.push('\n');
        if running
            .stdin
            .write_all(request.as_bytes())
            .and_then(|()| running.stdin.flush())
            .is_err()
        {
            return Err(died(running, log));
        }
        let mut parsed = Log::default();
        let mut failure = None;
        let mut text = String::new();
        let mut n = 0usize;
        loop {
            text.clear();
            match running.stdout.read_line(&mut text) {
                Ok(0) | Err(_) => return Err(died(running, log)),
                Ok(_) => n += 1,
            }
            match serde_json::from_str::<Line>(&text) {
                Ok(Line::End) => break,
                Ok(Line::Error { message }) => failure = Some(message),
                Ok(line) => parsed.add(line),
                Err(e) => {
                    let _ = running.child.kill();
                    let _ = died(running, log);
                    return Err(reader_error(
                        log,
                        format!("the Darshan reader wrote an unexpected line {n}: {e}"),
                    ));
                }
            }
        }
        let result = match failure {
            Some(message) => Err(reader_error(log, message)),
            None if parsed.job.is_none() => {
                Err(reader_error(log, "the Darshan reader wrote no job record"))
            }
            None => Ok(parsed),
        };
        Ok((result, running))
    }
}

impl Drop for DarshanReader {
    /// Closes the child's stdin (it ends when it has no more logs) and waits for it.
    fn drop(&mut self) {
        if let Some(Running {
            mut child,
            stdin,
            drain,
            ..
        }) = self.running.take()
        {
            drop(stdin);
            let _ = child.wait();
            let _ = drain.join();
        }
    }
}

/// The error of a log whose reader ended before answering: its exit status and last words.
fn died(running: Running, log: &Path) -> ImportError {
    let Running {
        mut child,
        stdin,
        last_stderr,
        drain,
        ..
    } = running;
    drop(stdin);
    let status = child
        .wait()
        .map_or_else(|e| e.to_string(), |s| s.to_string());
    let _ = drain.join();
    let last = last_stderr
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone();
    let last = if last.is_empty() { "no output" } else { &last };
    reader_error(log, format!("the Darshan reader failed ({status}): {last}"))
}

fn reader_error(log: &Path, message: impl Into<String>) -> ImportError {
    ImportError::Reader {
        path: log.to_path_buf(),
        message: message.into(),
    }
}

/// A path's bytes in hex: the request line holds any path (newlines and non-UTF-8 bytes too).
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl Log {
    fn add(&mut self, line: Line) {
        match line {
            Line::Job(job) => self.job = Some(job),
            Line::Name { id, path } => {
                self.names.insert(id, path);
            }
            Line::Counters(c) => self.counters.push(c),
            Line::Dxt(d) => self.dxt.push(d),
            Line::Heatmap(h) => self.heatmaps.push(h),
            Line::Skipped { module, why } => self.skipped.push((module, why)),
            Line::Stderr { text } => {
                for line in text.lines().filter_map(|l| l.trim().strip_prefix("Error:")) {
                    let line = line.trim().to_string();
                    if !self.complaints.contains(&line) {
                        self.complaints.push(line);
                    }
                }
            }
            Line::Error { .. } | Line::End => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_go_as_hex_whatever_their_bytes() {
        assert_eq!(hex(b"/a b\n\xff"), "2f6120620aff");
    }

    #[test]
    fn float_counters_are_the_reader_s_f64_to_the_last_bit() {
        // H5D_F_CLOSE_START_TIMESTAMP of tests/data/darshan/h5-trace.darshan, as Python writes it.
        let line = r#"{"module":"H5D","rank":-1,"id":1,"counters":{},"fcounters":{"T":1.2498259544372559}}"#;
        let parsed: CounterLine = serde_json::from_str(line).expect("a counter line");
        assert_eq!(parsed.fcounters["T"], Some(1.2498259544372559));
    }
}
