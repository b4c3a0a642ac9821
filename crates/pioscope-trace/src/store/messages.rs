//! messages.parquet: the MPI point-to-point messages of a trace, each send paired with its
//! receive by `matching` as `StoreWriter` writes the events. This file owns the row type, the
//! writer and the reader; columns are documented in docs/FORMAT.md "messages.parquet".

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use arrow_array::{ArrayRef, Int32Array, Int64Array, RecordBatch};
use parquet::arrow::ArrowWriter;

use super::reader::Trace;
use super::scan::Table;
use super::schema::{self, messages as mc};
use super::writer::Dict;
use super::StoreError;

/// The messages table.
pub const MESSAGES_FILE: &str = "messages.parquet";

/// One matched MPI message. Times are ns since the job start, like every store time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MessageRow {
    /// Event id of the send call (Send, Ssend, Bsend, Rsend, Isend, Issend, Sendrecv).
    pub send_id: i64,
    /// Event id of what delivered the data: the `MPI_Recv`, or the `tracer_complete` that
    /// completed an Irecv (child of a Wait/Test) or the receive half of a Sendrecv.
    pub recv_id: i64,
    /// Event id of the call that posted the receive (Recv, Irecv, Sendrecv).
    pub recv_post_id: i64,
    /// World rank of the sender.
    pub from_rank: i32,
    /// World rank of the receiver.
    pub to_rank: i32,
    /// Process (meta.json index) of the send.
    pub send_process: i32,
    /// Thread of the send.
    pub send_thread: i32,
    /// Process of the receive.
    pub recv_process: i32,
    /// Thread that posted the receive.
    pub recv_thread: i32,
    /// Start of the send call.
    pub send_ns: i64,
    /// When the receive had the data: end of the Recv, time of the completion.
    pub recv_ns: i64,
    /// Bytes received.
    pub bytes: i64,
    /// The message's tag.
    pub tag: i32,
    /// The sender's communicator description ("world", "comm-<handle> size=<n>").
    pub comm: String,
    /// Function of the send.
    pub send_func: String,
    /// Function that posted the receive.
    pub recv_func: String,
}

/// Rows per row group (and per batch handed to Parquet).
const ROWS_PER_BATCH: usize = 1 << 20;

/// Writes messages.parquet (rows as given: merge sorts them by send time).
pub(crate) fn write_messages(path: &Path, rows: &[MessageRow]) -> Result<(), StoreError> {
    let schema = schema::messages_schema();
    let file = File::create(path).map_err(|e| StoreError::io(path, e))?;
    let props = schema::messages_properties()
        .set_max_row_group_row_count(Some(ROWS_PER_BATCH))
        .build();
    let mut writer = ArrowWriter::try_new(file, schema.clone(), Some(props))?;
    let chunks: Vec<&[MessageRow]> = if rows.is_empty() {
        vec![rows]
    } else {
        rows.chunks(ROWS_PER_BATCH).collect()
    };
    for chunk in chunks {
        let i64s = |f: fn(&MessageRow) -> i64| -> ArrayRef {
            Arc::new(Int64Array::from_iter_values(chunk.iter().map(f)))
        };
        let i32s = |f: fn(&MessageRow) -> i32| -> ArrayRef {
            Arc::new(Int32Array::from_iter_values(chunk.iter().map(f)))
        };
        let columns: Vec<ArrayRef> = vec![
            i64s(|m| m.send_id),
            i64s(|m| m.recv_id),
            i64s(|m| m.recv_post_id),
            i32s(|m| m.from_rank),
            i32s(|m| m.to_rank),
            i32s(|m| m.send_process),
            i32s(|m| m.send_thread),
            i32s(|m| m.recv_process),
            i32s(|m| m.recv_thread),
            i64s(|m| m.send_ns),
            i64s(|m| m.recv_ns),
            i64s(|m| m.bytes),
            i32s(|m| m.tag),
            Dict::encode(chunk.iter().map(|m| m.comm.as_str()))?,
            Dict::encode(chunk.iter().map(|m| m.send_func.as_str()))?,
            Dict::encode(chunk.iter().map(|m| m.recv_func.as_str()))?,
        ];
        writer.write(&RecordBatch::try_new(schema.clone(), columns)?)?;
    }
    writer.close()?;
    Ok(())
}

/// Reads a messages.parquet file.
pub fn read_messages(path: &Path) -> Result<Vec<MessageRow>, StoreError> {
    let table = Table::open_footer(path)?;
    let mut rows = Vec::new();
    for batch in table.read_all(&[])? {
        let c = table.columns(&batch);
        let (send_id, recv_id, post) = (
            c.int(mc::SEND_ID)?,
            c.int(mc::RECV_ID)?,
            c.int(mc::RECV_POST_ID)?,
        );
        let (from, to, sp, st, rp, rt) = (
            c.int(mc::FROM_RANK)?,
            c.int(mc::TO_RANK)?,
            c.int(mc::SEND_PROCESS)?,
            c.int(mc::SEND_THREAD)?,
            c.int(mc::RECV_PROCESS)?,
            c.int(mc::RECV_THREAD)?,
        );
        let (sns, rns, bytes, tag) = (
            c.int(mc::SEND_NS)?,
            c.int(mc::RECV_NS)?,
            c.int(mc::BYTES)?,
            c.int(mc::TAG)?,
        );
        let (comm, sf, rf) = (
            c.str(mc::COMM)?,
            c.str(mc::SEND_FUNC)?,
            c.str(mc::RECV_FUNC)?,
        );
        for i in 0..c.rows() {
            rows.push(MessageRow {
                send_id: send_id.value(i),
                recv_id: recv_id.value(i),
                recv_post_id: post.value(i),
                from_rank: from.value(i) as i32,
                to_rank: to.value(i) as i32,
                send_process: sp.value(i) as i32,
                send_thread: st.value(i) as i32,
                recv_process: rp.value(i) as i32,
                recv_thread: rt.value(i) as i32,
                send_ns: sns.value(i),
                recv_ns: rns.value(i),
                bytes: bytes.value(i),
                tag: tag.value(i) as i32,
                comm: comm.text(i).to_string(),
                send_func: sf.text(i).to_string(),
                recv_func: rf.text(i).to_string(),
            });
        }
    }
    Ok(rows)
}

impl Trace {
    /// The trace's MPI messages (messages.parquet), sorted by send time.
    pub fn messages(&self) -> Result<Vec<MessageRow>, StoreError> {
        read_messages(&self.dir.join(MESSAGES_FILE))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_round_trip() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join(MESSAGES_FILE);
        let rows: Vec<MessageRow> = (0..3)
            .map(|i| MessageRow {
                send_id: i,
                recv_id: 10 + i,
                recv_post_id: 20 + i,
                from_rank: 0,
                to_rank: 1,
                send_process: 0,
                send_thread: 0,
                recv_process: 1,
                recv_thread: 2,
                send_ns: 100 * i,
                recv_ns: 100 * i + 50,
                bytes: 8 << i,
                tag: 7,
                comm: if i == 2 { "comm-1 size=2" } else { "world" }.to_string(),
                send_func: "MPI_Send".to_string(),
                recv_func: "MPI_Irecv".to_string(),
            })
            .collect();
        write_messages(&path, &rows).expect("write");
        assert_eq!(read_messages(&path).expect("read"), rows);
        write_messages(&path, &[]).expect("write empty");
        assert!(read_messages(&path).expect("read").is_empty());
    }
}
