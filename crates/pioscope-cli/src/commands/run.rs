//! `pioscope run`: run a program under the tracer, merge its raw files into a trace, print a
//! summary, and exit with the program's status.

use std::ffi::OsString;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::{Parser, ValueEnum};
use pioscope_trace::merge::list_raw_files;
use pioscope_trace::raw::counters::COUNTER_SUFFIX;
use pioscope_trace::raw::format::RAW_SUFFIX;

use crate::elf;
use crate::launch::{self, JobEnd, StopSignals, MPI_RUNTIME, POSIX_RUNTIME, STOP_GRACE};
use crate::mpi_flavour::{self, MpiFlavour};
use crate::sampler::{self, SamplerThread, Targets};

/// Which runtime library to preload.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum RuntimeKind {
    /// mpi when -n is given or the program links an MPI library, else posix
    Auto,
    /// MPI-IO, MPI, POSIX, STDIO and regions, built for the program's MPI library (mpich or
    /// openmpi, from the library it links or else the launcher; libpioscope.so if neither tells)
    Mpi,
    /// libpioscope-mpich.so: the MPI runtime built for MPICH
    Mpich,
    /// libpioscope-openmpi.so: the MPI runtime built for Open MPI
    Openmpi,
    /// libpioscope-posix.so: POSIX, STDIO and regions, for programs without MPI
    Posix,
}

/// Run a program under the tracer and merge its trace
///
/// Without -n the program runs directly; with -n N it runs as `LAUNCHER -n N PROGRAM ARGS`.
/// The runtime library is preloaded into the program's processes only (not into the launcher),
/// through `env LD_PRELOAD=... PIOSCOPE_RAW_DIR=...`. Raw files go to TRACE.raw; when the
/// program ends they are merged into TRACE (with a progress bar), a short summary is printed,
/// and TRACE.raw is deleted unless --keep-raw.
///
/// pioscope exits with the program's exit status (128+S if a signal S killed it), after merging
/// whatever was written. Ctrl-C stops the program, not the merge. SIGTERM, SIGHUP and SIGQUIT
/// sent to pioscope (a batch scheduler's time limit) are passed on to every process of the job;
/// what is still running 10 s later is killed; the trace is merged and pioscope exits 128+S.
///
/// With --servers DIR the storage server daemons traced in server mode whose raw files are in
/// DIR (scripts/gluster-lab.sh up --dir LAB puts them in LAB/servers; docs/SERVERS.md) join
/// the trace as containers of kind `server`, with their records in the job's time window;
/// pioscope waits for the servers' periodic flush (until their raw files stay unchanged for 2 s,
/// at most 15 s) before merging.
///
/// Libraries are found in $PIOSCOPE_LIB_DIR, or else in <dir of pioscope>/../lib. The MPI
/// runtime is built once per MPI library (libpioscope-mpich.so, libpioscope-openmpi.so): the
/// one preloaded matches the libmpi the program links (libmpich.so.12: MPICH, libmpi.so.40:
/// Open MPI), or else the launcher (mpiexec.hydra: MPICH, orterun: Open MPI).
///
/// Examples:
///   pioscope run -n 64 -- ./app input.nml
///   pioscope run -o ckpt.trace --launcher srun -n 128 -- ./app
///   pioscope run -- ./serial_tool data/
#[derive(Parser, Debug)]
#[command(
    after_help = crate::EXIT_CODES,
    verbatim_doc_comment,
    override_usage = "pioscope run [OPTIONS] [--] PROGRAM [ARGS]..."
)]
pub struct Args {
    /// Number of MPI processes: run under the launcher
    #[arg(short = 'n', value_name = "N")]
    pub n: Option<u32>,
    /// MPI launcher used with -n (mpiexec, mpirun, srun, ...)
    #[arg(long, value_name = "L", default_value = "mpiexec")]
    pub launcher: String,
    /// Trace directory to create [default: pioscope-trace-<program>-<timestamp>]
    #[arg(short = 'o', long = "output", value_name = "TRACE")]
    pub output: Option<PathBuf>,
    /// Keep the raw files (TRACE.raw) after merging
    #[arg(long)]
    pub keep_raw: bool,
    /// Replace TRACE (and TRACE.raw) if they exist from an earlier trace
    #[arg(long)]
    pub force: bool,
    /// Which runtime library to preload
    #[arg(long, value_enum, value_name = "KIND", default_value_t = RuntimeKind::Auto)]
    pub runtime: RuntimeKind,
    /// Directory of the storage servers' raw files (server mode) to add to the trace
    #[arg(long, value_name = "DIR")]
    pub servers: Option<PathBuf>,
    /// Do not sample node and process counters (CPU, disk, network, memory) during the run
    #[arg(long)]
    pub no_counters: bool,
    /// Time between counter samples
    #[arg(long, value_name = "TIME", default_value = sampler::DEFAULT_INTERVAL, value_parser = sampler::parse_interval)]
    pub counter_interval: Duration,
    /// The program and its arguments (after --)
    #[arg(
        value_name = "PROGRAM [ARGS]",
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        num_args = 1..
    )]
    pub command: Vec<OsString>,
}

/// Everything `execute` needs; `bench --trace` builds one too.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Ranks (None: run directly).
    pub n: Option<u32>,
    /// Launcher.
    pub launcher: String,
    /// Trace directory.
    pub output: Option<PathBuf>,
    /// Keep TRACE.raw.
    pub keep_raw: bool,
    /// Replace existing outputs.
    pub force: bool,
    /// Runtime choice.
    pub runtime: RuntimeKind,
    /// Storage servers' raw directory to merge with the job's.
    pub servers: Option<PathBuf>,
    /// Counter sampling interval (None: no sampling).
    pub counters: Option<Duration>,
    /// Program.
    pub program: OsString,
    /// Its arguments.
    pub args: Vec<OsString>,
}

/// Runs `pioscope run`.
pub fn run(args: Args) -> Result<u8> {
    let mut command = args.command.into_iter();
    let program = command.next().context("no program given")?;
    execute(RunOptions {
        n: args.n,
        launcher: args.launcher,
        output: args.output,
        keep_raw: args.keep_raw,
        force: args.force,
        runtime: args.runtime,
        servers: args.servers,
        counters: (!args.no_counters).then_some(args.counter_interval),
        program,
        args: command.collect(),
    })
}

/// How long the servers' raw files must stay unchanged before the merge: twice the server
/// mode's default flush period (PIOSCOPE_FLUSH_MS, 1000 ms), so the job's last records, still
/// in a server's buffers when the job ends, are written.
const SERVER_QUIET: Duration = Duration::from_secs(2);
/// The longest wait for that (a busy server's files never stay unchanged).
const SERVER_WAIT_LIMIT: Duration = Duration::from_secs(15);

/// Waits until the raw files in the servers' directory stop changing for `SERVER_QUIET`, at
/// most `SERVER_WAIT_LIMIT`: a fixed wait loses the last records of a server whose flush comes
/// late (a loaded machine), or all of a daemon whose first flush does.
fn wait_for_servers_to_flush(dir: &Path) {
    let written = || -> (usize, u64) {
        let files = list_raw_files(dir).unwrap_or_default();
        let bytes = files
            .iter()
            .filter_map(|f| fs::metadata(f).ok())
            .map(|m| m.len())
            .sum();
        (files.len(), bytes)
    };
    let start = Instant::now();
    let (mut last, mut since) = (written(), Instant::now());
    while start.elapsed() < SERVER_WAIT_LIMIT && since.elapsed() < SERVER_QUIET {
        std::thread::sleep(Duration::from_millis(100));
        let now = written();
        if now != last {
            (last, since) = (now, Instant::now());
        }
    }
}

/// Removes a raw directory left by an earlier run, if it holds nothing but raw files.
fn clear_raw_dir(dir: &Path, force: bool) -> Result<()> {
    if !dir.exists() {
        return Ok(());
    }
    if !force {
        bail!(
            "{} already exists (use --force to replace it)",
            dir.display()
        );
    }
    let only_raw = fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .filter_map(|e| e.ok())
        .all(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            n.ends_with(RAW_SUFFIX) || n.ends_with(COUNTER_SUFFIX)
        });
    if !dir.is_dir() || !only_raw {
        bail!(
            "refusing to replace {}: it holds files other than raw trace files",
            dir.display()
        );
    }
    fs::remove_dir_all(dir).with_context(|| format!("removing {}", dir.display()))
}

/// The runtime library to preload for `kind` (Auto already resolved): for the MPI runtime, the
/// flavour of the program's libmpi, else of the launcher, else the default libpioscope.so.
fn runtime_library(kind: RuntimeKind, program: &Path, launcher: Option<&Path>) -> Result<PathBuf> {
    let (flavour, why) = match kind {
        RuntimeKind::Posix => return launch::runtime_library(POSIX_RUNTIME),
        RuntimeKind::Mpich => (MpiFlavour::Mpich, "--runtime mpich".to_string()),
        RuntimeKind::Openmpi => (MpiFlavour::OpenMpi, "--runtime openmpi".to_string()),
        RuntimeKind::Mpi | RuntimeKind::Auto => {
            let linked = mpi_flavour::of_program(program)
                .map(|(f, lib)| (f, format!("{} links {lib}", program.display())));
            let launched = || {
                let l = launcher?;
                let f = mpi_flavour::of_launcher(l)?;
                Some((
                    f,
                    format!("the launcher {} is {}'s", l.display(), f.title()),
                ))
            };
            match linked.or_else(launched) {
                Some(found) => found,
                None => return launch::runtime_library(MPI_RUNTIME),
            }
        }
    };
    let name = flavour.runtime_library();
    let dir = launch::lib_dir()?;
    if !dir.join(&name).is_file() {
        bail!(
            "{why}, but the runtime for {} ({name}) is not in {}: build pioscope where {}'s \
             mpicc is installed (docs/INSTALL.md), or set PIOSCOPE_LIB_DIR",
            flavour.title(),
            dir.display(),
            flavour.title()
        );
    }
    launch::runtime_library(&name)
}

/// Traces one program run (see `Args`); returns the program's exit code.
pub fn execute(o: RunOptions) -> Result<u8> {
    let name = o.program.to_string_lossy().into_owned();
    let program =
        launch::find_program(&name).with_context(|| format!("program not found: {name}"))?;
    let launcher = match o.n {
        Some(0) => bail!("-n must be at least 1"),
        Some(_) => Some(launch::find_program(&o.launcher).with_context(|| {
            format!(
                "launcher not found: {} (choose one with --launcher)",
                o.launcher
            )
        })?),
        None => None,
    };
    let runtime = match o.runtime {
        RuntimeKind::Auto if o.n.is_some() || elf::links_mpi(&program) => RuntimeKind::Mpi,
        RuntimeKind::Auto => RuntimeKind::Posix,
        k => k,
    };
    let library = runtime_library(runtime, &program, launcher.as_deref())?;

    let trace = match &o.output {
        Some(t) => t.clone(),
        None => launch::default_trace_name(&name),
    };
    super::prepare_output(&trace, o.force)?;
    if let Some(dir) = o.servers.as_deref().filter(|d| !d.is_dir()) {
        bail!(
            "--servers {}: not a directory of server raw files",
            dir.display()
        );
    }
    let raw_dir = launch::raw_dir_for(&trace);
    clear_raw_dir(&raw_dir, o.force)?;
    fs::create_dir_all(&raw_dir).with_context(|| format!("creating {}", raw_dir.display()))?;
    let raw_abs = raw_dir.canonicalize().unwrap_or_else(|_| raw_dir.clone());

    let mut preload = library.into_os_string();
    if let Some(old) = std::env::var_os("LD_PRELOAD").filter(|v| !v.is_empty()) {
        preload.push(":");
        preload.push(old);
    }
    let mut cmd = match (&launcher, o.n) {
        (Some(l), Some(n)) => {
            // `env` sets the variables in each rank only: the launcher itself is not traced,
            // and remote ranks get them whatever the launcher forwards.
            let env = launch::find_program("env").context("program not found: env")?;
            let mut c = Command::new(l);
            c.arg("-n").arg(n.to_string()).arg(env);
            let mut kv = OsString::from("LD_PRELOAD=");
            kv.push(&preload);
            c.arg(kv);
            let mut kv = OsString::from("PIOSCOPE_RAW_DIR=");
            kv.push(raw_abs.as_os_str());
            c.arg(kv);
            c.arg(&program);
            c
        }
        _ => {
            let mut c = Command::new(&program);
            c.env("LD_PRELOAD", &preload)
                .env("PIOSCOPE_RAW_DIR", &raw_abs);
            c
        }
    };
    cmd.args(&o.args);

    if let Some(warning) = crate::untraced_mpi::warning(&program) {
        super::warn(&warning);
    }
    launch::adopt_orphans();
    let started = Instant::now();
    let mut child = cmd
        .spawn()
        .with_context(|| format!("starting {}", program.display()))?;
    let sampler = match o.counters {
        Some(interval) => Some(
            SamplerThread::start(&raw_abs, Targets::Descendants(child.id()), interval)
                .context("starting the counters sampler")?,
        ),
        None => None,
    };
    let mut traced_env = b"PIOSCOPE_RAW_DIR=".to_vec();
    traced_env.extend_from_slice(raw_abs.as_os_str().as_bytes());
    let end = {
        let _guard = StopSignals::catch();
        launch::supervise(&mut child, STOP_GRACE, &traced_env)?
    };
    let wall = started.elapsed();
    if let Some(s) = sampler {
        // Lost samples lose the counters only, never the trace.
        if let Err(e) = s.stop() {
            eprintln!("pioscope: warning: counters sampler: {e}");
        }
    }
    let code = match end {
        JobEnd::Finished(status) => {
            let code = launch::exit_code(status);
            if code != 0 {
                eprintln!("pioscope: {name} exited with status {code}; merging what it wrote");
            }
            code
        }
        JobEnd::Stopped { signal, killed } => {
            let how = if killed {
                format!("killed what still ran after {} s", STOP_GRACE.as_secs())
            } else {
                "it ended".to_string()
            };
            eprintln!(
                "pioscope: {} received: passed on to {name}, {how}; merging what it wrote",
                launch::signal_name(signal)
            );
            (128 + signal).min(255) as u8
        }
    };

    if list_raw_files(&raw_dir)
        .map(|f| f.is_empty())
        .unwrap_or(true)
    {
        // Only the sampler's counter files can be there: they go, and the empty directory.
        if let Ok(files) = fs::read_dir(&raw_dir) {
            for f in files.filter_map(|e| e.ok()) {
                if f.file_name().to_string_lossy().ends_with(COUNTER_SUFFIX) {
                    let _ = fs::remove_file(f.path());
                }
            }
        }
        let _ = fs::remove_dir(&raw_dir);
        bail!(
            "{name} wrote no trace (no raw files in {}): is it statically linked, or did it fail to start?",
            raw_dir.display()
        );
    }
    if let Some(servers) = &o.servers {
        wait_for_servers_to_flush(servers);
    }
    let summary = super::merge_with_progress(&raw_dir, o.servers.as_deref(), &trace)
        .with_context(|| format!("merging (the raw files are kept in {})", raw_dir.display()))?;
    super::print_warnings(&summary);
    if !o.keep_raw {
        fs::remove_dir_all(&raw_dir).with_context(|| format!("removing {}", raw_dir.display()))?;
    }
    let mut out = super::Output::stdout();
    out.write(format_args!(
        "{}",
        super::summary_text(&summary, Some(wall))
    ))?;
    if o.keep_raw {
        out.line(format_args!("raw files: {}", raw_dir.display()))?;
    }
    out.finish()?;
    Ok(code)
}
