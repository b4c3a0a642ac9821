/* object_table.h: the names the layers above MPI-IO (HDF5, PnetCDF) gave their open objects
 * (files, datasets, variables), by the library's handle, so a transfer finds its string without
 * asking the library: lock-free lookups, a mutex only where the program opens or closes. */
#ifndef PIOSCOPE_OBJECT_TABLE_H
#define PIOSCOPE_OBJECT_TABLE_H

#include <pthread.h>
#include <stdint.h>

#define PIOSCOPE_OBJECT_SLOTS 4096u  /* power of two; more open objects are not remembered */

typedef struct {
    int64_t key;          /* atomic: 0 (empty), -1 (deleted) or the handle (> 0) */
    uint32_t object;      /* atomic: its string id */
    uint32_t reserved;
    uint64_t shape_hash;  /* atomic: the shape of the transfer last written as settings */
} pioscope_object_slot;

typedef struct {
    pioscope_object_slot slots[PIOSCOPE_OBJECT_SLOTS];
    pthread_mutex_t lock;
} pioscope_object_table;

#define PIOSCOPE_OBJECT_TABLE_INIT {.lock = PTHREAD_MUTEX_INITIALIZER}

/* Handle `key` (> 0) names string `object` from now on. */
void pioscope_objects_remember(pioscope_object_table *t, int64_t key, uint32_t object);
void pioscope_objects_forget(pioscope_object_table *t, int64_t key);
/* The string remembered for `key`, 0 if none. */
uint32_t pioscope_objects_find(pioscope_object_table *t, int64_t key);
/* 1 when `hash` differs from the shape last recorded for `key` (it is recorded now), or the
 * key is not remembered; 0 when it is the same. */
int pioscope_objects_shape_changed(pioscope_object_table *t, int64_t key, uint64_t hash);

#endif
