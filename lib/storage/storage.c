/* storage: names of storage settings and their WELCOME encoding. */
#include "storage.h"
#include "engine.h"
#include "proto.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *
sb_storage_lb_name (sb_lb_t lb)
{
    return lb == SB_LB_LEAST_CONNECTIONS ? "least_connections" : lb == SB_LB_PER_RANK ? "per_rank" : "round_robin";
}

void
sb_storage_for_rank (const sb_storage_cfg_t *cfg, uint64_t rank, sb_storage_cfg_t *out)
{
    if (out != cfg)
        *out = *cfg;
    if (cfg->lb != SB_LB_PER_RANK || cfg->nendpoints < 2)
        return;
    size_t i = (size_t) (rank % cfg->nendpoints);
    if (i != 0)
        memcpy (out->endpoints[0], cfg->endpoints[i], sizeof out->endpoints[0]);
    out->nendpoints = 1;
}

int
sb_storage_endpoint_normalize (char *endpoint, size_t size)
{
    size_t n = strlen (endpoint);
    if (n && !strstr (endpoint, "://") && n + 7 < size) {
        /* HOST:PORT gets http:// in front (the copy is built aside: GCC's
         * bounds check cannot follow an in-place shift of a caller's array) */
        char with_scheme[1024];
        if (n + 8 > sizeof with_scheme)
            return -1;
        memcpy (with_scheme, "http://", 7);
        memcpy (with_scheme + 7, endpoint, n + 1);
        memcpy (endpoint, with_scheme, n + 8);
    }
    const char *host = strncmp (endpoint, "http://", 7) == 0 ? endpoint + 7
                     : strncmp (endpoint, "https://", 8) == 0 ? endpoint + 8 : NULL;
    if (!host || !*host || *host == '/')
        return -1;
    return 0;
}

int
sb_storage_to_welcome (const sb_storage_cfg_t *cfg, void *welcome)
{
    sb_msg_welcome_t *w = welcome;
    w->engine = (char *) cfg->engine;
    w->store = (char *) cfg->store;
    w->endpoints.count = 0;
    w->engine_opts.count = 0;
    /* one block: the endpoints' pointers, the options' pointers, then the
     * options' "key=value" texts, so that freeing endpoints.items frees all */
    size_t nopts = cfg->nopts < SB_STORAGE_OPTS_MAX ? cfg->nopts : SB_STORAGE_OPTS_MAX;
    size_t text = sizeof cfg->opts[0].engine + sizeof cfg->opts[0].key + sizeof cfg->opts[0].value + 2;
    size_t npointers = cfg->nendpoints + nopts + 1;
    char **block = calloc (1, npointers * sizeof (char *) + nopts * text);
    if (!block)
        return -1;
    w->endpoints.items = block;
    for (size_t i = 0; i < cfg->nendpoints; i++)
        w->endpoints.items[w->endpoints.count++] = (char *) cfg->endpoints[i];
    w->engine_opts.items = block + cfg->nendpoints;
    char *texts = (char *) (block + npointers);
    for (size_t i = 0; i < nopts; i++) {
        char *t = texts + i * text;
        snprintf (t, text, "%s.%s=%s", cfg->opts[i].engine, cfg->opts[i].key, cfg->opts[i].value);
        w->engine_opts.items[w->engine_opts.count++] = t;
    }
    w->load_balance = (char *) sb_storage_lb_name (cfg->lb);
    w->max_in_flight = cfg->max_in_flight;
    w->connect_timeout_ms = (uint64_t) (cfg->connect_timeout_s * 1000);
    w->request_timeout_ms = (uint64_t) (cfg->request_timeout_s * 1000);
    w->max_retries = cfg->max_retries;
    w->loader_depth = cfg->loader_depth;
    return 0;
}

int
sb_storage_from_welcome (const void *welcome, sb_storage_cfg_t *cfg, char *err, size_t err_size)
{
    const sb_msg_welcome_t *w = welcome;
    memset (cfg, 0, sizeof *cfg);
    if (strlen (w->engine) >= sizeof cfg->engine || !sb_engine_find (w->engine)) {
        snprintf (err, err_size, "the storage engine '%.32s' is not built into this worker", w->engine);
        return -1;
    }
    snprintf (cfg->engine, sizeof cfg->engine, "%s", w->engine);
    if (w->engine_opts.count > SB_STORAGE_OPTS_MAX) {
        snprintf (err, err_size, "%zu options of the %s storage engine: at most %d", (size_t) w->engine_opts.count,
                  cfg->engine, SB_STORAGE_OPTS_MAX);
        return -1;
    }
    for (size_t i = 0; i < w->engine_opts.count; i++) {
        const char *kv = w->engine_opts.items[i], *eq = strchr (kv, '='), *dot = strchr (kv, '.');
        if (!eq || !dot || dot == kv || dot > eq || dot + 1 == eq
            || (size_t) (dot - kv) >= sizeof cfg->opts[0].engine || (size_t) (eq - dot - 1) >= sizeof cfg->opts[0].key
            || strlen (eq + 1) >= sizeof cfg->opts[0].value) {
            snprintf (err, err_size, "option %zu of the %s storage engine is not engine.key=value within bounds", i + 1,
                      cfg->engine);
            return -1;
        }
        snprintf (cfg->opts[cfg->nopts].engine, sizeof cfg->opts[0].engine, "%.*s", (int) (dot - kv), kv);
        snprintf (cfg->opts[cfg->nopts].key, sizeof cfg->opts[0].key, "%.*s", (int) (eq - dot - 1), dot + 1);
        snprintf (cfg->opts[cfg->nopts].value, sizeof cfg->opts[0].value, "%s", eq + 1);
        cfg->nopts++;
    }
    if (w->endpoints.count > SB_MAX_ENDPOINTS || strlen (w->store) >= sizeof cfg->store) {
        snprintf (err, err_size, "storage settings out of bounds");
        return -1;
    }
    snprintf (cfg->store, sizeof cfg->store, "%s", w->store);
    for (size_t i = 0; i < w->endpoints.count; i++) {
        if (strlen (w->endpoints.items[i]) >= sizeof cfg->endpoints[0]) {
            snprintf (err, err_size, "endpoint too long");
            return -1;
        }
        snprintf (cfg->endpoints[cfg->nendpoints++], sizeof cfg->endpoints[0], "%s", w->endpoints.items[i]);
    }
    if (!strcmp (w->load_balance, "least_connections"))
        cfg->lb = SB_LB_LEAST_CONNECTIONS;
    else if (!strcmp (w->load_balance, "per_rank"))
        cfg->lb = SB_LB_PER_RANK;
    else if (!strcmp (w->load_balance, "round_robin"))
        cfg->lb = SB_LB_ROUND_ROBIN;
    else {
        snprintf (err, err_size, "unknown load balancing '%.64s'", w->load_balance);
        return -1;
    }
    cfg->max_in_flight = w->max_in_flight ? w->max_in_flight : 1;
    cfg->connect_timeout_s = (double) w->connect_timeout_ms / 1000.0;
    cfg->request_timeout_s = (double) w->request_timeout_ms / 1000.0;
    cfg->max_retries = w->max_retries;
    cfg->loader_depth = w->loader_depth;
    return 0;
}

void
sb_storage_cfg_local (sb_storage_cfg_t *cfg)
{
    memset (cfg, 0, sizeof *cfg);
    snprintf (cfg->engine, sizeof cfg->engine, "file");
}

int
sb_storage_engine_from_uri (const char *data_folder, sb_storage_cfg_t *cfg)
{
    if (strncmp (data_folder, "synthetic://", 12) != 0)
        return 0;
    snprintf (cfg->engine, sizeof cfg->engine, "synthetic");
    return 1;
}
