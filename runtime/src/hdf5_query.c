/* hdf5_query.c: owns what the HDF5 layer learns from HDF5 itself: object names, the selection
 * of a transfer, the transfer mode and the settings of files and datasets (property lists),
 * and the table of named files and datasets. Every HDF5 function is resolved by name on first use
 * (libpioscope.so does not link libhdf5); a function the loaded HDF5 lacks (H5Pget_dxpl_mpio
 * in a serial build) leaves that fact out. The queries run as the tracer's own calls
 * (pioscope_internal_begin), so nothing they do is recorded. */
#include <limits.h>

#include "core.h"
#include "hdf5_query.h"
#include "object_table.h"

/* What a slot holds once the loaded HDF5 was found to lack the function (the serial library
 * has no H5Pget_dxpl_mpio): looking again would search every loaded object on every call. */
static char absent;

/* The real HDF5 function `name`, cached in *slot (NULL when the loaded HDF5 lacks it). */
static inline void *h5_fn(void **slot, const char *name)
{
    void *p = __atomic_load_n(slot, __ATOMIC_RELAXED);
    if (__builtin_expect(!p, 0)) {
        p = pioscope_real(name);
        __atomic_store_n(slot, p ? p : (void *)&absent, __ATOMIC_RELAXED);
    }
    return p == (void *)&absent ? NULL : p;
}

static void *fget_name_, *iget_name_, *aget_name_, *dget_space_, *dget_type_, *dget_dcpl_,
    *aget_space_, *fget_fapl_, *pget_driver_, *mpio_init_, *sec2_init_, *extent_dims_,
    *npoints_, *bounds_, *sel_type_, *tget_size_, *get_xfer_, *get_layout_, *get_chunk_,
    *get_alignment_, *get_meta_block_, *get_sieve_, *get_coll_write_, *get_coll_ops_,
    *mdc_size_, *sclose_, *pclose_, *tclose_, *iget_type_;

static void close_id(void **slot, const char *name, hid_t id)
{
    h5_id_fn *close = h5_fn(slot, name);
    if (close && id > 0) close(id);
}

/* ---- names ---- */

uint32_t pioscope_h5_file_object(hid_t id)
{
    h5_name_fn *get = h5_fn(&fget_name_, "H5Fget_name");
    if (!get) return 0;
    char name[PATH_MAX];
    pioscope_internal_begin();
    ssize_t n = get(id, name, sizeof name);
    pioscope_internal_end();
    return n > 0 && (size_t)n < sizeof name ? pioscope_intern_path(name, -1) : 0;
}

/* The path of object `id` in its file ("/group/dset"), into `out`; 0 when unknown. */
static int object_path(hid_t id, char *out, size_t cap)
{
    h5_name_fn *get = h5_fn(&iget_name_, "H5Iget_name");
    if (!get) return 0;
    pioscope_internal_begin();
    ssize_t n = get(id, out, cap);
    pioscope_internal_end();
    return n > 0 && (size_t)n < cap;
}

uint32_t pioscope_h5_member_object(hid_t id)
{
    char path[PATH_MAX];
    uint32_t file = pioscope_h5_file_object(id);
    return file && object_path(id, path, sizeof path) ? pioscope_intern_member(file, path) : 0;
}

static uint32_t attribute_member(hid_t object, const char *name)
{
    char path[PATH_MAX];
    uint32_t file = pioscope_h5_file_object(object);
    if (!file || !name || !object_path(object, path, sizeof path)) return 0;
    char text[PATH_MAX];
    pioscope_text t = {text, sizeof text, 0};
    pioscope_text_str(&t, path);
    pioscope_text_put(&t, "@", 1);
    pioscope_text_str(&t, name);
    return t.len < sizeof text ? pioscope_intern_member(file, text) : 0;
}

uint32_t pioscope_h5_attribute_object(hid_t loc, const char *name)
{
    return attribute_member(loc, name);
}

uint32_t pioscope_h5_open_attribute_object(hid_t attr)
{
    /* H5Iget_name of an attribute is the path of the object it is attached to. */
    h5_aget_name_fn *get = h5_fn(&aget_name_, "H5Aget_name");
    if (!get) return 0;
    char name[256];
    pioscope_internal_begin();
    ssize_t n = get(attr, sizeof name, name);
    pioscope_internal_end();
    return n > 0 && (size_t)n < sizeof name ? attribute_member(attr, name) : 0;
}

int pioscope_h5_is_dataset(hid_t id)
{
    h5_iget_type_fn *get = h5_fn(&iget_type_, "H5Iget_type");
    if (!get) return 0;
    pioscope_internal_begin();
    int type = get(id);
    pioscope_internal_end();
    return type == PIOSCOPE_H5I_DATASET;
}

/* ---- the table of named files and datasets ---- */

static pioscope_object_table objects = PIOSCOPE_OBJECT_TABLE_INIT;

void pioscope_h5_remember(hid_t id, uint32_t object)
{
    pioscope_objects_remember(&objects, id, object);
}

void pioscope_h5_forget(hid_t id)
{
    pioscope_objects_forget(&objects, id);
}

uint32_t pioscope_h5_known_object(hid_t id)
{
    return pioscope_objects_find(&objects, id);
}

uint32_t pioscope_h5_dataset_object(hid_t dset)
{
    uint32_t object = pioscope_h5_known_object(dset);
    if (object) return object;
    object = pioscope_h5_member_object(dset);
    pioscope_h5_remember(dset, object);
    return object;
}

/* ---- transfers ---- */

static void append_dims(pioscope_text *t, const char *key, int ndims, const hsize_t *dims)
{
    pioscope_text_str(t, key);
    pioscope_text_put(t, "=", 1);
    for (int i = 0; i < ndims; i++) {
        if (i) pioscope_text_put(t, "x", 1);
        pioscope_text_u64(t, dims[i]);
    }
    pioscope_text_put(t, "\n", 1);
}

/* FNV-1a over the words of a selection's shape: compared on every transfer, so nothing is
 * formatted, and HDF5 is not asked the selection's type, unless the shape changed. */
static uint64_t shape_hash(int ndims, const hsize_t *box, hssize_t points)
{
    uint64_t h = (0xcbf29ce484222325ull ^ (uint64_t)ndims) * 0x100000001b3ull;
    h = (h ^ (uint64_t)points) * 0x100000001b3ull;
    for (int i = 0; i < ndims; i++) h = (h ^ box[i]) * 0x100000001b3ull;
    return h | 1;  /* never 0, the "nothing written yet" of a slot */
}

static const char *selection_kind(int type)
{
    switch (type) {
    case PIOSCOPE_H5S_SEL_NONE: return "none";
    case PIOSCOPE_H5S_SEL_POINTS: return "points";
    case PIOSCOPE_H5S_SEL_HYPERSLABS: return "hyperslabs";
    case PIOSCOPE_H5S_SEL_ALL: return "all";
    default: return "unknown";
    }
}

/* Writes h5.selection (the bounding box of the selection in `space`, in elements),
 * h5.selection_type and h5.selection_points when the box or the number of points differs from
 * what was last written for the dataset. */
static void selection_settings(hid_t dset, hid_t space, uint32_t object, uint16_t func,
                               uint64_t ticks, int ndims, const hsize_t *box, hssize_t points)
{
    if (!pioscope_objects_shape_changed(&objects, dset, shape_hash(ndims, box, points))) return;
    h5_sel_type_fn *sel_type = h5_fn(&sel_type_, "H5Sget_select_type");
    char text[512];
    pioscope_text t = {text, sizeof text, 0};
    append_dims(&t, "h5.selection", ndims, box);
    pioscope_text_str(&t, "h5.selection_type=");
    pioscope_text_str(&t, selection_kind(sel_type ? sel_type(space) : -1));
    pioscope_text_str(&t, "\nh5.selection_points=");
    pioscope_text_i64(&t, points);
    pioscope_text_put(&t, "\n", 1);
    pioscope_write_settings(object, func, ticks, text, pioscope_text_used(&t));
}

pioscope_h5_selection pioscope_h5_transfer(hid_t dset, hid_t mem_type, hid_t file_space,
                                           uint32_t object, uint16_t func, uint64_t ticks)
{
    pioscope_h5_selection sel = {0, 0, 0};
    h5_get_id_fn *get_space = h5_fn(&dget_space_, "H5Dget_space");
    h5_npoints_fn *npoints = h5_fn(&npoints_, "H5Sget_select_npoints");
    h5_tget_size_fn *type_size = h5_fn(&tget_size_, "H5Tget_size");
    h5_extent_dims_fn *extent = h5_fn(&extent_dims_, "H5Sget_simple_extent_dims");
    h5_bounds_fn *bounds = h5_fn(&bounds_, "H5Sget_select_bounds");
    if (!get_space || !npoints || !type_size || !extent || !bounds) return sel;
    pioscope_internal_begin();
    hid_t space = file_space == PIOSCOPE_H5_DEFAULT ? get_space(dset) : file_space;
    hssize_t points = space > 0 ? npoints(space) : -1;
    size_t element = type_size(mem_type);
    hsize_t dims[PIOSCOPE_H5_MAX_RANK], start[PIOSCOPE_H5_MAX_RANK], box[PIOSCOPE_H5_MAX_RANK];
    int ndims = points > 0 ? extent(space, dims, NULL) : -1;
    if (ndims >= 0 && bounds(space, start, box) >= 0) {
        uint64_t linear = 0;
        for (int i = 0; i < ndims; i++) {
            linear = linear * dims[i] + start[i];
            box[i] = box[i] - start[i] + 1;  /* the last element's index to the box's extent */
        }
        sel.offset = linear * element;
        sel.offset_known = 1;
        selection_settings(dset, space, object, func, ticks, ndims, box, points);
    }
    if (space != file_space) close_id(&sclose_, "H5Sclose", space);
    pioscope_internal_end();
    if (points > 0) sel.bytes = (uint64_t)points * element;
    return sel;
}

int pioscope_h5_collective(hid_t dxpl)
{
    h5_get_xfer_fn *get = h5_fn(&get_xfer_, "H5Pget_dxpl_mpio");
    if (!get || dxpl == PIOSCOPE_H5_DEFAULT) return 0;  /* the default is independent */
    int mode = PIOSCOPE_H5FD_MPIO_INDEPENDENT;
    pioscope_internal_begin();
    herr_t r = get(dxpl, &mode);
    pioscope_internal_end();
    return r >= 0 && mode == PIOSCOPE_H5FD_MPIO_COLLECTIVE;
}

uint64_t pioscope_h5_attribute_bytes(hid_t type, hid_t space)
{
    h5_npoints_fn *npoints = h5_fn(&npoints_, "H5Sget_select_npoints");
    h5_tget_size_fn *type_size = h5_fn(&tget_size_, "H5Tget_size");
    if (!npoints || !type_size) return 0;
    pioscope_internal_begin();
    hssize_t points = npoints(space);
    size_t element = type_size(type);
    pioscope_internal_end();
    return points > 0 ? (uint64_t)points * element : 0;
}

uint64_t pioscope_h5_open_attribute_bytes(hid_t attr, hid_t mem_type)
{
    h5_get_id_fn *get_space = h5_fn(&aget_space_, "H5Aget_space");
    if (!get_space) return 0;
    pioscope_internal_begin();
    hid_t space = get_space(attr);
    pioscope_internal_end();
    if (space <= 0) return 0;
    uint64_t bytes = pioscope_h5_attribute_bytes(mem_type, space);
    pioscope_internal_begin();
    close_id(&sclose_, "H5Sclose", space);
    pioscope_internal_end();
    return bytes;
}

/* ---- settings of files and datasets ---- */

static void append_u64(pioscope_text *t, const char *key, uint64_t value)
{
    pioscope_text_str(t, key);
    pioscope_text_put(t, "=", 1);
    pioscope_text_u64(t, value);
    pioscope_text_put(t, "\n", 1);
}

static const char *driver_name(hid_t fapl)
{
    h5_get_id_fn *get_driver = h5_fn(&pget_driver_, "H5Pget_driver");
    h5_driver_init_fn *mpio = h5_fn(&mpio_init_, "H5FD_mpio_init");
    h5_driver_init_fn *sec2 = h5_fn(&sec2_init_, "H5FD_sec2_init");
    hid_t driver = get_driver ? get_driver(fapl) : -1;
    if (driver < 0) return "unknown";
    if (mpio && driver == mpio()) return "mpio";
    if (sec2 && driver == sec2()) return "sec2";
    return "other";
}

void pioscope_h5_file_settings(hid_t file, uint32_t object, uint16_t func, uint64_t ticks)
{
    h5_get_id_fn *get_fapl = h5_fn(&fget_fapl_, "H5Fget_access_plist");
    if (!get_fapl || !object) return;
    h5_get_alignment_fn *alignment = h5_fn(&get_alignment_, "H5Pget_alignment");
    h5_get_hsize_fn *meta_block = h5_fn(&get_meta_block_, "H5Pget_meta_block_size");
    h5_get_size_fn *sieve = h5_fn(&get_sieve_, "H5Pget_sieve_buf_size");
    h5_get_bool_fn *coll_write = h5_fn(&get_coll_write_, "H5Pget_coll_metadata_write");
    h5_get_bool_fn *coll_ops = h5_fn(&get_coll_ops_, "H5Pget_all_coll_metadata_ops");
    h5_mdc_size_fn *mdc = h5_fn(&mdc_size_, "H5Fget_mdc_size");
    char text[1024];
    pioscope_text t = {text, sizeof text, 0};
    pioscope_internal_begin();
    hid_t fapl = get_fapl(file);
    if (fapl > 0) {
        const char *driver = driver_name(fapl);
        pioscope_text_str(&t, "h5.driver=");
        pioscope_text_str(&t, driver);
        pioscope_text_put(&t, "\n", 1);
        hsize_t threshold, align, block;
        size_t size;
        hbool_t on;
        if (alignment && alignment(fapl, &threshold, &align) >= 0) {
            append_u64(&t, "h5.alignment_threshold", threshold);
            append_u64(&t, "h5.alignment", align);
        }
        if (meta_block && meta_block(fapl, &block) >= 0)
            append_u64(&t, "h5.meta_block_size", block);
        if (sieve && sieve(fapl, &size) >= 0) append_u64(&t, "h5.sieve_buf_size", size);
        /* The collective metadata properties exist for the MPI-IO driver only. */
        int mpio = driver[0] == 'm';
        if (mpio && coll_write && coll_write(fapl, &on) >= 0)
            append_u64(&t, "h5.coll_metadata_write", on);
        if (mpio && coll_ops && coll_ops(fapl, &on) >= 0)
            append_u64(&t, "h5.all_coll_metadata_ops", on);
        close_id(&pclose_, "H5Pclose", fapl);
    }
    size_t max_size, min_clean, cur_size;
    int entries;
    if (mdc && mdc(file, &max_size, &min_clean, &cur_size, &entries) >= 0)
        append_u64(&t, "h5.mdc_max_size", max_size);
    pioscope_internal_end();
    if (t.len) pioscope_write_settings(object, func, ticks, text, pioscope_text_used(&t));
}

static const char *layout_name(int layout)
{
    switch (layout) {
    case PIOSCOPE_H5D_COMPACT: return "compact";
    case PIOSCOPE_H5D_CONTIGUOUS: return "contiguous";
    case PIOSCOPE_H5D_CHUNKED: return "chunked";
    case PIOSCOPE_H5D_VIRTUAL: return "virtual";
    default: return "unknown";
    }
}

void pioscope_h5_dataset_settings(hid_t dset, uint32_t object, uint16_t func, uint64_t ticks)
{
    h5_get_id_fn *get_space = h5_fn(&dget_space_, "H5Dget_space");
    h5_get_id_fn *get_type = h5_fn(&dget_type_, "H5Dget_type");
    h5_get_id_fn *get_dcpl = h5_fn(&dget_dcpl_, "H5Dget_create_plist");
    h5_extent_dims_fn *extent = h5_fn(&extent_dims_, "H5Sget_simple_extent_dims");
    h5_tget_size_fn *type_size = h5_fn(&tget_size_, "H5Tget_size");
    h5_get_layout_fn *get_layout = h5_fn(&get_layout_, "H5Pget_layout");
    h5_get_chunk_fn *get_chunk = h5_fn(&get_chunk_, "H5Pget_chunk");
    if (!object || !get_space || !get_type || !get_dcpl || !extent || !type_size ||
        !get_layout || !get_chunk)
        return;
    char text[1024];
    pioscope_text t = {text, sizeof text, 0};
    hsize_t dims[PIOSCOPE_H5_MAX_RANK];
    pioscope_internal_begin();
    hid_t space = get_space(dset);
    int ndims = space > 0 ? extent(space, dims, NULL) : -1;
    if (ndims >= 0) append_dims(&t, "h5.dims", ndims, dims);
    close_id(&sclose_, "H5Sclose", space);
    hid_t type = get_type(dset);
    if (type > 0) append_u64(&t, "h5.type_size", type_size(type));
    close_id(&tclose_, "H5Tclose", type);
    hid_t dcpl = get_dcpl(dset);
    if (dcpl > 0) {
        int layout = get_layout(dcpl);
        pioscope_text_str(&t, "h5.layout=");
        pioscope_text_str(&t, layout_name(layout));
        pioscope_text_put(&t, "\n", 1);
        int chunk_dims = layout == PIOSCOPE_H5D_CHUNKED
                             ? get_chunk(dcpl, PIOSCOPE_H5_MAX_RANK, dims) : -1;
        if (chunk_dims > 0) append_dims(&t, "h5.chunk", chunk_dims, dims);
        close_id(&pclose_, "H5Pclose", dcpl);
    }
    pioscope_internal_end();
    if (t.len) pioscope_write_settings(object, func, ticks, text, pioscope_text_used(&t));
}
