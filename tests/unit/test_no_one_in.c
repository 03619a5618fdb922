/* no_one_in: the pieces that keep strangers out: shell quoting
 * of the ssh command words, object-name checks, which workload keys are
 * credentials, and their redaction from the recorded configuration. */
#include <check.h>
#include "check_main.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "dataset.h"
#include "launch.h"
#include "workload.h"

START_TEST (test_shell_quote)
{
    static const struct { const char *in, *out; } cases[] = {
        { "", "''" },
        { "/usr/bin/shardbench-worker", "'/usr/bin/shardbench-worker'" },
        { "x; touch /tmp/pwned", "'x; touch /tmp/pwned'" },
        { "$(id) `id` \"q\" \\", "'$(id) `id` \"q\" \\'" },
        { "it's", "'it'\\''s'" },
        { "''", "''\\'''\\'''" },
    };
    char out[128];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ck_assert_int_eq (sb_launcher_shell_quote (cases[i].in, out, sizeof out), 0);
        ck_assert_str_eq (out, cases[i].out);
    }
    /* exact fit and one byte short */
    ck_assert_int_eq (sb_launcher_shell_quote ("abc", out, 6), 0);
    ck_assert_str_eq (out, "'abc'");
    ck_assert_int_eq (sb_launcher_shell_quote ("abc", out, 5), -1);
    ck_assert_int_eq (sb_launcher_shell_quote ("a'", out, 7), -1);
    ck_assert_int_eq (sb_launcher_shell_quote ("a'", out, 8), 0);
    ck_assert_str_eq (out, "'a'\\'''");
}
END_TEST

START_TEST (test_names)
{
    char why[128];
    static const char *const good_names[] = { "train/img_1_of_4.npz", "train/0/img_1_of_4.npz", "train/a..b",
                                              "train/...", "x" };
    for (size_t i = 0; i < sizeof good_names / sizeof good_names[0]; i++)
        ck_assert_msg (sb_dataset_check_name (good_names[i], why, sizeof why) == 0, "%s", good_names[i]);
    static const struct { const char *name, *why; } bad_names[] = {
        { "", "is empty" },
        { "/etc/passwd", "is absolute (names are relative to the data folder)" },
        { "..", "has a '..' component (it would leave the data folder)" },
        { "train/../../x", "has a '..' component (it would leave the data folder)" },
        { "train/..", "has a '..' component (it would leave the data folder)" },
        { "train/a\nb", "contains control characters" },
        { "train/a\x7f", "contains control characters" },
    };
    for (size_t i = 0; i < sizeof bad_names / sizeof bad_names[0]; i++) {
        ck_assert_msg (sb_dataset_check_name (bad_names[i].name, why, sizeof why) == -1, "%s", bad_names[i].name);
        ck_assert_str_eq (why, bad_names[i].why);
    }
    ck_assert_int_eq (sb_dataset_check_part ("img", why, sizeof why), 0);
    ck_assert_int_eq (sb_dataset_check_part ("img.v2", why, sizeof why), 0);
    ck_assert_int_eq (sb_dataset_check_part ("", why, sizeof why), 0);
    ck_assert_int_eq (sb_dataset_check_part ("../../x", why, sizeof why), -1);
    ck_assert_str_eq (why, "must not contain '/' (object names stay in the data folder)");
    ck_assert_int_eq (sb_dataset_check_part ("..", why, sizeof why), -1);
    ck_assert_str_eq (why, "must not contain '..' (object names stay in the data folder)");
    ck_assert_int_eq (sb_dataset_check_part ("a\tb", why, sizeof why), -1);
    ck_assert_str_eq (why, "must not contain control characters");
}
END_TEST

START_TEST (test_secret_keys)
{
    static const char *const secret[] = { "storage.storage_options.access_key_id",
                                          "storage.storage_options.secret_access_key",
                                          "storage.storage_options.session_token", "x.Password", "x.aws_credentials" };
    static const char *const plain[] = { "storage.storage_options.endpoint_url", "shardbench.keys_page",
                                         "reader.batch_size", "secret.name", "dataset.file_prefix" };
    for (size_t i = 0; i < sizeof secret / sizeof secret[0]; i++)
        ck_assert_msg (sb_workload_is_secret_key (secret[i]) == 1, "%s", secret[i]);
    for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++)
        ck_assert_msg (sb_workload_is_secret_key (plain[i]) == 0, "%s", plain[i]);

    sb_config_t *cfg = sb_config_new ();
    char err[512];
    ck_assert_ptr_nonnull (cfg);
    ck_assert_int_eq (sb_config_load_string (cfg,
                                             "storage:\n  storage_options:\n    secret_access_key: s3cr3tVALUE\n"
                                             "    session_token: [tok1, tok2]\n    endpoint_url: http://h:1\n",
                                             "t.yaml", err, sizeof err), 0);
    ck_assert_int_eq (sb_config_redact (cfg, sb_workload_is_secret_key, "<redacted>"), 2);
    char *yaml = sb_config_to_yaml (cfg);
    ck_assert_ptr_nonnull (yaml);
    ck_assert_msg (!strstr (yaml, "s3cr3tVALUE") && !strstr (yaml, "tok1") && !strstr (yaml, "tok2"), "%s", yaml);
    ck_assert_msg (strstr (yaml, "http://h:1") != NULL, "%s", yaml);
    const char *at = yaml;
    int n = 0;
    while ((at = strstr (at, "<redacted>"))) {
        n++;
        at++;
    }
    ck_assert_int_eq (n, 2);
    free (yaml);
    sb_config_destroy (&cfg);
}
END_TEST

static Suite *
s_suite (void)
{
    Suite *s = suite_create ("no_one_in");
    TCase *tc = tcase_create ("no_one_in");
    tcase_add_test (tc, test_shell_quote);
    tcase_add_test (tc, test_names);
    tcase_add_test (tc, test_secret_keys);
    suite_add_tcase (s, tc);
    return s;
}

SB_CHECK_MAIN (s_suite)
