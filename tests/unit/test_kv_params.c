#include <check.h>
#include "check_main.h"
#include "kv_params.h"
START_TEST (test_placeholder)
{
    sb_kv_params_t p;
    sb_kv_params_default (&p);
}
END_TEST
static Suite *
s_suite (void)
{
    Suite *s = suite_create ("kv_params");
    TCase *tc = tcase_create ("core");
    tcase_add_test (tc, test_placeholder);
    suite_add_tcase (s, tc);
    return s;
}
SB_CHECK_MAIN (s_suite)
