/* slurm: host list expansion, with the answers `scontrol show hostnames`
 * gives for the same lists (it refuses "n[1-2]-ib", which we expand). */
#include <check.h>
#include "check_main.h"

#include <string.h>

#include "slurm.h"

typedef struct {
    char   text[1024];  /* the hosts, each followed by one space */
    size_t count;
    size_t stop_at;     /* fail the callback at this host (1-based), 0: never */
} s_hosts_t;

static int
s_collect (const char *host, void *ctx)
{
    s_hosts_t *h = ctx;
    if (h->stop_at && h->count + 1 == h->stop_at)
        return -1;
    h->count++;
    strncat (h->text, host, sizeof h->text - strlen (h->text) - 1);
    strncat (h->text, " ", sizeof h->text - strlen (h->text) - 1);
    return 0;
}

START_TEST (test_expand)
{
    static const struct {
        const char *list, *hosts;
    } cases[] = {
        { "vm", "vm " },
        { "node1,node2", "node1 node2 " },
        { "gpu[01-03,07]", "gpu01 gpu02 gpu03 gpu07 " },
        { "n[8-11]", "n8 n9 n10 n11 " },
        { "n[098-101]", "n098 n099 n100 n101 " },
        { "a[1-2],login,b[3]", "a1 a2 login b3 " },
        { "rack[1-2]n[1-2]", "rack1n1 rack1n2 rack2n1 rack2n2 " },
        { "n[1-2]-ib", "n1-ib n2-ib " },
        { "cn-7.example.org", "cn-7.example.org " },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        s_hosts_t h = { .count = 0 };
        char err[256] = "";
        ck_assert_msg (sb_slurm_hostlist_expand (cases[i].list, s_collect, &h, err, sizeof err) == 0, "%s: %s",
                       cases[i].list, err);
        ck_assert_str_eq (h.text, cases[i].hosts);
    }
}
END_TEST

START_TEST (test_malformed)
{
    static const struct {
        const char *list, *why;
    } cases[] = {
        { "", "empty host list" },
        { "n[1-3", "'[' without its ']'" },
        { "n1-3]", "']' without '['" },
        { "n[3-1]", "bad range in '[3-1]'" },
        { "n[a-b]", "a range needs numbers" },
        { "n[1;2]", "unexpected ';'" },
        { "n1,,n2", "an empty host name" },
        { "n1,", "ends with ','" },
        { "n[0-99999999]", "more than 65536 hosts" },
        { "a[0-999]b[0-999]", "more than 65536 hosts" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        s_hosts_t h = { .count = 0 };
        char err[256] = "";
        ck_assert_msg (sb_slurm_hostlist_expand (cases[i].list, s_collect, &h, err, sizeof err) == -1, "%s accepted",
                       cases[i].list);
        ck_assert_msg (strstr (err, cases[i].why), "%s: '%s' lacks '%s'", cases[i].list, err, cases[i].why);
    }
}
END_TEST

START_TEST (test_callback_failure)
{
    s_hosts_t h = { .stop_at = 2 };
    char err[256] = "";
    ck_assert_int_eq (sb_slurm_hostlist_expand ("n[1-3]", s_collect, &h, err, sizeof err), -1);
    ck_assert_str_eq (h.text, "n1 ");
    ck_assert_ptr_nonnull (strstr (err, "cannot keep host n2"));
}
END_TEST

static Suite *
s_suite (void)
{
    Suite *s = suite_create ("slurm");
    TCase *tc = tcase_create ("hostlist");
    tcase_add_test (tc, test_expand);
    tcase_add_test (tc, test_malformed);
    tcase_add_test (tc, test_callback_failure);
    suite_add_tcase (s, tc);
    return s;
}

SB_CHECK_MAIN (s_suite)
