/* rawread.h: a strict decoder of raw files (raw_format.h) for the C tests: it checks the
 * framing (magic, sizes, padding, ext records inside their chunk, END last) and collects the
 * records, strings, JOB facts and PARTIAL reasons so tests can assert exact facts. */
#ifndef PIOSCOPE_RAWREAD_H
#define PIOSCOPE_RAWREAD_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "raw_format.h"

typedef struct {
    pioscope_raw_event ev;
    pioscope_raw_event_ext ext;   /* zero unless ev.flags has PIOSCOPE_F_EXT */
    uint32_t thread;              /* from the chunk header */
    int chunk;                    /* index of its EVENTS chunk */
} rr_event;

typedef struct {
    uint32_t id;
    uint16_t kind;
    uint64_t fs_magic;
    char text[4096];
} rr_string;

typedef struct {
    pioscope_raw_file_header hdr;
    rr_event *events;
    size_t nevents;
    rr_string *strings;
    size_t nstrings;
    char job[65536];              /* all JOB payloads, concatenated */
    char partial[1024];           /* PARTIAL reasons, '|'-separated */
    int chunks[8];                /* chunks seen per kind */
    int ended;                    /* END seen (and it was last) */
    char error[256];              /* first framing error, "" if none */
} rr_file;

static inline void rr_free(rr_file *f)
{
    free(f->events);
    free(f->strings);
    memset(f, 0, sizeof *f);
}

/* Decodes `path` into `f`. Returns 0 when well formed, -1 with f->error otherwise (what was
 * decoded before the damage stays in f). */
static inline int rr_load(const char *path, rr_file *f)
{
    memset(f, 0, sizeof *f);
    FILE *in = fopen(path, "rb");
    if (!in) {
        snprintf(f->error, sizeof f->error, "cannot open %s", path);
        return -1;
    }
    fseek(in, 0, SEEK_END);
    long size = ftell(in);
    fseek(in, 0, SEEK_SET);
    unsigned char *data = malloc(size > 0 ? (size_t)size : 1);
    if (fread(data, 1, (size_t)size, in) != (size_t)size) size = 0;
    fclose(in);
#define RR_FAIL(...)                                              \
    do {                                                          \
        snprintf(f->error, sizeof f->error, __VA_ARGS__);         \
        free(data);                                               \
        return -1;                                                \
    } while (0)
    if ((size_t)size < sizeof f->hdr) RR_FAIL("file shorter than its header");
    memcpy(&f->hdr, data, sizeof f->hdr);
    if (memcmp(f->hdr.magic, PIOSCOPE_RAW_MAGIC, 8)) RR_FAIL("bad file magic");
    if (f->hdr.version != PIOSCOPE_RAW_VERSION) RR_FAIL("bad version");
    if (f->hdr.header_bytes != sizeof(pioscope_raw_file_header)) RR_FAIL("bad header_bytes");
    if (f->hdr.record_bytes != sizeof(pioscope_raw_event)) RR_FAIL("bad record_bytes");
    if (f->hdr.endian_check != PIOSCOPE_RAW_ENDIAN_CHECK) RR_FAIL("bad endian_check");
    if (f->hdr.clock_kind != PIOSCOPE_CLOCK_TSC && f->hdr.clock_kind != PIOSCOPE_CLOCK_MONOTONIC)
        RR_FAIL("bad clock_kind");
    size_t cap_ev = 1024, cap_str = 64;
    f->events = malloc(cap_ev * sizeof *f->events);
    f->strings = malloc(cap_str * sizeof *f->strings);
    size_t pos = sizeof f->hdr;
    int chunk_index = 0;
    while (pos < (size_t)size) {
        pioscope_raw_chunk_header h;
        if (pos + sizeof h > (size_t)size) RR_FAIL("truncated chunk header at %zu", pos);
        memcpy(&h, data + pos, sizeof h);
        if (h.magic != PIOSCOPE_CHUNK_MAGIC) RR_FAIL("bad chunk magic at %zu", pos);
        if (h.kind < 1 || h.kind > 7) RR_FAIL("bad chunk kind %u at %zu", h.kind, pos);
        if (h.payload_bytes % 8) RR_FAIL("payload not a multiple of 8 at %zu", pos);
        if (pos + sizeof h + h.payload_bytes > (size_t)size) RR_FAIL("truncated chunk at %zu", pos);
        if (f->ended) RR_FAIL("chunk after END at %zu", pos);
        const unsigned char *p = data + pos + sizeof h;
        f->chunks[h.kind]++;
        switch (h.kind) {
        case PIOSCOPE_CHUNK_EVENTS: {
            if (h.payload_bytes % 32 || h.payload_bytes == 0) RR_FAIL("bad EVENTS payload");
            for (size_t off = 0; off < h.payload_bytes; off += 32) {
                if (f->nevents == cap_ev) f->events = realloc(f->events, (cap_ev *= 2) * sizeof *f->events);
                rr_event *e = &f->events[f->nevents++];
                memset(e, 0, sizeof *e);
                memcpy(&e->ev, p + off, 32);
                e->thread = h.thread;
                e->chunk = chunk_index;
                if (e->ev.flags & PIOSCOPE_F_EXT) {
                    off += 32;
                    if (off >= h.payload_bytes) RR_FAIL("ext record outside its chunk");
                    memcpy(&e->ext, p + off, 32);
                }
            }
            break;
        }
        case PIOSCOPE_CHUNK_STRING: {
            pioscope_raw_string s;
            if (h.payload_bytes < sizeof s) RR_FAIL("short STRING");
            memcpy(&s, p, sizeof s);
            if (sizeof s + s.length > h.payload_bytes) RR_FAIL("STRING longer than its chunk");
            if (f->nstrings == cap_str) f->strings = realloc(f->strings, (cap_str *= 2) * sizeof *f->strings);
            rr_string *r = &f->strings[f->nstrings++];
            r->id = s.id;
            r->kind = s.kind;
            r->fs_magic = s.fs_magic;
            size_t n = s.length < sizeof r->text - 1 ? s.length : sizeof r->text - 1;
            memcpy(r->text, p + sizeof s, n);
            r->text[n] = 0;
            break;
        }
        case PIOSCOPE_CHUNK_JOB: {
            size_t used = strlen(f->job);
            size_t n = strnlen((const char *)p, h.payload_bytes);
            if (used + n < sizeof f->job) memcpy(f->job + used, p, n), f->job[used + n] = 0;
            break;
        }
        case PIOSCOPE_CHUNK_PARTIAL: {
            size_t used = strlen(f->partial);
            size_t n = strnlen((const char *)p, h.payload_bytes);
            if (used + n + 2 < sizeof f->partial) {
                if (used) f->partial[used++] = '|';
                memcpy(f->partial + used, p, n);
                f->partial[used + n] = 0;
            }
            break;
        }
        case PIOSCOPE_CHUNK_END:
            if (h.payload_bytes) RR_FAIL("END with a payload");
            f->ended = 1;
            break;
        default:
            break;
        }
        pos += sizeof h + h.payload_bytes;
        chunk_index++;
    }
    free(data);
    return 0;
#undef RR_FAIL
}

/* The value of JOB fact `key` (the last one written), copied into out; NULL if absent. */
static inline const char *rr_job(const rr_file *f, const char *key, char *out, size_t cap)
{
    const char *found = NULL;
    size_t klen = strlen(key);
    for (const char *line = f->job; *line;) {
        const char *eol = strchr(line, '\n');
        size_t len = eol ? (size_t)(eol - line) : strlen(line);
        if (len > klen && !memcmp(line, key, klen) && line[klen] == '=') {
            size_t n = len - klen - 1 < cap - 1 ? len - klen - 1 : cap - 1;
            memcpy(out, line + klen + 1, n);
            out[n] = 0;
            found = out;
        }
        if (!eol) break;
        line = eol + 1;
    }
    return found;
}

static inline const rr_string *rr_string_by_id(const rr_file *f, uint32_t id)
{
    for (size_t i = 0; i < f->nstrings; i++)
        if (f->strings[i].id == id) return &f->strings[i];
    return NULL;
}

/* Id of the string whose text ends with `suffix` (0 if none). */
static inline uint32_t rr_string_ending(const rr_file *f, const char *suffix)
{
    size_t n = strlen(suffix);
    for (size_t i = 0; i < f->nstrings; i++) {
        size_t len = strlen(f->strings[i].text);
        if (len >= n && !strcmp(f->strings[i].text + len - n, suffix)) return f->strings[i].id;
    }
    return 0;
}

static inline int64_t rr_result(const rr_event *e)
{
    return (e->ev.flags & PIOSCOPE_F_EXT) ? e->ext.result : (int64_t)e->ev.size;
}

static inline uint64_t rr_size(const rr_event *e)
{
    return (uint64_t)e->ev.size | ((uint64_t)e->ext.size_hi << 32);
}

static inline uint64_t rr_duration(const rr_event *e)
{
    return (e->ev.flags & PIOSCOPE_F_EXT) ? e->ext.duration : e->ev.duration;
}

/* Lists the *.praw files of `dir` (sorted); returns how many (up to max). */
static inline int rr_list(const char *dir, char paths[][4096], int max)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)) && n < max) {
        size_t len = strlen(de->d_name);
        if (len > 5 && !strcmp(de->d_name + len - 5, PIOSCOPE_RAW_SUFFIX))
            snprintf(paths[n++], 4096, "%s/%s", dir, de->d_name);
    }
    closedir(d);
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && strcmp(paths[j - 1], paths[j]) > 0; j--) {
            char tmp[4096];
            strcpy(tmp, paths[j]);
            strcpy(paths[j], paths[j - 1]);
            strcpy(paths[j - 1], tmp);
        }
    return n;
}

#endif
