/* upstream_dir: the folder of upstream workload files for the tests that
 * read them: SB_UPSTREAM_WORKLOADS, else ../shared/upstream-workloads beside
 * the source tree (SB_SOURCE_ROOT). The files stay outside the repository,
 * so such a test skips where they are absent. */
#ifndef SB_TEST_UPSTREAM_DIR_H
#define SB_TEST_UPSTREAM_DIR_H

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

/* The folder (with "/" sub appended when sub is not empty) into dir: 0, or
 * -1 after printing the SKIP line when it is not there. */
static inline int
sb_test_upstream_dir (const char *sub, char *dir, size_t size)
{
    const char *env = getenv ("SB_UPSTREAM_WORKLOADS");
    const char *root = getenv ("SB_SOURCE_ROOT");
    if (env && *env)
        snprintf (dir, size, "%s%s%s", env, *sub ? "/" : "", sub);
    else
        snprintf (dir, size, "%s/../shared/upstream-workloads%s%s", root && *root ? root : ".", *sub ? "/" : "", sub);
    struct stat st;
    if (stat (dir, &st) != 0 || !S_ISDIR (st.st_mode)) {
        printf ("SKIP: no upstream workload files in %s (set SB_UPSTREAM_WORKLOADS)\n", dir);
        return -1;
    }
    return 0;
}

#endif
