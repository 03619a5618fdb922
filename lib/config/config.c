/* config: YAML (libyaml document API) flattened into dotted keys with origins. */
#include "config.h"
#include "util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

typedef struct {
    sb_config_entry_t pub;
    char  *key;
    char  *value;
    char **items;
    char  *origin;
    unsigned load;          /* the sb_config_load_string call that set it; 0: an override */
    int   interpolated;     /* sb_config_interpolate resolved it: its text is final */
} s_entry_t;

/* A workload has about a hundred keys; the bound stops YAML aliases from
 * expanding a small file into millions of keys ("billion laughs"). */
#define S_MAX_ENTRIES 4096
/* Nodes walked in one load, counting every expansion of an alias or a
 * merge key: empty mappings set no key, so S_MAX_ENTRIES alone would not
 * stop "a: &a {x: {}, y: {}}, b: &b {x: *a, y: *a}, ..." from doubling the
 * work at each level. */
#define S_MAX_VISITS (4 * S_MAX_ENTRIES)
/* Nesting levels of collections. libyaml's scanner takes time quadratic in
 * the depth of flow collections ("[[[[...": 400 KB took 95 s), so the
 * depth is checked on the event stream (s_prescan) before the document is
 * composed; the scanner only ever runs S_MAX_DEPTH levels deep. */
#define S_MAX_DEPTH 64
/* libyaml's composer looks up each alias in a list of all anchors: a file
 * of thousands of anchors and aliases is quadratic too (20,000 of each in
 * 390 KB: 2 s). A workload needs a handful. */
#define S_MAX_ANCHORS 256
#define S_MAX_ALIASES 1024
#define S_MAX_ANCHOR_LEN 128

struct sb_config {
    s_entry_t *entries;
    size_t     count;
    size_t     alloc;
    unsigned   load;        /* current load; 0 outside sb_config_load_string */
    unsigned   loads;       /* loads so far */
    size_t     visits;      /* nodes walked in the current load (S_MAX_VISITS) */
};

sb_config_t *
sb_config_new (void)
{
    return calloc (1, sizeof (sb_config_t));
}

static void
s_entry_free (s_entry_t *e)
{
    free (e->key);
    free (e->value);
    if (e->items)
        for (size_t i = 0; e->items[i]; i++)
            free (e->items[i]);
    free (e->items);
    free (e->origin);
}

void
sb_config_destroy (sb_config_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    sb_config_t *self = *self_p;
    for (size_t i = 0; i < self->count; i++)
        s_entry_free (&self->entries[i]);
    free (self->entries);
    free (self);
    *self_p = NULL;
}

static void
s_entry_sync (s_entry_t *e)
{
    e->pub.key = e->key;
    e->pub.value = e->value;
    e->pub.items = (const char **) e->items;
    e->pub.origin = e->origin;
}

/* Store key = value (or list); takes ownership of value/items on success. */
static int
s_set (sb_config_t *self, const char *key, char *value, char **items, size_t nitems,
       const char *origin, int line)
{
    s_entry_t *e = NULL;
    for (size_t i = 0; i < self->count; i++)
        if (strcmp (self->entries[i].key, key) == 0) {
            e = &self->entries[i];
            break;
        }
    char *origin_copy = strdup (origin);
    if (!origin_copy)
        return -1;
    if (!e) {
        if (self->count == self->alloc) {
            size_t alloc = self->alloc ? self->alloc * 2 : 32;
            s_entry_t *grown = realloc (self->entries, alloc * sizeof *grown);
            if (!grown) {
                free (origin_copy);
                return -1;
            }
            self->entries = grown;
            self->alloc = alloc;
        }
        e = &self->entries[self->count];
        memset (e, 0, sizeof *e);
        if (!(e->key = strdup (key))) {
            free (origin_copy);
            return -1;
        }
        self->count++;
    }
    else {
        char *k = e->key;
        e->key = NULL;
        s_entry_free (e);
        memset (e, 0, sizeof *e);
        e->key = k;
    }
    e->value = value;
    e->items = items;
    e->origin = origin_copy;
    e->pub.nitems = nitems;
    e->pub.line = line;
    e->load = self->load;
    s_entry_sync (e);
    /* Entries may have moved on realloc: refresh every public view. */
    for (size_t i = 0; i < self->count; i++)
        s_entry_sync (&self->entries[i]);
    return 0;
}

static char *
s_scalar_text (yaml_node_t *node)
{
    char *s = malloc (node->data.scalar.length + 1);
    if (s) {
        memcpy (s, node->data.scalar.value, node->data.scalar.length);
        s[node->data.scalar.length] = '\0';
    }
    return s;
}

/* The entry this load already set for key, or for a key below it (a
 * section written twice); NULL when there is none. */
static const s_entry_t *
s_set_earlier (const sb_config_t *self, const char *key)
{
    size_t n = strlen (key);
    for (size_t i = 0; i < self->count; i++) {
        const s_entry_t *e = &self->entries[i];
        if (e->load == self->load && strncmp (e->key, key, n) == 0 && (e->key[n] == '\0' || e->key[n] == '.'))
            return e;
    }
    return NULL;
}

static int s_walk_pair (sb_config_t *self, yaml_document_t *doc, yaml_node_t *k, yaml_node_t *v, const char *prefix,
                        int depth, const char *origin, char *err, size_t err_size);

/* 1 when text is a boolean of YAML 1.1 as PyYAML's resolver reads a plain
 * scalar (the spellings of its bool pattern), which OmegaConf's loader keeps */
static int
s_yaml11_bool (const char *text)
{
    static const char *const words[] = { "yes", "Yes", "YES", "no", "No", "NO", "true", "True", "TRUE", "false",
                                         "False", "FALSE", "on", "On", "ON", "off", "Off", "OFF" };
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (!strcmp (text, words[i]))
            return 1;
    return 0;
}

/* Set key's is_bool (sb_config_entry_t). */
static void
s_mark_bool (sb_config_t *self, const char *key, int is_bool)
{
    for (size_t i = 0; i < self->count; i++)
        if (strcmp (self->entries[i].key, key) == 0)
            self->entries[i].pub.is_bool = is_bool;
}

/* Count one node walked or merged; -1 with the message past S_MAX_VISITS. */
static int
s_visit (sb_config_t *self, int line, const char *prefix, const char *origin, char *err, size_t err_size)
{
    if (++self->visits <= S_MAX_VISITS)
        return 0;
    snprintf (err, err_size, "%s:%d: key '%s': more than %d nodes after expanding aliases and merge keys (the limit)",
              origin, line, *prefix ? prefix : "(top)", S_MAX_VISITS);
    return -1;
}

/* Whether key node k is YAML's merge key "<<": a plain scalar (a quoted
 * "<<" is an ordinary key) or one tagged !!merge. libyaml's composer gives
 * untagged plain scalars the !!str tag, so `!!str <<` reads as a merge key
 * too. */
static int
s_is_merge_key (const yaml_node_t *k)
{
    if (k->type != YAML_SCALAR_NODE || k->data.scalar.length != 2 || memcmp (k->data.scalar.value, "<<", 2) != 0)
        return 0;
    const char *tag = (const char *) k->tag;
    if (tag && strcmp (tag, "tag:yaml.org,2002:merge") == 0)
        return 1;
    return k->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && (!tag || strcmp (tag, YAML_STR_TAG) == 0);
}

/* The key-value pairs of a mapping with its merge keys applied. */
typedef struct {
    yaml_node_t **keys, **values;
    size_t        count, alloc;
} s_pairs_t;

static int
s_same_key (const yaml_node_t *a, const yaml_node_t *b)
{
    return a->type == YAML_SCALAR_NODE && b->type == YAML_SCALAR_NODE
        && a->data.scalar.length == b->data.scalar.length
        && memcmp (a->data.scalar.value, b->data.scalar.value, a->data.scalar.length) == 0;
}

/* Append k: v to pairs; with `merged`, only when no pair has key k yet
 * (the YAML merge key spec: the mapping's own keys and those of earlier
 * merged mappings win). Returns 0 or -1 (out of memory, or too many). */
static int
s_pairs_add (sb_config_t *self, s_pairs_t *pairs, yaml_node_t *k, yaml_node_t *v, int merged, const char *prefix,
             const char *origin, char *err, size_t err_size)
{
    /* every candidate counts, kept or not: merging [*a, *a] at each of
     * many levels would otherwise do exponential work for one key */
    if (s_visit (self, (int) k->start_mark.line + 1, prefix, origin, err, err_size) != 0)
        return -1;
    if (merged)
        for (size_t i = 0; i < pairs->count; i++)
            if (s_same_key (pairs->keys[i], k))
                return 0;
    if (pairs->count >= S_MAX_ENTRIES) {
        snprintf (err, err_size, "%s:%d: key '%s': more than %d keys in one mapping after expanding aliases and"
                  " merge keys (the limit)", origin, (int) k->start_mark.line + 1, *prefix ? prefix : "(top)",
                  S_MAX_ENTRIES);
        return -1;
    }
    if (pairs->count == pairs->alloc) {
        size_t alloc = pairs->alloc ? 2 * pairs->alloc : 16;
        yaml_node_t **keys = realloc (pairs->keys, alloc * sizeof *keys);
        if (keys)
            pairs->keys = keys;
        yaml_node_t **values = keys ? realloc (pairs->values, alloc * sizeof *values) : NULL;
        if (!values) {
            snprintf (err, err_size, "%s:%d: out of memory", origin, (int) k->start_mark.line + 1);
            return -1;
        }
        pairs->values = values;
        pairs->alloc = alloc;
    }
    pairs->keys[pairs->count] = k;
    pairs->values[pairs->count] = v;
    pairs->count++;
    return 0;
}

/* Collect the pairs of mapping `node` under `prefix`: its own pairs in
 * order, then those of the mappings its merge keys (`<<: *a`, `<<: [*a,
 * *b]`) name, in order, each with its own merge keys applied, keeping the
 * first pair for a key. `depth` counts merges within merges (a mapping
 * merging itself through an alias is a cycle). Returns 0 or -1. */
static int
s_mapping_pairs (sb_config_t *self, yaml_document_t *doc, yaml_node_t *node, s_pairs_t *pairs, int merged,
                 int depth, const char *prefix, const char *origin, char *err, size_t err_size)
{
    if (depth > S_MAX_DEPTH) {
        snprintf (err, err_size, "%s:%d: key '%s%s<<': merge keys nested deeper than %d levels (a mapping"
                  " merging itself?)", origin, (int) node->start_mark.line + 1, prefix, *prefix ? "." : "",
                  S_MAX_DEPTH);
        return -1;
    }
    if (s_visit (self, (int) node->start_mark.line + 1, prefix, origin, err, err_size) != 0)
        return -1;
    for (yaml_node_pair_t *p = node->data.mapping.pairs.start; p < node->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node (doc, p->key);
        yaml_node_t *v = yaml_document_get_node (doc, p->value);
        if (k && v && !s_is_merge_key (k) && s_pairs_add (self, pairs, k, v, merged, prefix, origin, err, err_size) != 0)
            return -1;
    }
    for (yaml_node_pair_t *p = node->data.mapping.pairs.start; p < node->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node (doc, p->key);
        yaml_node_t *v = yaml_document_get_node (doc, p->value);
        if (!k || !v || !s_is_merge_key (k))
            continue;
        int line = (int) k->start_mark.line + 1;
        yaml_node_item_t *items = NULL;
        size_t n = 1;
        if (v->type == YAML_SEQUENCE_NODE) {
            items = v->data.sequence.items.start;
            n = (size_t) (v->data.sequence.items.top - items);
        }
        for (size_t i = 0; i < n; i++) {
            yaml_node_t *src = items ? yaml_document_get_node (doc, items[i]) : v;
            if (!src || src->type != YAML_MAPPING_NODE) {
                snprintf (err, err_size, "%s:%d: key '%s%s<<': a merge key takes a mapping or a list of mappings"
                          " (an alias like *defaults)", origin, src ? (int) src->start_mark.line + 1 : line, prefix,
                          *prefix ? "." : "");
                return -1;
            }
            if (s_mapping_pairs (self, doc, src, pairs, 1, depth + 1, prefix, origin, err, err_size) != 0)
                return -1;
        }
    }
    return 0;
}

static int
s_walk (sb_config_t *self, yaml_document_t *doc, yaml_node_t *node, const char *prefix, int depth,
        const char *origin, char *err, size_t err_size)
{
    int line = (int) node->start_mark.line + 1;
    /* aliases can nest a mapping in itself: bound depth and work */
    if (depth > S_MAX_DEPTH) {
        char shown[128];
        snprintf (shown, sizeof shown, "%s", prefix);
        if (strlen (prefix) > 120)
            strcpy (shown + 117, "...");    /* as s_level_path shortens */
        snprintf (err, err_size, "%s:%d: key '%s': nested deeper than %d levels through aliases (the limit)",
                  origin, line, shown, S_MAX_DEPTH);
        return -1;
    }
    if (s_visit (self, line, prefix, origin, err, err_size) != 0)
        return -1;
    if (node->type == YAML_SCALAR_NODE) {
        char *value = s_scalar_text (node);
        /* DLIO's older spelling `model: unet3d` names the model */
        const char *key = strcmp (prefix, "model") == 0 ? "model.name" : prefix;
        if (!value || s_set (self, key, value, NULL, 0, origin, line) != 0) {
            free (value);
            snprintf (err, err_size, "%s:%d: out of memory", origin, line);
            return -1;
        }
        const char *tag = (const char *) node->tag;
        s_mark_bool (self, key, node->data.scalar.style == YAML_PLAIN_SCALAR_STYLE
                                && (!tag || !strcmp (tag, YAML_STR_TAG) || !strcmp (tag, YAML_BOOL_TAG))
                                && s_yaml11_bool (value));
        return 0;
    }
    if (node->type == YAML_SEQUENCE_NODE) {
        size_t n = (size_t) (node->data.sequence.items.top - node->data.sequence.items.start);
        /* A list of mappings (DLIO's dataset.parquet.columns: [{name: ..,
         * dtype: ..}, ..]) becomes keys "prefix.0.name", "prefix.1.name", ... */
        size_t mappings = 0;
        for (size_t i = 0; i < n; i++) {
            yaml_node_t *item = yaml_document_get_node (doc, node->data.sequence.items.start[i]);
            mappings += item && item->type == YAML_MAPPING_NODE;
        }
        if (n > 0 && mappings == n) {
            for (size_t i = 0; i < n; i++) {
                char key[512];
                int w = snprintf (key, sizeof key, "%s.%zu", prefix, i);
                yaml_node_t *item = yaml_document_get_node (doc, node->data.sequence.items.start[i]);
                if (w < 0 || (size_t) w >= sizeof key) {
                    snprintf (err, err_size, "%s:%d: key '%s': name too long", origin, line, prefix);
                    return -1;
                }
                if (s_walk (self, doc, item, key, depth + 1, origin, err, err_size) != 0)
                    return -1;
            }
            return 0;
        }
        char **items = calloc (n + 1, sizeof (char *));
        if (!items) {
            snprintf (err, err_size, "%s:%d: out of memory", origin, line);
            return -1;
        }
        for (size_t i = 0; i < n; i++) {
            yaml_node_t *item = yaml_document_get_node (doc, node->data.sequence.items.start[i]);
            if (!item || item->type != YAML_SCALAR_NODE) {
                snprintf (err, err_size, "%s:%d: key '%s': list items must be plain values",
                          origin, item ? (int) item->start_mark.line + 1 : line, prefix);
                goto fail;
            }
            if (!(items[i] = s_scalar_text (item))) {
                snprintf (err, err_size, "%s:%d: out of memory", origin, line);
                goto fail;
            }
        }
        if (s_set (self, prefix, NULL, items, n, origin, line) == 0)
            return 0;
        snprintf (err, err_size, "%s:%d: out of memory", origin, line);
    fail:
        for (size_t i = 0; i < n; i++)
            free (items[i]);
        free (items);
        return -1;
    }
    /* mapping, merge keys applied */
    s_pairs_t pairs = { 0 };
    int rc = s_mapping_pairs (self, doc, node, &pairs, 0, 0, prefix, origin, err, err_size);
    for (size_t i = 0; rc == 0 && i < pairs.count; i++)
        rc = s_walk_pair (self, doc, pairs.keys[i], pairs.values[i], prefix, depth, origin, err, err_size);
    free (pairs.keys);
    free (pairs.values);
    return rc;
}

/* Walk the pair k: v of a mapping under prefix. */
static int
s_walk_pair (sb_config_t *self, yaml_document_t *doc, yaml_node_t *k, yaml_node_t *v, const char *prefix,
             int depth, const char *origin, char *err, size_t err_size)
{
    if (k->type != YAML_SCALAR_NODE) {
        snprintf (err, err_size, "%s:%d: mapping keys must be plain names%s%s", origin,
                  (int) k->start_mark.line + 1, *prefix ? " under " : "", prefix);
        return -1;
    }
    char key[512];
    int n = snprintf (key, sizeof key, "%s%s%.*s", prefix, *prefix ? "." : "",
                      (int) k->data.scalar.length, (const char *) k->data.scalar.value);
    if (n < 0 || (size_t) n >= sizeof key || k->data.scalar.length == 0
        || memchr (k->data.scalar.value, '.', k->data.scalar.length)) {
        snprintf (err, err_size, "%s:%d: invalid key '%.*s'", origin, (int) k->start_mark.line + 1,
                  (int) k->data.scalar.length, (const char *) k->data.scalar.value);
        return -1;
    }
    /* OmegaConf, which reads DLIO's YAML, refuses a repeated key too:
     * silently keeping one of the two would run another workload. */
    const s_entry_t *dup = s_set_earlier (self, key);
    if (dup) {
        snprintf (err, err_size, "%s:%d: key '%s' appears twice (first at line %d)", origin,
                  (int) k->start_mark.line + 1, key, dup->pub.line);
        return -1;
    }
    if (self->count >= S_MAX_ENTRIES) {
        snprintf (err, err_size, "%s:%d: more than %d keys (aliases expanding?)", origin,
                  (int) k->start_mark.line + 1, S_MAX_ENTRIES);
        return -1;
    }
    return s_walk (self, doc, v, key, depth + 1, origin, err, err_size);
}

/* "origin:line: malformed YAML: problem [context started at line N]". */
static void
s_yaml_error (const yaml_parser_t *parser, const char *text, const char *origin, char *err, size_t err_size)
{
    /* libyaml says "cannot start any token" for a tab; say why */
    size_t at = parser->problem_mark.index;
    const char *hint = at < strlen (text) && text[at] == '\t' ? " (indent YAML with spaces, not tabs)" : "";
    if (parser->context)
        snprintf (err, err_size, "%s:%d: malformed YAML: %s %s started at line %d%s", origin,
                  (int) (parser->problem_mark.line + 1), parser->problem ? parser->problem : "parse error",
                  parser->context, (int) (parser->context_mark.line + 1), hint);
    else
        snprintf (err, err_size, "%s:%d: malformed YAML: %s%s", origin, (int) (parser->problem_mark.line + 1),
                  parser->problem ? parser->problem : "parse error", hint);
}

/* One open collection while s_prescan reads the events: the key (or item
 * index) its current child sits under, for the error message. */
typedef struct {
    int    mapping;
    int    expect_key;          /* mapping: the next node is a key */
    size_t index;               /* sequence: items so far */
    char   key[40];             /* truncated; "?" for a complex key */
} s_level_t;

/* "key 'a.b.0': " for the dotted path of the first `depth` levels
 * (shortened to about 120 bytes), "" at the top. */
static void
s_level_path (const s_level_t *levels, int depth, char *path, size_t path_size)
{
    char dotted[160] = "";
    size_t n = 0;
    for (int i = 0; i < depth; i++) {
        int w = snprintf (dotted + n, sizeof dotted - n, "%s%s", i ? "." : "", levels[i].key);
        if (w < 0)
            break;
        n += (size_t) w;
        if (n > 120) {
            snprintf (dotted + 117, sizeof dotted - 117, "...");
            break;
        }
    }
    if (*dotted)
        snprintf (path, path_size, "key '%s': ", dotted);
    else
        snprintf (path, path_size, "%s", "");
}

/* Read the whole event stream of text once, before libyaml composes it,
 * and refuse a file nested deeper than S_MAX_DEPTH or holding more than
 * S_MAX_ANCHORS anchors or S_MAX_ALIASES aliases (or too long an anchor
 * name): stopping at the first event past a limit keeps libyaml's
 * quadratic scanner and composer small. Syntax errors are reported here,
 * as the composer would. Returns 0, or -1 with "origin:line: ..." in err. */
static int
s_prescan (const char *text, const char *origin, char *err, size_t err_size)
{
    yaml_parser_t parser;
    if (!yaml_parser_initialize (&parser)) {
        snprintf (err, err_size, "%s: cannot initialise the YAML parser", origin);
        return -1;
    }
    yaml_parser_set_input_string (&parser, (const unsigned char *) text, strlen (text));
    s_level_t levels[S_MAX_DEPTH];
    int depth = 0, rc = -1;
    size_t anchors = 0, aliases = 0;
    char path[192];
    for (;;) {
        yaml_event_t ev;
        if (!yaml_parser_parse (&parser, &ev)) {
            s_yaml_error (&parser, text, origin, err, err_size);
            break;
        }
        int line = (int) ev.start_mark.line + 1;
        const yaml_char_t *anchor = NULL;
        int node = 0;
        switch (ev.type) {
        case YAML_SCALAR_EVENT:
            anchor = ev.data.scalar.anchor;
            node = 1;
            break;
        case YAML_SEQUENCE_START_EVENT:
            anchor = ev.data.sequence_start.anchor;
            node = 1;
            break;
        case YAML_MAPPING_START_EVENT:
            anchor = ev.data.mapping_start.anchor;
            node = 1;
            break;
        case YAML_ALIAS_EVENT:
            anchor = ev.data.alias.anchor;
            node = 1;
            break;
        default:
            break;
        }
        if (node && depth > 0) {
            /* name the position of this node in its parent */
            s_level_t *parent = &levels[depth - 1];
            if (!parent->mapping)
                snprintf (parent->key, sizeof parent->key, "%zu", parent->index++);
            else if (parent->expect_key) {
                if (ev.type == YAML_SCALAR_EVENT)
                    snprintf (parent->key, sizeof parent->key, "%.*s", (int) (sizeof parent->key - 1),
                              (const char *) ev.data.scalar.value);
                else
                    snprintf (parent->key, sizeof parent->key, "?");
                parent->expect_key = 0;
            }
            else
                parent->expect_key = 1;
        }
        int fail = 0;
        if (anchor && strlen ((const char *) anchor) > S_MAX_ANCHOR_LEN) {
            s_level_path (levels, depth, path, sizeof path);
            snprintf (err, err_size, "%s:%d: %sanchor or alias name longer than %d bytes (the limit)",
                      origin, line, path, S_MAX_ANCHOR_LEN);
            fail = 1;
        }
        else if (ev.type == YAML_ALIAS_EVENT && ++aliases > S_MAX_ALIASES) {
            s_level_path (levels, depth, path, sizeof path);
            snprintf (err, err_size, "%s:%d: %smore than %d aliases (*name) in one file (the limit)",
                      origin, line, path, S_MAX_ALIASES);
            fail = 1;
        }
        else if (ev.type != YAML_ALIAS_EVENT && anchor && ++anchors > S_MAX_ANCHORS) {
            s_level_path (levels, depth, path, sizeof path);
            snprintf (err, err_size, "%s:%d: %smore than %d anchors (&name) in one file (the limit)",
                      origin, line, path, S_MAX_ANCHORS);
            fail = 1;
        }
        if (!fail && (ev.type == YAML_SEQUENCE_START_EVENT || ev.type == YAML_MAPPING_START_EVENT)) {
            if (depth == S_MAX_DEPTH) {
                s_level_path (levels, depth, path, sizeof path);
                snprintf (err, err_size, "%s:%d: %sYAML nested deeper than %d levels (the limit)",
                          origin, line, path, S_MAX_DEPTH);
                fail = 1;
            }
            else {
                s_level_t *l = &levels[depth++];
                memset (l, 0, sizeof *l);
                l->mapping = ev.type == YAML_MAPPING_START_EVENT;
                l->expect_key = 1;
            }
        }
        else if (ev.type == YAML_SEQUENCE_END_EVENT || ev.type == YAML_MAPPING_END_EVENT)
            depth -= depth > 0;
        int end = ev.type == YAML_STREAM_END_EVENT;
        yaml_event_delete (&ev);
        if (fail)
            break;
        if (end) {
            rc = 0;
            break;
        }
    }
    yaml_parser_delete (&parser);
    return rc;
}

/* Offset of the first byte of s that is not part of well-formed UTF-8, or
 * (size_t) -1 when there is none. */
static size_t
s_utf8_bad (const char *s)
{
    const unsigned char *p = (const unsigned char *) s;
    while (*p) {
        size_t n = sb_utf8_seq (p);
        if (!n)
            return (size_t) (p - (const unsigned char *) s);
        p += n;
    }
    return (size_t) -1;
}

/* A text that is not UTF-8 (a value stored raw would make runs.config
 * unreadable): "origin:line: key 'k': not valid UTF-8 (byte 0xFF at column
 * c)". libyaml only says "invalid leading UTF-8 octet" with no line; the
 * key is found by parsing a copy with the bad bytes replaced. */
static void
s_utf8_error (const char *text, size_t bad, const char *origin, char *err, size_t err_size)
{
    int line = 1;
    size_t start = 0;
    for (size_t i = 0; i < bad; i++)
        if (text[i] == '\n')
            line++, start = i + 1;
    unsigned char byte = (unsigned char) text[bad];
    char key[600] = "";
    char *copy = strdup (text);
    sb_config_t *probe = sb_config_new ();
    if (copy && probe) {
        for (unsigned char *p = (unsigned char *) copy; *p;) {
            size_t n = sb_utf8_seq (p);
            if (!n)
                *p = '?', n = 1;
            p += n;
        }
        char ignored[256];
        if (sb_config_load_string (probe, copy, origin, ignored, sizeof ignored) == 0)
            for (size_t i = 0; i < probe->count; i++)
                if (probe->entries[i].pub.line == line) {
                    snprintf (key, sizeof key, "key '%s': ", probe->entries[i].key);
                    break;
                }
    }
    sb_config_destroy (&probe);
    free (copy);
    snprintf (err, err_size, "%s:%d: %snot valid UTF-8 (byte 0x%02X at column %zu)", origin, line, key, byte,
              bad - start + 1);
}

int
sb_config_load_string (sb_config_t *self, const char *text, const char *origin,
                       char *err, size_t err_size)
{
    size_t bad = s_utf8_bad (text);
    if (bad != (size_t) -1) {
        s_utf8_error (text, bad, origin, err, err_size);
        return -1;
    }
    if (s_prescan (text, origin, err, err_size) != 0)
        return -1;
    yaml_parser_t parser;
    yaml_document_t doc;
    if (!yaml_parser_initialize (&parser)) {
        snprintf (err, err_size, "%s: cannot initialise the YAML parser", origin);
        return -1;
    }
    yaml_parser_set_input_string (&parser, (const unsigned char *) text, strlen (text));
    if (!yaml_parser_load (&parser, &doc)) {
        s_yaml_error (&parser, text, origin, err, err_size);
        yaml_parser_delete (&parser);
        return -1;
    }
    int rc = 0;
    self->load = ++self->loads;     /* tells a key repeated in this text from one set before */
    self->visits = 0;
    yaml_node_t *root = yaml_document_get_root_node (&doc);
    if (!root)
        ;   /* empty document: nothing to set */
    else if (root->type != YAML_MAPPING_NODE) {
        snprintf (err, err_size, "%s:%d: a workload is a mapping of sections (dataset:, reader:, train:, ...)",
                  origin, (int) root->start_mark.line + 1);
        rc = -1;
    }
    else
        rc = s_walk (self, &doc, root, "", 0, origin, err, err_size);
    self->load = 0;
    yaml_document_delete (&doc);
    if (rc == 0 && root) {
        /* "---" and a second document: reading only the first would
         * silently run another workload than the file says */
        if (!yaml_parser_load (&parser, &doc)) {
            s_yaml_error (&parser, text, origin, err, err_size);
            rc = -1;
        }
        else {
            yaml_node_t *next = yaml_document_get_root_node (&doc);
            if (next) {
                snprintf (err, err_size, "%s:%d: a workload file holds one YAML document, a second one starts here",
                          origin, (int) next->start_mark.line + 1);
                rc = -1;
            }
            yaml_document_delete (&doc);
        }
    }
    yaml_parser_delete (&parser);
    return rc;
}

int
sb_config_load_buffer (sb_config_t *self, const char *data, size_t size, const char *origin,
                       char *err, size_t err_size)
{
    if (size > 16 * 1024 * 1024) {
        snprintf (err, err_size, "%s: workload file larger than 16 MiB", origin);
        return -1;
    }
    if (memchr (data, '\0', size)) {
        snprintf (err, err_size, "%s: not a text file (NUL byte)", origin);
        return -1;
    }
    /* sb_config_load_string wants a terminated string; data need not be one */
    char *text = malloc (size + 1);
    if (!text) {
        snprintf (err, err_size, "%s: out of memory", origin);
        return -1;
    }
    memcpy (text, data, size);
    text[size] = '\0';
    int rc = sb_config_load_string (self, text, origin, err, err_size);
    free (text);
    return rc;
}

int
sb_config_load_file (sb_config_t *self, const char *path, char *err, size_t err_size)
{
    FILE *f = fopen (path, "rb");
    if (!f) {
        snprintf (err, err_size, "%s: cannot open workload file: %s", path, strerror (errno));
        return -1;
    }
    char *text = NULL;
    size_t size = 0, alloc = 0;
    for (;;) {
        if (size + 4096 + 1 > alloc) {
            alloc = alloc ? alloc * 2 : 8192;
            if (alloc > 16 * 1024 * 1024) {
                snprintf (err, err_size, "%s: workload file larger than 16 MiB", path);
                goto fail;
            }
            char *grown = realloc (text, alloc);
            if (!grown) {
                snprintf (err, err_size, "%s: out of memory", path);
                goto fail;
            }
            text = grown;
        }
        size_t n = fread (text + size, 1, 4096, f);
        size += n;
        if (n < 4096) {
            if (ferror (f)) {
                snprintf (err, err_size, "%s: read error: %s", path, strerror (errno));
                goto fail;
            }
            break;
        }
    }
    fclose (f);
    text[size] = '\0';
    int rc = sb_config_load_buffer (self, text, size, path, err, err_size);
    free (text);
    return rc;
fail:
    fclose (f);
    free (text);
    return -1;
}

/* Remove every entry below key ("key.0.name", ...): a list given on the
 * command line replaces the file's list whole, as Hydra's override does,
 * so no item of a longer list in the file outlives it. */
static void
s_remove_below (sb_config_t *self, const char *key)
{
    size_t n = strlen (key), kept = 0;
    for (size_t i = 0; i < self->count; i++) {
        s_entry_t *e = &self->entries[i];
        if (strncmp (e->key, key, n) == 0 && e->key[n] == '.') {
            s_entry_free (e);
            continue;
        }
        if (kept != i)
            self->entries[kept] = *e;
        kept++;
    }
    self->count = kept;
    for (size_t i = 0; i < self->count; i++)
        s_entry_sync (&self->entries[i]);
}

/* The items of a flow list body ("{a: 1}, {b: 2}") split at its top-level
 * commas (none inside {...}, [...] or quotes), each trimmed, into items
 * (room for cap). Returns how many, or -1 when brackets do not pair. The
 * items point into body, which is cut at the commas. */
static long
s_flow_split (char *body, char **items, size_t cap)
{
    size_t n = 0;
    int depth = 0;
    char quote = 0;
    char *start = body;
    for (char *p = body;; p++) {
        if (quote) {
            if (!*p)
                return -1;
            if (*p == quote)
                quote = 0;
            continue;
        }
        if (*p == '\'' || *p == '"')
            quote = *p;
        else if (*p == '{' || *p == '[')
            depth++;
        else if ((*p == '}' || *p == ']') && --depth < 0)
            return -1;
        else if ((*p == ',' && depth == 0) || !*p) {
            int end = !*p;
            if (depth)
                return -1;
            *p = '\0';
            while (*start == ' ')
                start++;
            for (size_t l = strlen (start); l && start[l - 1] == ' ';)
                start[--l] = '\0';
            if (n == cap)
                return -1;
            items[n++] = start;
            start = p + 1;
            if (end)
                break;
        }
    }
    return (long) n;
}

/* Mark key as set by a Hydra append (sb_config_entry_t.hydra_add). */
static void
s_mark_hydra_add (sb_config_t *self, const char *key, int hydra_add)
{
    for (size_t i = 0; i < self->count; i++)
        if (strcmp (self->entries[i].key, key) == 0)
            self->entries[i].pub.hydra_add = hydra_add;
}

static int s_override (sb_config_t *self, const char *assignment, int hydra_add, char *err, size_t err_size);

/* KEY=[{f: v, ...}, {f: v, ...}]: a list of mappings, as a file's
 * `KEY: [{f: v}, ...]` (DLIO's dataset.parquet.columns), sets the same keys
 * the file form sets, KEY.0.f, KEY.1.f, ..., each item through the {...}
 * form, after removing the list KEY held (the file's, item by item). */
static int
s_override_mappings (sb_config_t *self, const char *assignment, const char *key, const char *value, size_t vlen,
                     int hydra_add, char *err, size_t err_size)
{
    size_t cap = 1;
    for (const char *p = value; *p; p++)
        cap += *p == ',';
    char *body = strndup (value + 1, vlen - 2);
    char **items = calloc (cap, sizeof (char *));
    if (!body || !items) {
        free (body);
        free (items);
        snprintf (err, err_size, "command line: out of memory");
        return -1;
    }
    long n = s_flow_split (body, items, cap);
    int rc = n < 0 ? -1 : 0;
    for (long i = 0; rc == 0 && i < n; i++) {
        size_t l = strlen (items[i]);
        if (l < 2 || items[i][0] != '{' || items[i][l - 1] != '}')
            rc = -1;
    }
    if (rc != 0)
        snprintf (err, err_size, "command line: key '%s': expected a list of mappings [{name: value, ...}, ...], each"
                  " item in braces, in '%s'", key, assignment);
    else
        s_remove_below (self, key);
    for (long i = 0; rc == 0 && i < n; i++) {
        char sub[1100];
        if ((size_t) snprintf (sub, sizeof sub, "%s.%ld=%s", key, i, items[i]) >= sizeof sub) {
            snprintf (err, err_size, "command line: key '%s': item %ld is too long", key, i);
            rc = -1;
        }
        else
            rc = s_override (self, sub, hydra_add, err, err_size);
    }
    free (items);
    free (body);
    return rc;
}

static int
s_override (sb_config_t *self, const char *assignment, int hydra_add, char *err, size_t err_size)
{
    const char *a = assignment;
    while (*a == '+')
        a++;
    if (strncmp (a, "workload.", 9) == 0)
        a += 9;
    const char *eq = strchr (a, '=');
    if (!eq || eq == a) {
        snprintf (err, err_size, "command line: '%s' is not KEY=VALUE", assignment);
        return -1;
    }
    char key[512];
    if ((size_t) (eq - a) >= sizeof key) {
        snprintf (err, err_size, "command line: key too long in '%s'", assignment);
        return -1;
    }
    memcpy (key, a, (size_t) (eq - a));
    key[eq - a] = '\0';
    for (const char *p = key; *p; p++)
        if (!(*p == '.' || *p == '_' || *p == '-' || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')
              || (*p >= '0' && *p <= '9')) || (*p == '.' && (p == key || p[1] == '.' || p[1] == '\0'))) {
            snprintf (err, err_size, "command line: invalid key '%s'", key);
            return -1;
        }
    const char *value = eq + 1;
    size_t vlen = strlen (value);
    if (!sb_utf8_valid (value)) {
        /* stored raw, it would make runs.config unreadable */
        const unsigned char *p = (const unsigned char *) value;
        while (*p && sb_utf8_seq (p))
            p += sb_utf8_seq (p);
        snprintf (err, err_size, "command line: key '%s': not valid UTF-8 (byte 0x%02X at position %zu of the value)",
                  strcmp (key, "model") ? key : "model.name", *p, (size_t) (p - (const unsigned char *) value) + 1);
        return -1;
    }
    if (vlen >= 2 && value[0] == '{' && value[vlen - 1] == '}') {
        /* Hydra / YAML flow mapping: {type: normal, mean: 0.5, stdev: 0.1}
         * sets KEY.type, KEY.mean, KEY.stdev (one level, plain values) */
        char *body = strndup (value + 1, vlen - 2);
        if (!body) {
            snprintf (err, err_size, "command line: out of memory");
            return -1;
        }
        int rc = 0;
        char *save = NULL;
        for (char *tok = strtok_r (body, ",", &save); tok && rc == 0; tok = strtok_r (NULL, ",", &save)) {
            char *colon = strchr (tok, ':');
            char *k = tok, *v = colon ? colon + 1 : NULL;
            if (colon)
                *colon = '\0';
            while (*k == ' ')
                k++;
            for (size_t n = strlen (k); n && k[n - 1] == ' ';)
                k[--n] = '\0';
            while (v && *v == ' ')
                v++;
            for (size_t n = v ? strlen (v) : 0; n && v[n - 1] == ' ';)
                v[--n] = '\0';
            char sub[1100];
            if (!v || !*k || strpbrk (v, "{}[]:") || strpbrk (k, "{}[] ")) {
                snprintf (err, err_size, "command line: '%s': expected {name: value, ...} with plain values", assignment);
                rc = -1;
            }
            else if ((size_t) snprintf (sub, sizeof sub, "%s.%s=%s", key, k, v) >= sizeof sub) {
                snprintf (err, err_size, "command line: key too long in '%s'", assignment);
                rc = -1;
            }
            else
                rc = s_override (self, sub, hydra_add, err, err_size);
        }
        free (body);
        return rc;
    }
    if (vlen >= 2 && value[0] == '[' && value[vlen - 1] == ']' && value[1 + strspn (value + 1, " ")] == '{')
        return s_override_mappings (self, assignment, key, value, vlen, hydra_add, err, err_size);
    if (vlen >= 2 && value[0] == '[' && value[vlen - 1] == ']') {
        /* Hydra list: [a,b,c] */
        size_t cap = 1;
        for (const char *p = value; *p; p++)
            cap += *p == ',';
        char **items = calloc (cap + 1, sizeof (char *));
        char *body = strndup (value + 1, vlen - 2);
        if (!items || !body) {
            free (items);
            free (body);
            snprintf (err, err_size, "command line: out of memory");
            return -1;
        }
        size_t n = 0;
        char *save = NULL;
        for (char *tok = strtok_r (body, ",", &save); tok; tok = strtok_r (NULL, ",", &save)) {
            while (*tok == ' ')
                tok++;
            size_t tl = strlen (tok);
            while (tl && tok[tl - 1] == ' ')
                tok[--tl] = '\0';
            if (tl && (items[n] = strdup (tok)))
                n++;
        }
        free (body);
        s_remove_below (self, key);     /* a file's list of mappings under the same key */
        if (s_set (self, key, NULL, items, n, "command line", 0) != 0) {
            for (size_t i = 0; i < n; i++)
                free (items[i]);
            free (items);
            snprintf (err, err_size, "command line: out of memory");
            return -1;
        }
        s_mark_hydra_add (self, key, hydra_add);
        return 0;
    }
    char *copy = strdup (value);
    if (strcmp (key, "model") == 0)
        strcpy (key, "model.name");     /* model=NAME, as `model: NAME` in a file */
    if (!copy || s_set (self, key, copy, NULL, 0, "command line", 0) != 0) {
        free (copy);
        snprintf (err, err_size, "command line: out of memory");
        return -1;
    }
    s_mark_hydra_add (self, key, hydra_add);
    /* Hydra's override grammar: true and false in any case are booleans, off and on text */
    s_mark_bool (self, key, !strcasecmp (value, "true") || !strcasecmp (value, "false"));
    return 0;
}

int
sb_config_override (sb_config_t *self, const char *assignment, char *err, size_t err_size)
{
    /* Hydra's + and ++ add a key the configuration lacks */
    return s_override (self, assignment, assignment[0] == '+', err, err_size);
}

const sb_config_entry_t *
sb_config_get (sb_config_t *self, const char *key)
{
    for (size_t i = 0; i < self->count; i++)
        if (strcmp (self->entries[i].key, key) == 0)
            return &self->entries[i].pub;
    return NULL;
}

size_t
sb_config_count (const sb_config_t *self)
{
    return self->count;
}

const sb_config_entry_t *
sb_config_at (const sb_config_t *self, size_t i)
{
    return i < self->count ? &self->entries[i].pub : NULL;
}

const char *
sb_config_where (const sb_config_entry_t *e, char *buf, size_t size)
{
    if (!e)
        snprintf (buf, size, "default");
    else if (e->line > 0)
        snprintf (buf, size, "%s:%d", e->origin, e->line);
    else
        snprintf (buf, size, "%s", e->origin);
    return buf;
}

/* Append to a growing string; returns 0 or -1. */
static int
s_append (char **buf, size_t *len, size_t *alloc, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        size_t room = *alloc - *len;
        va_start (ap, fmt);
        int n = vsnprintf (*buf ? *buf + *len : NULL, *buf ? room : 0, fmt, ap);
        va_end (ap);
        if (n < 0)
            return -1;
        if (*buf && (size_t) n < room) {
            *len += (size_t) n;
            return 0;
        }
        size_t want = (*alloc ? *alloc * 2 : 1024) + (size_t) n;
        char *grown = realloc (*buf, want);
        if (!grown)
            return -1;
        *buf = grown;
        *alloc = want;
    }
}

/* Whether n bytes of text need double quotes to read back unchanged:
 * YAML indicators, leading or trailing blanks, and anything outside
 * printable ASCII (line breaks, tabs, C1 controls, U+2028/9) would be
 * reinterpreted or folded in a plain scalar. */
static int
s_quote_needed (const char *v, size_t n)
{
    if (n == 0)
        return 1;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char) v[i];
        if (c < 0x20 || c >= 0x7f || strchr (":#{}[],&*!|>'\"%@`", c))
            return 1;
    }
    /* a plain "<<" key would read back as a merge key */
    return v[0] == ' ' || v[0] == '-' || v[0] == '?' || v[n - 1] == ' ' || (n == 2 && memcmp (v, "<<", 2) == 0);
}

/* Append n bytes of text as a YAML scalar, double-quoted and escaped when
 * a plain scalar would not read back as the same bytes. */
static int
s_append_value (char **buf, size_t *len, size_t *alloc, const char *v, size_t n)
{
    if (!s_quote_needed (v, n))
        return s_append (buf, len, alloc, "%.*s", (int) n, v);
    if (s_append (buf, len, alloc, "\"") != 0)
        return -1;
    for (size_t i = 0; i < n; i++) {
        const unsigned char *u = (const unsigned char *) v + i;
        int rc;
        if (*u == '"' || *u == '\\')
            rc = s_append (buf, len, alloc, "\\%c", *u);
        else if (*u == '\n' || *u == '\t')
            rc = s_append (buf, len, alloc, *u == '\n' ? "\\n" : "\\t");
        else if (*u < 0x20 || *u == 0x7f)
            rc = s_append (buf, len, alloc, "\\x%02x", *u);
        else if (i + 1 < n && u[0] == 0xc2 && u[1] == 0x85) {     /* NEL: a line break in YAML */
            rc = s_append (buf, len, alloc, "\\N");
            i += 1;
        }
        else if (i + 2 < n && u[0] == 0xe2 && u[1] == 0x80 && (u[2] == 0xa8 || u[2] == 0xa9)) {
            rc = s_append (buf, len, alloc, u[2] == 0xa8 ? "\\L" : "\\P");   /* line, paragraph separator */
            i += 2;
        }
        else
            rc = s_append (buf, len, alloc, "%c", *u);
        if (rc != 0)
            return -1;
    }
    return s_append (buf, len, alloc, "\"");
}

char *
sb_config_to_yaml (const sb_config_t *self)
{
    /* Keys are emitted grouped by their path: entries are sorted so that a
     * section's keys stay together, then common leading segments are
     * written once as nested mappings. */
    size_t n = self->count;
    const s_entry_t **sorted = malloc ((n ? n : 1) * sizeof *sorted);
    if (!sorted)
        return NULL;
    for (size_t i = 0; i < n; i++)
        sorted[i] = &self->entries[i];
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && strcmp (sorted[j - 1]->key, sorted[j]->key) > 0; j--) {
            const s_entry_t *t = sorted[j];
            sorted[j] = sorted[j - 1];
            sorted[j - 1] = t;
        }
    char *buf = NULL;
    size_t len = 0, alloc = 0;
    int rc = s_append (&buf, &len, &alloc, "%s", "");
    const char *prev = "";
    for (size_t i = 0; i < n && rc == 0; i++) {
        const char *key = sorted[i]->key;
        /* count the leading segments shared with the previous key */
        size_t shared = 0, depth = 0;
        for (size_t c = 0; key[c] && prev[c] == key[c]; c++)
            if (key[c] == '.') {
                shared = c + 1;
                depth++;
            }
        const char *seg = key + shared;
        size_t level = depth;
        /* key segments are quoted like values: a YAML key can be any scalar */
        for (const char *dot; rc == 0 && (dot = strchr (seg, '.')); seg = dot + 1, level++) {
            rc = s_append (&buf, &len, &alloc, "%*s", (int) (2 * level), "");
            rc |= s_append_value (&buf, &len, &alloc, seg, (size_t) (dot - seg));
            rc |= s_append (&buf, &len, &alloc, ":\n");
        }
        if (rc)
            break;
        rc = s_append (&buf, &len, &alloc, "%*s", (int) (2 * level), "");
        rc |= s_append_value (&buf, &len, &alloc, seg, strlen (seg));
        rc |= s_append (&buf, &len, &alloc, ":");
        if (sorted[i]->items) {
            rc |= s_append (&buf, &len, &alloc, " [");
            for (size_t j = 0; sorted[i]->items[j] && rc == 0; j++) {
                rc |= s_append (&buf, &len, &alloc, "%s", j ? ", " : "");
                rc |= s_append_value (&buf, &len, &alloc, sorted[i]->items[j], strlen (sorted[i]->items[j]));
            }
            rc |= s_append (&buf, &len, &alloc, "]\n");
        }
        else if (!sorted[i]->pub.is_bool && s_yaml11_bool (sorted[i]->value))
            /* text YAML 1.1 would read as a boolean (a quoted "off", the
             * command line's off): quoted, so that DLIO, or a later load,
             * reads the type the run read */
            rc |= s_append (&buf, &len, &alloc, " \"%s\"\n", sorted[i]->value);
        else {
            rc |= s_append (&buf, &len, &alloc, " ");
            rc |= s_append_value (&buf, &len, &alloc, sorted[i]->value, strlen (sorted[i]->value));
            rc |= s_append (&buf, &len, &alloc, "\n");
        }
        prev = key;
    }
    free (sorted);
    if (rc != 0) {
        free (buf);
        return NULL;
    }
    return buf;
}

int
sb_config_redact (sb_config_t *self, int (*is_secret) (const char *key), const char *replacement)
{
    int n = 0;
    for (size_t i = 0; i < self->count; i++) {
        s_entry_t *e = &self->entries[i];
        if (!is_secret (e->key))
            continue;
        char *copy = strdup (replacement);
        if (!copy)
            return -1;
        /* wipe what the secret occupied before the memory goes back */
        if (e->value) {
            explicit_bzero (e->value, strlen (e->value));
            free (e->value);
        }
        if (e->items) {
            for (size_t j = 0; e->items[j]; j++) {
                explicit_bzero (e->items[j], strlen (e->items[j]));
                free (e->items[j]);
            }
            free (e->items);
        }
        e->value = copy;
        e->items = NULL;
        e->pub.nitems = 0;
        s_entry_sync (e);
        n++;
    }
    return n;
}

/* ---- OmegaConf interpolation (sb_config_interpolate) ---- */

/* References followed from one value before it counts as a loop. */
#define S_INTERP_DEPTH 16

typedef struct {
    sb_config_t *self;
    int (*is_secret) (const char *key);
    int (*env_ref_kept) (const char *key);
    char  *err;
    size_t err_size;
} s_interp_t;

static s_entry_t *
s_entry_find (sb_config_t *self, const char *key)
{
    for (size_t i = 0; i < self->count; i++)
        if (strcmp (self->entries[i].key, key) == 0)
            return &self->entries[i];
    return NULL;
}

/* "origin:line: key 'K': " of the entry whose value holds a reference,
 * then the reference itself unless the key holds a credential. */
static void
s_interp_error (s_interp_t *ctx, const s_entry_t *owner, const char *ref, size_t ref_len, const char *fmt, ...)
{
    int n = owner->pub.line > 0
          ? snprintf (ctx->err, ctx->err_size, "%s:%d: key '%s': ", owner->origin, owner->pub.line, owner->key)
          : snprintf (ctx->err, ctx->err_size, "%s: key '%s': ", owner->origin, owner->key);
    if (n < 0 || (size_t) n >= ctx->err_size)
        return;
    if (ctx->is_secret (owner->key))
        n += snprintf (ctx->err + n, ctx->err_size - (size_t) n, "a reference in its value ");
    else
        n += snprintf (ctx->err + n, ctx->err_size - (size_t) n, "'${%.*s}' ", (int) ref_len, ref);
    if ((size_t) n >= ctx->err_size)
        return;
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (ctx->err + n, ctx->err_size - (size_t) n, fmt, ap);
    va_end (ap);
}

static int s_interp_text (s_interp_t *ctx, const s_entry_t *owner, const char *text, size_t len, int depth,
                          char **out, size_t *out_len, size_t *out_alloc);

/* 1 when s (n bytes) is an environment variable's name in upper case
 * (SOME_VAR), as the upstream s3dlio files write ${SOME_VAR}. */
static int
s_upper_name (const char *s, size_t n)
{
    if (n == 0 || (s[0] >= '0' && s[0] <= '9'))
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
            return 0;
    return 1;
}

/* ${oc.env:VAR} and ${oc.env:VAR,default}: the environment's value. */
static int
s_interp_env (s_interp_t *ctx, const s_entry_t *owner, const char *body, size_t len, const char *ref, size_t ref_len,
              char **out, size_t *out_len, size_t *out_alloc)
{
    const char *comma = memchr (body, ',', len);
    size_t name_len = comma ? (size_t) (comma - body) : len;
    char name[256];
    while (name_len && body[name_len - 1] == ' ')
        name_len--;
    while (name_len && *body == ' ')
        body++, name_len--, len--;
    comma = memchr (body, ',', len);
    int valid = name_len > 0 && name_len < sizeof name && !(body[0] >= '0' && body[0] <= '9');
    for (size_t i = 0; valid && i < name_len; i++)
        valid = (body[i] >= 'A' && body[i] <= 'Z') || (body[i] >= 'a' && body[i] <= 'z')
              || (body[i] >= '0' && body[i] <= '9') || body[i] == '_';
    if (!valid) {
        s_interp_error (ctx, owner, ref, ref_len, "does not name an environment variable");
        return -1;
    }
    memcpy (name, body, name_len);
    name[name_len] = '\0';
    if (ctx->is_secret (name) && !ctx->is_secret (owner->key)) {
        s_interp_error (ctx, owner, ref, ref_len, "would copy a credential into a key that is recorded and shown:"
                        " give credentials as storage.storage_options.access_key_id and secret_access_key");
        return -1;
    }
    const char *v = getenv (name);
    if (v)
        return s_append (out, out_len, out_alloc, "%s", v);
    if (!comma) {
        s_interp_error (ctx, owner, ref, ref_len, "names environment variable %s, which is not set (give a default:"
                        " ${oc.env:%s,DEFAULT})", name, name);
        return -1;
    }
    const char *d = comma + 1, *end = body + len;
    while (d < end && *d == ' ')
        d++;
    while (end > d && end[-1] == ' ')
        end--;
    if (end - d >= 2 && (*d == '\'' || *d == '"') && end[-1] == *d)
        d++, end--;
    else if (end - d == 4 && memcmp (d, "null", 4) == 0)
        d = end;    /* OmegaConf's None: nothing */
    return s_append (out, out_len, out_alloc, "%.*s", (int) (end - d), d);
}

/* ${dotted.key} (absolute) or ${.key} / ${..key} (relative to the owner's
 * section): the other key's value, itself resolved. */
static int
s_interp_key (s_interp_t *ctx, const s_entry_t *owner, const char *body, size_t len, const char *ref, size_t ref_len,
              int depth, char **out, size_t *out_len, size_t *out_alloc)
{
    for (size_t i = 0; i < len; i++)
        if (!((body[i] >= 'A' && body[i] <= 'Z') || (body[i] >= 'a' && body[i] <= 'z')
              || (body[i] >= '0' && body[i] <= '9') || body[i] == '_' || body[i] == '-' || body[i] == '.')) {
            s_interp_error (ctx, owner, ref, ref_len, "is not a key reference (${section.key}), nor ${oc.env:VAR}");
            return -1;
        }
    char key[1024];
    size_t dots = strspn (body, ".");
    if (dots) {
        /* relative: one dot is the owner's section, each further dot one section up */
        size_t plen = strlen (owner->key);
        for (size_t up = 0; up < dots; up++) {
            while (plen && owner->key[plen - 1] != '.')
                plen--;
            if (plen)
                plen--;     /* drop the '.' */
            else if (up + 1 < dots) {
                s_interp_error (ctx, owner, ref, ref_len, "goes above the top of the configuration");
                return -1;
            }
        }
        if ((size_t) snprintf (key, sizeof key, "%.*s%s%.*s", (int) plen, owner->key, plen ? "." : "",
                               (int) (len - dots), body + dots) >= sizeof key)
            goto missing;
    }
    else if ((size_t) snprintf (key, sizeof key, "%.*s", (int) len, body) >= sizeof key)
        goto missing;
    if (!*key || key[strlen (key) - 1] == '.' || strstr (key, ".."))
        goto missing;
    const s_entry_t *target = s_entry_find (ctx->self, key);
    if (!target)
        goto missing;
    if (target->items) {
        s_interp_error (ctx, owner, ref, ref_len, "refers to a list (%s): only single values are substituted", key);
        return -1;
    }
    if (ctx->is_secret (target->key) && !ctx->is_secret (owner->key)) {
        s_interp_error (ctx, owner, ref, ref_len, "would copy a credential into a key that is recorded and shown");
        return -1;
    }
    if (target->interpolated)
        return s_append (out, out_len, out_alloc, "%s", target->value);
    if (depth >= S_INTERP_DEPTH) {
        s_interp_error (ctx, owner, ref, ref_len, "leads through more than %d references (a loop?)", S_INTERP_DEPTH);
        return -1;
    }
    return s_interp_text (ctx, target, target->value, strlen (target->value), depth + 1, out, out_len, out_alloc);
missing:
    s_interp_error (ctx, owner, ref, ref_len, "refers to no key of the configuration%s",
                    s_upper_name (body, len) ? " (an environment variable is ${oc.env:NAME})" : "");
    return -1;
}

/* Append text (len bytes) with its interpolations resolved to *out. */
static int
s_interp_text (s_interp_t *ctx, const s_entry_t *owner, const char *text, size_t len, int depth,
               char **out, size_t *out_len, size_t *out_alloc)
{
    if (s_append (out, out_len, out_alloc, "%s", "") != 0)
        goto oom;
    size_t i = 0;
    while (i < len) {
        if (text[i] == '\\' && i + 2 < len && text[i + 1] == '$' && text[i + 2] == '{') {
            if (s_append (out, out_len, out_alloc, "${") != 0)
                goto oom;
            i += 3;     /* \${ is a literal ${ */
            continue;
        }
        if (!(text[i] == '$' && i + 1 < len && text[i + 1] == '{')) {
            size_t run = 1;
            while (i + run < len && text[i + run] != '$' && text[i + run] != '\\')
                run++;
            if (s_append (out, out_len, out_alloc, "%.*s", (int) run, text + i) != 0)
                goto oom;
            i += run;
            continue;
        }
        /* ${ ... } with nested braces */
        size_t open = 1, j = i + 2;
        for (; j < len && open; j++)
            open += text[j] == '{' ? 1 : text[j] == '}' ? -1 : 0;
        const char *ref = text + i + 2;
        if (open) {
            s_interp_error (ctx, owner, ref, len - i - 2, "has no closing '}'");
            return -1;
        }
        size_t ref_len = j - 1 - (i + 2);
        /* the body may itself hold references: ${oc.env:X,${dataset.y}} */
        char *body = NULL;
        size_t blen = 0, balloc = 0;
        if (memchr (ref, '$', ref_len)) {
            if (s_interp_text (ctx, owner, ref, ref_len, depth + 1, &body, &blen, &balloc) != 0) {
                free (body);
                return -1;
            }
        }
        const char *b = body ? body : ref;
        size_t bn = body ? blen : ref_len;
        while (bn && *b == ' ')
            b++, bn--;
        while (bn && b[bn - 1] == ' ')
            bn--;
        int rc;
        const char *colon = memchr (b, ':', bn);
        char name[256];
        if (depth == 0 && i == 0 && j == len && s_upper_name (b, bn) && bn < sizeof name
            && ctx->env_ref_kept (owner->key)) {
            snprintf (name, sizeof name, "%.*s", (int) bn, b);
            if (s_entry_find (ctx->self, name))
                rc = s_interp_key (ctx, owner, b, bn, ref, ref_len, depth, out, out_len, out_alloc);
            else    /* kept as written: the S3 client takes it from the environment */
                rc = s_append (out, out_len, out_alloc, "%.*s", (int) len, text);
        }
        else if (colon && (size_t) (colon - b) == 6 && memcmp (b, "oc.env", 6) == 0)
            rc = s_interp_env (ctx, owner, colon + 1, bn - 7, ref, ref_len, out, out_len, out_alloc);
        else if (colon) {
            s_interp_error (ctx, owner, ref, ref_len, "uses resolver '%.*s', which shardbench does not have (only"
                            " oc.env)", (int) (colon - b), b);
            rc = -1;
        }
        else if (bn == 0) {
            s_interp_error (ctx, owner, ref, ref_len, "is empty");
            rc = -1;
        }
        else
            rc = s_interp_key (ctx, owner, b, bn, ref, ref_len, depth, out, out_len, out_alloc);
        free (body);
        if (rc != 0)
            return -1;
        i = j;
    }
    return 0;
oom:
    snprintf (ctx->err, ctx->err_size, "out of memory");
    return -1;
}

int
sb_config_copy (sb_config_t *self, const char *from, const char *to)
{
    const s_entry_t *src = s_entry_find (self, from);
    if (!src)
        return -1;
    char *value = NULL, **items = NULL;
    size_t n = src->pub.nitems;
    if (src->items) {
        if (!(items = calloc (n + 1, sizeof *items)))
            return -1;
        for (size_t i = 0; i < n; i++)
            if (!(items[i] = strdup (src->items[i])))
                goto oom;
    }
    else if (!(value = strdup (src->value ? src->value : "")))
        return -1;
    char *origin = strdup (src->origin);
    int line = src->pub.line, interpolated = src->interpolated, hydra_add = src->pub.hydra_add,
        is_bool = src->pub.is_bool;
    if (!origin || s_set (self, to, value, items, n, origin, line) != 0) {
        free (origin);
        goto oom;
    }
    free (origin);
    s_entry_find (self, to)->interpolated = interpolated;
    s_entry_find (self, to)->pub.hydra_add = hydra_add;
    s_entry_find (self, to)->pub.is_bool = is_bool;
    return 0;
oom:
    free (value);
    if (items)
        for (size_t i = 0; i < n; i++)
            free (items[i]);
    free (items);
    return -1;
}

int
sb_config_interpolate (sb_config_t *self, int (*is_secret) (const char *key), int (*env_ref_kept) (const char *key),
                       char *err, size_t err_size)
{
    s_interp_t ctx = { self, is_secret, env_ref_kept, err, err_size };
    /* every new text first (references read the values as written), then all at once */
    char **fresh = calloc (self->count + 1, sizeof *fresh);
    char ***fresh_items = calloc (self->count + 1, sizeof *fresh_items);
    int rc = fresh && fresh_items ? 0 : -1;
    if (rc)
        snprintf (err, err_size, "out of memory");
    for (size_t i = 0; i < self->count && rc == 0; i++) {
        const s_entry_t *e = &self->entries[i];
        if (e->interpolated)
            continue;
        if (e->value && strstr (e->value, "${")) {
            size_t len = 0, alloc = 0;
            rc = s_interp_text (&ctx, e, e->value, strlen (e->value), 0, &fresh[i], &len, &alloc);
        }
        for (size_t k = 0; e->items && k < e->pub.nitems && rc == 0; k++) {
            if (!strstr (e->items[k], "${"))
                continue;
            if (!fresh_items[i] && !(fresh_items[i] = calloc (e->pub.nitems + 1, sizeof (char *)))) {
                snprintf (err, err_size, "out of memory");
                rc = -1;
                break;
            }
            size_t len = 0, alloc = 0;
            rc = s_interp_text (&ctx, e, e->items[k], strlen (e->items[k]), 0, &fresh_items[i][k], &len, &alloc);
        }
    }
    for (size_t i = 0; i < self->count; i++) {
        s_entry_t *e = &self->entries[i];
        if (rc == 0) {
            if (fresh && fresh[i]) {
                free (e->value);
                e->value = fresh[i];
                fresh[i] = NULL;
            }
            for (size_t k = 0; fresh_items && fresh_items[i] && k < e->pub.nitems; k++)
                if (fresh_items[i][k]) {
                    free (e->items[k]);
                    e->items[k] = fresh_items[i][k];
                    fresh_items[i][k] = NULL;
                }
            e->interpolated = 1;
            s_entry_sync (e);
        }
        if (fresh)
            free (fresh[i]);
        if (fresh_items && fresh_items[i]) {
            for (size_t k = 0; k < e->pub.nitems; k++)
                free (fresh_items[i][k]);
            free (fresh_items[i]);
        }
    }
    free (fresh);
    free (fresh_items);
    return rc;
}

int
sb_config_set_at (sb_config_t *self, const char *key, const char *value, const char *origin, int line)
{
    /* a boolean set to another boolean's spelling stays a boolean (a series
     * records workflow.generate_data False for the runs after the first) */
    const sb_config_entry_t *was = sb_config_get (self, key);
    int keep_bool = was && was->is_bool && s_yaml11_bool (value);
    char *copy = strdup (value);
    if (!copy || s_set (self, key, copy, NULL, 0, origin, line) != 0) {
        free (copy);
        return -1;
    }
    if (keep_bool)
        s_mark_bool (self, key, 1);
    return 0;
}
