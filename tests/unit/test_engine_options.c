/* Engine-owned options (lib/storage/engine.h, sb_engine_option_t): the
 * workload keys storage.<engine>.<key> the engine in use declares are
 * accepted, checked against their type and range (errors naming file:line
 * and the key), kept in sb_storage_cfg_t.opts and sent through WELCOME; a
 * key of another engine is refused naming that engine. Two fake engines
 * registered here declare the options (sb_engine_register). */
#include <check.h>
#include "check_main.h"
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "engine.h"
#include "proto.h"
#include "storage.h"
#include "workload.h"
#include "workload_load.h"

static const sb_engine_option_t s_fakea_options[] = {
    { "depth", SB_OPT_UINT, "16", 1, 1024, "reads in flight", NULL },
    { "huge", SB_OPT_SIZE, NULL, 4096, 1ull << 30, "buffer bytes", NULL },
    { "pinned", SB_OPT_BOOL, "false", 0, 0, "pin the buffers", NULL },
    { "label", SB_OPT_STRING, NULL, 0, 0, "a name", NULL },
    { NULL, 0, NULL, 0, 0, NULL, NULL },
};

static const sb_engine_option_t s_fakeb_options[] = {
    { "depth", SB_OPT_UINT, "1", 1, 8, "reads in flight", NULL },
    { NULL, 0, NULL, 0, 0, NULL, NULL },
};

static int
s_open (const sb_storage_cfg_t *cfg, const sb_storage_open_t *how, void **client, sb_storage_error_t *e)
{
    (void) cfg;
    (void) how;
    (void) e;
    *client = NULL;
    return 0;
}

static void
s_close (void *client)
{
    (void) client;
}

static const sb_engine_ops_t s_fakea = {
    .name = "fakea", .caps = SB_ENGINE_NO_IO, .options = s_fakea_options, .open = s_open, .close = s_close,
};
static const sb_engine_ops_t s_fakeb = {
    .name = "fakeb", .caps = SB_ENGINE_NO_IO, .options = s_fakeb_options, .open = s_open, .close = s_close,
};

static void
s_register (void)
{
    if (!sb_engine_find ("fakea"))
        ck_assert_int_eq (sb_engine_register (&s_fakea), 0);
    if (!sb_engine_find ("fakeb"))
        ck_assert_int_eq (sb_engine_register (&s_fakeb), 0);
}

static sb_workload_t s_wl;

/* The options of yaml for a workload whose engine is `engine`: "" when
 * accepted, else the error (a static buffer). */
static const char *
s_options (const char *yaml, const char *engine)
{
    static char err[2048];
    err[0] = '\0';
    s_register ();
    sb_config_t *cfg = sb_config_new ();
    ck_assert_ptr_nonnull (cfg);
    ck_assert_msg (sb_config_load_string (cfg, yaml, "w.yaml", err, sizeof err) == 0, "%s", err);
    memset (&s_wl, 0, sizeof s_wl);
    snprintf (s_wl.storage.engine, sizeof s_wl.storage.engine, "%s", engine);
    snprintf (s_wl.storage_summary, sizeof s_wl.storage_summary, "%s", engine);
    if (sb_workload_engine_options (cfg, &s_wl, err, sizeof err) == 0)
        err[0] = '\0';
    sb_config_destroy (&cfg);
    return err;
}

START_TEST (test_accepted)
{
    ck_assert_str_eq (s_options ("storage:\n  fakea:\n    depth: 64\n    huge: 2m\n    pinned: yes\n"
                                 "    label: nvme0\n", "fakea"), "");
    ck_assert_uint_eq (s_wl.storage.nopts, 4);
    ck_assert_str_eq (sb_storage_opt (&s_wl.storage, "depth"), "64");
    ck_assert_str_eq (sb_storage_opt (&s_wl.storage, "huge"), "2097152");    /* bytes */
    ck_assert_str_eq (sb_storage_opt (&s_wl.storage, "pinned"), "1");
    ck_assert_str_eq (sb_storage_opt (&s_wl.storage, "label"), "nvme0");
    /* not given: the engine's default, or none */
    ck_assert_str_eq (s_options ("storage:\n  fakea:\n    label: x\n", "fakea"), "");
    ck_assert_str_eq (sb_storage_opt (&s_wl.storage, "depth"), "16");
    ck_assert_ptr_null (sb_storage_opt (&s_wl.storage, "huge"));
    /* the bounds themselves are in range; sizes take KiB-style suffixes */
    ck_assert_str_eq (s_options ("storage:\n  fakea:\n    depth: 1024\n    huge: 4KiB\n", "fakea"), "");
    ck_assert_str_eq (sb_storage_opt (&s_wl.storage, "huge"), "4096");
    /* and they travel to the workers in WELCOME as engine.key=value */
    sb_msg_welcome_t w;
    memset (&w, 0, sizeof w);
    ck_assert_int_eq (sb_storage_to_welcome (&s_wl.storage, &w), 0);
    ck_assert_str_eq (w.engine, "fakea");
    ck_assert_uint_eq (w.engine_opts.count, 2);
    ck_assert_str_eq (w.engine_opts.items[0], "fakea.depth=1024");
    ck_assert_str_eq (w.engine_opts.items[1], "fakea.huge=4096");
    sb_storage_cfg_t back;
    char err[256];
    ck_assert_int_eq (sb_storage_from_welcome (&w, &back, err, sizeof err), 0);
    free (w.endpoints.items);
    ck_assert_str_eq (back.engine, "fakea");
    ck_assert_uint_eq (back.nopts, 2);
    ck_assert_str_eq (sb_storage_opt (&back, "depth"), "1024");
    ck_assert_str_eq (sb_storage_opt (&back, "huge"), "4096");
}
END_TEST

START_TEST (test_range)
{
    ck_assert_str_eq (s_options ("storage:\n  fakea:\n    depth: 4096\n", "fakea"),
                      "w.yaml:3: key 'storage.fakea.depth': 4096 is out of range [1, 1024]");
    ck_assert_str_eq (s_options ("reader:\n  batch_size: 1\nstorage:\n  fakea:\n    depth: 0\n", "fakea"),
                      "w.yaml:5: key 'storage.fakea.depth': 0 is out of range [1, 1024]");
    ck_assert_str_eq (s_options ("storage:\n  fakea:\n    huge: 1k\n", "fakea"),
                      "w.yaml:3: key 'storage.fakea.huge': 1024 is out of range [4096, 1073741824]");
    ck_assert_str_eq (s_options ("storage:\n  fakea:\n    depth: lots\n", "fakea"),
                      "w.yaml:3: key 'storage.fakea.depth': expected a whole number, got 'lots'");
    ck_assert_str_eq (s_options ("storage:\n  fakea:\n    depth: -3\n", "fakea"),
                      "w.yaml:3: key 'storage.fakea.depth': expected a whole number, got '-3'");
    ck_assert_str_eq (s_options ("storage:\n  fakea:\n    pinned: maybe\n", "fakea"),
                      "w.yaml:3: key 'storage.fakea.pinned': expected true or false, got 'maybe'");
    /* a key the engine does not declare: its options listed */
    ck_assert_str_eq (s_options ("storage:\n  fakea:\n    iodepth: 4\n", "fakea"),
                      "w.yaml:3: key 'storage.fakea.iodepth': the fakea storage engine has no option 'iodepth'"
                      " (depth, huge, pinned, label)");
}
END_TEST

START_TEST (test_other_engine)
{
    /* a key of another registered engine names that engine and the one in use */
    ck_assert_str_eq (s_options ("storage:\n  fakeb:\n    depth: 2\n", "fakea"),
                      "w.yaml:3: key 'storage.fakeb.depth': an option of the fakeb storage engine, but this"
                      " workload's storage engine is fakea (fakea)");
    /* through the whole workload: local files choose the file engine */
    s_register ();
    ck_assert_str_eq (sb_test_workload_load ("storage:\n  storage_type: local_fs\n  fakea:\n    depth: 8\n", NULL,
                                             &s_wl),
                      "w.yaml:4: key 'storage.fakea.depth': an option of the fakea storage engine, but this"
                      " workload's storage engine is file (file)");
    /* storage keys that name no engine are not engine options */
    ck_assert_str_eq (sb_test_workload_load ("storage:\n  storage_type: local_fs\n  storage_options:\n"
                                             "    max_in_flight: 4\n", NULL, &s_wl), "");
    ck_assert_uint_eq (s_wl.storage.nopts, 0);
}
END_TEST

static Suite *
s_suite (void)
{
    Suite *s = suite_create ("engine_options");
    TCase *tc = tcase_create ("keys");
    tcase_add_test (tc, test_accepted);
    tcase_add_test (tc, test_range);
    tcase_add_test (tc, test_other_engine);
    suite_add_tcase (s, tc);
    return s;
}

SB_CHECK_MAIN (s_suite)
