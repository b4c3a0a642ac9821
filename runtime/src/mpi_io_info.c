/* mpi_io_info.c: the SETTINGS chunks of an MPI file: the hints the library really uses
 * (MPI_File_get_info, every key) and the file view, flattened to (offset, length) runs, each
 * written when it changes. Called at open, set_view and set_info; not a hot path, so it may
 * allocate. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mpi_common.h"

/* Larger filetypes: sizes and extent only. Flattening costs time linear in the extent at every
 * set_view (HPIO's 20 MiB filetype doubled a 1-rank run's I/O time at 16 MiB). */
#define VIEW_FLATTEN_MAX_EXTENT (256u << 10)
#define VIEW_FLAT_MAX_RUNS 64               /* more runs: view.runs only, no view.flat */

typedef struct {
    char *text;
    size_t length;
    size_t capacity;
    int failed;
} text_buffer;

static void append(text_buffer *b, const char *s, size_t n)
{
    if (b->failed)
        return;
    if (b->length + n + 1 > b->capacity) {
        size_t capacity = b->capacity ? b->capacity : 1024;
        while (b->length + n + 1 > capacity)
            capacity *= 2;
        char *grown = realloc(b->text, capacity);
        if (!grown) {
            b->failed = 1;
            return;
        }
        b->text = grown;
        b->capacity = capacity;
    }
    memcpy(b->text + b->length, s, n);
    b->length += n;
    b->text[b->length] = '\0';
}

static void append_str(text_buffer *b, const char *s)
{
    append(b, s, strlen(s));
}

/* "key=value\n", with any newline in the value turned into a space so lines stay lines. */
static void append_pair(text_buffer *b, const char *key, const char *value)
{
    append_str(b, key);
    append(b, "=", 1);
    size_t start = b->length;
    append_str(b, value);
    for (size_t i = start; !b->failed && i < b->length; i++)
        if (b->text[i] == '\n' || b->text[i] == '\r')
            b->text[i] = ' ';
    append(b, "\n", 1);
}

static void append_count(text_buffer *b, const char *key, long long value)
{
    char number[32];
    snprintf(number, sizeof number, "%lld", value);
    append_pair(b, key, number);
}

static void append_hints(text_buffer *b, MPI_File fh)
{
    MPI_Info info = MPI_INFO_NULL;
    int nkeys = 0;
    if (PMPI_File_get_info(fh, &info) != MPI_SUCCESS || info == MPI_INFO_NULL)
        return;
    PMPI_Info_get_nkeys(info, &nkeys);
    for (int i = 0; i < nkeys; i++) {
        char key[MPI_MAX_INFO_KEY + 1];
        int length = 0, flag = 0;
        if (PMPI_Info_get_nthkey(info, i, key) != MPI_SUCCESS ||
            PMPI_Info_get_valuelen(info, key, &length, &flag) != MPI_SUCCESS || !flag)
            continue;
        /* MPI_Info_get rather than MPI-4's MPI_Info_get_string, which Open MPI 4 lacks; the
         * length excludes the NUL. */
        char small[256];
        char *value = length < (int)sizeof small ? small : malloc((size_t)length + 1);
        if (value && PMPI_Info_get(info, key, length, value, &flag) == MPI_SUCCESS && flag)
            append_pair(b, key, value);
        if (value != small)
            free(value);
    }
    PMPI_Info_free(&info);
}

static void free_if_derived(MPI_Datatype *type)
{
    int ni, na, nd, combiner = MPI_COMBINER_NAMED;
    if (PMPI_Type_get_envelope(*type, &ni, &na, &nd, &combiner) == MPI_SUCCESS &&
        combiner != MPI_COMBINER_NAMED)
        PMPI_Type_free(type);
}

/* Runs of the filetype: unpack `size` bytes of 0xFF through it into a zeroed buffer of its true
 * extent and scan the marked bytes. No envelope walking, and exact because the bytes of a
 * filetype do not overlap. Offsets are relative to the filetype's origin (view.disp). */
static void append_runs(text_buffer *b, MPI_Datatype filetype, MPI_Count size, MPI_Count true_lb,
                        MPI_Count true_extent)
{
    if (true_extent <= 0 || true_extent > VIEW_FLATTEN_MAX_EXTENT || size <= 0 ||
        size > true_extent)
        return;
    unsigned char *marks = calloc((size_t)true_extent, 1);
    unsigned char *ones = malloc((size_t)size);
    int position = 0;
    int unpacked = 0;
    if (marks && ones) {
        memset(ones, 0xFF, (size_t)size);
        unpacked = PMPI_Unpack(ones, (int)size, &position, marks - true_lb, 1, filetype,
                               MPI_COMM_SELF) == MPI_SUCCESS;
    }
    free(ones);
    if (!unpacked) {
        free(marks);
        return;
    }
    text_buffer flat = {0};
    long long runs = 0;
    for (MPI_Count i = 0; i < true_extent;) {
        if (!marks[i]) {
            /* Skip holes a word at a time (the extent is small, but mostly holes). */
            uint64_t word;
            while (i + 8 <= true_extent && (memcpy(&word, marks + i, 8), word == 0))
                i += 8;
            while (i < true_extent && !marks[i])
                i++;
            continue;
        }
        MPI_Count start = i;
        while (i < true_extent && marks[i])
            i++;
        if (++runs <= VIEW_FLAT_MAX_RUNS) {
            char run[48];
            snprintf(run, sizeof run, "%s%lld:%lld", runs > 1 ? "," : "",
                     (long long)(true_lb + start), (long long)(i - start));
            append_str(&flat, run);
        }
    }
    append_count(b, "view.runs", runs);
    if (runs <= VIEW_FLAT_MAX_RUNS)
        append_pair(b, "view.flat", flat.text ? flat.text : "");
    free(flat.text);
    free(marks);
}

/* The (count, blocklength, stride) of a vector or hvector of a named type, in bytes, looking
 * through resized types and copies (ROMIO's MPI_File_get_view returns a contiguous of one);
 * 0 if it is none. Frees what get_contents returned. */
static int vector_shape(MPI_Datatype type, long long *count, long long *length, long long *stride)
{
    int ni = 0, na = 0, nd = 0, combiner = MPI_COMBINER_NAMED;
    if (PMPI_Type_get_envelope(type, &ni, &na, &nd, &combiner) != MPI_SUCCESS || ni > 3 ||
        na > 2 || nd != 1)
        return 0;
    int ints[3] = {0};
    MPI_Aint addrs[2] = {0};
    MPI_Datatype inner;
    if (PMPI_Type_get_contents(type, ni, na, nd, ints, addrs, &inner) != MPI_SUCCESS)
        return 0;
    int found = 0;
    if (combiner == MPI_COMBINER_RESIZED || combiner == MPI_COMBINER_DUP ||
        (combiner == MPI_COMBINER_CONTIGUOUS && ints[0] == 1)) {
        found = vector_shape(inner, count, length, stride);
    } else if (combiner == MPI_COMBINER_VECTOR || combiner == MPI_COMBINER_HVECTOR) {
        int ii = 0, ia = 0, id = 0, inner_combiner = 0;
        MPI_Count element = 0, lb = 0, extent = 0;
        PMPI_Type_get_envelope(inner, &ii, &ia, &id, &inner_combiner);
        PMPI_Type_size_x(inner, &element);
        PMPI_Type_get_extent_x(inner, &lb, &extent);
        if (inner_combiner == MPI_COMBINER_NAMED && element == extent) {
            *count = ints[0];
            *length = (long long)ints[1] * element;
            *stride = combiner == MPI_COMBINER_VECTOR ? (long long)ints[2] * extent
                                                      : (long long)addrs[0];
            found = 1;
        }
    }
    free_if_derived(&inner);
    return found;
}

/* Filetypes too large to flatten that are [resized] vectors of a named type (HPIO's and
 * IOR's strided views): view.runs and view.vector = count:length:stride (bytes, the first run
 * at the origin) from the type's envelope, in constant time whatever its extent. */
static void append_vector(text_buffer *b, MPI_Datatype filetype)
{
    long long count = 0, length = 0, stride = 0;
    if (!vector_shape(filetype, &count, &length, &stride) || count < 1 || length < 1 ||
        stride < length)
        return;
    char shape[80];
    snprintf(shape, sizeof shape, "%lld:%lld:%lld", count, length, stride);
    append_count(b, "view.runs", stride == length ? 1 : count);
    append_pair(b, "view.vector", shape);
}

static void append_view(text_buffer *b, MPI_File fh)
{
    MPI_Offset disp = 0;
    MPI_Datatype etype, filetype;
    char datarep[MPI_MAX_DATAREP_STRING + 1] = "";
    if (PMPI_File_get_view(fh, &disp, &etype, &filetype, datarep) != MPI_SUCCESS)
        return;
    MPI_Count etype_size = 0, size = 0, lb = 0, extent = 0, true_lb = 0, true_extent = 0;
    PMPI_Type_size_x(etype, &etype_size);
    PMPI_Type_size_x(filetype, &size);
    PMPI_Type_get_extent_x(filetype, &lb, &extent);
    PMPI_Type_get_true_extent_x(filetype, &true_lb, &true_extent);
    append_count(b, "view.disp", (long long)disp);
    append_count(b, "view.etype_size", (long long)etype_size);
    append_count(b, "view.filetype_size", (long long)size);
    append_count(b, "view.filetype_extent", (long long)extent);
    append_pair(b, "view.datarep", datarep);
    if (true_extent > VIEW_FLATTEN_MAX_EXTENT)
        append_vector(b, filetype);
    else
        append_runs(b, filetype, size, true_lb, true_extent);
    free_if_derived(&etype);
    free_if_derived(&filetype);
}

/* ---- what was last written, per file ----
 *
 * RATIONALE: HPIO opens the same file and sets the same view 40 times per run, and ~1 KB of
 * identical hints per call was most of its raw trace. So the hints (with the open.* lines at
 * open) and the view are two chunks, each written only when it differs from what was last
 * written for the file in this process, compared as 64-bit hashes per file string id. A reader
 * takes, per key, the latest value at or before a time. The open.* lines are compared with the
 * last open's and the hint lines with the last hints of any call, so the hints a set_view
 * reports unchanged are not written again for lack of open.* lines. The view at a reopen is
 * the default one again: written whenever the last view written differs. When the table is
 * full, a new file's parts count as changed every time. */

#define SEEN_SLOTS 1024u /* power of two */

enum settings_part { PART_OPEN, PART_HINTS, PART_VIEW, PARTS };

typedef struct {
    uint32_t object;         /* file string id; 0 = free slot */
    uint64_t hash[PARTS];    /* of the part last written; 0 = none yet */
} seen_slot;

static seen_slot seen[SEEN_SLOTS];
static int seen_lock;

/* FNV-1a; never 0, which means "absent". */
static uint64_t text_hash(const char *text, size_t length)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < length; i++) {
        h ^= (unsigned char)text[i];
        h *= 0x100000001b3ULL;
    }
    return h ? h : 1;
}

/* The parts present (hash != 0) that differ from those last written for object, as bits
 * 1 << part; remembers them as written. */
static unsigned changed_parts(uint32_t object, const uint64_t hash[PARTS])
{
    unsigned present = 0, changed = 0;
    for (int part = 0; part < PARTS; part++)
        if (hash[part])
            present |= 1u << part;
    if (!object)
        return present;
    changed = present; /* if the table is full */
    uint32_t home = object * 0x9e3779b1u;
    pioscope_mpi_lock(&seen_lock);
    for (uint32_t i = 0; i < SEEN_SLOTS; i++) {
        seen_slot *slot = &seen[(home + i) & (SEEN_SLOTS - 1)];
        if (slot->object != object && slot->object != 0)
            continue;
        slot->object = object;
        changed = 0;
        for (int part = 0; part < PARTS; part++)
            if (hash[part] && slot->hash[part] != hash[part]) {
                slot->hash[part] = hash[part];
                changed |= 1u << part;
            }
        break;
    }
    pioscope_mpi_unlock(&seen_lock);
    return changed;
}

static int usable(const text_buffer *b)
{
    return !b->failed && b->length;
}

void pioscope_mpi_io_settings(MPI_File fh, uint32_t object, uint16_t func, uint64_t ticks,
                              const char *extra, int with_view)
{
    text_buffer hints = {0}, view = {0};
    pioscope_internal_begin();
    if (extra)
        append_str(&hints, extra);
    size_t extra_length = hints.length;
    append_hints(&hints, fh);
    if (with_view)
        append_view(&view, fh);
    pioscope_internal_end();
    uint64_t hash[PARTS] = {0};
    if (usable(&hints)) {
        hash[PART_OPEN] = extra_length ? text_hash(hints.text, extra_length) : 0;
        hash[PART_HINTS] = text_hash(hints.text + extra_length, hints.length - extra_length);
    }
    if (usable(&view))
        hash[PART_VIEW] = text_hash(view.text, view.length);
    unsigned changed = changed_parts(object, hash);
    if (changed & (1u << PART_OPEN | 1u << PART_HINTS))
        pioscope_write_settings(object, func, ticks, hints.text, hints.length);
    if (changed & 1u << PART_VIEW)
        pioscope_write_settings(object, func, ticks, view.text, view.length);
    free(hints.text);
    free(view.text);
}
