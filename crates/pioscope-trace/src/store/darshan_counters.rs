//! darshan.parquet: the counters of an imported Darshan log (`pioscope import darshan`), one row
//! per counter of one Darshan record. This file owns the row type, the writer and the reader;
//! the columns are documented in docs/FORMAT.md "darshan.parquet". Only imported stores have
//! the file.

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use arrow_array::{Array, ArrayRef, Float64Array, Int32Array, RecordBatch};
use parquet::arrow::ArrowWriter;

use super::reader::Trace;
use super::scan::Table;
use super::schema::{self, darshan as dc};
use super::writer::Dict;
use super::StoreError;

/// The imported Darshan counters table.
pub const DARSHAN_FILE: &str = "darshan.parquet";

/// The `rank` of a record Darshan reduced over every rank (a file shared by all of them).
pub const SHARED: i32 = -1;

/// One counter of one Darshan record.
#[derive(Clone, Debug, PartialEq)]
pub struct DarshanCounterRow {
    /// Darshan module (`POSIX`, `MPI-IO`, `STDIO`, `H5F`, `H5D`, `PNETCDF_FILE`, `LUSTRE`, ...).
    pub module: String,
    /// Rank, or `SHARED` for a record reduced over all ranks.
    pub rank: i32,
    /// The record's file (files.parquet `file_id`).
    pub file_id: i32,
    /// Layout component of a LUSTRE record (0 for every other module).
    pub component: i32,
    /// Darshan's counter name (`POSIX_BYTES_WRITTEN`, `POSIX_F_WRITE_TIME`, ...).
    pub counter: String,
    /// The value; None for a float counter Darshan left unset (NaN, infinite).
    pub value: Option<f64>,
}

/// Rows per row group.
const ROWS_PER_BATCH: usize = 1 << 20;

/// Writes darshan.parquet, rows as given (the importer writes them by module, file, rank).
pub(crate) fn write_darshan_counters(
    path: &Path,
    rows: &[DarshanCounterRow],
) -> Result<(), StoreError> {
    let schema = schema::darshan_schema();
    let file = File::create(path).map_err(|e| StoreError::io(path, e))?;
    let props = schema::whole_table_properties()
        .set_max_row_group_row_count(Some(ROWS_PER_BATCH))
        .build();
    let mut writer = ArrowWriter::try_new(file, schema.clone(), Some(props))?;
    for chunk in rows.chunks(ROWS_PER_BATCH) {
        let columns: Vec<ArrayRef> = vec![
            Dict::encode(chunk.iter().map(|r| r.module.as_str()))?,
            Arc::new(Int32Array::from_iter_values(chunk.iter().map(|r| r.rank))),
            Arc::new(Int32Array::from_iter_values(
                chunk.iter().map(|r| r.file_id),
            )),
            Arc::new(Int32Array::from_iter_values(
                chunk.iter().map(|r| r.component),
            )),
            Dict::encode(chunk.iter().map(|r| r.counter.as_str()))?,
            Arc::new(Float64Array::from_iter(chunk.iter().map(|r| r.value))),
        ];
        writer.write(&RecordBatch::try_new(schema.clone(), columns)?)?;
    }
    writer.close()?;
    Ok(())
}

/// Reads a darshan.parquet file.
pub(crate) fn read_darshan_counters(path: &Path) -> Result<Vec<DarshanCounterRow>, StoreError> {
    let table = Table::open_footer(path)?;
    let mut rows = Vec::new();
    for batch in table.read_all(&[])? {
        let c = table.columns(&batch);
        let (module, rank, file_id) = (c.str(dc::MODULE)?, c.int(dc::RANK)?, c.int(dc::FILE_ID)?);
        let (component, counter, value) = (
            c.int(dc::COMPONENT)?,
            c.str(dc::COUNTER)?,
            c.float(dc::VALUE)?,
        );
        for i in 0..c.rows() {
            rows.push(DarshanCounterRow {
                module: module.text(i).to_string(),
                rank: rank.value(i) as i32,
                file_id: file_id.value(i) as i32,
                component: component.value(i) as i32,
                counter: counter.text(i).to_string(),
                value: value.is_valid(i).then(|| value.value(i)),
            });
        }
    }
    Ok(rows)
}

impl Trace {
    /// The imported Darshan counters (darshan.parquet); empty for a store that was not
    /// imported from a Darshan log.
    pub fn darshan_counters(&self) -> Result<Vec<DarshanCounterRow>, StoreError> {
        let path = self.dir.join(DARSHAN_FILE);
        if !path.exists() {
            return Ok(Vec::new());
        }
        read_darshan_counters(&path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_round_trip_with_unset_values() {
        let dir = tempfile::tempdir().expect("tempdir");
        let rows = vec![
            DarshanCounterRow {
                module: "POSIX".into(),
                rank: SHARED,
                file_id: 3,
                component: 0,
                counter: "POSIX_BYTES_WRITTEN".into(),
                value: Some(1048576.0),
            },
            DarshanCounterRow {
                module: "POSIX".into(),
                rank: 2,
                file_id: 0,
                component: 0,
                counter: "POSIX_F_VARIANCE_RANK_TIME".into(),
                value: None,
            },
        ];
        let path = dir.path().join(DARSHAN_FILE);
        write_darshan_counters(&path, &rows).unwrap();
        assert_eq!(read_darshan_counters(&path).unwrap(), rows);
    }
}
