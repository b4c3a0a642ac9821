//! The machine model (docs/MODEL.md) and the discrete-event simulator behind `pioscope
//! simulate`, `calibrate`, `compare` and `bounds`.
//!
//! - `model`: the system description (TOML), presets and `--set` overrides.
//! - `program`: the primitive operations a simulated rank runs, and what the engine reports.

pub mod model;
pub mod program;
