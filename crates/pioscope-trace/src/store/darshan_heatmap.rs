//! darshan_heatmap.parquet: the HEATMAP module of an imported Darshan log (`pioscope import
//! darshan`): bytes read and written per rank and time bin, one table per API Darshan counts
//! (POSIX, MPIIO, STDIO, ...). This file owns the row type, the writer and the reader; the
//! columns are documented in docs/FORMAT.md "darshan_heatmap.parquet". Only stores imported
//! from a log with a HEATMAP module have the file.

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use arrow_array::{ArrayRef, Int32Array, Int64Array, RecordBatch};
use parquet::arrow::ArrowWriter;

use super::reader::Trace;
use super::scan::Table;
use super::schema::{self, darshan_heatmap as hc};
use super::writer::Dict;
use super::StoreError;

/// The imported Darshan heat map table.
pub const DARSHAN_HEATMAP_FILE: &str = "darshan_heatmap.parquet";

/// One time bin of one rank of one API, with I/O in it (bins without I/O have no row).
#[derive(Clone, Debug, PartialEq)]
pub struct DarshanHeatmapRow {
    /// The API whose bytes the bins count (`POSIX`, `MPIIO`, `STDIO`, ...).
    pub module: String,
    /// Rank.
    pub rank: i32,
    /// The bin's number (0 at the job's start).
    pub bin: i32,
    /// The bin's start since the job's start, ns (`bin * width_ns`).
    pub start_ns: i64,
    /// The bins' width, ns.
    pub width_ns: i64,
    /// Bytes read in the bin.
    pub read_bytes: i64,
    /// Bytes written in the bin.
    pub write_bytes: i64,
}

/// Writes darshan_heatmap.parquet, rows as given (the importer writes them by module, rank,
/// bin).
pub(crate) fn write_darshan_heatmap(
    path: &Path,
    rows: &[DarshanHeatmapRow],
) -> Result<(), StoreError> {
    let schema = schema::darshan_heatmap_schema();
    let file = File::create(path).map_err(|e| StoreError::io(path, e))?;
    let mut writer = ArrowWriter::try_new(
        file,
        schema.clone(),
        Some(schema::base_properties().build()),
    )?;
    let int = |f: fn(&DarshanHeatmapRow) -> i64| -> ArrayRef {
        Arc::new(Int64Array::from_iter_values(rows.iter().map(f)))
    };
    let columns: Vec<ArrayRef> = vec![
        Dict::encode(rows.iter().map(|r| r.module.as_str()))?,
        Arc::new(Int32Array::from_iter_values(rows.iter().map(|r| r.rank))),
        Arc::new(Int32Array::from_iter_values(rows.iter().map(|r| r.bin))),
        int(|r| r.start_ns),
        int(|r| r.width_ns),
        int(|r| r.read_bytes),
        int(|r| r.write_bytes),
    ];
    writer.write(&RecordBatch::try_new(schema, columns)?)?;
    writer.close()?;
    Ok(())
}

/// Reads a darshan_heatmap.parquet file.
fn read_darshan_heatmap(path: &Path) -> Result<Vec<DarshanHeatmapRow>, StoreError> {
    let table = Table::open_footer(path)?;
    let mut rows = Vec::new();
    for batch in table.read_all(&[])? {
        let c = table.columns(&batch);
        let (module, rank, bin) = (c.str(hc::MODULE)?, c.int(hc::RANK)?, c.int(hc::BIN)?);
        let (start, width) = (c.int(hc::START_NS)?, c.int(hc::WIDTH_NS)?);
        let (read, write) = (c.int(hc::READ_BYTES)?, c.int(hc::WRITE_BYTES)?);
        for i in 0..c.rows() {
            rows.push(DarshanHeatmapRow {
                module: module.text(i).to_string(),
                rank: rank.value(i) as i32,
                bin: bin.value(i) as i32,
                start_ns: start.value(i),
                width_ns: width.value(i),
                read_bytes: read.value(i),
                write_bytes: write.value(i),
            });
        }
    }
    Ok(rows)
}

impl Trace {
    /// The imported Darshan heat map (darshan_heatmap.parquet); empty for a store without
    /// one.
    pub fn darshan_heatmap(&self) -> Result<Vec<DarshanHeatmapRow>, StoreError> {
        let path = self.dir.join(DARSHAN_HEATMAP_FILE);
        if !path.exists() {
            return Ok(Vec::new());
        }
        read_darshan_heatmap(&path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_round_trip() {
        let dir = tempfile::tempdir().expect("tempdir");
        let rows = vec![
            DarshanHeatmapRow {
                module: "POSIX".into(),
                rank: 0,
                bin: 3,
                start_ns: 3_000_000_000,
                width_ns: 1_000_000_000,
                read_bytes: 0,
                write_bytes: 1 << 20,
            },
            DarshanHeatmapRow {
                module: "STDIO".into(),
                rank: 7,
                bin: 0,
                start_ns: 0,
                width_ns: 500_000_000,
                read_bytes: 12,
                write_bytes: 0,
            },
        ];
        let path = dir.path().join(DARSHAN_HEATMAP_FILE);
        write_darshan_heatmap(&path, &rows).unwrap();
        assert_eq!(read_darshan_heatmap(&path).unwrap(), rows);
    }
}
