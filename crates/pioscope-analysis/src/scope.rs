//! Which records an analysis counts: by default the application's own I/O (see
//! `pioscope_trace::scope`: POSIX and STDIO records on system files or on descriptors without
//! a file are left out); `Scope::All` counts everything.

use std::collections::HashSet;

use pioscope_trace::scope::{is_application_record, is_system_path};
use pioscope_trace::store::{Event, Trace};
use serde::Serialize;

/// What an analysis counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// The application's records (`pioscope_trace::scope::is_application_record`).
    #[default]
    Application,
    /// Every record.
    All,
}

/// Decides record by record, with the system files of one trace looked up once.
pub struct ScopeFilter {
    scope: Scope,
    system_files: HashSet<i32>,
}

impl ScopeFilter {
    /// The filter of `scope` for `trace`.
    pub fn new(trace: &Trace, scope: Scope) -> ScopeFilter {
        let system_files = trace
            .files
            .iter()
            .filter(|f| is_system_path(&f.path))
            .map(|f| f.file_id)
            .collect();
        ScopeFilter {
            scope,
            system_files,
        }
    }

    /// Whether `e` counts.
    pub fn keeps(&self, e: &Event<'_>) -> bool {
        self.scope == Scope::All
            || is_application_record(e.layer, e.file_id.map(|f| self.system_files.contains(&f)))
    }
}
