//! The Arrow schemas of the store's tables and the Parquet settings that keep them small.
//!
//! Encoding choices (measured on an HPIO-like pattern, see `tests/store_size.rs`):
//! - sorted or slowly changing integers (id, start_ns, offset, parent, request) use
//!   DELTA_BINARY_PACKED: a pwrite every ~300 ns costs ~9 bits of start_ns, a constant stride
//!   costs nothing;
//! - durations are noise around a typical value: BYTE_STREAM_SPLIT + zstd (~0.9 byte each)
//!   beats PLAIN + zstd (~1) and delta (~1.7);
//! - low-cardinality columns (rank, process, thread, layer, func, depth, file, sizes, errors,
//!   MPI fields, strings) use dictionary + RLE, falling back to DELTA_BINARY_PACKED for
//!   integers when the dictionary grows too big;
//! - everything is zstd compressed; row groups hold ~1M rows; rank and start_ns have
//!   statistics per page (the page index) so that a rank or a time window is a range read,
//!   the other columns per row group only.

use std::sync::Arc;

use arrow_schema::{DataType, Field, Schema, SchemaRef};
use parquet::basic::{Compression, Encoding, ZstdLevel};
use parquet::file::metadata::SortingColumn;
use parquet::file::properties::{EnabledStatistics, WriterProperties, WriterVersion};
use parquet::schema::types::ColumnPath;

/// Rows per row group of events.parquet.
pub const ROW_GROUP_ROWS: usize = 1 << 20;
/// Rows per page of events.parquet at most (see `events_properties`).
const EVENTS_PAGE_ROWS: usize = 8 * 1024;

/// The zstd level: 3 is zstd's own default, a good size/speed point for this data.
const ZSTD_LEVEL: i32 = 3;

/// Column names of events.parquet, in order.
pub mod events {
    #![allow(missing_docs)]
    pub const ID: &str = "id";
    pub const RANK: &str = "rank";
    pub const PROCESS: &str = "process";
    pub const THREAD: &str = "thread";
    pub const START_NS: &str = "start_ns";
    pub const DURATION_NS: &str = "duration_ns";
    pub const LAYER: &str = "layer";
    pub const FUNC: &str = "func";
    pub const DEPTH: &str = "depth";
    pub const PARENT: &str = "parent";
    pub const FILE_ID: &str = "file_id";
    pub const OFFSET: &str = "offset";
    pub const SIZE: &str = "size";
    pub const RESULT: &str = "result";
    pub const ERROR: &str = "error";
    pub const FLAGS: &str = "flags";
    pub const COLLECTIVE: &str = "collective";
    pub const INSTANCE: &str = "instance";
    pub const REQUEST: &str = "request";
    pub const PEER: &str = "peer";
    pub const TAG: &str = "tag";
    pub const ROOT: &str = "root";
    pub const COMM_SIZE: &str = "comm_size";
    pub const COMM: &str = "comm";
    pub const REGION: &str = "region";
}

fn dict_str() -> DataType {
    DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8))
}

/// The schema of events.parquet.
pub fn events_schema() -> SchemaRef {
    use events::*;
    Arc::new(Schema::new(vec![
        Field::new(ID, DataType::Int64, false),
        Field::new(RANK, DataType::Int32, false),
        Field::new(PROCESS, DataType::Int32, false),
        Field::new(THREAD, DataType::Int32, false),
        Field::new(START_NS, DataType::Int64, false),
        Field::new(DURATION_NS, DataType::Int64, false),
        Field::new(LAYER, dict_str(), false),
        Field::new(FUNC, dict_str(), false),
        Field::new(DEPTH, DataType::UInt8, false),
        Field::new(PARENT, DataType::Int64, true),
        Field::new(FILE_ID, DataType::Int32, true),
        Field::new(OFFSET, DataType::Int64, true),
        Field::new(SIZE, DataType::Int64, false),
        Field::new(RESULT, DataType::Int64, false),
        Field::new(ERROR, DataType::Int32, false),
        Field::new(FLAGS, DataType::UInt8, false),
        Field::new(COLLECTIVE, DataType::Boolean, false),
        Field::new(INSTANCE, DataType::Int32, true),
        Field::new(REQUEST, DataType::Int64, true),
        Field::new(PEER, DataType::Int32, true),
        Field::new(TAG, DataType::Int32, true),
        Field::new(ROOT, DataType::Int32, true),
        Field::new(COMM_SIZE, DataType::Int32, true),
        Field::new(COMM, dict_str(), true),
        Field::new(REGION, dict_str(), true),
    ]))
}

/// Column names of files.parquet.
pub mod files {
    #![allow(missing_docs)]
    pub const FILE_ID: &str = "file_id";
    pub const PATH: &str = "path";
    pub const FS_TYPE: &str = "fs_type";
    pub const FS_MAGIC: &str = "fs_magic";
    pub const RANKS: &str = "ranks";
    pub const EVENTS: &str = "events";
}

/// The schema of files.parquet.
pub fn files_schema() -> SchemaRef {
    use files::*;
    Arc::new(Schema::new(vec![
        Field::new(FILE_ID, DataType::Int32, false),
        Field::new(PATH, DataType::Utf8, false),
        Field::new(FS_TYPE, DataType::Utf8, false),
        Field::new(FS_MAGIC, DataType::Int64, false),
        Field::new(RANKS, DataType::Int32, false),
        Field::new(EVENTS, DataType::Int64, false),
    ]))
}

/// Column names of settings.parquet.
pub mod settings {
    #![allow(missing_docs)]
    pub const RANK: &str = "rank";
    pub const PROCESS: &str = "process";
    pub const TIME_NS: &str = "time_ns";
    pub const FILE_ID: &str = "file_id";
    pub const FUNC: &str = "func";
    pub const KEY: &str = "key";
    pub const VALUE: &str = "value";
}

/// The schema of settings.parquet.
pub fn settings_schema() -> SchemaRef {
    use settings::*;
    Arc::new(Schema::new(vec![
        Field::new(RANK, DataType::Int32, false),
        Field::new(PROCESS, DataType::Int32, false),
        Field::new(TIME_NS, DataType::Int64, false),
        Field::new(FILE_ID, DataType::Int32, true),
        Field::new(FUNC, dict_str(), false),
        Field::new(KEY, dict_str(), false),
        Field::new(VALUE, DataType::Utf8, false),
    ]))
}

/// Column names of messages.parquet (MPI point-to-point messages, see `merge::messages`).
pub mod messages {
    #![allow(missing_docs)]
    pub const SEND_ID: &str = "send_id";
    pub const RECV_ID: &str = "recv_id";
    pub const RECV_POST_ID: &str = "recv_post_id";
    pub const FROM_RANK: &str = "from_rank";
    pub const TO_RANK: &str = "to_rank";
    pub const SEND_PROCESS: &str = "send_process";
    pub const SEND_THREAD: &str = "send_thread";
    pub const RECV_PROCESS: &str = "recv_process";
    pub const RECV_THREAD: &str = "recv_thread";
    pub const SEND_NS: &str = "send_ns";
    pub const RECV_NS: &str = "recv_ns";
    pub const BYTES: &str = "bytes";
    pub const TAG: &str = "tag";
    pub const COMM: &str = "comm";
    pub const SEND_FUNC: &str = "send_func";
    pub const RECV_FUNC: &str = "recv_func";
}

/// The schema of messages.parquet.
pub fn messages_schema() -> SchemaRef {
    use messages::*;
    Arc::new(Schema::new(vec![
        Field::new(SEND_ID, DataType::Int64, false),
        Field::new(RECV_ID, DataType::Int64, false),
        Field::new(RECV_POST_ID, DataType::Int64, false),
        Field::new(FROM_RANK, DataType::Int32, false),
        Field::new(TO_RANK, DataType::Int32, false),
        Field::new(SEND_PROCESS, DataType::Int32, false),
        Field::new(SEND_THREAD, DataType::Int32, false),
        Field::new(RECV_PROCESS, DataType::Int32, false),
        Field::new(RECV_THREAD, DataType::Int32, false),
        Field::new(SEND_NS, DataType::Int64, false),
        Field::new(RECV_NS, DataType::Int64, false),
        Field::new(BYTES, DataType::Int64, false),
        Field::new(TAG, DataType::Int32, false),
        Field::new(COMM, dict_str(), false),
        Field::new(SEND_FUNC, dict_str(), false),
        Field::new(RECV_FUNC, dict_str(), false),
    ]))
}

/// Column names of counters.parquet (sampled node and process counters, see `counters`).
pub mod counters {
    #![allow(missing_docs)]
    pub const TIME_NS: &str = "time_ns";
    pub const INTERVAL_NS: &str = "interval_ns";
    pub const HOST: &str = "host";
    pub const PROCESS: &str = "process";
    pub const COUNTER: &str = "counter";
    pub const VALUE: &str = "value";
}

/// The schema of counters.parquet.
pub fn counters_schema() -> SchemaRef {
    use counters::*;
    Arc::new(Schema::new(vec![
        Field::new(TIME_NS, DataType::Int64, false),
        Field::new(INTERVAL_NS, DataType::Int64, false),
        Field::new(HOST, dict_str(), false),
        Field::new(PROCESS, DataType::Int32, false),
        Field::new(COUNTER, dict_str(), false),
        Field::new(VALUE, DataType::Float64, false),
    ]))
}

/// Column names of darshan.parquet (the counters of an imported Darshan log, see
/// `darshan_counters`).
pub mod darshan {
    #![allow(missing_docs)]
    pub const MODULE: &str = "module";
    pub const RANK: &str = "rank";
    pub const FILE_ID: &str = "file_id";
    pub const COMPONENT: &str = "component";
    pub const COUNTER: &str = "counter";
    pub const VALUE: &str = "value";
}

/// The schema of darshan.parquet.
pub fn darshan_schema() -> SchemaRef {
    use darshan::*;
    Arc::new(Schema::new(vec![
        Field::new(MODULE, dict_str(), false),
        Field::new(RANK, DataType::Int32, false),
        Field::new(FILE_ID, DataType::Int32, false),
        Field::new(COMPONENT, DataType::Int32, false),
        Field::new(COUNTER, dict_str(), false),
        Field::new(VALUE, DataType::Float64, true),
    ]))
}

/// Column names of darshan_heatmap.parquet (the HEATMAP module of an imported Darshan log,
/// see `darshan_heatmap`).
pub mod darshan_heatmap {
    #![allow(missing_docs)]
    pub const MODULE: &str = "module";
    pub const RANK: &str = "rank";
    pub const BIN: &str = "bin";
    pub const START_NS: &str = "start_ns";
    pub const WIDTH_NS: &str = "width_ns";
    pub const READ_BYTES: &str = "read_bytes";
    pub const WRITE_BYTES: &str = "write_bytes";
}

/// The schema of darshan_heatmap.parquet.
pub fn darshan_heatmap_schema() -> SchemaRef {
    use darshan_heatmap::*;
    Arc::new(Schema::new(vec![
        Field::new(MODULE, dict_str(), false),
        Field::new(RANK, DataType::Int32, false),
        Field::new(BIN, DataType::Int32, false),
        Field::new(START_NS, DataType::Int64, false),
        Field::new(WIDTH_NS, DataType::Int64, false),
        Field::new(READ_BYTES, DataType::Int64, false),
        Field::new(WRITE_BYTES, DataType::Int64, false),
    ]))
}

/// Writer settings every file of the store starts from (ZSTD level 3, page statistics, the
/// writer's name); each file adds its own row groups, dictionaries and encodings.
pub(crate) fn base_properties() -> parquet::file::properties::WriterPropertiesBuilder {
    // Level 3 is always valid; fall back to the codec's default level rather than fail.
    let level = ZstdLevel::try_new(ZSTD_LEVEL).unwrap_or_default();
    WriterProperties::builder()
        .set_writer_version(WriterVersion::PARQUET_1_0)
        .set_compression(Compression::ZSTD(level))
        .set_statistics_enabled(EnabledStatistics::Page)
        .set_created_by(format!("pioscope-trace {}", env!("CARGO_PKG_VERSION")))
}

/// Writer settings of events.parquet.
pub fn events_properties() -> WriterProperties {
    use events::*;
    let mut b = base_properties()
        .set_max_row_group_row_count(Some(ROW_GROUP_ROWS))
        .set_max_row_group_bytes(None)
        // Pages of at most this many rows, so that a narrow window of the viewer or a range
        // read decompresses a few small pages per column rather than ~1 MB ones of ~350,000
        // events (issue 18: most of a 60-row window's time at 100M events).
        .set_data_page_row_count_limit(EVENTS_PAGE_ROWS)
        .set_dictionary_enabled(true)
        .set_sorting_columns(Some(vec![
            SortingColumn {
                column_idx: 1,
                descending: false,
                nulls_first: false,
            },
            SortingColumn {
                column_idx: 4,
                descending: false,
                nulls_first: false,
            },
        ]));
    for col in [ID, START_NS, PARENT, OFFSET, REQUEST] {
        b = b
            .set_column_dictionary_enabled(ColumnPath::from(col), false)
            .set_column_encoding(ColumnPath::from(col), Encoding::DELTA_BINARY_PACKED);
    }
    // Durations are independent noise: delta doubles their spread and one long call widens a
    // whole miniblock. Split into byte streams, the always-zero high bytes become long runs
    // and the noisy low bytes sit together, which zstd squeezes better than plain values
    // (measured on the HPIO demo traces: 9 to 22 % less for the column).
    b = b
        .set_column_dictionary_enabled(ColumnPath::from(DURATION_NS), false)
        .set_column_encoding(ColumnPath::from(DURATION_NS), Encoding::BYTE_STREAM_SPLIT);
    // Page statistics (the page index) only where range reads prune pages (`scan::Pred` on
    // rank and start_ns); row-group statistics everywhere, for DuckDB's and pyarrow's pushdown.
    for field in events_schema().fields() {
        let name = field.name().as_str();
        if name != RANK && name != START_NS {
            b = b.set_column_statistics_enabled(ColumnPath::from(name), EnabledStatistics::Chunk);
        }
    }
    // Dictionary columns of integers: fall back to delta when the dictionary overflows.
    for col in [
        RANK, PROCESS, THREAD, FILE_ID, SIZE, RESULT, ERROR, INSTANCE, PEER, TAG, ROOT, COMM_SIZE,
    ] {
        b = b.set_column_encoding(ColumnPath::from(col), Encoding::DELTA_BINARY_PACKED);
    }
    b.build()
}

/// Writer settings every table read only whole starts from (files, settings, messages,
/// counters, darshan): row-group statistics, for DuckDB's and pyarrow's pushdown, but no page
/// index, which no reader of theirs prunes by and which costs a few hundred bytes per table.
pub(crate) fn whole_table_properties() -> parquet::file::properties::WriterPropertiesBuilder {
    base_properties().set_statistics_enabled(EnabledStatistics::Chunk)
}

/// Writer settings of messages.parquet: the ids and times of its rows grow with the send
/// time (the table's order), where delta beats a dictionary of distinct values (measured on
/// the collective HPIO demo trace: 12 % less for the table).
pub(crate) fn messages_properties() -> parquet::file::properties::WriterPropertiesBuilder {
    use messages::*;
    let mut b = whole_table_properties();
    for col in [SEND_ID, RECV_ID, RECV_POST_ID, SEND_NS, RECV_NS] {
        b = b
            .set_column_dictionary_enabled(ColumnPath::from(col), false)
            .set_column_encoding(ColumnPath::from(col), Encoding::DELTA_BINARY_PACKED);
    }
    b
}

/// Writer settings of the small tables (files, settings).
pub fn small_table_properties() -> WriterProperties {
    whole_table_properties()
        .set_dictionary_enabled(true)
        .build()
}
