/* pagecache_bench: what a page-cache check (lib/storage/pagecache.h) costs, per
 * call, for files of 64 KiB, 1 MiB, 16 MiB and 140 MiB (unet3d's size),
 * cached and evicted, with cachestat and with the mincore fallback, and
 * what evicting a clean file costs. Run by tests/bench/pagecache.sh in
 * the folder it is given (a disk-backed one: tmpfs cannot evict).
 * usage: pagecache_bench FOLDER */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pagecache.h"

static double
s_now (void)
{
    struct timespec t;
    clock_gettime (CLOCK_MONOTONIC, &t);
    return (double) t.tv_sec + (double) t.tv_nsec / 1e9;
}

/* Mean microseconds of one residency check of the whole file (n calls). */
static double
s_check_us (int fd, const char *name, int n, sb_residency_t *r)
{
    char err[512];
    double t0 = s_now ();
    for (int i = 0; i < n; i++)
        if (sb_pagecache_residency (fd, 0, 0, r, name, err, sizeof err) != 0) {
            fprintf (stderr, "pagecache_bench: %s\n", err);
            exit (1);
        }
    return (s_now () - t0) / n * 1e6;
}

int
main (int argc, char **argv)
{
    if (argc != 2) {
        fprintf (stderr, "usage: pagecache_bench FOLDER\n");
        return 2;
    }
    const size_t sizes[] = { 65536, 1u << 20, 16u << 20, 140u << 20 };
    const size_t chunk = 1u << 20;
    char *buf = calloc (1, chunk);
    if (!buf)
        return 1;
    printf ("| file | cachestat, cached | cachestat, evicted | mincore, cached | mincore, evicted | evict (clean) |\n");
    printf ("|---|---|---|---|---|---|\n");
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        char name[4096], err[512];
        snprintf (name, sizeof name, "%s/pagecache-bench-%zu.bin", argv[1], k);
        int fd = open (name, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0) {
            perror (name);
            return 1;
        }
        for (size_t done = 0; done < sizes[k];) {
            size_t n = sizes[k] - done < chunk ? sizes[k] - done : chunk;
            if (write (fd, buf, n) != (ssize_t) n) {
                perror (name);
                return 1;
            }
            done += n;
        }
        int calls = sizes[k] > (16u << 20) ? 200 : 2000;
        double us[4];
        sb_residency_t r;
        for (int mode = 0; mode < 2; mode++) {
            sb_pagecache_force_mincore (mode);
            /* cached: read back whole */
            if (sb_pagecache_evict_fd (fd, name, err, sizeof err) != 0) {
                fprintf (stderr, "pagecache_bench: %s\n", err);
                return 1;
            }
            for (off_t at = 0; at < (off_t) sizes[k]; at += (off_t) chunk)
                if (pread (fd, buf, chunk, at) < 0) {
                    perror (name);
                    return 1;
                }
            us[mode * 2] = s_check_us (fd, name, calls, &r);
            if (r.resident != r.checked)
                fprintf (stderr, "pagecache_bench: %s: only %llu of %llu bytes cached\n", name,
                         (unsigned long long) r.resident, (unsigned long long) r.checked);
            if (sb_pagecache_evict_fd (fd, name, err, sizeof err) != 0) {
                fprintf (stderr, "pagecache_bench: %s\n", err);
                return 1;
            }
            us[mode * 2 + 1] = s_check_us (fd, name, calls, &r);
            if (r.resident != 0)
                fprintf (stderr, "pagecache_bench: %s: %llu bytes left after eviction\n", name,
                         (unsigned long long) r.resident);
        }
        sb_pagecache_force_mincore (0);
        double t0 = s_now ();
        for (int i = 0; i < calls; i++)
            if (sb_pagecache_evict_fd (fd, name, err, sizeof err) != 0) {
                fprintf (stderr, "pagecache_bench: %s\n", err);
                return 1;
            }
        double evict_us = (s_now () - t0) / calls * 1e6;
        printf ("| %zu KiB | %.1f us | %.1f us | %.1f us | %.1f us | %.1f us |\n", sizes[k] / 1024, us[0], us[1], us[2],
                us[3], evict_us);
        close (fd);
        unlink (name);
    }
    free (buf);
    return 0;
}
