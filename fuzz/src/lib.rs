//! What the fuzz targets share: a scratch copy of a tiny real trace store with one file
//! replaced by the fuzz input, and the viewer's HTTP API called without a socket.
//!
//! The store (`fuzz/store/posix-basic`) is `tests/programs/posix_basic` traced by
//! `pioscope run`: one process, 20 events, every table present, small enough to copy afresh
//! for every input (a reader that writes beside the tables, as the viewer's index does,
//! cannot leak one input's damage into the next).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use axum::Router;
use http_body_util::BodyExt;
use tower::ServiceExt;

/// The tiny real store every store target starts from.
pub fn base_store() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("store/posix-basic")
}

/// A private directory for this process (under `$TMPDIR`, which `scripts/fuzz.sh` points at
/// a directory it removes afterwards: libFuzzer exits without running destructors).
fn scratch_root() -> &'static Path {
    static ROOT: OnceLock<PathBuf> = OnceLock::new();
    ROOT.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("pioscope-fuzz-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("scratch directory");
        dir
    })
}

/// Lets panics raised inside the Parquet and Arrow crates unwind to the store's reader, which
/// turns them into `StoreError::Damaged` (`pioscope_trace::store::scan`): parquet-rs does not
/// promise an error for every malformed page. Every other panic still goes to libFuzzer's
/// hook, which aborts: a crash found.
fn let_decoder_panics_unwind() {
    static ONCE: OnceLock<()> = OnceLock::new();
    ONCE.get_or_init(|| {
        let abort = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let file = info.location().map_or("", |l| l.file());
            let in_decoder = ["/parquet-", "/arrow-"].iter().any(|c| file.contains(c));
            if !in_decoder {
                abort(info);
            }
        }));
    });
}

/// A fresh copy of the base store in a directory of its own (the previous input's is removed:
/// a reader's background thread, such as the viewer's findings, may still hold it); returns
/// its directory.
pub fn fresh_store() -> PathBuf {
    static INPUTS: AtomicU64 = AtomicU64::new(0);
    let_decoder_panics_unwind();
    let n = INPUTS.fetch_add(1, Ordering::Relaxed);
    if n > 0 {
        let _ = std::fs::remove_dir_all(scratch_root().join(format!("store-{}", n - 1)));
    }
    let dir = scratch_root().join(format!("store-{n}"));
    std::fs::create_dir_all(&dir).expect("scratch store");
    for entry in std::fs::read_dir(base_store()).expect("base store") {
        let entry = entry.expect("base store entry");
        // Read and written whole: std::fs::copy's copy_file_range can fail with EINTR under
        // libFuzzer's timer signal, where read_to_end and write_all retry.
        let bytes = std::fs::read(entry.path()).expect("read base store");
        std::fs::write(dir.join(entry.file_name()), bytes).expect("copy base store");
    }
    dir
}

/// A fresh copy of the base store with `file` (a name such as `events.parquet`) holding
/// `bytes`; returns its directory.
pub fn store_with(file: &str, bytes: &[u8]) -> PathBuf {
    let dir = fresh_store();
    std::fs::write(dir.join(file), bytes).expect("write fuzz input");
    dir
}

/// The runtime the HTTP targets drive the router on (the handlers' blocking reads run on
/// its blocking pool).
fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("tokio runtime")
    })
}

/// Sends `GET uri` (with a loopback `Host`, as the page does) to `app` and reads the whole
/// answer; None when `uri` is not a URI at all (the HTTP layer refuses it before pioscope).
pub fn get(app: &Router, uri: &str) -> Option<(StatusCode, Vec<u8>)> {
    let request = Request::builder()
        .uri(uri)
        .header("host", "127.0.0.1")
        .body(Body::empty())
        .ok()?;
    runtime().block_on(async {
        let res = app.clone().oneshot(request).await.expect("router answers");
        let status = res.status();
        let body = res.into_body().collect().await.expect("body").to_bytes();
        Some((status, body.to_vec()))
    })
}

/// Opens the store at `dir` in the viewer and asks what the page asks first: the traces, the
/// rows, the whole window at a few zooms (index buckets and exact states), an event, the
/// statistics and a search. A damaged table may be answered with an error (even a 500: the
/// store could not be read); only a crash, a hang or unbounded memory is a failure.
pub fn view_store(dir: &Path) {
    let Ok(state) = pioscope_view::AppState::open(&[dir], &mut |_| {}) else {
        return;
    };
    let app = pioscope_view::app(state);
    for uri in [
        "/api/traces",
        "/api/rows",
        "/api/window?px=1",
        "/api/window?px=100",
        "/api/window?px=100000",
        "/api/window?px=100&height=1",
        "/api/event?id=0",
        "/api/stats",
        "/api/search?q=write",
    ] {
        get(&app, uri);
    }
}
