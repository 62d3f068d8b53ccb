/* dp_schema.c: table-driven configuration (dp_schema.h). */
#include "dp_schema.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "dp_alloc.h"
#include "dp_json.h"

#define FIELD(obj, k, T) ((T *)((char *)(obj) + (k)->offset))
#define CFIELD(obj, k, T) ((const T *)((const char *)(obj) + (k)->offset))

/* "key" and "--key-name" (or "--key_name") name the same entry */
static int same_key(const char *table_key, const char *key)
{
    if (strncmp(key, "--", 2) == 0) key += 2;
    for (; *table_key && *key; table_key++, key++)
        if (*table_key != *key && !((*table_key == '_' || *table_key == '-') && (*key == '-' || *key == '_'))) return 0;
    return *table_key == *key;
}

size_t dp_schema_key_size(void)
{
    return sizeof(dp_schema_key);
}

size_t dp_schema_section_size(void)
{
    return sizeof(dp_schema_section);
}

const dp_schema_key *dp_schema_find(const dp_schema_key *t, const char *key)
{
    for (; key && t->key; t++)
        if (same_key(t->key, key) || (t->option && same_key(t->option, key))) return t;
    return NULL;
}

const char *dp_schema_option_text(const dp_schema_key *k, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s", k->option ? k->option : k->key);
    if (!k->option)
        for (char *p = buf; *p; p++)
            if (*p == '_') *p = '-';
    return buf;
}

/* The words of a number ("word=value|word=value", dp_schema_key.choices): the value of word s
 * into x, 0; -1 when s is none of them. */
static int word_value(const char *words, const char *s, double *x)
{
    const size_t n = strlen(s);
    for (const char *p = words; p && *p;) {
        const char *eq = strchr(p, '='), *bar = strchr(p, '|');
        if (!eq || (bar && bar < eq)) return -1; /* a word without "=value": a table bug, never matched */
        if ((size_t)(eq - p) == n && strncmp(p, s, n) == 0) {
            *x = strtod(eq + 1, NULL);
            return 0;
        }
        p = bar ? bar + 1 : NULL;
    }
    return -1;
}

/* The word whose value is x into buf, 0; -1 when none has it. */
static int word_of(const char *words, double x, char *buf, size_t cap)
{
    for (const char *p = words; p && *p;) {
        const char *eq = strchr(p, '='), *bar = strchr(p, '|');
        if (!eq) return -1;
        if (strtod(eq + 1, NULL) == x) {
            snprintf(buf, cap, "%.*s", (int)(eq - p), p);
            return 0;
        }
        p = bar ? bar + 1 : NULL;
    }
    return -1;
}

/* the words alone, joined by sep: "topology" */
static void words_text(const char *words, const char *sep_, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = '\0';
    for (const char *p = words; p && *p && len < cap;) {
        const char *eq = strchr(p, '='), *bar = strchr(p, '|');
        if (!eq) break;
        len += (size_t)snprintf(buf + len, cap - len, "%s%.*s", len ? sep_ : "", (int)(eq - p), p);
        p = bar ? bar + 1 : NULL;
    }
}

static int has_words(const dp_schema_key *k)
{
    return (k->type == DP_SCHEMA_INT || k->type == DP_SCHEMA_LONG || k->type == DP_SCHEMA_DOUBLE ||
            k->type == DP_SCHEMA_FLOAT) && k->choices && k->choices[0];
}

/* the index of name among choices "a|b|c", or -1 */
static int choice_index(const char *choices, const char *name)
{
    const size_t n = strlen(name);
    int i = 0;
    for (const char *p = choices; p; i++) {
        const char *bar = strchr(p, '|');
        const size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == n && strncmp(p, name, n) == 0) return i;
        p = bar ? bar + 1 : NULL;
    }
    return -1;
}

/* choice i of choices into buf */
static void choice_name(const char *choices, int i, char *buf, size_t cap)
{
    const char *p = choices;
    for (; p && i > 0; i--) {
        p = strchr(p, '|');
        if (p) p++;
    }
    const char *bar = p ? strchr(p, '|') : NULL;
    snprintf(buf, cap, "%.*s", p ? (int)(bar ? (size_t)(bar - p) : strlen(p)) : 1, p ? p : "?");
}

/* "a", "b" or "c" */
static void choices_text(const char *choices, char *buf, size_t cap)
{
    buf[0] = '\0';
    int n = 1;
    for (const char *p = choices; (p = strchr(p, '|')); p++) n++;
    size_t len = 0;
    for (int i = 0; i < n && len < cap; i++) {
        char name[64];
        choice_name(choices, i, name, sizeof name);
        len += (size_t)snprintf(buf + len, cap - len, "%s\"%s\"", i == 0 ? "" : i == n - 1 ? " or " : ", ", name);
    }
}

static int is_integer_type(dp_schema_type t)
{
    return t == DP_SCHEMA_INT || t == DP_SCHEMA_LONG;
}

/* "[1, 4096]" for a bounded range, "" for an unbounded one */
static void range_text(const dp_schema_key *k, char *buf, size_t cap)
{
    buf[0] = '\0';
    if (isinf(k->lo) && isinf(k->hi)) return;
    char lo[32], hi[32];
    const char *f = is_integer_type(k->type) ? "%.0f" : "%.10g";
    if (isinf(k->lo)) snprintf(lo, sizeof lo, "-inf");
    else snprintf(lo, sizeof lo, f, k->lo);
    if (isinf(k->hi)) snprintf(hi, sizeof hi, "inf");
    else snprintf(hi, sizeof hi, f, k->hi);
    snprintf(buf, cap, "%s%s, %s]", k->flags & DP_SCHEMA_LO_OPEN ? "(" : "[", lo, hi);
}

void dp_schema_kind_text(const dp_schema_key *k, char *buf, size_t cap)
{
    char r[80], w[160] = "";
    range_text(k, r, sizeof r);
    if (has_words(k)) {
        char list[128];
        words_text(k->choices, "|", list, sizeof list);
        snprintf(w, sizeof w, " or %s", list);
    }
    switch (k->type) {
    case DP_SCHEMA_INT:
    case DP_SCHEMA_LONG: snprintf(buf, cap, "INT%s%s%s", r[0] ? " in " : "", r, w); break;
    case DP_SCHEMA_DOUBLE:
    case DP_SCHEMA_FLOAT: snprintf(buf, cap, "NUMBER%s%s%s", r[0] ? " in " : "", r, w); break;
    case DP_SCHEMA_BOOL: snprintf(buf, cap, "true|false"); break;
    case DP_SCHEMA_ENUM: snprintf(buf, cap, "%s", k->choices); break;
    case DP_SCHEMA_STRING: snprintf(buf, cap, "NAME"); break;
    case DP_SCHEMA_NAME: snprintf(buf, cap, "%s", k->choices ? k->choices : "NAME"); break;
    }
}

void dp_schema_metavar(const dp_schema_key *k, char *buf, size_t cap)
{
    char w[128] = "";
    if (has_words(k)) {
        w[0] = '|';
        words_text(k->choices, "|", w + 1, sizeof w - 1);
    }
    switch (k->type) {
    case DP_SCHEMA_INT:
    case DP_SCHEMA_LONG: snprintf(buf, cap, "N%s", w); break;
    case DP_SCHEMA_DOUBLE:
    case DP_SCHEMA_FLOAT: snprintf(buf, cap, "X%s", w); break;
    default: dp_schema_kind_text(k, buf, cap); break;
    }
}

void dp_schema_default_text(const dp_schema_key *k, char *buf, size_t cap)
{
    if ((k->flags & DP_SCHEMA_UNSET) || !k->def) snprintf(buf, cap, "%s", "");
    else snprintf(buf, cap, " (default %s)", k->def);
}

/* "WHERE: " or "" */
static const char *sep(const char *where)
{
    return where ? ": " : "";
}

/* "must be ..." for entry k */
static void expected_text(const dp_schema_key *k, char *buf, size_t cap)
{
    char r[80], w[200] = "";
    range_text(k, r, sizeof r);
    if (has_words(k)) {
        char list[160];
        words_text(k->choices, "\", \"", list, sizeof list);
        snprintf(w, sizeof w, " or \"%s\"", list);
    }
    switch (k->type) {
    case DP_SCHEMA_INT:
    case DP_SCHEMA_LONG: snprintf(buf, cap, "must be an integer%s%s%s", r[0] ? " in " : "", r, w); break;
    case DP_SCHEMA_DOUBLE:
    case DP_SCHEMA_FLOAT: snprintf(buf, cap, "must be a number%s%s%s", r[0] ? " in " : "", r, w); break;
    case DP_SCHEMA_BOOL: snprintf(buf, cap, "must be true or false"); break;
    case DP_SCHEMA_ENUM: {
        char c[256];
        choices_text(k->choices, c, sizeof c);
        snprintf(buf, cap, "must be %s", c);
        break;
    }
    case DP_SCHEMA_STRING: snprintf(buf, cap, "must be a string of 1 to %zu bytes", k->size - 1); break;
    case DP_SCHEMA_NAME: snprintf(buf, cap, "must be a non-empty string"); break;
    }
}

/* The value of one key, parsed from JSON or from text: its checks and its store. */
typedef struct {
    long i;
    double x;
    const char *s;
    int word; /* x is one of the key's words: no range check */
} value;

/* Who a message is about: 'WHERE: "PREFIXKEY"' (eq " = ") or, for a key as the caller spelled
 * it, 'NAME:' (eq " "). */
typedef struct {
    char head[320];
    const char *eq;
} subject;

static subject quoted(const dp_schema_key *k, const char *where, const char *prefix)
{
    subject u;
    snprintf(u.head, sizeof u.head, "%s%s\"%s%s\"", where ? where : "", sep(where), prefix ? prefix : "", k->key);
    u.eq = " = ";
    return u;
}

static subject spelled(const char *name)
{
    subject u;
    snprintf(u.head, sizeof u.head, "%s:", name);
    u.eq = " ";
    return u;
}

static int bad_value(const dp_schema_key *k, const char *text, const subject *u, dp_error *err)
{
    char e[320];
    expected_text(k, e, sizeof e);
    if (text) return dp_error_set(err, DP_EINVAL, "%s %s, got '%s'", u->head, e, text);
    return dp_error_set(err, DP_EINVAL, "%s %s", u->head, e);
}

/* x within k's range */
static int in_range(const dp_schema_key *k, double x)
{
    return (k->flags & DP_SCHEMA_LO_OPEN ? x > k->lo : x >= k->lo) && x <= k->hi;
}

/* check v (already of k's type) against the range (unless unchecked: a default), choices and
 * check, then store it */
static int store(const dp_schema_key *k, void *obj, value v, int unchecked, const subject *u, dp_error *err)
{
    char r[80];
    switch (k->type) {
    case DP_SCHEMA_INT:
    case DP_SCHEMA_LONG:
        if (v.word) v.i = (long)v.x;
        else if (!unchecked && !in_range(k, (double)v.i)) {
            range_text(k, r, sizeof r);
            return dp_error_set(err, DP_EINVAL, "%s%s%ld out of range %s", u->head, u->eq, v.i, r);
        }
        if (k->type == DP_SCHEMA_INT) *FIELD(obj, k, int) = (int)v.i;
        else *FIELD(obj, k, long) = v.i;
        return DP_OK;
    case DP_SCHEMA_DOUBLE:
    case DP_SCHEMA_FLOAT:
        if (!v.word && !unchecked && !in_range(k, v.x)) {
            range_text(k, r, sizeof r);
            /* the fewest digits that read back to the value: %g made 1.0000001 "1 out of range
             * [0, 1]" (a review) */
            char num[40];
            return dp_error_set(err, DP_EINVAL, "%s%s%s out of range %s", u->head, u->eq,
                                dp_json_fmt_exact(v.x, num, sizeof num), r);
        }
        if (k->type == DP_SCHEMA_DOUBLE) *FIELD(obj, k, double) = v.x;
        else *FIELD(obj, k, float) = (float)v.x;
        return DP_OK;
    case DP_SCHEMA_BOOL: *FIELD(obj, k, int) = v.i != 0; return DP_OK;
    case DP_SCHEMA_ENUM: {
        const int i = choice_index(k->choices, v.s);
        if (i < 0) return bad_value(k, NULL, u, err);
        *FIELD(obj, k, int) = i;
        return DP_OK;
    }
    case DP_SCHEMA_STRING: {
        if ((!v.s[0] && !unchecked) || strlen(v.s) >= k->size) return bad_value(k, NULL, u, err);
        char why[256];
        if (k->check && k->check(v.s, why, sizeof why) != 0)
            return dp_error_set(err, DP_EINVAL, "%s %s, got \"%s\"", u->head, why, v.s);
        snprintf(FIELD(obj, k, char), k->size, "%s", v.s);
        return DP_OK;
    }
    case DP_SCHEMA_NAME: {
        char **slot = FIELD(obj, k, char *);
        if (!v.s) { /* a default of NULL: not given */
            *slot = NULL;
            return DP_OK;
        }
        if (!v.s[0]) return bad_value(k, NULL, u, err);
        char *copy = dp_alloc_strdup(v.s);
        if (!copy) return dp_error_set(err, DP_ENOMEM, "%s out of memory", u->head);
        if (!unchecked) free(*slot); /* a default's object holds no name yet */
        *slot = copy;
        return DP_OK;
    }
    }
    return DP_EINVAL;
}

int dp_schema_set_json(const dp_schema_key *k, void *obj, const json_t *v, const char *where, const char *prefix,
                       dp_error *err)
{
    const subject u = quoted(k, where, prefix);
    value x = {0};
    if (has_words(k) && json_is_string(v)) {
        if (word_value(k->choices, json_string_value(v), &x.x) != 0) return bad_value(k, NULL, &u, err);
        x.word = 1;
        return store(k, obj, x, 0, &u, err);
    }
    switch (k->type) {
    case DP_SCHEMA_INT:
    case DP_SCHEMA_LONG:
        if (!json_is_integer(v)) return bad_value(k, NULL, &u, err);
        x.i = (long)json_integer_value(v);
        break;
    case DP_SCHEMA_DOUBLE:
    case DP_SCHEMA_FLOAT:
        if (!json_is_number(v)) return bad_value(k, NULL, &u, err);
        x.x = json_number_value(v);
        break;
    case DP_SCHEMA_BOOL:
        if (!json_is_boolean(v)) return bad_value(k, NULL, &u, err);
        x.i = json_is_true(v);
        break;
    case DP_SCHEMA_ENUM:
    case DP_SCHEMA_STRING:
    case DP_SCHEMA_NAME:
        if (!json_is_string(v)) return bad_value(k, NULL, &u, err);
        x.s = json_string_value(v);
        break;
    }
    return store(k, obj, x, 0, &u, err);
}

/* text as k's type into x; 0 on success */
static int parse_text(const dp_schema_key *k, const char *s, value *x)
{
    char *end;
    errno = 0;
    if (has_words(k) && word_value(k->choices, s, &x->x) == 0) {
        x->word = 1;
        return 0;
    }
    switch (k->type) {
    case DP_SCHEMA_INT:
    case DP_SCHEMA_LONG:
        x->i = strtol(s, &end, 10);
        return errno || end == s || *end ? -1 : 0;
    case DP_SCHEMA_DOUBLE:
    case DP_SCHEMA_FLOAT:
        x->x = strtod(s, &end);
        return errno || end == s || *end || !isfinite(x->x) ? -1 : 0;
    case DP_SCHEMA_BOOL:
        if (!strcasecmp(s, "true") || !strcasecmp(s, "yes") || !strcmp(s, "1") || !strcasecmp(s, "on")) x->i = 1;
        else if (!strcasecmp(s, "false") || !strcasecmp(s, "no") || !strcmp(s, "0") || !strcasecmp(s, "off")) x->i = 0;
        else return -1;
        return 0;
    case DP_SCHEMA_ENUM:
    case DP_SCHEMA_STRING:
    case DP_SCHEMA_NAME: x->s = s; return 0;
    }
    return -1;
}

/* entry k of obj from text, the default's text when unchecked (no range check, NULL allowed for
 * a DP_SCHEMA_NAME) */
static int set_text(const dp_schema_key *k, void *obj, const char *text, int unchecked, const subject *u, dp_error *err)
{
    value x = {0};
    if (!text && unchecked && k->type == DP_SCHEMA_NAME) return store(k, obj, x, 1, u, err);
    if (!text || parse_text(k, text, &x) != 0) return bad_value(k, text ? text : "", u, err);
    /* store's message of a bad name does not quote it: say it again with the text */
    int rc = store(k, obj, x, unchecked, u, err);
    if (rc == DP_EINVAL && (k->type == DP_SCHEMA_ENUM || (k->type == DP_SCHEMA_NAME && !text[0]))) bad_value(k, text, u, err);
    return rc;
}

int dp_schema_set(const dp_schema_key *t, void *obj, const char *key, const char *text, const char *where,
                  const char *prefix, dp_error *err)
{
    const dp_schema_key *k = dp_schema_find(t, key);
    if (!k) {
        char known[1024];
        dp_schema_keys_text(t, known, sizeof known);
        return dp_error_set(err, DP_EINVAL, "%s%sunknown key \"%s%s\" (known: %s)", where ? where : "", sep(where),
                            prefix ? prefix : "", key ? key : "(null)", known);
    }
    const subject u = quoted(k, where, prefix);
    return set_text(k, obj, text, 0, &u, err);
}

int dp_schema_set_entry(const dp_schema_key *k, void *obj, const char *name, const char *text, dp_error *err)
{
    const subject u = spelled(name ? name : k->key);
    return set_text(k, obj, text, 0, &u, err);
}

void dp_schema_defaults(const dp_schema_key *t, void *obj)
{
    for (; t->key; t++) {
        const subject u = quoted(t, "default", NULL);
        int rc = set_text(t, obj, t->def, (t->flags & DP_SCHEMA_UNSET) || (t->type == DP_SCHEMA_NAME && !t->def), &u, NULL);
        assert(rc == DP_OK);
        (void)rc;
    }
}

void dp_schema_release(const dp_schema_key *t, void *obj)
{
    for (; t->key; t++)
        if (t->type == DP_SCHEMA_NAME) {
            free(*FIELD(obj, t, char *));
            *FIELD(obj, t, char *) = NULL;
        }
}

static int skipped(const char *const *skip, const char *key)
{
    for (; skip && *skip; skip++)
        if (strcmp(*skip, key) == 0) return 1;
    return 0;
}

int dp_schema_from_json(const dp_schema_key *t, void *obj, const json_t *o, const char *where, const char *prefix,
                        const char *const *skip, dp_error *err)
{
    const char *w = where ? where : "";
    if (!json_is_object(o)) {
        if (!prefix || !prefix[0]) return dp_error_set(err, DP_EINVAL, "%s%sthe top level must be an object", w, sep(where));
        return dp_error_set(err, DP_EINVAL, "%s%s\"%.*s\" must be an object", w, sep(where), (int)strlen(prefix) - 1, prefix);
    }
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)o, key, v) {
        if (skipped(skip, key)) continue;
        const dp_schema_key *k = NULL;
        for (const dp_schema_key *q = t; q->key && !k; q++)
            if (strcmp(q->key, key) == 0) k = q;
        if (!k) {
            char known[1024];
            dp_schema_keys_text(t, known, sizeof known);
            for (const char *const *q = skip; q && *q; q++) {
                const size_t len = strlen(known);
                snprintf(known + len, sizeof known - len, "%s%s", len ? ", " : "", *q);
            }
            return dp_error_set(err, DP_EINVAL, "%s%sunknown key \"%s%s\" (known: %s)", w, sep(where), prefix ? prefix : "", key,
                                known);
        }
        int rc = dp_schema_set_json(k, obj, v, where, prefix, err);
        if (rc != DP_OK) return rc;
    }
    return DP_OK;
}

int dp_schema_load(const char *path, const char *text, dp_schema_read_fn read, void *obj, dp_error *err)
{
    /* size and memory checked before parsing, duplicate keys refused, errors at file:line:column */
    json_t *o = text ? dp_json_loads_text(text, "config", err) : dp_json_load(path, err);
    if (!o) return err && err->code ? err->code : DP_EINVAL;
    int rc = read(obj, o, text ? NULL : path, err);
    json_decref(o);
    if (rc != DP_OK && !text) dp_error_prefix(err, "%s", path);
    return rc;
}

/* the numeric value of k's field (words' keys) */
static double number_of(const dp_schema_key *k, const void *obj)
{
    switch (k->type) {
    case DP_SCHEMA_INT: return *CFIELD(obj, k, int);
    case DP_SCHEMA_LONG: return (double)*CFIELD(obj, k, long);
    case DP_SCHEMA_DOUBLE: return *CFIELD(obj, k, double);
    case DP_SCHEMA_FLOAT: return *CFIELD(obj, k, float);
    default: return NAN;
    }
}

json_t *dp_schema_to_json_value(const dp_schema_key *k, const void *obj)
{
    char word[64];
    if (has_words(k) && word_of(k->choices, number_of(k, obj), word, sizeof word) == 0) return json_string(word);
    switch (k->type) {
    case DP_SCHEMA_INT: return json_integer(*CFIELD(obj, k, int));
    case DP_SCHEMA_LONG: return json_integer(*CFIELD(obj, k, long));
    case DP_SCHEMA_DOUBLE: return dp_json_number(*CFIELD(obj, k, double));
    case DP_SCHEMA_FLOAT: return dp_json_number(*CFIELD(obj, k, float));
    case DP_SCHEMA_BOOL: return json_boolean(*CFIELD(obj, k, int));
    case DP_SCHEMA_ENUM: {
        char name[64];
        choice_name(k->choices, *CFIELD(obj, k, int), name, sizeof name);
        return json_string(name);
    }
    case DP_SCHEMA_STRING: return json_string(CFIELD(obj, k, char));
    case DP_SCHEMA_NAME: return *CFIELD(obj, k, char *) ? json_string(*CFIELD(obj, k, char *)) : json_null();
    }
    return NULL;
}

/* 1 if the field of k in obj holds k's default */
static int is_default(const dp_schema_key *k, const void *obj)
{
    if (k->type == DP_SCHEMA_NAME) {
        const char *v = *CFIELD(obj, k, char *);
        return k->def ? v && strcmp(v, k->def) == 0 : v == NULL;
    }
    union {
        int i;
        long l;
        double d;
        float f;
        char s[256];
    } def;
    memset(&def, 0, sizeof def);
    dp_schema_key at0 = *k;
    at0.offset = 0;
    if (k->type == DP_SCHEMA_STRING && k->size > sizeof def.s) at0.size = sizeof def.s;
    const dp_schema_key one[2] = {at0, {0}};
    dp_schema_defaults(one, &def);
    switch (k->type) {
    case DP_SCHEMA_INT:
    case DP_SCHEMA_BOOL:
    case DP_SCHEMA_ENUM: return def.i == *CFIELD(obj, k, int);
    case DP_SCHEMA_LONG: return def.l == *CFIELD(obj, k, long);
    /* numerically equal: -0 is at a default of 0 (the machine's writer always compared so) */
    case DP_SCHEMA_DOUBLE: return def.d == *CFIELD(obj, k, double);
    case DP_SCHEMA_FLOAT: return def.f == *CFIELD(obj, k, float);
    case DP_SCHEMA_STRING: return strcmp(def.s, CFIELD(obj, k, char)) == 0;
    case DP_SCHEMA_NAME: break;
    }
    return 0;
}

int dp_schema_to_json(const dp_schema_key *t, const void *obj, json_t *o, int all)
{
    for (; t->key; t++) {
        if (t->when && !t->when(obj)) continue;
        const int def = is_default(t, obj);
        if (def && !(t->flags & DP_SCHEMA_ALWAYS) && (!all || (t->flags & DP_SCHEMA_UNSET) || t->type == DP_SCHEMA_NAME)) continue;
        if (json_object_set_new(o, t->key, dp_schema_to_json_value(t, obj)) != 0) return DP_ENOMEM;
    }
    return DP_OK;
}

void dp_schema_value_text(const dp_schema_key *k, const void *obj, char *buf, size_t cap)
{
    if (has_words(k) && word_of(k->choices, number_of(k, obj), buf, cap) == 0) return;
    switch (k->type) {
    case DP_SCHEMA_INT: snprintf(buf, cap, "%d", *CFIELD(obj, k, int)); break;
    case DP_SCHEMA_LONG: snprintf(buf, cap, "%ld", *CFIELD(obj, k, long)); break;
    case DP_SCHEMA_DOUBLE: snprintf(buf, cap, "%.17g", *CFIELD(obj, k, double)); break;
    case DP_SCHEMA_FLOAT: snprintf(buf, cap, "%.9g", (double)*CFIELD(obj, k, float)); break;
    case DP_SCHEMA_BOOL: snprintf(buf, cap, "%s", *CFIELD(obj, k, int) ? "true" : "false"); break;
    case DP_SCHEMA_ENUM: choice_name(k->choices, *CFIELD(obj, k, int), buf, cap); break;
    case DP_SCHEMA_STRING: snprintf(buf, cap, "%s", CFIELD(obj, k, char)); break;
    case DP_SCHEMA_NAME: snprintf(buf, cap, "%s", *CFIELD(obj, k, char *) ? *CFIELD(obj, k, char *) : ""); break;
    }
}

void dp_schema_keys_text(const dp_schema_key *t, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = '\0';
    for (; t->key; t++) {
        const int n = snprintf(buf + len, cap - len, "%s%s", len ? ", " : "", t->key);
        if (n < 0 || (size_t)n >= cap - len) {
            if (cap >= 4) snprintf(buf + (len + 4 < cap ? len : cap - 4), 4, "...");
            return;
        }
        len += (size_t)n;
    }
}

const dp_schema_section *dp_schema_section_at(const dp_schema_section *list, int i)
{
    if (!list || i < 0) return NULL;
    for (int j = 0; j < i; j++)
        if (!list[j].name) return NULL;
    return list[i].name ? &list[i] : NULL;
}

const char *dp_schema_section_get_name(const dp_schema_section *s) { return s->name; }

const dp_schema_key *dp_schema_section_get_key(const dp_schema_section *s, int k)
{
    if (!s->keys || k < 0) return NULL;
    for (int j = 0; j < k; j++)
        if (!s->keys[j].key) return NULL;
    return s->keys[k].key ? &s->keys[k] : NULL;
}

const char *dp_schema_section_get_other(const dp_schema_section *s, int k)
{
    if (!s->others || k < 0) return NULL;
    for (int j = 0; j < k; j++)
        if (!s->others[j]) return NULL;
    return s->others[k];
}

const char *dp_schema_key_get_key(const dp_schema_key *k) { return k->key; }
int dp_schema_key_get_type(const dp_schema_key *k) { return (int)k->type; }
const char *dp_schema_key_get_choices(const dp_schema_key *k) { return k->choices; }
const char *dp_schema_key_get_default(const dp_schema_key *k) { return k->def; }
const char *dp_schema_key_get_help(const dp_schema_key *k) { return k->help; }
