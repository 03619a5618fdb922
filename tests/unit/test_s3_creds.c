/* S3 credentials: environment first, then the shared credentials file and
 * its profiles; errors name what was tried and never a secret. */
#include <check.h>
#include "check_main.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "s3_creds.h"
#include "s3_xml.h"

static char s_file[64];

static void
s_setup (void)
{
    unsetenv ("AWS_ACCESS_KEY_ID");
    unsetenv ("AWS_SECRET_ACCESS_KEY");
    unsetenv ("AWS_SESSION_TOKEN");
    unsetenv ("AWS_PROFILE");
    snprintf (s_file, sizeof s_file, "/tmp/sbcredsXXXXXX");
    int fd = mkstemp (s_file);
    ck_assert_int_ge (fd, 0);
    const char *text = "[default]\naws_access_key_id = AKDEFAULT\naws_secret_access_key = secret-default\n\n"
                       "[profile bench]\naws_access_key_id=AKBENCH\naws_secret_access_key=secret-bench\n"
                       "aws_session_token = tok\n[half]\naws_access_key_id = AKHALF\n";
    ck_assert_int_eq (write (fd, text, strlen (text)), (ssize_t) strlen (text));
    close (fd);
    setenv ("AWS_SHARED_CREDENTIALS_FILE", s_file, 1);
}

static void
s_teardown (void)
{
    unlink (s_file);
}

START_TEST (test_sources)
{
    sb_s3_creds_t c;
    char err[512];
    ck_assert_int_eq (sb_s3_creds_load (&c, err, sizeof err), 0);
    ck_assert_str_eq (c.access_key, "AKDEFAULT");
    ck_assert_str_eq (c.secret_key, "secret-default");
    ck_assert_str_eq (c.session_token, "");
    ck_assert_ptr_nonnull (strstr (c.source, "[default]"));
    setenv ("AWS_PROFILE", "bench", 1);
    ck_assert_int_eq (sb_s3_creds_load (&c, err, sizeof err), 0);
    ck_assert_str_eq (c.access_key, "AKBENCH");
    ck_assert_str_eq (c.session_token, "tok");
    setenv ("AWS_PROFILE", "half", 1);
    ck_assert_int_eq (sb_s3_creds_load (&c, err, sizeof err), -1);
    ck_assert_ptr_nonnull (strstr (err, "no complete profile [half]"));
    setenv ("AWS_PROFILE", "absent", 1);
    ck_assert_int_eq (sb_s3_creds_load (&c, err, sizeof err), -1);
    /* the environment wins over the file */
    setenv ("AWS_ACCESS_KEY_ID", "AKENV", 1);
    setenv ("AWS_SECRET_ACCESS_KEY", "secret-env", 1);
    ck_assert_int_eq (sb_s3_creds_load (&c, err, sizeof err), 0);
    ck_assert_str_eq (c.access_key, "AKENV");
    ck_assert_str_eq (c.source, "environment");
    sb_s3_creds_wipe (&c);
    ck_assert_str_eq (c.secret_key, "");
    /* nothing anywhere: the error names the file, not a secret */
    unsetenv ("AWS_ACCESS_KEY_ID");
    setenv ("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/credentials", 1);
    ck_assert_int_eq (sb_s3_creds_load (&c, err, sizeof err), -1);
    ck_assert_ptr_nonnull (strstr (err, "/nonexistent/credentials"));
    ck_assert_ptr_null (strstr (err, "secret"));
}
END_TEST

START_TEST (test_xml)
{
    const char *xml = "<ListBucketResult><IsTruncated>true</IsTruncated>"
                      "<Contents><Key>a&amp;b &lt;c&gt; &#233;&#x41;</Key><Size>12</Size></Contents>"
                      "<Contents><Key>d</Key><Size>3</Size></Contents>"
                      "<NextContinuationToken>t/+=</NextContinuationToken></ListBucketResult>";
    char out[64];
    size_t pos = 0;
    ck_assert_int_eq (sb_s3_xml_next (xml, strlen (xml), &pos, "Key", out, sizeof out), 0);
    ck_assert_str_eq (out, "a&b <c> \xc3\xa9" "A");
    ck_assert_int_eq (sb_s3_xml_next (xml, strlen (xml), &pos, "Size", out, sizeof out), 0);
    ck_assert_str_eq (out, "12");
    ck_assert_int_eq (sb_s3_xml_next (xml, strlen (xml), &pos, "Key", out, sizeof out), 0);
    ck_assert_str_eq (out, "d");
    ck_assert_int_eq (sb_s3_xml_next (xml, strlen (xml), &pos, "Key", out, sizeof out), -1);
    ck_assert_int_eq (sb_s3_xml_find (xml, strlen (xml), "NextContinuationToken", out, sizeof out), 0);
    ck_assert_str_eq (out, "t/+=");
    ck_assert_int_eq (sb_s3_xml_find (xml, strlen (xml), "NextContinuationToken", out, 3), -2);
    ck_assert_int_eq (sb_s3_xml_find (xml, 30, "Key", out, sizeof out), -1);   /* never past len */
    ck_assert_int_eq (sb_s3_xml_escape ("\"a\"&<'>", out, sizeof out), 0);
    ck_assert_str_eq (out, "&quot;a&quot;&amp;&lt;&apos;&gt;");
    ck_assert_int_eq (sb_s3_xml_escape ("&&&&", out, 8), -1);
}
END_TEST

static Suite *
s_suite (void)
{
    Suite *s = suite_create ("s3_creds");
    TCase *tc = tcase_create ("core");
    tcase_add_checked_fixture (tc, s_setup, s_teardown);
    tcase_add_test (tc, test_sources);
    tcase_add_test (tc, test_xml);
    suite_add_tcase (s, tc);
    return s;
}

SB_CHECK_MAIN (s_suite)
