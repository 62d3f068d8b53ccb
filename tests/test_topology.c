/* test_topology: the machine description (machine/dp_topology.h): routes of least latency through
 * switches, staging through host memory without peer-to-peer, channels per direction and half
 * duplex, parallel links, segment classes, route overrides, and refusals naming the field. Every
 * bundled topology loads. */
#include "dp_machine.h"
#include "dp_test.h"
#include "dp_topology.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#define GPU(name) "{\"name\":\"" name "\",\"kind\":\"gpu\",\"peak_flops\":1e12,\"mem_bandwidth_Bps\":1e12," \
                  "\"memory_bytes\":1e10}"
#define LINK(a, b, kind, bw, lat) "{\"a\":\"" a "\",\"b\":\"" b "\",\"kind\":\"" kind "\",\"bandwidth_Bps\":" #bw \
                                  ",\"latency_s\":" #lat "}"

static dp_topology *parse(const char *json)
{
    dp_error err;
    dp_topology *t = dp_topology_parse(json, "t.json", &err);
    ck_assert_msg(t != NULL, "%s", err.msg);
    return t;
}

static void refused(const char *json, const char *what)
{
    dp_error err;
    dp_error_clear(&err);
    dp_topology *t = dp_topology_parse(json, "t.json", &err);
    ck_assert_msg(t == NULL, "accepted: %s", json);
    ck_assert_msg(strstr(err.msg, what) != NULL, "message \"%s\" lacks \"%s\"", err.msg, what);
    ck_assert_msg(strstr(err.msg, "t.json") != NULL, "message \"%s\" does not name the file", err.msg);
}

/* g0 and g1 under one switch, g2 under another; the switches joined by a slow link. The route
 * g0 -> g2 crosses three links; its bottleneck is the slow link; latencies add up. */
START_TEST(routes_through_switches)
{
    dp_topology *t = parse("{\"devices\":[" GPU("g0") "," GPU("g1") "," GPU("g2") "],"
                           "\"nodes\":[{\"name\":\"s0\",\"kind\":\"switch\"},{\"name\":\"s1\",\"kind\":\"switch\"}],"
                           "\"links\":[" LINK("g0", "s0", "pcie", 1e10, 1e-6) "," LINK("g1", "s0", "pcie", 1e10, 1e-6) ","
                           LINK("g2", "s1", "pcie", 1e10, 1e-6) "," LINK("s0", "s1", "host", 2e9, 5e-6) "]}");
    ck_assert_int_eq(t->n_devices, 3);
    ck_assert_int_eq(t->n_nodes, 5);
    ck_assert_int_eq(t->n_links, 4);
    ck_assert_int_eq(t->n_channels, 8);   /* full duplex: one channel per direction */
    ck_assert_int_eq(dp_topology_find_device(t, "g2"), 2);
    ck_assert_int_eq(dp_topology_find_device(t, "s0"), -1);   /* a switch is no device */
    ck_assert_int_eq(dp_topology_find_node(t, "s1"), 4);
    const dp_topology_route_info *r = dp_topology_route(t, 0, 2);
    ck_assert_int_eq(r->n_hops, 3);
    ck_assert_int_eq(r->staged, 0);
    ck_assert_int_eq(r->seg_end - r->seg_begin, 1);
    ck_assert_double_eq_tol(r->latency_s, 7e-6, 1e-18);
    ck_assert_double_eq(r->bottleneck_Bps, 2e9);
    ck_assert_double_eq_tol(r->inv_bw, 1 / 2e9, 1e-24);
    const dp_topology_route_info *q = dp_topology_route(t, 0, 1);
    ck_assert_int_eq(q->n_hops, 2);
    ck_assert_double_eq_tol(q->latency_s, 2e-6, 1e-18);
    /* the two directions use different channels (full duplex) and different classes */
    const dp_topology_route_info *back = dp_topology_route(t, 2, 0);
    ck_assert_int_ne(t->hop_chan[t->seg[r->seg_begin].hop_begin], t->hop_chan[t->seg[back->seg_begin].hop_end - 1]);
    ck_assert_int_ne(t->seg[r->seg_begin].klass, t->seg[back->seg_begin].klass);
    dp_topology_free(t);
}
END_TEST

/* without peer-to-peer, a GPU-to-GPU transfer is stored and forwarded at host memory: two
 * segments, one bottleneck each (inv_bw adds them) */
START_TEST(staged_without_p2p)
{
    dp_topology *t = parse("{\"devices\":[" GPU("g0") "," GPU("g1") "],"
                           "\"nodes\":[{\"name\":\"cpu\",\"kind\":\"switch\"},{\"name\":\"mem\",\"kind\":\"host\"}],"
                           "\"links\":[" LINK("g0", "cpu", "pcie", 1e10, 1e-6) "," LINK("g1", "cpu", "pcie", 1e10, 1e-6) ","
                           LINK("cpu", "mem", "host", 5e10, 1e-7) "],\"peer_to_peer\":false}");
    const dp_topology_route_info *r = dp_topology_route(t, 0, 1);
    ck_assert_int_eq(r->staged, 1);
    ck_assert_int_eq(r->seg_end - r->seg_begin, 2);
    ck_assert_int_eq(r->n_hops, 4);   /* g0 -> cpu -> mem, mem -> cpu -> g1 */
    ck_assert_double_eq_tol(r->inv_bw, 2 / 1e10, 1e-22);
    ck_assert_int_eq(t->p2p[0 * 2 + 1], 0);
    dp_topology_free(t);
    /* with peer-to-peer the same machine goes through the switch alone */
    t = parse("{\"devices\":[" GPU("g0") "," GPU("g1") "],"
              "\"nodes\":[{\"name\":\"cpu\",\"kind\":\"switch\"},{\"name\":\"mem\",\"kind\":\"host\"}],"
              "\"links\":[" LINK("g0", "cpu", "pcie", 1e10, 1e-6) "," LINK("g1", "cpu", "pcie", 1e10, 1e-6) ","
              LINK("cpu", "mem", "host", 5e10, 1e-7) "]}");
    r = dp_topology_route(t, 0, 1);
    ck_assert_int_eq(r->staged, 0);
    ck_assert_int_eq(r->n_hops, 2);
    dp_topology_free(t);
}
END_TEST

/* count parallel links multiply the bandwidth; a half-duplex link is one channel for both
 * directions (so both directions share one class) */
START_TEST(count_and_half_duplex)
{
    dp_topology *t = parse("{\"devices\":[" GPU("g0") "," GPU("g1") "],"
                           "\"links\":[{\"a\":\"g0\",\"b\":\"g1\",\"kind\":\"nvlink\",\"bandwidth_Bps\":2.5e10,"
                           "\"latency_s\":0,\"count\":2,\"duplex\":\"half\"}]}");
    ck_assert_int_eq(t->n_channels, 1);
    ck_assert_int_eq(t->link[0].half_duplex, 1);
    ck_assert_double_eq(t->link[0].bandwidth_Bps, 5e10);
    const dp_topology_route_info *ab = dp_topology_route(t, 0, 1), *ba = dp_topology_route(t, 1, 0);
    ck_assert_int_eq(t->seg[ab->seg_begin].klass, t->seg[ba->seg_begin].klass);
    ck_assert_double_eq(ab->bottleneck_Bps, 5e10);
    ck_assert_str_eq(dp_topology_link_kind_name(t->link[0].kind), "nvlink");
    dp_topology_free(t);
}
END_TEST

/* a route override replaces the computed route: here the slow way round */
START_TEST(route_override)
{
    const char *base = "{\"devices\":[" GPU("g0") "," GPU("g1") "],"
                       "\"nodes\":[{\"name\":\"sw\",\"kind\":\"switch\"}],"
                       "\"links\":[" LINK("g0", "g1", "nvlink", 5e10, 1e-6) "," LINK("g0", "sw", "pcie", 1e10, 1e-6) ","
                       LINK("sw", "g1", "pcie", 1e10, 1e-6) "]";
    char json[2048];
    snprintf(json, sizeof json, "%s}", base);
    dp_topology *t = parse(json);
    ck_assert_int_eq(dp_topology_route(t, 0, 1)->n_hops, 1);
    ck_assert_int_eq(dp_topology_route(t, 0, 1)->overridden, 0);
    dp_topology_free(t);
    snprintf(json, sizeof json, "%s,\"routes\":[{\"src\":\"g0\",\"dst\":\"g1\",\"path\":[\"g0\",\"sw\",\"g1\"]}]}", base);
    t = parse(json);
    const dp_topology_route_info *r = dp_topology_route(t, 0, 1);
    ck_assert_int_eq(r->overridden, 1);
    ck_assert_int_eq(r->n_hops, 2);
    ck_assert_double_eq(r->bottleneck_Bps, 1e10);
    ck_assert_int_eq(dp_topology_route(t, 1, 0)->n_hops, 1);   /* the other direction keeps NVLink */
    dp_topology_free(t);
    /* an override through nodes that share no link is refused */
    snprintf(json, sizeof json, "{\"devices\":[" GPU("g0") "," GPU("g1") "," GPU("g2") "],"
             "\"links\":[" LINK("g0", "g1", "nvlink", 5e10, 0) "," LINK("g1", "g2", "nvlink", 5e10, 0) "],"
             "\"routes\":[{\"src\":\"g0\",\"dst\":\"g1\",\"path\":[\"g0\",\"g2\",\"g1\"]}]}");
    refused(json, "routes[0]");
    /* stage_at names nodes inside the path, once: an endpoint, a node off the path or a repeat
     * was accepted and ignored */
    static const char *bad[] = {"[\"g0\"]", "[\"g1\"]", "[\"nowhere\"]", "[\"sw\",\"sw\"]", "[3]"};
    static const char *why[] = {"stage_at[0]: \"g0\" is not a node inside the path", "stage_at[0]: \"g1\" is not a node inside",
                                "stage_at[0]: \"nowhere\" is not", "stage_at[1]: \"sw\" is named twice",
                                "stage_at[0]: must be a node name"};
    for (int i = 0; i < 5; i++) {
        snprintf(json, sizeof json, "%s,\"routes\":[{\"src\":\"g0\",\"dst\":\"g1\",\"path\":[\"g0\",\"sw\",\"g1\"],"
                 "\"stage_at\":%s}]}", base, bad[i]);
        refused(json, why[i]);
    }
    snprintf(json, sizeof json, "%s,\"routes\":[{\"src\":\"g0\",\"dst\":\"g1\",\"path\":[\"g0\",\"sw\",\"g1\"],"
             "\"stage_at\":[\"sw\"]}]}", base);
    t = parse(json);
    ck_assert_int_eq(dp_topology_route(t, 0, 1)->staged, 1);
    dp_topology_free(t);
}
END_TEST

START_TEST(refusals_name_the_field)
{
    refused("{\"devices\":[" GPU("g0") "," GPU("g1") "],\"links\":[" LINK("g0", "g1", "pcie", -1, 0) "]}",
            "links[0].bandwidth_Bps");
    refused("{\"devices\":[" GPU("g0") "," GPU("g1") "],\"links\":[" LINK("g0", "gx", "pcie", 1e9, 0) "]}", "gx");
    refused("{\"devices\":[" GPU("g0") "," GPU("g1") "],\"links\":[]}", "route");   /* g0 and g1 unconnected */
    refused("{\"devices\":[]}", "devices");
    refused("[1, 2]", "t.json");
    /* an empty name (accepted: routes printed "  -> mem -> core1": a review) */
    refused("{\"devices\":[" GPU("") "," GPU("g1") "],\"links\":[" LINK("", "g1", "pcie", 1e9, 0) "]}",
            "devices[0].name: must not be empty");
    refused("{\"devices\":[" GPU("g0") "," GPU("g1") "],\"nodes\":[{\"name\":\"\",\"kind\":\"switch\"}],\"links\":["
            LINK("g0", "", "pcie", 1e9, 0) "," LINK("g1", "", "pcie", 1e9, 0) "]}", "nodes[0].name: must not be empty");
    /* another kind of file, said as such (a graph said 'unknown key "cost_kind"', a calibration
     * 'unknown key "machine"': a walkthrough) */
    refused("{\"name\":\"g\",\"cost_kind\":\"physical\",\"ops\":[]}", "a graph, not a topology (it has a graph's \"ops\"");
    refused("{\"format\":\"doppler-calibration\",\"machine\":\"m\",\"devices\":{}}",
            "format: \"doppler-calibration\", expected \"doppler-topology\" (not a topology file)");
}
END_TEST

/* every bundled machine loads, every device pair has a route, and a route's numbers agree with
 * its segments */
START_TEST(bundled_topologies)
{
    const char *names[] = {"pcie-gen3-4gpu", "dgx1-v100", "a100-pcie-4gpu", "dgx-a100", "h100-sxm-8gpu",
                           "2gpu-nvlink-bridge", "cpu-2core"};
    const char *data = getenv("DOPPLER_DATA");
    char path[1024];
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(path, sizeof path, "%s/topologies/%s.json", data && *data ? data : "data", names[i]);
        dp_error err;
        dp_topology *t = dp_topology_load(path, &err);
        ck_assert_msg(t != NULL, "%s", err.msg);
        for (int a = 0; a < t->n_devices; a++)
            for (int b = 0; b < t->n_devices; b++) {
                if (a == b) continue;
                const dp_topology_route_info *r = dp_topology_route(t, a, b);
                ck_assert_msg(r->n_hops > 0, "%s: no route %d -> %d", names[i], a, b);
                double inv = 0, lat = 0;
                for (int s = r->seg_begin; s < r->seg_end; s++) {
                    inv += 1 / t->seg[s].bottleneck_Bps;
                    lat += t->seg[s].latency_s;
                }
                ck_assert(fabs(inv - r->inv_bw) <= 1e-12 * inv);
                ck_assert(fabs(lat - r->latency_s) <= 1e-12 * (lat > 0 ? lat : 1));
            }
        dp_topology_free(t);
    }
}
END_TEST

/* a bundled topology by name from the folder an embedding program gave (the Python package: the
 * installed data or the checkout's, which it once wrote into $DOPPLER_DATA of its own process):
 * after $DOPPLER_DATA, forgotten with NULL, a path too long refused and the folder kept */
static void touch(const char *dir, const char *name, char *path, size_t cap)
{
    char sub[512];
    snprintf(sub, sizeof sub, "%s/topologies", dir);
    ck_assert(mkdir(sub, 0700) == 0);
    snprintf(path, cap, "%s/%s.json", sub, name);
    FILE *f = fopen(path, "w");
    ck_assert(f != NULL);
    fputs("{}\n", f);
    fclose(f);
}

START_TEST(data_dir_of_the_embedding_program)
{
    char a[] = "/tmp/dp-datadir-a-XXXXXX", b[] = "/tmp/dp-datadir-b-XXXXXX";
    ck_assert(mkdtemp(a) != NULL && mkdtemp(b) != NULL);
    char in_a[PATH_MAX], in_b[PATH_MAX], buf[PATH_MAX];
    touch(a, "only-in-a-folder", in_a, sizeof in_a);
    touch(b, "only-in-a-folder", in_b, sizeof in_b);
    unsetenv("DOPPLER_DATA");
    dp_error err;
    ck_assert(dp_machine_topology_path("only-in-a-folder", buf, sizeof buf) == NULL);
    ck_assert_int_eq(dp_machine_data_dir_set(a, &err), DP_OK);
    ck_assert_str_eq(dp_machine_data_dir(), a);
    ck_assert_msg(dp_machine_topology_path("only-in-a-folder", buf, sizeof buf) != NULL, "not found under %s", a);
    ck_assert_str_eq(buf, in_a);
    /* the user's $DOPPLER_DATA comes first */
    setenv("DOPPLER_DATA", b, 1);
    ck_assert(dp_machine_topology_path("only-in-a-folder", buf, sizeof buf) != NULL);
    ck_assert_str_eq(buf, in_b);
    /* a buffer too short for the path: NULL, not the path cut short (which named b, a folder,
     * or a file's first bytes: a review) */
    char small[PATH_MAX];
    ck_assert(dp_machine_topology_path("only-in-a-folder", small, strlen(b) + 1) == NULL);
    ck_assert(dp_machine_topology_path(in_b, small, strlen(in_b)) == NULL);
    ck_assert(dp_machine_topology_path(in_b, small, strlen(in_b) + 1) == small);
    ck_assert_str_eq(small, in_b);
    ck_assert(dp_machine_data_file("data/topologies/only-in-a-folder.json", small, strlen(b) + 1) == NULL);
    ck_assert(dp_machine_data_file("data/topologies/only-in-a-folder.json", small, strlen(in_b) + 1) == small);
    ck_assert_str_eq(small, in_b);
    unsetenv("DOPPLER_DATA");
    /* the load error lists the folder among those searched */
    dp_machine m;
    dp_machine_init(&m);
    ck_assert_int_eq(dp_machine_set(&m, "topology", "no-such-topology", &err), DP_OK);
    ck_assert_int_ne(dp_machine_load(&m, &err), DP_OK);
    ck_assert_msg(strstr(err.msg, a) != NULL, "\"%s\" does not name %s", err.msg, a);
    dp_machine_free(&m);
    char *longp = malloc(PATH_MAX + 1);
    ck_assert(longp != NULL);
    memset(longp, 'x', PATH_MAX);
    longp[PATH_MAX] = '\0';
    ck_assert_int_eq(dp_machine_data_dir_set(longp, &err), DP_EINVAL);
    free(longp);
    ck_assert_str_eq(dp_machine_data_dir(), a);
    ck_assert_int_eq(dp_machine_data_dir_set(NULL, &err), DP_OK);
    ck_assert_str_eq(dp_machine_data_dir(), "");
    ck_assert(dp_machine_topology_path("only-in-a-folder", buf, sizeof buf) == NULL);
    unlink(in_a);
    unlink(in_b);
    snprintf(buf, sizeof buf, "%.64s/topologies", a);
    rmdir(buf);
    snprintf(buf, sizeof buf, "%.64s/topologies", b);
    rmdir(buf);
    rmdir(a);
    rmdir(b);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("topology");
    TCase *t = tcase_create("topology");
    tcase_add_test(t, routes_through_switches);
    tcase_add_test(t, staged_without_p2p);
    tcase_add_test(t, count_and_half_duplex);
    tcase_add_test(t, route_override);
    tcase_add_test(t, refusals_name_the_field);
    tcase_add_test(t, bundled_topologies);
    tcase_add_test(t, data_dir_of_the_embedding_program);
    suite_add_tcase(s, t);
    return dp_test_run(s);
}
