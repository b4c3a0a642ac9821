//! Decodes one raw file into typed records.
//!
//! The file is read chunk by chunk (never whole into memory). On damage the reader stops and
//! keeps every complete record before it: a damaged chunk header breaks the framing, so
//! nothing after it can be trusted, and stopping at the first damage keeps the rule simple to
//! state ("everything before byte N").

use std::collections::BTreeSet;
use std::fmt;
use std::io::{self, BufReader, Read};
use std::path::{Path, PathBuf};

use thiserror::Error;

use super::format::{
    self, chunk_header, chunk_kind, clock_sync, event, event_ext, file_header, flags, get_i32,
    get_i64, get_u16, get_u32, get_u64, get_u8, settings, string,
};

/// The file header of a raw file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileHeader {
    /// Raw format version.
    pub version: u16,
    /// `PIOSCOPE_CLOCK_TSC` or `PIOSCOPE_CLOCK_MONOTONIC`.
    pub clock_kind: u16,
    /// Process id.
    pub pid: u32,
    /// Parent process id.
    pub ppid: u32,
    /// Clock ticks at tracer start.
    pub start_ticks: u64,
    /// CLOCK_MONOTONIC at tracer start.
    pub start_mono_ns: u64,
    /// CLOCK_REALTIME at tracer start.
    pub start_unix_ns: u64,
}

/// An interned string (file path, region name or communicator).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawString {
    /// The id records use in `object`.
    pub id: u32,
    /// `PIOSCOPE_STRING_*`.
    pub kind: u16,
    /// The text.
    pub text: String,
    /// statfs f_type of the file's file system (FILE only), 0 if unknown.
    pub fs_magic: u64,
}

/// MPI-IO hints or view of a file, as "key=value" text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawSettings {
    /// Thread of the chunk.
    pub thread: u32,
    /// File string id.
    pub object: u32,
    /// The call that produced the values.
    pub func: u16,
    /// When, in clock ticks.
    pub ticks: u64,
    /// The (key, value) pairs in file order.
    pub values: Vec<(String, String)>,
}

/// One clock offset measurement against the reference rank.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClockSync {
    /// `PIOSCOPE_SYNC_INIT` or `PIOSCOPE_SYNC_FINALIZE`.
    pub phase: u32,
    /// The rank whose clock is the reference.
    pub reference_rank: u32,
    /// Reference CLOCK_MONOTONIC minus ours, at `local_mono_ns`.
    pub offset_ns: i64,
    /// Smallest round trip seen.
    pub rtt_ns: u64,
    /// Our CLOCK_MONOTONIC at the middle of that round trip.
    pub local_mono_ns: u64,
}

/// One traced call with its ext record (if any) folded in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawEvent {
    /// Thread of the chunk the record came in.
    pub thread: u32,
    /// Clock ticks at entry.
    pub start: u64,
    /// Full duration in ticks.
    pub duration: u64,
    /// Function id.
    pub func: u16,
    /// Traced calls enclosing this one on its thread.
    pub depth: u8,
    /// `PIOSCOPE_F_*`.
    pub flags: u8,
    /// String id of the file, region or communicator; 0 = none.
    pub object: u32,
    /// Full bytes requested.
    pub size: u64,
    /// Raw offset field (file offset, or packed peer/tag or root/comm size for MPI).
    pub offset: u64,
    /// Return value: ext.result, or `size` when there was no ext record.
    pub result: i64,
    /// errno or MPI error class; 0 = success.
    pub error: i32,
    /// ext.link (collective call id or request id); 0 = none.
    pub link: u64,
}

/// Where and how a raw file is damaged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Damage {
    /// Byte offset in the file of the damaged structure.
    pub offset: u64,
    /// What is damaged, e.g. "corrupt chunk header".
    pub what: &'static str,
    /// Why, e.g. "bad magic".
    pub detail: String,
}

impl fmt::Display for Damage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {} ({})", self.what, self.offset, self.detail)
    }
}

/// The reason given when a file has no END and no PARTIAL chunk.
pub const UNFINISHED_REASON: &str = "ended without finishing the trace (killed or crashed)";

/// Everything decoded from one raw file.
#[derive(Clone, Debug)]
pub struct RawFile {
    /// The file.
    pub path: PathBuf,
    /// Its header.
    pub header: FileHeader,
    /// Interned strings.
    pub strings: Vec<RawString>,
    /// Job facts in file order.
    pub job: Vec<(String, String)>,
    /// Hints and views.
    pub settings: Vec<RawSettings>,
    /// Clock offset measurements.
    pub clock_syncs: Vec<ClockSync>,
    /// (ticks, CLOCK_MONOTONIC ns) pairs: the file header's, then every chunk header's.
    pub clock_pairs: Vec<(u64, u64)>,
    /// The events the caller chose to keep, in file order.
    pub events: Vec<RawEvent>,
    /// Events decoded (kept or not).
    pub event_count: u64,
    /// Threads that wrote event chunks.
    pub threads: BTreeSet<u32>,
    /// An END chunk was seen.
    pub ended: bool,
    /// Texts of PARTIAL chunks.
    pub partial_chunks: Vec<String>,
    /// Chunks of a kind this reader does not know (skipped).
    pub unknown_chunks: u64,
    /// The first damage, where reading stopped.
    pub damage: Option<Damage>,
    /// Bytes read.
    pub bytes: u64,
}

impl RawFile {
    /// The last value of a job fact.
    pub fn job_fact(&self, key: &str) -> Option<&str> {
        self.job
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Why this file's trace is incomplete, or None when it finished cleanly.
    pub fn partial_reason(&self) -> Option<String> {
        let mut reasons: Vec<String> = Vec::new();
        if let Some(d) = &self.damage {
            reasons.push(d.to_string());
        }
        reasons.extend(self.partial_chunks.iter().cloned());
        if reasons.is_empty() && !self.ended {
            reasons.push(UNFINISHED_REASON.to_string());
        }
        if reasons.is_empty() {
            None
        } else {
            Some(reasons.join("; "))
        }
    }

    /// The file name, for messages.
    pub fn file_name(&self) -> String {
        display_name(&self.path)
    }

    /// Joins `next`, the following segment of the same process's rotating raw file (server
    /// mode, docs/SERVERS.md): its strings (repeated in every segment: same ids, same text),
    /// facts, settings, clock pairs and events follow this one's, as if the file went on. The
    /// header stays this one's; the end (END, PARTIAL chunks) is the last segment's.
    pub fn append_segment(&mut self, next: RawFile) {
        self.strings.extend(next.strings);
        self.job.extend(next.job);
        self.settings.extend(next.settings);
        self.clock_syncs.extend(next.clock_syncs);
        self.clock_pairs.extend(next.clock_pairs);
        self.events.extend(next.events);
        self.event_count += next.event_count;
        self.threads.extend(next.threads);
        self.ended = next.ended;
        self.partial_chunks.extend(next.partial_chunks);
        self.unknown_chunks += next.unknown_chunks;
        self.damage = self.damage.take().or(next.damage);
        self.bytes += next.bytes;
    }
}

/// A raw file that cannot be decoded at all.
#[derive(Debug, Error)]
pub enum RawError {
    /// Reading failed.
    #[error("raw file {name}: {source}")]
    Io {
        /// File name.
        name: String,
        /// The I/O error.
        #[source]
        source: io::Error,
    },
    /// The file header is missing or wrong, so nothing in the file can be trusted.
    #[error("raw file {name}: {damage}; the file cannot be used")]
    BadHeader {
        /// File name.
        name: String,
        /// Where and why.
        damage: Damage,
    },
}

fn display_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

/// Decodes the raw file at `path`, keeping every event.
pub fn read_raw_file(path: &Path) -> Result<RawFile, RawError> {
    read_raw_file_with(path, &mut |_| true)
}

/// Decodes the raw file at `path`; `keep` sees every event and says whether to store it in
/// `RawFile::events` (a first pass over a large trace keeps none).
pub fn read_raw_file_with(
    path: &Path,
    keep: &mut dyn FnMut(&RawEvent) -> bool,
) -> Result<RawFile, RawError> {
    let file = crate::input_file::open_regular(path).map_err(|source| RawError::Io {
        name: display_name(path),
        source,
    })?;
    decode_raw(path, BufReader::with_capacity(1 << 20, file), keep)
}

/// Reads into `buf` until it is full or the input ends; returns the bytes read.
fn read_up_to(reader: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut done = 0;
    while done < buf.len() {
        match reader.read(&mut buf[done..]) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}

fn text_of(bytes: &[u8]) -> String {
    let end = bytes.iter().rposition(|&b| b != 0).map_or(0, |p| p + 1);
    String::from_utf8_lossy(&bytes[..end]).into_owned()
}

/// Parses "key=value\n" lines; lines without '=' are ignored.
pub fn parse_key_values(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|line| {
            let line = line.trim_end_matches('\r');
            line.split_once('=')
                .map(|(k, v)| (k.trim().to_string(), v.to_string()))
        })
        .filter(|(k, _)| !k.is_empty())
        .collect()
}

/// Decodes a raw file from any reader; `path` only names it in messages.
pub fn decode_raw(
    path: &Path,
    mut reader: impl Read,
    keep: &mut dyn FnMut(&RawEvent) -> bool,
) -> Result<RawFile, RawError> {
    let name = display_name(path);
    let io_err = |source: io::Error| RawError::Io {
        name: name.clone(),
        source,
    };
    let bad = |offset: u64, what: &'static str, detail: String| RawError::BadHeader {
        name: name.clone(),
        damage: Damage {
            offset,
            what,
            detail,
        },
    };

    let mut hbuf = [0u8; file_header::SIZE];
    let got = read_up_to(&mut reader, &mut hbuf).map_err(io_err)?;
    if got < file_header::SIZE {
        return Err(bad(
            0,
            "truncated file header",
            format!("{got} of {} bytes", file_header::SIZE),
        ));
    }
    if &hbuf[..8] != format::RAW_MAGIC {
        return Err(bad(0, "bad file header", "bad magic".to_string()));
    }
    if get_u64(&hbuf, file_header::ENDIAN_CHECK) != format::RAW_ENDIAN_CHECK {
        return Err(bad(
            file_header::ENDIAN_CHECK.offset as u64,
            "bad file header",
            "endian check failed: written on a big-endian machine?".to_string(),
        ));
    }
    let version = get_u16(&hbuf, file_header::VERSION);
    if version != format::RAW_VERSION {
        return Err(bad(
            file_header::VERSION.offset as u64,
            "bad file header",
            format!(
                "raw format version {version}, this reader knows {}",
                format::RAW_VERSION
            ),
        ));
    }
    let header_bytes = get_u16(&hbuf, file_header::HEADER_BYTES) as usize;
    let record_bytes = get_u16(&hbuf, file_header::RECORD_BYTES) as usize;
    if header_bytes != file_header::SIZE || record_bytes != event::SIZE {
        return Err(bad(
            file_header::HEADER_BYTES.offset as u64,
            "bad file header",
            format!("header of {header_bytes} bytes and records of {record_bytes} bytes, expected {} and {}", file_header::SIZE, event::SIZE),
        ));
    }
    let header = FileHeader {
        version,
        clock_kind: get_u16(&hbuf, file_header::CLOCK_KIND),
        pid: get_u32(&hbuf, file_header::PID),
        ppid: get_u32(&hbuf, file_header::PPID),
        start_ticks: get_u64(&hbuf, file_header::START_TICKS),
        start_mono_ns: get_u64(&hbuf, file_header::START_MONO_NS),
        start_unix_ns: get_u64(&hbuf, file_header::START_UNIX_NS),
    };
    if header.clock_kind != format::clock_kind::TSC
        && header.clock_kind != format::clock_kind::MONOTONIC
    {
        return Err(bad(
            file_header::CLOCK_KIND.offset as u64,
            "bad file header",
            format!("unknown clock kind {}", header.clock_kind),
        ));
    }

    let mut out = RawFile {
        path: path.to_path_buf(),
        clock_pairs: vec![(header.start_ticks, header.start_mono_ns)],
        header,
        strings: Vec::new(),
        job: Vec::new(),
        settings: Vec::new(),
        clock_syncs: Vec::new(),
        events: Vec::new(),
        event_count: 0,
        threads: BTreeSet::new(),
        ended: false,
        partial_chunks: Vec::new(),
        unknown_chunks: 0,
        damage: None,
        bytes: file_header::SIZE as u64,
    };

    let mut pos = file_header::SIZE as u64;
    let mut payload = Vec::new();
    loop {
        let mut cbuf = [0u8; chunk_header::SIZE];
        let got = read_up_to(&mut reader, &mut cbuf).map_err(io_err)?;
        if got == 0 {
            break;
        }
        out.bytes += got as u64;
        let damage = |what: &'static str, detail: String| {
            Some(Damage {
                offset: pos,
                what,
                detail,
            })
        };
        if got < chunk_header::SIZE {
            out.damage = damage(
                "truncated chunk header",
                format!("{got} of {} bytes", chunk_header::SIZE),
            );
            break;
        }
        if get_u32(&cbuf, chunk_header::MAGIC) != format::CHUNK_MAGIC {
            out.damage = damage("corrupt chunk header", "bad magic".to_string());
            break;
        }
        let kind = get_u16(&cbuf, chunk_header::KIND);
        let thread = get_u32(&cbuf, chunk_header::THREAD);
        let payload_bytes = get_u32(&cbuf, chunk_header::PAYLOAD_BYTES) as usize;
        if payload_bytes % 8 != 0 {
            out.damage = damage(
                "corrupt chunk header",
                format!("payload of {payload_bytes} bytes is not a multiple of 8"),
            );
            break;
        }
        if let Some(detail) = impossible_payload(kind, payload_bytes) {
            out.damage = damage("corrupt chunk header", detail);
            break;
        }
        payload.clear();
        let got = (&mut reader)
            .take(payload_bytes as u64)
            .read_to_end(&mut payload)
            .map_err(io_err)?;
        out.bytes += got as u64;
        if got < payload_bytes {
            out.damage = damage(
                "truncated chunk",
                format!("payload of {payload_bytes} bytes, only {got} in the file"),
            );
            break;
        }
        let sync = (
            get_u64(&cbuf, chunk_header::SYNC_TICKS),
            get_u64(&cbuf, chunk_header::SYNC_MONO_NS),
        );
        if sync != (0, 0) {
            out.clock_pairs.push(sync);
        }
        let payload_pos = pos + chunk_header::SIZE as u64;
        let result = match kind {
            chunk_kind::EVENTS => {
                out.threads.insert(thread);
                decode_events(&payload, thread, payload_pos, &mut out, keep)
            }
            chunk_kind::STRING => decode_strings(&payload, payload_pos, &mut out.strings),
            chunk_kind::JOB => {
                out.job.extend(parse_key_values(&text_of(&payload)));
                Ok(())
            }
            chunk_kind::SETTINGS => {
                out.settings.push(RawSettings {
                    thread,
                    object: get_u32(&payload, settings::OBJECT),
                    func: get_u16(&payload, settings::FUNC),
                    ticks: get_u64(&payload, settings::TICKS),
                    values: parse_key_values(&text_of(&payload[settings::SIZE..])),
                });
                Ok(())
            }
            chunk_kind::CLOCK_SYNC => {
                out.clock_syncs.push(ClockSync {
                    phase: get_u32(&payload, clock_sync::PHASE),
                    reference_rank: get_u32(&payload, clock_sync::REFERENCE_RANK),
                    offset_ns: get_i64(&payload, clock_sync::OFFSET_NS),
                    rtt_ns: get_u64(&payload, clock_sync::RTT_NS),
                    local_mono_ns: get_u64(&payload, clock_sync::LOCAL_MONO_NS),
                });
                Ok(())
            }
            chunk_kind::PARTIAL => {
                let text = text_of(&payload);
                out.partial_chunks.push(if text.is_empty() {
                    "the tracer marked the trace partial".to_string()
                } else {
                    text
                });
                Ok(())
            }
            chunk_kind::END => {
                out.ended = true;
                Ok(())
            }
            _ => {
                out.unknown_chunks += 1;
                Ok(())
            }
        };
        if let Err(d) = result {
            out.damage = Some(d);
            break;
        }
        pos = payload_pos + payload_bytes as u64;
    }
    Ok(out)
}

/// Sizes no writer produces for this chunk kind.
fn impossible_payload(kind: u16, bytes: usize) -> Option<String> {
    let min = match kind {
        chunk_kind::STRING => string::SIZE,
        chunk_kind::SETTINGS => settings::SIZE,
        chunk_kind::CLOCK_SYNC => clock_sync::SIZE,
        _ => 0,
    };
    if bytes < min {
        return Some(format!(
            "payload of {bytes} bytes is too small for chunk kind {kind}"
        ));
    }
    if kind == chunk_kind::END && bytes != 0 {
        return Some(format!("END chunk with a payload of {bytes} bytes"));
    }
    None
}

fn decode_events(
    payload: &[u8],
    thread: u32,
    payload_pos: u64,
    out: &mut RawFile,
    keep: &mut dyn FnMut(&RawEvent) -> bool,
) -> Result<(), Damage> {
    let mut i = 0;
    while i < payload.len() {
        let at = payload_pos + i as u64;
        if payload.len() - i < event::SIZE {
            return Err(Damage {
                offset: at,
                what: "truncated record",
                detail: format!("{} of {} bytes", payload.len() - i, event::SIZE),
            });
        }
        let main = &payload[i..i + event::SIZE];
        let flags_v = get_u8(main, event::FLAGS);
        let size_lo = get_u32(main, event::SIZE_LO) as u64;
        let short_duration = get_u32(main, event::DURATION);
        let mut ev = RawEvent {
            thread,
            start: get_u64(main, event::START),
            duration: short_duration as u64,
            func: get_u16(main, event::FUNC),
            depth: get_u8(main, event::DEPTH),
            flags: flags_v,
            object: get_u32(main, event::OBJECT),
            size: size_lo,
            offset: get_u64(main, event::OFFSET),
            result: size_lo as i64,
            error: 0,
            link: 0,
        };
        i += event::SIZE;
        if flags_v & flags::EXT != 0 {
            if payload.len() - i < event_ext::SIZE {
                return Err(Damage {
                    offset: at,
                    what: "truncated record pair",
                    detail: "the ext record is missing".to_string(),
                });
            }
            let ext = &payload[i..i + event_ext::SIZE];
            let size_hi = get_u32(ext, event_ext::SIZE_HI) as u64;
            ev.size = size_hi << 32 | size_lo;
            ev.result = get_i64(ext, event_ext::RESULT);
            ev.duration = get_u64(ext, event_ext::DURATION);
            ev.error = get_i32(ext, event_ext::ERROR);
            ev.link = get_u64(ext, event_ext::LINK);
            i += event_ext::SIZE;
        }
        // A main record with duration UINT32_MAX and no ext breaks the writer's rule; its
        // duration is kept as UINT32_MAX ticks rather than dropping the trace from here on.
        out.event_count += 1;
        if keep(&ev) {
            out.events.push(ev);
        }
    }
    Ok(())
}

fn decode_strings(
    payload: &[u8],
    payload_pos: u64,
    strings: &mut Vec<RawString>,
) -> Result<(), Damage> {
    let mut i = 0;
    while payload.len() - i >= string::SIZE {
        let head = &payload[i..i + string::SIZE];
        let kind = get_u16(head, string::KIND);
        if kind == 0 {
            break; // zero padding
        }
        let length = get_u16(head, string::LENGTH) as usize;
        let text_at = i + string::SIZE;
        if payload.len() - text_at < length {
            return Err(Damage {
                offset: payload_pos + i as u64,
                what: "corrupt string",
                detail: format!("length {length} runs past the chunk"),
            });
        }
        strings.push(RawString {
            id: get_u32(head, string::ID),
            kind,
            text: String::from_utf8_lossy(&payload[text_at..text_at + length]).into_owned(),
            fs_magic: get_u64(head, string::FS_MAGIC),
        });
        i = text_at + length.div_ceil(8) * 8;
        if i > payload.len() {
            break;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::raw::fixture::{FixtureEvent, RawFileBuilder};
    use crate::raw::format::{string_kind, sync_phase};

    fn decode(b: &RawFileBuilder) -> Result<RawFile, RawError> {
        decode_raw(Path::new("/raw/host-1-7.praw"), b.bytes(), &mut |_| true)
    }

    fn two_chunks() -> (RawFileBuilder, usize) {
        let mut b = RawFileBuilder::monotonic(7, 1, 1_000);
        b.job(&[("rank", "3"), ("host", "host-1")]);
        b.events(0, &[FixtureEvent::new(14, 2_000, 100).size(32).offset(160)]);
        let second = b.len();
        b.events(0, &[FixtureEvent::new(14, 3_000, 100).size(32).offset(320)]);
        b.end();
        (b, second)
    }

    #[test]
    fn decodes_every_chunk_kind() {
        let mut b = RawFileBuilder::monotonic(42, 41, 1_000_000);
        b.job(&[
            ("rank", "0"),
            ("size", "4"),
            ("host", "n1"),
            ("cmdline", "./app -x 1"),
        ]);
        b.string(string_kind::FILE, 1, "/scratch/out.dat", 0x0BD0_0BD0);
        b.string(string_kind::REGION, 1, "checkpoint", 0);
        b.settings(
            1,
            300,
            1_000_500,
            &[("cb_buffer_size", "16777216"), ("romio_cb_write", "enable")],
        );
        b.clock_sync(sync_phase::INIT, -1234, 800, 1_000_100);
        b.events(
            2,
            &[
                FixtureEvent::new(14, 1_001_000, 250)
                    .object(1)
                    .size(32)
                    .offset(160)
                    .depth(1),
                // short write: ext for the result
                FixtureEvent::new(14, 1_002_000, 300)
                    .object(1)
                    .size(32)
                    .offset(320)
                    .result(16),
                // failed open: ext for error and result
                FixtureEvent::new(1, 1_003_000, 900)
                    .object(1)
                    .result(-1)
                    .error(2),
                // > 4 GiB and > 4 s: ext for size_hi and duration
                FixtureEvent::new(316, 1_004_000, 5_000_000_000)
                    .object(1)
                    .size(5 << 30),
                // collective with a link
                FixtureEvent::new(318, 1_005_000, 10)
                    .object(1)
                    .size(8)
                    .flags(flags::COLLECTIVE)
                    .link(7 << 32 | 3),
            ],
        );
        b.partial("buffer memory exhausted after 3 GiB");
        b.end();
        let f = decode(&b).expect("decode");
        assert_eq!(f.header.pid, 42);
        assert_eq!(f.header.ppid, 41);
        assert_eq!(f.job_fact("cmdline"), Some("./app -x 1"));
        assert_eq!(f.job_fact("size"), Some("4"));
        assert_eq!(f.strings.len(), 2);
        assert_eq!(f.strings[0].text, "/scratch/out.dat");
        assert_eq!(f.strings[0].fs_magic, 0x0BD0_0BD0);
        assert_eq!(f.strings[1].kind, string_kind::REGION);
        assert_eq!(
            f.settings[0].values[1],
            ("romio_cb_write".to_string(), "enable".to_string())
        );
        assert_eq!(f.settings[0].func, 300);
        assert_eq!(f.clock_syncs[0].offset_ns, -1234);
        assert_eq!(f.threads.iter().copied().collect::<Vec<_>>(), vec![2]);
        assert_eq!(f.event_count, 5);
        let e = &f.events;
        assert_eq!(
            (e[0].thread, e[0].depth, e[0].size, e[0].offset, e[0].result),
            (2, 1, 32, 160, 32)
        );
        assert_eq!(e[0].flags & flags::EXT, 0);
        assert_eq!((e[1].result, e[1].error), (16, 0));
        assert_ne!(e[1].flags & flags::EXT, 0);
        assert_eq!((e[2].result, e[2].error), (-1, 2));
        assert_eq!((e[3].size, e[3].duration), (5 << 30, 5_000_000_000));
        assert_eq!(e[4].link, 7 << 32 | 3);
        assert!(f.ended);
        assert_eq!(
            f.partial_reason().as_deref(),
            Some("buffer memory exhausted after 3 GiB")
        );
        // Header pair plus one per chunk.
        assert_eq!(f.clock_pairs.len(), 1 + 8);
    }

    #[test]
    fn clean_file_is_not_partial() {
        let (b, _) = two_chunks();
        let f = decode(&b).expect("decode");
        assert_eq!(f.partial_reason(), None);
        assert_eq!(f.events.len(), 2);
    }

    #[test]
    fn corrupt_chunk_magic_keeps_what_came_before() {
        let (mut b, second) = two_chunks();
        b.bytes_mut()[second] ^= 0xFF;
        let f = decode(&b).expect("decode");
        assert_eq!(f.events.len(), 1);
        assert_eq!(f.events[0].offset, 160);
        let d = f.damage.clone().expect("damage");
        assert_eq!(d.offset, second as u64);
        assert_eq!(
            f.partial_reason().expect("partial"),
            format!("corrupt chunk header at byte {second} (bad magic)")
        );
    }

    #[test]
    fn truncated_payload() {
        let (mut b, second) = two_chunks();
        let cut = second + 32 + 16;
        b.bytes_mut().truncate(cut);
        let f = decode(&b).expect("decode");
        assert_eq!(f.events.len(), 1);
        assert_eq!(
            f.damage.expect("damage").to_string(),
            format!("truncated chunk at byte {second} (payload of 32 bytes, only 16 in the file)")
        );
    }

    #[test]
    fn truncated_chunk_header() {
        let (mut b, second) = two_chunks();
        b.bytes_mut().truncate(second + 10);
        let f = decode(&b).expect("decode");
        assert_eq!(f.events.len(), 1);
        assert_eq!(
            f.damage.expect("damage").to_string(),
            format!("truncated chunk header at byte {second} (10 of 32 bytes)")
        );
    }

    #[test]
    fn payload_not_a_multiple_of_eight() {
        let (mut b, second) = two_chunks();
        b.bytes_mut()[second + 12..second + 16].copy_from_slice(&13u32.to_le_bytes());
        let f = decode(&b).expect("decode");
        assert_eq!(f.events.len(), 1);
        assert_eq!(
            f.damage.expect("damage").to_string(),
            format!("corrupt chunk header at byte {second} (payload of 13 bytes is not a multiple of 8)")
        );
    }

    #[test]
    fn impossible_sizes() {
        let mut b = RawFileBuilder::monotonic(1, 0, 0);
        let at = b.len();
        b.chunk(chunk_kind::CLOCK_SYNC, 0, &[0u8; 8], 0);
        let f = decode(&b).expect("decode");
        let d = f.damage.expect("damage");
        assert_eq!(d.offset, at as u64);
        assert!(d.detail.contains("too small"), "{d}");
    }

    #[test]
    fn truncated_record_pair() {
        let mut b = RawFileBuilder::monotonic(1, 0, 0);
        b.events(0, &[FixtureEvent::new(14, 10, 5).size(4)]);
        // A main record announcing an ext record that is not there.
        let mut main = [0u8; 32];
        main[event::FLAGS.offset] = flags::EXT;
        let chunk_at = b.len();
        b.chunk(chunk_kind::EVENTS, 0, &main, 20);
        let f = decode(&b).expect("decode");
        assert_eq!(f.events.len(), 1);
        assert_eq!(
            f.damage.expect("damage").to_string(),
            format!(
                "truncated record pair at byte {} (the ext record is missing)",
                chunk_at + 32
            )
        );
    }

    #[test]
    fn missing_end_means_killed() {
        let (mut b, second) = two_chunks();
        b.bytes_mut().truncate(second); // drop the second chunk and END cleanly
        let f = decode(&b).expect("decode");
        assert_eq!(f.damage, None);
        assert_eq!(f.partial_reason().as_deref(), Some(UNFINISHED_REASON));
    }

    #[test]
    fn bad_file_headers_are_errors() {
        let (mut b, _) = two_chunks();
        b.bytes_mut()[0] = b'X';
        let e = decode(&b).expect_err("bad magic");
        assert_eq!(
            e.to_string(),
            "raw file host-1-7.praw: bad file header at byte 0 (bad magic); the file cannot be used"
        );
        let short =
            decode_raw(Path::new("x.praw"), &b"PIOSCOPE"[..], &mut |_| true).expect_err("short");
        assert!(
            short
                .to_string()
                .contains("truncated file header at byte 0 (8 of 64 bytes)"),
            "{short}"
        );
        let (mut b, _) = two_chunks();
        b.bytes_mut()[8] = 9;
        assert!(decode(&b)
            .expect_err("version")
            .to_string()
            .contains("raw format version 9"));
    }

    #[test]
    fn keep_filter_counts_everything() {
        let (b, _) = two_chunks();
        let f = decode_raw(Path::new("x.praw"), b.bytes(), &mut |_| false).expect("decode");
        assert_eq!((f.events.len(), f.event_count), (0, 2));
    }
}
