//! `pioscope calibrate` on a FUSE mount: the CPU time the file system's daemons on this
//! machine spend per write request and per byte, the costs the model charges to the node's
//! cores (docs/MODEL.md, "Calibration", "Node CPU"). The FUSE client daemon is the process
//! holding /dev/fuse open with the mount point on its command line; the file system's other
//! daemons here (its servers, e.g. GlusterFS's brick `glusterfsd` beside the client
//! `glusterfs`) are the processes whose name starts with the client's. Their CPU time is read
//! from /proc/PID/task/*/schedstat (nanoseconds) around sequential writes of 4 KiB and 128 KiB
//! (one FUSE request each), fastest of 3; two sizes give a cost per request and per byte.

use std::fs;
use std::io::Write;
use std::path::Path;

use pioscope_sim::model::daemon_cpu::DaemonCpu;

/// (request size, requests) of the two write runs: one FUSE request per write, up to the
/// kernel module's 128 KiB.
const RUNS: [(usize, usize); 2] = [(4 << 10, 2048), (128 << 10, 256)];

/// Repetitions of each run; the least CPU counts (other work only adds to it).
const REPS: usize = 3;

/// The daemons' CPU costs of writes through the FUSE mount at `mount` (DIR within it), or
/// None when no daemon of that mount is visible here (another user's, without root).
pub fn measure(dir: &Path, mount: &Path) -> Option<DaemonCpu> {
    let client = fuse_daemons(mount);
    let name = comm(*client.first()?)?;
    let servers: Vec<u32> = pids()
        .filter(|p| !client.contains(p) && comm(*p).is_some_and(|c| c.starts_with(&name)))
        .collect();
    let file = dir.join(format!(".pioscope-daemon-cpu-{}", std::process::id()));
    let mut points = Vec::new();
    for (size, count) in RUNS {
        let mut best: Option<(f64, f64)> = None;
        for _ in 0..REPS {
            let (c0, s0) = (cpu_ns(&client), cpu_ns(&servers));
            write_run(&file, size, count).ok()?;
            let (c, s) = (cpu_ns(&client) - c0, cpu_ns(&servers) - s0);
            if best.is_none_or(|(bc, bs)| c + s < bc + bs) {
                best = Some((c, s));
            }
        }
        let (c, s) = best?;
        points.push((count as f64, (size * count) as f64, c * 1e-9, s * 1e-9));
    }
    let _ = fs::remove_file(&file);
    let (client_per_request_s, client_per_byte_s) = solve(&points, |p| p.2);
    let (server_per_request_s, server_per_byte_s) = solve(&points, |p| p.3);
    Some(DaemonCpu {
        client_per_request_s,
        client_per_byte_s,
        servers: servers.len() as u32,
        server_per_request_s,
        server_per_byte_s,
    })
}

/// (per request, per byte) ≥ 0 from the two runs' (requests, bytes, CPU): n a + B b = C.
fn solve(
    points: &[(f64, f64, f64, f64)],
    cpu: impl Fn(&(f64, f64, f64, f64)) -> f64,
) -> (f64, f64) {
    let (p, q) = (&points[0], &points[1]);
    let det = p.0 * q.1 - q.0 * p.1;
    let a = ((cpu(p) * q.1 - cpu(q) * p.1) / det).max(0.0);
    let b = ((cpu(q) - q.0 * a) / q.1).max(0.0);
    (a, b)
}

/// Writes `count` requests of `size` bytes to a fresh `file`, one write call each.
fn write_run(file: &Path, size: usize, count: usize) -> std::io::Result<()> {
    let buf = vec![0x5au8; size];
    let mut f = fs::File::create(file)?;
    for _ in 0..count {
        f.write_all(&buf)?;
    }
    Ok(())
}

fn pids() -> impl Iterator<Item = u32> {
    fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
}

fn comm(pid: u32) -> Option<String> {
    Some(
        fs::read_to_string(format!("/proc/{pid}/comm"))
            .ok()?
            .trim()
            .to_string(),
    )
}

/// The processes holding /dev/fuse with `mount` as an argument: the mount's FUSE daemon.
fn fuse_daemons(mount: &Path) -> Vec<u32> {
    let point = mount.as_os_str().as_encoded_bytes();
    pids()
        .filter(|pid| {
            let cmdline = fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let serves = cmdline.split(|&b| b == 0).any(|arg| arg == point);
            serves
                && fs::read_dir(format!("/proc/{pid}/fd"))
                    .into_iter()
                    .flatten()
                    .filter_map(Result::ok)
                    .any(|fd| fs::read_link(fd.path()).is_ok_and(|t| t == Path::new("/dev/fuse")))
        })
        .collect()
}

/// CPU time so far of every thread of `pids`, nanoseconds (schedstat's first field).
fn cpu_ns(pids: &[u32]) -> f64 {
    pids.iter()
        .flat_map(|pid| {
            fs::read_dir(format!("/proc/{pid}/task"))
                .into_iter()
                .flatten()
        })
        .filter_map(|t| fs::read_to_string(t.ok()?.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next()?.parse::<f64>().ok())
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two runs of 10 requests, of 1 KiB (20 µs of CPU) and of 4 KiB (50 µs): the 30 µs more
    /// are 30 KiB more bytes (1 µs per KiB), so 10 µs of the first run are its bytes and 1 µs
    /// per request is left; the servers used none.
    #[test]
    fn per_request_and_per_byte() {
        let pts = [(10.0, 10_240.0, 20e-6, 0.0), (10.0, 40_960.0, 50e-6, 0.0)];
        let (a, b) = solve(&pts, |p| p.2);
        assert!((b - 1e-6 / 1024.0).abs() < 1e-18, "{b}");
        assert!((a - 1e-6).abs() < 1e-15, "{a}");
        assert_eq!(solve(&pts, |p| p.3), (0.0, 0.0));
    }
}
