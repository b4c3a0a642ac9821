//! `pioscope bench tas`: the PVFS2-TAS experiment on the GlusterFS lab (docs/SERVERS.md): one
//! benchmark on disk bricks, null bricks and tmpfs bricks, and the network bound beside them:
//! the ceiling of the software stack, and what the storage layer costs.

use std::ffi::OsString;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use pioscope_trace::units;

use crate::launch;

/// The storages, in the order printed, with the lab's flag for each.
const STORAGES: [(&str, Option<&str>); 3] = [
    ("disk", None),
    ("null", Some("--null")),
    ("tmpfs", Some("--tmpfs")),
];
/// Bytes sent over loopback TCP to measure the network bound.
const NETWORK_BYTES: usize = 512 << 20;

/// What `bench tas` needs from `bench`'s arguments.
pub struct TasOptions {
    /// Ranks.
    pub n: u32,
    /// MPI launcher.
    pub launcher: String,
    /// The benchmark binary (pioscope-hpio or pioscope-mpi-io-test).
    pub benchmark: PathBuf,
    /// Its arguments.
    pub args: Vec<OsString>,
}

/// Runs the experiment; prints one line per storage and the network bound.
pub fn run(o: TasOptions) -> Result<u8> {
    let script = lab_script()?;
    let launcher = launch::find_program(&o.launcher).with_context(|| {
        format!(
            "launcher not found: {} (choose one with --launcher)",
            o.launcher
        )
    })?;
    let base = std::env::temp_dir().join(format!("pioscope-tas-{}", std::process::id()));
    let name = o
        .benchmark
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    println!(
        "TAS: {name}, {} ranks, on the GlusterFS lab (1 brick): disk, null and tmpfs bricks",
        o.n
    );
    for (storage, flag) in STORAGES {
        let dir = base.join(storage);
        lab(&script, "up", &dir, flag)?;
        let result = benchmark(&launcher, &o, &dir);
        lab(&script, "down", &dir, None)?;
        let (write, read) = result?;
        let read = read.map_or(String::new(), |r| format!("  read {}", units::fmt_rate(r)));
        println!("{storage:<6} write {}{read}", units::fmt_rate(write));
    }
    let _ = std::fs::remove_dir_all(&base);
    println!(
        "network bound: {} (loopback TCP, one connection)",
        units::fmt_rate(loopback_rate()?)
    );
    Ok(0)
}

/// scripts/gluster-lab.sh: $PIOSCOPE_LAB_SCRIPT, else beside the build (<bin>/../../scripts).
fn lab_script() -> Result<PathBuf> {
    let script = match std::env::var_os("PIOSCOPE_LAB_SCRIPT") {
        Some(s) if !s.is_empty() => PathBuf::from(s),
        _ => launch::bin_dir()?.join("../../scripts/gluster-lab.sh"),
    };
    if !script.is_file() {
        bail!(
            "{} not found (set PIOSCOPE_LAB_SCRIPT to scripts/gluster-lab.sh)",
            script.display()
        );
    }
    Ok(script)
}

fn lab(script: &Path, action: &str, dir: &Path, flag: Option<&str>) -> Result<()> {
    let status = Command::new(script)
        .arg(action)
        .arg("--dir")
        .arg(dir)
        .args(flag)
        .stdout(std::process::Stdio::null())
        .status()
        .with_context(|| format!("running {}", script.display()))?;
    if !status.success() {
        bail!(
            "{} {action} --dir {} failed",
            script.display(),
            dir.display()
        );
    }
    Ok(())
}

/// The benchmark's write (and read, when it timed one) throughput, bytes/s, from its --json.
fn benchmark(launcher: &Path, o: &TasOptions, dir: &Path) -> Result<(f64, Option<f64>)> {
    let out = Command::new(launcher)
        .arg("-n")
        .arg(o.n.to_string())
        .arg(&o.benchmark)
        .arg("--json")
        .arg("--path")
        .arg(dir.join("mnt").join("tas.dat"))
        .args(&o.args)
        .output()
        .with_context(|| format!("starting {}", o.benchmark.display()))?;
    if !out.status.success() {
        bail!(
            "{} failed: {}",
            o.benchmark.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    let json: serde_json::Value =
        serde_json::from_slice(&out.stdout).context("reading the benchmark's --json output")?;
    let mean = |phase: &str| json[phase]["mean_throughput_bytes_per_s"].as_f64();
    let write = mean("write").context("the benchmark timed no write phase")?;
    Ok((write, mean("read")))
}

/// Bytes/s of one TCP connection over loopback: the fastest the lab's network carries data.
fn loopback_rate() -> Result<f64> {
    let listener = TcpListener::bind("127.0.0.1:0").context("binding a loopback socket")?;
    let address = listener.local_addr()?;
    let reader = std::thread::spawn(move || -> std::io::Result<usize> {
        let (mut s, _) = listener.accept()?;
        let mut buf = vec![0u8; 1 << 20];
        let mut total = 0;
        loop {
            let n = s.read(&mut buf)?;
            if n == 0 {
                return Ok(total);
            }
            total += n;
        }
    });
    let started = Instant::now();
    let mut s = TcpStream::connect(address).context("connecting over loopback")?;
    let chunk = vec![0u8; 1 << 20];
    for _ in 0..NETWORK_BYTES / chunk.len() {
        s.write_all(&chunk)?;
    }
    drop(s);
    let received = reader
        .join()
        .map_err(|_| anyhow::anyhow!("the loopback reader failed"))??;
    Ok(received as f64 / started.elapsed().as_secs_f64())
}
