//! The reorder buffer of pass 2: a rank's records arrive in file order (a call's record when
//! it returns) and leave in store order, with memory bounded whatever the rank recorded.
//!
//! Records wait until the caller's watermark (no record still to come starts before it,
//! `floors`) passes them: in a queue while they arrive in store order (the common case: a
//! thread's calls that nest in no other), in a heap otherwise. When `cap` records wait (a
//! call that lasted most of the run holds back everything that started after it), they are
//! written out, in order, as a sorted run to an unnamed temporary file; leaving records are then the least of
//! the queue's, the heap's and every run's first.

use std::cmp::{Ordering, Reverse};
use std::collections::{BinaryHeap, VecDeque};
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::raw::RawEvent;

/// Records waiting in memory at most by default: 2^19 of about 100 bytes, about 50 MiB (a
/// power of two, as the queue's allocation doubles: one more would allocate twice as much).
pub const DEFAULT_CAP: usize = 1 << 19;

/// One event of a rank on its way to the store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Row {
    /// Start, store ns (relative to the job start).
    pub start_ns: i64,
    /// Duration, ns.
    pub duration_ns: i64,
    /// Process index.
    pub process: u32,
    /// Position in its process's records (file order): the last tie-breaker of store order.
    pub seq: u64,
    /// False for a server's record outside the job's window: it takes part in finding
    /// parents, as in the raw file, but is not stored.
    pub kept: bool,
    /// The record as decoded (times in the process's own ticks, on which parents are found;
    /// flags without EXT).
    pub raw: RawEvent,
}

/// Store order of a row: start, process, thread, depth, then file order.
type Key = (i64, u32, u32, u8, u64);

/// Bytes of a row in a run file.
const ROW_BYTES: usize = 93;

impl Row {
    fn key(&self) -> Key {
        (
            self.start_ns,
            self.process,
            self.raw.thread,
            self.raw.depth,
            self.seq,
        )
    }

    fn encode(&self) -> [u8; ROW_BYTES] {
        let mut b = [0u8; ROW_BYTES];
        let mut at = 0;
        let mut put = |bytes: &[u8]| {
            b[at..at + bytes.len()].copy_from_slice(bytes);
            at += bytes.len();
        };
        let e = &self.raw;
        put(&self.start_ns.to_le_bytes());
        put(&self.duration_ns.to_le_bytes());
        put(&self.process.to_le_bytes());
        put(&self.seq.to_le_bytes());
        put(&[u8::from(self.kept), e.depth, e.flags]);
        put(&e.thread.to_le_bytes());
        put(&e.start.to_le_bytes());
        put(&e.duration.to_le_bytes());
        put(&e.func.to_le_bytes());
        put(&e.object.to_le_bytes());
        put(&e.size.to_le_bytes());
        put(&e.offset.to_le_bytes());
        put(&e.result.to_le_bytes());
        put(&e.error.to_le_bytes());
        put(&e.link.to_le_bytes());
        b
    }

    fn decode(b: &[u8; ROW_BYTES]) -> Row {
        let mut at = 0;
        let mut take = |n: usize| {
            let s = &b[at..at + n];
            at += n;
            s
        };
        let u64_at = |s: &[u8]| u64::from_le_bytes(s.try_into().expect("8 bytes"));
        let u32_at = |s: &[u8]| u32::from_le_bytes(s.try_into().expect("4 bytes"));
        let start_ns = u64_at(take(8)) as i64;
        let duration_ns = u64_at(take(8)) as i64;
        let process = u32_at(take(4));
        let seq = u64_at(take(8));
        let small = take(3);
        let (kept, depth, flags) = (small[0] != 0, small[1], small[2]);
        Row {
            start_ns,
            duration_ns,
            process,
            seq,
            kept,
            raw: RawEvent {
                thread: u32_at(take(4)),
                start: u64_at(take(8)),
                duration: u64_at(take(8)),
                func: u16::from_le_bytes(take(2).try_into().expect("2 bytes")),
                depth,
                flags,
                object: u32_at(take(4)),
                size: u64_at(take(8)),
                offset: u64_at(take(8)),
                result: u64_at(take(8)) as i64,
                error: u32_at(take(4)) as i32,
                link: u64_at(take(8)),
            },
        }
    }
}

/// A row in the heap, least key on top.
struct Waiting(Row);

impl PartialEq for Waiting {
    fn eq(&self, other: &Self) -> bool {
        self.0.key() == other.0.key()
    }
}
impl Eq for Waiting {}
impl PartialOrd for Waiting {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Waiting {
    fn cmp(&self, other: &Self) -> Ordering {
        other.0.key().cmp(&self.0.key())
    }
}

/// A sorted run on disk and its next row.
struct Run {
    reader: BufReader<File>,
    left: u64,
    head: Row,
}

impl Run {
    /// Moves to the next row; false when the run is used up.
    fn advance(&mut self) -> io::Result<bool> {
        if self.left == 0 {
            return Ok(false);
        }
        let mut b = [0u8; ROW_BYTES];
        self.reader.read_exact(&mut b)?;
        self.head = Row::decode(&b);
        self.left -= 1;
        Ok(true)
    }
}

/// Records between arrival and store order (see the module).
pub struct Reorder {
    /// Records that arrived in store order, least first.
    queue: VecDeque<Row>,
    /// The others.
    heap: BinaryHeap<Waiting>,
    cap: usize,
    spill_dir: PathBuf,
    runs: Vec<Run>,
    /// Every live run's head: (key, run index), least on top.
    heads: BinaryHeap<Reverse<(Key, usize)>>,
    /// Runs written so far (names the files).
    spilled: usize,
}

impl Reorder {
    /// A buffer that spills to sorted runs in `spill_dir` at `cap` waiting records.
    pub fn new(cap: usize, spill_dir: &Path) -> Self {
        Reorder {
            queue: VecDeque::new(),
            heap: BinaryHeap::new(),
            cap: cap.max(1),
            spill_dir: spill_dir.to_path_buf(),
            runs: Vec::new(),
            heads: BinaryHeap::new(),
            spilled: 0,
        }
    }

    /// Runs written to disk so far.
    #[cfg(test)]
    pub fn runs_spilled(&self) -> usize {
        self.spilled
    }

    /// Takes a record; spills the waiting ones when they reach the cap.
    pub fn push(&mut self, row: Row) -> io::Result<()> {
        if self.queue.back().is_none_or(|last| last.key() <= row.key()) {
            self.queue.push_back(row);
        } else {
            self.heap.push(Waiting(row));
        }
        if self.queue.len() + self.heap.len() >= self.cap {
            self.spill()?;
        }
        Ok(())
    }

    /// Writes every waiting record, in order, to a new run file (unlinked at once, so it
    /// disappears with the merge whatever happens).
    fn spill(&mut self) -> io::Result<()> {
        let path = self.spill_dir.join(format!(
            ".pioscope-merge-{}-{}.run",
            std::process::id(),
            self.spilled
        ));
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)?;
        fs::remove_file(&path)?;
        self.spilled += 1;
        let mut out = BufWriter::with_capacity(1 << 16, file);
        let mut rows = 0u64;
        while let Some(row) = self.pop_waiting(None) {
            out.write_all(&row.encode())?;
            rows += 1;
        }
        let mut file = out.into_inner().map_err(|e| e.into_error())?;
        file.seek(SeekFrom::Start(0))?;
        let mut run = Run {
            reader: BufReader::with_capacity(1 << 16, file),
            left: rows,
            head: Row::decode(&[0u8; ROW_BYTES]),
        };
        if run.advance()? {
            self.heads.push(Reverse((run.head.key(), self.runs.len())));
            self.runs.push(run);
        }
        Ok(())
    }

    /// The least record of the queue and the heap if it starts before `watermark`.
    fn pop_waiting(&mut self, watermark: Option<i64>) -> Option<Row> {
        let from_queue = match (self.queue.front(), self.heap.peek()) {
            (None, None) => return None,
            (Some(q), Some(h)) => q.key() <= h.0.key(),
            (q, _) => q.is_some(),
        };
        let first = if from_queue {
            self.queue.front()
        } else {
            self.heap.peek().map(|w| &w.0)
        }?;
        if watermark.is_some_and(|w| first.start_ns >= w) {
            return None;
        }
        if from_queue {
            self.queue.pop_front()
        } else {
            self.heap.pop().map(|w| w.0)
        }
    }

    /// The least waiting record if it starts before `watermark` (`None`: no bound, the
    /// records are all in).
    pub fn pop_before(&mut self, watermark: Option<i64>) -> io::Result<Option<Row>> {
        let Some(&Reverse((run_key, r))) = self.heads.peek() else {
            return Ok(self.pop_waiting(watermark));
        };
        let in_memory = [self.queue.front(), self.heap.peek().map(|w| &w.0)]
            .into_iter()
            .flatten()
            .map(Row::key)
            .min();
        if in_memory.is_some_and(|k| k < run_key) {
            return Ok(self.pop_waiting(watermark));
        }
        if watermark.is_some_and(|w| run_key.0 >= w) {
            return Ok(None);
        }
        self.heads.pop();
        let run = &mut self.runs[r];
        let row = run.head;
        if run.advance()? {
            self.heads.push(Reverse((run.head.key(), r)));
        }
        Ok(Some(row))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(start_ns: i64, seq: u64) -> Row {
        Row {
            start_ns,
            duration_ns: 3,
            process: 1,
            seq,
            kept: true,
            raw: RawEvent {
                thread: 2,
                start: 11,
                duration: 12,
                func: 5,
                depth: 0,
                flags: 4,
                object: 6,
                size: 7,
                offset: u64::MAX,
                result: -8,
                error: -9,
                link: 10,
            },
        }
    }

    #[test]
    fn rows_survive_a_run_file() {
        let r = row(-5, 99);
        assert_eq!(Row::decode(&r.encode()), r);
    }

    #[test]
    fn spilled_and_waiting_rows_leave_in_order_below_the_watermark() {
        let t = tempfile::tempdir().expect("tmp");
        let mut b = Reorder::new(3, t.path());
        let starts = [50, 10, 40, 30, 60, 20, 70, 5];
        for (i, &s) in starts.iter().enumerate() {
            b.push(row(s, i as u64)).expect("push");
        }
        assert_eq!(b.runs_spilled(), 2);
        // Nothing but unlinked files is left in the directory.
        assert_eq!(fs::read_dir(t.path()).expect("ls").count(), 0);
        let mut out = Vec::new();
        while let Some(r) = b.pop_before(Some(40)).expect("pop") {
            out.push(r.start_ns);
        }
        assert_eq!(out, vec![5, 10, 20, 30]);
        while let Some(r) = b.pop_before(None).expect("pop") {
            out.push(r.start_ns);
        }
        assert_eq!(out, vec![5, 10, 20, 30, 40, 50, 60, 70]);
    }
}
