//! `pioscope view`: opens one trace (or two side by side) in the browser timeline served by
//! pioscope-view, on the loopback address unless `--bind` says otherwise.
use std::io::Write;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Parser;
use pioscope_view::AppState;

/// Port tried first when none is given (any free port if it is taken).
pub const DEFAULT_PORT: u16 = 8642;

/// Show a trace in the browser: a zoomable timeline of every rank, server and disk
///
/// Serves the timeline page and its data on http://127.0.0.1:PORT/ and prints that URL, then
/// serves until Ctrl-C. Rows are ranks (and threads) grouped by host, with storage servers and
/// disks below; nested states show the user phase, the MPI-IO call and the POSIX calls under
/// it. Any window answers fast: from the level-of-detail index (lod.parquet, written at merge;
/// built now, once, for a trace that lacks it) or, when zoomed in, from the events themselves.
/// With TRACE2 the two traces show side by side on one time axis (observed vs simulated, or
/// two runs). No asset comes from the network; the page is inside the binary.
///
/// Example: pioscope view run1 --port 8642 --no-open
#[derive(Parser, Debug)]
#[command(after_help = crate::EXIT_CODES)]
pub struct Args {
    /// The trace directory
    #[arg(value_name = "TRACE")]
    pub trace: PathBuf,
    /// A second trace shown under the first, on the same time axis
    #[arg(value_name = "TRACE2")]
    pub trace2: Option<PathBuf>,
    /// Port to listen on (0: any free port); default 8642, or any free port if it is taken
    #[arg(long, value_name = "P")]
    pub port: Option<u16>,
    /// Address to listen on; anything but the default 127.0.0.1 exposes the trace to the network
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1")]
    pub bind: IpAddr,
    /// Do not open a browser (only print the URL)
    #[arg(long)]
    pub no_open: bool,
}

/// Opens the traces, prints the URL and serves until Ctrl-C.
pub fn run(args: Args) -> Result<u8> {
    let mut dirs = vec![args.trace.as_path()];
    if let Some(t) = &args.trace2 {
        dirs.push(t.as_path());
    }
    for d in &dirs {
        // The same clear errors as every other command for a missing or foreign directory.
        super::open_trace(d)?;
    }
    let state = AppState::open(&dirs, &mut |note| {
        eprintln!("pioscope: {}", crate::human::printable_line(note))
    })
    .with_context(|| format!("opening {}", args.trace.display()))?;
    let port = args.port.unwrap_or(DEFAULT_PORT);
    let addr = SocketAddr::new(args.bind, port);
    let no_open = args.no_open;
    if args.bind != IpAddr::V4(Ipv4Addr::LOCALHOST) {
        eprintln!(
            "pioscope: warning: serving on {} — anyone who can reach this address can read the trace",
            args.bind
        );
    }
    pioscope_view::run_blocking(addr, args.port.is_none(), state, move |bound| {
        let host = match bound.ip() {
            IpAddr::V6(ip) => format!("[{ip}]"),
            ip => ip.to_string(),
        };
        let url = format!("http://{host}:{}/", bound.port());
        let mut out = std::io::stdout();
        let _ = writeln!(out, "pioscope view: serving {url} (Ctrl-C to stop)");
        let _ = out.flush();
        if !no_open {
            open_browser(&url);
        }
    })
    .with_context(|| format!("serving on {addr}"))?;
    Ok(0)
}

/// Asks the desktop to open `url`; silently does nothing where there is no desktop.
fn open_browser(url: &str) {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    let _ = std::process::Command::new(opener)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
}
