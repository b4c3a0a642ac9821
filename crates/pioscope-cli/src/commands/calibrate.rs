//! `pioscope calibrate`: runs the calibration micro-benchmarks (bench/calibrate/) here, fits
//! the system model to them and writes it as TOML, with a table of measured vs model.
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{bail, Context, Result};
use clap::Parser;

use pioscope_sim::model::calibrate::{self, Machine, Measurements, NetRuns, StorageRuns};
use pioscope_sim::model::load;
use pioscope_sim::model::runs_median;
use pioscope_sim::model::Fit;
use pioscope_trace::units::{fmt_ops, fmt_rate, fmt_time_ns};

use super::calibrate_daemons;
use crate::{launch, output_file};

/// Measure this machine and write a system model for `pioscope simulate` and `bounds`
///
/// Runs two MPI micro-benchmarks through the launcher: pioscope-cal-net (ping-pong between 2
/// ranks across message sizes) and pioscope-cal-storage (writes and reads in DIR, sequential
/// and random, 4 KiB to 16 MiB, through the page cache and with O_DIRECT, on 1, 2, 4 ... ranks;
/// then create, stat, open and remove of many files). Fits latencies, bandwidths, server CPU
/// cost, memory copy rate, disk latency/bandwidth/IOPS and metadata costs, writes OUTPUT, and
/// prints every measurement beside the fitted model's value. Progress goes to stderr.
///
/// All ranks run on this node, so the ping-pong measures shared memory; to calibrate a network
/// run the benchmarks on two nodes (docs/MODEL.md, "Calibration").
///
/// Examples:
///   pioscope calibrate -o local.toml
///   pioscope calibrate -o quick.toml --quick --dir /scratch/me
///   pioscope calibrate -o local.toml --save-runs runs.json
///   pioscope calibrate -o refit.toml --from-runs runs.json
///   pioscope calibrate -o typical.toml --from-runs monday.json tuesday.json friday.json
///   pioscope calibrate -o gluster.toml --dir /mnt/gluster --node-cpu
#[derive(Parser, Debug)]
#[command(after_help = crate::EXIT_CODES, verbatim_doc_comment)]
pub struct Args {
    /// Where to write the model (TOML)
    #[arg(short = 'o', long = "output", value_name = "OUTPUT")]
    pub output: PathBuf,
    /// Replace OUTPUT if it exists
    #[arg(long)]
    pub force: bool,
    /// Scratch directory on the file system to measure (a temporary subdirectory is made and removed)
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub dir: PathBuf,
    /// Small sizes and few repetitions (a few seconds; for tests)
    #[arg(long)]
    pub quick: bool,
    /// Ranks for the storage runs (concurrency 1, 2, 4, ... up to it)
    #[arg(short = 'n', value_name = "RANKS", default_value_t = 4)]
    pub n: u32,
    /// MPI launcher
    #[arg(long, value_name = "L", default_value = "mpiexec")]
    pub launcher: String,
    /// Also write the benchmarks' results and the machine's facts (JSON) to FILE
    #[arg(long, value_name = "FILE")]
    pub save_runs: Option<PathBuf>,
    /// Fit the results a --save-runs wrote instead of measuring (no benchmark runs); several
    /// files (calibrations of one machine): each measurement is the median of its runs
    #[arg(long, value_name = "FILE", num_args = 1.., conflicts_with_all = ["save_runs", "quick"])]
    pub from_runs: Vec<PathBuf>,
    /// On a FUSE mount: charge its daemons' CPU time per request and per byte (measured on
    /// every FUSE calibration, kept in --save-runs) to the node's cores, the servers there
    /// colocated (docs/MODEL.md, "Node CPU"); without it the model leaves node CPU out
    #[arg(long)]
    pub node_cpu: bool,
}

/// Runs, fits, writes; exit code 0.
pub fn run(args: Args) -> Result<u8> {
    if args.n == 0 {
        bail!("-n must be at least 1");
    }
    // Checked before the minutes of measuring, and again when the model is written.
    output_file::check_file(&args.output, args.force)?;
    let m = if args.from_runs.is_empty() {
        measure_here(&args)?
    } else {
        let runs = args
            .from_runs
            .iter()
            .map(|path| read_runs(path))
            .collect::<Result<Vec<_>>>()?;
        runs_median::median(&runs).with_context(|| {
            format!(
                "folding the runs of {}",
                args.from_runs
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })?
    };
    if let Some(path) = &args.save_runs {
        let text = serde_json::to_string_pretty(&m).context("writing the runs as JSON")?;
        output_file::write(path, args.force, text.as_bytes())?;
    }
    let Measurements {
        net,
        storage,
        mut machine,
    } = m;
    if !args.node_cpu {
        machine.daemon_cpu = None;
    }
    let system = calibrate::fit(&net, &storage, &machine).context("fitting the model")?;
    load::validate(&system)
        .map_err(|(field, msg)| anyhow::anyhow!("the fitted model is not valid: {field}: {msg}"))?;
    let header = format!(
        "{}: written by `pioscope calibrate` on {} at {}\n\
         ({} ranks{}, scratch directory {}). Every field is described in docs/MODEL.md;\n\
         calibration.fits lists each measurement beside the fitted model's value.",
        args.output
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        machine.host,
        machine.date,
        machine.ranks,
        if args.quick { ", --quick" } else { "" },
        machine.dir
    );
    let text = load::to_toml(&system, &header).context("writing the model as TOML")?;
    output_file::write(&args.output, args.force, text.as_bytes())?;

    let mut out = super::Output::stdout();
    let fits = system
        .calibration
        .as_ref()
        .map(|c| c.fits.clone())
        .unwrap_or_default();
    for line in fit_table(&fits) {
        out.line(format_args!("{line}"))?;
    }
    out.line(format_args!("model written to {}", args.output.display()))?;
    out.finish()?;
    Ok(0)
}

/// A runs file `--save-runs` wrote.
fn read_runs(path: &Path) -> Result<Measurements> {
    let text = fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    serde_json::from_str(&text)
        .with_context(|| format!("{}: not the JSON of --save-runs", path.display()))
}

/// Runs the benchmarks here and reads the machine's facts.
fn measure_here(args: &Args) -> Result<Measurements> {
    let launcher = launch::find_program(&args.launcher).with_context(|| {
        format!(
            "launcher not found: {} (choose one with --launcher)",
            args.launcher
        )
    })?;
    let bin = launch::bin_dir()?;
    let net_bin = benchmark(&bin, "pioscope-cal-net")?;
    let storage_bin = benchmark(&bin, "pioscope-cal-storage")?;
    if !args.dir.is_dir() {
        bail!("scratch directory {} does not exist", args.dir.display());
    }
    let scratch = args
        .dir
        .join(format!(".pioscope-calibrate-{}", std::process::id()));
    fs::create_dir(&scratch).with_context(|| format!("creating {}", scratch.display()))?;
    let result = measure(args, &launcher, &net_bin, &storage_bin, &scratch);
    // The benchmarks remove their files; the directory goes whatever happened.
    let _ = fs::remove_dir_all(&scratch);
    let (net, storage) = result?;

    let dir = fs::canonicalize(&args.dir).unwrap_or_else(|_| args.dir.clone());
    let fuse_mount = mount_of(&dir)
        .filter(|(_, t)| t == "fuse" || t.starts_with("fuse."))
        .map(|(point, _)| point);
    // Issue 15 item 9: what the mount's daemons here cost in CPU per request and per byte.
    let daemon_cpu = fuse_mount.as_ref().and_then(|point| {
        eprintln!("calibrate: CPU time of the FUSE daemons per write request");
        calibrate_daemons::measure(&dir, point)
    });
    let machine = Machine {
        fuse: fuse_mount.is_some(),
        daemon_cpu,
        host: hostname(),
        date: utc_now(),
        cpus: std::thread::available_parallelism()
            .map(|n| n.get() as u32)
            .unwrap_or(1),
        ranks: args.n,
        mem_available: meminfo("MemAvailable:").unwrap_or(1 << 30),
        dirty_ratio: read_number("/proc/sys/vm/dirty_ratio").unwrap_or(20),
        dirty_background_ratio: read_number("/proc/sys/vm/dirty_background_ratio").unwrap_or(10),
        dir: dir.display().to_string(),
    };
    Ok(Measurements {
        net,
        storage,
        machine,
    })
}

fn benchmark(bin: &Path, name: &str) -> Result<PathBuf> {
    let p = bin.join(name);
    if launch::find_program(&p.to_string_lossy()).is_none() {
        bail!(
            "benchmark {} not found (build the benchmarks with `make -C bench`, or set PIOSCOPE_BIN_DIR)",
            p.display()
        );
    }
    Ok(p)
}

fn measure(
    args: &Args,
    launcher: &Path,
    net_bin: &Path,
    storage_bin: &Path,
    scratch: &Path,
) -> Result<(NetRuns, StorageRuns)> {
    let net_args: Vec<String> = if args.quick {
        ["--max-size", "1M", "--ms-per-size", "5", "--reps", "2"]
    } else {
        ["--max-size", "4M", "--ms-per-size", "30", "--reps", "3"]
    }
    .iter()
    .map(|s| s.to_string())
    .collect();
    eprintln!("calibrate: MPI ping-pong, 2 ranks on this node");
    let mut net: NetRuns = serde_json::from_str(&run_json(launcher, 2, net_bin, &net_args)?)
        .context("reading the JSON of pioscope-cal-net")?;
    // Synchronizations with the job's rank count: what a rank waiting for others sees when
    // the ranks share the cores (the 2-rank ping-pong above has a core per rank).
    if args.n > 2 {
        eprintln!(
            "calibrate: barrier, all-to-all and exchange cycles, {} ranks on this node",
            args.n
        );
        let mut sync_args = net_args.clone();
        sync_args.splice(0..2, ["--max-size".to_string(), "1".to_string()]);
        let sync: NetRuns = serde_json::from_str(&run_json(launcher, args.n, net_bin, &sync_args)?)
            .context("reading the JSON of pioscope-cal-net")?;
        net.ranks = sync.ranks;
        net.barrier_s = sync.barrier_s;
        net.alltoall_s = sync.alltoall_s;
        net.exchange = sync.exchange;
        net.fresh_memory_bytes_per_s = sync.fresh_memory_bytes_per_s;
    }

    let mut st_args: Vec<String> = vec!["--dir".into(), scratch.display().to_string()];
    let sizes: &[&str] = if args.quick {
        &[
            "--max-size",
            "1M",
            "--volume",
            "4M",
            "--direct-volume",
            "1M",
            "--max-requests",
            "64",
            "--files",
            "100",
            "--reps",
            "1",
        ]
    } else {
        &[
            "--max-size",
            "16M",
            "--volume",
            "32M",
            "--direct-volume",
            "16M",
            "--max-requests",
            "1024",
            "--files",
            "1000",
            "--reps",
            "3",
        ]
    };
    st_args.extend(sizes.iter().map(|s| s.to_string()));
    eprintln!(
        "calibrate: storage and metadata in {}, 1 to {} ranks",
        args.dir.display(),
        args.n
    );
    let storage: StorageRuns =
        serde_json::from_str(&run_json(launcher, args.n, storage_bin, &st_args)?)
            .context("reading the JSON of pioscope-cal-storage")?;
    if !storage.direct {
        eprintln!(
            "pioscope: warning: O_DIRECT is not supported in {}: the disk was measured with fdatasync after every write",
            args.dir.display()
        );
    }
    Ok((net, storage))
}

/// Runs `LAUNCHER -n N BIN ARGS --json`; answers the JSON line of its stdout.
fn run_json(launcher: &Path, n: u32, bin: &Path, args: &[String]) -> Result<String> {
    let out = Command::new(launcher)
        .arg("-n")
        .arg(n.to_string())
        .arg(bin)
        .args(args)
        .arg("--json")
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("starting {}", launcher.display()))?;
    if !out.status.success() {
        bail!(
            "{} failed ({}): {}",
            bin.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    let text = String::from_utf8_lossy(&out.stdout);
    // The JSON object is the last non-empty line (a launcher may print banners first).
    let line = text
        .lines()
        .rev()
        .find(|l| l.trim_start().starts_with('{'))
        .with_context(|| format!("{} printed no JSON", bin.display()))?;
    Ok(line.to_string())
}

fn fmt_value(v: f64, unit: &str) -> String {
    match unit {
        "s" => fmt_time_ns(v * 1e9),
        "B/s" => fmt_rate(v),
        _ => fmt_ops(v),
    }
}

/// The table `calibrate` prints: every measurement, the model's value, the relative error,
/// then the median and worst error.
pub fn fit_table(fits: &[Fit]) -> Vec<String> {
    let mut l = vec![format!(
        "{:<34} {:>12} {:>12} {:>8}",
        "measurement", "measured", "model", "error"
    )];
    let mut errs = Vec::new();
    for f in fits {
        let e = calibrate::relative_error(f);
        errs.push(e);
        l.push(format!(
            "{:<34} {:>12} {:>12} {:>7.1}%",
            f.name,
            fmt_value(f.measured, &f.unit),
            fmt_value(f.model, &f.unit),
            e * 100.0
        ));
    }
    if !errs.is_empty() {
        errs.sort_by(|a, b| a.total_cmp(b));
        let median = errs[errs.len() / 2];
        let worst = errs[errs.len() - 1];
        l.push(format!(
            "{} measurements: median error {:.1}%, worst {:.1}%",
            errs.len(),
            median * 100.0,
            worst * 100.0
        ));
    }
    l
}

/// The type of the file system holding `dir` (an absolute path): the fstype of the longest
/// mount point of /proc/self/mounts that contains it.
/// The mount point holding `dir` and its file system type, from /proc/self/mounts.
fn mount_of(dir: &Path) -> Option<(PathBuf, String)> {
    let mounts = fs::read_to_string("/proc/self/mounts").ok()?;
    mounts
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let (_, point, kind) = (f.next()?, f.next()?, f.next()?);
            // Mount points escape blanks as octal (\040).
            let point = PathBuf::from(point.replace("\\040", " "));
            dir.starts_with(&point).then(|| (point, kind.to_string()))
        })
        .max_by_key(|(point, _)| point.as_os_str().len())
}

fn hostname() -> String {
    fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".to_string())
}

fn read_number(path: &str) -> Option<u64> {
    fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// A /proc/meminfo field in bytes.
fn meminfo(key: &str) -> Option<u64> {
    let text = fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with(key))?;
    let kib: u64 = line[key.len()..].split_whitespace().next()?.parse().ok()?;
    Some(kib * 1024)
}

/// Now as YYYY-MM-DDTHH:MM:SSZ.
fn utc_now() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    let (days, rem) = (secs.div_euclid(86400), secs.rem_euclid(86400));
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_has_errors_and_summary() {
        let fits = vec![
            Fit {
                name: "ping-pong 1 B".into(),
                measured: 1e-6,
                model: 1.1e-6,
                unit: "s".into(),
            },
            Fit {
                name: "write-cached seq 4 KiB x1".into(),
                measured: 1e9,
                model: 1e9,
                unit: "B/s".into(),
            },
        ];
        let t = fit_table(&fits);
        assert!(t[1].ends_with("10.0%"), "{}", t[1]);
        assert!(t[2].ends_with("0.0%"), "{}", t[2]);
        assert_eq!(t[3], "2 measurements: median error 10.0%, worst 10.0%");
        // Issue 15 item 9: the file system type of a directory (FUSE mounts split requests).
        assert!(mount_of(Path::new("/proc/self"))
            .is_some_and(|(p, t)| p == Path::new("/proc") && t == "proc"));
        let now = utc_now();
        assert_eq!(now.len(), 20, "{now}");
        assert!(now.starts_with("20"), "{now}");
    }
}
