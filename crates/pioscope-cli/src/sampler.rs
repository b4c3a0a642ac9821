//! The counters sampler: every interval it reads the node's CPU (/proc/stat), disks
//! (/proc/diskstats), network (/proc/net/dev) and memory (/proc/meminfo), and the CPU, storage
//! bytes and resident memory of the sampled processes (/proc/PID/stat, io, statm), and writes
//! them to a raw counter file (`pioscope_trace::raw::counters`) that merge turns into
//! counters.parquet. `pioscope sample` runs it in the foreground; `pioscope run` in a thread.
//!
//! Rates are written as the amount over the interval since the previous round, so the first
//! round only takes the baselines. Times are CLOCK_MONOTONIC, the clock merge fits the
//! runtime's records to.
//!
//! Cost (bench/perf/sampler_cost.py): the process list is a scan of every /proc/PID/stat, the
//! dearest step, so it is redone at most once a second (`RESCAN_NS`; a process started in
//! between is sampled from the next scan on, its CPU counted from its start and spread over
//! its life so far); the known
//! processes and the node are read every round. The whole disks are listed once.

use std::collections::HashMap;
use std::fs;
use std::io;
use std::path::Path;
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::Duration;

use pioscope_trace::raw::counters::{CounterFileWriter, RawSample};
use pioscope_trace::store::counters::name;

/// Which processes are sampled besides the node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Targets {
    /// This pid and every descendant of it (a traced job: the program, or the launcher and
    /// its children and theirs).
    Descendants(u32),
    /// These pids.
    Pids(Vec<u32>),
    /// Processes whose name (/proc/PID/comm, or the base name of argv[0]) is this.
    Named(String),
}

/// CPU jiffies of the node: (user + nice, system + irq + softirq, iowait, total).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct NodeCpu {
    user: u64,
    system: u64,
    iowait: u64,
    total: u64,
}

/// Monotonic totals of the node.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct NodeTotals {
    cpu: NodeCpu,
    disk: [u64; 4],
    net: [u64; 2],
}

/// Monotonic totals of a process: (utime, stime) ticks, (read, write) storage bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct ProcTotals {
    utime: u64,
    stime: u64,
    read: u64,
    write: u64,
    /// When the process started, clock ticks since boot (CLOCK_BOOTTIME).
    start_ticks: u64,
}

/// How often the process list is scanned again, ns.
const RESCAN_NS: i64 = 1_000_000_000;

/// The sampler's state between rounds.
pub struct Sampler {
    targets: Targets,
    /// The processes found by the last scan, and when it ran (CLOCK_MONOTONIC ns).
    found: Vec<u32>,
    scanned: Option<i64>,
    /// Names of the whole disks (under /sys/block; loop and RAM disks left out).
    disks: Vec<String>,
    out: CounterFileWriter,
    ticks_per_sec: f64,
    page_bytes: f64,
    last: Option<(i64, NodeTotals)>,
    procs: HashMap<u32, ProcTotals>,
}

/// The default sampling interval (10 Hz), as the command line writes it.
pub const DEFAULT_INTERVAL: &str = "100ms";
/// The same, as a duration.
pub const DEFAULT_PERIOD: Duration = Duration::from_millis(100);

/// Parses a sampling interval (`100ms`, `0.5s`, `20000us`; at least 1 ms), for clap.
pub fn parse_interval(s: &str) -> Result<Duration, String> {
    let ns = pioscope_sim::model::units::parse_time_ns(s)?;
    if ns < 1_000_000 {
        return Err(format!("'{s}' is below the shortest interval, 1ms"));
    }
    Ok(Duration::from_nanos(ns))
}

/// CLOCK_MONOTONIC now, ns.
pub fn mono_ns() -> i64 {
    clock_ns(libc::CLOCK_MONOTONIC)
}

/// `clock` now, ns.
fn clock_ns(clock: libc::clockid_t) -> i64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec we own; the clocks asked for always exist.
    unsafe {
        libc::clock_gettime(clock, &mut ts);
    }
    ts.tv_sec * 1_000_000_000 + ts.tv_nsec
}

/// This host's name, as the runtime records it (gethostname).
pub fn host_name() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most buf.len() bytes into the buffer we own.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return "localhost".into();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

impl Sampler {
    /// A sampler writing `<dir>/<host>-<pid>.pcnt`.
    pub fn create(dir: &Path, targets: Targets) -> io::Result<Sampler> {
        // SAFETY: sysconf reads a constant of the system.
        let (ticks, page) = unsafe {
            (
                libc::sysconf(libc::_SC_CLK_TCK),
                libc::sysconf(libc::_SC_PAGESIZE),
            )
        };
        let disks = fs::read_dir("/sys/block")
            .map(|d| {
                d.filter_map(|e| e.ok()?.file_name().into_string().ok())
                    .filter(|n| !n.starts_with("loop") && !n.starts_with("ram"))
                    .collect()
            })
            .unwrap_or_default();
        Ok(Sampler {
            targets,
            found: Vec::new(),
            scanned: None,
            disks,
            out: CounterFileWriter::create(dir, &host_name(), std::process::id())?,
            ticks_per_sec: if ticks > 0 { ticks as f64 } else { 100.0 },
            page_bytes: if page > 0 { page as f64 } else { 4096.0 },
            last: None,
            procs: HashMap::new(),
        })
    }

    /// One round: reads the counters, writes the rates since the previous round.
    pub fn round(&mut self) -> io::Result<()> {
        let now = mono_ns();
        let node = node_totals(&self.disks);
        if self.scanned.is_none_or(|t| now - t >= RESCAN_NS) {
            self.found = self.pids();
            self.scanned = Some(now);
        }
        let pids = self.found.clone();
        let procs: HashMap<u32, ProcTotals> = pids
            .iter()
            .filter_map(|&p| Some((p, proc_totals(p)?)))
            .collect();
        let Some((then, prev)) = self.last.replace((now, node)) else {
            self.procs = procs;
            return Ok(());
        };
        let interval = now - then;
        let secs = interval as f64 / 1e9;
        let mut put = |pid: i64, counter: &str, value: f64| {
            self.out.sample(&RawSample {
                mono_ns: now,
                interval_ns: interval,
                pid,
                counter: counter.to_string(),
                value,
            })
        };
        let total = node.cpu.total.saturating_sub(prev.cpu.total).max(1) as f64;
        let pct = |a: u64, b: u64| a.saturating_sub(b) as f64 / total * 100.0;
        put(-1, name::CPU_USER, pct(node.cpu.user, prev.cpu.user))?;
        put(-1, name::CPU_SYSTEM, pct(node.cpu.system, prev.cpu.system))?;
        put(-1, name::CPU_IOWAIT, pct(node.cpu.iowait, prev.cpu.iowait))?;
        let disk = [
            name::DISK_READ_OPS,
            name::DISK_WRITE_OPS,
            name::DISK_READ_BYTES,
            name::DISK_WRITE_BYTES,
        ];
        for (i, c) in disk.iter().enumerate() {
            put(-1, c, node.disk[i].saturating_sub(prev.disk[i]) as f64)?;
        }
        for (i, c) in [name::NET_RX_BYTES, name::NET_TX_BYTES].iter().enumerate() {
            put(-1, c, node.net[i].saturating_sub(prev.net[i]) as f64)?;
        }
        if let Some(used) = mem_used() {
            put(-1, name::MEM_USED_BYTES, used as f64)?;
        }
        let boot_secs = clock_ns(libc::CLOCK_BOOTTIME) as f64 / 1e9;
        for (&pid, t) in &procs {
            // A process first seen now is compared with zero, its whole life, over its life
            // when that is longer than the interval (found by a scan up to RESCAN_NS after its
            // start: its CPU since then over one interval would read several cores).
            let (p, span) = match self.procs.get(&pid) {
                Some(p) => (*p, secs),
                None => {
                    let life = boot_secs - t.start_ticks as f64 / self.ticks_per_sec;
                    (ProcTotals::default(), secs.max(life))
                }
            };
            let cpu =
                |a: u64, b: u64| a.saturating_sub(b) as f64 / self.ticks_per_sec / span * 100.0;
            let pid = i64::from(pid);
            put(pid, name::CPU_USER, cpu(t.utime, p.utime))?;
            put(pid, name::CPU_SYSTEM, cpu(t.stime, p.stime))?;
            put(
                pid,
                name::DISK_READ_BYTES,
                t.read.saturating_sub(p.read) as f64,
            )?;
            put(
                pid,
                name::DISK_WRITE_BYTES,
                t.write.saturating_sub(p.write) as f64,
            )?;
            if let Some(rss) = resident_pages(pid as u32) {
                put(pid, name::MEM_USED_BYTES, rss as f64 * self.page_bytes)?;
            }
        }
        self.procs = procs;
        self.out.flush()
    }

    fn pids(&self) -> Vec<u32> {
        match &self.targets {
            Targets::Pids(p) => p.clone(),
            Targets::Descendants(root) => descendants(*root, &process_table()),
            Targets::Named(n) => process_table()
                .iter()
                .filter(|p| named(p, n))
                .map(|p| p.pid)
                .collect(),
        }
    }
}

/// A sampler on its own thread; stopped (with a last round) by `stop`.
pub struct SamplerThread {
    stop: Sender<()>,
    handle: JoinHandle<io::Result<()>>,
}

impl SamplerThread {
    /// Starts sampling every `interval` into `dir`.
    pub fn start(dir: &Path, targets: Targets, interval: Duration) -> io::Result<SamplerThread> {
        let mut sampler = Sampler::create(dir, targets)?;
        let (stop, stopped) = mpsc::channel::<()>();
        let handle = std::thread::Builder::new()
            .name("pioscope-sampler".into())
            .spawn(move || {
                sampler.round()?;
                loop {
                    match stopped.recv_timeout(interval) {
                        Err(RecvTimeoutError::Timeout) => sampler.round()?,
                        _ => return sampler.round(),
                    }
                }
            })?;
        Ok(SamplerThread { stop, handle })
    }

    /// Takes a last round and stops.
    pub fn stop(self) -> io::Result<()> {
        let _ = self.stop.send(());
        self.handle
            .join()
            .unwrap_or_else(|_| Err(io::Error::other("the sampler thread panicked")))
    }
}

/// One line of the process table.
struct ProcEntry {
    pid: u32,
    ppid: u32,
    name: String,
}

/// Every process: pid, parent, name (/proc/PID/stat).
fn process_table() -> Vec<ProcEntry> {
    let Ok(dir) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| {
        let pid: u32 = e.ok()?.file_name().to_str()?.parse().ok()?;
        let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        let (name, rest) = split_stat(&stat)?;
        let ppid = rest.split(' ').nth(1)?.parse().ok()?;
        Some(ProcEntry {
            pid,
            ppid,
            name: name.to_string(),
        })
    })
    .collect()
}

/// /proc/PID/stat as (comm, the fields after it): comm is in parentheses and may hold spaces.
fn split_stat(stat: &str) -> Option<(&str, &str)> {
    let open = stat.find('(')?;
    let close = stat.rfind(')')?;
    Some((&stat[open + 1..close], stat.get(close + 2..)?))
}

/// `root` and its descendants in `table`.
fn descendants(root: u32, table: &[ProcEntry]) -> Vec<u32> {
    let mut out = vec![root];
    let mut frontier = vec![root];
    while let Some(p) = frontier.pop() {
        for c in table.iter().filter(|e| e.ppid == p) {
            out.push(c.pid);
            frontier.push(c.pid);
        }
    }
    out.sort_unstable();
    out
}

/// Whether a process is called `name`: its comm, or, for a name longer than the 15 bytes the
/// kernel keeps of comm, the base name of its argv[0] (read only when comm is its prefix).
fn named(p: &ProcEntry, name: &str) -> bool {
    p.name == name
        || (name.len() > 15
            && name.starts_with(p.name.as_str())
            && argv0_base(p.pid).as_deref() == Some(name))
}

fn argv0_base(pid: u32) -> Option<String> {
    let cmdline = fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    let argv0 = cmdline.split(|&b| b == 0).next()?;
    let s = String::from_utf8_lossy(argv0);
    Some(s.rsplit('/').next().unwrap_or(&s).to_string())
}

fn proc_totals(pid: u32) -> Option<ProcTotals> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = split_stat(&stat)?;
    // Fields after comm start at field 3 (state): utime is field 14, stime 15, starttime 22.
    let f: Vec<&str> = rest.split(' ').collect();
    let (utime, stime) = (f.get(11)?.parse().ok()?, f.get(12)?.parse().ok()?);
    let start_ticks = f.get(19)?.parse().ok()?;
    // /proc/PID/io may be unreadable (another user's process): storage bytes then count 0.
    let io = fs::read_to_string(format!("/proc/{pid}/io")).unwrap_or_default();
    let field = |k: &str| {
        io.lines()
            .find_map(|l| l.strip_prefix(k)?.trim().parse::<u64>().ok())
            .unwrap_or(0)
    };
    Some(ProcTotals {
        utime,
        stime,
        read: field("read_bytes:"),
        write: field("write_bytes:"),
        start_ticks,
    })
}

fn resident_pages(pid: u32) -> Option<u64> {
    let statm = fs::read_to_string(format!("/proc/{pid}/statm")).ok()?;
    statm.split(' ').nth(1)?.parse().ok()
}

fn node_totals(disks: &[String]) -> NodeTotals {
    NodeTotals {
        cpu: fs::read_to_string("/proc/stat")
            .ok()
            .and_then(|s| parse_cpu(&s))
            .unwrap_or_default(),
        disk: fs::read_to_string("/proc/diskstats")
            .map(|s| parse_diskstats(&s, |d| disks.iter().any(|x| x == d)))
            .unwrap_or_default(),
        net: fs::read_to_string("/proc/net/dev")
            .map(|s| parse_net_dev(&s))
            .unwrap_or_default(),
    }
}

/// The first `cpu` line of /proc/stat.
fn parse_cpu(stat: &str) -> Option<NodeCpu> {
    let line = stat.lines().find(|l| l.starts_with("cpu "))?;
    let v: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .filter_map(|x| x.parse().ok())
        .collect();
    let at = |i: usize| v.get(i).copied().unwrap_or(0);
    // user nice system idle iowait irq softirq steal (guest time is inside user already).
    Some(NodeCpu {
        user: at(0) + at(1),
        system: at(2) + at(5) + at(6),
        iowait: at(4),
        total: (0..8).map(at).sum(),
    })
}

/// (reads, writes, bytes read, bytes written) of the whole disks (`is_disk`: a name under
/// /sys/block; partitions would count their disk's accesses twice), loop and RAM disks left out.
fn parse_diskstats(text: &str, is_disk: impl Fn(&str) -> bool) -> [u64; 4] {
    let mut t = [0u64; 4];
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        let Some(&dev) = f.get(2) else { continue };
        if dev.starts_with("loop") || dev.starts_with("ram") || !is_disk(dev) {
            continue;
        }
        let n = |i: usize| f.get(i).and_then(|x| x.parse::<u64>().ok()).unwrap_or(0);
        t[0] += n(3);
        t[1] += n(7);
        t[2] += n(5) * 512;
        t[3] += n(9) * 512;
    }
    t
}

/// (bytes received, bytes sent) over every interface.
fn parse_net_dev(text: &str) -> [u64; 2] {
    let mut t = [0u64; 2];
    for line in text.lines().skip(2) {
        let Some((_, rest)) = line.split_once(':') else {
            continue;
        };
        let f: Vec<u64> = rest
            .split_whitespace()
            .filter_map(|x| x.parse().ok())
            .collect();
        t[0] += f.first().copied().unwrap_or(0);
        t[1] += f.get(8).copied().unwrap_or(0);
    }
    t
}

/// MemTotal - MemAvailable, bytes.
fn mem_used() -> Option<u64> {
    let text = fs::read_to_string("/proc/meminfo").ok()?;
    let kb = |k: &str| {
        text.lines().find_map(|l| {
            l.strip_prefix(k)?
                .trim()
                .trim_end_matches(" kB")
                .parse::<u64>()
                .ok()
        })
    };
    Some((kb("MemTotal:")? - kb("MemAvailable:")?.min(kb("MemTotal:")?)) * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pioscope_trace::raw::counters::read_counter_dir;

    #[test]
    fn intervals_parse() {
        assert_eq!(parse_interval(DEFAULT_INTERVAL), Ok(DEFAULT_PERIOD));
        assert_eq!(parse_interval("0.5s"), Ok(Duration::from_millis(500)));
        assert!(parse_interval("10us").is_err());
        assert!(parse_interval("fast").is_err());
    }

    #[test]
    fn proc_files_parse() {
        let cpu = parse_cpu("cpu  10 2 30 400 5 6 7 8 0 0\ncpu0 1 1 1 1 1 1 1 1\n").expect("cpu");
        assert_eq!(
            cpu,
            NodeCpu {
                user: 12,
                system: 43,
                iowait: 5,
                total: 468
            }
        );
        let disks = "   7 0 loop0 9 0 9 0 9 0 9 0 0 0 0\n 253 0 vda 10 0 80 0 20 0 160 0 0 0 0\n 253 1 vda1 10 0 80 0 20 0 160 0 0 0 0\n";
        assert_eq!(
            parse_diskstats(disks, |d| d == "vda"),
            [10, 20, 80 * 512, 160 * 512]
        );
        let net = "Inter-|   Receive\n face |bytes packets\n    lo: 100 1 0 0 0 0 0 0 200 2 0 0 0 0 0 0\n  eth0: 1000 1 0 0 0 0 0 0 3000 2 0 0 0 0 0 0\n";
        assert_eq!(parse_net_dev(net), [1100, 3200]);
        assert_eq!(split_stat("7 (a b) S 1 7"), Some(("a b", "S 1 7")));
        let p = |pid, ppid| ProcEntry {
            pid,
            ppid,
            name: String::new(),
        };
        let table = [p(1, 0), p(10, 1), p(11, 10), p(12, 10), p(13, 11), p(20, 1)];
        assert_eq!(descendants(10, &table), vec![10, 11, 12, 13]);
    }

    /// Two rounds of this process: node and process samples in the raw file.
    #[test]
    fn rounds_write_node_and_process_samples() {
        let dir = tempfile::tempdir().expect("tmp");
        let me = std::process::id();
        let mut s = Sampler::create(dir.path(), Targets::Pids(vec![me])).expect("create");
        s.round().expect("baseline");
        std::thread::sleep(Duration::from_millis(20));
        s.round().expect("round");
        let files = read_counter_dir(dir.path()).expect("read");
        let samples = &files[0].samples;
        let of = |pid: i64| samples.iter().filter(|x| x.pid == pid).count();
        assert_eq!(of(-1), 10, "3 CPU, 4 disk, 2 net, 1 memory");
        assert_eq!(of(i64::from(me)), 5, "2 CPU, 2 storage, 1 memory");
        assert!(samples.iter().all(|x| x.interval_ns > 0));
    }

    /// A process first seen after it burnt CPU (a scan finds it up to a second after its
    /// start) has that CPU spread over its life, not over one short interval: never more cores
    /// than the machine has.
    #[test]
    fn a_process_first_seen_late_reads_no_more_cores_than_there_are() {
        let dir = tempfile::tempdir().expect("tmp");
        let me = std::process::id();
        let burn = std::time::Instant::now();
        let mut x = 0u64;
        while burn.elapsed() < Duration::from_millis(300) {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
        }
        let mut s = Sampler::create(dir.path(), Targets::Pids(vec![me])).expect("create");
        s.round().expect("baseline");
        s.procs.clear(); // as if the scan had just found it
        std::thread::sleep(Duration::from_millis(20));
        s.round().expect("round");
        let files = read_counter_dir(dir.path()).expect("read");
        let cpu: f64 = files[0]
            .samples
            .iter()
            .filter(|x| x.pid == i64::from(me) && x.counter.starts_with("cpu_"))
            .map(|x| x.value)
            .sum();
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
        assert!(cpu > 0.0, "it burnt 300 ms");
        assert!(cpu <= 100.0 * cores + 10.0, "{cpu} % on {cores} cores");
    }
}
