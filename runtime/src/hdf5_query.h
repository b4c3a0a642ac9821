/* hdf5_query.h: what the HDF5 layer asks HDF5 after a call (names, selections, property lists)
 * and the table of the datasets it has named. The wrappers (hdf5_wrappers.c) call these only
 * after a successful real call, on ids the program passed or got: a query that failed would
 * push onto HDF5's error stack, which the program may print. */
#ifndef PIOSCOPE_HDF5_QUERY_H
#define PIOSCOPE_HDF5_QUERY_H

#include "hdf5_abi.h"
#include "tracer.h"

/* The FILE string of the HDF5 file holding object `id` (a file, group, dataset...), 0 when
 * unknown. */
uint32_t pioscope_h5_file_object(hid_t id);
/* The "<file>:<path>" string of object `id` (a dataset or group), 0 when unknown. */
uint32_t pioscope_h5_member_object(hid_t id);
/* The "<file>:<object path>@<attribute>" string of attribute `name` on object `loc`. */
uint32_t pioscope_h5_attribute_object(hid_t loc, const char *name);
/* The same for an open attribute. */
uint32_t pioscope_h5_open_attribute_object(hid_t attr);

/* 1 when `id` is a dataset (H5Oopen opens groups and named datatypes too). */
int pioscope_h5_is_dataset(hid_t id);

/* Files and datasets named at create/open, so later calls on their ids find their string
 * without asking HDF5 (lock-free lookups). */
void pioscope_h5_remember(hid_t id, uint32_t object);
void pioscope_h5_forget(hid_t id);
/* The string remembered for `id`, 0 if none. */
uint32_t pioscope_h5_known_object(hid_t id);
/* The string of dataset `dset`: remembered, or (opened by a call the layer does not wrap) asked
 * of HDF5 now and remembered. */
uint32_t pioscope_h5_dataset_object(hid_t dset);

/* What a dataset transfer moved: bytes selected (points x memory type size), where the
 * selection's first element lies in the dataset's row-major order (bytes), and whether that
 * is known. */
typedef struct {
    uint64_t bytes;
    uint64_t offset;
    int offset_known;
} pioscope_h5_selection;
/* Reads the selection of a transfer and writes its shape as settings of the dataset when it
 * differs from the last shape written for it. */
pioscope_h5_selection pioscope_h5_transfer(hid_t dset, hid_t mem_type, hid_t file_space,
                                           uint32_t object, uint16_t func, uint64_t ticks);
/* 1 when the transfer property list asks for collective MPI-IO (H5Pset_dxpl_mpio). */
int pioscope_h5_collective(hid_t dxpl);
/* Bytes an attribute of `type` over `space` holds. */
uint64_t pioscope_h5_attribute_bytes(hid_t type, hid_t space);
/* The same for an open attribute written from memory type `mem_type`. */
uint64_t pioscope_h5_open_attribute_bytes(hid_t attr, hid_t mem_type);

/* Settings of a file just created or opened (driver, alignment, metadata block and cache,
 * collective metadata) and of a dataset (dims, type size, layout, chunk), written as SETTINGS
 * chunks of their object. */
void pioscope_h5_file_settings(hid_t file, uint32_t object, uint16_t func, uint64_t ticks);
void pioscope_h5_dataset_settings(hid_t dset, uint32_t object, uint16_t func, uint64_t ticks);

#endif
