//! The fleet tables, jobs.parquet and findings.parquet: their column names (the constants every
//! reader uses), Arrow schemas and the streaming writer that turns rows into row groups as they
//! come, so a fleet of any size is written in bounded memory. The layout is documented in
//! docs/FORMAT.md "Fleet tables"; only signed integers, doubles, booleans and UTF-8 strings, so
//! Spark reads the tables as they are.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::{
    ArrayRef, BooleanArray, Float64Array, Int32Array, Int64Array, RecordBatch, StringArray,
};
use arrow_schema::{ArrowError, DataType, Field, Schema, SchemaRef};
use parquet::arrow::ArrowWriter;
use parquet::errors::ParquetError;
use pioscope_trace::store::schema::small_table_properties;

use super::{FindingRow, JobRow};

/// The jobs table.
pub const JOBS_FILE: &str = "jobs.parquet";
/// The findings table.
pub const FINDINGS_FILE: &str = "findings.parquet";

/// Rows buffered before they are written as one batch.
const BATCH_ROWS: usize = 4096;

/// Column names of jobs.parquet, in order.
pub mod jobs {
    #![allow(missing_docs)]
    pub const INPUT: &str = "input";
    pub const KIND: &str = "kind";
    pub const JOB: &str = "job";
    pub const ERROR: &str = "error";
    pub const JOB_ID: &str = "job_id";
    pub const COMMAND: &str = "command";
    pub const RANKS: &str = "ranks";
    pub const PROCESSES: &str = "processes";
    pub const HOSTS: &str = "hosts";
    pub const START_UNIX_NS: &str = "start_unix_ns";
    pub const DURATION_NS: &str = "duration_ns";
    pub const EVENTS: &str = "events";
    pub const PARTIAL: &str = "partial";
    pub const WALL_NS: &str = "wall_ns";
    pub const IO_NS: &str = "io_ns";
    pub const IO_SHARE: &str = "io_share";
    pub const BYTES_READ: &str = "bytes_read";
    pub const BYTES_WRITTEN: &str = "bytes_written";
    pub const FINDINGS_JUDGED: &str = "findings_judged";
    pub const FINDINGS: &str = "findings";
    pub const TOP_FINDING: &str = "top_finding";
    pub const TOP_FINDING_COST_NS: &str = "top_finding_cost_ns";
}

/// Column names of findings.parquet, in order.
pub mod findings {
    #![allow(missing_docs)]
    pub const INPUT: &str = "input";
    pub const JOB: &str = "job";
    pub const POSITION: &str = "position";
    pub const FINDING: &str = "finding";
    pub const SEVERITY: &str = "severity";
    pub const TITLE: &str = "title";
    pub const COST_NS: &str = "cost_ns";
    pub const COST_SHARE: &str = "cost_share";
}

/// Why a fleet table could not be written.
#[derive(Debug, thiserror::Error)]
pub enum TableError {
    /// The file could not be created.
    #[error("{}: {source}", path.display())]
    Io {
        /// The table.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// Arrow refused a batch.
    #[error(transparent)]
    Arrow(#[from] ArrowError),
    /// Parquet could not encode it.
    #[error(transparent)]
    Parquet(#[from] ParquetError),
}

/// A row type of a fleet table.
pub trait TableRow: Sized {
    /// The table's schema.
    fn schema() -> SchemaRef;
    /// `rows` as one batch of `schema()`.
    fn batch(rows: &[Self]) -> Result<RecordBatch, ArrowError>;
}

fn field(name: &str, data_type: DataType, nullable: bool) -> Field {
    Field::new(name, data_type, nullable)
}

fn strings<'a>(values: impl Iterator<Item = Option<&'a str>>) -> ArrayRef {
    Arc::new(values.collect::<StringArray>())
}

fn ints64(values: impl Iterator<Item = Option<i64>>) -> ArrayRef {
    Arc::new(values.collect::<Int64Array>())
}

/// An unsigned count as Spark's signed long (saturating: no count comes near 2^63).
fn long(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

impl TableRow for JobRow {
    fn schema() -> SchemaRef {
        use jobs::*;
        use DataType::{Boolean, Float64, Int32, Int64, Utf8};
        Arc::new(Schema::new(vec![
            field(INPUT, Utf8, false),
            field(KIND, Utf8, false),
            field(JOB, Utf8, false),
            field(ERROR, Utf8, true),
            field(JOB_ID, Int64, true),
            field(COMMAND, Utf8, true),
            field(RANKS, Int32, true),
            field(PROCESSES, Int64, true),
            field(HOSTS, Int32, true),
            field(START_UNIX_NS, Int64, true),
            field(DURATION_NS, Int64, true),
            field(EVENTS, Int64, true),
            field(PARTIAL, Boolean, true),
            field(WALL_NS, Int64, true),
            field(IO_NS, Int64, true),
            field(IO_SHARE, Float64, true),
            field(BYTES_READ, Int64, true),
            field(BYTES_WRITTEN, Int64, true),
            field(FINDINGS_JUDGED, Boolean, true),
            field(FINDINGS, Int32, true),
            field(TOP_FINDING, Utf8, true),
            field(TOP_FINDING_COST_NS, Int64, true),
        ]))
    }

    fn batch(rows: &[Self]) -> Result<RecordBatch, ArrowError> {
        let f = |get: &dyn Fn(&super::JobFigures) -> Option<i64>| {
            ints64(rows.iter().map(|r| r.figures.as_ref().and_then(get)))
        };
        let int32 = |get: &dyn Fn(&super::JobFigures) -> i64| -> ArrayRef {
            Arc::new(
                rows.iter()
                    .map(|r| {
                        r.figures
                            .as_ref()
                            .map(|x| i32::try_from(get(x)).unwrap_or(i32::MAX))
                    })
                    .collect::<Int32Array>(),
            )
        };
        let flag = |get: &dyn Fn(&super::JobFigures) -> bool| -> ArrayRef {
            Arc::new(
                rows.iter()
                    .map(|r| r.figures.as_ref().map(get))
                    .collect::<BooleanArray>(),
            )
        };
        let columns: Vec<ArrayRef> = vec![
            strings(rows.iter().map(|r| Some(r.input.as_str()))),
            strings(rows.iter().map(|r| Some(r.kind.name()))),
            strings(rows.iter().map(|r| Some(r.job.as_str()))),
            strings(rows.iter().map(|r| r.error.as_deref())),
            f(&|x| x.job_id),
            strings(
                rows.iter()
                    .map(|r| r.figures.as_ref().and_then(|x| x.command.as_deref())),
            ),
            int32(&|x| i64::from(x.ranks)),
            f(&|x| Some(long(x.processes))),
            int32(&|x| long(x.hosts)),
            f(&|x| Some(x.start_unix_ns)),
            f(&|x| Some(x.duration_ns)),
            f(&|x| Some(long(x.events))),
            flag(&|x| x.partial),
            f(&|x| Some(x.wall_ns)),
            f(&|x| Some(x.io_ns)),
            Arc::new(
                rows.iter()
                    .map(|r| r.figures.as_ref().map(|x| x.io_share))
                    .collect::<Float64Array>(),
            ),
            f(&|x| Some(long(x.bytes_read))),
            f(&|x| Some(long(x.bytes_written))),
            flag(&|x| x.findings_judged),
            int32(&|x| i64::from(x.findings)),
            strings(
                rows.iter()
                    .map(|r| r.figures.as_ref().and_then(|x| x.top_finding.as_deref())),
            ),
            f(&|x| x.top_finding_cost_ns),
        ];
        RecordBatch::try_new(Self::schema(), columns)
    }
}

impl TableRow for FindingRow {
    fn schema() -> SchemaRef {
        use findings::*;
        use DataType::{Float64, Int32, Int64, Utf8};
        Arc::new(Schema::new(vec![
            field(INPUT, Utf8, false),
            field(JOB, Utf8, false),
            field(POSITION, Int32, false),
            field(FINDING, Utf8, false),
            field(SEVERITY, Utf8, false),
            field(TITLE, Utf8, false),
            field(COST_NS, Int64, false),
            field(COST_SHARE, Float64, true),
        ]))
    }

    fn batch(rows: &[Self]) -> Result<RecordBatch, ArrowError> {
        let columns: Vec<ArrayRef> = vec![
            strings(rows.iter().map(|r| Some(r.input.as_str()))),
            strings(rows.iter().map(|r| Some(r.job.as_str()))),
            Arc::new(Int32Array::from_iter_values(
                rows.iter()
                    .map(|r| i32::try_from(r.position).unwrap_or(i32::MAX)),
            )),
            strings(rows.iter().map(|r| Some(r.finding.as_str()))),
            strings(rows.iter().map(|r| Some(r.severity))),
            strings(rows.iter().map(|r| Some(r.title.as_str()))),
            ints64(rows.iter().map(|r| Some(r.cost_ns))),
            Arc::new(rows.iter().map(|r| r.cost_share).collect::<Float64Array>()),
        ];
        RecordBatch::try_new(Self::schema(), columns)
    }
}

/// Writes one fleet table row by row, a batch at a time.
pub struct TableWriter<R: TableRow> {
    writer: ArrowWriter<File>,
    pending: Vec<R>,
    rows: u64,
}

impl<R: TableRow> TableWriter<R> {
    /// Creates the table file `path`.
    pub fn create(path: &Path) -> Result<Self, TableError> {
        let file = File::create(path).map_err(|source| TableError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let writer = ArrowWriter::try_new(file, R::schema(), Some(small_table_properties()))?;
        Ok(TableWriter {
            writer,
            pending: Vec::with_capacity(BATCH_ROWS),
            rows: 0,
        })
    }

    /// Adds a row.
    pub fn push(&mut self, row: R) -> Result<(), TableError> {
        self.pending.push(row);
        self.rows += 1;
        if self.pending.len() >= BATCH_ROWS {
            self.flush()?;
        }
        Ok(())
    }

    /// Rows pushed so far.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    fn flush(&mut self) -> Result<(), TableError> {
        if !self.pending.is_empty() {
            self.writer.write(&R::batch(&self.pending)?)?;
            self.pending.clear();
        }
        Ok(())
    }

    /// Writes what is pending and the footer.
    pub fn finish(mut self) -> Result<(), TableError> {
        self.flush()?;
        self.writer.close()?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fleet::{failed, InputKind, JobFigures};
    use arrow_array::Array;
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

    #[test]
    fn rows_keep_their_values_and_errors_their_nulls() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join(JOBS_FILE);
        let mut w = TableWriter::<JobRow>::create(&path).expect("create");
        let mut ok = failed("a", InputKind::Trace, "a", String::new());
        ok.error = None;
        ok.figures = Some(JobFigures {
            ranks: 4,
            io_ns: 123,
            bytes_written: 1 << 40,
            top_finding: Some("small-requests".into()),
            ..JobFigures::default()
        });
        w.push(ok).expect("push");
        w.push(failed("b", InputKind::Darshan, "b", "damaged".into()))
            .expect("push");
        assert_eq!(w.rows(), 2);
        w.finish().expect("finish");
        let reader = ParquetRecordBatchReaderBuilder::try_new(File::open(&path).expect("open"))
            .expect("footer")
            .build()
            .expect("reader");
        let batches: Vec<RecordBatch> = reader.map(|b| b.expect("batch")).collect();
        let b = &batches[0];
        assert_eq!(b.schema(), JobRow::schema());
        let col = |name: &str| b.column_by_name(name).expect(name).clone();
        let io = col(jobs::IO_NS);
        let io = io.as_any().downcast_ref::<Int64Array>().expect("i64");
        assert_eq!((io.value(0), io.is_null(1)), (123, true));
        let written = col(jobs::BYTES_WRITTEN);
        let written = written.as_any().downcast_ref::<Int64Array>().expect("i64");
        assert_eq!(written.value(0), 1 << 40);
        let error = col(jobs::ERROR);
        let error = error.as_any().downcast_ref::<StringArray>().expect("str");
        assert_eq!((error.is_null(0), error.value(1)), (true, "damaged"));
        let kind = col(jobs::KIND);
        let kind = kind.as_any().downcast_ref::<StringArray>().expect("str");
        assert_eq!((kind.value(0), kind.value(1)), ("trace", "darshan"));
    }
}
