//! The machine model (docs/MODEL.md) and the discrete-event simulator behind `pioscope
//! simulate`, `calibrate`, `compare` and `bounds`.
//!
//! - `model`: the system description (TOML), presets and `--set` overrides.
//! - `program`: the primitive operations a simulated rank runs, and what the engine reports.

pub mod model;
pub mod program;
// sim-model: loading models (presets, units, --set), analytic bounds, calibration fits.
pub mod bounds;
pub mod calibrate;
pub mod load;
pub mod units;
// sim-mpiio: ROMIO's strategies, workloads, trace replay, the simulated trace store.
pub mod output;
pub mod replay;
pub mod romio;
pub mod workload;
// sim-engine: the discrete-event engine, flow-level network, storage servers, striping.
pub mod engine;
pub mod layout;
pub mod network;
pub mod storage;
