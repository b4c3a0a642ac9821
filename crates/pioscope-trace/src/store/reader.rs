//! Reading a trace: meta.json and files.parquet at open, events streamed one row group at a
//! time (a trace never has to fit in memory), row groups skipped by their rank statistics.

use std::fs::File;
use std::path::{Path, PathBuf};

use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type, UInt8Type};
use arrow_array::{
    Array, ArrayRef, BooleanArray, Int32Array, Int64Array, RecordBatch, StringArray, UInt8Array,
};
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReader,
    ParquetRecordBatchReaderBuilder, RowSelection, RowSelector,
};
use parquet::file::statistics::Statistics;

use super::event::Event;
use super::meta::{Meta, FORMAT_NAME, FORMAT_VERSION};
use super::schema::{events as ev, files as fc, settings as sc};
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

impl Trace {
    /// Opens a trace directory: checks meta.json and loads the files table.
    pub fn open(dir: &Path) -> Result<Trace, StoreError> {
        let meta_path = dir.join(META_FILE);
        if !dir.is_dir() || !meta_path.is_file() {
            return Err(StoreError::NotATrace(dir.to_path_buf()));
        }
        let text =
            std::fs::read_to_string(&meta_path).map_err(|e| StoreError::io(&meta_path, e))?;
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
        for batch in read_table(&path)? {
            let c = Columns::new(&path, &batch);
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
        for batch in read_table(&path)? {
            let c = Columns::new(&path, &batch);
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

fn read_table(path: &Path) -> Result<Vec<RecordBatch>, StoreError> {
    let file = File::open(path).map_err(|e| StoreError::io(path, e))?;
    let reader = ParquetRecordBatchReaderBuilder::try_new(file)?.build()?;
    let mut batches = Vec::new();
    for b in reader {
        batches.push(b?);
    }
    Ok(batches)
}

/// Iterator over events.parquet, one [`EventBatch`] per row group.
pub struct EventBatches {
    path: PathBuf,
    file: File,
    metadata: ArrowReaderMetadata,
    row_groups: Vec<usize>,
    next: usize,
    current: Option<ParquetRecordBatchReader>,
}

impl EventBatches {
    /// Streams an events table by path (a store being written has no meta.json yet), skipping
    /// the row groups that cannot match `filter`.
    pub fn open(path: &Path, filter: EventFilter) -> Result<EventBatches, StoreError> {
        let path = path.to_path_buf();
        let file = File::open(&path).map_err(|e| StoreError::io(&path, e))?;
        let metadata = ArrowReaderMetadata::load(&file, ArrowReaderOptions::default())?;
        let rank_col = metadata
            .parquet_schema()
            .columns()
            .iter()
            .position(|c| c.name() == ev::RANK);
        let row_groups = metadata
            .metadata()
            .row_groups()
            .iter()
            .enumerate()
            .filter(|(_, rg)| match (filter.rank, rank_col) {
                (Some(r), Some(c)) => match rg.column(c).statistics() {
                    Some(Statistics::Int32(s)) => {
                        s.min_opt().is_none_or(|&lo| lo <= r)
                            && s.max_opt().is_none_or(|&hi| hi >= r)
                    }
                    _ => true,
                },
                _ => true,
            })
            .map(|(i, _)| i)
            .collect();
        Ok(EventBatches {
            path,
            file,
            metadata,
            row_groups,
            next: 0,
            current: None,
        })
    }
}

impl EventBatches {
    /// Streams rows `first .. first + count` of an events table (0-based row numbers, which
    /// are the event ids) in batches of at most `batch_rows`: a cursor over one rank's rows
    /// that holds one small batch in memory, for k-way merges over ranks.
    pub fn open_rows(
        path: &Path,
        first: u64,
        count: u64,
        batch_rows: usize,
    ) -> Result<EventBatches, StoreError> {
        let path = path.to_path_buf();
        let file = File::open(&path).map_err(|e| StoreError::io(&path, e))?;
        let metadata = ArrowReaderMetadata::load(&file, ArrowReaderOptions::default())?;
        let (mut groups, mut selectors, mut row) = (Vec::new(), Vec::new(), 0u64);
        let end = first.saturating_add(count);
        for (i, rg) in metadata.metadata().row_groups().iter().enumerate() {
            let (lo, hi) = (row, row + rg.num_rows().max(0) as u64);
            row = hi;
            let (a, b) = (first.max(lo), end.min(hi));
            if a >= b {
                continue;
            }
            groups.push(i);
            if a > lo {
                selectors.push(RowSelector::skip((a - lo) as usize));
            }
            selectors.push(RowSelector::select((b - a) as usize));
            if hi > b {
                selectors.push(RowSelector::skip((hi - b) as usize));
            }
        }
        let current = if groups.is_empty() {
            None
        } else {
            let f = file.try_clone().map_err(|e| StoreError::io(&path, e))?;
            Some(
                ParquetRecordBatchReaderBuilder::new_with_metadata(f, metadata.clone())
                    .with_row_groups(groups)
                    .with_row_selection(RowSelection::from(selectors))
                    .with_batch_size(batch_rows.max(1))
                    .build()?,
            )
        };
        Ok(EventBatches {
            path,
            file,
            metadata,
            row_groups: Vec::new(),
            next: 0,
            current,
        })
    }

    /// Row groups that will be read.
    pub fn row_groups(&self) -> usize {
        self.row_groups.len()
    }

    fn open_row_group(&self, rg: usize) -> Result<ParquetRecordBatchReader, StoreError> {
        let rows = self.metadata.metadata().row_group(rg).num_rows().max(1) as usize;
        let file = self
            .file
            .try_clone()
            .map_err(|e| StoreError::io(&self.path, e))?;
        Ok(
            ParquetRecordBatchReaderBuilder::new_with_metadata(file, self.metadata.clone())
                .with_row_groups(vec![rg])
                .with_batch_size(rows)
                .build()?,
        )
    }
}

impl Iterator for EventBatches {
    type Item = Result<EventBatch, StoreError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(reader) = self.current.as_mut() {
                match reader.next() {
                    Some(Ok(batch)) => return Some(EventBatch::new(&self.path, batch)),
                    Some(Err(e)) => return Some(Err(e.into())),
                    None => self.current = None,
                }
            }
            let rg = *self.row_groups.get(self.next)?;
            self.next += 1;
            match self.open_row_group(rg) {
                Ok(r) => self.current = Some(r),
                Err(e) => return Some(Err(e)),
            }
        }
    }
}

/// An integer column of any width the store uses.
enum IntCol {
    I64(Int64Array),
    I32(Int32Array),
    U8(UInt8Array),
}

impl IntCol {
    fn get(&self, i: usize) -> Option<i64> {
        match self {
            IntCol::I64(a) => a.is_valid(i).then(|| a.value(i)),
            IntCol::I32(a) => a.is_valid(i).then(|| a.value(i) as i64),
            IntCol::U8(a) => a.is_valid(i).then(|| a.value(i) as i64),
        }
    }
}

/// A string column, dictionary-encoded (as written) or plain (rewritten by another tool).
enum StrCol {
    Dict {
        keys: Int32Array,
        values: StringArray,
    },
    Plain(StringArray),
}

impl StrCol {
    fn get(&self, i: usize) -> Option<&str> {
        match self {
            StrCol::Dict { keys, values } => keys
                .is_valid(i)
                .then(|| values.value(keys.value(i) as usize)),
            StrCol::Plain(a) => a.is_valid(i).then(|| a.value(i)),
        }
    }

    /// `f` of each dictionary value (indexed by key), computed once per value; None for a
    /// plain column.
    fn map_values<T>(&self, f: impl Fn(&str) -> T) -> Option<Vec<T>> {
        match self {
            StrCol::Dict { values, .. } => Some(
                (0..values.len())
                    .map(|k| {
                        f(if values.is_valid(k) {
                            values.value(k)
                        } else {
                            ""
                        })
                    })
                    .collect(),
            ),
            StrCol::Plain(_) => None,
        }
    }
}

/// Typed access to the columns of one record batch, with errors naming table and column.
struct Columns<'a> {
    path: &'a Path,
    batch: &'a RecordBatch,
}

impl<'a> Columns<'a> {
    fn new(path: &'a Path, batch: &'a RecordBatch) -> Self {
        Columns { path, batch }
    }

    fn err(&self, column: &str, what: String) -> StoreError {
        StoreError::Schema {
            path: self.path.to_path_buf(),
            column: column.to_string(),
            what,
        }
    }

    fn column(&self, name: &str) -> Result<&'a ArrayRef, StoreError> {
        self.batch
            .column_by_name(name)
            .ok_or_else(|| self.err(name, "missing".to_string()))
    }

    fn int(&self, name: &str) -> Result<IntCol, StoreError> {
        let a = self.column(name)?;
        if let Some(x) = a.as_primitive_opt::<Int64Type>() {
            Ok(IntCol::I64(x.clone()))
        } else if let Some(x) = a.as_primitive_opt::<Int32Type>() {
            Ok(IntCol::I32(x.clone()))
        } else if let Some(x) = a.as_primitive_opt::<UInt8Type>() {
            Ok(IntCol::U8(x.clone()))
        } else {
            Err(self.err(
                name,
                format!("expected an integer column, found {}", a.data_type()),
            ))
        }
    }

    fn str(&self, name: &str) -> Result<StrCol, StoreError> {
        let a = self.column(name)?;
        if let Some(d) = a.as_dictionary_opt::<Int32Type>() {
            if let Some(values) = d.values().as_string_opt::<i32>() {
                return Ok(StrCol::Dict {
                    keys: d.keys().clone(),
                    values: values.clone(),
                });
            }
        } else if let Some(s) = a.as_string_opt::<i32>() {
            return Ok(StrCol::Plain(s.clone()));
        }
        Err(self.err(
            name,
            format!("expected a string column, found {}", a.data_type()),
        ))
    }

    fn bool(&self, name: &str) -> Result<BooleanArray, StoreError> {
        let a = self.column(name)?;
        a.as_boolean_opt().cloned().ok_or_else(|| {
            self.err(
                name,
                format!("expected a boolean column, found {}", a.data_type()),
            )
        })
    }
}

/// One row group of events.parquet, decoded column by column.
pub struct EventBatch {
    rows: usize,
    id: IntCol,
    rank: IntCol,
    process: IntCol,
    thread: IntCol,
    start_ns: IntCol,
    duration_ns: IntCol,
    layer: Vec<Layer>,
    func: StrCol,
    /// functions.def id of each row's function (0 if unknown).
    func_id: Vec<u16>,
    depth: IntCol,
    parent: IntCol,
    file_id: IntCol,
    offset: IntCol,
    size: IntCol,
    result: IntCol,
    error: IntCol,
    flags: IntCol,
    collective: BooleanArray,
    instance: IntCol,
    request: IntCol,
    peer: IntCol,
    tag: IntCol,
    root: IntCol,
    comm_size: IntCol,
    comm: StrCol,
    region: StrCol,
}

impl EventBatch {
    fn new(path: &Path, batch: RecordBatch) -> Result<EventBatch, StoreError> {
        let c = Columns::new(path, &batch);
        let rows = batch.num_rows();
        let layer_names = c.str(ev::LAYER)?;
        let known_layers = layer_names.map_values(Layer::from_name);
        let mut layer = Vec::with_capacity(rows);
        for i in 0..rows {
            let l = match (&known_layers, &layer_names) {
                (Some(t), StrCol::Dict { keys, .. }) if keys.is_valid(i) => {
                    t[keys.value(i) as usize]
                }
                _ => Layer::from_name(layer_names.get(i).unwrap_or("")),
            };
            layer.push(l.ok_or_else(|| {
                let name = layer_names.get(i).unwrap_or("");
                c.err(ev::LAYER, format!("unknown layer {name:?} in row {i}"))
            })?);
        }
        let func = c.str(ev::FUNC)?;
        let id_of = |name: &str| functions::by_name(name).map_or(0, |f| f.id);
        let func_id = match (func.map_values(id_of), &func) {
            (Some(t), StrCol::Dict { keys, .. }) => (0..rows)
                .map(|i| {
                    if keys.is_valid(i) {
                        t[keys.value(i) as usize]
                    } else {
                        0
                    }
                })
                .collect(),
            _ => (0..rows).map(|i| func.get(i).map_or(0, id_of)).collect(),
        };
        Ok(EventBatch {
            rows: batch.num_rows(),
            id: c.int(ev::ID)?,
            rank: c.int(ev::RANK)?,
            process: c.int(ev::PROCESS)?,
            thread: c.int(ev::THREAD)?,
            start_ns: c.int(ev::START_NS)?,
            duration_ns: c.int(ev::DURATION_NS)?,
            layer,
            func,
            func_id,
            depth: c.int(ev::DEPTH)?,
            parent: c.int(ev::PARENT)?,
            file_id: c.int(ev::FILE_ID)?,
            offset: c.int(ev::OFFSET)?,
            size: c.int(ev::SIZE)?,
            result: c.int(ev::RESULT)?,
            error: c.int(ev::ERROR)?,
            flags: c.int(ev::FLAGS)?,
            collective: c.bool(ev::COLLECTIVE)?,
            instance: c.int(ev::INSTANCE)?,
            request: c.int(ev::REQUEST)?,
            peer: c.int(ev::PEER)?,
            tag: c.int(ev::TAG)?,
            root: c.int(ev::ROOT)?,
            comm_size: c.int(ev::COMM_SIZE)?,
            comm: c.str(ev::COMM)?,
            region: c.str(ev::REGION)?,
        })
    }

    /// Rows in the batch.
    pub fn len(&self) -> usize {
        self.rows
    }

    /// True when the batch has no rows.
    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }

    /// Row `i` (panics if out of range, like slice indexing).
    pub fn get(&self, i: usize) -> Event<'_> {
        let int = |c: &IntCol| c.get(i).unwrap_or(0);
        let opt32 = |c: &IntCol| c.get(i).map(|v| v as i32);
        Event {
            id: int(&self.id),
            rank: int(&self.rank) as i32,
            process: int(&self.process) as i32,
            thread: int(&self.thread) as i32,
            start_ns: int(&self.start_ns),
            duration_ns: int(&self.duration_ns),
            layer: self.layer[i],
            func: self.func.get(i).unwrap_or(""),
            func_id: self.func_id[i],
            depth: int(&self.depth) as u8,
            parent: self.parent.get(i),
            file_id: opt32(&self.file_id),
            offset: self.offset.get(i),
            size: int(&self.size),
            result: int(&self.result),
            error: int(&self.error) as i32,
            flags: int(&self.flags) as u8,
            collective: self.collective.is_valid(i) && self.collective.value(i),
            instance: opt32(&self.instance),
            request: self.request.get(i),
            peer: opt32(&self.peer),
            tag: opt32(&self.tag),
            root: opt32(&self.root),
            comm_size: opt32(&self.comm_size),
            comm: self.comm.get(i),
            region: self.region.get(i),
        }
    }

    /// Every row in order.
    pub fn iter(&self) -> impl Iterator<Item = Event<'_>> + '_ {
        (0..self.rows).map(move |i| self.get(i))
    }
}
