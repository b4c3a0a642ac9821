//! Mirror of runtime/src/raw_format.h: constants, and the offset and size of every field.
//!
//! The decoder reads fields only through these constants, and `tests/layout.rs` compiles
//! runtime/tests/layout_dump.c to prove every offset, size and constant equals the C header's.

/// `PIOSCOPE_RAW_MAGIC`: the first 8 bytes of a raw file.
pub const RAW_MAGIC: &[u8; 8] = b"PIOSCOPE";
/// `PIOSCOPE_RAW_VERSION`.
pub const RAW_VERSION: u16 = 1;
/// `PIOSCOPE_RAW_ENDIAN_CHECK`.
pub const RAW_ENDIAN_CHECK: u64 = 0x0102_0304_0506_0708;
/// `PIOSCOPE_CHUNK_MAGIC` ("CHNK" as little-endian bytes).
pub const CHUNK_MAGIC: u32 = 0x4B4E_4843;
/// `PIOSCOPE_RAW_SUFFIX`.
pub const RAW_SUFFIX: &str = ".praw";

/// `enum pioscope_clock_kind`.
pub mod clock_kind {
    /// x86 invariant TSC ticks.
    pub const TSC: u16 = 1;
    /// CLOCK_MONOTONIC nanoseconds.
    pub const MONOTONIC: u16 = 2;
}

/// `enum pioscope_chunk_kind`.
pub mod chunk_kind {
    /// Event records.
    pub const EVENTS: u16 = 1;
    /// One interned string.
    pub const STRING: u16 = 2;
    /// Job facts, "key=value\n" text.
    pub const JOB: u16 = 3;
    /// MPI-IO hints or views of a file.
    pub const SETTINGS: u16 = 4;
    /// Clock offset to the reference rank.
    pub const CLOCK_SYNC: u16 = 5;
    /// Reason the trace is cut short.
    pub const PARTIAL: u16 = 6;
    /// Clean end of tracing.
    pub const END: u16 = 7;
}

/// `PIOSCOPE_F_*` flags of a main record.
pub mod flags {
    /// An ext record follows.
    pub const EXT: u8 = 0x01;
    /// A collective call.
    pub const COLLECTIVE: u8 = 0x02;
    /// Starts a nonblocking operation; ext.link is its request.
    pub const NONBLOCKING: u8 = 0x04;
    /// The offset is not known.
    pub const OFFSET_UNKNOWN: u8 = 0x08;
    /// Completes the request ext.link.
    pub const COMPLETION: u8 = 0x10;
}

/// `enum pioscope_string_kind`.
pub mod string_kind {
    /// Absolute file path.
    pub const FILE: u16 = 1;
    /// User region name.
    pub const REGION: u16 = 2;
    /// Communicator description.
    pub const COMMUNICATOR: u16 = 3;
}

/// `enum pioscope_clock_sync_phase`.
pub mod sync_phase {
    /// Measured in MPI_Init.
    pub const INIT: u32 = 1;
    /// Measured in MPI_Finalize.
    pub const FINALIZE: u32 = 2;
}

/// Where a field sits inside its struct.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field {
    /// Byte offset from the start of the struct.
    pub offset: usize,
    /// Size in bytes.
    pub size: usize,
}

const fn f(offset: usize, size: usize) -> Field {
    Field { offset, size }
}

/// `pioscope_raw_file_header`.
pub mod file_header {
    use super::{f, Field};
    /// sizeof.
    pub const SIZE: usize = 64;
    /// C field `magic`.
    pub const MAGIC: Field = f(0, 8);
    /// C field `version`.
    pub const VERSION: Field = f(8, 2);
    /// C field `header_bytes`.
    pub const HEADER_BYTES: Field = f(10, 2);
    /// C field `record_bytes`.
    pub const RECORD_BYTES: Field = f(12, 2);
    /// C field `clock_kind`.
    pub const CLOCK_KIND: Field = f(14, 2);
    /// C field `pid`.
    pub const PID: Field = f(16, 4);
    /// C field `ppid`.
    pub const PPID: Field = f(20, 4);
    /// C field `start_ticks`.
    pub const START_TICKS: Field = f(24, 8);
    /// C field `start_mono_ns`.
    pub const START_MONO_NS: Field = f(32, 8);
    /// C field `start_unix_ns`.
    pub const START_UNIX_NS: Field = f(40, 8);
    /// C field `endian_check`.
    pub const ENDIAN_CHECK: Field = f(48, 8);
    /// C field `reserved`.
    pub const RESERVED: Field = f(56, 8);
}

/// `pioscope_raw_chunk_header`.
pub mod chunk_header {
    use super::{f, Field};
    /// sizeof.
    pub const SIZE: usize = 32;
    /// C field `magic`.
    pub const MAGIC: Field = f(0, 4);
    /// C field `kind`.
    pub const KIND: Field = f(4, 2);
    /// C field `reserved`.
    pub const RESERVED: Field = f(6, 2);
    /// C field `thread`.
    pub const THREAD: Field = f(8, 4);
    /// C field `payload_bytes`.
    pub const PAYLOAD_BYTES: Field = f(12, 4);
    /// C field `sync_ticks`.
    pub const SYNC_TICKS: Field = f(16, 8);
    /// C field `sync_mono_ns`.
    pub const SYNC_MONO_NS: Field = f(24, 8);
}

/// `pioscope_raw_event`.
pub mod event {
    use super::{f, Field};
    /// sizeof.
    pub const SIZE: usize = 32;
    /// C field `start`.
    pub const START: Field = f(0, 8);
    /// C field `duration`.
    pub const DURATION: Field = f(8, 4);
    /// C field `func`.
    pub const FUNC: Field = f(12, 2);
    /// C field `depth`.
    pub const DEPTH: Field = f(14, 1);
    /// C field `flags`.
    pub const FLAGS: Field = f(15, 1);
    /// C field `object`.
    pub const OBJECT: Field = f(16, 4);
    /// C field `size`.
    pub const SIZE_LO: Field = f(20, 4);
    /// C field `offset`.
    pub const OFFSET: Field = f(24, 8);
    /// `duration` value meaning "see ext.duration".
    pub const DURATION_IN_EXT: u32 = u32::MAX;
}

/// `pioscope_raw_event_ext`.
pub mod event_ext {
    use super::{f, Field};
    /// sizeof.
    pub const SIZE: usize = 32;
    /// C field `result`.
    pub const RESULT: Field = f(0, 8);
    /// C field `duration`.
    pub const DURATION: Field = f(8, 8);
    /// C field `error`.
    pub const ERROR: Field = f(16, 4);
    /// C field `size_hi`.
    pub const SIZE_HI: Field = f(20, 4);
    /// C field `link`.
    pub const LINK: Field = f(24, 8);
}

/// `pioscope_raw_string`.
pub mod string {
    use super::{f, Field};
    /// sizeof.
    pub const SIZE: usize = 16;
    /// C field `id`.
    pub const ID: Field = f(0, 4);
    /// C field `kind`.
    pub const KIND: Field = f(4, 2);
    /// C field `length`.
    pub const LENGTH: Field = f(6, 2);
    /// C field `fs_magic`.
    pub const FS_MAGIC: Field = f(8, 8);
}

/// `pioscope_raw_settings`.
pub mod settings {
    use super::{f, Field};
    /// sizeof.
    pub const SIZE: usize = 16;
    /// C field `object`.
    pub const OBJECT: Field = f(0, 4);
    /// C field `func`.
    pub const FUNC: Field = f(4, 2);
    /// C field `reserved`.
    pub const RESERVED: Field = f(6, 2);
    /// C field `ticks`.
    pub const TICKS: Field = f(8, 8);
}

/// `pioscope_raw_clock_sync`.
pub mod clock_sync {
    use super::{f, Field};
    /// sizeof.
    pub const SIZE: usize = 32;
    /// C field `phase`.
    pub const PHASE: Field = f(0, 4);
    /// C field `reference_rank`.
    pub const REFERENCE_RANK: Field = f(4, 4);
    /// C field `offset_ns`.
    pub const OFFSET_NS: Field = f(8, 8);
    /// C field `rtt_ns`.
    pub const RTT_NS: Field = f(16, 8);
    /// C field `local_mono_ns`.
    pub const LOCAL_MONO_NS: Field = f(24, 8);
}

/// One struct of raw_format.h: (C struct name, sizeof, [(C field name, Field)]).
pub type StructLayout = (&'static str, usize, &'static [(&'static str, Field)]);

/// Every struct of raw_format.h with its size and fields. The layout test compares this table
/// with what the C compiler says.
pub const LAYOUT: &[StructLayout] = &[
    (
        "pioscope_raw_file_header",
        file_header::SIZE,
        &[
            ("magic", file_header::MAGIC),
            ("version", file_header::VERSION),
            ("header_bytes", file_header::HEADER_BYTES),
            ("record_bytes", file_header::RECORD_BYTES),
            ("clock_kind", file_header::CLOCK_KIND),
            ("pid", file_header::PID),
            ("ppid", file_header::PPID),
            ("start_ticks", file_header::START_TICKS),
            ("start_mono_ns", file_header::START_MONO_NS),
            ("start_unix_ns", file_header::START_UNIX_NS),
            ("endian_check", file_header::ENDIAN_CHECK),
            ("reserved", file_header::RESERVED),
        ],
    ),
    (
        "pioscope_raw_chunk_header",
        chunk_header::SIZE,
        &[
            ("magic", chunk_header::MAGIC),
            ("kind", chunk_header::KIND),
            ("reserved", chunk_header::RESERVED),
            ("thread", chunk_header::THREAD),
            ("payload_bytes", chunk_header::PAYLOAD_BYTES),
            ("sync_ticks", chunk_header::SYNC_TICKS),
            ("sync_mono_ns", chunk_header::SYNC_MONO_NS),
        ],
    ),
    (
        "pioscope_raw_event",
        event::SIZE,
        &[
            ("start", event::START),
            ("duration", event::DURATION),
            ("func", event::FUNC),
            ("depth", event::DEPTH),
            ("flags", event::FLAGS),
            ("object", event::OBJECT),
            ("size", event::SIZE_LO),
            ("offset", event::OFFSET),
        ],
    ),
    (
        "pioscope_raw_event_ext",
        event_ext::SIZE,
        &[
            ("result", event_ext::RESULT),
            ("duration", event_ext::DURATION),
            ("error", event_ext::ERROR),
            ("size_hi", event_ext::SIZE_HI),
            ("link", event_ext::LINK),
        ],
    ),
    (
        "pioscope_raw_string",
        string::SIZE,
        &[
            ("id", string::ID),
            ("kind", string::KIND),
            ("length", string::LENGTH),
            ("fs_magic", string::FS_MAGIC),
        ],
    ),
    (
        "pioscope_raw_settings",
        settings::SIZE,
        &[
            ("object", settings::OBJECT),
            ("func", settings::FUNC),
            ("reserved", settings::RESERVED),
            ("ticks", settings::TICKS),
        ],
    ),
    (
        "pioscope_raw_clock_sync",
        clock_sync::SIZE,
        &[
            ("phase", clock_sync::PHASE),
            ("reference_rank", clock_sync::REFERENCE_RANK),
            ("offset_ns", clock_sync::OFFSET_NS),
            ("rtt_ns", clock_sync::RTT_NS),
            ("local_mono_ns", clock_sync::LOCAL_MONO_NS),
        ],
    ),
];

/// Every integer constant of raw_format.h by its C name, for the layout test.
pub const CONSTANTS: &[(&str, u64)] = &[
    ("PIOSCOPE_RAW_VERSION", RAW_VERSION as u64),
    ("PIOSCOPE_RAW_ENDIAN_CHECK", RAW_ENDIAN_CHECK),
    ("PIOSCOPE_CHUNK_MAGIC", CHUNK_MAGIC as u64),
    ("PIOSCOPE_CLOCK_TSC", clock_kind::TSC as u64),
    ("PIOSCOPE_CLOCK_MONOTONIC", clock_kind::MONOTONIC as u64),
    ("PIOSCOPE_CHUNK_EVENTS", chunk_kind::EVENTS as u64),
    ("PIOSCOPE_CHUNK_STRING", chunk_kind::STRING as u64),
    ("PIOSCOPE_CHUNK_JOB", chunk_kind::JOB as u64),
    ("PIOSCOPE_CHUNK_SETTINGS", chunk_kind::SETTINGS as u64),
    ("PIOSCOPE_CHUNK_CLOCK_SYNC", chunk_kind::CLOCK_SYNC as u64),
    ("PIOSCOPE_CHUNK_PARTIAL", chunk_kind::PARTIAL as u64),
    ("PIOSCOPE_CHUNK_END", chunk_kind::END as u64),
    ("PIOSCOPE_F_EXT", flags::EXT as u64),
    ("PIOSCOPE_F_COLLECTIVE", flags::COLLECTIVE as u64),
    ("PIOSCOPE_F_NONBLOCKING", flags::NONBLOCKING as u64),
    ("PIOSCOPE_F_OFFSET_UNKNOWN", flags::OFFSET_UNKNOWN as u64),
    ("PIOSCOPE_F_COMPLETION", flags::COMPLETION as u64),
    ("PIOSCOPE_STRING_FILE", string_kind::FILE as u64),
    ("PIOSCOPE_STRING_REGION", string_kind::REGION as u64),
    (
        "PIOSCOPE_STRING_COMMUNICATOR",
        string_kind::COMMUNICATOR as u64,
    ),
    ("PIOSCOPE_SYNC_INIT", sync_phase::INIT as u64),
    ("PIOSCOPE_SYNC_FINALIZE", sync_phase::FINALIZE as u64),
];

/// Little-endian field readers over a byte slice that is known to be long enough.
pub(crate) fn get_u8(buf: &[u8], f: Field) -> u8 {
    buf[f.offset]
}

pub(crate) fn get_u16(buf: &[u8], f: Field) -> u16 {
    let mut b = [0u8; 2];
    b.copy_from_slice(&buf[f.offset..f.offset + 2]);
    u16::from_le_bytes(b)
}

pub(crate) fn get_u32(buf: &[u8], f: Field) -> u32 {
    let mut b = [0u8; 4];
    b.copy_from_slice(&buf[f.offset..f.offset + 4]);
    u32::from_le_bytes(b)
}

pub(crate) fn get_u64(buf: &[u8], f: Field) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&buf[f.offset..f.offset + 8]);
    u64::from_le_bytes(b)
}

pub(crate) fn get_i32(buf: &[u8], f: Field) -> i32 {
    get_u32(buf, f) as i32
}

pub(crate) fn get_i64(buf: &[u8], f: Field) -> i64 {
    get_u64(buf, f) as i64
}
