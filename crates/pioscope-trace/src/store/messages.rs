//! messages.parquet: the MPI point-to-point messages of a trace, each send paired with its
//! receive by the merge (`merge::messages`). This file owns the row type, the writer and the
//! reader; columns are documented in docs/FORMAT.md "messages.parquet".

use std::collections::HashMap;
use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use arrow_array::types::Int32Type;
use arrow_array::{ArrayRef, DictionaryArray, Int32Array, Int64Array, RecordBatch, StringArray};
use parquet::arrow::ArrowWriter;
use serde::{Deserialize, Serialize};

use super::reader::{EventFilter, Trace};
use super::scan::Table;
use super::schema::{self, messages as mc};
use super::{StoreError, EVENTS_FILE, META_FILE};
use crate::merge::messages::match_events;
use crate::store::reader::EventBatches;

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

/// The message figures merge adds to meta.json `counts` (absent in older traces).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MessageCounts {
    /// Rows of messages.parquet.
    pub messages: u64,
    /// Sends no receive was found for.
    pub unmatched_sends: u64,
    /// Receives no send was found for.
    pub unmatched_receives: u64,
}

impl MessageCounts {
    /// Adds the three fields to a meta.json value's `counts` object.
    pub fn insert_into(&self, meta: &mut serde_json::Value) {
        if let Some(counts) = meta.get_mut("counts").and_then(|c| c.as_object_mut()) {
            counts.insert("messages".into(), self.messages.into());
            counts.insert("unmatched_sends".into(), self.unmatched_sends.into());
            counts.insert("unmatched_receives".into(), self.unmatched_receives.into());
        }
    }

    /// Reads them back from a meta.json value; None when the trace predates them.
    pub fn from_meta(meta: &serde_json::Value) -> Option<MessageCounts> {
        let counts = meta.get("counts")?;
        let get = |k: &str| counts.get(k).and_then(|v| v.as_u64());
        Some(MessageCounts {
            messages: get("messages")?,
            unmatched_sends: get("unmatched_sends").unwrap_or(0),
            unmatched_receives: get("unmatched_receives").unwrap_or(0),
        })
    }
}

/// Rows per row group (and per batch handed to Parquet).
const ROWS_PER_BATCH: usize = 1 << 20;

fn dict(values: impl Iterator<Item = String>) -> Result<ArrayRef, StoreError> {
    let mut index: HashMap<String, i32> = HashMap::new();
    let mut uniq: Vec<String> = Vec::new();
    let mut keys = Vec::new();
    for v in values {
        let k = match index.get(&v) {
            Some(&k) => k,
            None => {
                let k = uniq.len() as i32;
                index.insert(v.clone(), k);
                uniq.push(v);
                k
            }
        };
        keys.push(k);
    }
    Ok(Arc::new(DictionaryArray::<Int32Type>::try_new(
        Int32Array::from(keys),
        Arc::new(StringArray::from_iter_values(uniq.iter())),
    )?))
}

/// Writes messages.parquet (rows as given: merge sorts them by send time).
pub fn write_messages(path: &Path, rows: &[MessageRow]) -> Result<(), StoreError> {
    let schema = schema::messages_schema();
    let file = File::create(path).map_err(|e| StoreError::io(path, e))?;
    let props = schema::base_properties()
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
            dict(chunk.iter().map(|m| m.comm.clone()))?,
            dict(chunk.iter().map(|m| m.send_func.clone()))?,
            dict(chunk.iter().map(|m| m.recv_func.clone()))?,
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
    /// The trace's MPI messages, sorted by send time: messages.parquet, or, for a trace merged
    /// before that table existed, matched now from events.parquet (one streaming pass).
    pub fn messages(&self) -> Result<Vec<MessageRow>, StoreError> {
        let path = self.dir.join(MESSAGES_FILE);
        if path.is_file() {
            read_messages(&path)
        } else {
            let events = EventBatches::open(&self.dir.join(EVENTS_FILE), EventFilter::default())?;
            Ok(match_events(events)?.messages)
        }
    }

    /// Message counts from meta.json (`counts.messages`, `.unmatched_sends`,
    /// `.unmatched_receives`); None for a trace merged before they existed.
    pub fn message_counts(&self) -> Option<MessageCounts> {
        let text = std::fs::read_to_string(self.dir.join(META_FILE)).ok()?;
        let value: serde_json::Value = serde_json::from_str(&text).ok()?;
        MessageCounts::from_meta(&value)
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

    #[test]
    fn counts_go_into_meta_counts() {
        let mut v = serde_json::json!({"counts": {"events": 3}});
        let c = MessageCounts {
            messages: 2,
            unmatched_sends: 1,
            unmatched_receives: 0,
        };
        c.insert_into(&mut v);
        assert_eq!(v["counts"]["events"], 3);
        assert_eq!(MessageCounts::from_meta(&v), Some(c));
        assert_eq!(
            MessageCounts::from_meta(&serde_json::json!({"counts": {}})),
            None
        );
    }
}
