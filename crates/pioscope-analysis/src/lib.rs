//! pioscope-analysis: what a trace says, computed by streaming over the store's row groups
//! (never the whole trace in memory). Today: per-group statistics (`stats`).
#![warn(missing_docs)]

pub mod pass;
pub mod scope;
pub mod stats;

pub use scope::Scope;
pub use stats::{compute, GroupBy, Stats, StatsRow};
