/* dlio_stops: where DLIO_local_changes (f6796ed) stops before its first
 * epoch on a workload shardbench runs, as lines a run prints once
 * (docs/DLIO.md "Where DLIO stops"). Each was seen in a run of DLIO itself:
 * - storage_library minio: ObjStoreLibStorage's constructor runs a
 *   preflight (storage/obj_store_lib.py _preflight) that calls
 *   an existence check of the store on its MinIOAdapter, which has no such method: every run,
 *   datagen and checkpoint included, ends with a ConnectionError before
 *   any I/O;
 * - npz, npy, jpeg or png on direct_fs with the pytorch loader: the file
 *   list holds direct:// URIs and _local_fs_iterable_mixin.py wraps each
 *   again (direct://CWD/direct:/PATH; with uri_scheme file, open() of a
 *   file:// URI), so the first read fails with "File not found";
 * - parquet with a column that is not 8-bit (float32, a list of them, ...)
 *   read by DLIO's pyarrow-plan readers (parquet_reader_file_iterable.py,
 *   parquet_reader_s3_iterable.py): they compare the column chunk's
 *   dictionary_page_offset with 0, and pyarrow gives None for a chunk
 *   without a dictionary page, which shardbench's generator writes only for
 *   8-bit columns (pyarrow's own writer dictionary-encodes every column, so
 *   DLIO's files have one): a TypeError in the loader worker.
 * shardbench runs them. */
#ifndef SB_DLIO_STOPS_H
#define SB_DLIO_STOPS_H

#include <stddef.h>

#include "workload.h"

/* Line i (0, 1, ...) of the lines that apply to a run of wl, into buf: 1
 * when there is a line i, 0 past the last. trains: the run reads the
 * training set (the reader lines apply only then). */
int sb_dlio_stop_note (const sb_workload_t *wl, int trains, size_t i, char *buf, size_t size);

#endif
