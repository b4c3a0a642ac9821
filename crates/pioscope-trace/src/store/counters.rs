//! counters.parquet: sampled node and process counters (CPU, disk, network, memory) on the
//! trace's time base. This file owns the row type, the counter names, the writer and the
//! reader; the columns are documented in docs/FORMAT.md "counters.parquet".
//!
//! One row is one counter of one sample: a node's (process -1) or a traced container's. Rates
//! are stored as the amount over the interval that ends at `time_ns` (`interval_ns` long), so a
//! reader gets a rate with one division and a total with one sum, whatever the sampling rate.

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use arrow_array::{ArrayRef, Float64Array, Int32Array, Int64Array, RecordBatch};
use parquet::arrow::ArrowWriter;

use super::reader::Trace;
use super::scan::Table;
use super::schema::{self, counters as cc};
use super::writer::Dict;
use super::StoreError;

/// The counters table.
pub const COUNTERS_FILE: &str = "counters.parquet";

/// The `process` of a node's own counters.
pub const NODE: i32 = -1;

/// The counter names (docs/FORMAT.md lists their units).
pub mod name {
    /// CPU time in user mode over the interval, percent: of all the node's cores for a node
    /// (0..=100), of one core for a process (above 100 with several threads busy).
    pub const CPU_USER: &str = "cpu_user_pct";
    /// CPU time in the kernel over the interval, percent (as `CPU_USER`).
    pub const CPU_SYSTEM: &str = "cpu_system_pct";
    /// Node only: CPU time idle with I/O outstanding, percent of all cores.
    pub const CPU_IOWAIT: &str = "cpu_iowait_pct";
    /// Node: reads completed by the whole disks (/proc/diskstats) over the interval.
    pub const DISK_READ_OPS: &str = "disk_read_ops";
    /// Node: writes completed by the whole disks over the interval.
    pub const DISK_WRITE_OPS: &str = "disk_write_ops";
    /// Node: bytes read by the whole disks over the interval; process: bytes it had read from
    /// storage (/proc/PID/io `read_bytes`).
    pub const DISK_READ_BYTES: &str = "disk_read_bytes";
    /// Node: bytes written by the whole disks; process: /proc/PID/io `write_bytes`.
    pub const DISK_WRITE_BYTES: &str = "disk_write_bytes";
    /// Node: bytes received on every interface (loopback included) over the interval.
    pub const NET_RX_BYTES: &str = "net_rx_bytes";
    /// Node: bytes sent on every interface over the interval.
    pub const NET_TX_BYTES: &str = "net_tx_bytes";
    /// Memory in use at the sample, bytes: MemTotal - MemAvailable for a node, the resident
    /// set for a process.
    pub const MEM_USED_BYTES: &str = "mem_used_bytes";

    /// Counters that are a percentage of CPU time.
    pub const CPU: [&str; 3] = [CPU_USER, CPU_SYSTEM, CPU_IOWAIT];
    /// Counters that count bytes moved over the interval.
    pub const BYTES: [&str; 4] = [
        DISK_READ_BYTES,
        DISK_WRITE_BYTES,
        NET_RX_BYTES,
        NET_TX_BYTES,
    ];
}

/// One sample of one counter.
#[derive(Clone, Debug, PartialEq)]
pub struct CounterRow {
    /// End of the sampled interval, ns since the job start (the events' time base).
    pub time_ns: i64,
    /// Length of the interval the value covers, ns (0 for the first sample of a gauge).
    pub interval_ns: i64,
    /// Host name.
    pub host: String,
    /// Container (meta.json `processes` index), or `NODE` for the host itself.
    pub process: i32,
    /// Counter name (`name::*`).
    pub counter: String,
    /// Value (units by counter, `name`).
    pub value: f64,
}

/// Rows per row group.
const ROWS_PER_BATCH: usize = 1 << 20;

/// Writes counters.parquet (rows as given: the store writer sorts them by host, process,
/// counter, time).
pub(crate) fn write_counters(path: &Path, rows: &[CounterRow]) -> Result<(), StoreError> {
    let schema = schema::counters_schema();
    let file = File::create(path).map_err(|e| StoreError::io(path, e))?;
    let props = schema::whole_table_properties()
        .set_max_row_group_row_count(Some(ROWS_PER_BATCH))
        .build();
    let mut writer = ArrowWriter::try_new(file, schema.clone(), Some(props))?;
    let chunks: Vec<&[CounterRow]> = if rows.is_empty() {
        vec![rows]
    } else {
        rows.chunks(ROWS_PER_BATCH).collect()
    };
    for chunk in chunks {
        let columns: Vec<ArrayRef> = vec![
            Arc::new(Int64Array::from_iter_values(
                chunk.iter().map(|r| r.time_ns),
            )),
            Arc::new(Int64Array::from_iter_values(
                chunk.iter().map(|r| r.interval_ns),
            )),
            Dict::encode(chunk.iter().map(|r| r.host.as_str()))?,
            Arc::new(Int32Array::from_iter_values(
                chunk.iter().map(|r| r.process),
            )),
            Dict::encode(chunk.iter().map(|r| r.counter.as_str()))?,
            Arc::new(Float64Array::from_iter_values(
                chunk.iter().map(|r| r.value),
            )),
        ];
        writer.write(&RecordBatch::try_new(schema.clone(), columns)?)?;
    }
    writer.close()?;
    Ok(())
}

/// Reads a counters.parquet file.
pub fn read_counters(path: &Path) -> Result<Vec<CounterRow>, StoreError> {
    let table = Table::open_footer(path)?;
    let mut rows = Vec::new();
    for batch in table.read_all(&[])? {
        let c = table.columns(&batch);
        let (time, interval, process) = (
            c.int(cc::TIME_NS)?,
            c.int(cc::INTERVAL_NS)?,
            c.int(cc::PROCESS)?,
        );
        let (host, counter, value) = (c.str(cc::HOST)?, c.str(cc::COUNTER)?, c.float(cc::VALUE)?);
        for i in 0..c.rows() {
            rows.push(CounterRow {
                time_ns: time.value(i),
                interval_ns: interval.value(i),
                host: host.text(i).to_string(),
                process: process.value(i) as i32,
                counter: counter.text(i).to_string(),
                value: value.value(i),
            });
        }
    }
    Ok(rows)
}

impl Trace {
    /// The sampled counters (counters.parquet), sorted by host, process, counter and time;
    /// empty for a trace without them (sampling off, a simulated or older trace).
    pub fn counters(&self) -> Result<Vec<CounterRow>, StoreError> {
        let path = self.dir.join(COUNTERS_FILE);
        if !path.exists() {
            return Ok(Vec::new());
        }
        read_counters(&path)
    }
}

/// Sorts rows in the table's order: host, process, counter, time.
pub(crate) fn sort(rows: &mut [CounterRow]) {
    rows.sort_by(|a, b| {
        (&a.host, a.process, &a.counter, a.time_ns)
            .cmp(&(&b.host, b.process, &b.counter, b.time_ns))
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_round_trip() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join(COUNTERS_FILE);
        let rows: Vec<CounterRow> = (0..3)
            .map(|i| CounterRow {
                time_ns: 100_000_000 * i,
                interval_ns: 100_000_000,
                host: "n1".into(),
                process: if i == 2 { NODE } else { 0 },
                counter: name::CPU_USER.into(),
                value: 12.5 * i as f64,
            })
            .collect();
        write_counters(&path, &rows).expect("write");
        assert_eq!(read_counters(&path).expect("read"), rows);
        write_counters(&path, &[]).expect("write empty");
        assert!(read_counters(&path).expect("read").is_empty());
    }
}
