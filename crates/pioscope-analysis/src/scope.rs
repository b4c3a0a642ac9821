//! Which records an analysis counts: by default the application's own I/O (see
//! `pioscope_trace::scope`: POSIX and STDIO records on system files or on descriptors without
//! a file are left out), and not the records of storage server daemons traced beside the job
//! (containers of kind `server`: their POSIX calls are the servers', not the application's);
//! `Scope::All` counts everything.

use std::collections::HashSet;

use pioscope_trace::functions::Layer;
use pioscope_trace::scope::{is_application_record, is_system_path};
use pioscope_trace::store::meta::ContainerKind;
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
    /// Processes that are traced server daemons.
    servers: HashSet<i32>,
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
        let servers = trace
            .meta
            .processes
            .iter()
            .filter(|p| p.kind == ContainerKind::Server)
            .map(|p| p.process as i32)
            .collect();
        ScopeFilter {
            scope,
            system_files,
            servers,
        }
    }

    /// Whether `e` counts.
    pub fn keeps(&self, e: &Event<'_>) -> bool {
        self.scope == Scope::All
            || (is_application_record(e.layer, e.file_id.map(|f| self.system_files.contains(&f)))
                && !(matches!(e.layer, Layer::Posix | Layer::Stdio)
                    && self.servers.contains(&e.process)))
    }
}
