/* server_mode.h: the runtime inside a storage server daemon (PIOSCOPE_SERVER=1, server_mode.c):
 * records flushed periodically, and socket descriptors named by their peer so that network
 * records tell themselves apart from storage records by the file name alone. */
#ifndef PIOSCOPE_SERVER_MODE_H
#define PIOSCOPE_SERVER_MODE_H

#include <stdint.h>

#include "tracer.h"

/* 1 in server mode (set once at init). */
extern int pioscope_server_mode PIOSCOPE_HIDDEN;

/* Reads the server-mode settings at init and starts the flusher; 0 when not in server mode. */
int pioscope_server_start(void);
/* In a forked child: its own flusher (fork keeps only the calling thread). */
void pioscope_server_after_fork(void);
/* Null storage (PIOSCOPE_NULL_PREFIX): true when writes to `file` (a string id) are
 * discarded. */
int pioscope_null_file(uint32_t file);
/* A write of `bytes` discarded on null storage: the file grows to cover it (sparse, so reads
 * return zeros), the file offset moves as the write would have moved it (`offset` < 0: a
 * write through the file offset). Returns `bytes`, or -1 with errno. */
long pioscope_null_write(int fd, uint64_t bytes, int64_t offset);

/* The `socket:<peer>` file id of a connected socket not opened by a traced call, cached in
 * the fd table; 0 for anything else (asked once per descriptor until it is closed). */
uint32_t pioscope_socket_file(int fd);

#endif
