/* format_hdf5: HDF5 files as DLIO's hdf5 generator writes them.
 *
 * An object holds /records_0 (DLIO's name: records_{dataset_id}, one
 * dataset a record by default), of dataset.record_element_type, shape
 * (samples, dims...) (dims: dataset.record_dims without a leading 1, or
 * dim1 x dim2 from the record length; (samples, record) of uint8 when
 * opened without a shape), contiguous (sample j is row j, bytes of the
 * content stream in order), and /labels, int64 zeros of shape (samples,). The file is built by libhdf5 in memory
 * (core driver, no backing store) with object time stamps off, so the same
 * object gives the same bytes: the whole image is kept while the object is
 * open and any range is a copy, like the images of format_image.c.
 * libhdf5 is thread-safe only when built so (Debian's is, and then takes
 * a global lock of its own): one lock here serialises its calls whatever
 * the build. */
#include "format.h"
#include "util.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hdf5.h>

static pthread_mutex_t s_lock = PTHREAD_MUTEX_INITIALIZER;

static void
s_fill (sb_format_obj_t *obj, uint64_t offset, uint8_t *buf, size_t len)
{
    memcpy (buf, obj->image + offset, len);
}

/* The dataset name with its data; -1 on a library failure. */
static int
s_dataset (hid_t file, const char *name, hid_t type, int rank, const hsize_t *dims, const void *data)
{
    hid_t space = H5Screate_simple (rank, dims, NULL);
    hid_t dcpl = H5Pcreate (H5P_DATASET_CREATE);
    int rc = -1;
    if (space >= 0 && dcpl >= 0 && H5Pset_obj_track_times (dcpl, 0) >= 0) {
        hid_t d = H5Dcreate2 (file, name, type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
        if (d >= 0) {
            if (H5Dwrite (d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >= 0)
                rc = 0;
            H5Dclose (d);
        }
    }
    if (dcpl >= 0)
        H5Pclose (dcpl);
    if (space >= 0)
        H5Sclose (space);
    return rc;
}

/* The file type of numpy's type string descr (little endian, as numpy
 * and h5py write on x86): a copy to close, or -1. float16 is IEEE half
 * built from float32 as h5py builds it (libhdf5 1.10 has no such type). */
static hid_t
s_type (const char *descr)
{
    static const struct {
        const char *descr;
        int         which;
    } types[] = { { "|u1", 0 }, { "|i1", 1 }, { "<u2", 2 }, { "<i2", 3 }, { "<u4", 4 }, { "<i4", 5 },
                  { "<u8", 6 }, { "<i8", 7 }, { "<f4", 8 }, { "<f8", 9 }, { "<f2", 10 } };
    for (size_t k = 0; k < sizeof types / sizeof types[0]; k++) {
        if (strcmp (descr, types[k].descr) != 0)
            continue;
        hid_t base[] = { H5T_STD_U8LE, H5T_STD_I8LE,  H5T_STD_U16LE, H5T_STD_I16LE,  H5T_STD_U32LE, H5T_STD_I32LE,
                         H5T_STD_U64LE, H5T_STD_I64LE, H5T_IEEE_F32LE, H5T_IEEE_F64LE, H5T_IEEE_F32LE };
        hid_t t = H5Tcopy (base[types[k].which]);
        if (t >= 0 && types[k].which == 10
            && (H5Tset_fields (t, 15, 10, 5, 0, 10) < 0 || H5Tset_size (t, 2) < 0 || H5Tset_ebias (t, 15) < 0)) {
            H5Tclose (t);
            return -1;
        }
        return t;
    }
    return -1;
}

static int
s_open (sb_format_obj_t *obj, char *err, size_t err_size)
{
    uint64_t n = obj->records * obj->record;
    if (n > (1ull << 32)) {
        snprintf (err, err_size, "hdf5 object of %llu bytes: over the 4 GiB an in-memory image may hold",
                  (unsigned long long) n);
        return -1;
    }
    uint8_t *records = malloc ((size_t) n);
    int64_t *labels = calloc ((size_t) obj->records, sizeof (int64_t));
    if (!records || !labels) {
        free (records);
        free (labels);
        snprintf (err, err_size, "out of memory for an hdf5 object of %llu bytes", (unsigned long long) n);
        return -1;
    }
    sb_content_fill (obj->seed, 0, records, (size_t) n);
    pthread_mutex_lock (&s_lock);
    H5Eset_auto2 (H5E_DEFAULT, NULL, NULL);     /* errors are reported here, not printed */
    int rc = -1;
    hid_t fapl = H5Pcreate (H5P_FILE_ACCESS), fcpl = H5Pcreate (H5P_FILE_CREATE), file = -1;
    if (fapl >= 0 && fcpl >= 0 && H5Pset_fapl_core (fapl, 1 << 20, 0) >= 0 && H5Pset_obj_track_times (fcpl, 0) >= 0)
        file = H5Fcreate ("shardbench-object.h5", H5F_ACC_TRUNC, fcpl, fapl);
    /* DLIO: shape (samples, dims...), a listed shape's leading 1 dropped */
    hsize_t dims[SB_DATASET_MAX_DIMS + 1] = { obj->records, obj->record };
    int rank = 2;
    if (obj->ndims > 0) {
        size_t from = obj->listed && obj->ndims > 1 && obj->dims[0] == 1 ? 1 : 0;
        rank = 1;
        for (size_t k = from; k < obj->ndims; k++)
            dims[rank++] = obj->dims[k];
    }
    hid_t type = s_type (obj->ndims > 0 && obj->descr ? obj->descr : "|u1");
    if (file >= 0 && type >= 0) {
        if (s_dataset (file, "records_0", type, rank, dims, records) == 0
            && s_dataset (file, "labels", H5T_STD_I64LE, 1, dims, labels) == 0 && H5Fflush (file, H5F_SCOPE_LOCAL) >= 0) {
            ssize_t size = H5Fget_file_image (file, NULL, 0);
            if (size > 0 && (obj->image = malloc ((size_t) size))
                && H5Fget_file_image (file, obj->image, (size_t) size) == size) {
                obj->size = (uint64_t) size;
                rc = 0;
            }
        }
    }
    if (file >= 0)
        H5Fclose (file);
    if (type >= 0)
        H5Tclose (type);
    if (fcpl >= 0)
        H5Pclose (fcpl);
    if (fapl >= 0)
        H5Pclose (fapl);
    pthread_mutex_unlock (&s_lock);
    free (records);
    free (labels);
    if (rc != 0)
        snprintf (err, err_size, "hdf5: libhdf5 failed to build a (%llu, %llu) dataset in memory",
                  (unsigned long long) obj->records, (unsigned long long) obj->record);
    return rc;
}

const sb_format_ops_t sb_format_hdf5 = { "hdf5", s_open, s_fill, NULL };
