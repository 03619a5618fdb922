/* azure_get_bench: GET objects of an Azure Blob container through
 * shardbench's azure engine (lib/storage/azure/, the ops every rank reads
 * with: queue/getevents at a fixed depth), and print MB/s and requests/s.
 * With --put it first writes the objects (Put Blob, seeded bytes). Used by
 * azure_get.sh next to `curl -Z --parallel-max N` on the same objects.
 *
 * usage: azure_get_bench --container NAME --prefix P --count N --size BYTES
 *                        [--concurrency N] [--put] [--verify]
 * Objects are P/obj-00000 ... ; the endpoint and credentials come from
 * the environment (AZURE_STORAGE_CONNECTION_STRING, ...), as a workload's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "util.h"

typedef struct {
    uint64_t done, bytes, failed;
} s_acc_t;

static void
s_on_done (void *ctx, const sb_io_done_t *d)
{
    s_acc_t *acc = ctx;
    acc->done++;
    acc->bytes += d->bytes;
    if (d->failed) {
        acc->failed++;
        fprintf (stderr, "azure_get_bench: %s\n", d->error.text);
    }
}

static void
s_fill (void *ctx, uint64_t offset, uint8_t *buf, size_t len)
{
    sb_content_fill (*(uint64_t *) ctx, offset, buf, len);
}

static void
s_expect_free (void *ctx)
{
    free (ctx);
}

int
main (int argc, char **argv)
{
    sb_storage_cfg_t cfg;
    memset (&cfg, 0, sizeof cfg);
    snprintf (cfg.engine, sizeof cfg.engine, "azure");
    cfg.connect_timeout_s = 5;
    cfg.request_timeout_s = 60;
    const char *prefix = "bench";
    uint64_t count = 0, size = 0, concurrency = 16;
    int put = 0, verify = 0;
    for (int i = 1; i < argc; i++) {
        int more = i + 1 < argc;
        if (!strcmp (argv[i], "--put"))
            put = 1;
        else if (!strcmp (argv[i], "--verify"))
            verify = 1;
        else if (more && !strcmp (argv[i], "--container"))
            snprintf (cfg.store, sizeof cfg.store, "%s", argv[++i]);
        else if (more && !strcmp (argv[i], "--prefix"))
            prefix = argv[++i];
        else if (more && !strcmp (argv[i], "--count"))
            count = strtoull (argv[++i], NULL, 10);
        else if (more && !strcmp (argv[i], "--size"))
            size = strtoull (argv[++i], NULL, 10);
        else if (more && !strcmp (argv[i], "--concurrency"))
            concurrency = strtoull (argv[++i], NULL, 10);
        else {
            fprintf (stderr, "azure_get_bench: unknown argument %s\n", argv[i]);
            return 2;
        }
    }
    if (!cfg.store[0] || !count || !size || !concurrency) {
        fprintf (stderr, "usage: azure_get_bench --container NAME --prefix P --count N --size BYTES"
                         " [--concurrency N] [--put] [--verify]\n");
        return 2;
    }
    cfg.max_in_flight = concurrency;
    const sb_engine_ops_t *ops = sb_engine_find ("azure");
    char err[512];
    if (!ops || ops->configure (&cfg, &(sb_engine_setup_t) { .scheme = "az" }, err, sizeof err) != 0) {
        fprintf (stderr, "azure_get_bench: %s\n", ops ? err : "not built with the azure engine");
        return 1;
    }
    char root[512];
    snprintf (root, sizeof root, "%s/", prefix);
    sb_storage_open_t how = { .root = root, .depth = (size_t) concurrency };
    sb_storage_error_t e;
    sb_storage_t *s = sb_storage_open (&cfg, &how, &e);
    if (!s) {
        fprintf (stderr, "azure_get_bench: %s\n", e.text);
        return 1;
    }
    char key[64];
    if (put)
        for (uint64_t i = 0; i < count; i++) {
            uint64_t seed = i + 1;
            snprintf (key, sizeof key, "obj-%05llu", (unsigned long long) i);
            if (sb_storage_put (s, key, size, s_fill, &seed, 0, &e) != 0) {
                fprintf (stderr, "azure_get_bench: %s\n", e.text);
                return 1;
            }
        }
    s_acc_t acc = { 0 };
    uint64_t started = 0, t0 = sb_mono_ns ();
    while (acc.done < count) {
        while (started < count && sb_storage_pending (s) < concurrency) {
            snprintf (key, sizeof key, "obj-%05llu", (unsigned long long) started);
            sb_io_t io = { .tag = started, .key = key, .offset = 0, .length = size, .expect_size = UINT64_MAX };
            if (verify) {
                uint64_t *seed = malloc (sizeof *seed);
                if (!seed)
                    return 1;
                *seed = started + 1;
                io.expect = s_fill;
                io.expect_ctx = seed;
                io.expect_free = s_expect_free;
                io.expect_size = size;
            }
            if (sb_storage_queue (s, &io, &e) != 0) {
                fprintf (stderr, "azure_get_bench: %s\n", e.text);
                return 1;
            }
            started++;
        }
        if (sb_storage_getevents (s, 100, s_on_done, &acc, &e) < 0) {
            fprintf (stderr, "azure_get_bench: %s\n", e.text);
            return 1;
        }
    }
    double secs = (double) (sb_mono_ns () - t0) / 1e9;
    printf ("requests %llu bytes %llu seconds %.3f MB/s %.1f req/s %.1f failed %llu\n", (unsigned long long) acc.done,
            (unsigned long long) acc.bytes, secs, (double) acc.bytes / 1e6 / secs, (double) acc.done / secs,
            (unsigned long long) acc.failed);
    sb_storage_close (&s);
    return acc.failed ? 1 : 0;
}
