/* pagecache_tool: lib/storage/pagecache.h from the command line, for the
 * integration tests.
 *   pagecache_tool evict ROOT THREADS PATH...   evict PATHs under ROOT
 *   pagecache_tool residency FILE               print "RESIDENT CHECKED" bytes
 * Exit 0, or 1 with the error on stderr. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pagecache.h"

int
main (int argc, char **argv)
{
    if (argc >= 4 && strcmp (argv[1], "evict") == 0) {
        sb_pagecache_batch_t res;
        int rc = sb_pagecache_evict_batch (argv[2], (const char *const *) (argv + 4), (size_t) (argc - 4),
                                           (size_t) strtoul (argv[3], NULL, 10), &res);
        printf ("evicted %llu failed %llu\n", (unsigned long long) res.evicted, (unsigned long long) res.failed);
        if (rc != 0)
            fprintf (stderr, "pagecache_tool: %s\n", res.first_error);
        return rc == 0 ? 0 : 1;
    }
    if (argc == 3 && strcmp (argv[1], "residency") == 0) {
        int fd = open (argv[2], O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            perror (argv[2]);
            return 1;
        }
        sb_residency_t r;
        char err[512];
        int rc = sb_pagecache_residency (fd, 0, 0, &r, argv[2], err, sizeof err);
        close (fd);
        if (rc != 0) {
            fprintf (stderr, "pagecache_tool: %s\n", err);
            return 1;
        }
        printf ("%llu %llu\n", (unsigned long long) r.resident, (unsigned long long) r.checked);
        return 0;
    }
    fprintf (stderr, "usage: pagecache_tool evict ROOT THREADS PATH... | residency FILE\n");
    return 2;
}
