//! Raw per-process trace files, as written by the C runtime (runtime/src/raw_format.h).
//!
//! `format` mirrors the C layout, `counters` owns the sampler's counter files (`*.pcnt`), `reader` decodes a file into typed records, and `fixture`
//! (tests only) writes files the same way the runtime does.

pub mod counters;
pub mod format;
pub mod reader;

#[cfg(any(test, feature = "fixture"))]
pub mod fixture;

pub use reader::{
    decode_raw, read_raw_file, read_raw_file_with, ClockSync, Damage, FileHeader, RawError,
    RawEvent, RawFile, RawSettings, RawString, UNFINISHED_REASON,
};
