/* raw_format.h: the layout of a raw per-process trace file, written by the runtime and read by
 * crates/pioscope-trace (src/raw/format.rs mirrors it; a test proves the two agree).
 *
 * A raw file is one file header followed by chunks. Every chunk is a chunk header and a payload
 * whose length is a multiple of 8. Threads append whole chunks with one write() each, so a file
 * holds the chunks of all threads of one process, interleaved. A reader that meets a damaged
 * chunk keeps everything before it and marks the trace partial.
 *
 * All integers are little-endian (the writer's native order; endian_check proves it). Times in
 * records are clock ticks of the process (see clock_kind); every chunk header carries a
 * (ticks, CLOCK_MONOTONIC ns) pair so a reader can convert ticks to ns by a linear fit. */
#ifndef PIOSCOPE_RAW_FORMAT_H
#define PIOSCOPE_RAW_FORMAT_H

#include <stdint.h>

#define PIOSCOPE_RAW_MAGIC "PIOSCOPE"          /* 8 bytes, no NUL */
#define PIOSCOPE_RAW_VERSION 1
#define PIOSCOPE_RAW_ENDIAN_CHECK 0x0102030405060708ULL
#define PIOSCOPE_CHUNK_MAGIC 0x4B4E4843u        /* "CHNK" read as little-endian bytes */
#define PIOSCOPE_RAW_SUFFIX ".praw"

enum pioscope_clock_kind {
    PIOSCOPE_CLOCK_TSC = 1,       /* x86 invariant TSC ticks */
    PIOSCOPE_CLOCK_MONOTONIC = 2  /* CLOCK_MONOTONIC nanoseconds (ticks == ns) */
};

/* At offset 0 of every raw file. 64 bytes. */
typedef struct {
    char     magic[8];        /* PIOSCOPE_RAW_MAGIC */
    uint16_t version;         /* PIOSCOPE_RAW_VERSION */
    uint16_t header_bytes;    /* sizeof(pioscope_raw_file_header) */
    uint16_t record_bytes;    /* sizeof(pioscope_raw_event) */
    uint16_t clock_kind;      /* enum pioscope_clock_kind */
    uint32_t pid;
    uint32_t ppid;
    uint64_t start_ticks;     /* clock ticks at tracer start ... */
    uint64_t start_mono_ns;   /* ... CLOCK_MONOTONIC at the same moment ... */
    uint64_t start_unix_ns;   /* ... and CLOCK_REALTIME */
    uint64_t endian_check;    /* PIOSCOPE_RAW_ENDIAN_CHECK */
    uint64_t reserved;        /* 0 */
} pioscope_raw_file_header;

enum pioscope_chunk_kind {
    PIOSCOPE_CHUNK_EVENTS = 1,     /* payload: pioscope_raw_event records (main, maybe + ext) */
    PIOSCOPE_CHUNK_STRING = 2,     /* payload: pioscope_raw_string + bytes, zero-padded */
    PIOSCOPE_CHUNK_JOB = 3,        /* payload: text "key=value\n" lines (job facts), zero-padded */
    PIOSCOPE_CHUNK_SETTINGS = 4,   /* payload: pioscope_raw_settings + "key=value\n" text, padded */
    PIOSCOPE_CHUNK_CLOCK_SYNC = 5, /* payload: pioscope_raw_clock_sync */
    PIOSCOPE_CHUNK_PARTIAL = 6,    /* payload: text reason the trace is cut short, zero-padded */
    PIOSCOPE_CHUNK_END = 7         /* no payload: the process finished tracing cleanly */
};

/* Before every payload. 32 bytes. */
typedef struct {
    uint32_t magic;           /* PIOSCOPE_CHUNK_MAGIC */
    uint16_t kind;            /* enum pioscope_chunk_kind */
    uint16_t reserved;        /* 0 */
    uint32_t thread;          /* tracer thread number in this process, 0 = first thread */
    uint32_t payload_bytes;   /* bytes after this header; a multiple of 8 */
    uint64_t sync_ticks;      /* clock ticks when the chunk was written ... */
    uint64_t sync_mono_ns;    /* ... and CLOCK_MONOTONIC at the same moment */
} pioscope_raw_chunk_header;

/* Flags of a main record. */
#define PIOSCOPE_F_EXT            0x01u /* a pioscope_raw_event_ext record follows */
#define PIOSCOPE_F_COLLECTIVE     0x02u /* a collective call (MPI-IO _all/_ordered, MPI collectives) */
#define PIOSCOPE_F_NONBLOCKING    0x04u /* starts a nonblocking operation; ext.link is its request */
#define PIOSCOPE_F_OFFSET_UNKNOWN 0x08u /* offset is not known (shared file pointer, unknown fd) */
#define PIOSCOPE_F_COMPLETION     0x10u /* completes the request ext.link (func = tracer_complete) */

/* One traced call, written when the call returns. 32 bytes. Field meaning per layer is in
 * docs/FORMAT.md. */
typedef struct {
    uint64_t start;           /* clock ticks at entry */
    uint32_t duration;        /* ticks; UINT32_MAX means "see ext.duration" */
    uint16_t func;            /* id from functions.def */
    uint8_t  depth;           /* traced calls enclosing this one on this thread (0 = top) */
    uint8_t  flags;           /* PIOSCOPE_F_* */
    uint32_t object;          /* string id: file path (POSIX, STDIO, MPI-IO), region name, or
                                 communicator (MPI); 0 = none */
    uint32_t size;            /* low 32 bits of the bytes requested (ext.size_hi: the rest) */
    uint64_t offset;          /* file offset in bytes; MPI point-to-point: peer << 32 | tag
                                 (both as uint32); MPI collectives: root << 32 | comm size */
} pioscope_raw_event;

/* Follows a main record that has PIOSCOPE_F_EXT. Written only when the main record cannot say
 * it all: a result different from size, an error, a link, or a size or duration too large. */
typedef struct {
    int64_t  result;          /* return value: bytes transferred, new offset, or -1 */
    uint64_t duration;        /* full duration in ticks (always valid in an ext record) */
    int32_t  error;           /* errno (POSIX/STDIO) or MPI error class; 0 = success */
    uint32_t size_hi;         /* high 32 bits of the bytes requested */
    uint64_t link;            /* MPI-IO collective: (file handle id << 32) | call number;
                                 nonblocking start and completion: request id; else 0 */
} pioscope_raw_event_ext;

enum pioscope_string_kind {
    PIOSCOPE_STRING_FILE = 1,         /* absolute file path; fs_magic = statfs f_type */
    PIOSCOPE_STRING_REGION = 2,       /* user region name */
    PIOSCOPE_STRING_COMMUNICATOR = 3  /* communicator description, e.g. "world" */
};

/* Payload of a STRING chunk: this struct, then `length` bytes (no NUL), zero-padded to 8. */
typedef struct {
    uint32_t id;              /* the id records use in `object`; unique per kind-space in a process */
    uint16_t kind;            /* enum pioscope_string_kind */
    uint16_t length;          /* bytes of text that follow */
    uint64_t fs_magic;        /* FILE: statfs f_type of the file system, 0 if unknown */
} pioscope_raw_string;

/* Payload of a SETTINGS chunk (MPI-IO hints and file views): this struct, then text. */
typedef struct {
    uint32_t object;          /* file string id */
    uint16_t func;            /* the call that produced these values (open, set_view, set_info) */
    uint16_t reserved;        /* 0 */
    uint64_t ticks;           /* when */
} pioscope_raw_settings;

enum pioscope_clock_sync_phase {
    PIOSCOPE_SYNC_INIT = 1,     /* measured in MPI_Init */
    PIOSCOPE_SYNC_FINALIZE = 2  /* measured in MPI_Finalize */
};

/* Payload of a CLOCK_SYNC chunk. 32 bytes. */
typedef struct {
    uint32_t phase;           /* enum pioscope_clock_sync_phase */
    uint32_t reference_rank;  /* the rank whose clock is the reference (0) */
    int64_t  offset_ns;       /* reference CLOCK_MONOTONIC minus ours, at local_mono_ns */
    uint64_t rtt_ns;          /* the smallest round trip seen, bounds the error */
    uint64_t local_mono_ns;   /* our CLOCK_MONOTONIC at the middle of that round trip */
} pioscope_raw_clock_sync;

#endif
