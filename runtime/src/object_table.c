/* object_table.c: owns the open-addressing table of object_table.h. Deleted slots are reused
 * by later inserts; a lookup stops at the first never-used slot. */
#include "object_table.h"

#define SLOT_EMPTY 0
#define SLOT_DELETED (-1)

static uint32_t slot_home(int64_t key)
{
    uint64_t h = (uint64_t)key * 0x9E3779B97F4A7C15ull;
    return (uint32_t)(h >> 40) & (PIOSCOPE_OBJECT_SLOTS - 1);
}

static pioscope_object_slot *find_slot(pioscope_object_table *t, int64_t key)
{
    uint32_t home = slot_home(key);
    for (uint32_t i = 0; i < PIOSCOPE_OBJECT_SLOTS; i++) {
        pioscope_object_slot *s = &t->slots[(home + i) & (PIOSCOPE_OBJECT_SLOTS - 1)];
        int64_t k = __atomic_load_n(&s->key, __ATOMIC_ACQUIRE);
        if (k == key) return s;
        if (k == SLOT_EMPTY) return NULL;
    }
    return NULL;
}

void pioscope_objects_remember(pioscope_object_table *t, int64_t key, uint32_t object)
{
    if (key <= 0 || !object) return;
    pthread_mutex_lock(&t->lock);
    pioscope_object_slot *s = find_slot(t, key);
    if (s) {
        __atomic_store_n(&s->object, object, __ATOMIC_RELAXED);
        __atomic_store_n(&s->shape_hash, 0, __ATOMIC_RELAXED);
    } else {
        uint32_t home = slot_home(key);
        for (uint32_t i = 0; i < PIOSCOPE_OBJECT_SLOTS; i++) {
            s = &t->slots[(home + i) & (PIOSCOPE_OBJECT_SLOTS - 1)];
            int64_t k = __atomic_load_n(&s->key, __ATOMIC_RELAXED);
            if (k != SLOT_EMPTY && k != SLOT_DELETED) continue;
            __atomic_store_n(&s->object, object, __ATOMIC_RELAXED);
            __atomic_store_n(&s->shape_hash, 0, __ATOMIC_RELAXED);
            __atomic_store_n(&s->key, key, __ATOMIC_RELEASE);
            break;
        }
    }
    pthread_mutex_unlock(&t->lock);
}

void pioscope_objects_forget(pioscope_object_table *t, int64_t key)
{
    pthread_mutex_lock(&t->lock);
    pioscope_object_slot *s = find_slot(t, key);
    if (s) __atomic_store_n(&s->key, (int64_t)SLOT_DELETED, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&t->lock);
}

uint32_t pioscope_objects_find(pioscope_object_table *t, int64_t key)
{
    pioscope_object_slot *s = key > 0 ? find_slot(t, key) : NULL;
    return s ? __atomic_load_n(&s->object, __ATOMIC_RELAXED) : 0;
}

int pioscope_objects_shape_changed(pioscope_object_table *t, int64_t key, uint64_t hash)
{
    pioscope_object_slot *s = key > 0 ? find_slot(t, key) : NULL;
    return !s || __atomic_exchange_n(&s->shape_hash, hash, __ATOMIC_RELAXED) != hash;
}
