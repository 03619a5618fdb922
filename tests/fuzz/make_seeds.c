/* make_seeds: write one valid encoded frame per message type of
 * schemas/messages.def into DIR, as the seed corpus of fuzz_proto.
 * usage: make_seeds DIR */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto.h"

static char s_text[] = "seed";
static char *s_strs[] = { s_text, s_text };
static uint64_t s_u64s[] = { 1, 2, 3 };

static void set_U64 (uint64_t *f) { *f = 3; }
static void set_I64 (int64_t *f) { *f = -2; }
static void set_F64 (double *f) { *f = 0.25; }
static void set_STR (char **f) { *f = s_text; }
static void set_U64S (sb_u64s_t *f) { f->count = 3; f->items = s_u64s; }
static void set_STRS (sb_strs_t *f) { f->count = 2; f->items = s_strs; }

int
main (int argc, char **argv)
{
    if (argc != 2) {
        fprintf (stderr, "usage: make_seeds DIR\n");
        return 2;
    }
    int written = 0;
    for (int type = 1; type < SB_MSG_MAX_; type++) {
        sb_msg_t m;
        memset (&m, 0, sizeof m);
        m.type = (sb_msg_type_t) type;
        switch (type) {
#define SB_MSG(name, NAME, id, doc) case id: {
#define SB_FIELD(name, KIND, field) set_##KIND (&m.u.name.field);
#define SB_END(name) break; }
#include "messages.def"
#undef SB_MSG
#undef SB_FIELD
#undef SB_END
        default: continue;
        }
        uint8_t *data = NULL;
        size_t size = 0;
        if (sb_proto_encode (&m, &data, &size) != 0) {
            fprintf (stderr, "make_seeds: cannot encode %s\n", sb_proto_type_name (type));
            return 1;
        }
        char path[4096];
        snprintf (path, sizeof path, "%s/%s.msgpack", argv[1], sb_proto_type_name (type));
        FILE *f = fopen (path, "wb");
        if (!f || fwrite (data, 1, size, f) != size || fclose (f) != 0) {
            fprintf (stderr, "make_seeds: cannot write %s\n", path);
            return 1;
        }
        free (data);    /* the fields point at static data: nothing else to release */
        written++;
    }
    printf ("%d seeds in %s\n", written, argv[1]);
    return 0;
}
