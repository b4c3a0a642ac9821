//! Encoders of the store's Parquet tables, used by `StoreWriter` alone. Rows are buffered
//! column by column and handed to Parquet in batches; Parquet cuts row groups of
//! `ROW_GROUP_ROWS`. The events' batches are encoded and compressed on a thread of their own,
//! so a producer (merge) fills the next batch on the other core meanwhile.

use std::collections::HashMap;
use std::fs::File;
use std::path::Path;
use std::sync::mpsc::{sync_channel, SyncSender};
use std::sync::Arc;
use std::thread::{self, JoinHandle};

use arrow_array::builder::BooleanBufferBuilder;
use arrow_array::types::Int32Type;
use arrow_array::{
    ArrayRef, BooleanArray, DictionaryArray, Int32Array, Int64Array, RecordBatch, StringArray,
    UInt8Array,
};
use arrow_schema::SchemaRef;
use parquet::arrow::ArrowWriter;

use super::event::Event;
use super::schema;
use super::StoreError;

/// Rows per batch handed to Parquet.
const BATCH_ROWS: usize = 64 * 1024;

/// Interns strings of one dictionary column.
#[derive(Default)]
pub(super) struct Dict {
    index: HashMap<String, i32>,
    values: Vec<String>,
    /// The key returned last.
    last: Option<i32>,
}

impl Dict {
    fn key(&mut self, s: &str) -> i32 {
        // Consecutive rows mostly repeat a value (one function, layer, communicator): compare
        // with the last key's value before hashing.
        if let Some(k) = self.last.filter(|&k| self.values[k as usize] == s) {
            return k;
        }
        let k = match self.index.get(s) {
            Some(&k) => k,
            None => {
                let k = self.values.len() as i32;
                self.values.push(s.to_string());
                self.index.insert(s.to_string(), k);
                k
            }
        };
        self.last = Some(k);
        k
    }

    fn array(&self, keys: Vec<Option<i32>>) -> Result<ArrayRef, StoreError> {
        let values = StringArray::from_iter_values(self.values.iter());
        let keys = Int32Array::from(keys);
        Ok(Arc::new(DictionaryArray::<Int32Type>::try_new(
            keys,
            Arc::new(values),
        )?))
    }

    /// A dictionary column of `values`, each distinct value stored once.
    pub(super) fn encode<'a>(
        values: impl Iterator<Item = &'a str>,
    ) -> Result<ArrayRef, StoreError> {
        let mut dict = Dict::default();
        let keys = values.map(|v| Some(dict.key(v))).collect();
        dict.array(keys)
    }
}

/// Writes events.parquet. Rows must arrive in store order (rank, start_ns, process, thread).
pub(crate) struct EventWriter {
    encoder: Encoder,
    rows: u64,
    layer_dict: Dict,
    func_dict: Dict,
    comm_dict: Dict,
    region_dict: Dict,
    cols: EventColumns,
}

#[derive(Default)]
struct EventColumns {
    id: Vec<i64>,
    rank: Vec<i32>,
    process: Vec<i32>,
    thread: Vec<i32>,
    start_ns: Vec<i64>,
    duration_ns: Vec<i64>,
    layer: Vec<Option<i32>>,
    func: Vec<Option<i32>>,
    depth: Vec<u8>,
    parent: Vec<Option<i64>>,
    file_id: Vec<Option<i32>>,
    offset: Vec<Option<i64>>,
    size: Vec<i64>,
    result: Vec<i64>,
    error: Vec<i32>,
    flags: Vec<u8>,
    collective: Vec<bool>,
    instance: Vec<Option<i32>>,
    request: Vec<Option<i64>>,
    peer: Vec<Option<i32>>,
    tag: Vec<Option<i32>>,
    root: Vec<Option<i32>>,
    comm_size: Vec<Option<i32>>,
    comm: Vec<Option<i32>>,
    region: Vec<Option<i32>>,
}

impl EventWriter {
    /// Creates `path`.
    pub fn create(path: &Path) -> Result<Self, StoreError> {
        let file = File::create(path).map_err(|e| StoreError::io(path, e))?;
        let schema = schema::events_schema();
        let writer = ArrowWriter::try_new(file, schema.clone(), Some(schema::events_properties()))?;
        Ok(EventWriter {
            encoder: Encoder::start(writer, schema),
            rows: 0,
            layer_dict: Dict::default(),
            func_dict: Dict::default(),
            comm_dict: Dict::default(),
            region_dict: Dict::default(),
            cols: EventColumns::default(),
        })
    }

    /// Rows written so far.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Appends one row.
    pub fn push(&mut self, e: &Event<'_>) -> Result<(), StoreError> {
        let c = &mut self.cols;
        c.id.push(e.id);
        c.rank.push(e.rank);
        c.process.push(e.process);
        c.thread.push(e.thread);
        c.start_ns.push(e.start_ns);
        c.duration_ns.push(e.duration_ns);
        c.layer.push(Some(self.layer_dict.key(e.layer.name())));
        c.func.push(Some(self.func_dict.key(e.func)));
        c.depth.push(e.depth);
        c.parent.push(e.parent);
        c.file_id.push(e.file_id);
        c.offset.push(e.offset);
        c.size.push(e.size);
        c.result.push(e.result);
        c.error.push(e.error);
        c.flags.push(e.flags);
        c.collective.push(e.collective);
        c.instance.push(e.instance);
        let mpi = e.mpi.get();
        c.request.push(mpi.request);
        c.peer.push(mpi.peer);
        c.tag.push(mpi.tag);
        c.root.push(mpi.root);
        c.comm_size.push(mpi.comm_size);
        c.comm.push(e.comm.map(|s| self.comm_dict.key(s)));
        c.region.push(e.region.map(|s| self.region_dict.key(s)));
        self.rows += 1;
        if c.id.len() >= BATCH_ROWS {
            self.flush_batch()?;
        }
        Ok(())
    }

    /// Hands the rows buffered to the encoder thread, with the dictionaries as they stand (they
    /// only grow: every key buffered is in them).
    fn flush_batch(&mut self) -> Result<(), StoreError> {
        if self.cols.id.is_empty() {
            return Ok(());
        }
        let batch = Batch {
            cols: std::mem::take(&mut self.cols),
            dicts: [
                &self.layer_dict,
                &self.func_dict,
                &self.comm_dict,
                &self.region_dict,
            ]
            .map(|d| d.values.clone()),
        };
        self.encoder.write(batch)
    }

    /// Writes the remaining rows and the file footer.
    pub fn finish(mut self) -> Result<u64, StoreError> {
        self.flush_batch()?;
        self.encoder.finish()?;
        Ok(self.rows)
    }
}

/// Rows buffered column by column, with the values of the layer, func, comm and region
/// dictionaries their keys refer to.
struct Batch {
    cols: EventColumns,
    dicts: [Vec<String>; 4],
}

impl Batch {
    /// The Arrow record batch of events.parquet's schema (built on the encoder thread).
    fn into_record_batch(self, schema: &SchemaRef) -> Result<RecordBatch, StoreError> {
        let Batch { cols: c, dicts } = self;
        let [layer, func, comm, region] = dicts.map(|values| Dict {
            values,
            ..Dict::default()
        });
        let mut collective = BooleanBufferBuilder::new(c.collective.len());
        for b in &c.collective {
            collective.append(*b);
        }
        let columns: Vec<ArrayRef> = vec![
            Arc::new(Int64Array::from(c.id)),
            Arc::new(Int32Array::from(c.rank)),
            Arc::new(Int32Array::from(c.process)),
            Arc::new(Int32Array::from(c.thread)),
            Arc::new(Int64Array::from(c.start_ns)),
            Arc::new(Int64Array::from(c.duration_ns)),
            layer.array(c.layer)?,
            func.array(c.func)?,
            Arc::new(UInt8Array::from(c.depth)),
            Arc::new(Int64Array::from(c.parent)),
            Arc::new(Int32Array::from(c.file_id)),
            Arc::new(Int64Array::from(c.offset)),
            Arc::new(Int64Array::from(c.size)),
            Arc::new(Int64Array::from(c.result)),
            Arc::new(Int32Array::from(c.error)),
            Arc::new(UInt8Array::from(c.flags)),
            Arc::new(BooleanArray::new(collective.finish(), None)),
            Arc::new(Int32Array::from(c.instance)),
            Arc::new(Int64Array::from(c.request)),
            Arc::new(Int32Array::from(c.peer)),
            Arc::new(Int32Array::from(c.tag)),
            Arc::new(Int32Array::from(c.root)),
            Arc::new(Int32Array::from(c.comm_size)),
            comm.array(c.comm)?,
            region.array(c.region)?,
        ];
        Ok(RecordBatch::try_new(schema.clone(), columns)?)
    }
}

/// The thread that builds, encodes and compresses batches into a Parquet file, one batch queued
/// while it works on another (so the memory stays two batches). It ends when the queue is closed
/// (and closes the file) or on its first error; dropped unfinished, it is waited for.
struct Encoder {
    batches: Option<SyncSender<Batch>>,
    thread: Option<JoinHandle<Result<(), StoreError>>>,
}

impl Encoder {
    fn start(mut writer: ArrowWriter<File>, schema: SchemaRef) -> Encoder {
        let (batches, queued) = sync_channel::<Batch>(1);
        let thread = thread::spawn(move || {
            for batch in queued {
                writer.write(&batch.into_record_batch(&schema)?)?;
            }
            writer.close()?;
            Ok(())
        });
        Encoder {
            batches: Some(batches),
            thread: Some(thread),
        }
    }

    /// Queues `batch`; when the thread has stopped on an error, returns that error.
    fn write(&mut self, batch: Batch) -> Result<(), StoreError> {
        match &self.batches {
            Some(queue) if queue.send(batch).is_ok() => Ok(()),
            _ => self.finish(),
        }
    }

    /// Closes the queue and waits for every batch to be written and the footer closed.
    fn finish(&mut self) -> Result<(), StoreError> {
        self.batches = None;
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(result)) => result,
            Some(Err(panic)) => std::panic::resume_unwind(panic),
            None => Ok(()),
        }
    }
}

impl Drop for Encoder {
    fn drop(&mut self) {
        self.batches = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// One row of files.parquet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileRow {
    /// Global file id (events `file_id`).
    pub file_id: i32,
    /// Absolute path.
    pub path: String,
    /// File system name from the statfs magic ("lustre", "ext4", ... or "unknown").
    pub fs_type: String,
    /// statfs f_type, 0 if unknown.
    pub fs_magic: i64,
    /// Distinct ranks with records on the file.
    pub ranks: i32,
    /// Records on the file (all layers).
    pub events: i64,
}

/// Writes files.parquet.
pub(crate) fn write_files(path: &Path, rows: &[FileRow]) -> Result<(), StoreError> {
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int32Array::from_iter_values(rows.iter().map(|r| r.file_id))),
        Arc::new(StringArray::from_iter_values(
            rows.iter().map(|r| r.path.as_str()),
        )),
        Arc::new(StringArray::from_iter_values(
            rows.iter().map(|r| r.fs_type.as_str()),
        )),
        Arc::new(Int64Array::from_iter_values(
            rows.iter().map(|r| r.fs_magic),
        )),
        Arc::new(Int32Array::from_iter_values(rows.iter().map(|r| r.ranks))),
        Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.events))),
    ];
    write_table(path, schema::files_schema(), columns)
}

/// One row of settings.parquet: one hint or view value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SettingRow {
    /// MPI rank.
    pub rank: i32,
    /// Process index.
    pub process: i32,
    /// ns since job start.
    pub time_ns: i64,
    /// File, if the string id resolved.
    pub file_id: Option<i32>,
    /// The call that produced it.
    pub func: String,
    /// Hint or view key.
    pub key: String,
    /// Its value.
    pub value: String,
}

/// Writes settings.parquet.
pub(crate) fn write_settings(path: &Path, rows: &[SettingRow]) -> Result<(), StoreError> {
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int32Array::from_iter_values(rows.iter().map(|r| r.rank))),
        Arc::new(Int32Array::from_iter_values(rows.iter().map(|r| r.process))),
        Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.time_ns))),
        Arc::new(Int32Array::from(
            rows.iter().map(|r| r.file_id).collect::<Vec<_>>(),
        )),
        Dict::encode(rows.iter().map(|r| r.func.as_str()))?,
        Dict::encode(rows.iter().map(|r| r.key.as_str()))?,
        Arc::new(StringArray::from_iter_values(
            rows.iter().map(|r| r.value.as_str()),
        )),
    ];
    write_table(path, schema::settings_schema(), columns)
}

fn write_table(path: &Path, schema: SchemaRef, columns: Vec<ArrayRef>) -> Result<(), StoreError> {
    let file = File::create(path).map_err(|e| StoreError::io(path, e))?;
    let batch = RecordBatch::try_new(schema.clone(), columns)?;
    let mut writer = ArrowWriter::try_new(file, schema, Some(schema::small_table_properties()))?;
    writer.write(&batch)?;
    writer.close()?;
    Ok(())
}
