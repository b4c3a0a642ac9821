//! Raw counter files (`*.pcnt`): what the counters sampler (`pioscope sample`, and the sampler
//! thread of `pioscope run`) writes beside the runtime's raw files, and merge reads into
//! counters.parquet. This file owns the format, its writer and its reader (docs/FORMAT.md
//! "Raw counter files").
//!
//! Text, one line per sample of one counter, so a sampler killed mid-line loses one line:
//! ```text
//! pioscope-counters 1
//! host <host name>
//! <CLOCK_MONOTONIC ns> <interval ns> <pid, or -1 for the node> <counter> <value>
//! ```
//! Times are the host's CLOCK_MONOTONIC, the clock the runtime's records are fitted to, so
//! merge puts samples on the events' time base with the host's clock offset.

use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

/// Suffix of a raw counter file.
pub const COUNTER_SUFFIX: &str = ".pcnt";

/// First line of a raw counter file.
const MAGIC: &str = "pioscope-counters 1";

/// One sample of one counter.
#[derive(Clone, Debug, PartialEq)]
pub struct RawSample {
    /// End of the interval, CLOCK_MONOTONIC ns of the sampling host.
    pub mono_ns: i64,
    /// Length of the interval, ns.
    pub interval_ns: i64,
    /// Process id, or -1 for the node.
    pub pid: i64,
    /// Counter name (`store::counters::name`).
    pub counter: String,
    /// Value.
    pub value: f64,
}

/// One raw counter file, read.
#[derive(Clone, Debug, PartialEq)]
pub struct RawCounterFile {
    /// The file.
    pub path: PathBuf,
    /// Host the samples were taken on.
    pub host: String,
    /// Samples in file order.
    pub samples: Vec<RawSample>,
}

/// Writes one raw counter file.
pub struct CounterFileWriter {
    out: BufWriter<File>,
    path: PathBuf,
}

impl CounterFileWriter {
    /// Creates `<dir>/<host>-<pid>.pcnt` (`pid`: the sampler's own).
    pub fn create(dir: &Path, host: &str, pid: u32) -> io::Result<CounterFileWriter> {
        let path = dir.join(format!("{host}-{pid}{COUNTER_SUFFIX}"));
        let mut out = BufWriter::new(File::create(&path)?);
        writeln!(out, "{MAGIC}\nhost {host}")?;
        Ok(CounterFileWriter { out, path })
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one sample (buffered until `flush`).
    pub fn sample(&mut self, s: &RawSample) -> io::Result<()> {
        writeln!(
            self.out,
            "{} {} {} {} {}",
            s.mono_ns, s.interval_ns, s.pid, s.counter, s.value
        )
    }

    /// Writes what is buffered (once per sampling round).
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// Reads one raw counter file; a line that does not parse (a sampler killed while writing
/// it) is skipped. An error for a file that is not a raw counter file.
pub fn read_counter_file(path: &Path) -> io::Result<RawCounterFile> {
    let text = fs::read_to_string(path)?;
    let mut lines = text.lines();
    let bad = |what: &str| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{}: not a raw counter file ({what})", path.display()),
        )
    };
    if lines.next() != Some(MAGIC) {
        return Err(bad("first line is not \"pioscope-counters 1\""));
    }
    let host = lines
        .next()
        .and_then(|l| l.strip_prefix("host "))
        .ok_or_else(|| bad("second line is not \"host NAME\""))?
        .to_string();
    let samples = lines.filter_map(parse_sample).collect();
    Ok(RawCounterFile {
        path: path.to_path_buf(),
        host,
        samples,
    })
}

fn parse_sample(line: &str) -> Option<RawSample> {
    let mut f = line.split(' ');
    let s = RawSample {
        mono_ns: f.next()?.parse().ok()?,
        interval_ns: f.next()?.parse().ok()?,
        pid: f.next()?.parse().ok()?,
        counter: f.next()?.to_string(),
        value: f.next()?.parse().ok()?,
    };
    (f.next().is_none() && s.value.is_finite()).then_some(s)
}

/// Every raw counter file of `dir`, sorted by name (none is no error: sampling may be off).
pub fn read_counter_dir(dir: &Path) -> io::Result<Vec<RawCounterFile>> {
    let mut paths: Vec<PathBuf> = fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.is_file()
                && p.file_name()
                    .is_some_and(|n| n.to_string_lossy().ends_with(COUNTER_SUFFIX))
        })
        .collect();
    paths.sort();
    paths.iter().map(|p| read_counter_file(p)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_samples_read_back_and_a_torn_line_is_skipped() {
        let dir = tempfile::tempdir().expect("tmp");
        let mut w = CounterFileWriter::create(dir.path(), "n1", 42).expect("create");
        let s = RawSample {
            mono_ns: 1_000,
            interval_ns: 100,
            pid: -1,
            counter: "cpu_user_pct".into(),
            value: 12.5,
        };
        w.sample(&s).expect("sample");
        w.sample(&RawSample {
            pid: 7,
            ..s.clone()
        })
        .expect("sample");
        w.flush().expect("flush");
        let path = w.path().to_path_buf();
        drop(w);
        let mut f = fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .expect("open");
        f.write_all(b"2000 100 7 cpu_us").expect("torn line");
        let read = read_counter_dir(dir.path()).expect("read");
        assert_eq!(read.len(), 1);
        assert_eq!(read[0].host, "n1");
        assert_eq!(read[0].samples, vec![s.clone(), RawSample { pid: 7, ..s }]);
        fs::write(dir.path().join("x.pcnt"), "hello\n").expect("write");
        assert!(read_counter_dir(dir.path()).is_err());
    }
}
