/* check_main: the main() every Check unit test shares. */
#ifndef SB_CHECK_MAIN_H
#define SB_CHECK_MAIN_H

#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

/* Remove a test's scratch folder (made with mkdtemp) and all below it. */
static inline void
sb_check_remove_tree (const char *dir)
{
    char cmd[PATH_MAX + 16];
    ck_assert_int_lt (snprintf (cmd, sizeof cmd, "rm -rf '%s'", dir), (int) sizeof cmd);
    ck_assert_int_eq (system (cmd), 0);
}

/* Define main() running the suite that suite_fn builds. */
#define SB_CHECK_MAIN(suite_fn)                                   \
    int main (void)                                               \
    {                                                             \
        SRunner *sr = srunner_create (suite_fn ());               \
        srunner_run_all (sr, CK_NORMAL);                          \
        int failed = srunner_ntests_failed (sr);                  \
        srunner_free (sr);                                        \
        return failed ? EXIT_FAILURE : EXIT_SUCCESS;              \
    }

#endif
