/* test_log: sb_log_escape, the one escaping of a peer's or a user's text
 * before it is printed or logged, and sb_log's own escaping of every line. */
#include "check_main.h"
#include "log.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

START_TEST (escape_controls)
{
    char out[256];
    ck_assert_str_eq (sb_log_escape ("plain host-1.example", out, sizeof out), "plain host-1.example");
    ck_assert_str_eq (sb_log_escape ("a\x1b[2Jb", out, sizeof out), "a\\e[2Jb");
    ck_assert_str_eq (sb_log_escape ("a\nb\rc\td", out, sizeof out), "a\\nb\\rc\\td");
    ck_assert_str_eq (sb_log_escape ("\x01\x7f", out, sizeof out), "\\x01\\x7f");
    /* C1 controls in UTF-8 (U+009B is CSI), bytes that are not UTF-8 */
    ck_assert_str_eq (sb_log_escape ("x\xc2\x9by", out, sizeof out), "x\\u009by");
    ck_assert_str_eq (sb_log_escape ("\x9b\xff", out, sizeof out), "\\x9b\\xff");
    /* other UTF-8 stays as it is, a backslash too */
    ck_assert_str_eq (sb_log_escape ("n\xc3\xa9ud \xe2\x82\xac \\e", out, sizeof out), "n\xc3\xa9ud \xe2\x82\xac \\e");
    ck_assert_str_eq (sb_log_escape (NULL, out, sizeof out), "");
    ck_assert_int_eq (sb_log_needs_escape ("host"), 0);
    ck_assert_int_eq (sb_log_needs_escape ("h\nost"), 1);
    ck_assert_int_eq (sb_log_needs_escape ("h\x1b"), 1);
    ck_assert_int_eq (sb_log_needs_escape ("h\xc3"), 1);
    ck_assert_int_eq (sb_log_needs_escape ("n\xc3\xa9ud"), 0);
    /* lines: newline and tab kept, the rest escaped */
    ck_assert_str_eq (sb_log_escape_lines ("a\n\tb\x1b" "c\r", out, sizeof out), "a\n\tb\\ec\\r");
}
END_TEST

START_TEST (escape_cut)
{
    /* cut before an escape or a character that does not fit, never inside */
    char out[5];
    ck_assert_str_eq (sb_log_escape ("abc\x1b", out, sizeof out), "abc");
    ck_assert_str_eq (sb_log_escape ("ab\xe2\x82\xac", out, sizeof out), "ab");
    ck_assert_str_eq (sb_log_escape ("\x1b\x1b\x1b", out, sizeof out), "\\e\\e");
    char one[1];
    ck_assert_str_eq (sb_log_escape ("abc", one, sizeof one), "");
}
END_TEST

/* every line sb_log writes: no raw control byte but newline (the program's
 * own multi-line messages) */
START_TEST (log_lines)
{
    char path[256];
    snprintf (path, sizeof path, "%s/sb-test-log-XXXXXX", getenv ("TMPDIR") ? getenv ("TMPDIR") : "/tmp");
    int fd = mkstemp (path);    /* created O_EXCL at a random name: stderr's copy, removed below */
    ck_assert_int_ge (fd, 0);
    fflush (stderr);
    int saved = dup (2);
    ck_assert_int_ge (saved, 0);
    ck_assert_int_eq (dup2 (fd, 2), 2);
    sb_warn ("peer says %s", "a\x1b[2Jb\rc\xc2\x9b");
    fflush (stderr);
    ck_assert_int_eq (dup2 (saved, 2), 2);
    close (saved);
    char buf[512] = "";
    ck_assert_int_gt (pread (fd, buf, sizeof buf - 1, 0), 0);
    close (fd);
    unlink (path);
    ck_assert_ptr_nonnull (strstr (buf, ": warning: peer says a\\e[2Jb\\rc\\u009b\n"));
    ck_assert_ptr_null (strchr (buf, 0x1b));
    ck_assert_ptr_null (strchr (buf, '\r'));
}
END_TEST

static Suite *
s_suite (void)
{
    Suite *s = suite_create ("log");
    TCase *tc = tcase_create ("escape");
    tcase_add_test (tc, escape_controls);
    tcase_add_test (tc, escape_cut);
    tcase_add_test (tc, log_lines);
    suite_add_tcase (s, tc);
    return s;
}

SB_CHECK_MAIN (s_suite)
