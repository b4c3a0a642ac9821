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

/// The lab script's name, in the source tree's scripts/ and in an installed share/pioscope/.
const LAB_SCRIPT: &str = "gluster-lab.sh";

/// Where the lab script may be, first found wins: $PIOSCOPE_LAB_SCRIPT alone when set; else
/// installed beside the executable (`<prefix>/bin/pioscope` → `<prefix>/share/pioscope/`, as
/// `make all` lays out build/), then in the source tree (`target/release/pioscope` or
/// `build/bin/pioscope` → `scripts/`).
fn lab_script_candidates(exe_dir: &Path, from_env: Option<OsString>) -> Vec<PathBuf> {
    match from_env {
        Some(s) if !s.is_empty() => vec![PathBuf::from(s)],
        _ => vec![
            exe_dir.join("../share/pioscope").join(LAB_SCRIPT),
            exe_dir.join("../../scripts").join(LAB_SCRIPT),
        ],
    }
}

/// The first candidate that is a file, or an error naming every path searched.
fn find_lab_script(candidates: &[PathBuf]) -> Result<PathBuf> {
    if let Some(found) = candidates.iter().find(|p| p.is_file()) {
        return Ok(found.clone());
    }
    let searched: Vec<String> = candidates.iter().map(|p| p.display().to_string()).collect();
    bail!(
        "the GlusterFS lab script {LAB_SCRIPT} was not found; searched: {} (install it to \
         <prefix>/share/pioscope/ with make all, or set PIOSCOPE_LAB_SCRIPT)",
        searched.join(", ")
    )
}

fn lab_script() -> Result<PathBuf> {
    let candidates =
        lab_script_candidates(&launch::exe_dir()?, std::env::var_os("PIOSCOPE_LAB_SCRIPT"));
    find_lab_script(&candidates)
}

fn lab(script: &Path, action: &str, dir: &Path, flag: Option<&str>) -> Result<()> {
    // An installed script cannot find the build beside it: tell it where this pioscope and
    // its runtime are, unless the caller already did.
    let mut cmd = Command::new(script);
    for (var, value) in [
        ("PIOSCOPE_BIN", std::env::current_exe().ok()),
        ("PIOSCOPE_LIB_DIR", launch::lib_dir().ok()),
    ] {
        if let (None, Some(v)) = (std::env::var_os(var), value) {
            cmd.env(var, v);
        }
    }
    let status = cmd
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

#[cfg(test)]
mod tests {
    use super::*;

    /// An installed layout (<prefix>/bin, <prefix>/share/pioscope) is searched before the
    /// source tree; $PIOSCOPE_LAB_SCRIPT replaces both.
    #[test]
    fn finds_the_installed_script_then_the_source_tree_one() {
        let tmp = tempfile::tempdir().expect("tmp");
        let prefix = tmp.path().join("prefix");
        let bin = prefix.join("bin");
        std::fs::create_dir_all(&bin).expect("bin");
        let candidates = lab_script_candidates(&bin, None);
        assert_eq!(
            candidates,
            vec![
                bin.join("../share/pioscope/gluster-lab.sh"),
                bin.join("../../scripts/gluster-lab.sh"),
            ]
        );
        let err = find_lab_script(&candidates).expect_err("nothing installed");
        let msg = err.to_string();
        for c in &candidates {
            assert!(msg.contains(&c.display().to_string()), "{msg}");
        }
        let source = tmp.path().join("scripts/gluster-lab.sh");
        std::fs::create_dir_all(source.parent().expect("dir")).expect("scripts");
        std::fs::write(&source, "#!/bin/sh\n").expect("script");
        assert_eq!(find_lab_script(&candidates).expect("source"), candidates[1]);
        let installed = prefix.join("share/pioscope/gluster-lab.sh");
        std::fs::create_dir_all(installed.parent().expect("dir")).expect("share");
        std::fs::write(&installed, "#!/bin/sh\n").expect("script");
        assert_eq!(
            find_lab_script(&candidates).expect("installed"),
            candidates[0]
        );
        assert_eq!(
            lab_script_candidates(&bin, Some("/opt/lab.sh".into())),
            vec![PathBuf::from("/opt/lab.sh")]
        );
    }
}
