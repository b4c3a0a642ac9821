//! The viewer's level-of-detail index: lod.parquet (time buckets per container row at several
//! resolutions) and lod_spans.parquet (the long calls), built by one streaming pass over
//! events.parquet. Every column is documented in docs/FORMAT.md, section "lod.parquet".
//!
//! Design (in the spirit of SLOG-2: near-constant time to any interval):
//! - A *row* is one container thread: (process, thread). Rows are numbered in the canonical
//!   order of [`Containers::rows`]: application processes in meta.json order with their
//!   threads, then storage servers and disks.
//! - Level k cuts time into buckets of `base_ns * 4^k` ns from time 0; the last level has one
//!   bucket for the whole trace. A bucket holds, for one row, the busy time per depth (0..3,
//!   deeper calls count as depth 3), the calls starting in it, the data bytes moved in it
//!   (spread over each call's duration) and the function with the most time at the shallowest
//!   busy depth. Only non-empty buckets are stored.
//! - `base_ns` is chosen so that level 0 cannot exceed about an eighth as many buckets as there
//!   are events, even when every row is busy all the time: finer windows are answered from
//!   events.parquet itself (the window then holds few events per pixel), so fine levels would
//!   only repeat the events at a higher cost, and the index stays a fraction of the store
//!   (issue 18: level 0 at half the events made it +50 %).
//! - Across rows too (issue 18): grade g > 0 holds row groups of 8^g consecutive rows, each
//!   bucket the sum of its rows' with the worst row named (built in `lod_groups`).
//! - Rows are sorted (level, grade, row, start_ns) with page statistics, so a (level, grade,
//!   rows, time range) query is a range read.
//! - A call long enough to start far before a window it covers (duration >= `long_ns`) is also
//!   listed in lod_spans.parquet, so an exact window read can start at `t0 - long_ns` and still
//!   see every call covering the window.
//! - Building streams events.parquet one row group at a time; level 0 buckets come from a sweep
//!   ([`RowBinner`]) and each coarser level is summed from four buckets of the level below.
//!   Buckets of each level go to a temporary spill file in runs (rank by rank), and are copied
//!   into lod.parquet level by level at the end, so memory is bounded per row and level.

use std::collections::HashMap;
use std::fs::{self, File};
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::{ArrayRef, Int32Array, Int64Array, RecordBatch, StringArray, UInt8Array};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use parquet::arrow::ArrowWriter;
use parquet::basic::Encoding;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use parquet::schema::types::ColumnPath;
use serde::{Deserialize, Serialize};

use super::columns::{CallColumns, Columns, IntCol, StrCol};
use super::containers::{ContainerRow, Containers, RowMap};
pub use super::lod_groups::{grade_count, group_rows, GROUP_FACTOR};
use super::reader::Trace;
use super::scan::{Prefetched, Table};
use super::schema::events as ev;
use super::{StoreError, EVENTS_FILE};
use crate::functions::{self, Layer};
use crate::scope;

/// The bucket table.
pub const LOD_FILE: &str = "lod.parquet";
/// The long calls table.
pub const LOD_SPANS_FILE: &str = "lod_spans.parquet";
/// Key of the JSON description ([`LodMeta`]) in lod.parquet's key-value metadata.
pub const LOD_META_KEY: &str = "pioscope.lod";
/// Version of the index layout; a viewer rebuilds an index of another version.
pub const LOD_VERSION: u32 = 3;
/// Depths with a busy column of their own (deeper calls count as the last one).
pub const DEPTHS: usize = 4;
/// Width ratio between two consecutive levels.
pub const LEVEL_FACTOR: i64 = 4;
/// Finest possible bucket width, ns.
pub const MIN_BASE_NS: i64 = 1_000;
/// Rows per page of lod.parquet (small pages make a range read small).
const PAGE_ROWS: usize = 2 * 1024;
/// Rows per row group of lod.parquet.
const ROW_GROUP_ROWS: usize = 1 << 20;
/// Events per level 0 bucket at least, were every row busy all the time (see `choose_base_ns`).
pub const EVENTS_PER_BUCKET: u64 = 8;
/// Buckets a row keeps per level before they go to the spill file.
const RUN_RECORDS: usize = 8 * 1024;

/// Column names of lod.parquet, in order.
pub mod columns {
    #![allow(missing_docs)]
    pub const LEVEL: &str = "level";
    pub const GRADE: &str = "grade";
    pub const ROW: &str = "row";
    pub const START_NS: &str = "start_ns";
    pub const BUSY0: &str = "busy0_ns";
    pub const BUSY1: &str = "busy1_ns";
    pub const BUSY2: &str = "busy2_ns";
    pub const BUSY3: &str = "busy3_ns";
    pub const COUNT: &str = "count";
    pub const BYTES: &str = "bytes";
    pub const FUNC: &str = "func";
    pub const WORST_ROW: &str = "worst_row";
    pub const WORST_BUSY: &str = "worst_busy_ns";
}

/// Column names of lod_spans.parquet, in order.
pub mod span_columns {
    #![allow(missing_docs)]
    pub const ROW: &str = "row";
    pub const ID: &str = "id";
    pub const START_NS: &str = "start_ns";
    pub const DURATION_NS: &str = "duration_ns";
    pub const DEPTH: &str = "depth";
    pub const FUNC: &str = "func";
    pub const LAYER: &str = "layer";
}

/// Totals of one function over the whole trace (recorded while building).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LodFunction {
    /// Function name as in events.parquet.
    pub name: String,
    /// Its layer.
    pub layer: String,
    /// Calls.
    pub calls: u64,
}

/// The description stored in lod.parquet's metadata under [`LOD_META_KEY`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LodMeta {
    /// [`LOD_VERSION`].
    pub version: u32,
    /// Width of a level 0 bucket, ns.
    pub base_ns: i64,
    /// Width ratio between consecutive levels (4).
    pub factor: i64,
    /// Number of levels; the last has one bucket per row.
    pub levels: u32,
    /// Number of row grades, grade 0 (single rows) included: a group of grade g is
    /// [`GROUP_FACTOR`]^g consecutive rows; the last grade has one group of every row.
    pub grades: u32,
    /// Calls at least this long are in lod_spans.parquet.
    pub long_ns: i64,
    /// Rows of events.parquet indexed.
    pub events: u64,
    /// meta.json `job.duration_ns` when built.
    pub duration_ns: i64,
    /// The rows, indexed by the `row` column.
    pub rows: Vec<ContainerRow>,
    /// Events per row.
    pub row_events: Vec<u64>,
    /// Every function present, in order of first appearance.
    pub functions: Vec<LodFunction>,
}

impl LodMeta {
    /// Bucket width of a level, ns.
    pub fn width(&self, level: u32) -> i64 {
        self.base_ns
            .saturating_mul(self.factor.saturating_pow(level))
            .max(1)
    }

    /// Rows per group of a grade.
    pub fn group_rows(&self, grade: u32) -> u64 {
        group_rows(grade)
    }
}

/// A bucket being filled: sums over the calls overlapping it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BucketAcc {
    /// Bucket index (start = index * width).
    pub index: i64,
    /// Busy ns per depth.
    pub busy_ns: [i64; DEPTHS],
    /// Calls starting in the bucket.
    pub count: u64,
    /// Data bytes moved in the bucket (each call's bytes spread over its duration).
    pub bytes: f64,
    /// (depth, function key, ns) of the calls in the bucket.
    pub funcs: Vec<(u8, u32, i64)>,
}

impl BucketAcc {
    fn add_func(&mut self, depth: u8, key: u32, ns: i64) {
        match self.funcs.iter_mut().find(|f| f.0 == depth && f.1 == key) {
            Some(f) => f.2 += ns,
            None => self.funcs.push((depth, key, ns)),
        }
    }

    /// Adds another bucket's sums (a finer bucket inside this one).
    pub fn merge(&mut self, other: &BucketAcc) {
        for d in 0..DEPTHS {
            self.busy_ns[d] += other.busy_ns[d];
        }
        self.count += other.count;
        self.bytes += other.bytes;
        for &(d, k, ns) in &other.funcs {
            self.add_func(d, k, ns);
        }
    }

    /// The function with the most time at the shallowest depth with any time (or, in a bucket
    /// of instantaneous calls only, the first one).
    pub fn dominant(&self) -> Option<u32> {
        let busy_depth = self.funcs.iter().filter(|f| f.2 > 0).map(|f| f.0).min();
        match busy_depth {
            Some(d) => self
                .funcs
                .iter()
                .filter(|f| f.0 == d)
                .max_by_key(|f| (f.2, std::cmp::Reverse(f.1)))
                .map(|f| f.1),
            None => self.funcs.first().map(|f| f.1),
        }
    }

    fn is_empty(&self) -> bool {
        self.count == 0 && self.busy_ns.iter().all(|&b| b == 0)
    }
}

#[derive(Clone, Copy, Debug)]
struct Span {
    start: i64,
    end: i64,
    depth: u8,
    key: u32,
    bytes: f64,
}

/// Cuts the calls of one row (given in start order) into buckets of one width with a sweep:
/// a bucket is complete once a call starts after it. Calls still running are kept as spans, so
/// memory is bounded by the nesting depth, not by the length of a call.
#[derive(Clone, Debug)]
pub struct RowBinner {
    width: i64,
    /// Buckets before this one are not produced (a window's clip).
    first: i64,
    /// Buckets from this one on are not produced.
    last: i64,
    cur: Option<BucketAcc>,
    active: Vec<Span>,
}

impl RowBinner {
    /// A binner over all time.
    pub fn new(width: i64) -> RowBinner {
        RowBinner::clipped(width, i64::MIN, i64::MAX)
    }

    /// A binner producing only the buckets overlapping [t0, t1).
    pub fn clipped(width: i64, t0: i64, t1: i64) -> RowBinner {
        let width = width.max(1);
        RowBinner {
            width,
            first: if t0 == i64::MIN {
                i64::MIN
            } else {
                t0.div_euclid(width)
            },
            last: if t1 == i64::MAX {
                i64::MAX
            } else {
                (t1 - 1).div_euclid(width) + 1
            },
            cur: None,
            active: Vec::new(),
        }
    }

    /// The bucket width.
    pub fn width(&self) -> i64 {
        self.width
    }

    /// Adds a call: `key` names its function, `bytes` the data it moved. Completed buckets go
    /// to `out`.
    pub fn push(
        &mut self,
        start: i64,
        dur: i64,
        depth: u8,
        key: u32,
        bytes: f64,
        out: &mut dyn FnMut(BucketAcc),
    ) {
        let dur = dur.max(0);
        let b = start.div_euclid(self.width).max(self.first);
        if b >= self.last {
            // Past the clip: nothing more can be produced, but earlier buckets still close.
            self.advance(self.last, out);
            return;
        }
        match &self.cur {
            Some(c) if b > c.index => self.advance(b, out),
            Some(_) => {}
            None => {
                self.cur = Some(BucketAcc {
                    index: b,
                    ..BucketAcc::default()
                })
            }
        }
        let depth = depth.min(DEPTHS as u8 - 1);
        if dur == 0 && start.div_euclid(self.width) < self.first {
            return;
        }
        if let Some(cur) = self.cur.as_mut() {
            if start.div_euclid(self.width) >= self.first {
                cur.count += 1;
            }
            if dur == 0 {
                cur.add_func(depth, key, 0);
                cur.bytes += bytes;
                return;
            }
        }
        self.active.push(Span {
            start,
            end: start.saturating_add(dur),
            depth,
            key,
            bytes,
        });
    }

    /// Closes the current bucket and every bucket up to (not including) `to`.
    fn advance(&mut self, to: i64, out: &mut dyn FnMut(BucketAcc)) {
        while let Some(mut cur) = self.cur.take() {
            if cur.index >= to {
                self.cur = Some(cur);
                return;
            }
            let bs = cur.index.saturating_mul(self.width);
            let be = bs.saturating_add(self.width);
            for s in &self.active {
                let ov = s.end.min(be) - s.start.max(bs);
                if ov > 0 {
                    cur.busy_ns[s.depth as usize] += ov;
                    cur.add_func(s.depth, s.key, ov);
                    cur.bytes += s.bytes * ov as f64 / (s.end - s.start) as f64;
                }
            }
            self.active.retain(|s| s.end > be);
            let next = if self.active.is_empty() {
                to
            } else {
                cur.index + 1
            };
            if !cur.is_empty() {
                out(cur);
            }
            if next < to && next < self.last {
                self.cur = Some(BucketAcc {
                    index: next,
                    ..BucketAcc::default()
                });
            } else if to < self.last {
                self.cur = Some(BucketAcc {
                    index: to,
                    ..BucketAcc::default()
                });
                return;
            } else {
                self.active.clear();
                return;
            }
        }
    }

    /// Closes every remaining bucket.
    pub fn finish(&mut self, out: &mut dyn FnMut(BucketAcc)) {
        let end = self
            .active
            .iter()
            .map(|s| s.end.saturating_sub(1).div_euclid(self.width) + 1)
            .max()
            .unwrap_or(0);
        let to = match &self.cur {
            Some(c) => end.max(c.index + 1).min(self.last),
            None => return,
        };
        self.advance(to, out);
        self.cur = None;
        self.active.clear();
    }
}

/// One stored bucket, as written to the spill files and lod.parquet: of one row, or of a row
/// group (`row` its first row).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Rec {
    pub(super) row: u32,
    pub(super) start_ns: i64,
    pub(super) busy_ns: [i64; DEPTHS],
    pub(super) count: u64,
    pub(super) bytes: i64,
    /// Index into the builder's function table, u32::MAX for none.
    pub(super) func: u32,
    /// The member row busiest at depth 0 (the row itself for a row).
    pub(super) worst_row: u32,
    /// Its busy time at depth 0.
    pub(super) worst_ns: i64,
}

pub(super) const REC_BYTES: usize = 4 + 8 + 8 * DEPTHS + 8 + 8 + 4 + 4 + 8;

impl Rec {
    fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.row.to_le_bytes());
        out.extend_from_slice(&self.start_ns.to_le_bytes());
        for b in self.busy_ns {
            out.extend_from_slice(&b.to_le_bytes());
        }
        out.extend_from_slice(&self.count.to_le_bytes());
        out.extend_from_slice(&self.bytes.to_le_bytes());
        out.extend_from_slice(&self.func.to_le_bytes());
        out.extend_from_slice(&self.worst_row.to_le_bytes());
        out.extend_from_slice(&self.worst_ns.to_le_bytes());
    }

    pub(super) fn decode(b: &[u8]) -> Rec {
        let i64_at = |o: usize| {
            let mut a = [0u8; 8];
            a.copy_from_slice(&b[o..o + 8]);
            i64::from_le_bytes(a)
        };
        let u32_at = |o: usize| {
            let mut a = [0u8; 4];
            a.copy_from_slice(&b[o..o + 4]);
            u32::from_le_bytes(a)
        };
        let mut busy_ns = [0i64; DEPTHS];
        for (d, v) in busy_ns.iter_mut().enumerate() {
            *v = i64_at(12 + 8 * d);
        }
        let o = 12 + 8 * DEPTHS;
        Rec {
            row: u32_at(0),
            start_ns: i64_at(4),
            busy_ns,
            count: i64_at(o) as u64,
            bytes: i64_at(o + 8),
            func: u32_at(o + 16),
            worst_row: u32_at(o + 20),
            worst_ns: i64_at(o + 24),
        }
    }
}

/// The spill file of one level (or of one grade of row groups): runs of records of one row (or
/// group) each.
pub(super) struct LevelSpill {
    pub(super) path: PathBuf,
    file: BufWriter<File>,
    /// (row, byte offset, records) of each run, in write order.
    pub(super) runs: Vec<(u32, u64, usize)>,
    offset: u64,
    records: u64,
}

impl LevelSpill {
    pub(super) fn create(path: PathBuf) -> Result<LevelSpill, StoreError> {
        let file = File::create(&path).map_err(|e| StoreError::io(&path, e))?;
        Ok(LevelSpill {
            path,
            file: BufWriter::with_capacity(1 << 20, file),
            runs: Vec::new(),
            offset: 0,
            records: 0,
        })
    }

    pub(super) fn flush(&mut self) -> Result<(), StoreError> {
        self.file.flush().map_err(|e| StoreError::io(&self.path, e))
    }

    pub(super) fn write_run(&mut self, row: u32, recs: &[Rec]) -> Result<(), StoreError> {
        if recs.is_empty() {
            return Ok(());
        }
        let mut buf = Vec::with_capacity(recs.len() * REC_BYTES);
        for r in recs {
            r.encode(&mut buf);
        }
        self.file
            .write_all(&buf)
            .map_err(|e| StoreError::io(&self.path, e))?;
        self.runs.push((row, self.offset, recs.len()));
        self.offset += buf.len() as u64;
        self.records += recs.len() as u64;
        Ok(())
    }
}

/// Per row: the level 0 sweep, the coarser levels' current buckets and the unspilled records.
struct RowState {
    binner: RowBinner,
    /// Current bucket of levels 1.. (index 0 = level 1).
    upper: Vec<Option<BucketAcc>>,
    /// Records not yet spilled, per level.
    pending: Vec<Vec<Rec>>,
}

/// What the builder shares between rows: widths, the function table, the spill files.
struct Shared {
    base_ns: i64,
    levels: usize,
    spills: Vec<LevelSpill>,
}

impl Shared {
    fn record(&self, row: u32, level: usize, b: &BucketAcc) -> Rec {
        let width = self
            .base_ns
            .saturating_mul(LEVEL_FACTOR.saturating_pow(level as u32));
        Rec {
            row,
            start_ns: b.index.saturating_mul(width),
            busy_ns: b.busy_ns,
            count: b.count,
            bytes: b.bytes.round() as i64,
            func: b.dominant().unwrap_or(u32::MAX),
            worst_row: row,
            worst_ns: b.busy_ns[0],
        }
    }
}

impl RowState {
    fn new(shared: &Shared) -> RowState {
        RowState {
            binner: RowBinner::new(shared.base_ns),
            upper: vec![None; shared.levels.saturating_sub(1)],
            pending: vec![Vec::new(); shared.levels],
        }
    }

    /// Stores a completed bucket of `level` and feeds it to the level above.
    fn emit(
        &mut self,
        row: u32,
        level: usize,
        b: BucketAcc,
        shared: &mut Shared,
    ) -> Result<(), StoreError> {
        self.pending[level].push(shared.record(row, level, &b));
        if self.pending[level].len() >= RUN_RECORDS {
            shared.spills[level].write_run(row, &self.pending[level])?;
            self.pending[level].clear();
        }
        if level + 1 >= shared.levels {
            return Ok(());
        }
        let parent = b.index.div_euclid(LEVEL_FACTOR);
        let slot = &mut self.upper[level];
        match slot {
            Some(p) if p.index == parent => p.merge(&b),
            _ => {
                let mut fresh = BucketAcc {
                    index: parent,
                    ..BucketAcc::default()
                };
                fresh.merge(&b);
                if let Some(done) = slot.replace(fresh) {
                    self.emit(row, level + 1, done, shared)?;
                }
            }
        }
        Ok(())
    }

    /// Flushes every level and spills what is left.
    fn finish(&mut self, row: u32, shared: &mut Shared) -> Result<(), StoreError> {
        let mut done = Vec::new();
        self.binner.finish(&mut |b| done.push(b));
        for b in done {
            self.emit(row, 0, b, shared)?;
        }
        for level in 0..self.upper.len() {
            if let Some(b) = self.upper[level].take() {
                self.emit(row, level + 1, b, shared)?;
            }
        }
        for level in 0..shared.levels {
            shared.spills[level].write_run(row, &self.pending[level])?;
            self.pending[level].clear();
        }
        Ok(())
    }
}

/// What [`build`] wrote.
#[derive(Clone, Debug, PartialEq)]
pub struct LodSummary {
    /// The index description.
    pub meta: LodMeta,
    /// Buckets written (all levels).
    pub buckets: u64,
    /// Calls listed in lod_spans.parquet.
    pub spans: u64,
}

/// The level 0 bucket width for a trace: the finest power-of-4 multiple of [`MIN_BASE_NS`]
/// such that `rows` fully busy rows over `duration_ns` make at most ~events /
/// [`EVENTS_PER_BUCKET`] buckets. No floor: the index of a small trace stays small (issue 19),
/// its fine windows are answered from its few events.
pub fn choose_base_ns(events: u64, rows: usize, duration_ns: i64) -> i64 {
    let budget = (events / EVENTS_PER_BUCKET).max(1) as f64;
    let mut base = MIN_BASE_NS;
    while (rows.max(1) as f64) * (duration_ns.max(1) as f64) / (base as f64) > budget
        && base < i64::MAX / LEVEL_FACTOR
    {
        base *= LEVEL_FACTOR;
    }
    base
}

/// Number of levels from `base_ns` until one bucket covers `duration_ns`.
pub fn level_count(base_ns: i64, duration_ns: i64) -> u32 {
    let mut levels = 1;
    let mut w = base_ns.max(1);
    while w < duration_ns.max(1) && w < i64::MAX / LEVEL_FACTOR {
        w *= LEVEL_FACTOR;
        levels += 1;
    }
    levels
}

/// The projected columns of events.parquet the builder reads: a call's placement, and what
/// its function, long-call entry and data bytes need.
struct BuildCols {
    call: CallColumns,
    id: IntCol,
    layer: StrCol,
    file_id: IntCol,
    size: IntCol,
    result: IntCol,
    error: IntCol,
}

impl BuildCols {
    /// The columns besides [`CallColumns::NAMES`], for the projection.
    const MORE: [&'static str; 6] = [
        ev::ID,
        ev::LAYER,
        ev::FILE_ID,
        ev::SIZE,
        ev::RESULT,
        ev::ERROR,
    ];

    fn new(c: &Columns<'_>) -> Result<BuildCols, StoreError> {
        Ok(BuildCols {
            call: CallColumns::new(c)?,
            id: c.int(ev::ID)?,
            layer: c.str(ev::LAYER)?,
            file_id: c.int(ev::FILE_ID)?,
            size: c.int(ev::SIZE)?,
            result: c.int(ev::RESULT)?,
            error: c.int(ev::ERROR)?,
        })
    }
}

/// Builds lod.parquet and lod_spans.parquet in `trace.dir`, replacing any old ones.
/// `progress(done, total)` counts row groups of events.parquet.
pub fn build(
    trace: &Trace,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<LodSummary, StoreError> {
    let meta = &trace.meta;
    let containers = Containers::new(meta);
    let rows = containers.rows();
    let row_map = RowMap::new(rows);
    let duration = meta.job.duration_ns.max(1);
    let events_total = meta.counts.events;
    let base_ns = choose_base_ns(events_total, rows.len(), duration);
    let levels = level_count(base_ns, duration) as usize;
    let long_ns = (base_ns * 16).max(duration / 4096).max(1);

    let tmp = trace
        .dir
        .join(format!(".lod-building-{}", std::process::id()));
    if tmp.exists() {
        fs::remove_dir_all(&tmp).map_err(|e| StoreError::io(&tmp, e))?;
    }
    fs::create_dir_all(&tmp).map_err(|e| StoreError::io(&tmp, e))?;
    let result = build_into(
        trace, &tmp, rows, &row_map, base_ns, levels, long_ns, progress,
    );
    let out = match result {
        Ok(s) => {
            let renamed = fs::rename(tmp.join(LOD_SPANS_FILE), trace.dir.join(LOD_SPANS_FILE))
                .and_then(|_| fs::rename(tmp.join(LOD_FILE), trace.dir.join(LOD_FILE)));
            renamed
                .map(|_| s)
                .map_err(|e| StoreError::io(&trace.dir, e))
        }
        Err(e) => Err(e),
    };
    let _ = fs::remove_dir_all(&tmp);
    out
}

#[allow(clippy::too_many_arguments)]
fn build_into(
    trace: &Trace,
    tmp: &Path,
    rows: &[ContainerRow],
    row_map: &RowMap,
    base_ns: i64,
    levels: usize,
    long_ns: i64,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<LodSummary, StoreError> {
    let mut shared = Shared {
        base_ns,
        levels,
        spills: (0..levels)
            .map(|l| LevelSpill::create(tmp.join(format!("level-{l}.bin"))))
            .collect::<Result<_, _>>()?,
    };
    // Function table: key = index; (name, layer, calls).
    let mut funcs: Vec<LodFunction> = Vec::new();
    let mut func_index: HashMap<(String, String), u32> = HashMap::new();
    let system_file: Vec<bool> = trace
        .files
        .iter()
        .map(|f| scope::is_hidden_path(&f.path))
        .collect();
    let mut states: Vec<Option<RowState>> = (0..rows.len()).map(|_| None).collect();
    let mut open_rows: Vec<u32> = Vec::new();
    let mut row_events = vec![0u64; rows.len()];
    let mut spans = SpanWriter::create(&tmp.join(LOD_SPANS_FILE))?;
    let mut events = 0u64;

    let table = Table::open_footer(&trace.dir.join(EVENTS_FILE))?;
    let row_groups = table.row_groups();
    let rank_of_process: Vec<i32> = trace.meta.processes.iter().map(|p| p.rank).collect();
    let mut current_rank: Option<i32> = None;
    progress(0, row_groups);
    let projection = CallColumns::names_with(&BuildCols::MORE);
    table.prefetch(&projection, 64 * 1024, |item| {
        let batch = match item {
            Prefetched::Batch(batch) => batch,
            Prefetched::RowGroupEnd(row_group) => {
                progress(row_group + 1, row_groups);
                return Ok(());
            }
        };
        let c = BuildCols::new(&table.columns(&batch))?;
        // Per function key, on first use: the function key and, for a function that moves
        // data on a layer whose bytes the index counts (POSIX, STDIO, server), that layer.
        let mut keys: Vec<Option<(u32, Option<Layer>)>> = vec![None; c.call.func.key_count()];
        for i in 0..batch.num_rows() {
            let process = c.call.process.value(i) as i32;
            let rank = rank_of_process
                .get(process.max(0) as usize)
                .copied()
                .unwrap_or(-1);
            if current_rank != Some(rank) {
                // Events are sorted by rank: the previous rank's rows are complete.
                for r in open_rows.drain(..) {
                    if let Some(mut s) = states[r as usize].take() {
                        s.finish(r, &mut shared)?;
                    }
                }
                current_rank = Some(rank);
            }
            let Some(row) = row_map.row(process, c.call.thread.value(i) as i32) else {
                continue;
            };
            events += 1;
            row_events[row as usize] += 1;
            // Both columns are written non-null; a null (a damaged file) indexes nothing.
            let (Some(fk), Some(lk)) = (c.call.func.key(i), c.layer.key(i)) else {
                continue;
            };
            let layer = c.layer.value(lk);
            let (key, byte_layer) = match keys[fk] {
                Some(k) => k,
                None => {
                    let name = c.call.func.value(fk);
                    let key = *func_index
                        .entry((name.to_string(), layer.to_string()))
                        .or_insert_with(|| {
                            funcs.push(LodFunction {
                                name: name.to_string(),
                                layer: layer.to_string(),
                                calls: 0,
                            });
                            (funcs.len() - 1) as u32
                        });
                    let byte_layer = Layer::from_name(layer).filter(|&l| {
                        matches!(l, Layer::Posix | Layer::Stdio | Layer::Server)
                            && matches!(
                                functions::kind_of(l, name),
                                functions::OpKind::Read | functions::OpKind::Write
                            )
                    });
                    keys[fk] = Some((key, byte_layer));
                    (key, byte_layer)
                }
            };
            funcs[key as usize].calls += 1;
            let bytes = match byte_layer {
                Some(layer) => {
                    let system = c
                        .file_id
                        .get(i)
                        .and_then(|f| system_file.get(f.max(0) as usize).copied());
                    if scope::is_application_record(layer, system) {
                        functions::bytes_moved(
                            c.size.value(i).max(0) as u64,
                            c.result.value(i),
                            c.error.value(i) as i32,
                        ) as f64
                    } else {
                        0.0
                    }
                }
                None => 0.0,
            };
            let (start, dur, depth) = (
                c.call.start.value(i),
                c.call.dur.value(i),
                c.call.depth.value(i) as u8,
            );
            if dur >= long_ns {
                spans.push(row, c.id.value(i), start, dur, depth, &funcs[key as usize])?;
            }
            let state = &mut states[row as usize];
            if state.is_none() {
                *state = Some(RowState::new(&shared));
                open_rows.push(row);
            }
            let mut done = Vec::new();
            if let Some(s) = state.as_mut() {
                s.binner
                    .push(start, dur, depth, key, bytes, &mut |b| done.push(b));
            }
            if !done.is_empty() {
                if let Some(mut s) = state.take() {
                    for b in done {
                        s.emit(row, 0, b, &mut shared)?;
                    }
                    *state = Some(s);
                }
            }
        }
        Ok(())
    })?;
    for r in open_rows.drain(..) {
        if let Some(mut s) = states[r as usize].take() {
            s.finish(r, &mut shared)?;
        }
    }
    let span_count = spans.finish()?;

    let lod_meta = LodMeta {
        version: LOD_VERSION,
        base_ns,
        factor: LEVEL_FACTOR,
        levels: levels as u32,
        grades: grade_count(rows.len()),
        long_ns,
        events,
        duration_ns: trace.meta.job.duration_ns,
        rows: rows.to_vec(),
        row_events,
        functions: funcs,
    };
    let buckets = write_lod(tmp, &mut shared, &lod_meta)?;
    Ok(LodSummary {
        meta: lod_meta,
        buckets,
        spans: span_count,
    })
}

/// The schema of lod.parquet.
pub fn lod_schema() -> SchemaRef {
    use columns::*;
    Arc::new(Schema::new(vec![
        Field::new(LEVEL, DataType::Int32, false),
        Field::new(GRADE, DataType::Int32, false),
        Field::new(ROW, DataType::Int32, false),
        Field::new(START_NS, DataType::Int64, false),
        Field::new(BUSY0, DataType::Int64, false),
        Field::new(BUSY1, DataType::Int64, false),
        Field::new(BUSY2, DataType::Int64, false),
        Field::new(BUSY3, DataType::Int64, false),
        Field::new(COUNT, DataType::Int64, false),
        Field::new(BYTES, DataType::Int64, false),
        Field::new(FUNC, DataType::Int32, true),
        Field::new(WORST_ROW, DataType::Int32, true),
        Field::new(WORST_BUSY, DataType::Int64, true),
    ]))
}

/// The schema of lod_spans.parquet.
pub fn spans_schema() -> SchemaRef {
    use span_columns::*;
    Arc::new(Schema::new(vec![
        Field::new(ROW, DataType::Int32, false),
        Field::new(ID, DataType::Int64, false),
        Field::new(START_NS, DataType::Int64, false),
        Field::new(DURATION_NS, DataType::Int64, false),
        Field::new(DEPTH, DataType::UInt8, false),
        Field::new(FUNC, DataType::Utf8, false),
        Field::new(LAYER, DataType::Utf8, false),
    ]))
}

fn properties(kv: Option<Vec<KeyValue>>) -> WriterProperties {
    let mut b = super::schema::base_properties()
        .set_data_page_row_count_limit(PAGE_ROWS)
        .set_write_batch_size(512)
        .set_max_row_group_row_count(Some(ROW_GROUP_ROWS))
        .set_dictionary_enabled(true)
        .set_key_value_metadata(kv);
    // Integers that vary: delta, no dictionary. A dictionary page is read whole with any page
    // of its column chunk, so a large one would make every small range read slow.
    for col in [
        columns::START_NS,
        columns::BUSY0,
        columns::BUSY1,
        columns::BUSY2,
        columns::BUSY3,
        columns::COUNT,
        columns::BYTES,
        columns::WORST_BUSY,
        span_columns::ID,
        span_columns::DURATION_NS,
    ] {
        b = b
            .set_column_dictionary_enabled(ColumnPath::from(col), false)
            .set_column_encoding(ColumnPath::from(col), Encoding::DELTA_BINARY_PACKED);
    }
    b.build()
}

/// Streams long calls into lod_spans.parquet.
struct SpanWriter {
    path: PathBuf,
    writer: ArrowWriter<File>,
    row: Vec<i32>,
    id: Vec<i64>,
    start: Vec<i64>,
    dur: Vec<i64>,
    depth: Vec<u8>,
    func: Vec<String>,
    layer: Vec<String>,
    count: u64,
}

impl SpanWriter {
    fn create(path: &Path) -> Result<SpanWriter, StoreError> {
        let file = File::create(path).map_err(|e| StoreError::io(path, e))?;
        let writer = ArrowWriter::try_new(file, spans_schema(), Some(properties(None)))?;
        Ok(SpanWriter {
            path: path.to_path_buf(),
            writer,
            row: Vec::new(),
            id: Vec::new(),
            start: Vec::new(),
            dur: Vec::new(),
            depth: Vec::new(),
            func: Vec::new(),
            layer: Vec::new(),
            count: 0,
        })
    }

    fn push(
        &mut self,
        row: u32,
        id: i64,
        start: i64,
        dur: i64,
        depth: u8,
        f: &LodFunction,
    ) -> Result<(), StoreError> {
        self.row.push(row as i32);
        self.id.push(id);
        self.start.push(start);
        self.dur.push(dur);
        self.depth.push(depth);
        self.func.push(f.name.clone());
        self.layer.push(f.layer.clone());
        self.count += 1;
        if self.row.len() >= 64 * 1024 {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), StoreError> {
        if self.row.is_empty() {
            return Ok(());
        }
        let cols: Vec<ArrayRef> = vec![
            Arc::new(Int32Array::from(std::mem::take(&mut self.row))),
            Arc::new(Int64Array::from(std::mem::take(&mut self.id))),
            Arc::new(Int64Array::from(std::mem::take(&mut self.start))),
            Arc::new(Int64Array::from(std::mem::take(&mut self.dur))),
            Arc::new(UInt8Array::from(std::mem::take(&mut self.depth))),
            Arc::new(StringArray::from(std::mem::take(&mut self.func))),
            Arc::new(StringArray::from(std::mem::take(&mut self.layer))),
        ];
        let batch = RecordBatch::try_new(spans_schema(), cols)?;
        self.writer.write(&batch)?;
        Ok(())
    }

    fn finish(mut self) -> Result<u64, StoreError> {
        self.flush()?;
        self.writer.close()?;
        let _ = &self.path;
        Ok(self.count)
    }
}

/// Copies the spill files into lod.parquet, level by level: each row's runs in order, then the
/// row groups of every grade merged from them (see `lod_groups`).
fn write_lod(tmp: &Path, shared: &mut Shared, meta: &LodMeta) -> Result<u64, StoreError> {
    let path = tmp.join(LOD_FILE);
    let file = File::create(&path).map_err(|e| StoreError::io(&path, e))?;
    let kv = vec![KeyValue::new(
        LOD_META_KEY.to_string(),
        serde_json::to_string(meta)?,
    )];
    let schema = lod_schema();
    let mut writer = ArrowWriter::try_new(file, schema.clone(), Some(properties(Some(kv))))?;
    let mut total = 0u64;
    let mut batch = LodBatch::default();
    let mut push = |level: usize, grade: u32, r: &Rec| -> Result<(), StoreError> {
        batch.push(level as i32, grade as i32, r);
        total += 1;
        if batch.len() >= 64 * 1024 {
            writer.write(&batch.take(&schema)?)?;
        }
        Ok(())
    };
    for (level, spill) in shared.spills.iter_mut().enumerate() {
        spill.flush()?;
        let mut runs = spill.runs.clone();
        // Stable: a row's runs stay in write (= time) order.
        runs.sort_by_key(|r| r.0);
        let mut reader = BufReader::with_capacity(
            1 << 20,
            File::open(&spill.path).map_err(|e| StoreError::io(&spill.path, e))?,
        );
        let mut pos = 0u64;
        let mut buf = Vec::new();
        for &(_, offset, n) in &runs {
            if offset != pos {
                reader
                    .seek(SeekFrom::Start(offset))
                    .map_err(|e| StoreError::io(&spill.path, e))?;
            }
            buf.resize(n * REC_BYTES, 0);
            reader
                .read_exact(&mut buf)
                .map_err(|e| StoreError::io(&spill.path, e))?;
            pos = offset + buf.len() as u64;
            for chunk in buf.chunks_exact(REC_BYTES) {
                push(level, 0, &Rec::decode(chunk))?;
            }
        }
        super::lod_groups::build_grades(
            &spill.path,
            &spill.runs,
            meta.grades,
            tmp,
            level,
            &mut |grade, r| push(level, grade, r),
        )?;
    }
    if batch.len() > 0 {
        writer.write(&batch.take(&schema)?)?;
    }
    writer.close()?;
    Ok(total)
}

#[derive(Default)]
struct LodBatch {
    level: Vec<i32>,
    grade: Vec<i32>,
    row: Vec<i32>,
    start: Vec<i64>,
    busy: [Vec<i64>; DEPTHS],
    count: Vec<i64>,
    bytes: Vec<i64>,
    func: Vec<Option<i32>>,
    worst_row: Vec<Option<i32>>,
    worst_busy: Vec<Option<i64>>,
}

impl LodBatch {
    fn len(&self) -> usize {
        self.level.len()
    }

    fn push(&mut self, level: i32, grade: i32, r: &Rec) {
        self.level.push(level);
        self.grade.push(grade);
        // A row is its own worst row: stored null, which costs next to nothing.
        let group = grade > 0;
        self.worst_row.push(group.then_some(r.worst_row as i32));
        self.worst_busy.push(group.then_some(r.worst_ns));
        self.row.push(r.row as i32);
        self.start.push(r.start_ns);
        for d in 0..DEPTHS {
            self.busy[d].push(r.busy_ns[d]);
        }
        self.count.push(r.count as i64);
        self.bytes.push(r.bytes);
        self.func
            .push((r.func != u32::MAX).then_some(r.func as i32));
    }

    fn take(&mut self, schema: &SchemaRef) -> Result<RecordBatch, StoreError> {
        let b = std::mem::take(self);
        let [b0, b1, b2, b3] = b.busy;
        let cols: Vec<ArrayRef> = vec![
            Arc::new(Int32Array::from(b.level)),
            Arc::new(Int32Array::from(b.grade)),
            Arc::new(Int32Array::from(b.row)),
            Arc::new(Int64Array::from(b.start)),
            Arc::new(Int64Array::from(b0)),
            Arc::new(Int64Array::from(b1)),
            Arc::new(Int64Array::from(b2)),
            Arc::new(Int64Array::from(b3)),
            Arc::new(Int64Array::from(b.count)),
            Arc::new(Int64Array::from(b.bytes)),
            Arc::new(Int32Array::from(b.func)),
            Arc::new(Int32Array::from(b.worst_row)),
            Arc::new(Int64Array::from(b.worst_busy)),
        ];
        Ok(RecordBatch::try_new(schema.clone(), cols)?)
    }
}

/// Reads the index description of a trace's lod.parquet: None when there is no index, it is
/// damaged (its footer or description unreadable), of another version or for another events
/// table (then it should be rebuilt: it is derived from the events, nothing is lost).
pub fn read_meta(trace: &Trace) -> Result<Option<LodMeta>, StoreError> {
    let path = trace.dir.join(LOD_FILE);
    if !path.is_file() || !trace.dir.join(LOD_SPANS_FILE).is_file() {
        return Ok(None);
    }
    let Ok(footer) = Table::open_footer(&path) else {
        return Ok(None);
    };
    let Some(text) = footer.key_value(LOD_META_KEY) else {
        return Ok(None);
    };
    let meta: LodMeta = match serde_json::from_str(&text) {
        Ok(m) => m,
        Err(_) => return Ok(None),
    };
    if meta.version != LOD_VERSION
        || meta.events != trace.meta.counts.events
        || meta.duration_ns != trace.meta.job.duration_ns
        || meta.rows != Containers::new(&trace.meta).rows()
    {
        return Ok(None);
    }
    Ok(Some(meta))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(binner: &mut RowBinner, calls: &[(i64, i64, u8, u32)]) -> Vec<BucketAcc> {
        let mut out = Vec::new();
        for &(s, d, depth, key) in calls {
            binner.push(s, d, depth, key, 0.0, &mut |b| out.push(b));
        }
        binner.finish(&mut |b| out.push(b));
        out
    }

    #[test]
    fn binner_splits_a_long_call_and_nests() {
        let mut b = RowBinner::new(100);
        // A call 0..350 at depth 0, a child 120..180 at depth 1, a call at 1000.
        let out = run(&mut b, &[(0, 350, 0, 7), (120, 60, 1, 8), (1000, 10, 0, 9)]);
        let idx: Vec<i64> = out.iter().map(|b| b.index).collect();
        assert_eq!(idx, vec![0, 1, 2, 3, 10]);
        assert_eq!(out[0].busy_ns, [100, 0, 0, 0]);
        assert_eq!(out[1].busy_ns, [100, 60, 0, 0]);
        assert_eq!(out[1].count, 1);
        assert_eq!(out[3].busy_ns, [50, 0, 0, 0]);
        assert_eq!(out[0].count, 1);
        assert_eq!(out[4].dominant(), Some(9));
        assert_eq!(out[1].dominant(), Some(7));
    }

    #[test]
    fn binner_clips_to_a_window() {
        let mut b = RowBinner::clipped(100, 250, 480);
        let out = run(&mut b, &[(0, 1000, 0, 1), (300, 10, 1, 2), (900, 10, 1, 3)]);
        let idx: Vec<i64> = out.iter().map(|b| b.index).collect();
        assert_eq!(idx, vec![2, 3, 4]);
        assert_eq!(out[0].count, 0, "the long call started before the window");
        assert_eq!(out[1].count, 1);
    }

    #[test]
    fn bytes_spread_over_the_duration() {
        let mut b = RowBinner::new(100);
        let mut out = Vec::new();
        b.push(50, 100, 0, 1, 1000.0, &mut |x| out.push(x));
        b.finish(&mut |x| out.push(x));
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].bytes, 500.0);
        assert_eq!(out[1].bytes, 500.0);
    }

    #[test]
    fn merge_sums_and_levels() {
        assert_eq!(level_count(1000, 1000), 1);
        assert_eq!(level_count(1000, 4001), 3);
        // One busy row of 100 ms in 400,000 events: at most 50,000 buckets of 4 µs (25,000).
        assert_eq!(choose_base_ns(400_000, 1, 100_000_000), 4000);
        assert_eq!(choose_base_ns(800_000, 1, 100_000_000), 1000);
        assert!(choose_base_ns(400_000, 16, 100_000_000_000) > 1000);
        // Issue 19: a small trace gets coarse buckets, not a fixed budget of them.
        assert_eq!(choose_base_ns(4982, 8, 821_742_103), 16_384_000);
    }

    #[test]
    fn rec_roundtrip() {
        let r = Rec {
            row: 3,
            start_ns: 1 << 40,
            busy_ns: [1, 2, 3, 4],
            count: 9,
            bytes: -1,
            func: 17,
            worst_row: 5,
            worst_ns: 6,
        };
        let mut v = Vec::new();
        r.encode(&mut v);
        assert_eq!(v.len(), REC_BYTES);
        assert_eq!(Rec::decode(&v), r);
    }
}
