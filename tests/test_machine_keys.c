/* test_machine_keys.c: the machine's keys as a dp_schema table (sim/dp_machine.c) agree with the
 * hand-written parser and writer they replaced: every key (in each spelling) times a list of
 * values, a few combined specs and JSON values give the status, the JSON written
 * (dp_machine_to_json) and the engine choice (dp_machine_general) that main f1e2514 gave, recorded
 * in tests/data/machine-keys-f1e2514.txt by this very loop run against that build's library. Also:
 * the defaults are dp_hisim_options_init's, messages name the key once as spelled, the commands'
 * getopt table is the machine table's order, and the sweep config's table refuses what it
 * refused. */
#include "cli.h"
#include "dp_test.h"
#include "report.h"
#include "sweep.h"

#include <getopt.h>
#include <jansson.h>

/* the loop that wrote tests/data/machine-keys-f1e2514.txt: one line per case */
static char *machine_cases(size_t *len)
{
    static const char *vals[] = {"0", "1", "4", "4096", "4097", "-1", "1e13", "1e-300", "1e-310", "1e30", "1e31", "-0",
                                 "0.5", "nan", "inf", "bogus", "", "fixed", "fifo", "maxmin", "async", "bsp", "fifo",
                                 "priority", "topology", "error", "penalty", "on", "off", "true", "1024", "1025", "2.5",
                                 " 4", "4 ", "+4", "0x10", "1e5", "5e-324", NULL};
    static const char *keys[] = {"devices", "peak_flops", "peak-flops", "--peak-flops", "bandwidth", "latency",
                                 "comm_ratio", "--comm-ratio", "transfer", "transfer-model", "--transfer-model", "chunks",
                                 "mode", "streams", "queue", "memory_limit", "memory-limit", "memory_policy",
                                 "memory_penalty", "copy_engines", "copy-engines", "nope", "calibration", NULL};
    char *out = NULL;
    FILE *f = open_memstream(&out, len);
    ck_assert_ptr_nonnull(f);
    for (int k = 0; keys[k]; k++)
        for (int v = 0; vals[v]; v++) {
            dp_machine m;
            dp_machine_init(&m);
            int rc = dp_machine_set(&m, keys[k], vals[v], NULL);
            json_t *j = dp_machine_to_json(&m);
            char *t = json_dumps(j, 0);
            fprintf(f, "%s=%s rc=%d %s general=%d\n", keys[k], vals[v], rc, t, dp_machine_general(&m));
            free(t);
            json_decref(j);
            dp_machine_free(&m);
        }
    static const char *specs[][8] = {
        {"topology", "dgx1-v100", "peak_flops", "2e13", "comm_ratio", "4", NULL},
        {"comm_ratio", "4", "mode", "bsp", "latency", "0", NULL},
        {"devices", "8", "transfer", "maxmin", "streams", "2", NULL},
        {"memory_limit", "topology", "memory_policy", "penalty", "memory_penalty", "0.5", NULL},
        {"memory_limit", "1e9", "copy_engines", "off", "queue", "priority", NULL},
        {"topology", "x.json", "calibration", "c.json", "chunks", "4", NULL},
        {"comm_ratio", "-0", "latency", "-0", NULL},
    };
    for (size_t s = 0; s < sizeof specs / sizeof specs[0]; s++) {
        dp_machine m;
        dp_machine_init(&m);
        for (int i = 0; specs[s][i]; i += 2) fprintf(f, "%d ", dp_machine_set(&m, specs[s][i], specs[s][i + 1], NULL));
        json_t *j = dp_machine_to_json(&m);
        char *t = json_dumps(j, 0);
        fprintf(f, "spec %zu: %s\n", s, t);
        free(t);
        json_decref(j);
        dp_machine_free(&m);
    }
    static const char *jv[] = {"4", "4.0", "\"4\"", "true", "false", "null", "[1]", "\"topology\"", "1e9", "\"on\"", NULL};
    static const char *jk[] = {"devices", "memory_limit", "copy_engines", "comm_ratio", NULL};
    for (int k = 0; jk[k]; k++)
        for (int v = 0; jv[v]; v++) {
            dp_machine m;
            dp_machine_init(&m);
            json_t *x = json_loads(jv[v], JSON_DECODE_ANY, NULL);
            int rc = dp_machine_set_json(&m, jk[k], x, NULL);
            json_t *j = dp_machine_to_json(&m);
            char *t = json_dumps(j, 0);
            fprintf(f, "json %s=%s rc=%d %s\n", jk[k], jv[v], rc, t);
            free(t);
            json_decref(j);
            json_decref(x);
            dp_machine_free(&m);
        }
    fclose(f);
    return out;
}

START_TEST(as_the_hand_written_parser_and_writer)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/data/machine-keys-f1e2514.txt", dp_test_srcdir());
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "%s", path);
    size_t len;
    char *now = machine_cases(&len);
    char line[4096];
    const char *p = now;
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        const char *nl = strchr(p, '\n');
        ck_assert_msg(nl != NULL, "line %d: the recorded file has more cases", n + 1);
        ck_assert_msg(strncmp(line, p, (size_t)(nl - p + 1)) == 0 && strlen(line) == (size_t)(nl - p + 1),
                      "line %d: f1e2514 gave %s now %.*s", n + 1, line, (int)(nl - p), p);
        p = nl + 1;
        n++;
    }
    ck_assert_msg(*p == '\0', "more cases than recorded");
    ck_assert_int_ge(n, 900);
    fclose(f);
    free(now);
}
END_TEST

START_TEST(defaults_and_messages)
{
    dp_machine m;
    dp_machine_init(&m);
    dp_hisim_options o;
    dp_hisim_options_init(&o);
    ck_assert_mem_eq(&m.sim, &o, sizeof o); /* the table's defaults are the engine's */
    ck_assert(dp_hisim_options_default(&m.sim));
    ck_assert_int_eq(m.n_devices, 4);
    ck_assert(!m.devices_given && !m.topology && !m.calibration);
    ck_assert_double_eq(m.peak_flops, 1e13);
    ck_assert_double_eq(m.bandwidth_Bps, 1.2e10);
    ck_assert_double_eq(m.latency_s, 1e-5);
    ck_assert_double_eq(m.comm_ratio, 0);
    dp_error err;
    ck_assert_int_eq(dp_machine_set(&m, "memory-limit", "topology", &err), DP_OK);
    ck_assert(m.sim.memory_limit == DP_HISIM_MEMORY_TOPOLOGY);
    ck_assert_int_eq(dp_machine_set(&m, "--devices", "8", &err), DP_OK);
    ck_assert(m.devices_given && m.n_devices == 8);
    /* a refusal names the key once, as spelled, and the value */
    ck_assert_int_eq(dp_machine_set(&m, "--transfer-model", "fast", &err), DP_EINVAL);
    ck_assert_str_eq(err.msg, "--transfer-model: must be \"fixed\", \"fifo\" or \"maxmin\", got 'fast'");
    ck_assert_int_eq(dp_machine_set(&m, "memory_limit", "0", &err), DP_EINVAL);
    ck_assert_str_eq(err.msg, "memory_limit: 0 out of range (0, 1e+30]");
    ck_assert_int_eq(dp_machine_set(&m, "memory_limit", "lots", &err), DP_EINVAL);
    ck_assert_str_eq(err.msg, "memory_limit: must be a number in (0, 1e+30] or \"topology\", got 'lots'");
    ck_assert_int_eq(dp_machine_set(&m, "streams", "0", &err), DP_EINVAL);
    ck_assert_str_eq(err.msg, "streams: 0 out of range [1, 1024]");
    ck_assert_int_eq(dp_machine_set(&m, "topology", "", &err), DP_EINVAL);
    ck_assert_str_eq(err.msg, "topology: must be a non-empty string, got ''");
    ck_assert_int_eq(dp_machine_set(&m, "devcies", "2", &err), DP_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "unknown machine key \"devcies\" (known: devices, peak_flops,"));
    ck_assert_int_eq(m.n_devices, 8);
    dp_machine_free(&m);
}
END_TEST

/* the commands' getopt ids are DP_OPT_MACHINE + the table's index, each under its option name */
START_TEST(getopt_table_is_the_machine_table)
{
    static const struct option opts[] = {DP_CLI_MACHINE_OPTIONS, {NULL, 0, NULL, 0}};
    int n = 0;
    for (const dp_schema_key *k = dp_machine_keys(); k->key; k++, n++) {
        char o[64];
        ck_assert_ptr_nonnull(opts[n].name);
        ck_assert_str_eq(opts[n].name, dp_schema_option_text(k, o, sizeof o));
        ck_assert_int_eq(opts[n].val, DP_OPT_MACHINE + n);
        ck_assert_int_eq(dp_machine_key_index(opts[n].name), n);
        ck_assert_int_eq(dp_machine_key_index(k->key), n);
    }
    ck_assert_ptr_null(opts[n].name);
    ck_assert_int_eq(n, 16);
}
END_TEST

/* the sweep config's top level (experiments/sweep.c's table): what it refused, it refuses, naming
 * the file and the key; a name and repetitions read as before */
START_TEST(sweep_config_table)
{
    static const struct {
        const char *text, *msg;
    } bad[] = {
        {"{\"grid\": {\"a\": [1]}, \"repetitions\": 0}", "t.json: \"repetitions\" = 0 out of range [1, 100000]"},
        {"{\"grid\": {\"a\": [1]}, \"repetitions\": 100001}", "t.json: \"repetitions\" = 100001 out of range [1, 100000]"},
        {"{\"grid\": {\"a\": [1]}, \"repetitions\": 1.5}", "t.json: \"repetitions\" must be an integer in [1, 100000]"},
        {"{\"grid\": {\"a\": [1]}, \"name\": 3}", "t.json: \"name\" must be a string of 1 to 200 bytes"},
        {"{\"grid\": {\"a\": [1]}, \"name\": \"\"}", "t.json: \"name\" must be a string of 1 to 200 bytes"},
        {"{\"grid\": {\"a\": [1]}, \"name\": \"..\"}", "t.json: \"name\" must be a plain file name"},
        {"{\"grid\": {\"a\": [1]}, \"name\": \"-x\"}", "t.json: \"name\" must be a plain file name"},
        {"{\"grid\": {\"a\": [1]}, \"name\": \"a/b\"}", "t.json: \"name\" must be a plain file name"},
        {"{\"grid\": {\"a\": [1]}, \"nmae\": \"x\"}", "t.json: unknown key \"nmae\" (known: name, repetitions"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        json_t *c = json_loads(bad[i].text, 0, NULL);
        ck_assert_ptr_nonnull(c);
        dp_error err;
        dp_error_clear(&err);
        dp_sweep *s = dp_sweep_from_json(c, "t.json", &err);
        ck_assert_msg(s == NULL, "%s accepted", bad[i].text);
        ck_assert_msg(strncmp(err.msg, bad[i].msg, strlen(bad[i].msg)) == 0, "%s: %s", bad[i].text, err.msg);
        json_decref(c);
    }
    char name[202];
    memset(name, 'n', 200);
    name[200] = '\0';
    char text[400];
    snprintf(text, sizeof text, "{\"grid\": {\"a\": [1, 2]}, \"repetitions\": 3, \"name\": \"%s\", \"description\": [1], "
                                "\"comment\": {}}", name);
    json_t *c = json_loads(text, 0, NULL);
    dp_error err;
    dp_sweep *s = dp_sweep_from_json(c, "dir/t.json", &err);
    ck_assert_msg(s != NULL, "%s", err.msg);
    ck_assert_str_eq(s->name, name);
    ck_assert_int_eq(s->n_runs, 6);
    dp_sweep_free(s);
    json_decref(c);
    c = json_loads("{\"fixed\": {\"a\": 1}}", 0, NULL);
    s = dp_sweep_from_json(c, "dir/t2.json", &err);
    ck_assert_str_eq(s->name, "t2"); /* not given: the file's stem */
    ck_assert_int_eq(s->n_runs, 1);
    dp_sweep_free(s);
    json_decref(c);
}
END_TEST

/* a report table's keys (experiments/sweep.c's table of it): dp_report_spec_init's defaults are the
 * table's; refusals name the table and the key */
START_TEST(report_table_keys)
{
    dp_report_spec s;
    ck_assert_int_eq(dp_report_spec_init(&s), DP_OK);
    for (const dp_schema_key *k = dp_sweep_table_keys; k->key; k++) {
        char a[64];
        dp_schema_value_text(k, &s, a, sizeof a);
        ck_assert_str_eq(a, k->def ? k->def : "");
    }
    static const struct {
        const char *text, *msg;
    } bad[] = {
        {"{\"digits\": 0}", "\"tables.main.digits\" = 0 out of range [1, 17]"},
        {"{\"digits\": 18}", "\"tables.main.digits\" = 18 out of range [1, 17]"},
        {"{\"digits\": 2.5}", "\"tables.main.digits\" must be an integer in [1, 17]"},
        {"{\"cols\": 3}", "\"tables.main.cols\" must be a non-empty string"},
        {"{\"title\": [\"a\"]}", "\"tables.main.title\" must be a non-empty string"},
        {"{\"colums\": []}", "unknown key \"tables.main.colums\" (known: cols, metric, title, digits, rows, baselines"},
        {"{\"rows\": 3}", "tables.main.rows: expected a string or an array of strings"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        json_t *o = json_loads(bad[i].text, 0, NULL);
        dp_error err;
        dp_error_clear(&err);
        ck_assert_int_eq(dp_report_spec_from_json(&s, o, "main", &err), DP_EINVAL);
        ck_assert_msg(strncmp(err.msg, bad[i].msg, strlen(bad[i].msg)) == 0, "%s: %s", bad[i].text, err.msg);
        json_decref(o);
    }
    json_t *o = json_loads("{\"cols\": \"agent\", \"digits\": 3, \"title\": \"T\", \"rows\": [\"graph\", \"seed\"], \"comment\": 1}",
                           0, NULL);
    dp_error err;
    ck_assert_int_eq(dp_report_spec_from_json(&s, o, "main", &err), DP_OK);
    ck_assert_str_eq(s.cols, "agent");
    ck_assert_str_eq(s.metric, "makespan");
    ck_assert_str_eq(s.title, "T");
    ck_assert_int_eq(s.digits, 3);
    ck_assert_int_eq(s.n_rows, 2);
    json_decref(o);
    dp_report_spec_free(&s);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("machine_keys");
    TCase *t = tcase_create("core");
    tcase_add_test(t, as_the_hand_written_parser_and_writer);
    tcase_add_test(t, defaults_and_messages);
    tcase_add_test(t, getopt_table_is_the_machine_table);
    tcase_add_test(t, sweep_config_table);
    tcase_add_test(t, report_table_keys);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return dp_test_run(suite());
}
