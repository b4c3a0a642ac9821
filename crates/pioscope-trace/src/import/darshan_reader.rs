//! Darshan's reader as a long-lived child process: `darshan_read.py` (PyDarshan over
//! libdarshan-util) is started once and reads log after log, so that `pioscope fleet` pays
//! PyDarshan's start-up (about a second) once per worker instead of once per log. This file
//! owns the process (started on the first log, started again after it died or hung) and the
//! protocol: a log's hex-encoded path on the child's stdin, its JSON lines back on stdout up to
//! an "end" line, gathered into a [`Log`] for darshan.rs to turn into a store.

use std::collections::{BTreeMap, HashMap};
use std::io::{self, BufRead, BufReader, Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

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

/// How long the reader may stay silent on a log before it is taken for hung and stopped: PyDarshan
/// reads the whole log before its first line (about 30 s for a million DXT segments here), so
/// ten minutes of silence is no log's reading.
const SILENCE: Duration = Duration::from_secs(600);

/// Lines of the reader's stdout read ahead of the worker: bounded, so a fast reader waits for
/// a slow worker rather than fill memory.
const LINES_AHEAD: usize = 256;

/// The running child.
struct Running {
    child: Child,
    stdin: ChildStdin,
    /// The child's stdout line by line, read by `reading` so that the worker waits on it with
    /// a limit.
    lines: Receiver<io::Result<String>>,
    reading: JoinHandle<()>,
    /// The child's last stderr line outside a log (a Python traceback when it died).
    last_stderr: Arc<Mutex<String>>,
    drain: JoinHandle<()>,
}

/// Darshan's reader, started on the first log it is given and kept for the next ones.
pub struct DarshanReader {
    python: String,
    running: Option<Running>,
    /// [`SILENCE`], shorter in the tests.
    silence: Duration,
}

impl DarshanReader {
    /// A reader run by the Python interpreter `python` (not started yet).
    pub fn new(python: &str) -> Self {
        DarshanReader {
            python: python.to_string(),
            running: None,
            silence: SILENCE,
        }
    }

    /// Reads `log`. A reader that dies on a log (libdarshan-util crashing on a damaged one), or
    /// stays silent on it longer than [`SILENCE`], is an error for that log; the next log
    /// starts a new one.
    pub(crate) fn read(&mut self, log: &Path) -> Result<Log, ImportError> {
        let running = match self.running.take() {
            Some(r) => r,
            None => self.start()?,
        };
        match Self::exchange(running, log, self.silence) {
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
        let (sender, lines) = mpsc::sync_channel(LINES_AHEAD);
        let reading = std::thread::spawn(move || {
            let mut stdout = BufReader::new(stdout);
            // Ends at the child's end of stdout, or when the worker no longer listens.
            loop {
                let mut line = String::new();
                match stdout.read_line(&mut line) {
                    Ok(0) => break,
                    Ok(_) => {
                        if sender.send(Ok(line)).is_err() {
                            break;
                        }
                    }
                    Err(e) => {
                        let _ = sender.send(Err(e));
                        break;
                    }
                }
            }
        });
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
            lines,
            reading,
            last_stderr,
            drain,
        })
    }

    /// Sends `log` and collects its lines up to "end". The outer error means the child is gone
    /// (it died, spoke out of protocol or stayed silent longer than `silence`, and was
    /// stopped); the inner one is the log's own.
    #[allow(clippy::type_complexity)]
    fn exchange(
        mut running: Running,
        log: &Path,
        silence: Duration,
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
        let mut n = 0usize;
        loop {
            let text = match running.lines.recv_timeout(silence) {
                Ok(Ok(text)) => text,
                Ok(Err(e)) => {
                    return Err(stopped(
                        running,
                        log,
                        format!("its output is unreadable: {e}"),
                    ))
                }
                Err(RecvTimeoutError::Disconnected) => return Err(died(running, log)),
                Err(RecvTimeoutError::Timeout) => {
                    let why = format!(
                        "it said nothing for {} s while reading this log",
                        silence.as_secs_f64()
                    );
                    return Err(stopped(running, log, why));
                }
            };
            n += 1;
            match serde_json::from_str::<Line>(&text) {
                Ok(Line::End) => break,
                Ok(Line::Error { message }) => failure = Some(message),
                Ok(line) => parsed.add(line),
                Err(e) => {
                    let why = format!("it wrote an unexpected line {n}: {e}");
                    return Err(stopped(running, log, why));
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
        if let Some(running) = self.running.take() {
            end(running);
        }
    }
}

/// Waits for the child, its stdin closed and its stdout no longer listened to (a child still
/// writing then gets a broken pipe rather than waiting on a full one); its exit status and
/// last stderr line.
fn end(running: Running) -> (String, String) {
    let Running {
        mut child,
        stdin,
        lines,
        reading,
        last_stderr,
        drain,
    } = running;
    drop(stdin);
    drop(lines);
    let status = child
        .wait()
        .map_or_else(|e| e.to_string(), |s| s.to_string());
    let _ = reading.join();
    let _ = drain.join();
    let last = last_stderr
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone();
    (status, last)
}

/// The error of a log whose reader ended before answering: its exit status and last words.
fn died(running: Running, log: &Path) -> ImportError {
    let (status, last) = end(running);
    let last = if last.is_empty() { "no output" } else { &last };
    reader_error(log, format!("the Darshan reader failed ({status}): {last}"))
}

/// The error of a log whose reader had to be stopped, and why.
fn stopped(mut running: Running, log: &Path, why: String) -> ImportError {
    let _ = running.child.kill();
    end(running);
    reader_error(log, format!("the Darshan reader was stopped: {why}"))
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

    /// A reader whose "interpreter" is the shell script `body` (it ignores the reader's
    /// arguments), in `dir`.
    fn scripted(dir: &Path, body: &str) -> DarshanReader {
        let script = dir.join("python");
        crate::test_script::write_shell_script(&script, body);
        DarshanReader::new(&script.to_string_lossy())
    }

    fn message(result: Result<Log, ImportError>) -> String {
        match result {
            Err(ImportError::Reader { path, message }) => format!("{}: {message}", path.display()),
            Err(e) => panic!("another error: {e}"),
            Ok(_) => panic!("read"),
        }
    }

    #[test]
    fn a_silent_reader_is_stopped_with_an_error_naming_the_log() {
        let dir = tempfile::tempdir().expect("tempdir");
        // Takes the request and never answers, as the reader did when it hung on cffi's lock.
        let mut reader = scripted(dir.path(), "read line; exec sleep 600");
        reader.silence = Duration::from_millis(300);
        let got = message(reader.read(Path::new("/logs/hung.darshan")));
        assert_eq!(
            got,
            "/logs/hung.darshan: the Darshan reader was stopped: it said nothing for 0.3 s \
             while reading this log"
        );
        // The next log starts a new reader.
        assert!(reader.running.is_none());
    }

    #[test]
    fn a_reader_that_dies_mid_log_is_an_error_with_its_status_and_last_words() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut reader = scripted(
            dir.path(),
            r#"read line; echo '{"kind":"name","id":1,"path":"/a"}'; echo 'Segmentation fault' >&2; exit 3"#,
        );
        let got = message(reader.read(Path::new("/logs/crash.darshan")));
        assert_eq!(
            got,
            "/logs/crash.darshan: the Darshan reader failed (exit status: 3): Segmentation fault"
        );
    }

    #[test]
    fn a_reader_that_floods_stderr_and_stdout_still_answers() {
        let dir = tempfile::tempdir().expect("tempdir");
        // 4 MiB on stderr and 20,000 lines on stdout, far more than a pipe holds, before "end".
        let mut reader = scripted(
            dir.path(),
            r#"while read line; do
  head -c 4194304 /dev/zero | tr '\0' x >&2
  echo '{"kind":"job","exe":"e","job":{},"modules":{},"mounts":[],"reader":"r"}'
  i=0; while [ $i -lt 20000 ]; do echo '{"kind":"name","id":'$i',"path":"/f"}'; i=$((i+1)); done
  echo '{"kind":"end"}'
done"#,
        );
        for _ in 0..2 {
            let log = reader.read(Path::new("/logs/loud.darshan")).expect("read");
            assert_eq!(log.names.len(), 20000);
        }
    }

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
