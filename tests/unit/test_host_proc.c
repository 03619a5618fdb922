/* host_proc: what a worker sends of its host in HELLO (lib/base/host_proc.h):
 * the last processor's block of /proc/cpuinfo,
 * texts bounded after their last whole line, and this host's own /proc read
 * back. */
#include <check.h>
#include "check_main.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "host_proc.h"

START_TEST (test_last_block)
{
    const char *text = "processor\t: 0\nvendor_id\t: A\ncpu MHz\t\t: 1000.0\n\n"
                       "processor\t: 1\nvendor_id\t: A\ncpu MHz\t\t: 2000.0\n\n"
                       "processor\t: 2\nvendor_id\t: B\ncpu MHz\t\t: 3000.0\n\n";
    char *last = sb_host_proc_last_cpu (text);
    ck_assert_str_eq (last, "processor\t: 2\nvendor_id\t: B\ncpu MHz\t\t: 3000.0\n\n");
    free (last);
    /* a key that only starts with "processor" is no block start */
    last = sb_host_proc_last_cpu ("processor : 0\nprocessors : 9\nx : y\n");
    ck_assert_str_eq (last, "processor : 0\nprocessors : 9\nx : y\n");
    free (last);
    /* trailing lines after the last block (32-bit ARM's Hardware, Revision) stay, as DLIO keeps them */
    last = sb_host_proc_last_cpu ("processor\t: 0\nBogoMIPS\t: 1\n\nprocessor\t: 1\nBogoMIPS\t: 2\n\nHardware\t: H\n");
    ck_assert_str_eq (last, "processor\t: 1\nBogoMIPS\t: 2\n\nHardware\t: H\n");
    free (last);
    /* no processor line (s390's "processor 0: ..." has none of this form): kept whole */
    last = sb_host_proc_last_cpu ("vendor_id : IBM/S390\nprocessor 0: version = FF\n");
    ck_assert_str_eq (last, "vendor_id : IBM/S390\nprocessor 0: version = FF\n");
    free (last);
    last = sb_host_proc_last_cpu ("");
    ck_assert_str_eq (last, "");
    free (last);
}
END_TEST

START_TEST (test_bound)
{
    char text[] = "a : 1\nbb : 22\nccc : 333\n";
    ck_assert_int_eq (sb_host_proc_bound (text, sizeof text - 1), 0);      /* exactly the bound: kept */
    ck_assert_str_eq (text, "a : 1\nbb : 22\nccc : 333\n");
    ck_assert_int_eq (sb_host_proc_bound (text, 16), 1);                   /* cut after "bb : 22\n" (14 bytes) */
    ck_assert_str_eq (text, "a : 1\nbb : 22\n");
    ck_assert_int_eq (sb_host_proc_bound (text, 5), 1);                    /* no whole line within 5 bytes */
    ck_assert_str_eq (text, "");

    /* a block over SB_HOST_PROC_MAX: cut after its last whole line within it */
    size_t n = SB_HOST_PROC_MAX + 4096;
    char *big = malloc (n + 1);
    ck_assert_ptr_nonnull (big);
    strcpy (big, "processor : 7\n");
    size_t len = strlen (big);
    while (len + 10 <= n) {
        memcpy (big + len, "flag : 12\n", 10);
        len += 10;
    }
    big[len] = '\0';
    char *last = sb_host_proc_last_cpu (big);
    ck_assert_uint_le (strlen (last), SB_HOST_PROC_MAX);
    ck_assert_uint_eq (strlen (last), 14 + (SB_HOST_PROC_MAX - 14) / 10 * 10);
    ck_assert_int_eq (last[strlen (last) - 1], '\n');
    free (last);
    free (big);
}
END_TEST

/* This host's own /proc: the block of the last processor line, meminfo
 * whole, uname -m. */
START_TEST (test_this_host)
{
    sb_host_proc_t hp;
    ck_assert_int_eq (sb_host_proc_read (&hp), 0);
    struct utsname uts;
    ck_assert_int_eq (uname (&uts), 0);
    ck_assert_str_eq (hp.processor, uts.machine);
    FILE *f = fopen ("/proc/meminfo", "r");
    if (f) {
        char first[256];
        ck_assert_ptr_nonnull (fgets (first, sizeof first, f));
        fclose (f);
        ck_assert_int_eq (strncmp (hp.meminfo, first, strlen (first)), 0);     /* MemTotal: ... */
    }
    if (*hp.cpuinfo) {
        ck_assert_int_eq (strncmp (hp.cpuinfo, "processor", 9), 0);
        ck_assert_ptr_null (strstr (hp.cpuinfo + 1, "\nprocessor\t:"));         /* one block */
    }
    ck_assert_uint_le (strlen (hp.cpuinfo), SB_HOST_PROC_MAX);
    ck_assert_uint_le (strlen (hp.meminfo), SB_HOST_PROC_MAX);
    sb_host_proc_fini (&hp);
    sb_host_proc_fini (&hp);    /* twice: harmless */
}
END_TEST

static Suite *
s_suite (void)
{
    Suite *s = suite_create ("host_proc");
    TCase *tc = tcase_create ("core");
    tcase_add_test (tc, test_last_block);
    tcase_add_test (tc, test_bound);
    tcase_add_test (tc, test_this_host);
    suite_add_tcase (s, tc);
    return s;
}

SB_CHECK_MAIN (s_suite)
