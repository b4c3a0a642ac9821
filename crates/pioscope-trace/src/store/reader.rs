//! Reading a trace: meta.json and files.parquet at open, events streamed one row group at a
//! time (a trace never has to fit in memory), row groups skipped by their rank statistics.
//! Tables are read through `scan::Table` and `columns`, like every reader of the store.

use std::path::{Path, PathBuf};

use arrow_array::RecordBatch;

use super::columns::{Columns, StrCol};
use super::event::{Event, MpiArgs, MpiRef};
use super::meta::{Meta, FORMAT_NAME, FORMAT_VERSION};
use super::scan::{Pred, Selected, Table, TableBatches};
use super::schema::{events as ev, events_schema, files as fc, settings as sc};
use super::writer::{FileRow, SettingRow};
use super::{StoreError, EVENTS_FILE, FILES_FILE, META_FILE, SETTINGS_FILE};
use crate::functions::{self, Layer};

/// An open trace directory.
#[derive(Clone, Debug)]
pub struct Trace {
    /// The directory.
    pub dir: PathBuf,
    /// meta.json.
    pub meta: Meta,
    /// files.parquet, indexed by file_id.
    pub files: Vec<FileRow>,
}

/// Which events to stream.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EventFilter {
    /// Only this rank (row groups that cannot hold it are skipped unread).
    pub rank: Option<i32>,
}

/// The largest meta.json read (a million processes' entries fit): a damaged or hostile one
/// is refused rather than read into memory whatever its size.
pub const MAX_META_BYTES: u64 = 256 << 20;

impl Trace {
    /// Opens a trace directory: checks meta.json and loads the files table.
    pub fn open(dir: &Path) -> Result<Trace, StoreError> {
        let meta_path = dir.join(META_FILE);
        if !dir.is_dir() || !meta_path.exists() {
            return Err(StoreError::NotATrace(dir.to_path_buf()));
        }
        let text = crate::input_file::read_bounded(&meta_path, MAX_META_BYTES)
            .map_err(|e| StoreError::io(&meta_path, e))?;
        let value: serde_json::Value =
            serde_json::from_str(&text).map_err(|source| StoreError::BadMeta {
                path: meta_path.clone(),
                source,
            })?;
        let format = value
            .get("format")
            .and_then(|v| v.as_str())
            .unwrap_or("")
            .to_string();
        let version = value.get("version").and_then(|v| v.as_u64()).unwrap_or(0) as u32;
        if format != FORMAT_NAME || version == 0 || version > FORMAT_VERSION {
            return Err(StoreError::Unsupported {
                path: meta_path,
                format,
                version,
            });
        }
        let meta: Meta = serde_json::from_value(value).map_err(|source| StoreError::BadMeta {
            path: meta_path.clone(),
            source,
        })?;
        // Every reader indexes containers by `process`: entry i must be process i.
        if let Some((i, p)) =
            (meta.processes.iter().enumerate()).find(|(i, p)| p.process as usize != *i)
        {
            return Err(StoreError::Inconsistent {
                path: meta_path,
                what: format!("processes[{i}] is process {}, not {i}", p.process),
            });
        }
        let mut trace = Trace {
            dir: dir.to_path_buf(),
            meta,
            files: Vec::new(),
        };
        trace.files = trace.read_files()?;
        trace.files.sort_by_key(|f| f.file_id);
        Ok(trace)
    }

    /// The path of a file id.
    pub fn file_path(&self, id: i32) -> Option<&str> {
        match self.files.binary_search_by_key(&id, |f| f.file_id) {
            Ok(i) => Some(self.files[i].path.as_str()),
            Err(_) => None,
        }
    }

    /// Streams every event in store order.
    pub fn events(&self) -> Result<EventBatches, StoreError> {
        self.events_where(EventFilter::default())
    }

    /// Streams the events of the row groups that may match `filter`; the caller still checks
    /// each row (a row group can hold several ranks).
    pub fn events_where(&self, filter: EventFilter) -> Result<EventBatches, StoreError> {
        EventBatches::open(&self.dir.join(EVENTS_FILE), filter)
    }

    fn read_files(&self) -> Result<Vec<FileRow>, StoreError> {
        let path = self.dir.join(FILES_FILE);
        let mut rows = Vec::new();
        let table = Table::open_footer(&path)?;
        for batch in table.read_all(&[])? {
            let c = table.columns(&batch);
            let (id, p, t, m, r, e) = (
                c.int(fc::FILE_ID)?,
                c.str(fc::PATH)?,
                c.str(fc::FS_TYPE)?,
                c.int(fc::FS_MAGIC)?,
                c.int(fc::RANKS)?,
                c.int(fc::EVENTS)?,
            );
            for i in 0..batch.num_rows() {
                rows.push(FileRow {
                    file_id: id.get(i).unwrap_or(-1) as i32,
                    path: p.get(i).unwrap_or("").to_string(),
                    fs_type: t.get(i).unwrap_or("").to_string(),
                    fs_magic: m.get(i).unwrap_or(0),
                    ranks: r.get(i).unwrap_or(0) as i32,
                    events: e.get(i).unwrap_or(0),
                });
            }
        }
        Ok(rows)
    }

    /// Reads settings.parquet (hints and views; small).
    pub fn settings(&self) -> Result<Vec<SettingRow>, StoreError> {
        let path = self.dir.join(SETTINGS_FILE);
        let mut rows = Vec::new();
        let table = Table::open_footer(&path)?;
        for batch in table.read_all(&[])? {
            let c = table.columns(&batch);
            let (rank, proc_, time, file, func, key, value) = (
                c.int(sc::RANK)?,
                c.int(sc::PROCESS)?,
                c.int(sc::TIME_NS)?,
                c.int(sc::FILE_ID)?,
                c.str(sc::FUNC)?,
                c.str(sc::KEY)?,
                c.str(sc::VALUE)?,
            );
            for i in 0..batch.num_rows() {
                rows.push(SettingRow {
                    rank: rank.get(i).unwrap_or(-1) as i32,
                    process: proc_.get(i).unwrap_or(0) as i32,
                    time_ns: time.get(i).unwrap_or(0),
                    file_id: file.get(i).map(|v| v as i32),
                    func: func.get(i).unwrap_or("").to_string(),
                    key: key.get(i).unwrap_or("").to_string(),
                    value: value.get(i).unwrap_or("").to_string(),
                });
            }
        }
        Ok(rows)
    }
}

/// Iterator over events.parquet, one [`EventBatch`] per row group (or per `batch_rows` rows,
/// see [`EventBatches::open_rows`] and [`EventBatches::in_batches_of`]).
pub struct EventBatches {
    table: Table,
    selections: Vec<Selected>,
    /// Rows per batch; 0 for one batch per row group.
    batch_rows: usize,
    next: usize,
    current: Option<TableBatches>,
    /// Rows of the current selection not yet handed out.
    left_in_row_group: usize,
    /// Columns not decoded (see [`EventBatches::without`]).
    skipped: Vec<&'static str>,
    /// The columns decoded when some are skipped (empty: all of them).
    read: Vec<String>,
}

impl EventBatches {
    /// Streams an events table by path (a store being written has no meta.json yet), skipping
    /// the row groups that cannot match `filter`.
    pub fn open(path: &Path, filter: EventFilter) -> Result<EventBatches, StoreError> {
        let table = Table::open_footer(path)?;
        let preds: Vec<Pred> = filter
            .rank
            .map(|r| Pred::range(ev::RANK, r as i64, r as i64))
            .into_iter()
            .collect();
        let selections = table.select(&preds);
        Ok(EventBatches {
            table,
            selections,
            batch_rows: 0,
            next: 0,
            current: None,
            left_in_row_group: 0,
            skipped: Vec::new(),
            read: Vec::new(),
        })
    }

    /// The same rows in batches of at most `rows` (several per row group).
    ///
    /// A whole row group of events is hundreds of MB once decoded: a reader that goes through
    /// every row of each batch (a pass) finds smaller batches still in the CPU's cache, and
    /// the allocator reuses their buffers instead of mapping fresh pages for each.
    pub fn in_batches_of(mut self, rows: usize) -> EventBatches {
        self.batch_rows = rows.max(1);
        self
    }

    /// The same rows without the nullable columns `skipped`: they are not decoded, and every
    /// [`Event`] has them empty (None). For a reader that never looks at them (the report's
    /// pass does not read the MPI point-to-point and communicator columns).
    pub fn without(mut self, skipped: &[&'static str]) -> EventBatches {
        self.skipped = skipped.to_vec();
        self.read = events_schema()
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .filter(|n| !skipped.contains(&n.as_str()))
            .collect();
        self
    }

    /// Streams rows `first .. first + count` of an events table (0-based row numbers, which
    /// are the event ids) in batches of at most `batch_rows`: a cursor over one rank's rows
    /// that holds one small batch in memory, for k-way merges over ranks.
    pub fn open_rows(
        path: &Path,
        first: u64,
        count: u64,
        batch_rows: usize,
    ) -> Result<EventBatches, StoreError> {
        let table = Table::open_footer(path)?;
        let selections = table.select_rows(first, count);
        Ok(EventBatches {
            table,
            selections,
            batch_rows: batch_rows.max(1),
            next: 0,
            current: None,
            left_in_row_group: 0,
            skipped: Vec::new(),
            read: Vec::new(),
        })
    }

    /// Row groups that will be read.
    pub fn row_groups(&self) -> usize {
        self.selections.len()
    }
}

impl Iterator for EventBatches {
    type Item = Result<EventBatch, StoreError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(reader) = self.current.as_mut() {
                match reader.next() {
                    Some(Ok(batch)) => {
                        self.left_in_row_group =
                            self.left_in_row_group.saturating_sub(batch.num_rows());
                        let ends = self.left_in_row_group == 0;
                        let path = self.table.path();
                        return Some(EventBatch::new(path, batch, ends, &self.skipped));
                    }
                    Some(Err(e)) => return Some(Err(e)),
                    None => self.current = None,
                }
            }
            let sel = self.selections.get(self.next)?;
            self.next += 1;
            let rows = match self.batch_rows {
                0 => self.table.row_group_rows(sel.row_group),
                n => n,
            };
            let read: Vec<&str> = self.read.iter().map(String::as_str).collect();
            match self.table.reader(sel, &read, rows) {
                Ok(r) => {
                    self.current = Some(r);
                    self.left_in_row_group = sel.rows();
                }
                Err(e) => return Some(Err(e)),
            }
        }
    }
}

/// Rows built at a time: each pushed whole from its layer and function, then every other
/// column set into the block's rows at its stored width while the block (128 rows of about
/// 200 bytes) stays in a core's L1 data cache. (Column passes over a whole batch streamed its
/// rows through the L2 cache twenty times; setting every column row by row matched each
/// column's width for each row.)
const ROWS_PER_BLOCK: usize = 128;

/// One row group of events.parquet (or a part of it, see [`EventBatches::in_batches_of`]),
/// decoded.
///
/// The rows are built as [`Event`]s once, when the batch is built (on the thread that
/// decodes): a pass shows every row to each group of visitors, which then read each event
/// whole from one place instead of gathering it again from twenty columns each. A function of
/// functions.def gets its static name there; the other strings stay in their columns and
/// [`EventBatch::get`] puts them in (a batch without such strings lends its rows as they are,
/// [`EventBatch::whole_rows`]).
pub struct EventBatch {
    /// The last batch of its row group.
    ends_row_group: bool,
    /// Every row, its strings and MPI columns left out (`func` "" unless in functions.def,
    /// `comm` and `region` None, `mpi` none: [`EventBatch::get`] puts them in).
    events: Vec<Event<'static>>,
    /// Every row of `events` is whole: each function is in functions.def and no row has a
    /// `comm`, a `region` or MPI columns.
    whole: bool,
    /// The MPI columns of every row, when the batch read any (else empty).
    mpi: Vec<MpiArgs>,
    func: StrCol,
    comm: StrCol,
    region: StrCol,
}

impl EventBatch {
    fn new(
        path: &Path,
        batch: RecordBatch,
        ends_row_group: bool,
        skipped: &[&str],
    ) -> Result<EventBatch, StoreError> {
        let c = Columns::new(path, &batch);
        let rows = batch.num_rows();
        // A skipped column reads as nulls: no decoding, one small validity buffer.
        let str_col = |name: &str| match skipped.contains(&name) {
            true => Ok(StrCol::null(rows)),
            false => c.str(name),
        };
        let layer_names = c.str(ev::LAYER)?;
        let known_layers = layer_names.map_keys(Layer::from_name);
        let func = c.str(ev::FUNC)?;
        let known_funcs = func.map_keys(functions::by_name);
        let collective = c.bool(ev::COLLECTIVE)?;
        let int = |name: &str| c.int(name);
        let (id, rank, process, thread) = (
            int(ev::ID)?,
            int(ev::RANK)?,
            int(ev::PROCESS)?,
            int(ev::THREAD)?,
        );
        let (start_ns, duration_ns, depth, size) = (
            int(ev::START_NS)?,
            int(ev::DURATION_NS)?,
            int(ev::DEPTH)?,
            int(ev::SIZE)?,
        );
        let (result, error, flags) = (int(ev::RESULT)?, int(ev::ERROR)?, int(ev::FLAGS)?);
        // A skipped nullable column is not read: it stays None in every row.
        let nullable = |name: &str| match skipped.contains(&name) {
            true => Ok(None),
            false => int(name).map(Some),
        };
        let (parent, file_id, offset, instance) = (
            nullable(ev::PARENT)?,
            nullable(ev::FILE_ID)?,
            nullable(ev::OFFSET)?,
            nullable(ev::INSTANCE)?,
        );
        let (request, peer, tag, root, comm_size) = (
            nullable(ev::REQUEST)?,
            nullable(ev::PEER)?,
            nullable(ev::TAG)?,
            nullable(ev::ROOT)?,
            nullable(ev::COMM_SIZE)?,
        );
        let mut events = Vec::with_capacity(rows);
        // The MPI columns, kept beside the rows when any is read (not in the report's pass).
        let read_mpi = [&request, &peer, &tag, &root, &comm_size]
            .iter()
            .any(|c| c.is_some());
        let mut mpi = Vec::with_capacity(if read_mpi { rows } else { 0 });
        for first in (0..rows).step_by(ROWS_PER_BLOCK) {
            let end = rows.min(first + ROWS_PER_BLOCK);
            for i in first..end {
                let l = layer_names.key(i).and_then(|k| known_layers[k]);
                let layer = l.ok_or_else(|| {
                    let name = layer_names.text(i);
                    c.error(ev::LAYER, format!("unknown layer {name:?} in row {i}"))
                })?;
                let known = func.key(i).and_then(|k| known_funcs[k]);
                let (func_name, func_id) = known.map_or(("", 0), |f| (f.name, f.id));
                events.push(Event {
                    collective: collective.value(i),
                    ..Event::row(layer, func_name, func_id)
                });
            }
            let block = &mut events[first..];
            // Each column's field is named as the column's variable. A null reads as 0 in the
            // columns that have none (a damaged file's).
            macro_rules! fill {
                ($rows:expr; $($col:ident as $t:ty),*) => {$(
                    ($col.view()).fill(first, $rows, |e, v| e.$col = v.unwrap_or(0) as $t);
                )*};
            }
            macro_rules! fill_nullable {
                ($rows:expr; $($col:ident as $t:ty),*) => {$(
                    if let Some(col) = &$col {
                        (col.view()).fill(first, $rows, |e, v| e.$col = v.map(|v| v as $t));
                    }
                )*};
            }
            fill!(block; id as i64, rank as i32, process as i32, thread as i32);
            fill!(
                block;
                start_ns as i64,
                duration_ns as i64,
                depth as u8,
                size as i64
            );
            fill!(block; result as i64, error as i32, flags as u8);
            fill_nullable!(
                block;
                parent as i64,
                file_id as i32,
                offset as i64,
                instance as i32
            );
            if read_mpi {
                mpi.resize(end, MpiArgs::NONE);
                fill_nullable!(
                    &mut mpi[first..];
                    request as i64,
                    peer as i32,
                    tag as i32,
                    root as i32,
                    comm_size as i32
                );
            }
        }
        let (comm, region) = (str_col(ev::COMM)?, str_col(ev::REGION)?);
        Ok(EventBatch {
            ends_row_group,
            events,
            whole: known_funcs.iter().all(Option::is_some)
                && comm.all_null()
                && region.all_null()
                && mpi.iter().all(|m| *m == MpiArgs::NONE),
            mpi,
            func,
            comm,
            region,
        })
    }

    /// Rows in the batch.
    pub fn len(&self) -> usize {
        self.events.len()
    }

    /// The last batch of its row group (every batch, unless read
    /// [`EventBatches::in_batches_of`] fewer rows than a row group has).
    pub fn ends_row_group(&self) -> bool {
        self.ends_row_group
    }

    /// True when the batch has no rows.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// Row `i` (panics if out of range, like slice indexing).
    #[inline]
    pub fn get(&self, i: usize) -> Event<'_> {
        let e = &self.events[i];
        Event {
            // Functions of functions.def have their name already.
            func: if e.func_id != 0 {
                e.func
            } else {
                self.func.text(i)
            },
            mpi: self.mpi.get(i).map_or(MpiRef::NONE, MpiRef::to),
            comm: self.comm.get(i),
            region: self.region.get(i),
            ..*e
        }
    }

    /// Every row as built, when none lacks a string or its MPI columns (each function in
    /// functions.def, no communicator, no region, no MPI column filled): `whole_rows()[i]` is
    /// `get(i)`, lent rather than copied.
    pub fn whole_rows(&self) -> Option<&[Event<'_>]> {
        self.whole.then_some(self.events.as_slice())
    }

    /// Every row in order.
    pub fn iter(&self) -> impl Iterator<Item = Event<'_>> + '_ {
        (0..self.len()).map(move |i| self.get(i))
    }
}

#[cfg(test)]
mod tests {
    use super::super::writer::EventWriter;
    use super::*;

    /// The MPI columns of [`rows`].
    fn mpi_args() -> Vec<MpiArgs> {
        (0..300i64)
            .map(|i| {
                let some = |every: i64, v: i64| (i % every != 0).then_some(v);
                MpiArgs {
                    request: some(7, i << 33),
                    peer: some(8, i % 5).map(|v| v as i32),
                    tag: some(9, -i).map(|v| v as i32),
                    root: some(10, 0).map(|v| v as i32),
                    comm_size: some(11, 4).map(|v| v as i32),
                }
            })
            .collect()
    }

    /// 300 rows (two whole blocks of `ROWS_PER_BLOCK` and part of a third) with every column
    /// varying, nulls in each nullable column, a function outside functions.def and strings;
    /// their MPI columns `mpi`.
    fn rows(mpi: &[MpiArgs]) -> Vec<Event<'_>> {
        let funcs = [
            (Layer::Posix, "pwrite"),
            (Layer::MpiIo, "MPI_File_write_all"),
            (Layer::Mpi, "MPI_Isend"),
            (Layer::Posix, "not_in_functions_def"),
        ];
        (0..300i64)
            .map(|i| {
                let (layer, func) = funcs[i as usize % funcs.len()];
                let some = |every: i64, v: i64| (i % every != 0).then_some(v);
                Event {
                    id: i,
                    rank: (i / 100) as i32,
                    process: (i / 100) as i32 + 7,
                    thread: (i % 2) as i32,
                    depth: (i % 3) as u8,
                    parent: some(5, i - 1),
                    file_id: some(2, i % 7).map(|v| v as i32),
                    offset: some(3, i * 4096),
                    size: i * 10,
                    result: i * 10 - (i % 11),
                    error: (i % 13 == 0) as i32 * 5,
                    flags: (i % 256) as u8,
                    collective: i % 4 == 0,
                    instance: some(6, i / 6).map(|v| v as i32),
                    mpi: MpiRef::to(&mpi[i as usize]),
                    comm: (i % 12 == 0).then_some("MPI_COMM_WORLD"),
                    region: (i % 14 == 0).then_some("output"),
                    ..Event::call(layer, func, 1_000 + i * 37, i % 17)
                }
            })
            .collect()
    }

    /// Every column of every row reads back as written, in batches that end inside a block
    /// and whole; the columns a reader skips read as None.
    #[test]
    fn every_column_reads_back_across_blocks() {
        let dir = tempfile::tempdir().expect("tmp");
        let path = dir.path().join("events.parquet");
        let args = mpi_args();
        let written = rows(&args);
        let mut w = EventWriter::create(&path).expect("create");
        for e in &written {
            w.push(e).expect("push");
        }
        assert_eq!(w.finish().expect("finish"), 300);
        for batch_rows in [300, 200, 1] {
            let batches = EventBatches::open(&path, EventFilter::default()).expect("open");
            let mut read = 0;
            for batch in batches.in_batches_of(batch_rows) {
                for e in batch.expect("batch").iter() {
                    assert_eq!(e, written[read], "row {read}, batches of {batch_rows}");
                    read += 1;
                }
            }
            assert_eq!(read, 300);
        }
        let skipped = [ev::REQUEST, ev::PEER, ev::COMM];
        let batches = EventBatches::open(&path, EventFilter::default()).expect("open");
        let mut read = 0;
        for batch in batches.without(&skipped) {
            for e in batch.expect("batch").iter() {
                let mpi = MpiArgs {
                    request: None,
                    peer: None,
                    ..args[read]
                };
                let expected = Event {
                    mpi: MpiRef::to(&mpi),
                    comm: None,
                    ..written[read]
                };
                assert_eq!(e, expected, "row {read} without {skipped:?}");
                read += 1;
            }
        }
        assert_eq!(read, 300);
    }
}
