//! The machine model: its TOML schema (`schema`, re-exported here: `model::System` and the
//! sections it holds), loading it (`load`: presets, files, `--set` overrides, validation),
//! the unit strings model files are written in (`units`), analytic bounds from it (`bounds`)
//! and calibration fits that produce it (`calibrate`, with `daemon_cpu` for the node CPU of a
//! FUSE mount's daemons, and `runs_median` to fit several calibrations' medians). Every field is described in
//! docs/MODEL.md.

pub mod bounds;
pub mod calibrate;
pub mod daemon_cpu;
pub mod load;
pub mod rates;
pub mod runs_median;
mod schema;
pub mod units;

pub use schema::*;
