/* test_formats.c: the STG, WfCommons, MSR and DOT readers on small hand-written files, the DOT
 * writer (round trip) and format dispatch. (tests/bad-inputs, which holds bad files of these
 * formats too, is checked by test_models.) */
#include "dp_test.h"

#include <math.h>

#include "dp_cost.h"
#include "dp_file.h"
#include "dp_gen.h"
#include "dp_graph_formats.h"
#include "dp_json.h"
#include "dp_sim.h"

#include <stdlib.h>
#include <string.h>

static char tmpdir[256];

static const char *put(const char *name, const char *text)
{
    static char path[8][512];
    static int k;
    char *p = path[k++ % 8];
    snprintf(p, 512, "%s/%s", tmpdir, name);
    FILE *f = fopen(p, "w");
    ck_assert(f != NULL);
    fputs(text, f);
    fclose(f);
    return p;
}

static double edge_between(const dp_graph *g, const char *a, const char *b)
{
    int u = dp_graph_find_op(g, a), v = dp_graph_find_op(g, b);
    ck_assert(u >= 0 && v >= 0);
    for (int e = g->succ_ptr[u]; e < g->succ_ptr[u + 1]; e++)
        if (g->edge_dst[e] == v) return g->edge_size[e];
    return -1;
}

/* ---- STG ---- */

START_TEST(stg_small)
{
    /* 4 real tasks; 0 and 5 are the dummies; task 4's predecessor list wraps a line */
    const char *p = put("small.stg",
                        "4\n"
                        "0 0 0\n"
                        "1 3 1 0\n"
                        "2 5 1 0\n"
                        "3 2 1 1\n"
                        "4 7 3 1 2\n"
                        "   3\n"
                        "5 0 2 3 4\n"
                        "# CP Length : 10\n"
                        "# another comment\n");
    dp_error err;
    dp_graph *g = dp_graph_read(p, NULL, &err);
    ck_assert_msg(g != NULL, "%s", err.msg);
    ck_assert_int_eq(g->n_ops, 4);
    ck_assert_int_eq(g->n_edges, 4);
    ck_assert_int_eq(g->cost_kind, DP_GRAPH_COST_TIME);
    ck_assert_str_eq(g->op_name[0], "1");
    ck_assert_double_eq(dp_graph_total_work(g), 17);
    ck_assert_double_eq(edge_between(g, "2", "4"), 0);
    ck_assert_double_eq(edge_between(g, "1", "3"), 0);
    ck_assert_int_eq(g->n_sources, 2);
    ck_assert_int_eq(g->n_sinks, 1);
    dp_cost *c = dp_cost_graph(g, 2, &err);
    ck_assert_double_eq(dp_cost_critical_path(g, c), 12); /* 2 -> 4 */
    dp_cost_free(c);
    dp_graph_free(g);
}
END_TEST

START_TEST(stg_errors)
{
    dp_error err;
    const char *p = put("order.stg", "2\n0 0 0\n2 1 1 0\n1 1 1 0\n3 0 2 1 2\n");
    ck_assert(dp_graph_read(p, NULL, &err) == NULL);
    ck_assert_msg(strstr(err.msg, "order.stg:3: task 1 expected here") != NULL, "%s", err.msg);
    p = put("self.stg", "1\n0 0 0\n1 4 1 1\n2 0 1 1\n");
    ck_assert(dp_graph_read(p, NULL, &err) == NULL);
    ck_assert_msg(strstr(err.msg, "task 1 lists itself") != NULL, "%s", err.msg);
}
END_TEST

/* ---- WfCommons ---- */

static const char *wf15 =
    "{\"name\": \"wf\", \"schemaVersion\": \"1.5\", \"workflow\": {\n"
    " \"specification\": {\n"
    "  \"tasks\": [\n"
    "   {\"name\": \"a\", \"id\": \"a_1\", \"parents\": [], \"children\": [\"b_1\", \"c_1\"], \"inputFiles\": [\"in\"], \"outputFiles\": [\"f1\", \"f2\"]},\n"
    "   {\"name\": \"b\", \"id\": \"b_1\", \"parents\": [\"a_1\"], \"children\": [\"c_1\"], \"inputFiles\": [\"f1\"], \"outputFiles\": [\"f3\"]},\n"
    "   {\"name\": \"c\", \"id\": \"c_1\", \"parents\": [\"a_1\", \"b_1\"], \"children\": [], \"inputFiles\": [\"f1\", \"f2\", \"f3\"], \"outputFiles\": []}],\n"
    "  \"files\": [{\"id\": \"in\", \"sizeInBytes\": 7}, {\"id\": \"f1\", \"sizeInBytes\": 1000},\n"
    "            {\"id\": \"f2\", \"sizeInBytes\": 500}, {\"id\": \"f3\", \"sizeInBytes\": 250}]},\n"
    " \"execution\": {\"makespanInSeconds\": 9, \"executedAt\": \"x\", \"tasks\": [\n"
    "   {\"id\": \"a_1\", \"runtimeInSeconds\": 1.5, \"command\": {\"program\": \"prep\"}},\n"
    "   {\"id\": \"b_1\", \"runtimeInSeconds\": 2},\n"
    "   {\"id\": \"c_1\", \"runtimeInSeconds\": 3.25}]}}}\n";

START_TEST(wfcommons_15)
{
    const char *p = put("wf15.json", wf15);
    dp_error err;
    /* 100 bytes/s: a -> c carries f1 + f2 = 1500 bytes = 15 s; a -> b 1000 = 10 s; b -> c 2.5 s */
    dp_graph *g = dp_graph_read_wfcommons(p, 100, &err);
    ck_assert_msg(g != NULL, "%s", err.msg);
    ck_assert_int_eq(g->n_ops, 3);
    ck_assert_int_eq(g->n_edges, 3); /* parents and children name each edge twice: merged */
    ck_assert_double_eq(dp_graph_total_work(g), 6.75);
    ck_assert_double_eq(edge_between(g, "a_1", "c_1"), 15);
    ck_assert_double_eq(edge_between(g, "a_1", "b_1"), 10);
    ck_assert_double_eq(edge_between(g, "b_1", "c_1"), 2.5);
    ck_assert_str_eq(g->op_kind[0], "prep");
    ck_assert_str_eq(g->op_kind[1], "task");
    ck_assert_double_eq(g->out_size[0], 15);
    ck_assert_str_eq(g->op_kind[2], "task");
    ck_assert_str_eq(g->time_unit, "s");
    dp_graph_free(g);
    /* by content through the generic reader, at the default bandwidth */
    g = dp_graph_read(p, NULL, &err);
    ck_assert_msg(g != NULL, "%s", err.msg);
    ck_assert_double_eq(edge_between(g, "a_1", "c_1"), 1500 / DP_GRAPH_WFCOMMONS_BANDWIDTH_BPS);
    dp_graph_free(g);
}
END_TEST

/* A Nextflow record's program is its whole shell script (WfInstances' nextflow files): the
 * kind is the script's first word, base name (it was the script, line ends and backslashes
 * included: 11 kinds for 7 processes, and no DOT could be written); a one-word program stays. */
START_TEST(wfcommons_nextflow_kind)
{
    char *t = strdup(wf15);
    char *at = strstr(t, "\"runtimeInSeconds\": 2}");
    ck_assert_ptr_nonnull(at);
    const char *script = "\"runtimeInSeconds\": 2, \"command\": {\"program\": \"/usr/bin/unicycler \\\\\\n   --threads 1 \\\\\\n --no_correct\"}}";
    char *u = malloc(strlen(t) + strlen(script) + 1);
    size_t k = (size_t)(at - t);
    memcpy(u, t, k);
    strcpy(u + k, script);
    strcat(u, at + strlen("\"runtimeInSeconds\": 2}"));
    const char *p = put("wfnf.json", u);
    dp_error err;
    dp_graph *g = dp_graph_read_wfcommons(p, 100, &err);
    ck_assert_msg(g != NULL, "%s", err.msg);
    ck_assert_str_eq(g->op_kind[0], "prep");
    ck_assert_str_eq(g->op_kind[1], "unicycler");
    /* a schema older than 1.4 ("jobs") is refused saying which are read (it said only that no
     * tasks were found) */
    const char *p12 = put("wf12.json", "{\"name\": \"x\", \"schemaVersion\": \"1.2\", \"workflow\": {\"jobs\": []}}");
    ck_assert_ptr_null(dp_graph_read_wfcommons(p12, 100, &err));
    ck_assert_msg(strstr(err.msg, "schemaVersion 1.2: only 1.4 (and 1.5 or later) are read") != NULL, "%s", err.msg);
    /* and the graph writes as DOT */
    char out[512];
    snprintf(out, sizeof out, "%s.dot", p);
    ck_assert_msg(dp_graph_write_dot(g, out, NULL, 0, &err) == DP_OK, "%s", err.msg);
    dp_graph_free(g);
    free(u);
    free(t);
}
END_TEST

START_TEST(wfcommons_14)
{
    /* 1.4: files per task with links; parents by name */
    const char *p = put("wf14.json",
        "{\"name\": \"old\", \"schemaVersion\": \"1.4\", \"workflow\": {\"makespanInSeconds\": 3, \"executedAt\": \"x\",\n"
        " \"tasks\": [\n"
        "  {\"name\": \"split_ID1\", \"id\": \"ID1\", \"category\": \"split\", \"runtimeInSeconds\": 1, \"parents\": [],\n"
        "   \"files\": [{\"link\": \"input\", \"name\": \"x\", \"sizeInBytes\": 10}, {\"link\": \"output\", \"name\": \"y\", \"sizeInBytes\": 300}]},\n"
        "  {\"name\": \"work_ID2\", \"id\": \"ID2\", \"runtimeInSeconds\": 2, \"parents\": [\"split_ID1\"],\n"
        "   \"files\": [{\"link\": \"input\", \"name\": \"y\", \"sizeInBytes\": 300}]}]}}\n");
    dp_error err;
    dp_graph *g = dp_graph_read(p, NULL, &err);
    ck_assert_msg(g != NULL, "%s", err.msg);
    ck_assert_int_eq(g->n_ops, 2);
    ck_assert_int_eq(g->n_edges, 1);
    ck_assert_str_eq(g->op_kind[0], "split");
    ck_assert_double_eq(g->edge_size[0], 300 / DP_GRAPH_WFCOMMONS_BANDWIDTH_BPS);
    dp_graph_free(g);
}
END_TEST

/* A graph with an edge and no files at all (1.5: "files": []; 1.4: "files": [] per task) has no
 * file lists to share: transfer 0. The reader computed a pointer from the lists' NULL pool
 * (UBSan: "applying zero offset to null pointer" in the sanitizer build). */
START_TEST(wfcommons_no_files)
{
    const char *p15 = put("wfnofiles15.json",
        "{\"name\": \"w\", \"schemaVersion\": \"1.5\", \"workflow\": {\n"
        " \"specification\": {\"tasks\": [\n"
        "   {\"name\": \"a\", \"id\": \"a\", \"parents\": [], \"children\": [\"b\"], \"inputFiles\": [], \"outputFiles\": []},\n"
        "   {\"name\": \"b\", \"id\": \"b\", \"parents\": [\"a\"], \"children\": [], \"inputFiles\": [], \"outputFiles\": []}],\n"
        "  \"files\": []},\n"
        " \"execution\": {\"makespanInSeconds\": 1, \"executedAt\": \"x\",\n"
        "  \"tasks\": [{\"id\": \"a\", \"runtimeInSeconds\": 1}, {\"id\": \"b\", \"runtimeInSeconds\": 2}]}}}\n");
    const char *p14 = put("wfnofiles14.json",
        "{\"name\": \"w\", \"schemaVersion\": \"1.4\", \"workflow\": {\"executedAt\": \"x\", \"makespanInSeconds\": 1, \"tasks\": [\n"
        "  {\"name\": \"a\", \"id\": \"a\", \"runtimeInSeconds\": 1, \"parents\": [], \"children\": [\"b\"], \"files\": []},\n"
        "  {\"name\": \"b\", \"id\": \"b\", \"runtimeInSeconds\": 2, \"parents\": [\"a\"], \"children\": [], \"files\": []}]}}\n");
    const char *paths[] = {p15, p14};
    for (int k = 0; k < 2; k++) {
        dp_error err;
        dp_graph *g = dp_graph_read_wfcommons(paths[k], 100, &err);
        ck_assert_msg(g != NULL, "%s: %s", paths[k], err.msg);
        ck_assert_int_eq(g->n_ops, 2);
        ck_assert_int_eq(g->n_edges, 1);
        ck_assert_double_eq(g->edge_size[0], 0);
        ck_assert_double_eq(dp_graph_total_work(g), 3);
        dp_graph_free(g);
    }
}
END_TEST

/* ---- MSR ---- */

START_TEST(msr_small)
{
    const char *p = put("msr.json",
        "{\"maxSizePerFPGA\": 1e9, \"maxFPGAs\": 2, \"maxCPUs\": 1,\n"
        " \"nodes\": [{\"id\": 10, \"name\": \"conv\", \"fpgaLatency\": 1.5, \"cpuLatency\": 15, \"supportedOnFpga\": 1, \"isBackwardNode\": false, \"size\": 4},\n"
        "           {\"id\": 3, \"name\": \"conv\", \"fpgaLatency\": 2, \"cpuLatency\": 20, \"supportedOnFpga\": false, \"isBackwardNode\": true, \"size\": 4},\n"
        "           {\"id\": 7, \"fpgaLatency\": 0, \"cpuLatency\": 0}],\n"
        " \"edges\": [{\"sourceId\": 10, \"destId\": 3, \"cost\": 0.25}, {\"sourceId\": 3, \"destId\": 7, \"cost\": 0.5}]}\n");
    dp_error err;
    dp_graph *g = dp_graph_read(p, NULL, &err);
    ck_assert_msg(g != NULL, "%s", err.msg);
    ck_assert_int_eq(g->n_ops, 3);
    ck_assert_str_eq(g->op_name[0], "conv");
    ck_assert_str_eq(g->op_name[1], "conv#3");
    ck_assert_str_eq(g->op_name[2], "node7");
    ck_assert_str_eq(g->op_kind[1], "backward");
    ck_assert_str_eq(g->op_type[1], "cpu-only");
    ck_assert(g->op_type[0] == NULL);
    ck_assert_double_eq(dp_graph_total_work(g), 3.5);
    ck_assert_double_eq(edge_between(g, "conv", "conv#3"), 0.25);
    ck_assert_double_eq(edge_between(g, "conv#3", "node7"), 0.5);
    ck_assert_double_eq(g->out_size[1], 0.5);
    dp_graph_free(g);
}
END_TEST

/* ---- DOT ---- */

START_TEST(dot_sinnen_style)
{
    const char *p = put("s.dot",
        "/* a comment */ digraph \"Random_Nodes_4\" {\n"
        "\tgraph [\"Total schedule length\"=12,\n"
        "\t\tModes=\"a long \\\n"
        "continued line; with \\\"quotes\\\"\"];\n"
        "# preprocessor line\n"
        "\t0\t [Weight=2];\n"
        "\t1\t [\"Start time\"=2, Processor=1, Weight=3];\n"
        "\t0 -> 1\t [Weight=10];  // trailing comment\n"
        "\tnode [Weight=4];\n"
        "\tsubgraph cluster_x { 2; }\n"
        "\t1 -> 2 -> \"three\" [Weight=1.5];\n"
        "\t\"three\" [Weight=0.5, kind=sink]\n"
        "}\n");
    dp_error err;
    dp_graph *g = dp_graph_read(p, NULL, &err);
    ck_assert_msg(g != NULL, "%s", err.msg);
    ck_assert_str_eq(g->name, "Random_Nodes_4");
    ck_assert_int_eq(g->n_ops, 4);
    ck_assert_int_eq(g->n_edges, 3);
    ck_assert_double_eq(g->work[dp_graph_find_op(g, "2")], 4); /* the node default */
    ck_assert_double_eq(g->work[dp_graph_find_op(g, "three")], 0.5);
    ck_assert_str_eq(g->op_kind[dp_graph_find_op(g, "three")], "sink");
    ck_assert_double_eq(edge_between(g, "0", "1"), 10);
    ck_assert_double_eq(edge_between(g, "2", "three"), 1.5);
    ck_assert_double_eq(g->out_size[0], 10);
    dp_graph_free(g);
}
END_TEST

START_TEST(dot_errors)
{
    dp_error err;
    const char *p = put("u.dot", "graph g { a -- b }\n");
    ck_assert(dp_graph_read(p, NULL, &err) == NULL);
    ck_assert_msg(strstr(err.msg, "u.dot:1: an undirected graph") != NULL, "%s", err.msg);
    p = put("nw.dot", "digraph g {\n a [Weight=1];\n a -> b [Weight=2];\n}\n");
    ck_assert(dp_graph_read(p, NULL, &err) == NULL);
    ck_assert_msg(strstr(err.msg, "nw.dot:3: node b has no Weight") != NULL, "%s", err.msg);
    p = put("str.dot", "digraph g {\n a [Weight=\"1]\n}\n");
    ck_assert(dp_graph_read(p, NULL, &err) == NULL);
    ck_assert_msg(strstr(err.msg, "str.dot:2: unterminated string") != NULL, "%s", err.msg);
}
END_TEST

/* a file of n bytes given with their length (NUL bytes included) */
static const char *put_bytes(const char *name, const char *bytes, size_t n)
{
    static char path[4][512];
    static int k;
    char *p = path[k++ % 4];
    snprintf(p, 512, "%s/%s", tmpdir, name);
    FILE *f = fopen(p, "wb");
    ck_assert(f != NULL);
    ck_assert_uint_eq(fwrite(bytes, 1, n, f), n);
    fclose(f);
    return p;
}

START_TEST(nul_bytes_refused)
{
    /* "a<NUL>x" and "a<NUL>y" used to be one node "a" (a self loop); a NUL in STG ended the
     * text early */
    static const char dot[] = "digraph g {\n \"a\0x\" [Weight=1];\n \"a\0y\" [Weight=2];\n \"a\0x\" -> \"a\0y\" [Weight=3];\n}\n";
    static const char stg[] = "1\n0 0 0\n1 5 1 0\n2 0 1\0 1\n";
    dp_error err;
    const char *p = put_bytes("nul.dot", dot, sizeof dot - 1);
    ck_assert(dp_graph_read(p, NULL, &err) == NULL);
    ck_assert_msg(strstr(err.msg, "nul.dot:2:4: a NUL byte (0x00): not a text file") != NULL, "%s", err.msg);
    p = put_bytes("nul.stg", stg, sizeof stg - 1);
    ck_assert(dp_graph_read(p, NULL, &err) == NULL);
    ck_assert_msg(strstr(err.msg, "nul.stg:4:6: a NUL byte") != NULL, "%s", err.msg);
    /* the same STG without the NUL reads */
    static const char stg_ok[] = "1\n0 0 0\n1 5 1 0\n2 0 1 1\n";
    p = put_bytes("ok.stg", stg_ok, sizeof stg_ok - 1);
    dp_graph *g = dp_graph_read(p, NULL, &err);
    ck_assert_msg(g != NULL, "%s", err.msg);
    dp_graph_free(g);
}
END_TEST

START_TEST(bom_accepted)
{
    /* a UTF-8 byte order mark before the text: read as if absent, in every text format */
    static const struct { const char *name, *text; int ops; } cases[] = {
        {"bom.dot", "\xEF\xBB\xBF" "digraph g { a [Weight=1]; b [Weight=2]; a -> b [Weight=3]; }\n", 2},
        {"bom.stg", "\xEF\xBB\xBF" "1\n0 0 0\n1 5 1 0\n2 0 1 1\n", 1},
        {"bom.json", "\xEF\xBB\xBF" "{\"format\":\"doppler-graph\",\"name\":\"b\",\"cost_kind\":\"time\","
                     "\"ops\":[{\"name\":\"a\",\"time\":1},{\"name\":\"b\",\"time\":2}],"
                     "\"edges\":[{\"src\":\"a\",\"dst\":\"b\",\"comm\":1}]}\n", 2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        dp_error err;
        const char *p = put(cases[i].name, cases[i].text);
        dp_graph *g = dp_graph_read(p, NULL, &err);
        ck_assert_msg(g != NULL, "%s: %s", cases[i].name, err.msg);
        ck_assert_int_eq(g->n_ops, cases[i].ops);
        dp_graph_free(g);
    }
}
END_TEST

START_TEST(json_estimate_counts_objects)
{
    /* "[{},{},...]": 10^5 empty objects in 300 kB of text take about 23 MB to parse; the old
     * estimate (32 bytes per byte: 9.6 MB) let a 16 MB limit through */
    const int n = 100000;
    char *text = malloc((size_t)3 * n + 2);
    ck_assert_ptr_nonnull(text);
    size_t k = 0;
    text[k++] = '[';
    for (int i = 0; i < n; i++) {
        if (i) text[k++] = ',';
        text[k++] = '{';
        text[k++] = '}';
    }
    text[k++] = ']';
    ck_assert_double_ge(dp_json_parse_bytes(text, k), 230.0 * n);
    const char *p = put_bytes("objs.json", text, k);
    free(text);
    dp_error err;
    setenv("DOPPLER_MEM_LIMIT", "16M", 1);
    json_t *root = dp_json_load(p, &err);
    unsetenv("DOPPLER_MEM_LIMIT");
    ck_assert_ptr_null(root);
    ck_assert_int_eq(err.code, DP_ENOMEM);
    ck_assert_msg(strstr(err.msg, "parsing this JSON file needs about") != NULL, "%s", err.msg);
    root = dp_json_load(p, &err);
    ck_assert_msg(root != NULL, "%s", err.msg);
    ck_assert_uint_eq(json_array_size(root), (size_t)n);
    json_decref(root);
}
END_TEST

START_TEST(dot_round_trip)
{
    /* a time graph written as DOT reads back with the same names, works and edge sizes */
    dp_gen_random_opts o;
    dp_gen_random_defaults(&o);
    o.n = 60; o.ccr = 0.37;
    dp_error err;
    dp_graph *g = dp_gen_random(&o, &err);
    ck_assert_msg(g != NULL, "%s", err.msg);
    char path[512];
    snprintf(path, sizeof path, "%s/rt.dot", tmpdir);
    ck_assert_int_eq(dp_graph_write(g, path, NULL, &err), DP_OK);
    dp_graph *h = dp_graph_read(path, NULL, &err);
    ck_assert_msg(h != NULL, "%s", err.msg);
    ck_assert_int_eq(h->n_ops, g->n_ops);
    ck_assert_int_eq(h->n_edges, g->n_edges);
    for (int v = 0; v < g->n_ops; v++) {
        ck_assert_str_eq(h->op_name[v], g->op_name[v]);
        ck_assert_str_eq(h->op_kind[v], g->op_kind[v]);
        ck_assert_double_eq(h->work[v], g->work[v]);
    }
    for (int e = 0; e < g->n_edges; e++) {
        ck_assert_int_eq(h->edge_src[e], g->edge_src[e]);
        ck_assert_int_eq(h->edge_dst[e], g->edge_dst[e]);
        ck_assert_double_eq(h->edge_size[e], g->edge_size[e]);
    }
    dp_graph_free(h);
    /* with an assignment: one cluster per device; still readable */
    int *a = malloc((size_t)g->n_ops * sizeof *a);
    for (int v = 0; v < g->n_ops; v++) a[v] = v % 3;
    ck_assert_int_eq(dp_graph_write_dot(g, path, a, 3, &err), DP_OK);
    size_t size;
    char *text = dp_file_read(path, &size, &err);
    ck_assert(strstr(text, "subgraph \"cluster_device2\"") != NULL);
    free(text);
    h = dp_graph_read(path, NULL, &err);
    ck_assert_msg(h != NULL, "%s", err.msg);
    ck_assert_int_eq(h->n_ops, g->n_ops);
    ck_assert_int_eq(h->n_edges, g->n_edges);
    ck_assert_double_eq(dp_graph_total_work(h), dp_graph_total_work(g));
    dp_graph_free(h);
    a[0] = 3;
    ck_assert_int_eq(dp_graph_write_dot(g, path, a, 3, &err), DP_EINVAL);
    free(a);
    dp_graph_free(g);
}
END_TEST

START_TEST(dot_physical_names)
{
    /* generated op names contain brackets and commas: quoted in DOT and read back */
    const char *k[] = {"matrices", "n", "blocks"}, *v[] = {"2", "4", "2"};
    dp_error err;
    dp_graph *g = dp_gen_by_name("chainmm", 3, k, v, &err);
    ck_assert_msg(g != NULL, "%s", err.msg);
    char path[512];
    snprintf(path, sizeof path, "%s/mm.dot", tmpdir);
    ck_assert_int_eq(dp_graph_write(g, path, "dot", &err), DP_OK);
    dp_graph *h = dp_graph_read(path, "dot", &err);
    ck_assert_msg(h != NULL, "%s", err.msg);
    ck_assert_int_eq(h->n_ops, 12);
    ck_assert_int_ge(dp_graph_find_op(h, "mm1.red[a1,c0]"), 0);
    ck_assert_str_eq(h->op_kind[dp_graph_find_op(h, "mm1.red[a1,c0]")], "reduce");
    dp_graph_free(h);
    dp_graph_free(g);
}
END_TEST

/* A review of the DOT writer: (a) an op's type, einsum and output shape (validate's kernels read
 * them) were dropped; (b) a name with a backslash before a quote was written a\\"b, which
 * Graphviz reads as a pair and an end (syntax error): refused now, and a Graphviz-valid "p\\" (two
 * backslashes, a pair) reads as p\\ (it was "unterminated string"); (c) the graph's label was
 * cut at 511 bytes, once before a backslash that then escaped the closing quote (written, not
 * readable back); (d) a time unit of invalid UTF-8 is refused when read (the JSON writer failed
 * "out of memory"). */
START_TEST(dot_op_info_quoting_label)
{
    dp_error err;
    const char *k[] = {"matrices", "n", "blocks"}, *v[] = {"2", "4", "2"};
    dp_graph *g = dp_gen_by_name("chainmm", 3, k, v, &err);
    ck_assert_msg(g != NULL, "%s", err.msg);
    char path[512];
    snprintf(path, sizeof path, "%s/info.dot", tmpdir);
    ck_assert_int_eq(dp_graph_write(g, path, "dot", &err), DP_OK);
    dp_graph *h = dp_graph_read(path, "dot", &err);
    ck_assert_msg(h != NULL, "%s", err.msg);
    int with_einsum = 0;
    for (int i = 0; i < g->n_ops; i++) {
        ck_assert_int_eq(!g->op_type[i], !h->op_type[i]);
        if (g->op_type[i]) ck_assert_str_eq(g->op_type[i], h->op_type[i]);
        ck_assert_int_eq(!g->op_einsum[i], !h->op_einsum[i]);
        if (g->op_einsum[i]) {
            ck_assert_str_eq(g->op_einsum[i], h->op_einsum[i]);
            with_einsum++;
        }
        ck_assert_int_eq(g->op_ndim[i], h->op_ndim[i]);
        for (int d = 0; d < g->op_ndim[i]; d++)
            ck_assert_int_eq(g->op_shape[(size_t)i * DP_GRAPH_MAX_DIMS + d], h->op_shape[(size_t)i * DP_GRAPH_MAX_DIMS + d]);
    }
    ck_assert_int_gt(with_einsum, 0);
    dp_graph_free(h);
    dp_graph_free(g);
    /* (b) */
    const char *p = put("q.json", "{\"name\": \"g\", \"cost_kind\": \"time\", \"ops\": [{\"name\": \"a\\\\\\\"b\", \"time\": 1}], "
                                  "\"edges\": []}\n");
    g = dp_graph_read(p, NULL, &err);
    ck_assert_msg(g != NULL, "%s", err.msg);
    ck_assert_str_eq(g->op_name[0], "a\\\"b");
    ck_assert_int_eq(dp_graph_write(g, path, "dot", &err), DP_EINVAL);
    ck_assert_msg(strstr(err.msg, "before a quote") != NULL, "%s", err.msg);
    dp_graph_free(g);
    p = put("pair.dot", "digraph g {\n \"p\\\\\" [Weight=1];\n \"q\\\\\\\"r\" [Weight=2];\n}\n");
    g = dp_graph_read(p, "dot", &err);
    ck_assert_msg(g != NULL, "%s", err.msg);
    ck_assert_str_eq(g->op_name[0], "p\\\\");
    ck_assert_str_eq(g->op_name[1], "q\\\\\"r");
    /* an even run of backslashes before a quote is written and read back */
    ck_assert_int_eq(dp_graph_write(g, path, "dot", &err), DP_OK);
    h = dp_graph_read(path, "dot", &err);
    ck_assert_msg(h != NULL, "%s", err.msg);
    ck_assert_str_eq(h->op_name[1], "q\\\\\"r");
    dp_graph_free(h);
    dp_graph_free(g);
    /* (c) a name of 510 a's and a backslash and b */
    char name[600];
    memset(name, 'a', 510);
    snprintf(name + 510, sizeof name - 510, "\\\\b");
    char text[1024];
    snprintf(text, sizeof text, "{\"name\": \"%s\", \"cost_kind\": \"time\", \"ops\": [{\"name\": \"x\", \"time\": 1}], \"edges\": []}\n",
             name);
    g = dp_graph_read(put("long.json", text), NULL, &err);
    ck_assert_msg(g != NULL, "%s", err.msg);
    ck_assert_int_eq(dp_graph_write(g, path, "dot", &err), DP_OK);
    h = dp_graph_read(path, "dot", &err);
    ck_assert_msg(h != NULL, "the long label does not read back: %s", err.msg);
    ck_assert(strncmp(h->name, g->name, strlen(h->name)) == 0); /* (the reader keeps a name's first 255 bytes) */
    dp_graph_free(h);
    dp_graph_free(g);
    /* node [...] defaults of the new attributes apply, as Graphviz's defaults do */
    g = dp_graph_read(put("nd.dot", "digraph g {\n node [kind=\"matmul\", doppler_op_type=\"aten.mm\", doppler_shape=\"4,4\", "
                                    "Weight=5];\n a; b [doppler_op_type=\"own\"];\n a -> b [Weight=1];\n}\n"), "dot", &err);
    ck_assert_msg(g != NULL, "%s", err.msg);
    ck_assert_str_eq(g->op_type[0], "aten.mm");
    ck_assert_str_eq(g->op_type[1], "own");
    ck_assert_int_eq(g->op_ndim[0], 2);
    ck_assert_int_eq(g->op_shape[1], 4);
    dp_graph_free(g);
    /* (d) */
    g = dp_graph_read(put("l5.dot", "digraph g {\n doppler_time_unit=\"u\xe9\";\n \"a\" [Weight=3];\n}\n"), "dot", &err);
    ck_assert_ptr_null(g);
    ck_assert_msg(strstr(err.msg, "time unit is not valid UTF-8") != NULL, "%s", err.msg);
}
END_TEST

/* ---- dispatch ---- */

START_TEST(dispatch)
{
    dp_error err;
    const char *p = put("schema.json", "{\"$schema\": \"x\", \"type\": \"object\"}\n");
    ck_assert(dp_graph_read(p, NULL, &err) == NULL);
    ck_assert_msg(strstr(err.msg, "not a graph") != NULL, "%s", err.msg);
    p = put("g.xyz", "1\n");
    ck_assert(dp_graph_read(p, NULL, &err) == NULL);
    ck_assert(strstr(err.msg, "give --format") != NULL);
    ck_assert(dp_graph_read(p, "yaml", &err) == NULL);
    ck_assert(strstr(err.msg, "unknown graph format \"yaml\"") != NULL);
    /* stg content under another name, with --format */
    p = put("g.txt2", "1\n0 0 0\n1 4 1 0\n2 0 1 1\n");
    dp_graph *g = dp_graph_read(p, "stg", &err);
    ck_assert_msg(g != NULL, "%s", err.msg);
    ck_assert_int_eq(g->n_ops, 1);
    dp_graph_free(g);
}
END_TEST

START_TEST(content_hash)
{
    /* the content hash (the test-graph guard's) survives renaming and a JSON or DOT round trip,
     * and changes with one cost or one edge */
    dp_gen_random_opts o;
    dp_gen_random_defaults(&o);
    o.n = 50;
    dp_error err;
    dp_graph *g = dp_gen_random(&o, &err);
    ck_assert_msg(g != NULL, "%s", err.msg);
    const uint64_t h0 = dp_graph_content_hash(g);
    const char *ext[2] = {"json", "dot"};
    for (int k = 0; k < 2; k++) {
        char path[512];
        snprintf(path, sizeof path, "%s/renamed-copy.%s", tmpdir, ext[k]);
        ck_assert_int_eq(dp_graph_write(g, path, NULL, &err), DP_OK);
        dp_graph *h = dp_graph_read(path, NULL, &err);
        ck_assert_msg(h != NULL, "%s", err.msg);
        ck_assert_msg(dp_graph_content_hash(h) == h0, "%s round trip changed the hash", ext[k]);
        dp_graph_free(h);
    }
    free(g->name);
    g->name = strdup("another-name");
    ck_assert(dp_graph_content_hash(g) == h0);
    g->work[7] *= 1.0000001;
    ck_assert(dp_graph_content_hash(g) != h0);
    g->work[7] /= 1.0000001;
    g->edge_dst[0] = g->edge_dst[0] + 1;
    ck_assert(dp_graph_content_hash(g) != h0);
    dp_graph_free(g);
}
END_TEST


/* ---- the DOPPLER writer ---- */

/* makespans of g on 4 devices under three fixed assignments (round robin, one device, a
 * multiplicative hash), costs as the DOPPLER-compatible model reads them, or DOPPLER's rule
 * with comm_ratio when it is > 0 */
static void makespans(const dp_graph *g, double comm_ratio, double out[3])
{
    dp_error err;
    dp_cost *c = dp_cost_graph(g, 4, &err);
    ck_assert_msg(c != NULL, "%s", err.msg);
    if (comm_ratio > 0) ck_assert_int_eq(dp_cost_set_comm_ratio(c, g, comm_ratio, &err), DP_OK);
    dp_sim *s = dp_sim_alloc(g, c, &err);
    ck_assert(s != NULL);
    int *a = malloc((size_t)g->n_ops * sizeof *a);
    for (int k = 0; k < 3; k++) {
        for (int v = 0; v < g->n_ops; v++) a[v] = k == 0 ? v % 4 : k == 1 ? 0 : (int)((v * 2654435761u) >> 7) % 4;
        dp_sim_result r;
        ck_assert_int_eq(dp_sim_run(s, a, &r, &err), DP_OK);
        out[k] = r.makespan;
    }
    free(a);
    dp_sim_free(s);
    dp_cost_free(c);
}

static void assert_same_graph(const dp_graph *g, const dp_graph *h)
{
    ck_assert_int_eq(h->n_ops, g->n_ops);
    ck_assert_int_eq(h->n_edges, g->n_edges);
    for (int v = 0; v < g->n_ops; v++) ck_assert_double_eq(h->work[v], g->work[v]);
    for (int e = 0; e < g->n_edges; e++) {
        ck_assert_int_eq(h->edge_src[e], g->edge_src[e]);
        ck_assert_int_eq(h->edge_dst[e], g->edge_dst[e]);
        ck_assert_double_eq(h->edge_size[e], g->edge_size[e]);
    }
}

START_TEST(doppler_round_trip)
{
    /* DOPPLER file -> write -> read: the same graph (content hash, edge order, op types) and
     * the same makespans; then a generated task graph (integer works, ccr 3) the same way */
    char path[512], src[512];
    dp_error err;
    dp_graph *g = dp_graph_read(dp_test_path(src, sizeof src, dp_test_srcdir(), "tests/data/tiny-doppler.txt"), NULL, &err);
    ck_assert_msg(g != NULL, "%s", err.msg);
    snprintf(path, sizeof path, "%s/rt.txt", tmpdir);
    ck_assert_int_eq(dp_graph_write(g, path, NULL, &err), DP_OK); /* .txt: DOPPLER's writer */
    dp_graph *h = dp_graph_read(path, NULL, &err);
    ck_assert_msg(h != NULL, "%s", err.msg);
    assert_same_graph(g, h);
    ck_assert_uint_eq(dp_graph_content_hash(h), dp_graph_content_hash(g));
    ck_assert_double_eq(h->time_scale, 1e10);
    double m1[3], m2[3];
    makespans(g, 0, m1);
    makespans(h, 0, m2);
    for (int k = 0; k < 3; k++) ck_assert_double_eq(m1[k], m2[k]);
    dp_graph_free(h);
    dp_graph_free(g);

    dp_gen_stg_opts o;
    dp_gen_stg_defaults(&o);
    o.n = 80; o.ccr = 3; o.method = 1;
    g = dp_gen_stg(&o, &err);
    ck_assert_msg(g != NULL, "%s", err.msg);
    ck_assert_int_eq(dp_graph_write_doppler(g, path, &err), DP_OK);
    h = dp_graph_read(path, NULL, &err);
    ck_assert_msg(h != NULL, "%s", err.msg);
    assert_same_graph(g, h);
    makespans(g, 0, m1);
    makespans(h, 0, m2);
    for (int k = 0; k < 3; k++) ck_assert_double_eq(m1[k], m2[k]);
    dp_graph_free(h);
    dp_graph_free(g);
}
END_TEST

START_TEST(doppler_stg_comm_ratio)
{
    /* an STG graph (no transfer costs) written with DOPPLER's rule R = 4: every op's comm is
     * 4 x its time, and the makespans are those of the STG graph under comm ratio 4 */
    const char *p = put("cr.stg", "4\n0 0 0\n1 3 1 0\n2 5 1 0\n3 2 1 1\n4 7 3 1 2 3\n5 0 1 4\n");
    dp_error err;
    dp_graph *g = dp_graph_read(p, NULL, &err);
    ck_assert_msg(g != NULL, "%s", err.msg);
    char path[512];
    snprintf(path, sizeof path, "%s/stg4.txt", tmpdir);
    ck_assert_int_eq(dp_graph_write_doppler_ratio(g, path, 4, 1, &err), DP_OK);
    size_t size;
    char *text = dp_file_read(path, &size, &err);
    ck_assert_str_eq(text, "4\n\n0, 0, 1, 2\n2, 3, 3, 3\n3,12\n5,20\n2,8\n7,28\n");
    free(text);
    dp_graph *h = dp_graph_read(path, NULL, &err);
    ck_assert_msg(h != NULL, "%s", err.msg);
    for (int e = 0; e < h->n_edges; e++) ck_assert_double_eq(h->edge_size[e], 4 * h->work[h->edge_src[e]]);
    double m1[3], m2[3];
    makespans(g, 4, m1);
    makespans(h, 0, m2);
    for (int k = 0; k < 3; k++) ck_assert_double_eq(m1[k], m2[k]);
    ck_assert_double_eq(m1[1], 17); /* one device: the total work */
    dp_graph_free(h);
    /* R = 0.5 gives 1.5 for task 1: not a whole number, nothing written; time scale 2 makes it one
     * and doubles every makespan */
    snprintf(path, sizeof path, "%s/stg05.txt", tmpdir);
    ck_assert_int_eq(dp_graph_write_doppler_ratio(g, path, 0.5, 1, &err), DP_EINVAL);
    ck_assert_msg(strstr(err.msg, "op 0 (1): communication 1.5 is not a whole number") != NULL, "%s", err.msg);
    ck_assert_msg(strstr(err.msg, "--time-scale") != NULL, "%s", err.msg);
    ck_assert(access(path, F_OK) != 0);
    ck_assert_int_eq(dp_graph_write_doppler_ratio(g, path, 0.5, 2, &err), DP_OK);
    h = dp_graph_read(path, NULL, &err);
    ck_assert_msg(h != NULL, "%s", err.msg);
    makespans(g, 0.5, m1);
    makespans(h, 0, m2);
    for (int k = 0; k < 3; k++) ck_assert_double_eq(2 * m1[k], m2[k]);
    dp_graph_free(h);
    dp_graph_free(g);
}
END_TEST

START_TEST(doppler_write_errors)
{
    dp_error err;
    char path[512];
    snprintf(path, sizeof path, "%s/bad.txt", tmpdir);
    /* FLOPs and bytes */
    dp_gen_chainmm_opts co;
    dp_gen_chainmm_defaults(&co);
    dp_graph *g = dp_gen_chainmm(&co, &err);
    ck_assert_int_eq(dp_graph_write_doppler(g, path, &err), DP_EINVAL);
    ck_assert(strstr(err.msg, "FLOPs and bytes") != NULL);
    dp_graph_free(g);
    /* an op sending different times to two consumers */
    const char *p = put("two.dot", "digraph g { a [Weight=2]; b [Weight=3]; c [Weight=4]; a -> b [Weight=5]; a -> c [Weight=6]; }");
    g = dp_graph_read(p, NULL, &err);
    ck_assert_msg(g != NULL, "%s", err.msg);
    ck_assert_int_eq(dp_graph_write_doppler(g, path, &err), DP_EINVAL);
    ck_assert_msg(strstr(err.msg, "op 0 (a) sends 5 to b and 6 to c") != NULL, "%s", err.msg);
    /* a ratio for a graph with transfer times of its own */
    ck_assert_int_eq(dp_graph_write_doppler_ratio(g, path, 4, 1, &err), DP_EINVAL);
    ck_assert_msg(strstr(err.msg, "has transfer times of its own") != NULL, "%s", err.msg);
    ck_assert_int_eq(dp_graph_write_doppler_ratio(g, path, 0, 0, &err), DP_EINVAL);
    ck_assert(access(path, F_OK) != 0);
    dp_graph_free(g);
}
END_TEST

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/dp_test_formats.XXXXXX");
    if (!mkdtemp(tmpdir)) return 1;
    Suite *s = suite_create("formats");
    TCase *t = tcase_create("readers");
    tcase_add_test(t, stg_small);
    tcase_add_test(t, content_hash);
    tcase_add_test(t, stg_errors);
    tcase_add_test(t, wfcommons_15);
    tcase_add_test(t, wfcommons_14);
    tcase_add_test(t, wfcommons_nextflow_kind);
    tcase_add_test(t, wfcommons_no_files);
    tcase_add_test(t, msr_small);
    tcase_add_test(t, dot_sinnen_style);
    tcase_add_test(t, dot_errors);
    tcase_add_test(t, nul_bytes_refused);
    tcase_add_test(t, bom_accepted);
    tcase_add_test(t, json_estimate_counts_objects);
    tcase_add_test(t, dot_round_trip);
    tcase_add_test(t, dot_physical_names);
    tcase_add_test(t, dot_op_info_quoting_label);
    tcase_add_test(t, dispatch);
    tcase_add_test(t, doppler_round_trip);
    tcase_add_test(t, doppler_stg_comm_ratio);
    tcase_add_test(t, doppler_write_errors);
    suite_add_tcase(s, t);
    int rc = dp_test_run(s);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) rc = rc ? rc : 0;
    return rc;
}
