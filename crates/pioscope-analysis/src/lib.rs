//! pioscope-analysis: what a trace says, computed by streaming over the store's row groups
//! (never the whole trace in memory). Every analysis is a `pass::Visitor`: statistics
//! (`stats`), time breakdowns (`breakdown`), access patterns (`patterns`), aggregators and data
//! sieving (`aggregation`), storage servers (`servers`) and the finding rules (`findings`); `profile` runs them all in one
//! pass for `pioscope report`; `compare` lines a run up with its simulation call by call, and
//! `diff` two runs' profiles and calls; `fleet` makes a profile one row of the fleet tables.
#![warn(missing_docs)]

pub mod aggregation;
pub mod breakdown;
pub mod class;
pub mod compare;
pub mod counters;
pub mod darshan;
pub mod diff;
pub mod findings;
pub mod fleet;
pub mod heatmap;
pub mod hints;
mod lookup;
pub mod nesting;
pub mod pass;
pub mod patterns;
pub mod profile;
pub mod scope;
pub mod servers;
pub mod stats;
#[cfg(test)]
mod testutil;

pub use profile::{profile, Profile};
pub use scope::Scope;
pub use stats::{compute, GroupBy, Stats, StatsRow};
