//! Range reads of a store table, the one Parquet reader under every other: row groups and
//! pages are pruned by their min/max statistics (the page index), so a (rank, time window) of
//! events.parquet or a (level, rows, time window) of lod.parquet reads only the pages that can
//! hold it, and only the columns asked for. Read the batches with [`Table::columns`].

use std::ops::Range;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReader,
    ParquetRecordBatchReaderBuilder, RowSelection,
};
use parquet::arrow::ProjectionMask;
use parquet::file::metadata::PageIndexPolicy;
use parquet::file::page_index::column_index::ColumnIndexMetaData;
use parquet::file::reader::ChunkReader;
use parquet::file::statistics::Statistics;

use super::chunk_bytes::ChunkBytes;
use super::columns::Columns;
use super::StoreError;

/// An integer column's allowed values: a union of inclusive ranges.
#[derive(Clone, Debug)]
pub struct Pred {
    /// Column name (a constant of `schema` or `lod::columns`).
    pub column: &'static str,
    /// Inclusive (lo, hi) ranges.
    pub ranges: Vec<(i64, i64)>,
}

impl Pred {
    /// One inclusive range.
    pub fn range(column: &'static str, lo: i64, hi: i64) -> Pred {
        Pred {
            column,
            ranges: vec![(lo, hi)],
        }
    }

    fn overlaps(&self, min: i64, max: i64) -> bool {
        self.ranges.iter().any(|&(lo, hi)| min <= hi && max >= lo)
    }
}

/// What [`Table::prefetch`] hands over, in file order.
pub enum Prefetched {
    /// The next batch of rows.
    Batch(RecordBatch),
    /// Every row of this row group has been handed over.
    RowGroupEnd(usize),
}

/// One row group's rows that may match.
#[derive(Clone, Debug)]
pub struct Selected {
    /// Row group index.
    pub row_group: usize,
    /// File row number of its first row.
    pub first_row: u64,
    /// Row ranges inside the row group (sorted, disjoint).
    pub ranges: Vec<Range<usize>>,
}

impl Selected {
    /// Rows selected.
    pub fn rows(&self) -> usize {
        self.ranges.iter().map(|r| r.len()).sum()
    }
}

/// An open Parquet table with its footer and (unless opened with [`Table::open_footer`]) its
/// page index.
#[derive(Clone, Debug)]
pub struct Table {
    path: PathBuf,
    meta: ArrowReaderMetadata,
    /// File row number of each row group's first row.
    starts: Vec<u64>,
}

fn int_stats(s: Option<&Statistics>) -> Option<(i64, i64)> {
    match s? {
        Statistics::Int32(v) => Some((*v.min_opt()? as i64, *v.max_opt()? as i64)),
        Statistics::Int64(v) => Some((*v.min_opt()?, *v.max_opt()?)),
        _ => None,
    }
}

fn page_stats(ci: &ColumnIndexMetaData, page: usize) -> Option<(i64, i64)> {
    match ci {
        ColumnIndexMetaData::INT32(c) => {
            Some((*c.min_value(page)? as i64, *c.max_value(page)? as i64))
        }
        ColumnIndexMetaData::INT64(c) => Some((*c.min_value(page)?, *c.max_value(page)?)),
        _ => None,
    }
}

/// `schema` with its nullable dictionary-encoded string columns read as plain strings.
///
/// parquet-rs keeps a column chunk's dictionary only while every read of it finds a value:
/// a read that finds nulls only (a `region` column outside user regions, a `comm` column
/// before a rank's first MPI call) turns the chunk into plain values, which it then hashes
/// and compares row by row to rebuild a dictionary. That rebuild was most of the decoding of
/// events.parquet; reading these columns as plain strings copies each value once instead.
/// Readers take either form (`Columns::str`).
fn plain_nullable_strings(schema: &SchemaRef) -> SchemaRef {
    let fields: Vec<Field> = schema
        .fields()
        .iter()
        .map(|f| match f.data_type() {
            DataType::Dictionary(_, v) if f.is_nullable() && **v == DataType::Utf8 => {
                f.as_ref().clone().with_data_type(DataType::Utf8)
            }
            _ => f.as_ref().clone(),
        })
        .collect();
    Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone()))
}

/// Intersection of two sorted lists of disjoint ranges.
fn intersect(a: &[Range<usize>], b: &[Range<usize>]) -> Vec<Range<usize>> {
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::new();
    while i < a.len() && j < b.len() {
        let lo = a[i].start.max(b[j].start);
        let hi = a[i].end.min(b[j].end);
        if lo < hi {
            out.push(lo..hi);
        }
        if a[i].end < b[j].end {
            i += 1;
        } else {
            j += 1;
        }
    }
    out
}

thread_local! {
    /// Whether this thread is inside [`decoding`], where a panic becomes an error.
    static DECODING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether a panic on this thread now is one of the Parquet decoder's that [`decoding`] turns
/// into [`StoreError::Damaged`]: a panic hook stays quiet about it (the error says it).
pub fn panic_becomes_an_error() -> bool {
    DECODING.get()
}

/// Runs a step of the Parquet decoder on the table at `path`, turning a panic into
/// [`StoreError::Damaged`]: parquet-rs does not reject every malformed page with an error
/// (fuzzing found assertions deep in its level decoding), and a damaged table must be an error
/// naming it, not an abort of the whole program.
fn decoding<T>(path: &Path, step: impl FnOnce() -> Result<T, StoreError>) -> Result<T, StoreError> {
    let outer = DECODING.replace(true);
    let result = std::panic::catch_unwind(AssertUnwindSafe(step));
    DECODING.set(outer);
    result.unwrap_or_else(|panic| {
        let detail = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "the Parquet decoder failed".to_string());
        Err(StoreError::Damaged {
            path: path.to_path_buf(),
            detail,
        })
    })
}

/// The batches of one selection of a table ([`Table::reader`]); a decoder failure ends the
/// stream after its error.
pub struct TableBatches {
    path: PathBuf,
    reader: Option<ParquetRecordBatchReader>,
}

impl Iterator for TableBatches {
    type Item = Result<RecordBatch, StoreError>;

    fn next(&mut self) -> Option<Self::Item> {
        let reader = self.reader.as_mut()?;
        let next = decoding(&self.path, || Ok(reader.next().transpose()?));
        match next {
            Ok(Some(batch)) => Some(Ok(batch)),
            Ok(None) => None,
            Err(e) => {
                self.reader = None;
                Some(Err(e))
            }
        }
    }
}

impl Table {
    /// Opens `path` and loads its footer and page index (for page-pruned range reads).
    pub fn open(path: &Path) -> Result<Table, StoreError> {
        Table::load(path, PageIndexPolicy::Optional)
    }

    /// Opens `path` and loads only its footer: row groups are still pruned by their
    /// statistics, pages are not. For whole-table streams and the many cursors of a k-way
    /// merge, which would not repay reading the page index.
    pub fn open_footer(path: &Path) -> Result<Table, StoreError> {
        Table::load(path, PageIndexPolicy::Skip)
    }

    fn load(path: &Path, page_index: PageIndexPolicy) -> Result<Table, StoreError> {
        let file = crate::input_file::open_regular(path).map_err(|e| StoreError::io(path, e))?;
        let options = ArrowReaderOptions::new().with_page_index_policy(page_index);
        let meta = decoding(path, || {
            let meta = ArrowReaderMetadata::load(&file, options.clone())?;
            let plain = plain_nullable_strings(meta.schema());
            Ok(ArrowReaderMetadata::try_new(
                meta.metadata().clone(),
                options.with_schema(plain),
            )?)
        })?;
        let mut starts = Vec::new();
        let mut n = 0u64;
        for rg in meta.metadata().row_groups() {
            starts.push(n);
            n = n.saturating_add(rg.num_rows().max(0) as u64);
        }
        Ok(Table {
            path: path.to_path_buf(),
            meta,
            starts,
        })
    }

    /// The table's file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Typed access to the columns of a batch read from this table.
    pub fn columns<'a>(&'a self, batch: &'a RecordBatch) -> Columns<'a> {
        Columns::new(&self.path, batch)
    }

    /// Rows in the table.
    pub fn num_rows(&self) -> u64 {
        self.meta.metadata().file_metadata().num_rows().max(0) as u64
    }

    /// The key-value metadata entry `key`.
    pub fn key_value(&self, key: &str) -> Option<String> {
        self.meta
            .metadata()
            .file_metadata()
            .key_value_metadata()?
            .iter()
            .find(|k| k.key == key)?
            .value
            .clone()
    }

    fn leaf(&self, name: &str) -> Option<usize> {
        self.meta
            .parquet_schema()
            .columns()
            .iter()
            .position(|c| c.name() == name)
    }

    /// Row groups in the table.
    pub fn row_groups(&self) -> usize {
        self.starts.len()
    }

    /// The rows of each row group where every predicate may hold (by row group and page
    /// statistics; the caller still checks each row).
    pub fn select(&self, preds: &[Pred]) -> Vec<Selected> {
        (0..self.row_groups())
            .filter_map(|rg| self.select_in(rg, preds))
            .collect()
    }

    /// The rows of row group `rg` where every predicate may hold, None if none.
    pub fn select_in(&self, rg_i: usize, preds: &[Pred]) -> Option<Selected> {
        let md = self.meta.metadata();
        let rg = md.row_groups().get(rg_i)?;
        let rows = rg.num_rows().max(0) as usize;
        if rows == 0 {
            return None;
        }
        let cols: Vec<(Option<usize>, &Pred)> =
            preds.iter().map(|p| (self.leaf(p.column), p)).collect();
        let keep = cols.iter().all(|(c, p)| match c {
            Some(c) => {
                int_stats(rg.column(*c).statistics()).is_none_or(|(lo, hi)| p.overlaps(lo, hi))
            }
            None => true,
        });
        if !keep {
            return None;
        }
        // One range: the whole row group, cut down by each predicate.
        let mut ranges: Vec<Range<usize>> = std::iter::once(0..rows).collect();
        let pi = md.page_index_for_row_group(rg_i);
        for (c, p) in &cols {
            let Some(c) = *c else { continue };
            let (Some(ci), Some(oi)) = (pi.column_index(c), pi.offset_index(c)) else {
                continue;
            };
            let locs = oi.page_locations();
            let mut keep_pages: Vec<Range<usize>> = Vec::new();
            for (page, loc) in locs.iter().enumerate() {
                let start = loc.first_row_index.max(0) as usize;
                let end = locs
                    .get(page + 1)
                    .map_or(rows, |n| n.first_row_index.max(0) as usize);
                let may = !ci.is_null_page(page)
                    && page_stats(ci, page).is_none_or(|(lo, hi)| p.overlaps(lo, hi));
                if may && start < end {
                    match keep_pages.last_mut() {
                        Some(last) if last.end == start => last.end = end,
                        _ => keep_pages.push(start..end),
                    }
                }
            }
            ranges = intersect(&ranges, &keep_pages);
            if ranges.is_empty() {
                return None;
            }
        }
        Some(Selected {
            row_group: rg_i,
            first_row: self.starts[rg_i],
            ranges,
        })
    }

    /// The selection holding only file row `row`.
    pub fn select_row(&self, row: u64) -> Option<Selected> {
        let rg = self.starts.partition_point(|&s| s <= row).checked_sub(1)?;
        let first = self.starts[rg];
        let n = self.meta.metadata().row_group(rg).num_rows().max(0) as u64;
        if row >= first + n {
            return None;
        }
        let i = (row - first) as usize;
        Some(Selected {
            row_group: rg,
            first_row: first,
            ranges: std::iter::once(i..i + 1).collect(),
        })
    }

    /// The rows of `count` rows from file row `first` on, one selection per row group.
    pub fn select_rows(&self, first: u64, count: u64) -> Vec<Selected> {
        let end = first.saturating_add(count);
        let mut out = Vec::new();
        for (rg, &lo) in self.starts.iter().enumerate() {
            let hi = lo + self.meta.metadata().row_group(rg).num_rows().max(0) as u64;
            let (a, b) = (first.max(lo), end.min(hi));
            if a < b {
                out.push(Selected {
                    row_group: rg,
                    first_row: lo,
                    ranges: std::iter::once((a - lo) as usize..(b - lo) as usize).collect(),
                });
            }
        }
        out
    }

    /// Rows of row group `rg`.
    pub fn row_group_rows(&self, rg: usize) -> usize {
        self.meta.metadata().row_group(rg).num_rows().max(0) as usize
    }

    /// Streams the selected rows of `columns` (all columns when empty) in batches of at most
    /// `batch_rows` rows. A whole row group's column chunks are mapped from the file and decoded
    /// from memory ([`ChunkBytes`]); a selection of some pages reads only those pages.
    pub fn reader(
        &self,
        sel: &Selected,
        columns: &[&str],
        batch_rows: usize,
    ) -> Result<TableBatches, StoreError> {
        let file = crate::input_file::open_regular(&self.path)
            .map_err(|e| StoreError::io(&self.path, e))?;
        let rows = self.row_group_rows(sel.row_group);
        let leaves: Vec<usize> = (self.meta.parquet_schema().columns().iter().enumerate())
            .filter(|(_, c)| columns.is_empty() || columns.contains(&c.name()))
            .map(|(i, _)| i)
            .collect();
        let whole = sel.ranges.len() == 1 && sel.ranges[0] == (0..rows);
        let reader = decoding(&self.path, || {
            Ok(match whole {
                true => {
                    let rg = self.meta.metadata().row_group(sel.row_group);
                    let chunks = ChunkBytes::map(&file, rg, &leaves)?;
                    self.build_reader(chunks, sel.row_group, leaves, batch_rows, None)?
                }
                false => {
                    let pages =
                        RowSelection::from_consecutive_ranges(sel.ranges.iter().cloned(), rows);
                    self.build_reader(file, sel.row_group, leaves, batch_rows, Some(pages))?
                }
            })
        })?;
        Ok(TableBatches {
            path: self.path.clone(),
            reader: Some(reader),
        })
    }

    /// The decoder of `leaves` of row group `rg` of `input` (this table's file, or its chunks
    /// in memory), in batches of `batch_rows`, only the rows of `pages` when given.
    fn build_reader<T: ChunkReader + 'static>(
        &self,
        input: T,
        rg: usize,
        leaves: Vec<usize>,
        batch_rows: usize,
        pages: Option<RowSelection>,
    ) -> parquet::errors::Result<ParquetRecordBatchReader> {
        let projection = ProjectionMask::leaves(self.meta.parquet_schema(), leaves);
        let mut b = ParquetRecordBatchReaderBuilder::new_with_metadata(input, self.meta.clone())
            .with_row_groups(vec![rg])
            .with_batch_size(batch_rows.max(1))
            .with_projection(projection);
        if let Some(pages) = pages {
            b = b.with_row_selection(pages);
        }
        b.build()
    }

    /// Reads the selected rows of `columns` (all columns when empty), in batches.
    pub fn read(&self, sel: &Selected, columns: &[&str]) -> Result<Vec<RecordBatch>, StoreError> {
        let mut out = Vec::new();
        for batch in self.reader(sel, columns, 64 * 1024)? {
            out.push(batch?);
        }
        Ok(out)
    }

    /// Streams every row of `columns` (all columns when empty) in batches of at most
    /// `batch_rows` rows, as [`Table::reader`] over every row group in order, but decoded on a
    /// thread of its own one batch ahead of `consume`: a one-pass builder (the level-of-detail
    /// index) works on a batch while the next one decodes. `consume` also gets each row group's
    /// end; its first error stops the decoding and is returned.
    pub fn prefetch(
        &self,
        columns: &[&str],
        batch_rows: usize,
        mut consume: impl FnMut(Prefetched) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        std::thread::scope(|scope| {
            let (send, batches) = std::sync::mpsc::sync_channel(1);
            scope.spawn(move || {
                for sel in self.select(&[]) {
                    let decoded = self.reader(&sel, columns, batch_rows);
                    let sent = match decoded {
                        Ok(reader) => reader
                            .map(|b| b.map(Prefetched::Batch))
                            .chain([Ok(Prefetched::RowGroupEnd(sel.row_group))])
                            .try_for_each(|item| {
                                let failed = item.is_err();
                                // A consumer gone (it failed) or a decoding error: stop.
                                send.send(item).ok().filter(|_| !failed).ok_or(())
                            }),
                        Err(e) => send.send(Err(e)).map_err(|_| ()).and(Err(())),
                    };
                    if sent.is_err() {
                        return;
                    }
                }
            });
            batches.into_iter().try_for_each(|item| consume(item?))
        })
    }

    /// Reads every row of `columns` (all columns when empty): for the small tables.
    pub fn read_all(&self, columns: &[&str]) -> Result<Vec<RecordBatch>, StoreError> {
        let mut out = Vec::new();
        for sel in self.select(&[]) {
            out.extend(self.read(&sel, columns)?);
        }
        Ok(out)
    }
}

#[cfg(test)]
#[allow(clippy::single_range_in_vec_init)]
mod tests {
    use super::*;

    /// A one-column table of `rows` values 0.. in row groups of `group_rows`.
    fn numbers(dir: &Path, rows: i64, group_rows: usize) -> Table {
        use arrow_array::Int64Array;
        use parquet::arrow::ArrowWriter;
        use parquet::file::properties::WriterProperties;
        let path = dir.join("numbers.parquet");
        let schema = Arc::new(Schema::new(vec![Field::new("n", DataType::Int64, false)]));
        let props = WriterProperties::builder()
            .set_max_row_group_row_count(Some(group_rows))
            .build();
        let file = std::fs::File::create(&path).unwrap();
        let mut w = ArrowWriter::try_new(file, schema.clone(), Some(props)).unwrap();
        let values = Arc::new(Int64Array::from_iter_values(0..rows));
        w.write(&RecordBatch::try_new(schema, vec![values]).unwrap())
            .unwrap();
        w.close().unwrap();
        Table::open_footer(&path).unwrap()
    }

    #[test]
    fn prefetch_hands_over_every_batch_in_order_with_row_group_ends() {
        let dir = tempfile::tempdir().unwrap();
        let table = numbers(dir.path(), 5, 2);
        let mut seen = Vec::new();
        table
            .prefetch(&[], 1, |item| {
                seen.push(match item {
                    Prefetched::Batch(b) => format!("{}", table.columns(&b).int("n")?.value(0)),
                    Prefetched::RowGroupEnd(g) => format!("end {g}"),
                });
                Ok(())
            })
            .unwrap();
        assert_eq!(seen, ["0", "1", "end 0", "2", "3", "end 1", "4", "end 2"]);
    }

    #[test]
    fn prefetch_stops_at_the_consumers_first_error() {
        let dir = tempfile::tempdir().unwrap();
        let table = numbers(dir.path(), 1000, 10);
        let mut calls = 0;
        let result = table.prefetch(&[], 1, |_| {
            calls += 1;
            match calls {
                3 => Err(StoreError::Exists(PathBuf::from("third"))),
                _ => Ok(()),
            }
        });
        assert!(matches!(result, Err(StoreError::Exists(p)) if p == Path::new("third")));
        assert_eq!(calls, 3);
    }

    #[test]
    fn intersects_ranges() {
        assert_eq!(intersect(&[0..10, 20..30], &[5..25]), vec![5..10, 20..25]);
        assert_eq!(intersect(&[0..10], &[10..20]), Vec::<Range<usize>>::new());
    }
}
