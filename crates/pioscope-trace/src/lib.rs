//! pioscope-trace: the raw files the runtime writes, the merge that turns them into a trace
//! store, and the store itself (Parquet tables + meta.json) with a streaming reader.
//!
//! Data flows `raw` → `merge` → `store` (or a Darshan log → `import` → `store`); analyses only
//! ever see `store`.
#![warn(missing_docs)]

pub mod colours;
pub mod functions;
pub mod import;
pub mod input_file;
pub mod merge;
pub mod raw;
pub mod scope;
pub mod store;
#[cfg(any(test, feature = "fixture"))]
pub mod test_script;
pub mod units;

pub use functions::{FuncInfo, Layer, OpKind};
