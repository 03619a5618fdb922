/* check_main: the main() every Check unit test shares. */
#ifndef SB_CHECK_MAIN_H
#define SB_CHECK_MAIN_H

#include <check.h>
#include <stdlib.h>

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
