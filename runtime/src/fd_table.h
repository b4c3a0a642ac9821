/* fd_table.h: what the tracer knows about each file descriptor opened by a traced call: the
 * file's string id and the current file offset. Fixed size, lock-free (atomics). */
#ifndef PIOSCOPE_FD_TABLE_H
#define PIOSCOPE_FD_TABLE_H

#include <stdint.h>
#include <sys/types.h>

#include "server_mode.h"
#include "tracer.h"

#define PIOSCOPE_FD_MAX (1 << 16)  /* larger fds get file id 0 and an unknown offset */

enum {
    PIOSCOPE_FD_OPEN = 1,    /* opened by a traced call: `file` is valid */
    PIOSCOPE_FD_POS = 2,     /* `pos` is the file offset */
    PIOSCOPE_FD_APPEND = 4,  /* O_APPEND: writes go to the end, offset unknown */
    PIOSCOPE_FD_PROBED = 8,  /* server mode: asked whether it is a socket (server_mode.c) */
    PIOSCOPE_FD_NULL = 16    /* server mode: a file on null storage, writes discarded */
};

typedef struct {
    uint64_t pos;     /* atomic */
    uint32_t file;    /* atomic: string id */
    uint32_t state;   /* atomic: PIOSCOPE_FD_* */
} pioscope_fd_entry;

extern pioscope_fd_entry *pioscope_fds PIOSCOPE_HIDDEN;

int pioscope_fd_table_init(void);

static inline pioscope_fd_entry *pioscope_fd_get(int fd)
{
    pioscope_fd_entry *t = pioscope_fds;
    if (!t || fd < 0 || fd >= PIOSCOPE_FD_MAX) return 0;
    return &t[fd];
}

/* The file id of fd, 0 if unknown. In server mode a descriptor no traced call opened may be
 * a socket, named by its peer. */
static inline uint32_t pioscope_fd_file(int fd)
{
    pioscope_fd_entry *e = pioscope_fd_get(fd);
    uint32_t file = e ? __atomic_load_n(&e->file, __ATOMIC_RELAXED) : 0;
    if (__builtin_expect(file == 0 && pioscope_server_mode, 0)) return pioscope_socket_file(fd);
    return file;
}

/* Server mode asked what fd is: `file` its socket name, or 0 (not a connected socket). */
static inline void pioscope_fd_probed(int fd, uint32_t file)
{
    pioscope_fd_entry *e = pioscope_fd_get(fd);
    if (!e) return;
    __atomic_store_n(&e->file, file, __ATOMIC_RELAXED);
    __atomic_or_fetch(&e->state, PIOSCOPE_FD_PROBED, __ATOMIC_RELEASE);
}

/* A traced call opened fd on file `file`, at offset 0. */
static inline void pioscope_fd_open(int fd, uint32_t file, int append)
{
    pioscope_fd_entry *e = pioscope_fd_get(fd);
    if (!e) return;
    __atomic_store_n(&e->pos, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&e->file, file, __ATOMIC_RELAXED);
    uint32_t null = pioscope_server_mode && pioscope_null_file(file) ? PIOSCOPE_FD_NULL : 0;
    __atomic_store_n(&e->state,
                     PIOSCOPE_FD_OPEN | (append ? PIOSCOPE_FD_APPEND : PIOSCOPE_FD_POS) | null,
                     __ATOMIC_RELEASE);
}

/* True when writes to fd are discarded (null storage, server_mode.c). Only server mode marks
 * descriptors so: outside it, one load answers and the table is not read. */
static inline int pioscope_fd_null(int fd)
{
    if (__builtin_expect(!pioscope_server_mode, 1)) return 0;
    pioscope_fd_entry *e = pioscope_fd_get(fd);
    return e && (__atomic_load_n(&e->state, __ATOMIC_RELAXED) & PIOSCOPE_FD_NULL);
}

static inline void pioscope_fd_close(int fd)
{
    pioscope_fd_entry *e = pioscope_fd_get(fd);
    if (!e) return;
    __atomic_store_n(&e->state, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&e->file, 0, __ATOMIC_RELAXED);
}

/* The file offset is now `pos` (lseek, fseek, ftell). */
static inline void pioscope_fd_seek(int fd, uint64_t pos)
{
    pioscope_fd_entry *e = pioscope_fd_get(fd);
    if (!e) return;
    __atomic_store_n(&e->pos, pos, __ATOMIC_RELAXED);
    __atomic_or_fetch(&e->state, PIOSCOPE_FD_POS, __ATOMIC_RELAXED);
}

/* A read (is_write = 0) or write through the file offset moved `done` bytes (done < 0: it
 * failed). Returns the offset the transfer started at; sets PIOSCOPE_F_OFFSET_UNKNOWN in *flags
 * when that is not known. Concurrent transfers on one fd each get a distinct range. */
static inline uint64_t pioscope_fd_advance(int fd, int64_t done, int is_write, uint8_t *flags)
{
    pioscope_fd_entry *e = pioscope_fd_get(fd);
    uint32_t state = e ? __atomic_load_n(&e->state, __ATOMIC_RELAXED) : 0;
    if (is_write && (state & PIOSCOPE_FD_APPEND)) {
        /* Appending: the write went to the end of the file, wherever that was. */
        if (state & PIOSCOPE_FD_POS) __atomic_and_fetch(&e->state, ~(uint32_t)PIOSCOPE_FD_POS,
                                                        __ATOMIC_RELAXED);
        *flags |= PIOSCOPE_F_OFFSET_UNKNOWN;
        return 0;
    }
    if (!(state & PIOSCOPE_FD_POS)) {
        *flags |= PIOSCOPE_F_OFFSET_UNKNOWN;
        return 0;
    }
    if (done > 0) return __atomic_fetch_add(&e->pos, (uint64_t)done, __ATOMIC_RELAXED);
    return __atomic_load_n(&e->pos, __ATOMIC_RELAXED);
}

/* The current offset of fd into *pos; 0 when unknown. */
static inline int pioscope_fd_pos(int fd, uint64_t *pos)
{
    pioscope_fd_entry *e = pioscope_fd_get(fd);
    if (!e || !(__atomic_load_n(&e->state, __ATOMIC_RELAXED) & PIOSCOPE_FD_POS)) return 0;
    *pos = __atomic_load_n(&e->pos, __ATOMIC_RELAXED);
    return 1;
}

#endif
