/* dp_schema.c: table-driven configuration (dp_schema.h). */
#include "dp_schema.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "dp_json.h"

#define FIELD(obj, k, T) ((T *)((char *)(obj) + (k)->offset))
#define CFIELD(obj, k, T) ((const T *)((const char *)(obj) + (k)->offset))

/* "key" and "--key-name" name the same entry */
static int same_key(const char *table_key, const char *key)
{
    if (strncmp(key, "--", 2) == 0) key += 2;
    for (; *table_key && *key; table_key++, key++)
        if (*table_key != *key && !(*table_key == '_' && *key == '-')) return 0;
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
        if (same_key(t->key, key)) return t;
    return NULL;
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
    snprintf(buf, cap, "[%s, %s]", lo, hi);
}

void dp_schema_kind_text(const dp_schema_key *k, char *buf, size_t cap)
{
    char r[80];
    range_text(k, r, sizeof r);
    switch (k->type) {
    case DP_SCHEMA_INT:
    case DP_SCHEMA_LONG: snprintf(buf, cap, "INT%s%s", r[0] ? " in " : "", r); break;
    case DP_SCHEMA_DOUBLE:
    case DP_SCHEMA_FLOAT: snprintf(buf, cap, "NUMBER%s%s", r[0] ? " in " : "", r); break;
    case DP_SCHEMA_BOOL: snprintf(buf, cap, "true|false"); break;
    case DP_SCHEMA_ENUM: snprintf(buf, cap, "%s", k->choices); break;
    case DP_SCHEMA_STRING: snprintf(buf, cap, "NAME"); break;
    }
}

/* "WHERE: " or "" */
static const char *sep(const char *where)
{
    return where ? ": " : "";
}

/* "must be ..." for entry k */
static void expected_text(const dp_schema_key *k, char *buf, size_t cap)
{
    char r[80];
    range_text(k, r, sizeof r);
    switch (k->type) {
    case DP_SCHEMA_INT:
    case DP_SCHEMA_LONG: snprintf(buf, cap, "must be an integer%s%s", r[0] ? " in " : "", r); break;
    case DP_SCHEMA_DOUBLE:
    case DP_SCHEMA_FLOAT: snprintf(buf, cap, "must be a number%s%s", r[0] ? " in " : "", r); break;
    case DP_SCHEMA_BOOL: snprintf(buf, cap, "must be true or false"); break;
    case DP_SCHEMA_ENUM: {
        char c[256];
        choices_text(k->choices, c, sizeof c);
        snprintf(buf, cap, "must be %s", c);
        break;
    }
    case DP_SCHEMA_STRING: snprintf(buf, cap, "must be a string of 1 to %zu bytes", k->size - 1); break;
    }
}

/* The value of one key, parsed from JSON (v) or from text (s): its checks and its store. */
typedef union {
    long i;
    double x;
    const char *s;
} value;

static int bad_value(const dp_schema_key *k, const char *text, const char *where, const char *prefix, dp_error *err)
{
    char e[320];
    expected_text(k, e, sizeof e);
    if (text)
        return dp_error_set(err, DP_EINVAL, "%s%s\"%s%s\" %s, got '%s'", where ? where : "", sep(where), prefix ? prefix : "",
                            k->key, e, text);
    return dp_error_set(err, DP_EINVAL, "%s%s\"%s%s\" %s", where ? where : "", sep(where), prefix ? prefix : "", k->key, e);
}

/* check v (already of k's type) against the range, choices and check, then store it */
static int store(const dp_schema_key *k, void *obj, value v, const char *where, const char *prefix, dp_error *err)
{
    const char *w = where ? where : "", *p = prefix ? prefix : "";
    switch (k->type) {
    case DP_SCHEMA_INT:
    case DP_SCHEMA_LONG:
        if ((double)v.i < k->lo || (double)v.i > k->hi) {
            char r[80];
            range_text(k, r, sizeof r);
            return dp_error_set(err, DP_EINVAL, "%s%s\"%s%s\" = %ld out of range %s", w, sep(where), p, k->key, v.i, r);
        }
        if (k->type == DP_SCHEMA_INT) *FIELD(obj, k, int) = (int)v.i;
        else *FIELD(obj, k, long) = v.i;
        return DP_OK;
    case DP_SCHEMA_DOUBLE:
    case DP_SCHEMA_FLOAT:
        if (!(v.x >= k->lo && v.x <= k->hi)) {
            char r[80];
            range_text(k, r, sizeof r);
            return dp_error_set(err, DP_EINVAL, "%s%s\"%s%s\" = %g out of range %s", w, sep(where), p, k->key, v.x, r);
        }
        if (k->type == DP_SCHEMA_DOUBLE) *FIELD(obj, k, double) = v.x;
        else *FIELD(obj, k, float) = (float)v.x;
        return DP_OK;
    case DP_SCHEMA_BOOL: *FIELD(obj, k, int) = v.i != 0; return DP_OK;
    case DP_SCHEMA_ENUM: {
        const int i = choice_index(k->choices, v.s);
        if (i < 0) return bad_value(k, NULL, where, prefix, err);
        *FIELD(obj, k, int) = i;
        return DP_OK;
    }
    case DP_SCHEMA_STRING: {
        if (!v.s[0] || strlen(v.s) >= k->size) return bad_value(k, NULL, where, prefix, err);
        char why[256];
        if (k->check && k->check(v.s, why, sizeof why) != 0)
            return dp_error_set(err, DP_EINVAL, "%s%s\"%s%s\" %s, got \"%s\"", w, sep(where), p, k->key, why, v.s);
        snprintf(FIELD(obj, k, char), k->size, "%s", v.s);
        return DP_OK;
    }
    }
    return DP_EINVAL;
}

int dp_schema_set_json(const dp_schema_key *k, void *obj, const json_t *v, const char *where, const char *prefix,
                       dp_error *err)
{
    value x = {0};
    switch (k->type) {
    case DP_SCHEMA_INT:
    case DP_SCHEMA_LONG:
        if (!json_is_integer(v)) return bad_value(k, NULL, where, prefix, err);
        x.i = (long)json_integer_value(v);
        break;
    case DP_SCHEMA_DOUBLE:
    case DP_SCHEMA_FLOAT:
        if (!json_is_number(v)) return bad_value(k, NULL, where, prefix, err);
        x.x = json_number_value(v);
        break;
    case DP_SCHEMA_BOOL:
        if (!json_is_boolean(v)) return bad_value(k, NULL, where, prefix, err);
        x.i = json_is_true(v);
        break;
    case DP_SCHEMA_ENUM:
    case DP_SCHEMA_STRING:
        if (!json_is_string(v)) return bad_value(k, NULL, where, prefix, err);
        x.s = json_string_value(v);
        break;
    }
    return store(k, obj, x, where, prefix, err);
}

/* text as k's type into x; 0 on success */
static int parse_text(const dp_schema_key *k, const char *s, value *x)
{
    char *end;
    errno = 0;
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
    case DP_SCHEMA_STRING: x->s = s; return 0;
    }
    return -1;
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
    value x;
    if (!text || parse_text(k, text, &x) != 0) return bad_value(k, text ? text : "", where, prefix, err);
    /* store's message of a bad name does not quote it: say it again with the text */
    int rc = store(k, obj, x, where, prefix, err);
    if (rc != DP_OK && k->type == DP_SCHEMA_ENUM) bad_value(k, text, where, prefix, err);
    return rc;
}

void dp_schema_defaults(const dp_schema_key *t, void *obj)
{
    for (; t->key; t++) {
        int rc = dp_schema_set(t, obj, t->key, t->def, "default", NULL, NULL);
        assert(rc == DP_OK);
        (void)rc;
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

json_t *dp_schema_to_json_value(const dp_schema_key *k, const void *obj)
{
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
    }
    return NULL;
}

/* 1 if the field of k in obj holds k's default */
static int is_default(const dp_schema_key *k, const void *obj)
{
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
    case DP_SCHEMA_DOUBLE: return memcmp(&def.d, CFIELD(obj, k, double), sizeof(double)) == 0;
    case DP_SCHEMA_FLOAT: return memcmp(&def.f, CFIELD(obj, k, float), sizeof(float)) == 0;
    case DP_SCHEMA_STRING: return strcmp(def.s, CFIELD(obj, k, char)) == 0;
    }
    return 0;
}

int dp_schema_to_json(const dp_schema_key *t, const void *obj, json_t *o, int all)
{
    for (; t->key; t++) {
        if (!all && is_default(t, obj)) continue;
        if (json_object_set_new(o, t->key, dp_schema_to_json_value(t, obj)) != 0) return DP_ENOMEM;
    }
    return DP_OK;
}

void dp_schema_value_text(const dp_schema_key *k, const void *obj, char *buf, size_t cap)
{
    switch (k->type) {
    case DP_SCHEMA_INT: snprintf(buf, cap, "%d", *CFIELD(obj, k, int)); break;
    case DP_SCHEMA_LONG: snprintf(buf, cap, "%ld", *CFIELD(obj, k, long)); break;
    case DP_SCHEMA_DOUBLE: snprintf(buf, cap, "%.17g", *CFIELD(obj, k, double)); break;
    case DP_SCHEMA_FLOAT: snprintf(buf, cap, "%.9g", (double)*CFIELD(obj, k, float)); break;
    case DP_SCHEMA_BOOL: snprintf(buf, cap, "%s", *CFIELD(obj, k, int) ? "true" : "false"); break;
    case DP_SCHEMA_ENUM: choice_name(k->choices, *CFIELD(obj, k, int), buf, cap); break;
    case DP_SCHEMA_STRING: snprintf(buf, cap, "%s", CFIELD(obj, k, char)); break;
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
