//! The timeline viewer behind `pioscope view`: an axum server answering window queries from
//! the level-of-detail index (lod.parquet, built at merge time or on first open) and the
//! page-pruned events table, and serving the page embedded from viewer/.
//!
//! `app(state)` is the whole server as a `Router`, so tests call it with tower's `oneshot`
//! without a socket; `serve` binds it (loopback unless told otherwise) and runs until Ctrl-C.
//! Either answers only requests whose `Host` is loopback or the bound address (`host`).
#![warn(missing_docs)]

pub mod api;
pub mod assets;
pub mod counters;
pub mod darshan;
pub mod details;
pub mod findings;
pub mod host;
pub mod model;
pub mod row_buckets;
pub mod row_groups;
pub mod row_states;
pub mod search;
pub mod stats;
pub mod window;

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

use axum::Router;
use pioscope_trace::store::StoreError;

pub use model::TraceView;

/// What every handler shares: the open traces (one or two) and their findings.
#[derive(Clone, Debug)]
pub struct AppState {
    /// Index 0 and, side by side, 1.
    pub traces: Arc<Vec<Arc<TraceView>>>,
    /// Findings per trace, computed in the background.
    pub findings: Arc<Vec<findings::FindingsCell>>,
}

impl AppState {
    /// Opens the traces (building a missing index, telling `note`) and starts computing their
    /// findings.
    pub fn open(dirs: &[&Path], note: &mut dyn FnMut(&str)) -> Result<AppState, StoreError> {
        let mut traces = Vec::new();
        for (i, d) in dirs.iter().enumerate() {
            traces.push(Arc::new(TraceView::open(d, i, note)?));
        }
        let findings = traces
            .iter()
            .map(|t| findings::FindingsCell::start(t.clone()))
            .collect();
        Ok(AppState {
            traces: Arc::new(traces),
            findings: Arc::new(findings),
        })
    }
}

/// The whole server, answering loopback `Host`s only.
pub fn app(state: AppState) -> Router {
    app_for(state, host::AllowedHosts::loopback())
}

/// The whole server, answering the `Host`s `allowed` lets through.
pub fn app_for(state: AppState, allowed: host::AllowedHosts) -> Router {
    api::router(state).layer(axum::middleware::from_fn_with_state(allowed, host::guard))
}

/// Serves `app` on a bound listener until Ctrl-C (or `shutdown` resolves).
pub async fn serve(
    listener: tokio::net::TcpListener,
    state: AppState,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let allowed = host::AllowedHosts::bound_to(listener.local_addr()?.ip());
    axum::serve(listener, app_for(state, allowed))
        .with_graceful_shutdown(shutdown)
        .await
}

/// Binds `addr` (port 0: any free port) and returns the listener and its real address.
pub async fn bind(addr: SocketAddr) -> std::io::Result<(tokio::net::TcpListener, SocketAddr)> {
    let l = tokio::net::TcpListener::bind(addr).await?;
    let a = l.local_addr()?;
    Ok((l, a))
}

/// Runs the server on its own runtime until Ctrl-C: binds `addr` (when its port is taken and
/// `fallback` is set, any free port on the same address), calls `ready` with the address
/// bound, then serves.
pub fn run_blocking(
    addr: SocketAddr,
    fallback: bool,
    state: AppState,
    ready: impl FnOnce(SocketAddr),
) -> std::io::Result<()> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    rt.block_on(async move {
        let (listener, bound) = match bind(addr).await {
            Ok(x) => x,
            Err(e) if fallback && e.kind() == std::io::ErrorKind::AddrInUse => {
                bind(SocketAddr::new(addr.ip(), 0)).await?
            }
            Err(e) => return Err(e),
        };
        ready(bound);
        serve(listener, state, async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
    })
}
