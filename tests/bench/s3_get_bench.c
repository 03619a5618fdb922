/* s3_get_bench: GET a list of objects through shardbench's S3 engine
 * (lib/storage/s3/s3_client.c, the code every rank reads with) at a fixed
 * concurrency, and print MB/s and requests/s. Used by s3_get.sh next to
 * `curl -Z --parallel-max N` on the same objects.
 *
 * usage: s3_get_bench --endpoint URL [--endpoint URL ...] --bucket NAME
 *                     --keys FILE --size BYTES [--concurrency N] [--repeat R]
 * Keys are one per line; every object is read whole as [0, BYTES). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "s3_client.h"
#include "util.h"

typedef struct {
    uint64_t done, bytes, failed;
} s_acc_t;

static void
s_on_done (void *ctx, const sb_s3_done_t *d)
{
    s_acc_t *acc = ctx;
    acc->done++;
    acc->bytes += d->bytes;
    if (d->failed) {
        acc->failed++;
        fprintf (stderr, "s3_get_bench: %s\n", d->error.text);
    }
}

int
main (int argc, char **argv)
{
    sb_storage_cfg_t cfg;
    sb_s3_settings_t set;
    memset (&set, 0, sizeof set);
    memset (&cfg, 0, sizeof cfg);
    snprintf (cfg.engine, sizeof cfg.engine, "s3");
    set.path_style = 1;
    cfg.connect_timeout_s = 5;
    cfg.request_timeout_s = 60;
    cfg.max_retries = 0;
    set.multipart_threshold = UINT64_MAX;
    snprintf (set.region, sizeof set.region, "us-east-1");
    const char *keys_path = NULL;
    uint64_t size = 0, concurrency = 16, repeat = 1;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp (argv[i], "--endpoint") && cfg.nendpoints < SB_MAX_ENDPOINTS)
            snprintf (cfg.endpoints[cfg.nendpoints++], sizeof cfg.endpoints[0], "%s", argv[i + 1]);
        else if (!strcmp (argv[i], "--bucket"))
            snprintf (cfg.store, sizeof cfg.store, "%s", argv[i + 1]);
        else if (!strcmp (argv[i], "--keys"))
            keys_path = argv[i + 1];
        else if (!strcmp (argv[i], "--size"))
            size = strtoull (argv[i + 1], NULL, 10);
        else if (!strcmp (argv[i], "--concurrency"))
            concurrency = strtoull (argv[i + 1], NULL, 10);
        else if (!strcmp (argv[i], "--repeat"))
            repeat = strtoull (argv[i + 1], NULL, 10);
        else {
            fprintf (stderr, "s3_get_bench: unknown argument %s\n", argv[i]);
            return 2;
        }
    }
    if (!keys_path || !size || !cfg.nendpoints || !cfg.store[0] || !concurrency || !repeat) {
        fprintf (stderr, "usage: s3_get_bench --endpoint URL --bucket NAME --keys FILE --size BYTES"
                         " [--concurrency N] [--repeat R]\n");
        return 2;
    }
    cfg.max_in_flight = concurrency;
    FILE *f = fopen (keys_path, "r");
    if (!f) {
        perror (keys_path);
        return 2;
    }
    size_t nkeys = 0, cap = 1024;
    char **keys = malloc (cap * sizeof (char *));
    char line[2048];
    while (keys && fgets (line, sizeof line, f)) {
        line[strcspn (line, "\r\n")] = '\0';
        if (!line[0])
            continue;
        if (nkeys == cap)
            keys = realloc (keys, (cap *= 2) * sizeof (char *));
        if (keys)
            keys[nkeys++] = strdup (line);
    }
    fclose (f);
    char err[512];
    sb_s3_t *s3 = keys ? sb_s3_new (&cfg, &set, (size_t) concurrency, err, sizeof err) : NULL;
    if (!s3) {
        fprintf (stderr, "s3_get_bench: %s\n", keys ? err : "out of memory");
        return 1;
    }
    s_acc_t acc = { 0 };
    uint64_t total = nkeys * repeat, started = 0;
    uint64_t t0 = sb_mono_ns ();
    while (acc.done < total) {
        while (started < total && sb_s3_pending (s3) < concurrency) {
            if (sb_s3_get_start (s3, started, keys[started % nkeys], 0, size, 0, 0) != 0) {
                fprintf (stderr, "s3_get_bench: out of memory\n");
                return 1;
            }
            started++;
        }
        if (sb_s3_run (s3, 100, s_on_done, &acc) < 0)
            return 1;
    }
    double s = (double) (sb_mono_ns () - t0) / 1e9;
    printf ("requests %llu bytes %llu seconds %.3f MB/s %.1f req/s %.1f failed %llu\n", (unsigned long long) acc.done,
            (unsigned long long) acc.bytes, s, (double) acc.bytes / 1e6 / s, (double) acc.done / s,
            (unsigned long long) acc.failed);
    sb_s3_destroy (&s3);
    for (size_t i = 0; i < nkeys; i++)
        free (keys[i]);
    free (keys);
    return acc.failed ? 1 : 0;
}
