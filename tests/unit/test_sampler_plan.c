/* The file lists planned in one place (lib/dataset/sampler_plan.h) and
 * served to a sampler page by page give every rank exactly the reads of the
 * sampler that keeps every rank's lists itself (the one tests/dlio_model.py
 * checks), over lists of many pages, for each DLIO kind and several epochs;
 * and the pages a served sampler holds stay few when its reader drops what
 * it passed. */
#include <check.h>
#include "check_main.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sampler.h"
#include "sampler_plan.h"

static sb_sampler_cfg_t
s_cfg (sb_sampler_kind_t kind, uint64_t listed, uint64_t expected, uint64_t spf, uint64_t ranks, uint64_t seed)
{
    return (sb_sampler_cfg_t) {
        .kind = kind, .listed = listed, .expected = expected, .samples_per_file = spf, .ranks = ranks,
        .batch_size = 7, .threads = 3, .seed = seed, .sample_shuffle = SB_SHUFFLE_SEED,
        .file_shuffle = SB_SHUFFLE_SEED, .seed_change_epoch = 1, .first_rank = 0, .nranks = ranks,
    };
}

/* every read of every rank in `epochs` epochs: local lists == served ones;
 * returns the most pages the served sampler held at once */
static uint64_t
s_compare (const sb_sampler_cfg_t *cfg, uint64_t epochs)
{
    char err[512];
    sb_sampler_cfg_t sc = *cfg;
    sc.served = 1;
    sb_sampler_t *local = sb_sampler_new (cfg, err, sizeof err);
    ck_assert_msg (local != NULL, "%s", err);
    sb_sampler_t *served = sb_sampler_new (&sc, err, sizeof err);
    ck_assert_msg (served != NULL, "%s", err);
    ck_assert_int_eq (sb_sampler_served (served), 1);
    ck_assert_int_eq (sb_sampler_served (local), 0);
    sb_plan_t *plan = sb_plan_new (&sc, err, sizeof err);
    ck_assert_msg (plan != NULL, "%s", err);
    static uint64_t files[SB_SAMPLER_PAGE_MAX];
    uint64_t most = 0;
    for (uint64_t e = 1; e <= epochs; e++) {
        ck_assert_msg (sb_sampler_epoch (local, e, err, sizeof err) == 0, "%s", err);
        ck_assert_msg (sb_sampler_epoch (served, e, err, sizeof err) == 0, "%s", err);
        ck_assert_msg (sb_plan_start (plan, e, err, sizeof err) == 0, "%s", err);
        ck_assert_msg (sb_plan_wait (plan, NULL, err, sizeof err) == 0, "%s", err);
        ck_assert_uint_eq (sb_plan_epoch_planned (plan), e);
        const sb_sampler_epoch_t *info = sb_sampler_info (local);
        uint64_t f = sb_plan_files_per_rank (plan);
        ck_assert_uint_eq (f, info->files_per_rank);
        ck_assert_uint_gt (f, 2 * SB_SAMPLER_PAGE);    /* several pages a rank */
        for (uint64_t r = 0; r < cfg->ranks; r++)
            for (uint64_t p = 0, run_end = 0; p < info->samples_per_rank; p++) {
                sb_sample_ref_t want, got;
                ck_assert_int_eq (sb_sampler_at (local, r, p, &want), 0);
                uint64_t page, run;
                ck_assert_int_eq (sb_sampler_page_of (served, r, p, &page, &run), 0);
                ck_assert_uint_ge (run, 1);
                ck_assert_uint_le (run, info->samples_per_rank - p);
                if (p == run_end) {     /* a walk steps by runs: each needs one page */
                    for (uint64_t q = p + 1; q < p + run; q++) {
                        uint64_t same;
                        ck_assert_int_eq (sb_sampler_page_of (served, r, q, &same, NULL), 0);
                        ck_assert_msg (same == page, "%s rank %llu: position %llu in the run of %llu from %llu"
                                       " needs page %llu, not %llu", sb_sampler_kind_name (cfg->kind),
                                       (unsigned long long) r, (unsigned long long) q, (unsigned long long) run,
                                       (unsigned long long) p, (unsigned long long) same, (unsigned long long) page);
                    }
                    run_end = p + run;
                }
                if (sb_sampler_page_state (served, r, page) != 2) {
                    ck_assert_int_eq (sb_sampler_at (served, r, p, &got), 1);   /* not held: wait */
                    uint64_t per = sb_plan_page_files (plan), first = page * per;
                    uint64_t n = f - first < per ? f - first : per;
                    ck_assert_int_eq (sb_sampler_page_ask (served, r, page, p), 0);
                    ck_assert_int_eq (sb_plan_files (plan, r, first, n, files), 0);
                    ck_assert_msg (sb_sampler_page_put (served, r, page, files, (size_t) n, err, sizeof err) == 0,
                                   "%s", err);
                }
                else
                    sb_sampler_page_touch (served, r, page, p);
                ck_assert_int_eq (sb_sampler_at (served, r, p, &got), 0);
                ck_assert_msg (got.file == want.file && got.sample == want.sample && got.thread == want.thread,
                               "%s epoch %llu rank %llu position %llu: served %llu/%llu/%llu, local %llu/%llu/%llu",
                               sb_sampler_kind_name (cfg->kind), (unsigned long long) e, (unsigned long long) r,
                               (unsigned long long) p, (unsigned long long) got.file,
                               (unsigned long long) got.sample, (unsigned long long) got.thread,
                               (unsigned long long) want.file, (unsigned long long) want.sample,
                               (unsigned long long) want.thread);
                sb_sampler_page_release (served, r, p);
                uint64_t held = sb_sampler_page_held (served, NULL);
                if (held > most)
                    most = held;
            }
    }
    sb_plan_destroy (&plan);
    sb_sampler_destroy (&served);
    sb_sampler_destroy (&local);
    return most;
}

/* a page holds at least two batches' files, in powers of two from 4096 to 65536 */
START_TEST (test_page_files)
{
    sb_sampler_cfg_t c = s_cfg (SB_SAMPLER_DLIO_INDEX, 100003, 0, 1, 8, 11);
    c.batch_size = 32;
    ck_assert_uint_eq (sb_sampler_page_files (&c), 4096);
    c.batch_size = 2048;        /* 2 x 2049 files */
    ck_assert_uint_eq (sb_sampler_page_files (&c), 8192);
    c.batch_size = 65536;       /* DLRM's npz presets: capped */
    ck_assert_uint_eq (sb_sampler_page_files (&c), 65536);
    c.samples_per_file = 4096;  /* files of many samples: the smallest page */
    ck_assert_uint_eq (sb_sampler_page_files (&c), 4096);
}
END_TEST

START_TEST (test_index)
{
    sb_sampler_cfg_t c = s_cfg (SB_SAMPLER_DLIO_INDEX, 100003, 0, 1, 8, 11);
    /* the index kind reads its list in order: a page or two per rank */
    ck_assert_uint_le (s_compare (&c, 3), 2 * 8);
    c = s_cfg (SB_SAMPLER_DLIO_INDEX, 30011, 30000, 3, 3, 5);
    s_compare (&c, 2);
}
END_TEST

START_TEST (test_files)
{
    sb_sampler_cfg_t c = s_cfg (SB_SAMPLER_DLIO_FILES, 100003, 0, 1, 8, 11);
    s_compare (&c, 2);
    c = s_cfg (SB_SAMPLER_DLIO_FILES, 30011, 0, 2, 3, 1234);
    s_compare (&c, 2);
}
END_TEST

START_TEST (test_iterative)
{
    /* three threads read three stretches of the list at once */
    sb_sampler_cfg_t c = s_cfg (SB_SAMPLER_DLIO_ITERATIVE, 100003, 0, 1, 8, 11);
    ck_assert_uint_le (s_compare (&c, 2), 8 * 3 * 2);
    c = s_cfg (SB_SAMPLER_DLIO_ITERATIVE, 30011, 30005, 3, 2, 99);
    s_compare (&c, 2);
}
END_TEST

/* a single rank: the deal gives it its own list back (still reshuffled) */
START_TEST (test_one_rank)
{
    sb_sampler_cfg_t c = s_cfg (SB_SAMPLER_DLIO_INDEX, 9000, 0, 1, 1, 3);
    s_compare (&c, 3);
}
END_TEST

/* numpy's seed limit: the plan stops where DLIO stops, with the sampler's words */
START_TEST (test_seed_limit)
{
    char err[512], err2[512];
    sb_sampler_cfg_t c = s_cfg (SB_SAMPLER_DLIO_INDEX, 100, 0, 1, 4, 4294967295ull - 40);
    c.served = 1;
    sb_plan_t *plan = sb_plan_new (&c, err, sizeof err);
    sb_sampler_t *s = sb_sampler_new (&c, err, sizeof err);
    ck_assert (plan && s);
    ck_assert_int_eq (sb_sampler_epoch (s, 1, err, sizeof err), -1);
    ck_assert_int_eq (sb_plan_epoch (plan, 1, err2, sizeof err2), -1);
    ck_assert_str_eq (err, err2);
    ck_assert_ptr_nonnull (strstr (err, "above 2**32-1"));
    sb_plan_destroy (&plan);
    sb_sampler_destroy (&s);
    /* no lists to plan without file_shuffle */
    c.file_shuffle = SB_SHUFFLE_OFF;
    ck_assert_ptr_null (sb_plan_new (&c, err, sizeof err));
}
END_TEST

/* a page that was not asked, or of the wrong length, is refused */
START_TEST (test_bad_page)
{
    char err[512];
    sb_sampler_cfg_t c = s_cfg (SB_SAMPLER_DLIO_INDEX, 10000, 0, 1, 2, 3);
    c.served = 1;
    c.first_rank = 1;
    c.nranks = 1;
    sb_sampler_t *s = sb_sampler_new (&c, err, sizeof err);
    ck_assert_ptr_nonnull (s);
    ck_assert_int_eq (sb_sampler_epoch (s, 1, err, sizeof err), 0);
    uint64_t files[SB_SAMPLER_PAGE] = { 0 };
    ck_assert_int_eq (sb_sampler_page_put (s, 1, 0, files, SB_SAMPLER_PAGE, err, sizeof err), -1);
    ck_assert_ptr_nonnull (strstr (err, "not asked"));
    ck_assert_int_eq (sb_sampler_page_ask (s, 0, 0, 0), -1);          /* not a rank of this sampler */
    ck_assert_int_eq (sb_sampler_page_ask (s, 1, 1, 0), 0);
    ck_assert_int_eq (sb_sampler_page_ask (s, 1, 1, 0), -1);          /* asked already */
    ck_assert_int_eq (sb_sampler_page_put (s, 1, 1, files, SB_SAMPLER_PAGE, err, sizeof err), -1);
    ck_assert_ptr_nonnull (strstr (err, "not 904"));                  /* 5000 files: page 1 has 904 */
    files[3] = 10000;
    ck_assert_int_eq (sb_sampler_page_put (s, 1, 1, files, 904, err, sizeof err), -1);
    ck_assert_ptr_nonnull (strstr (err, "catalog object 10000 of 10000"));
    files[3] = 9999;
    ck_assert_int_eq (sb_sampler_page_put (s, 1, 1, files, 904, err, sizeof err), 0);
    sb_sampler_destroy (&s);
}
END_TEST

static Suite *
s_suite (void)
{
    Suite *s = suite_create ("sampler_plan");
    TCase *tc = tcase_create ("core");
    tcase_set_timeout (tc, 120);
    tcase_add_test (tc, test_page_files);
    tcase_add_test (tc, test_index);
    tcase_add_test (tc, test_files);
    tcase_add_test (tc, test_iterative);
    tcase_add_test (tc, test_one_rank);
    tcase_add_test (tc, test_seed_limit);
    tcase_add_test (tc, test_bad_page);
    suite_add_tcase (s, tc);
    return s;
}

SB_CHECK_MAIN (s_suite)
