/* config: a DLIO workload YAML file and command-line overrides as a flat,
 * ordered set of dotted keys ("dataset.num_files_train"), each remembering
 * the file and line it came from, so every later error can name them.
 *
 * Typed access and validation live in workload.c; this module only parses. */
#ifndef SB_CONFIG_H
#define SB_CONFIG_H

#include <stddef.h>

typedef struct sb_config sb_config_t;

typedef struct {
    const char  *key;       /* "reader.batch_size" */
    const char  *value;     /* scalar text; NULL for a list */
    const char **items;     /* list items (NULL-terminated) for a sequence; else NULL */
    size_t       nitems;
    const char  *origin;    /* file name, preset name or "command line" */
    int          line;      /* 1-based; 0 for the command line */
    int          hydra_add; /* 1: set by a Hydra append (+workload.KEY=VALUE, ++workload.KEY=VALUE), the
                             * form that adds a key DLIO's configuration lacks: unknown, it is a
                             * warning; given as KEY=VALUE (or workload.KEY=VALUE), an error */
    int          is_bool;   /* 1: DLIO's configuration gets a boolean here, not text: a plain (unquoted)
                             * YAML 1.1 true/false/yes/no/on/off in any of PyYAML's spellings, as
                             * OmegaConf's loader reads it, or Hydra's true/false on the command line.
                             * A quoted "off" and the command line's off are text (libyaml gives an
                             * explicit !!str the default tag: such a plain scalar counts as one) */
} sb_config_entry_t;

/* Create an empty configuration; NULL on allocation failure. */
sb_config_t *sb_config_new (void);
/* Destroy; accepts NULL and nulls the pointer. */
void sb_config_destroy (sb_config_t **self_p);

/* Parse YAML text whose errors will name `origin`. Keys already present are
 * replaced. Aliases and YAML merge keys (`<<: *a`, `<<: [*a, *b]`) are
 * expanded (a mapping's own keys win over merged ones, an earlier merged
 * mapping over a later one); DLIO's `model: NAME` sets model.name. Bounded
 * before libyaml builds the document: 64 levels of nesting, 256 anchors,
 * 1024 aliases, 128-byte anchor names; then 16384 nodes walked through
 * aliases and merge keys and 4096 keys. Returns 0, or -1 with
 * "origin:line: [key 'k': ]..." in err. */
int sb_config_load_string (sb_config_t *self, const char *text, const char *origin,
                           char *err, size_t err_size);
/* Parse size bytes of YAML text (not necessarily NUL-terminated) the way a
 * workload file is parsed: a NUL byte inside or more than 16 MiB is an
 * error. The fuzz target tests/fuzz/fuzz_config.c enters here. Returns 0 or
 * -1 with "origin[:line]: ..." in err. */
int sb_config_load_buffer (sb_config_t *self, const char *data, size_t size, const char *origin,
                           char *err, size_t err_size);
/* Read and parse a YAML file through sb_config_load_buffer; the origin is the path. */
int sb_config_load_file (sb_config_t *self, const char *path, char *err, size_t err_size);

/* Apply one command-line override "KEY=VALUE". DLIO/Hydra spellings
 * "++workload.KEY=VALUE", "+workload.KEY=VALUE" and "workload.KEY=VALUE" are
 * accepted; the first two mark the entry hydra_add. VALUE is a YAML scalar, a flow mapping "{k: v, ...}"
 * (KEY.k), a flow list "[a,b]", or a flow list of mappings "[{k: v}, {k: v}]" (KEY.0.k, KEY.1.k, as
 * the file form sets them); a list replaces what the file listed under KEY whole. "model=NAME" sets
 * model.name. Returns 0 or -1. */
int sb_config_override (sb_config_t *self, const char *assignment, char *err, size_t err_size);

/* Look up a key; NULL when absent. Marks it used. Borrowed. */
const sb_config_entry_t *sb_config_get (sb_config_t *self, const char *key);

/* Number of entries and entry by index (in first-seen order). Borrowed. */
size_t sb_config_count (const sb_config_t *self);
const sb_config_entry_t *sb_config_at (const sb_config_t *self, size_t i);

/* Where entry e came from, for error messages, into buf: "origin:line",
 * "origin" (the command line: no line) or "default" (e NULL: the key was
 * not given). Returns buf. */
const char *sb_config_where (const sb_config_entry_t *e, char *buf, size_t size);

/* Serialise the effective configuration as YAML (nested mappings). Returns a
 * newly allocated string the caller frees, or NULL. */
char *sb_config_to_yaml (const sb_config_t *self);

/* Replace the value of every entry whose key is_secret says is a secret
 * with replacement (the old text is wiped), so that it is neither stored
 * nor shown. Returns how many were replaced, or -1 when out of memory. */
int sb_config_redact (sb_config_t *self, int (*is_secret) (const char *key), const char *replacement);

/* Set key `to` to a copy of key `from`'s value or list, with from's origin
 * and line (so errors about `to` point at where the value was written).
 * Returns 0, or -1 when from is absent or memory runs out. */
int sb_config_copy (sb_config_t *self, const char *from, const char *to);

/* Set key to a single value, as written at origin:line (line 0: no line).
 * Returns 0, or -1 when memory runs out. */
int sb_config_set_at (sb_config_t *self, const char *key, const char *value, const char *origin, int line);

/* Resolve OmegaConf interpolations in every value and list item, as
 * OmegaConf resolves DLIO's configuration: ${section.key} (another key of
 * this configuration, overrides included, itself resolved), ${.key} and
 * ${..key} (relative to the key's own section), ${oc.env:VAR} and
 * ${oc.env:VAR,default} (the environment; null: nothing), \${ for a
 * literal ${. A value that is exactly ${NAME} in upper case naming no key
 * (as the upstream s3dlio files write their credentials) stays as written when
 * env_ref_kept(key) says the key takes it from the environment; elsewhere it
 * is an error. A reference that would copy a credential (a key or variable
 * is_secret names) into a key that is not one is an error. Errors are
 * "origin:line: key 'K': '${ref}' ..." and never quote a secret key's
 * value. Entries resolved once stay resolved (a later call only resolves
 * what overrides set since). Returns 0, or -1 with err (nothing changed). */
int sb_config_interpolate (sb_config_t *self, int (*is_secret) (const char *key),
                           int (*env_ref_kept) (const char *key), char *err, size_t err_size);

#endif
