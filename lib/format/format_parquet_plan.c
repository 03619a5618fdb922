/* format_parquet_plan: the reads DLIO's parquet readers issue for one file,
 * planned from the file's footer (format.h, "Parquet read plan").
 *
 * A Thrift compact-protocol reader, bounds-checked (the footer is outside
 * input), takes from FileMetaData only what the plan needs: per row group
 * its rows and, per column chunk, the first element of path_in_schema,
 * codec, total_compressed_size, data_page_offset and
 * dictionary_page_offset; every other field is skipped by type. */
#include "format.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_MAX_DEPTH 32

typedef struct {
    const uint8_t *p, *end;
    int            bad;
} s_in_t;

enum { T_STOP = 0, T_TRUE = 1, T_FALSE = 2, T_BYTE = 3, T_I16 = 4, T_I32 = 5, T_I64 = 6, T_DOUBLE = 7,
       T_BINARY = 8, T_LIST = 9, T_SET = 10, T_MAP = 11, T_STRUCT = 12 };

static uint64_t
s_varint (s_in_t *in)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (in->p >= in->end) {
            in->bad = 1;
            return 0;
        }
        uint8_t b = *in->p++;
        v |= (uint64_t) (b & 0x7f) << shift;
        if (!(b & 0x80))
            return v;
    }
    in->bad = 1;
    return 0;
}

static int64_t
s_zigzag (s_in_t *in)
{
    uint64_t v = s_varint (in);
    return (int64_t) (v >> 1) ^ -(int64_t) (v & 1);
}

static void
s_advance (s_in_t *in, uint64_t n)
{
    if (n > (uint64_t) (in->end - in->p)) {
        in->bad = 1;
        in->p = in->end;
    }
    else
        in->p += n;
}

/* a list or set header: element type and count (count <= bytes left, as
 * every element takes one byte at least) */
static uint64_t
s_list_header (s_in_t *in, int *elem)
{
    if (in->p >= in->end) {
        in->bad = 1;
        return 0;
    }
    uint8_t h = *in->p++;
    uint64_t n = h >> 4;
    *elem = h & 0x0f;
    if (n == 15)
        n = s_varint (in);
    if (n > (uint64_t) (in->end - in->p))
        in->bad = 1;
    return in->bad ? 0 : n;
}

/* next field of a struct: 0 at its end (or on bad input), else its type;
 * *id the field id (relative to *last) */
static int
s_field (s_in_t *in, int16_t *last, int16_t *id)
{
    if (in->p >= in->end) {
        in->bad = 1;
        return T_STOP;
    }
    uint8_t h = *in->p++;
    int type = h & 0x0f;
    if (type == T_STOP)
        return T_STOP;
    if (h >> 4)
        *id = (int16_t) (*last + (h >> 4));
    else
        *id = (int16_t) s_zigzag (in);
    *last = *id;
    return type;
}

static void s_skip (s_in_t *in, int type, int depth);

static void
s_skip_struct (s_in_t *in, int depth)
{
    int16_t last = 0, id;
    int type;
    if (depth > S_MAX_DEPTH) {
        in->bad = 1;
        return;
    }
    while (!in->bad && (type = s_field (in, &last, &id)) != T_STOP)
        s_skip (in, type, depth + 1);
}

static void
s_skip (s_in_t *in, int type, int depth)
{
    if (depth > S_MAX_DEPTH) {
        in->bad = 1;
        return;
    }
    switch (type) {
    case T_TRUE:
    case T_FALSE:
        return;     /* a field's bool is in its type */
    case T_BYTE:
        s_advance (in, 1);
        return;
    case T_I16:
    case T_I32:
    case T_I64:
        s_varint (in);
        return;
    case T_DOUBLE:
        s_advance (in, 8);
        return;
    case T_BINARY:
        s_advance (in, s_varint (in));
        return;
    case T_LIST:
    case T_SET: {
        int elem;
        uint64_t n = s_list_header (in, &elem);
        for (uint64_t i = 0; i < n && !in->bad; i++) {
            if (elem == T_TRUE || elem == T_FALSE)
                s_advance (in, 1);  /* a list's bool is a byte */
            else
                s_skip (in, elem, depth + 1);
        }
        return;
    }
    case T_MAP: {
        uint64_t n = s_varint (in);
        if (!n)
            return;
        if (in->p >= in->end || n > (uint64_t) (in->end - in->p)) {
            in->bad = 1;
            return;
        }
        uint8_t kv = *in->p++;
        for (uint64_t i = 0; i < n && !in->bad; i++) {
            s_skip (in, kv >> 4, depth + 1);
            s_skip (in, kv & 0x0f, depth + 1);
        }
        return;
    }
    case T_STRUCT:
        s_skip_struct (in, depth + 1);
        return;
    default:
        in->bad = 1;
    }
}

/* ---- the plan ---- */

typedef struct {
    char     name[128];     /* first element of path_in_schema */
    int      codec;
    uint64_t start, end;    /* dictionary page (or first data page) .. end of the chunk */
} s_chunk_t;

typedef struct {
    uint64_t rows, first;
    uint64_t span;          /* bytes of DLIO's read of the group */
    size_t   range_at, nranges;
} s_group_t;

struct sb_parquet_plan {
    uint64_t            file_size, metadata_len, rows;
    uint64_t            footer_bytes;   /* the footer reads: tail + second read when needed */
    uint64_t            data_bytes, span_bytes;
    int                 codec;
    s_group_t          *groups;
    uint64_t            ngroups;
    sb_parquet_range_t *ranges;
    size_t              nranges, ranges_cap;
};

sb_parquet_range_t
sb_parquet_tail_range (uint64_t file_size)
{
    uint64_t n = file_size < SB_PARQUET_TAIL_READ ? file_size : SB_PARQUET_TAIL_READ;
    return (sb_parquet_range_t) { file_size - n, n };
}

int
sb_parquet_footer_range (const uint8_t *tail, size_t tail_len, uint64_t file_size, sb_parquet_range_t *metadata,
                         char *err, size_t err_size)
{
    if (tail_len < 8 || tail_len > file_size || file_size < 12 || memcmp (tail + tail_len - 4, "PAR1", 4) != 0) {
        snprintf (err, err_size, "parquet: the file does not end with PAR1 (%llu bytes)",
                  (unsigned long long) file_size);
        return -1;
    }
    const uint8_t *l = tail + tail_len - 8;
    uint64_t len = (uint64_t) l[0] | (uint64_t) l[1] << 8 | (uint64_t) l[2] << 16 | (uint64_t) l[3] << 24;
    if (len + 12 > file_size) {
        snprintf (err, err_size, "parquet: a footer of %llu bytes does not fit in %llu bytes",
                  (unsigned long long) len, (unsigned long long) file_size);
        return -1;
    }
    metadata->offset = file_size - 8 - len;
    metadata->length = len;
    return len + 8 <= tail_len ? 1 : 0;
}

static int
s_add_range (sb_parquet_plan_t *pl, uint64_t offset, uint64_t length)
{
    if (pl->nranges && pl->nranges > pl->groups[pl->ngroups].range_at) {
        sb_parquet_range_t *r = &pl->ranges[pl->nranges - 1];
        if (r->offset + r->length >= offset) {  /* adjacent or overlapping: one read */
            uint64_t end = offset + length > r->offset + r->length ? offset + length : r->offset + r->length;
            r->length = end - r->offset;
            return 0;
        }
    }
    if (pl->nranges == pl->ranges_cap) {
        size_t cap = pl->ranges_cap ? pl->ranges_cap * 2 : 64;
        sb_parquet_range_t *r = realloc (pl->ranges, cap * sizeof *r);
        if (!r)
            return -1;
        pl->ranges = r;
        pl->ranges_cap = cap;
    }
    pl->ranges[pl->nranges++] = (sb_parquet_range_t) { offset, length };
    return 0;
}

static int
s_by_start (const void *a, const void *b)
{
    const s_chunk_t *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* name is in read ("a,b,..."; "" all) */
static int
s_reads (const char *read, const char *name)
{
    if (!*read)
        return 1;
    size_t n = strlen (name);
    for (const char *p = read; *p;) {
        size_t len = strcspn (p, ",");
        if (len == n && strncmp (p, name, n) == 0)
            return 1;
        p += len + (p[len] == ',');
    }
    return 0;
}

/* ColumnChunk: its meta_data into c */
static void
s_column_chunk (s_in_t *in, s_chunk_t *c)
{
    int16_t last = 0, id;
    int type;
    uint64_t size = 0, data = 0, dict = 0;
    memset (c, 0, sizeof *c);
    while (!in->bad && (type = s_field (in, &last, &id)) != T_STOP) {
        if (id != 3 || type != T_STRUCT) {
            s_skip (in, type, 2);
            continue;
        }
        int16_t mlast = 0, mid;
        int mtype;
        while (!in->bad && (mtype = s_field (in, &mlast, &mid)) != T_STOP) {
            if (mid == 3 && mtype == T_LIST) {          /* path_in_schema */
                int elem;
                uint64_t n = s_list_header (in, &elem);
                for (uint64_t i = 0; i < n && !in->bad; i++) {
                    if (elem != T_BINARY) {
                        in->bad = 1;
                        break;
                    }
                    uint64_t len = s_varint (in);
                    if (len > (uint64_t) (in->end - in->p)) {
                        in->bad = 1;
                        break;
                    }
                    if (i == 0) {
                        size_t k = len < sizeof c->name - 1 ? (size_t) len : sizeof c->name - 1;
                        memcpy (c->name, in->p, k);
                        c->name[k] = 0;
                    }
                    in->p += len;
                }
            }
            else if (mid == 4 && mtype == T_I32)
                c->codec = (int) s_zigzag (in);
            else if (mid == 7 && mtype == T_I64)
                size = (uint64_t) s_zigzag (in);
            else if (mid == 9 && mtype == T_I64)
                data = (uint64_t) s_zigzag (in);
            else if (mid == 11 && mtype == T_I64)
                dict = (uint64_t) s_zigzag (in);
            else
                s_skip (in, mtype, 3);
        }
    }
    /* as DLIO's _rg_byte_range: the dictionary page when there is one */
    c->start = (int64_t) dict > 0 ? dict : data;
    c->end = c->start + size;
}

/* RowGroup g: its rows and chunks; the ranges read */
static int
s_row_group (s_in_t *in, sb_parquet_plan_t *pl, const char *read, int span, char *err, size_t err_size)
{
    int16_t last = 0, id;
    int type;
    s_chunk_t *chunks = NULL;
    uint64_t nchunks = 0, rows = 0;
    while (!in->bad && (type = s_field (in, &last, &id)) != T_STOP) {
        if (id == 1 && type == T_LIST && !chunks) {
            int elem;
            nchunks = s_list_header (in, &elem);
            if (elem != T_STRUCT && nchunks)
                in->bad = 1;
            if (in->bad)
                break;
            if (!(chunks = calloc (nchunks ? nchunks : 1, sizeof *chunks))) {
                snprintf (err, err_size, "parquet: out of memory for %llu column chunks", (unsigned long long) nchunks);
                return -1;
            }
            for (uint64_t i = 0; i < nchunks && !in->bad; i++)
                s_column_chunk (in, &chunks[i]);
        }
        else if (id == 3 && type == T_I64)
            rows = (uint64_t) s_zigzag (in);
        else
            s_skip (in, type, 2);
    }
    if (in->bad) {
        free (chunks);
        return 0;   /* the caller reports bad input */
    }
    s_group_t *g = &pl->groups[pl->ngroups];
    g->rows = rows;
    g->first = pl->rows;
    g->range_at = pl->nranges;
    uint64_t lo = UINT64_MAX, hi = 0;
    uint64_t limit = pl->file_size - 8 - pl->metadata_len;
    if (nchunks)
        qsort (chunks, (size_t) nchunks, sizeof *chunks, s_by_start);
    for (uint64_t i = 0; i < nchunks; i++) {
        const s_chunk_t *c = &chunks[i];
        if (pl->ngroups == 0 && i == 0)
            pl->codec = c->codec;
        if (c->end < c->start || c->start < 4 || c->end > limit) {
            snprintf (err, err_size, "parquet: column chunk '%s' of row group %llu, bytes [%llu, %llu), lies outside "
                      "the data of the file (%llu bytes)", c->name, (unsigned long long) pl->ngroups,
                      (unsigned long long) c->start, (unsigned long long) c->end, (unsigned long long) limit);
            free (chunks);
            return -1;
        }
        if (!s_reads (read, c->name))
            continue;
        lo = c->start < lo ? c->start : lo;
        hi = c->end > hi ? c->end : hi;
        if (!span && s_add_range (pl, c->start, c->end - c->start) != 0) {
            free (chunks);
            snprintf (err, err_size, "parquet: out of memory for the read plan");
            return -1;
        }
    }
    /* group 0: every name read is a column (DLIO would read the others, or nothing) */
    for (const char *p = pl->ngroups == 0 ? read : ""; *p;) {
        size_t n = strcspn (p, ","), i = 0;
        while (i < nchunks && (strlen (chunks[i].name) != n || strncmp (chunks[i].name, p, n) != 0))
            i++;
        if (i == nchunks) {
            snprintf (err, err_size, "parquet: the file has no column '%.*s'", (int) (n < 200 ? n : 200), p);
            free (chunks);
            return -1;
        }
        p += n + (p[n] == ',');
    }
    free (chunks);
    g->span = hi > lo ? hi - lo : 0;
    if (span && g->span && s_add_range (pl, lo, g->span) != 0) {
        snprintf (err, err_size, "parquet: out of memory for the read plan");
        return -1;
    }
    g->nranges = pl->nranges - g->range_at;
    for (size_t r = g->range_at; r < pl->nranges; r++)
        pl->data_bytes += pl->ranges[r].length;
    pl->span_bytes += g->span;
    pl->rows += rows;
    pl->ngroups++;
    return 0;
}

int
sb_parquet_plan_parse (sb_parquet_plan_t **plan, const uint8_t *metadata, size_t len, uint64_t file_size,
                       const char *read, int span, char *err, size_t err_size)
{
    *plan = NULL;
    if (!read)
        read = "";
    if ((uint64_t) len + 12 > file_size) {
        snprintf (err, err_size, "parquet: a footer of %zu bytes does not fit in %llu bytes", len,
                  (unsigned long long) file_size);
        return -1;
    }
    sb_parquet_plan_t *pl = calloc (1, sizeof *pl);
    if (!pl) {
        snprintf (err, err_size, "parquet: out of memory for the read plan");
        return -1;
    }
    pl->file_size = file_size;
    pl->metadata_len = len;
    sb_parquet_range_t tail = sb_parquet_tail_range (file_size);
    pl->footer_bytes = tail.length + (len + 8 > tail.length ? len : 0);
    s_in_t in = { metadata, metadata + len, 0 };
    int16_t last = 0, id;
    int type, groups_seen = 0;
    while (!in.bad && (type = s_field (&in, &last, &id)) != T_STOP) {
        if (id == 4 && type == T_LIST && !groups_seen) {
            int elem;
            uint64_t n = s_list_header (&in, &elem);
            groups_seen = 1;
            if ((elem != T_STRUCT && n) || in.bad)
                break;
            /* one entry more: s_add_range looks at the group being built */
            if (!(pl->groups = calloc (n + 1, sizeof *pl->groups))) {
                snprintf (err, err_size, "parquet: out of memory for %llu row groups", (unsigned long long) n);
                sb_parquet_plan_free (pl);
                return -1;
            }
            for (uint64_t g = 0; g < n && !in.bad; g++)
                if (s_row_group (&in, pl, read, span, err, err_size) != 0) {
                    sb_parquet_plan_free (pl);
                    return -1;
                }
        }
        else
            s_skip (&in, type, 1);
    }
    if (in.bad || !groups_seen) {
        snprintf (err, err_size, "parquet: the footer (%zu bytes) is not a FileMetaData%s", len,
                  in.bad ? " (truncated or malformed)" : " (no row groups)");
        sb_parquet_plan_free (pl);
        return -1;
    }
    *plan = pl;
    return 0;
}

void
sb_parquet_plan_free (sb_parquet_plan_t *plan)
{
    if (!plan)
        return;
    free (plan->groups);
    free (plan->ranges);
    free (plan);
}

uint64_t
sb_parquet_plan_groups (const sb_parquet_plan_t *plan)
{
    return plan->ngroups;
}

uint64_t
sb_parquet_plan_rows (const sb_parquet_plan_t *plan)
{
    return plan->rows;
}

uint64_t
sb_parquet_plan_group_rows (const sb_parquet_plan_t *plan, uint64_t g)
{
    return g < plan->ngroups ? plan->groups[g].rows : 0;
}

uint64_t
sb_parquet_plan_group_first (const sb_parquet_plan_t *plan, uint64_t g)
{
    return g < plan->ngroups ? plan->groups[g].first : plan->rows;
}

uint64_t
sb_parquet_plan_group_of (const sb_parquet_plan_t *plan, uint64_t row)
{
    if (!plan->ngroups)
        return 0;
    uint64_t lo = 0, hi = plan->ngroups;    /* groups[lo].first <= row */
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (plan->groups[mid].first <= row)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

int
sb_parquet_plan_group_ranges (const sb_parquet_plan_t *plan, uint64_t g, sb_parquet_range_t *ranges, size_t max,
                              size_t *n)
{
    *n = 0;
    if (g >= plan->ngroups)
        return -1;
    const s_group_t *gr = &plan->groups[g];
    *n = gr->nranges;
    if (gr->nranges > max)
        return -1;
    if (gr->nranges)
        memcpy (ranges, plan->ranges + gr->range_at, gr->nranges * sizeof *ranges);
    return 0;
}

uint64_t
sb_parquet_plan_dlio_bytes (const sb_parquet_plan_t *plan)
{
    return plan->footer_bytes + plan->span_bytes;
}

uint64_t
sb_parquet_plan_bytes (const sb_parquet_plan_t *plan)
{
    return plan->footer_bytes + plan->data_bytes;
}

int
sb_parquet_plan_codec (const sb_parquet_plan_t *plan)
{
    return plan->codec;
}
