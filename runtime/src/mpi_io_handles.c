/* mpi_io_handles.c: the table of open MPI files (handle id, path, access mode) and the numbering
 * of collective calls on each, so that one collective call has the same link on every rank.
 *
 * RATIONALE: a handle id is agreed at open by a broadcast from rank 0 of the open's
 * communicator, then every rank counts the collective calls it makes on that handle. MPI requires
 * all ranks to issue collective calls on a file in the same order, so equal counters name the same
 * call without any communication on the data path. Lookups are lock-free (open addressing,
 * tombstones); only open and close take the spinlock. */
#include <string.h>
#include "mpi_common.h"

#define FILE_SLOTS 1024u /* power of two; files beyond it are traced without links */

enum { FILE_EMPTY = 0, FILE_BUSY = 1, FILE_READY = 2, FILE_DEAD = 3 };

static pioscope_mpi_file files[FILE_SLOTS];
static int files_lock;
static uint32_t opens; /* MPI_File_open calls made by this process */

static uint32_t file_hash(MPI_File fh)
{
    uint64_t key = 0;
    memcpy(&key, &fh, sizeof fh < sizeof key ? sizeof fh : sizeof key);
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdULL;
    key ^= key >> 33;
    return (uint32_t)key;
}

uint32_t pioscope_mpi_file_open_id(MPI_Comm comm, int open_rc)
{
    static void *bcast_slot; /* the real one: our own PMPI_Bcast would only pass it through */
    __typeof__(&PMPI_Bcast) bcast =
        (__typeof__(bcast))pioscope_resolve(&bcast_slot, "PMPI_Bcast");
    uint32_t number = __atomic_add_fetch(&opens, 1, __ATOMIC_RELAXED);
    /* The low 16 bits run 1..65535 and wrap, so no open gets link 0. */
    uint32_t id = ((uint32_t)pioscope_mpi_world_rank() << 16) | ((number - 1) % 0xffffu + 1);
    /* Every rank takes part even when its open failed, so nobody waits for a missing rank;
     * only an unusable communicator (which failed the open everywhere) skips it. */
    int cls = MPI_SUCCESS;
    if (open_rc != MPI_SUCCESS)
        PMPI_Error_class(open_rc, &cls);
    if (!bcast || comm == MPI_COMM_NULL || cls == MPI_ERR_COMM)
        return id;
    pioscope_internal_begin();
    bcast(&id, 1, MPI_UINT32_T, 0, comm);
    pioscope_internal_end();
    return id;
}

pioscope_mpi_file *pioscope_mpi_file_find(MPI_File fh)
{
    if (fh == MPI_FILE_NULL)
        return NULL;
    uint32_t home = file_hash(fh);
    for (uint32_t i = 0; i < FILE_SLOTS; i++) {
        pioscope_mpi_file *slot = &files[(home + i) & (FILE_SLOTS - 1)];
        int state = __atomic_load_n(&slot->state, __ATOMIC_ACQUIRE);
        if (state == FILE_EMPTY)
            return NULL;
        if (state == FILE_READY && slot->fh == fh)
            return slot;
    }
    return NULL;
}

pioscope_mpi_file *pioscope_mpi_file_add(MPI_File fh, uint32_t handle_id, uint32_t object,
                                         int amode)
{
    if (fh == MPI_FILE_NULL)
        return NULL;
    uint32_t home = file_hash(fh);
    pioscope_mpi_file *chosen = NULL;
    pioscope_mpi_lock(&files_lock);
    for (uint32_t i = 0; i < FILE_SLOTS; i++) {
        pioscope_mpi_file *slot = &files[(home + i) & (FILE_SLOTS - 1)];
        int state = slot->state;
        if (state == FILE_READY && slot->fh == fh) {
            /* A handle ROMIO freed without our close (e.g. at finalize) and handed out again. */
            __atomic_store_n(&slot->state, FILE_DEAD, __ATOMIC_RELEASE);
            state = FILE_DEAD;
        }
        if (!chosen && (state == FILE_EMPTY || state == FILE_DEAD))
            chosen = slot;
        if (state == FILE_EMPTY)
            break;
    }
    if (chosen) {
        __atomic_store_n(&chosen->state, FILE_BUSY, __ATOMIC_RELEASE);
        chosen->fh = fh;
        chosen->handle_id = handle_id;
        chosen->object = object;
        chosen->amode = amode;
        chosen->collectives = 0;
        chosen->split_link = 0;
        chosen->split_offset = 0;
        chosen->split_size = 0;
        chosen->split_flags = 0;
        __atomic_store_n(&chosen->state, FILE_READY, __ATOMIC_RELEASE);
    }
    pioscope_mpi_unlock(&files_lock);
    return chosen;
}

void pioscope_mpi_file_remove(pioscope_mpi_file *file)
{
    if (!file)
        return;
    pioscope_mpi_lock(&files_lock);
    __atomic_store_n(&file->state, FILE_DEAD, __ATOMIC_RELEASE);
    pioscope_mpi_unlock(&files_lock);
}

uint64_t pioscope_mpi_file_next_collective(pioscope_mpi_file *file)
{
    if (!file)
        return 0;
    uint32_t number = __atomic_add_fetch(&file->collectives, 1, __ATOMIC_RELAXED);
    return ((uint64_t)file->handle_id << 32) | number;
}
