/* hdf5_abi.h: the part of HDF5's C ABI the HDF5 layer uses, declared here so the runtime builds
 * without HDF5's headers and libpioscope.so never links libhdf5: every HDF5 function is found
 * with dlsym(RTLD_NEXT) when a program that uses HDF5 first calls it.
 *
 * RATIONALE: these are the types of HDF5 1.10 and later (hid_t became 64-bit in 1.10; hbool_t
 * is C99 bool when <stdbool.h> exists, as on every platform we build for). The test program
 * tests/programs/h5_trace.c includes the real hdf5.h and checks the sizes agree. */
#ifndef PIOSCOPE_HDF5_ABI_H
#define PIOSCOPE_HDF5_ABI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef int64_t hid_t;
typedef int herr_t;
typedef int htri_t;
typedef unsigned long long hsize_t;
typedef long long hssize_t;
typedef bool hbool_t;

#define PIOSCOPE_H5_DEFAULT ((hid_t)0)  /* H5P_DEFAULT and H5S_ALL */
#define PIOSCOPE_H5_MAX_RANK 32         /* H5S_MAX_RANK */

/* H5FD_mpio_xfer_t */
enum { PIOSCOPE_H5FD_MPIO_INDEPENDENT = 0, PIOSCOPE_H5FD_MPIO_COLLECTIVE = 1 };
/* H5D_layout_t */
enum { PIOSCOPE_H5D_COMPACT = 0, PIOSCOPE_H5D_CONTIGUOUS = 1, PIOSCOPE_H5D_CHUNKED = 2,
       PIOSCOPE_H5D_VIRTUAL = 3 };
/* H5I_type_t */
enum { PIOSCOPE_H5I_DATASET = 5 };
/* H5S_sel_type */
enum { PIOSCOPE_H5S_SEL_NONE = 0, PIOSCOPE_H5S_SEL_POINTS = 1, PIOSCOPE_H5S_SEL_HYPERSLABS = 2,
       PIOSCOPE_H5S_SEL_ALL = 3 };

/* The intercepted functions. */
typedef hid_t h5_fcreate_fn(const char *name, unsigned flags, hid_t fcpl, hid_t fapl);
typedef hid_t h5_fopen_fn(const char *name, unsigned flags, hid_t fapl);
typedef herr_t h5_id_fn(hid_t id);                       /* H5Fclose, H5Dclose, ... */
typedef herr_t h5_fflush_fn(hid_t object, int scope);    /* scope: H5F_scope_t */
typedef hid_t h5_dcreate2_fn(hid_t loc, const char *name, hid_t type, hid_t space, hid_t lcpl,
                             hid_t dcpl, hid_t dapl);
typedef hid_t h5_dopen2_fn(hid_t loc, const char *name, hid_t dapl);
typedef hid_t h5_dcreate1_fn(hid_t loc, const char *name, hid_t type, hid_t space, hid_t dcpl);
typedef hid_t h5_dopen1_fn(hid_t loc, const char *name);
typedef hid_t h5_oopen_fn(hid_t loc, const char *name, hid_t lapl);
typedef herr_t h5_dwrite_fn(hid_t dset, hid_t mem_type, hid_t mem_space, hid_t file_space,
                            hid_t dxpl, const void *buf);
typedef herr_t h5_dread_fn(hid_t dset, hid_t mem_type, hid_t mem_space, hid_t file_space,
                           hid_t dxpl, void *buf);
typedef hid_t h5_gcreate2_fn(hid_t loc, const char *name, hid_t lcpl, hid_t gcpl, hid_t gapl);
typedef hid_t h5_acreate2_fn(hid_t loc, const char *name, hid_t type, hid_t space, hid_t acpl,
                             hid_t aapl);
typedef hid_t h5_acreate_by_name_fn(hid_t loc, const char *obj_name, const char *attr_name,
                                    hid_t type, hid_t space, hid_t acpl, hid_t aapl, hid_t lapl);
typedef herr_t h5_awrite_fn(hid_t attr, hid_t mem_type, const void *buf);
typedef herr_t h5_aread_fn(hid_t attr, hid_t mem_type, void *buf);

/* The queries the layer makes after a call (hdf5_query.c). */
typedef ssize_t h5_name_fn(hid_t id, char *name, size_t size);   /* H5Fget_name, H5Iget_name */
typedef ssize_t h5_aget_name_fn(hid_t attr, size_t size, char *name);
typedef hid_t h5_get_id_fn(hid_t id);      /* H5Dget_space, H5Dget_create_plist, H5Aget_space,
                                              H5Fget_access_plist, H5Pget_driver */
typedef hid_t h5_driver_init_fn(void);     /* H5FD_mpio_init, H5FD_sec2_init */
typedef int h5_extent_dims_fn(hid_t space, hsize_t dims[], hsize_t maxdims[]);
typedef hssize_t h5_npoints_fn(hid_t space);
typedef herr_t h5_bounds_fn(hid_t space, hsize_t start[], hsize_t end[]);
typedef int h5_sel_type_fn(hid_t space);
typedef int h5_iget_type_fn(hid_t id);                          /* H5Iget_type */
typedef size_t h5_tget_size_fn(hid_t type);
typedef herr_t h5_get_xfer_fn(hid_t dxpl, int *mode);           /* H5Pget_dxpl_mpio */
typedef int h5_get_layout_fn(hid_t dcpl);
typedef int h5_get_chunk_fn(hid_t dcpl, int max_ndims, hsize_t dims[]);
typedef herr_t h5_get_alignment_fn(hid_t fapl, hsize_t *threshold, hsize_t *alignment);
typedef herr_t h5_get_hsize_fn(hid_t fapl, hsize_t *value);       /* H5Pget_meta_block_size */
typedef herr_t h5_get_size_fn(hid_t fapl, size_t *value);         /* H5Pget_sieve_buf_size */
typedef herr_t h5_get_bool_fn(hid_t plist, hbool_t *value);       /* coll metadata settings */
typedef herr_t h5_mdc_size_fn(hid_t file, size_t *max_size, size_t *min_clean_size,
                              size_t *cur_size, int *cur_num_entries);

#endif
