//! Which records an analysis counts: by default the application's own I/O (see
//! `pioscope_trace::scope`: POSIX and STDIO records on system files, on ROMIO's hidden helper
//! files or on descriptors without a file are left out), nothing the MPI library does inside
//! `MPI_Init`/`MPI_Finalize` (hwloc reading `/sys`, shared-memory set-up, another tool's log
//! written at finalize), and not the records of storage server daemons traced beside the job
//! (containers of kind `server`: their POSIX calls are the servers', not the application's);
//! `Scope::All` counts everything.

use pioscope_trace::functions::{by_name, Layer};
use pioscope_trace::scope::{is_application_record, is_hidden_path};
use pioscope_trace::store::meta::ContainerKind;
use pioscope_trace::store::{Event, Trace};
use rustc_hash::{FxHashMap, FxHashSet};
use serde::Serialize;

/// What an analysis counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// The application's records (`pioscope_trace::scope::is_application_record`), outside
    /// `MPI_Init` and `MPI_Finalize`.
    #[default]
    Application,
    /// Every record.
    All,
}

/// The MPI calls whose insides are the MPI library's start-up and shut-down, not the
/// application's.
const LIFECYCLE_CALLS: [&str; 3] = ["MPI_Init", "MPI_Init_thread", "MPI_Finalize"];

/// Decides record by record, with the hidden files of one trace looked up once. It follows
/// the store order (rank, then start time) to know which records start inside an
/// `MPI_Init`/`MPI_Finalize` of their process.
pub struct ScopeFilter {
    scope: Scope,
    /// Per `file_id` below the number of files (files.parquet numbers them 0..), whether the
    /// file is hidden: a table read per record, no hashing.
    hidden_files: Vec<bool>,
    /// Hidden files with another id (a damaged files.parquet's).
    hidden_others: FxHashSet<i32>,
    /// Per process, the span (start, end) of its last `MPI_Init`/`MPI_Finalize`.
    lifecycle: FxHashMap<i32, (i64, i64)>,
    /// The process of the last record and its entry of `lifecycle`: records come in runs of
    /// one process, so most look up no map.
    last: Option<(i32, Option<(i64, i64)>)>,
    /// Processes that are traced server daemons.
    servers: FxHashSet<i32>,
    /// The functions.def ids of `LIFECYCLE_CALLS` (0 for one this build does not know): a
    /// record is told by its id, its name compared only when it has none.
    lifecycle_ids: [u16; 3],
}

impl ScopeFilter {
    /// The filter of `scope` for `trace`.
    pub fn new(trace: &Trace, scope: Scope) -> ScopeFilter {
        let mut hidden_files = vec![false; trace.files.len()];
        let mut hidden_others = FxHashSet::default();
        for f in trace.files.iter().filter(|f| is_hidden_path(&f.path)) {
            match usize::try_from(f.file_id)
                .ok()
                .and_then(|i| hidden_files.get_mut(i))
            {
                Some(hidden) => *hidden = true,
                None => {
                    hidden_others.insert(f.file_id);
                }
            }
        }
        let servers = trace
            .meta
            .processes
            .iter()
            .filter(|p| p.kind == ContainerKind::Server)
            .map(|p| p.process as i32)
            .collect();
        ScopeFilter {
            scope,
            hidden_files,
            hidden_others,
            lifecycle: FxHashMap::default(),
            last: None,
            servers,
            lifecycle_ids: LIFECYCLE_CALLS.map(|f| by_name(f).map_or(0, |f| f.id)),
        }
    }

    /// Whether the pass keeps some records apart as a traced server daemon's: the scope is not
    /// `All` and the trace has a server (else [`ScopeFilter::is_server_record`] need not be
    /// asked).
    pub fn separates_servers(&self) -> bool {
        self.scope != Scope::All && !self.servers.is_empty()
    }

    /// Whether `e` is a POSIX or STDIO record of a traced server daemon: the server's own work,
    /// not the application's.
    pub fn is_server_record(&self, e: &Event<'_>) -> bool {
        matches!(e.layer, Layer::Posix | Layer::Stdio)
            && !self.servers.is_empty()
            && self.servers.contains(&e.process)
    }

    /// Whether `e` counts (call once per record, in store order).
    pub fn keeps(&mut self, e: &Event<'_>) -> bool {
        if self.scope == Scope::All {
            return true;
        }
        let lifecycle = match e.func_id {
            0 => LIFECYCLE_CALLS.contains(&e.func),
            id => self.lifecycle_ids.contains(&id),
        };
        if lifecycle {
            let span = (e.start_ns, e.end_ns());
            self.lifecycle.insert(e.process, span);
            self.last = Some((e.process, Some(span)));
            return true;
        }
        let span = match self.last {
            Some((process, span)) if process == e.process => span,
            _ => {
                let span = self.lifecycle.get(&e.process).copied();
                self.last = Some((e.process, span));
                span
            }
        };
        let inside_lifecycle =
            span.is_some_and(|(start, end)| e.start_ns >= start && e.start_ns < end);
        let hidden = |f: i32| match usize::try_from(f)
            .ok()
            .and_then(|i| self.hidden_files.get(i))
        {
            Some(&h) => h,
            None => self.hidden_others.contains(&f),
        };
        !inside_lifecycle
            && !self.is_server_record(e)
            && is_application_record(e.layer, e.file_id.map(hidden))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{self, ev, io, FILE_A};

    /// Records that start inside MPI_Init or MPI_Finalize are the library's; those before,
    /// between and after are the application's.
    #[test]
    fn init_and_finalize_insides_are_left_out() {
        let dir = tempfile::tempdir().expect("tmp");
        let mut b = testutil::rank(0, 1, "n1");
        b.events(
            0,
            &[
                io("pwrite", 0, 10, FILE_A, 0, 8),
                ev("MPI_Init", 100, 1000),
                io("pread", 200, 10, FILE_A, 0, 8).depth(1),
                ev("MPI_Barrier", 300, 10).depth(1),
                io("pwrite", 2000, 10, FILE_A, 0, 8),
                ev("MPI_Finalize", 3000, 1000),
                io("pwrite", 3500, 10, FILE_A, 0, 8).depth(1),
                io("pwrite", 5000, 10, FILE_A, 0, 8),
            ],
        );
        let t = testutil::trace(dir.path(), vec![b]);
        let kept = |scope| {
            let mut f = ScopeFilter::new(&t, scope);
            let mut v = Vec::new();
            for batch in t.events().expect("events") {
                for e in batch.expect("batch").iter() {
                    if f.keeps(&e) {
                        v.push((e.func.to_string(), e.start_ns));
                    }
                }
            }
            v
        };
        let app = kept(Scope::Application);
        let starts: Vec<i64> = app.iter().map(|(_, s)| *s).collect();
        assert_eq!(starts, [0, 100, 2000, 3000, 5000]);
        assert_eq!(kept(Scope::All).len(), 8);
    }
}
