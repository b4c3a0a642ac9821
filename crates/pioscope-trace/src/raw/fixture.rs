//! A raw-file writer for tests: builds the files the C runtime writes, byte for byte per
//! raw_format.h, and lets tests damage them at known offsets.
//!
//! Compiled for this crate's tests and, through the `fixture` feature, for other crates'
//! tests. It follows the runtime's rule for ext records (only when the main record cannot say
//! it all), so fixture files exercise the same decode paths as real ones.

use std::io;
use std::path::Path;

use super::format::{
    chunk_header, chunk_kind, clock_kind, clock_sync, event, event_ext, file_header, flags,
    settings, string, CHUNK_MAGIC, RAW_ENDIAN_CHECK, RAW_MAGIC, RAW_VERSION,
};

/// One record to write (the fields of pioscope_event plus timing).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FixtureEvent {
    /// Clock ticks at entry.
    pub start: u64,
    /// Duration in ticks.
    pub duration: u64,
    /// Function id.
    pub func: u16,
    /// Nesting depth.
    pub depth: u8,
    /// `PIOSCOPE_F_*` (EXT is set by the writer).
    pub flags: u8,
    /// String id.
    pub object: u32,
    /// Bytes requested.
    pub size: u64,
    /// Raw offset field.
    pub offset: u64,
    /// Return value; None = equal to size.
    pub result: Option<i64>,
    /// errno / MPI error class.
    pub error: i32,
    /// Collective call id or request id.
    pub link: u64,
}

impl FixtureEvent {
    /// A record of `func` at `start` lasting `duration` ticks, everything else 0.
    pub fn new(func: u16, start: u64, duration: u64) -> Self {
        FixtureEvent {
            start,
            duration,
            func,
            depth: 0,
            flags: 0,
            object: 0,
            size: 0,
            offset: 0,
            result: None,
            error: 0,
            link: 0,
        }
    }
    /// Sets the depth.
    pub fn depth(mut self, depth: u8) -> Self {
        self.depth = depth;
        self
    }
    /// Adds flags.
    pub fn flags(mut self, f: u8) -> Self {
        self.flags |= f;
        self
    }
    /// Sets the object string id.
    pub fn object(mut self, id: u32) -> Self {
        self.object = id;
        self
    }
    /// Sets the size.
    pub fn size(mut self, size: u64) -> Self {
        self.size = size;
        self
    }
    /// Sets the raw offset field.
    pub fn offset(mut self, offset: u64) -> Self {
        self.offset = offset;
        self
    }
    /// Sets the result.
    pub fn result(mut self, result: i64) -> Self {
        self.result = Some(result);
        self
    }
    /// Sets the error.
    pub fn error(mut self, error: i32) -> Self {
        self.error = error;
        self
    }
    /// Sets the link.
    pub fn link(mut self, link: u64) -> Self {
        self.link = link;
        self
    }
    /// True when the runtime would write an ext record for this call.
    pub fn needs_ext(&self) -> bool {
        self.result.is_some_and(|r| r != self.size as i64)
            || self.error != 0
            || self.link != 0
            || self.size > u32::MAX as u64
            || self.duration >= event::DURATION_IN_EXT as u64
    }
}

/// Builds one raw file in memory.
#[derive(Clone, Debug)]
pub struct RawFileBuilder {
    buf: Vec<u8>,
    start_ticks: u64,
    start_mono_ns: u64,
    ns_per_tick: f64,
}

fn put(buf: &mut [u8], at: usize, bytes: &[u8]) {
    buf[at..at + bytes.len()].copy_from_slice(bytes);
}

impl RawFileBuilder {
    /// A MONOTONIC-clock process (ticks are ns) starting at `start_ns`.
    pub fn monotonic(pid: u32, ppid: u32, start_ns: u64) -> Self {
        Self::with_clock(clock_kind::MONOTONIC, pid, ppid, start_ns, start_ns, 1.0)
    }

    /// A process with any clock: `mono_ns = start_mono_ns + (ticks - start_ticks) * ns_per_tick`.
    pub fn with_clock(
        kind: u16,
        pid: u32,
        ppid: u32,
        start_ticks: u64,
        start_mono_ns: u64,
        ns_per_tick: f64,
    ) -> Self {
        let mut h = vec![0u8; file_header::SIZE];
        put(&mut h, file_header::MAGIC.offset, RAW_MAGIC);
        put(
            &mut h,
            file_header::VERSION.offset,
            &RAW_VERSION.to_le_bytes(),
        );
        put(
            &mut h,
            file_header::HEADER_BYTES.offset,
            &(file_header::SIZE as u16).to_le_bytes(),
        );
        put(
            &mut h,
            file_header::RECORD_BYTES.offset,
            &(event::SIZE as u16).to_le_bytes(),
        );
        put(&mut h, file_header::CLOCK_KIND.offset, &kind.to_le_bytes());
        put(&mut h, file_header::PID.offset, &pid.to_le_bytes());
        put(&mut h, file_header::PPID.offset, &ppid.to_le_bytes());
        put(
            &mut h,
            file_header::START_TICKS.offset,
            &start_ticks.to_le_bytes(),
        );
        put(
            &mut h,
            file_header::START_MONO_NS.offset,
            &start_mono_ns.to_le_bytes(),
        );
        let unix = 1_700_000_000_000_000_000u64 + start_mono_ns;
        put(
            &mut h,
            file_header::START_UNIX_NS.offset,
            &unix.to_le_bytes(),
        );
        put(
            &mut h,
            file_header::ENDIAN_CHECK.offset,
            &RAW_ENDIAN_CHECK.to_le_bytes(),
        );
        RawFileBuilder {
            buf: h,
            start_ticks,
            start_mono_ns,
            ns_per_tick,
        }
    }

    /// CLOCK_MONOTONIC at `ticks` on this process's clock.
    pub fn mono_at(&self, ticks: u64) -> u64 {
        let dt = ticks as f64 - self.start_ticks as f64;
        (self.start_mono_ns as f64 + dt * self.ns_per_tick).round() as u64
    }

    /// Appends a chunk with any payload (padded to 8) and the sync pair for `sync_ticks`.
    pub fn chunk(&mut self, kind: u16, thread: u32, payload: &[u8], sync_ticks: u64) -> &mut Self {
        let padded = payload.len().div_ceil(8) * 8;
        let mut h = vec![0u8; chunk_header::SIZE];
        put(
            &mut h,
            chunk_header::MAGIC.offset,
            &CHUNK_MAGIC.to_le_bytes(),
        );
        put(&mut h, chunk_header::KIND.offset, &kind.to_le_bytes());
        put(&mut h, chunk_header::THREAD.offset, &thread.to_le_bytes());
        put(
            &mut h,
            chunk_header::PAYLOAD_BYTES.offset,
            &(padded as u32).to_le_bytes(),
        );
        put(
            &mut h,
            chunk_header::SYNC_TICKS.offset,
            &sync_ticks.to_le_bytes(),
        );
        put(
            &mut h,
            chunk_header::SYNC_MONO_NS.offset,
            &self.mono_at(sync_ticks).to_le_bytes(),
        );
        self.buf.extend_from_slice(&h);
        self.buf.extend_from_slice(payload);
        self.buf.resize(self.buf.len() + padded - payload.len(), 0);
        self
    }

    fn text_chunk(&mut self, kind: u16, text: &str) -> &mut Self {
        let t = self.start_ticks;
        self.chunk(kind, 0, text.as_bytes(), t)
    }

    /// A JOB chunk with these facts.
    pub fn job(&mut self, facts: &[(&str, &str)]) -> &mut Self {
        let text: String = facts.iter().map(|(k, v)| format!("{k}={v}\n")).collect();
        self.text_chunk(chunk_kind::JOB, &text)
    }

    /// A STRING chunk.
    pub fn string(&mut self, kind: u16, id: u32, text: &str, fs_magic: u64) -> &mut Self {
        let mut p = vec![0u8; string::SIZE];
        put(&mut p, string::ID.offset, &id.to_le_bytes());
        put(&mut p, string::KIND.offset, &kind.to_le_bytes());
        put(
            &mut p,
            string::LENGTH.offset,
            &(text.len() as u16).to_le_bytes(),
        );
        put(&mut p, string::FS_MAGIC.offset, &fs_magic.to_le_bytes());
        p.extend_from_slice(text.as_bytes());
        let t = self.start_ticks;
        self.chunk(chunk_kind::STRING, 0, &p, t)
    }

    /// A SETTINGS chunk with "key=value" lines.
    pub fn settings(
        &mut self,
        object: u32,
        func: u16,
        ticks: u64,
        values: &[(&str, &str)],
    ) -> &mut Self {
        let mut p = vec![0u8; settings::SIZE];
        put(&mut p, settings::OBJECT.offset, &object.to_le_bytes());
        put(&mut p, settings::FUNC.offset, &func.to_le_bytes());
        put(&mut p, settings::TICKS.offset, &ticks.to_le_bytes());
        for (k, v) in values {
            p.extend_from_slice(format!("{k}={v}\n").as_bytes());
        }
        self.chunk(chunk_kind::SETTINGS, 0, &p, ticks)
    }

    /// A CLOCK_SYNC chunk.
    pub fn clock_sync(
        &mut self,
        phase: u32,
        offset_ns: i64,
        rtt_ns: u64,
        local_mono_ns: u64,
    ) -> &mut Self {
        let mut p = vec![0u8; clock_sync::SIZE];
        put(&mut p, clock_sync::PHASE.offset, &phase.to_le_bytes());
        put(
            &mut p,
            clock_sync::OFFSET_NS.offset,
            &offset_ns.to_le_bytes(),
        );
        put(&mut p, clock_sync::RTT_NS.offset, &rtt_ns.to_le_bytes());
        put(
            &mut p,
            clock_sync::LOCAL_MONO_NS.offset,
            &local_mono_ns.to_le_bytes(),
        );
        let t = self.start_ticks;
        self.chunk(chunk_kind::CLOCK_SYNC, 0, &p, t)
    }

    /// An EVENTS chunk of `thread` holding these records (ext records where needed); its sync
    /// pair is taken at the latest record end.
    pub fn events(&mut self, thread: u32, events: &[FixtureEvent]) -> &mut Self {
        let mut p = Vec::with_capacity(events.len() * 64);
        let mut last = self.start_ticks;
        for e in events {
            let ext = e.needs_ext();
            let mut m = [0u8; event::SIZE];
            put(&mut m, event::START.offset, &e.start.to_le_bytes());
            let short = if e.duration >= event::DURATION_IN_EXT as u64 {
                event::DURATION_IN_EXT
            } else {
                e.duration as u32
            };
            put(&mut m, event::DURATION.offset, &short.to_le_bytes());
            put(&mut m, event::FUNC.offset, &e.func.to_le_bytes());
            m[event::DEPTH.offset] = e.depth;
            m[event::FLAGS.offset] = if ext {
                e.flags | flags::EXT
            } else {
                e.flags & !flags::EXT
            };
            put(&mut m, event::OBJECT.offset, &e.object.to_le_bytes());
            put(
                &mut m,
                event::SIZE_LO.offset,
                &(e.size as u32).to_le_bytes(),
            );
            put(&mut m, event::OFFSET.offset, &e.offset.to_le_bytes());
            p.extend_from_slice(&m);
            if ext {
                let mut x = [0u8; event_ext::SIZE];
                put(
                    &mut x,
                    event_ext::RESULT.offset,
                    &e.result.unwrap_or(e.size as i64).to_le_bytes(),
                );
                put(
                    &mut x,
                    event_ext::DURATION.offset,
                    &e.duration.to_le_bytes(),
                );
                put(&mut x, event_ext::ERROR.offset, &e.error.to_le_bytes());
                put(
                    &mut x,
                    event_ext::SIZE_HI.offset,
                    &((e.size >> 32) as u32).to_le_bytes(),
                );
                put(&mut x, event_ext::LINK.offset, &e.link.to_le_bytes());
                p.extend_from_slice(&x);
            }
            last = last.max(e.start + e.duration);
        }
        self.chunk(chunk_kind::EVENTS, thread, &p, last)
    }

    /// A PARTIAL chunk.
    pub fn partial(&mut self, reason: &str) -> &mut Self {
        self.text_chunk(chunk_kind::PARTIAL, reason)
    }

    /// An END chunk.
    pub fn end(&mut self) -> &mut Self {
        let t = self.start_ticks;
        self.chunk(chunk_kind::END, 0, &[], t)
    }

    /// Bytes so far: the offset the next chunk will start at.
    pub fn len(&self) -> usize {
        self.buf.len()
    }

    /// Never true: a file always has its header.
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// The file's bytes, for tests that damage them.
    pub fn bytes_mut(&mut self) -> &mut Vec<u8> {
        &mut self.buf
    }

    /// The file's bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.buf
    }

    /// Writes the file.
    pub fn write_to(&self, path: &Path) -> io::Result<()> {
        std::fs::write(path, &self.buf)
    }
}
