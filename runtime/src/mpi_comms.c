/* mpi_comms.c: what the tracer knows about communicators: the interned description ("world",
 * "self", "comm-<handle> size=<n>") and the translation of their ranks to MPI_COMM_WORLD ranks,
 * cached per handle and dropped when the communicator is freed (attribute delete callback).
 *
 * RATIONALE: MPICH reuses a freed communicator's handle for the next new one, so a cache keyed
 * by handle alone would describe a new communicator with the old one's members. An attribute
 * with a delete callback is the standard way to learn that a communicator is gone. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mpi_common.h"

#define COMM_SLOTS 512u /* power of two */
#define SLOT_WORLD COMM_SLOTS
#define SLOT_SELF (COMM_SLOTS + 1u)

enum { SLOT_EMPTY = 0, SLOT_BUSY = 1, SLOT_READY = 2, SLOT_DEAD = 3 };

typedef struct {
    int state;           /* SLOT_*, read without the lock */
    uint32_t generation; /* bumped when the slot is emptied */
    MPI_Comm comm;
    uint32_t object;
    int size;
    int rank;
    int inter;
    int peers;           /* entries in world[] */
    uint32_t *world;     /* world rank of each peer rank */
} comm_slot;

static comm_slot slots[COMM_SLOTS];
static int slots_lock;
static int keyval = MPI_KEYVAL_INVALID;
static int ready;
static int world_rank = -1;
static int world_size;
static uint32_t world_object, self_object;

static uint32_t comm_hash(MPI_Comm comm)
{
    uint64_t key = 0;
    memcpy(&key, &comm, sizeof comm < sizeof key ? sizeof comm : sizeof key);
    key ^= key >> 29;
    key *= 0xbf58476d1ce4e5b9ULL;
    key ^= key >> 32;
    return (uint32_t)key;
}

/* MPI calls this from MPI_Comm_free (and for internal communicators at finalize). */
static int comm_deleted(MPI_Comm comm, int key, void *attribute, void *extra)
{
    (void)key;
    (void)extra;
    uintptr_t index = (uintptr_t)attribute;
    if (index >= COMM_SLOTS)
        return MPI_SUCCESS;
    comm_slot *slot = &slots[index];
    pioscope_mpi_lock(&slots_lock);
    if (__atomic_load_n(&slot->state, __ATOMIC_ACQUIRE) == SLOT_READY && slot->comm == comm) {
        /* DEAD, not EMPTY: lookups of other handles must keep probing past this slot. The
         * world[] array is freed only when the slot is reused, so a lock-free reader that saw
         * the old generation never touches freed memory in practice. */
        __atomic_add_fetch(&slot->generation, 1, __ATOMIC_RELEASE);
        __atomic_store_n(&slot->state, SLOT_DEAD, __ATOMIC_RELEASE);
    }
    pioscope_mpi_unlock(&slots_lock);
    return MPI_SUCCESS;
}

void pioscope_mpi_comms_init(void)
{
    PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &world_size);
    world_object = pioscope_intern_string(PIOSCOPE_STRING_COMMUNICATOR, "world");
    self_object = pioscope_intern_string(PIOSCOPE_STRING_COMMUNICATOR, "self");
    PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, comm_deleted, &keyval, NULL);
    __atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
}

void pioscope_mpi_comms_fini(void)
{
    __atomic_store_n(&ready, 0, __ATOMIC_RELEASE);
}

int pioscope_mpi_world_rank(void)
{
    return world_rank;
}

static void fill_ref(const comm_slot *slot, uint32_t index, pioscope_mpi_comm_ref *ref)
{
    ref->object = slot->object;
    ref->size = slot->size;
    ref->rank = slot->rank;
    ref->inter = slot->inter;
    ref->slot = index;
    ref->generation = __atomic_load_n(&slot->generation, __ATOMIC_ACQUIRE);
}

static int find(MPI_Comm comm, uint32_t hash, pioscope_mpi_comm_ref *ref)
{
    for (uint32_t i = 0; i < COMM_SLOTS; i++) {
        uint32_t index = (hash + i) & (COMM_SLOTS - 1);
        int state = __atomic_load_n(&slots[index].state, __ATOMIC_ACQUIRE);
        if (state == SLOT_EMPTY)
            return 0;
        if (state == SLOT_READY && slots[index].comm == comm) {
            fill_ref(&slots[index], index, ref);
            return 1;
        }
    }
    return 0;
}

/* The world rank of every rank of comm's (remote, for an intercommunicator) group. */
static uint32_t *translate_all(MPI_Comm comm, int inter, int *count)
{
    MPI_Group group, world_group;
    int n = 0;
    if ((inter ? PMPI_Comm_remote_group(comm, &group) : PMPI_Comm_group(comm, &group)) !=
        MPI_SUCCESS)
        return NULL;
    PMPI_Comm_group(MPI_COMM_WORLD, &world_group);
    PMPI_Group_size(group, &n);
    int *ranks = malloc(2 * (size_t)(n > 0 ? n : 1) * sizeof(int));
    uint32_t *world = malloc((size_t)(n > 0 ? n : 1) * sizeof(uint32_t));
    if (ranks && world) {
        for (int i = 0; i < n; i++)
            ranks[i] = i;
        PMPI_Group_translate_ranks(group, n, ranks, world_group, ranks + n);
        for (int i = 0; i < n; i++)
            world[i] =
                ranks[n + i] == MPI_UNDEFINED ? PIOSCOPE_MPI_NO_RANK : (uint32_t)ranks[n + i];
    } else {
        free(world);
        world = NULL;
    }
    free(ranks);
    PMPI_Group_free(&group);
    PMPI_Group_free(&world_group);
    *count = world ? n : 0;
    return world;
}

/* First sight of a communicator: describe it (MPI calls outside the lock, because MPI may call
 * comm_deleted, which takes it), then publish it in a slot. */
static int insert(MPI_Comm comm, uint32_t hash, pioscope_mpi_comm_ref *ref)
{
    comm_slot fresh = {0};
    fresh.comm = comm;
    PMPI_Comm_test_inter(comm, &fresh.inter);
    PMPI_Comm_size(comm, &fresh.size);
    PMPI_Comm_rank(comm, &fresh.rank);
    fresh.world = translate_all(comm, fresh.inter, &fresh.peers);
    uint64_t handle = 0;
    memcpy(&handle, &comm, sizeof comm < sizeof handle ? sizeof comm : sizeof handle);
    char text[64];
    snprintf(text, sizeof text, "comm-%llx size=%d", (unsigned long long)handle, fresh.size);
    fresh.object = pioscope_intern_string(PIOSCOPE_STRING_COMMUNICATOR, text);

    uint32_t chosen = COMM_SLOTS;
    pioscope_mpi_lock(&slots_lock);
    if (find(comm, hash, ref)) { /* another thread won the race */
        pioscope_mpi_unlock(&slots_lock);
        free(fresh.world);
        return 1;
    }
    for (uint32_t i = 0; i < COMM_SLOTS; i++) {
        uint32_t index = (hash + i) & (COMM_SLOTS - 1);
        int state = slots[index].state;
        if (state == SLOT_EMPTY || state == SLOT_DEAD) {
            chosen = index;
            break;
        }
    }
    if (chosen < COMM_SLOTS) {
        comm_slot *slot = &slots[chosen];
        free(slot->world); /* retired by comm_deleted */
        fresh.generation = slot->generation;
        fresh.state = SLOT_BUSY;
        *slot = fresh;
        __atomic_store_n(&slot->state, SLOT_READY, __ATOMIC_RELEASE);
        fill_ref(slot, chosen, ref);
    }
    pioscope_mpi_unlock(&slots_lock);
    if (chosen == COMM_SLOTS) { /* full: describe without caching, translate nothing */
        free(fresh.world);
        fill_ref(&fresh, PIOSCOPE_MPI_NO_RANK, ref);
        return 1;
    }
    PMPI_Comm_set_attr(comm, keyval, (void *)(uintptr_t)chosen);
    return 1;
}

int pioscope_mpi_comm_get(MPI_Comm comm, pioscope_mpi_comm_ref *ref)
{
    memset(ref, 0, sizeof *ref);
    if (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE) || comm == MPI_COMM_NULL)
        return 0;
    if (comm == MPI_COMM_WORLD) {
        *ref = (pioscope_mpi_comm_ref){world_object, world_size, world_rank, 0, SLOT_WORLD, 0};
        return 1;
    }
    if (comm == MPI_COMM_SELF) {
        *ref = (pioscope_mpi_comm_ref){self_object, 1, 0, 0, SLOT_SELF, 0};
        return 1;
    }
    uint32_t hash = comm_hash(comm);
    if (find(comm, hash, ref))
        return 1;
    return insert(comm, hash, ref);
}

uint32_t pioscope_mpi_comm_world_rank(const pioscope_mpi_comm_ref *ref, int rank)
{
    if (rank < 0)
        return PIOSCOPE_MPI_NO_RANK; /* MPI_PROC_NULL, MPI_ANY_SOURCE, MPI_ROOT */
    if (ref->slot == SLOT_WORLD)
        return rank < world_size ? (uint32_t)rank : PIOSCOPE_MPI_NO_RANK;
    if (ref->slot == SLOT_SELF)
        return rank == 0 ? (uint32_t)world_rank : PIOSCOPE_MPI_NO_RANK;
    if (ref->slot >= COMM_SLOTS)
        return PIOSCOPE_MPI_NO_RANK;
    /* Lock-free, seqlock style: the generation changes when the communicator is freed. */
    const comm_slot *slot = &slots[ref->slot];
    uint32_t before = __atomic_load_n(&slot->generation, __ATOMIC_ACQUIRE);
    if (before != ref->generation || __atomic_load_n(&slot->state, __ATOMIC_ACQUIRE) != SLOT_READY)
        return PIOSCOPE_MPI_NO_RANK;
    const uint32_t *world = slot->world;
    uint32_t value = world && rank < slot->peers ? world[rank] : PIOSCOPE_MPI_NO_RANK;
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if (__atomic_load_n(&slot->generation, __ATOMIC_RELAXED) != before)
        return PIOSCOPE_MPI_NO_RANK;
    return value;
}
