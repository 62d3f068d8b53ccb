/* dp_schema.h: table-driven configuration. A config struct is described once, as a table of
 * keys (name, type, offset of the field, accepted range, default, help); from that table come its
 * defaults, its JSON reader (bad values and unknown keys refused, naming the file and the key),
 * its JSON writer, its key=value parser (command-line options, Python keywords) and its help
 * lines (doppler --help, the man page). The table form follows dp_gen_param (dp_gen.h).
 *
 * Used by the train config (dp_train.h), the improvement config and search (dp_improve.h), the
 * searches' keys (dp_search.h), the machine's keys (dp_machine.h: numbers or words, owned file
 * names, keys written only when they apply) and the sweep config (sweep.h). */
#ifndef DP_SCHEMA_H
#define DP_SCHEMA_H

#include <stddef.h>
#include <jansson.h>

#include "dp_error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    DP_SCHEMA_INT,    /* int field: a JSON integer in [lo, hi] */
    DP_SCHEMA_LONG,   /* long field: a JSON integer in [lo, hi] */
    DP_SCHEMA_DOUBLE, /* double field: a JSON number in [lo, hi] */
    DP_SCHEMA_FLOAT,  /* float field: a JSON number in [lo, hi], stored rounded to float */
    DP_SCHEMA_BOOL,   /* int field, 0 or 1: JSON true or false (text: true/false, yes/no, 1/0, on/off) */
    DP_SCHEMA_ENUM,   /* int field (or an enum the size of an int): the index of a JSON string
                       * among choices "a|b|c" */
    DP_SCHEMA_STRING, /* char[size] field: a JSON string shorter than size bytes (not empty) */
    DP_SCHEMA_NAME    /* char * field owned by the object (dp_alloc_strdup'd, NULL: not given, the
                       * default of a key whose def is NULL): a JSON string, not empty, of any
                       * length; dp_schema_release frees it */
} dp_schema_type;

/* Flags of a key (dp_schema_key.flags, or'ed): */
enum {
    DP_SCHEMA_ALWAYS = 1,  /* written by dp_schema_to_json even at its default */
    DP_SCHEMA_UNSET = 2,   /* the default means "not given" (the help says what then happens): it
                            * may lie outside the range, is never accepted as a value and is never
                            * written; help texts show no "(default ...)" for it */
    DP_SCHEMA_LO_OPEN = 4  /* numbers: the lower bound is excluded, (lo, hi] */
};

/* Whether a key applies to obj as it stands (the machine's peak_flops: only without a topology):
 * a key that does not apply is not written. */
typedef int (*dp_schema_when_fn)(const void *obj);

/* A check of a string value beyond its length (DP_SCHEMA_STRING): 0 if s is accepted; otherwise
 * non-zero with why (cap bytes) saying what is accepted, as "must be one of a, b, c". */
typedef int (*dp_schema_check_fn)(const char *s, char *why, size_t cap);

typedef struct dp_schema_key {
    const char *key;          /* the JSON key ("budget"); on the command line --budget, or as the
                               * table's user spells it */
    dp_schema_type type;
    size_t offset;            /* of the field in the config struct (offsetof) */
    double lo, hi;            /* numbers: the accepted range, bounds included (-HUGE_VAL and
                               * HUGE_VAL: unbounded) */
    const char *choices;      /* DP_SCHEMA_ENUM: the names, "|"-separated, index = value stored;
                               * DP_SCHEMA_INT and DP_SCHEMA_DOUBLE: words accepted besides a
                               * number, "|"-separated "word=value" ("topology=-1"; written back
                               * as the word), or NULL; DP_SCHEMA_NAME: what the name is, as
                               * help texts show it ("FILE", "FILE|NAME"), or NULL ("NAME") */
    size_t size;              /* DP_SCHEMA_STRING: the field's capacity in bytes, NUL included */
    const char *def;          /* the default, as text dp_schema_set takes ("20000", "geometric") */
    const char *help;         /* one line: meaning, unit, source followed */
    dp_schema_check_fn check; /* DP_SCHEMA_STRING: an extra check, or NULL */
    const char *option;       /* the command-line spelling without "--" when it is not the key with
                               * '-' for '_' ("transfer-model" for "transfer"), or NULL */
    unsigned flags;           /* DP_SCHEMA_ALWAYS, DP_SCHEMA_UNSET, DP_SCHEMA_LO_OPEN, or 0 */
    dp_schema_when_fn when;   /* written only when it returns non-zero; NULL: always applies */
} dp_schema_key;

/* A table is an array of dp_schema_key ended by one with key NULL. A config of several JSON
 * objects is a list of sections, ended by one with name NULL: */
typedef struct dp_schema_section {
    const char *name;          /* the object's key path ("adam", "stages.S"); "" for the top level */
    const dp_schema_key *keys; /* its table */
    const char *help;          /* one line: what the object holds */
    const char *const *others; /* the object's keys outside the table (objects of their own, keys
                                * read by hand for rules across keys), NULL-ended; or NULL */
} dp_schema_section;

/* sizeof(dp_schema_key) and sizeof(dp_schema_section) in this build (for a binding that lays
 * them out; python/doppler reads them through the accessors below instead). */
size_t dp_schema_key_size(void);
size_t dp_schema_section_size(void);

/* Reading tables without laying out dp_schema_key and dp_schema_section (bindings: Python's
 * doppler.config_keys and its config checks). Pointers are into the static tables.
 *   dp_schema_section_at: section i of a list ended by name NULL (i from 0), or NULL past its
 *     end (the caller keeps i within the list: no section past the end is read).
 *   dp_schema_section_get_name: the object's key path ("" for the top level).
 *   dp_schema_section_get_key: entry k of the section's table, NULL past its end or without one;
 *     dp_schema_section_get_other: its k-th key outside the table, NULL past the end.
 *   dp_schema_key_get_key, _type (a dp_schema_type), _choices (DP_SCHEMA_ENUM's names,
 *     "|"-separated; NULL otherwise), _default (text dp_schema_set takes), _help: an entry's fields.
 * An entry is a table of its own for dp_schema_set (the set stops at the first match). */
const dp_schema_section *dp_schema_section_at(const dp_schema_section *list, int i);
const char *dp_schema_section_get_name(const dp_schema_section *s);
const dp_schema_key *dp_schema_section_get_key(const dp_schema_section *s, int k);
const char *dp_schema_section_get_other(const dp_schema_section *s, int k);
const char *dp_schema_key_get_key(const dp_schema_key *k);
int dp_schema_key_get_type(const dp_schema_key *k);
const char *dp_schema_key_get_choices(const dp_schema_key *k);
const char *dp_schema_key_get_default(const dp_schema_key *k);
const char *dp_schema_key_get_help(const dp_schema_key *k);

/* The entry called key (its JSON name, or its option spelling: '-' for '_', an optional leading
 * "--", or the entry's own option), or NULL. */
const dp_schema_key *dp_schema_find(const dp_schema_key *t, const char *key);

/* The option spelling of entry k without "--" ("peak-flops", "transfer-model") into buf (cap
 * bytes); returns buf. */
const char *dp_schema_option_text(const dp_schema_key *k, char *buf, size_t cap);

/* Set every field of the table in obj to its default (a DP_SCHEMA_UNSET one without the range
 * check; a DP_SCHEMA_NAME to NULL, or to a copy of def: obj must hold no name yet). A default
 * that does not parse is a bug of the table (asserted in debug builds; tests/test_schema.c checks
 * every table). */
void dp_schema_defaults(const dp_schema_key *t, void *obj);

/* Set key (a JSON key, or an option spelled with '-' for '_' and an optional leading "--") of obj
 * from text. Errors (DP_EINVAL, obj unchanged): "WHERE: unknown key "K" (known: ...)", "WHERE:
 * "K" must be ..., got 'V'", "WHERE: "K" = V out of range [lo, hi]". where names the source (a
 * file, "config", an option list); prefix is put before the key in messages ("improve."), either
 * may be NULL. */
int dp_schema_set(const dp_schema_key *t, void *obj, const char *key, const char *value, const char *where,
                  const char *prefix, dp_error *err);

/* Set the field of entry k of obj from text, the key named as the caller spelled it (name, e.g.
 * "--devices"), once, at the head of the message: "NAME: must be ..., got 'V'", "NAME: V out of
 * range [lo, hi]" (DP_EINVAL, obj unchanged; DP_ENOMEM for a DP_SCHEMA_NAME that cannot be
 * copied). */
int dp_schema_set_entry(const dp_schema_key *k, void *obj, const char *name, const char *value, dp_error *err);

/* Free the DP_SCHEMA_NAME fields of obj and set them to NULL. */
void dp_schema_release(const dp_schema_key *t, void *obj);

/* Set the field of entry k in obj from a JSON value, with the same checks and messages as
 * dp_schema_set (the key named as prefix + k->key). */
int dp_schema_set_json(const dp_schema_key *k, void *obj, const json_t *v, const char *where, const char *prefix,
                       dp_error *err);

/* Read every key of the JSON object o into obj: an unknown key (not the table's nor one of skip, a
 * NULL-ended list of keys the caller reads itself, or NULL; the message lists both) or a bad value
 * is refused as dp_schema_set does; on an
 * error obj may hold the keys read before it (callers read into a copy). o not an object:
 * "WHERE: "PREFIX" must be an object" (PREFIX without its final '.'; "the top level" when none). */
int dp_schema_from_json(const dp_schema_key *t, void *obj, const json_t *o, const char *where, const char *prefix,
                        const char *const *skip, dp_error *err);

/* A config's reader: the JSON object o into obj; path is the file it came from (NULL: text). */
typedef int (*dp_schema_read_fn)(void *obj, const json_t *o, const char *path, dp_error *err);

/* Read a config with read: from the file path (text NULL; a file that is not JSON named with its
 * line and column, dp_json_load; read's error prefixed "PATH: "), or from text held in memory
 * (a checkpoint's; "config: line L: ..." when it is not JSON). DP_OK, or read's error. */
int dp_schema_load(const char *path, const char *text, dp_schema_read_fn read, void *obj, dp_error *err);

/* The field of entry k of obj as a JSON value (integers, reals through dp_json_number, booleans,
 * strings: the enum's name). A new reference. */
json_t *dp_schema_to_json_value(const dp_schema_key *k, const void *obj);

/* Set into o (a JSON object), in the table's order, every key of the table (all != 0) or only
 * those whose value differs from the default (all == 0) and those flagged DP_SCHEMA_ALWAYS; a key
 * whose when() says it does not apply, a DP_SCHEMA_NAME not given and an unset default
 * (DP_SCHEMA_UNSET) are left out either way. DP_OK, or DP_ENOMEM. */
int dp_schema_to_json(const dp_schema_key *t, const void *obj, json_t *o, int all);

/* The field of entry k of obj as text, as dp_schema_set takes it ("0.01", "geometric", "true"),
 * into buf (cap bytes). */
void dp_schema_value_text(const dp_schema_key *k, const void *obj, char *buf, size_t cap);

/* The value kind of entry k as a help text shows it: "INT in [1, 4096]", "NUMBER", "true|false",
 * "geometric|linear", "NAME", "NUMBER in (0, 1e+30] or topology", into buf (cap bytes). */
void dp_schema_kind_text(const dp_schema_key *k, char *buf, size_t cap);

/* The value of entry k as an option's argument shows it in a help line: "N", "X", "FILE",
 * "fixed|fifo|maxmin", "X|topology", into buf (cap bytes). */
void dp_schema_metavar(const dp_schema_key *k, char *buf, size_t cap);

/* The default of entry k as help texts show it, " (default D)", or "" for a key whose default
 * means "not given" (DP_SCHEMA_UNSET, a DP_SCHEMA_NAME without def), into buf (cap bytes). */
void dp_schema_default_text(const dp_schema_key *k, char *buf, size_t cap);

/* The keys of the table, ", "-separated ("budget, t0, t_end"), into buf (cap bytes; cut short
 * with "..." when it does not fit). */
void dp_schema_keys_text(const dp_schema_key *t, char *buf, size_t cap);

#ifdef __cplusplus
}
#endif
#endif
