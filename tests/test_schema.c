/* test_schema.c: table-driven configuration (models/dp_schema.h): defaults, JSON read with its
 * refusals (type, range, unknown key, choices, string checks), JSON write (all keys, or only
 * those off their default), key=value text, and the help texts. */
#include "dp_improve.h"
#include "dp_schema.h"
#include "dp_search.h"
#include "dp_test.h"
#include "dp_train.h"

#include <math.h>
#include <string.h>

typedef struct demo {
    int n;
    long budget;
    double t0;
    float slope;
    int on;
    int mode;
    char init[8];
} demo;

static int no_x(const char *s, char *why, size_t cap)
{
    if (!strchr(s, 'x')) return 0;
    snprintf(why, cap, "must have no x");
    return 1;
}

static const dp_schema_key DEMO[] = {
    {"n", DP_SCHEMA_INT, offsetof(demo, n), 1, 4096, NULL, 0, "64", "hidden units", NULL, NULL, 0, NULL},
    {"budget", DP_SCHEMA_LONG, offsetof(demo, budget), 1, HUGE_VAL, NULL, 0, "20000", "simulations", NULL, NULL, 0, NULL},
    {"t0", DP_SCHEMA_DOUBLE, offsetof(demo, t0), -HUGE_VAL, HUGE_VAL, NULL, 0, "0.01", "start temperature", NULL, NULL, 0, NULL},
    {"slope", DP_SCHEMA_FLOAT, offsetof(demo, slope), 0, 1, NULL, 0, "0.01", "leaky ReLU slope", NULL, NULL, 0, NULL},
    {"on", DP_SCHEMA_BOOL, offsetof(demo, on), 0, 0, NULL, 0, "false", "a switch", NULL, NULL, 0, NULL},
    {"mode", DP_SCHEMA_ENUM, offsetof(demo, mode), 0, 0, "geometric|linear", 0, "geometric", "schedule", NULL, NULL, 0, NULL},
    {"init", DP_SCHEMA_STRING, offsetof(demo, init), 0, 0, NULL, sizeof(((demo *)0)->init), "cp", "start", no_x, NULL, 0, NULL},
    {0},
};

static json_t *parse(const char *text)
{
    json_t *o = json_loads(text, JSON_DECODE_ANY, NULL);
    ck_assert_ptr_nonnull(o);
    return o;
}

START_TEST(defaults_and_text)
{
    demo d;
    memset(&d, 0xff, sizeof d);
    dp_schema_defaults(DEMO, &d);
    ck_assert_int_eq(d.n, 64);
    ck_assert_int_eq(d.budget, 20000);
    ck_assert_double_eq(d.t0, 0.01);
    ck_assert_float_eq(d.slope, 0.01f);
    ck_assert_int_eq(d.on, 0);
    ck_assert_int_eq(d.mode, 0);
    ck_assert_str_eq(d.init, "cp");
    dp_error err;
    ck_assert_int_eq(dp_schema_set(DEMO, &d, "--mode", "linear", "opts", NULL, &err), DP_OK);
    ck_assert_int_eq(d.mode, 1);
    ck_assert_int_eq(dp_schema_set(DEMO, &d, "on", "yes", "opts", NULL, &err), DP_OK);
    ck_assert_int_eq(d.on, 1);
    char buf[64];
    dp_schema_value_text(&DEMO[5], &d, buf, sizeof buf);
    ck_assert_str_eq(buf, "linear");
    dp_schema_value_text(&DEMO[2], &d, buf, sizeof buf);
    ck_assert_str_eq(buf, "0.01");
    /* refusals name the source, the key and the text; the struct keeps its value */
    ck_assert_int_eq(dp_schema_set(DEMO, &d, "n", "12abc", "opts", NULL, &err), DP_EINVAL);
    ck_assert_str_eq(err.msg, "opts: \"n\" must be an integer in [1, 4096], got '12abc'");
    ck_assert_int_eq(d.n, 64);
    ck_assert_int_eq(dp_schema_set(DEMO, &d, "n", "5000", "opts", NULL, &err), DP_EINVAL);
    ck_assert_str_eq(err.msg, "opts: \"n\" = 5000 out of range [1, 4096]");
    ck_assert_int_eq(dp_schema_set(DEMO, &d, "mode", "cubic", "opts", NULL, &err), DP_EINVAL);
    ck_assert_str_eq(err.msg, "opts: \"mode\" must be \"geometric\" or \"linear\", got 'cubic'");
    ck_assert_int_eq(dp_schema_set(DEMO, &d, "nope", "1", "opts", NULL, &err), DP_EINVAL);
    ck_assert_str_eq(err.msg, "opts: unknown key \"nope\" (known: n, budget, t0, slope, on, mode, init)");
    ck_assert_int_eq(dp_schema_set(DEMO, &d, "t0", "inf", NULL, NULL, &err), DP_EINVAL);
    ck_assert_str_eq(err.msg, "\"t0\" must be a number, got 'inf'");
    dp_schema_kind_text(&DEMO[1], buf, sizeof buf);
    ck_assert_str_eq(buf, "INT in [1, inf]");
    dp_schema_keys_text(DEMO, buf, 12);
    ck_assert_str_eq(buf, "n, budge...");
}
END_TEST

START_TEST(json_read_and_refusals)
{
    demo d;
    dp_schema_defaults(DEMO, &d);
    dp_error err;
    json_t *o = parse("{\"n\": 8, \"budget\": 7, \"t0\": -3, \"slope\": 0.5, \"on\": true, \"mode\": \"linear\", \"init\": \"heft\"}");
    ck_assert_int_eq(dp_schema_from_json(DEMO, &d, o, "f.json", NULL, NULL, &err), DP_OK);
    json_decref(o);
    ck_assert_int_eq(d.n, 8);
    ck_assert_int_eq(d.budget, 7);
    ck_assert_double_eq(d.t0, -3);
    ck_assert_float_eq(d.slope, 0.5f);
    ck_assert_int_eq(d.on, 1);
    ck_assert_int_eq(d.mode, 1);
    ck_assert_str_eq(d.init, "heft");
    static const struct {
        const char *json, *msg;
    } bad[] = {
        {"{\"n\": 1.5}", "f.json: \"s.n\" must be an integer in [1, 4096]"},
        {"{\"n\": 0}", "f.json: \"s.n\" = 0 out of range [1, 4096]"},
        {"{\"slope\": 2}", "f.json: \"s.slope\" = 2 out of range [0, 1]"},
        {"{\"slope\": \"a\"}", "f.json: \"s.slope\" must be a number in [0, 1]"},
        {"{\"on\": 1}", "f.json: \"s.on\" must be true or false"},
        {"{\"mode\": \"cubic\"}", "f.json: \"s.mode\" must be \"geometric\" or \"linear\""},
        {"{\"init\": \"toolong12\"}", "f.json: \"s.init\" must be a string of 1 to 7 bytes"},
        {"{\"init\": \"\"}", "f.json: \"s.init\" must be a string of 1 to 7 bytes"},
        {"{\"init\": \"xy\"}", "f.json: \"s.init\" must have no x, got \"xy\""},
        {"{\"budegt\": 3}", "f.json: unknown key \"s.budegt\" (known: n, budget, t0, slope, on, mode, init)"},
        {"[1]", "f.json: \"s\" must be an object"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        demo e = d;
        o = parse(bad[i].json);
        ck_assert_int_eq(dp_schema_from_json(DEMO, &e, o, "f.json", "s.", NULL, &err), DP_EINVAL);
        ck_assert_str_eq(err.msg, bad[i].msg);
        json_decref(o);
    }
    /* keys the caller reads itself are passed over */
    static const char *const skip[] = {"method", NULL};
    o = parse("{\"method\": \"x\", \"n\": 9}");
    ck_assert_int_eq(dp_schema_from_json(DEMO, &d, o, NULL, NULL, skip, &err), DP_OK);
    ck_assert_int_eq(d.n, 9);
    json_decref(o);
    o = parse("3");
    ck_assert_int_eq(dp_schema_from_json(DEMO, &d, o, "g.json", NULL, NULL, &err), DP_EINVAL);
    ck_assert_str_eq(err.msg, "g.json: the top level must be an object");
    json_decref(o);
}
END_TEST

START_TEST(json_write_round_trip)
{
    demo d, e;
    memset(&d, 0, sizeof d);
    memset(&e, 0, sizeof e);
    dp_schema_defaults(DEMO, &d);
    json_t *o = json_object();
    ck_assert_int_eq(dp_schema_to_json(DEMO, &d, o, 0), DP_OK);
    ck_assert_int_eq(json_object_size(o), 0); /* all at their defaults */
    d.n = 7;
    d.slope = 0.3f;
    d.mode = 1;
    ck_assert_int_eq(dp_schema_to_json(DEMO, &d, o, 0), DP_OK);
    ck_assert_int_eq(json_object_size(o), 3);
    ck_assert_str_eq(json_string_value(json_object_get(o, "mode")), "linear");
    json_decref(o);
    o = json_object();
    ck_assert_int_eq(dp_schema_to_json(DEMO, &d, o, 1), DP_OK);
    ck_assert_int_eq(json_object_size(o), 7);
    dp_schema_defaults(DEMO, &e);
    dp_error err;
    ck_assert_int_eq(dp_schema_from_json(DEMO, &e, o, NULL, NULL, NULL, &err), DP_OK);
    ck_assert_mem_eq(&e, &d, sizeof d - sizeof d.init);
    ck_assert_str_eq(e.init, d.init);
    json_decref(o);
}
END_TEST

/* the kinds the machine's keys needed: a number or a word, an owned name, a default that means
 * "not given", an open lower bound, an option spelled otherwise, keys written always or only when
 * they apply */
typedef struct demo2 {
    double limit;
    int streams;
    char *file;
    int devices;
    double peak;
    int uniform;
} demo2;

static int demo2_uniform(const void *obj)
{
    return ((const demo2 *)obj)->uniform;
}

static const dp_schema_key DEMO2[] = {
    {"limit", DP_SCHEMA_DOUBLE, offsetof(demo2, limit), 0, 1e30, "topology=-1|half=-2", 0, "0", "bytes", NULL,
     "memory-cap", DP_SCHEMA_UNSET | DP_SCHEMA_LO_OPEN, NULL},
    {"streams", DP_SCHEMA_INT, offsetof(demo2, streams), 1, 1024, NULL, 0, "0", "streams", NULL, NULL, DP_SCHEMA_UNSET,
     NULL},
    {"file", DP_SCHEMA_NAME, offsetof(demo2, file), 0, 0, "FILE", 0, NULL, "a file", NULL, NULL, 0, NULL},
    {"devices", DP_SCHEMA_INT, offsetof(demo2, devices), 1, 4096, NULL, 0, "4", "devices", NULL, NULL, DP_SCHEMA_ALWAYS,
     NULL},
    {"peak", DP_SCHEMA_DOUBLE, offsetof(demo2, peak), 0, HUGE_VAL, NULL, 0, "1", "peak", NULL, NULL, 0, demo2_uniform},
    {0},
};

static char *dumps(const demo2 *d, int all)
{
    json_t *o = json_object();
    ck_assert_int_eq(dp_schema_to_json(DEMO2, d, o, all), DP_OK);
    char *t = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    return t;
}

START_TEST(words_names_unset_and_when)
{
    demo2 d;
    memset(&d, 0xff, sizeof d);
    dp_schema_defaults(DEMO2, &d);
    ck_assert(d.limit == 0 && d.streams == 0 && d.file == NULL && d.devices == 4 && d.peak == 1);
    d.uniform = 0;
    char *t = dumps(&d, 0);
    ck_assert_str_eq(t, "{\"devices\":4}"); /* always written; unset, not-given and not-applying keys not */
    free(t);
    t = dumps(&d, 1);
    ck_assert_str_eq(t, "{\"devices\":4}");
    free(t);
    dp_error err;
    /* a word, a number, the option's own spelling */
    ck_assert_int_eq(dp_schema_set(DEMO2, &d, "--memory-cap", "topology", "opts", NULL, &err), DP_OK);
    ck_assert(d.limit == -1);
    char buf[128];
    dp_schema_value_text(&DEMO2[0], &d, buf, sizeof buf);
    ck_assert_str_eq(buf, "topology");
    ck_assert_int_eq(dp_schema_set(DEMO2, &d, "limit", "half", "opts", NULL, &err), DP_OK);
    ck_assert(d.limit == -2);
    ck_assert_int_eq(dp_schema_set(DEMO2, &d, "memory_cap", "1e-300", "opts", NULL, &err), DP_OK);
    ck_assert(d.limit == 1e-300);
    /* the unset default and the open bound are refused as values */
    ck_assert_int_eq(dp_schema_set(DEMO2, &d, "limit", "0", "opts", NULL, &err), DP_EINVAL);
    ck_assert_str_eq(err.msg, "opts: \"limit\" = 0 out of range (0, 1e+30]");
    ck_assert_int_eq(dp_schema_set(DEMO2, &d, "limit", "-1", "opts", NULL, &err), DP_EINVAL);
    ck_assert_int_eq(dp_schema_set(DEMO2, &d, "limit", "lots", "opts", NULL, &err), DP_EINVAL);
    ck_assert_str_eq(err.msg, "opts: \"limit\" must be a number in (0, 1e+30] or \"topology\", \"half\", got 'lots'");
    ck_assert_int_eq(dp_schema_set(DEMO2, &d, "streams", "0", "opts", NULL, &err), DP_EINVAL);
    ck_assert(d.limit == 1e-300 && d.streams == 0);
    /* JSON: a word as a string, a number as a number */
    json_t *o = parse("{\"limit\": \"topology\", \"streams\": 2, \"file\": \"a.json\"}");
    ck_assert_int_eq(dp_schema_from_json(DEMO2, &d, o, "f.json", NULL, NULL, &err), DP_OK);
    json_decref(o);
    ck_assert(d.limit == -1 && d.streams == 2);
    ck_assert_str_eq(d.file, "a.json");
    o = parse("{\"limit\": \"all\"}");
    ck_assert_int_eq(dp_schema_from_json(DEMO2, &d, o, "f.json", NULL, NULL, &err), DP_EINVAL);
    json_decref(o);
    o = parse("{\"file\": \"\"}");
    ck_assert_int_eq(dp_schema_from_json(DEMO2, &d, o, "f.json", NULL, NULL, &err), DP_EINVAL);
    ck_assert_str_eq(err.msg, "f.json: \"file\" must be a non-empty string");
    json_decref(o);
    ck_assert_str_eq(d.file, "a.json");
    /* a name set again replaces (and frees) the earlier one */
    ck_assert_int_eq(dp_schema_set_entry(&DEMO2[2], &d, "--file", "b.json", &err), DP_OK);
    ck_assert_str_eq(d.file, "b.json");
    /* set_entry names the key once, as spelled */
    ck_assert_int_eq(dp_schema_set_entry(&DEMO2[1], &d, "--streams", "x", &err), DP_EINVAL);
    ck_assert_str_eq(err.msg, "--streams: must be an integer in [1, 1024], got 'x'");
    ck_assert_int_eq(dp_schema_set_entry(&DEMO2[1], &d, "--streams", "2000", &err), DP_EINVAL);
    ck_assert_str_eq(err.msg, "--streams: 2000 out of range [1, 1024]");
    d.uniform = 1;
    d.peak = 2;
    t = dumps(&d, 0);
    ck_assert_str_eq(t, "{\"limit\":\"topology\",\"streams\":2,\"file\":\"b.json\",\"devices\":4,\"peak\":2.0}");
    free(t);
    d.uniform = 0;
    t = dumps(&d, 0);
    ck_assert_str_eq(t, "{\"limit\":\"topology\",\"streams\":2,\"file\":\"b.json\",\"devices\":4}");
    free(t);
    /* help texts */
    dp_schema_kind_text(&DEMO2[0], buf, sizeof buf);
    ck_assert_str_eq(buf, "NUMBER in (0, 1e+30] or topology|half");
    dp_schema_metavar(&DEMO2[0], buf, sizeof buf);
    ck_assert_str_eq(buf, "X|topology|half");
    dp_schema_metavar(&DEMO2[2], buf, sizeof buf);
    ck_assert_str_eq(buf, "FILE");
    dp_schema_option_text(&DEMO2[0], buf, sizeof buf);
    ck_assert_str_eq(buf, "memory-cap");
    dp_schema_default_text(&DEMO2[0], buf, sizeof buf);
    ck_assert_str_eq(buf, "");
    dp_schema_default_text(&DEMO2[3], buf, sizeof buf);
    ck_assert_str_eq(buf, " (default 4)");
    dp_schema_release(DEMO2, &d);
    ck_assert_ptr_null(d.file);
}
END_TEST

/* obj holds table t's defaults (the config's own default function filled it) */
static void holds_defaults(const dp_schema_key *t, const void *obj, size_t size, const char *what)
{
    char copy[sizeof(dp_train_config)];
    ck_assert_uint_le(size, sizeof copy);
    memcpy(copy, obj, size);
    dp_schema_defaults(t, copy);
    for (const dp_schema_key *k = t; k->key; k++) {
        char a[64], b[64];
        dp_schema_value_text(k, obj, a, sizeof a);
        dp_schema_value_text(k, copy, b, sizeof b);
        ck_assert_msg(strcmp(a, b) == 0, "%s.%s: the table says %s, the default is %s", what, k->key, b, a);
    }
}

/* every config's table agrees with its default function, and its defaults parse (asserted) */
START_TEST(tables_agree_with_defaults)
{
    dp_train_config c;
    dp_train_config_default(&c);
    for (const dp_schema_section *s = dp_train_config_sections(); s->name; s++) {
        if (!s->keys) continue;
        if (strcmp(s->name, "stages.S") == 0) holds_defaults(s->keys, &c.stage[DP_TRAIN_STAGE_SIM], sizeof c.stage[0], s->name);
        else holds_defaults(s->keys, &c, sizeof c, s->name);
    }
    dp_improve_config ic;
    dp_improve_config_default(&ic);
    holds_defaults(dp_improve_config_sections()[1].keys, &ic, sizeof ic, "improve");
    dp_improve_search_config is;
    dp_improve_search_config_init(&is);
    holds_defaults(dp_improve_search_sections()[0].keys, &is, sizeof is, "improve search");
    dp_search_anneal_config ac;
    dp_search_anneal_config_init(&ac);
    holds_defaults(dp_search_anneal_keys, &ac, sizeof ac, "anneal");
    dp_machine m;
    dp_machine_init(&m);
    holds_defaults(dp_machine_keys(), &m, sizeof m, "machine");
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("schema");
    TCase *t = tcase_create("core");
    tcase_add_test(t, defaults_and_text);
    tcase_add_test(t, json_read_and_refusals);
    tcase_add_test(t, json_write_round_trip);
    tcase_add_test(t, words_names_unset_and_when);
    tcase_add_test(t, tables_agree_with_defaults);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return dp_test_run(suite());
}
