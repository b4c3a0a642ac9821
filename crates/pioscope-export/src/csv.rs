//! CSV export: one row per event, every column of events.parquet in its order, plus the file's
//! path and file system resolved from files.parquet. Empty cells are nulls.

use std::path::Path;

use pioscope_trace::store::schema::{events_schema, files};
use pioscope_trace::store::{Event, Trace};

use crate::{for_each_event, ExportError, Options, Progress, Summary};

/// The header: events.parquet's columns, then `path` and `fs_type`.
pub fn header() -> Vec<String> {
    let mut h: Vec<String> = events_schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    h.push(files::PATH.to_string());
    h.push(files::FS_TYPE.to_string());
    h
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map_or(String::new(), |v| v.to_string())
}

/// One event's cells, in `header()` order.
pub fn row(trace: &Trace, e: &Event<'_>) -> Vec<String> {
    let file = e.file_id.and_then(|id| {
        trace
            .files
            .binary_search_by_key(&id, |f| f.file_id)
            .ok()
            .map(|i| &trace.files[i])
    });
    let mpi = e.mpi.get();
    vec![
        e.id.to_string(),
        e.rank.to_string(),
        e.process.to_string(),
        e.thread.to_string(),
        e.start_ns.to_string(),
        e.duration_ns.to_string(),
        e.layer.name().to_string(),
        e.func.to_string(),
        e.depth.to_string(),
        opt(e.parent),
        opt(e.file_id),
        opt(e.offset),
        e.size.to_string(),
        e.result.to_string(),
        e.error.to_string(),
        e.flags.to_string(),
        e.collective.to_string(),
        opt(e.instance),
        opt(mpi.request),
        opt(mpi.peer),
        opt(mpi.tag),
        opt(mpi.root),
        opt(mpi.comm_size),
        opt(e.comm),
        opt(e.region),
        opt(file.map(|f| f.path.as_str())),
        opt(file.map(|f| f.fs_type.as_str())),
    ]
}

/// Writes the events of `trace` as CSV to `out`.
pub fn export(
    trace: &Trace,
    out: &Path,
    opts: &Options,
    progress: Progress<'_>,
) -> Result<Summary, ExportError> {
    let mut w = ::csv::Writer::from_writer(crate::create_output(out)?);
    w.write_record(header())?;
    let mut summary = Summary::default();
    for_each_event(trace, opts, progress, |e| {
        w.write_record(row(trace, e))?;
        summary.events += 1;
        Ok(())
    })?;
    w.flush().map_err(ExportError::io(out))?;
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_has_every_event_column_then_the_path() {
        let h = header();
        assert_eq!(h.len(), events_schema().fields().len() + 2);
        assert_eq!(h[0], "id");
        assert_eq!(h[h.len() - 2], "path");
    }
}
