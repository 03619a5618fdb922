/* sampler_dump: print what sb_sampler gives every rank, in the lines of
 * tests/dlio_model.py, so that the model (numpy's generator and DLIO's rules)
 * can check it.
 *
 *   sampler_dump KIND LISTED EXPECTED SPF RANKS BATCH THREADS SEED
 *                SAMPLE_SHUFFLE FILE_SHUFFLE SEED_CHANGE_EPOCH MAX_STEPS EPOCHS
 *                FIRST_RANK NRANKS
 *   sampler_dump -           the same fields, one configuration a line on
 *                            stdin; each answer ends with a line "end"
 *   sampler_dump --bench KIND SAMPLES [FILES]   the time to prepare an epoch
 *                            and ns per sb_sampler_at call over SAMPLES
 *                            (FILES files, 1000 unless given; 8 ranks)
 *
 * With SB_SAMPLER_SERVED=1 in the environment the DLIO kinds with
 * file_shuffle run served (sampler.h cfg.served): every rank's lists are
 * planned by lib/dataset/sampler_plan.h, as the coordinator plans them, and
 * each read's page is put as it is first needed and dropped as soon as no
 * later position needs it (so pages come again and again): the output must
 * be the same.
 *
 * Per epoch: "epoch E files_per_rank F steps S samples_per_rank N dropped D
 * unused_files U", then "RANK EPOCH POSITION FILE SAMPLE THREAD" per read;
 * "error epoch E MESSAGE" ends the output where sb_sampler_epoch fails. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sampler.h"
#include "sampler_plan.h"

#define FIELDS 15

static int
s_parse (char **fields, sb_sampler_cfg_t *cfg, uint64_t *epochs)
{
    uint64_t v[FIELDS - 1];
    for (int i = 1; i < FIELDS; i++) {
        char *end;
        v[i - 1] = strtoull (fields[i], &end, 10);
        if (*fields[i] == '\0' || *end != '\0' || *fields[i] == '-') {
            fprintf (stderr, "sampler_dump: field %d is not a number: '%s'\n", i + 1, fields[i]);
            return -1;
        }
    }
    memset (cfg, 0, sizeof *cfg);
    if (sb_sampler_kind_parse (fields[0], &cfg->kind) != 0) {
        fprintf (stderr, "sampler_dump: unknown kind '%s'\n", fields[0]);
        return -1;
    }
    cfg->listed = v[0];
    cfg->expected = v[1];
    cfg->samples_per_file = v[2];
    cfg->ranks = v[3];
    cfg->batch_size = v[4];
    cfg->threads = v[5];
    cfg->seed = v[6];
    cfg->sample_shuffle = v[7] ? SB_SHUFFLE_SEED : SB_SHUFFLE_OFF;
    cfg->file_shuffle = v[8] ? SB_SHUFFLE_SEED : SB_SHUFFLE_OFF;
    cfg->seed_change_epoch = v[9] != 0;
    cfg->max_steps = v[10];
    *epochs = v[11];
    cfg->first_rank = v[12];
    cfg->nranks = v[13];
    return 0;
}

/* Print one configuration's epochs. Returns 0, or -1 when the sampler could
 * not be built (an error line is printed either way). */
/* served: the page of position p of rank r, from the plan, unless held */
static int
s_page_in (sb_sampler_t *sampler, const sb_plan_t *plan, uint64_t r, uint64_t p, char *err, size_t err_size)
{
    static uint64_t files[SB_SAMPLER_PAGE_MAX];
    uint64_t page;
    if (sb_sampler_page_of (sampler, r, p, &page, NULL) != 0) {
        snprintf (err, err_size, "no page for position %" PRIu64, p);
        return -1;
    }
    if (sb_sampler_page_state (sampler, r, page) == 2) {
        sb_sampler_page_touch (sampler, r, page, p);
        return 0;
    }
    uint64_t f = sb_plan_files_per_rank (plan), per = sb_plan_page_files (plan), first = page * per;
    uint64_t n = f - first < per ? f - first : per;
    if (sb_sampler_page_ask (sampler, r, page, p) != 0 || sb_plan_files (plan, r, first, n, files) != 0) {
        snprintf (err, err_size, "cannot ask page %" PRIu64, page);
        return -1;
    }
    return sb_sampler_page_put (sampler, r, page, files, (size_t) n, err, err_size);
}

static int
s_dump (const sb_sampler_cfg_t *given, uint64_t epochs, FILE *out)
{
    char err[512];
    sb_sampler_cfg_t served = *given;
    const char *env = getenv ("SB_SAMPLER_SERVED");
    served.served = env && strcmp (env, "1") == 0 && given->file_shuffle != SB_SHUFFLE_OFF
        && given->kind != SB_SAMPLER_GLOBAL;
    const sb_sampler_cfg_t *cfg = &served;
    sb_sampler_t *sampler = sb_sampler_new (cfg, err, sizeof err);
    if (!sampler) {
        fprintf (out, "error epoch 1 %s\n", err);
        return -1;
    }
    sb_plan_t *plan = NULL;
    if (cfg->served && !(plan = sb_plan_new (cfg, err, sizeof err))) {
        fprintf (out, "error epoch 1 %s\n", err);
        sb_sampler_destroy (&sampler);
        return -1;
    }
    for (uint64_t e = 1; e <= epochs; e++) {
        if (sb_sampler_epoch (sampler, e, err, sizeof err) != 0) {
            fprintf (out, "error epoch %" PRIu64 " %s\n", e, err);
            break;
        }
        /* the plan in its thread, as the coordinator runs it */
        if (plan && (sb_plan_start (plan, e, err, sizeof err) != 0 || sb_plan_wait (plan, NULL, err, sizeof err) != 0)) {
            fprintf (out, "error epoch %" PRIu64 " %s\n", e, err);
            break;
        }
        const sb_sampler_epoch_t *info = sb_sampler_info (sampler);
        fprintf (out, "epoch %" PRIu64 " files_per_rank %" PRIu64 " steps %" PRIu64 " samples_per_rank %" PRIu64
                 " dropped %" PRIu64 " unused_files %" PRIu64 "\n", info->epoch, info->files_per_rank,
                 info->steps, info->samples_per_rank, info->dropped, info->unused_files);
        for (uint64_t r = cfg->first_rank; r < cfg->first_rank + cfg->nranks; r++)
            for (uint64_t p = 0; p < info->samples_per_rank; p++) {
                sb_sample_ref_t ref;
                if (plan && s_page_in (sampler, plan, r, p, err, sizeof err) != 0) {
                    fprintf (out, "error epoch %" PRIu64 " rank %" PRIu64 ": %s\n", e, r, err);
                    sb_plan_destroy (&plan);
                    sb_sampler_destroy (&sampler);
                    return 0;
                }
                if (sb_sampler_at (sampler, r, p, &ref) != 0) {
                    fprintf (out, "error epoch %" PRIu64 " sb_sampler_at refused rank %" PRIu64 " position %"
                             PRIu64 "\n", e, r, p);
                    sb_plan_destroy (&plan);
                    sb_sampler_destroy (&sampler);
                    return 0;
                }
                if (plan)   /* the rank never reads below p + 1 again here */
                    sb_sampler_page_release (sampler, r, p + 1);
                fprintf (out, "%" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n",
                         r, e, p, ref.file, ref.sample, ref.thread);
            }
        sb_sample_ref_t ref;   /* one past the end is refused */
        if (sb_sampler_at (sampler, cfg->first_rank, info->samples_per_rank, &ref) == 0)
            fprintf (out, "error epoch %" PRIu64 " sb_sampler_at answered past the epoch\n", e);
    }
    sb_plan_destroy (&plan);
    sb_sampler_destroy (&sampler);
    return 0;
}

static double
s_now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ns per sb_sampler_at over `samples` positions of rank 0 of 8 (`files`
 * files), file and sample shuffles on, 8 threads, batch 64. */
static int
s_bench (const char *kind_name, uint64_t samples, uint64_t files)
{
    uint64_t per_rank_files = files / 8 ? files / 8 : 1;
    sb_sampler_cfg_t cfg = {
        .listed = files, .samples_per_file = samples / per_rank_files ? samples / per_rank_files : 1, .ranks = 8,
        .batch_size = 64,
        .threads = 8, .seed = 123, .sample_shuffle = SB_SHUFFLE_SEED, .file_shuffle = SB_SHUFFLE_SEED,
        .seed_change_epoch = 1, .first_rank = 0, .nranks = 1,
    };
    if (sb_sampler_kind_parse (kind_name, &cfg.kind) != 0) {
        fprintf (stderr, "sampler_dump: unknown kind '%s'\n", kind_name);
        return 1;
    }
    char err[512];
    sb_sampler_t *sampler = sb_sampler_new (&cfg, err, sizeof err);
    if (!sampler) {
        fprintf (stderr, "sampler_dump: %s\n", err);
        return 1;
    }
    double t0 = s_now ();
    if (sb_sampler_epoch (sampler, 1, err, sizeof err) != 0) {
        fprintf (stderr, "sampler_dump: %s\n", err);
        sb_sampler_destroy (&sampler);
        return 1;
    }
    double t1 = s_now ();
    const sb_sampler_epoch_t *info = sb_sampler_info (sampler);
    uint64_t sum = 0;
    for (uint64_t p = 0; p < info->samples_per_rank; p++) {
        sb_sample_ref_t ref;
        if (sb_sampler_at (sampler, 0, p, &ref) != 0) {
            fprintf (stderr, "sampler_dump: position %" PRIu64 " refused\n", p);
            sb_sampler_destroy (&sampler);
            return 1;
        }
        sum += ref.file ^ ref.sample ^ ref.thread;
    }
    double t2 = s_now ();
    printf ("%s: %" PRIu64 " files, %" PRIu64 " samples per rank, epoch prepared in %.1f ms, sb_sampler_at %.1f ns/call (checksum %" PRIu64 ")\n",
            kind_name, files, info->samples_per_rank, (t1 - t0) * 1e3,
            (t2 - t1) * 1e9 / (double) info->samples_per_rank, sum);
    sb_sampler_destroy (&sampler);
    return 0;
}

int
main (int argc, char **argv)
{
    if ((argc == 4 || argc == 5) && strcmp (argv[1], "--bench") == 0)
        return s_bench (argv[2], strtoull (argv[3], NULL, 10), argc == 5 ? strtoull (argv[4], NULL, 10) : 1000);
    sb_sampler_cfg_t cfg;
    uint64_t epochs;
    if (argc == FIELDS + 1) {
        if (s_parse (argv + 1, &cfg, &epochs) != 0)
            return 2;
        s_dump (&cfg, epochs, stdout);
        return 0;
    }
    if (argc != 2 || strcmp (argv[1], "-") != 0) {
        fprintf (stderr, "usage: sampler_dump KIND LISTED EXPECTED SPF RANKS BATCH THREADS SEED SAMPLE_SHUFFLE"
                 " FILE_SHUFFLE SEED_CHANGE_EPOCH MAX_STEPS EPOCHS FIRST_RANK NRANKS\n"
                 "       sampler_dump -   (those fields a line on stdin)\n"
                 "       sampler_dump --bench KIND SAMPLES [FILES]\n");
        return 2;
    }
    char line[1024];
    while (fgets (line, sizeof line, stdin)) {
        char *fields[FIELDS];
        int n = 0;
        for (char *tok = strtok (line, " \t\n"); tok && n < FIELDS + 1; tok = strtok (NULL, " \t\n"))
            if (n < FIELDS)
                fields[n++] = tok;
            else
                n++;
        if (n != FIELDS) {
            fprintf (stderr, "sampler_dump: a line needs %d fields, got %d\n", FIELDS, n);
            return 2;
        }
        if (s_parse (fields, &cfg, &epochs) != 0)
            return 2;
        s_dump (&cfg, epochs, stdout);
        printf ("end\n");
    }
    return ferror (stdin) ? 1 : 0;
}
