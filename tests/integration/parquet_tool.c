/* parquet_tool: write a shardbench parquet file from explicit parameters,
 * or print the read plan of a parquet file, for the hyparquet oracle
 * (tests/integration/test_parquet_codecs.sh, parquet_check.mjs).
 *
 *   parquet_tool write FILE SEED ROWS GROUP_ROWS COLUMNS RECORD CODEC
 *       COLUMNS "-": DLIO's legacy data, a list of RECORD uint8; CODEC none | snappy | gzip | zstd
 *   parquet_tool plan FILE READ SPAN
 *       READ "-": all columns, else "a,b,..."; SPAN 1: DLIO's one read a
 *       group, 0: the read columns' chunks. Prints the footer reads
 *       ("footer OFFSET LENGTH", one or two), per group "group G FIRST ROWS"
 *       and its reads ("range OFFSET LENGTH"), then "plan-bytes N" and
 *       "dlio-bytes N". Reads the file as the plan says (tail, metadata). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"

static int
s_write (int argc, char **argv)
{
    if (argc != 9) {
        fprintf (stderr, "usage: parquet_tool write FILE SEED ROWS GROUP_ROWS COLUMNS RECORD CODEC\n");
        return 2;
    }
    const char *cols = strcmp (argv[6], "-") == 0 ? NULL : argv[6];
    sb_format_obj_t obj;
    char err[512];
    if (sb_format_open_pq (&obj, &sb_format_parquet, strtoull (argv[3], NULL, 10), strtoull (argv[4], NULL, 10),
                           strtoull (argv[7], NULL, 10), cols, strtoull (argv[5], NULL, 10), argv[8], err,
                           sizeof err) != 0) {
        fprintf (stderr, "parquet_tool: %s\n", err);
        return 1;
    }
    FILE *f = fopen (argv[2], "wb");
    if (!f) {
        perror (argv[2]);
        sb_format_close (&obj);
        return 1;
    }
    static uint8_t buf[1 << 16];
    int rc = 0;
    for (uint64_t at = 0; at < obj.size && !rc; at += sizeof buf) {
        size_t n = obj.size - at < sizeof buf ? (size_t) (obj.size - at) : sizeof buf;
        sb_format_fill (&obj, at, buf, n);
        rc = fwrite (buf, 1, n, f) != n;
    }
    rc |= fclose (f) != 0;
    if (rc)
        fprintf (stderr, "parquet_tool: writing %s failed\n", argv[2]);
    sb_format_close (&obj);
    return rc;
}

static uint8_t *
s_read (FILE *f, sb_parquet_range_t r)
{
    uint8_t *b = malloc (r.length ? r.length : 1);
    if (b && (fseeko (f, (off_t) r.offset, SEEK_SET) != 0 || fread (b, 1, r.length, f) != r.length)) {
        free (b);
        return NULL;
    }
    return b;
}

static int
s_plan (int argc, char **argv)
{
    if (argc != 5) {
        fprintf (stderr, "usage: parquet_tool plan FILE READ SPAN\n");
        return 2;
    }
    FILE *f = fopen (argv[2], "rb");
    if (!f || fseeko (f, 0, SEEK_END) != 0) {
        perror (argv[2]);
        return 1;
    }
    uint64_t size = (uint64_t) ftello (f);
    char err[512];
    sb_parquet_range_t tail = sb_parquet_tail_range (size), meta;
    uint8_t *t = s_read (f, tail), *m = NULL;
    int in_tail = t ? sb_parquet_footer_range (t, (size_t) tail.length, size, &meta, err, sizeof err) : -1;
    if (in_tail < 0) {
        fprintf (stderr, "parquet_tool: %s: %s\n", argv[2], t ? err : "read failed");
        return 1;
    }
    printf ("footer %llu %llu\n", (unsigned long long) tail.offset, (unsigned long long) tail.length);
    const uint8_t *md = t + (meta.offset - tail.offset);
    if (!in_tail) {
        printf ("footer %llu %llu\n", (unsigned long long) meta.offset, (unsigned long long) meta.length);
        if (!(m = s_read (f, meta))) {
            fprintf (stderr, "parquet_tool: %s: read failed\n", argv[2]);
            return 1;
        }
        md = m;
    }
    fclose (f);
    sb_parquet_plan_t *plan;
    if (sb_parquet_plan_parse (&plan, md, (size_t) meta.length, size, strcmp (argv[3], "-") == 0 ? NULL : argv[3],
                               atoi (argv[4]), err, sizeof err) != 0) {
        fprintf (stderr, "parquet_tool: %s: %s\n", argv[2], err);
        return 1;
    }
    for (uint64_t g = 0; g < sb_parquet_plan_groups (plan); g++) {
        sb_parquet_range_t r[64];
        size_t n;
        if (sb_parquet_plan_group_ranges (plan, g, r, 64, &n) != 0) {
            fprintf (stderr, "parquet_tool: group %llu: %zu ranges\n", (unsigned long long) g, n);
            return 1;
        }
        printf ("group %llu %llu %llu\n", (unsigned long long) g,
                (unsigned long long) sb_parquet_plan_group_first (plan, g),
                (unsigned long long) sb_parquet_plan_group_rows (plan, g));
        for (size_t i = 0; i < n; i++)
            printf ("range %llu %llu\n", (unsigned long long) r[i].offset, (unsigned long long) r[i].length);
    }
    printf ("plan-bytes %llu\ndlio-bytes %llu\n", (unsigned long long) sb_parquet_plan_bytes (plan),
            (unsigned long long) sb_parquet_plan_dlio_bytes (plan));
    sb_parquet_plan_free (plan);
    free (t);
    free (m);
    return 0;
}

int
main (int argc, char **argv)
{
    if (argc >= 2 && strcmp (argv[1], "write") == 0)
        return s_write (argc, argv);
    if (argc >= 2 && strcmp (argv[1], "plan") == 0)
        return s_plan (argc, argv);
    fprintf (stderr, "usage: parquet_tool write ... | plan ...\n");
    return 2;
}
