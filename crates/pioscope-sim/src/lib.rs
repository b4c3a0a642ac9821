//! The machine model (docs/MODEL.md) and the discrete-event simulator behind `pioscope
//! simulate`, `calibrate`, `compare` and `bounds`.
//!
//! Data flows `model` → `mpiio` → `program` → `engine` → `mpiio::output`:
//! - `model`: the system description (TOML schema, presets, units, `--set` overrides), its
//!   analytic bounds and the calibration fits that produce it.
//! - `mpiio`: ROMIO's strategies, generated workloads, trace replay, and the simulated trace
//!   store; they compile MPI-IO calls into a `program::Job`.
//! - `program`: the contract between `mpiio` and `engine`: the primitive operations a
//!   simulated rank runs, and what the engine reports.
//! - `engine`: the discrete-event engine, with the flow-level network and the storage servers
//!   (disks, caches, striping) beneath it.
#![warn(missing_docs)]

pub mod engine;
pub mod model;
pub mod mpiio;
pub mod program;
