/* layout_dump.c: prints the size and offset of every field of every struct in raw_format.h, and
 * its integer constants, so crates/pioscope-trace/tests/layout.rs can prove the Rust mirror
 * (src/raw/format.rs) agrees with the C compiler. Output lines:
 *   struct <name> <sizeof>
 *   field <struct> <field> <offsetof> <sizeof>
 *   const <NAME> <value>
 * Build: cc -I runtime/src runtime/tests/layout_dump.c -o layout_dump */
#include <stddef.h>
#include <stdio.h>
#include "raw_format.h"

#define STRUCT(s) printf("struct %s %zu\n", #s, sizeof(s))
#define FIELD(s, f) printf("field %s %s %zu %zu\n", #s, #f, offsetof(s, f), sizeof(((s *)0)->f))
#define CONST(c) printf("const %s %llu\n", #c, (unsigned long long)(c))

int main(void)
{
    STRUCT(pioscope_raw_file_header);
    FIELD(pioscope_raw_file_header, magic);
    FIELD(pioscope_raw_file_header, version);
    FIELD(pioscope_raw_file_header, header_bytes);
    FIELD(pioscope_raw_file_header, record_bytes);
    FIELD(pioscope_raw_file_header, clock_kind);
    FIELD(pioscope_raw_file_header, pid);
    FIELD(pioscope_raw_file_header, ppid);
    FIELD(pioscope_raw_file_header, start_ticks);
    FIELD(pioscope_raw_file_header, start_mono_ns);
    FIELD(pioscope_raw_file_header, start_unix_ns);
    FIELD(pioscope_raw_file_header, endian_check);
    FIELD(pioscope_raw_file_header, reserved);

    STRUCT(pioscope_raw_chunk_header);
    FIELD(pioscope_raw_chunk_header, magic);
    FIELD(pioscope_raw_chunk_header, kind);
    FIELD(pioscope_raw_chunk_header, reserved);
    FIELD(pioscope_raw_chunk_header, thread);
    FIELD(pioscope_raw_chunk_header, payload_bytes);
    FIELD(pioscope_raw_chunk_header, sync_ticks);
    FIELD(pioscope_raw_chunk_header, sync_mono_ns);

    STRUCT(pioscope_raw_event);
    FIELD(pioscope_raw_event, start);
    FIELD(pioscope_raw_event, duration);
    FIELD(pioscope_raw_event, func);
    FIELD(pioscope_raw_event, depth);
    FIELD(pioscope_raw_event, flags);
    FIELD(pioscope_raw_event, object);
    FIELD(pioscope_raw_event, size);
    FIELD(pioscope_raw_event, offset);

    STRUCT(pioscope_raw_event_ext);
    FIELD(pioscope_raw_event_ext, result);
    FIELD(pioscope_raw_event_ext, duration);
    FIELD(pioscope_raw_event_ext, error);
    FIELD(pioscope_raw_event_ext, size_hi);
    FIELD(pioscope_raw_event_ext, link);

    STRUCT(pioscope_raw_string);
    FIELD(pioscope_raw_string, id);
    FIELD(pioscope_raw_string, kind);
    FIELD(pioscope_raw_string, length);
    FIELD(pioscope_raw_string, fs_magic);

    STRUCT(pioscope_raw_settings);
    FIELD(pioscope_raw_settings, object);
    FIELD(pioscope_raw_settings, func);
    FIELD(pioscope_raw_settings, reserved);
    FIELD(pioscope_raw_settings, ticks);

    STRUCT(pioscope_raw_clock_sync);
    FIELD(pioscope_raw_clock_sync, phase);
    FIELD(pioscope_raw_clock_sync, reference_rank);
    FIELD(pioscope_raw_clock_sync, offset_ns);
    FIELD(pioscope_raw_clock_sync, rtt_ns);
    FIELD(pioscope_raw_clock_sync, local_mono_ns);

    CONST(PIOSCOPE_RAW_VERSION);
    CONST(PIOSCOPE_RAW_ENDIAN_CHECK);
    CONST(PIOSCOPE_CHUNK_MAGIC);
    CONST(PIOSCOPE_CLOCK_TSC);
    CONST(PIOSCOPE_CLOCK_MONOTONIC);
    CONST(PIOSCOPE_CHUNK_EVENTS);
    CONST(PIOSCOPE_CHUNK_STRING);
    CONST(PIOSCOPE_CHUNK_JOB);
    CONST(PIOSCOPE_CHUNK_SETTINGS);
    CONST(PIOSCOPE_CHUNK_CLOCK_SYNC);
    CONST(PIOSCOPE_CHUNK_PARTIAL);
    CONST(PIOSCOPE_CHUNK_END);
    CONST(PIOSCOPE_F_EXT);
    CONST(PIOSCOPE_F_COLLECTIVE);
    CONST(PIOSCOPE_F_NONBLOCKING);
    CONST(PIOSCOPE_F_OFFSET_UNKNOWN);
    CONST(PIOSCOPE_F_COMPLETION);
    CONST(PIOSCOPE_STRING_FILE);
    CONST(PIOSCOPE_STRING_REGION);
    CONST(PIOSCOPE_STRING_COMMUNICATOR);
    CONST(PIOSCOPE_SYNC_INIT);
    CONST(PIOSCOPE_SYNC_FINALIZE);
    /* The magic string, byte by byte as a number, so the Rust side can compare it too. */
    printf("magic %s\n", PIOSCOPE_RAW_MAGIC);
    printf("suffix %s\n", PIOSCOPE_RAW_SUFFIX);
    return 0;
}
