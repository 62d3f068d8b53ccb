/* doppler place / doppler simulate: compute or read an assignment, simulate it, report. */
#include "cli.h"
#include "dp_file.h"
#include "commands.h"
#include "dp_coarse.h"
#include "dp_h5io.h"
#include "dp_hetero.h"
#include "exec_cli.h"
#include "dp_json.h"
#include "dp_list.h"
#include "dp_place.h"
#include "dp_problem.h"
#include "dp_search.h"
#include "dp_engine.h"
#include "dp_train.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Progress of a learned method trained inside place (no --checkpoint), or of annealing and local
 * search (issue 33: a budget of 1e11 ran for hours without a word), on stderr, once it has run
 * 2 s ($DOPPLER_PROGRESS_AFTER seconds): a line rewritten on a terminal, otherwise a line then, every 5% of the
 * episodes or simulations (as train does) and at least every minute. */
typedef struct train_progress_state {
    const char *method;
    int tty;
    double t0;
    int last_pct;
    int shown;          /* a line was printed */
    double after_s;     /* seconds before the first line: 2, or $DOPPLER_PROGRESS_AFTER (tests) */
    double last_t;      /* when the last line was printed (off a terminal) */
} train_progress_state;

static void train_progress(long done, long total, void *ctx)
{
    train_progress_state *s = ctx;
    if (total <= 0) return;
    const int pct = (int)(100 * done / total);
    const double el = now_s() - s->t0, rate = done / (el > 1e-9 ? el : 1e-9);
    /* a job under 2 s says nothing; a longer one reports from then on, to its end */
    if (el < s->after_s && !s->shown) {
        s->last_pct = pct;
        return;
    }
    const int first = !s->shown;
    s->shown = 1;
    const double left = rate > 0 ? (total - done) / rate : 0;
    /* the learned methods report training episodes, the searches simulations */
    const dp_place_method *pm = dp_place_find(s->method);
    const int sims = !pm || !(pm->options & DP_PLACE_OPT_TRAINS_WITHOUT_CHECKPOINT);
    const char *what = sims ? "simulations" : "episodes", *unit = sims ? "sim/s" : "ep/s";
    if (s->tty) {
        fprintf(stderr, "\rplace %s: %s%ld/%ld %s (%d%%), %.1f %s, about %.0f s left ", s->method, sims ? "" : "training ",
                done, total, what, pct, rate, unit, left);
        if (done >= total) fputc('\n', stderr);
    } else if (first || pct / 5 != s->last_pct / 5 || done >= total || el - s->last_t >= 60) {
        /* the first line once the job has run after_s, then every 5% and at least every minute
         * (a budget of 1e11 ran silent for hours between its 5% lines: a review) */
        s->last_t = el;
        if (sims)
            fprintf(stderr, "place %s: %ld/%ld simulations (%d%%), %.1f sim/s, about %.0f s left\n", s->method, done, total,
                    pct, rate, left);
        else
            fprintf(stderr, "place %s: training episode %ld/%ld (%d%%), %.1f ep/s, about %.0f s left\n", s->method, done,
                    total, pct, rate, left);
    }
    s->last_pct = pct;
}

typedef struct run_args {
    const char *cmd;
    const char *graph, *format, *method, *assignment_file, *out, *trace, *output_format;
    dp_machine mach;
    dp_place_options place;
    int coarsen;                /* --coarsen N: groups of at most N ops (0: none; dp_coarse.h) */
    dp_coarse_rule coarsen_rule; /* --coarsen-rule: how the groups are formed (default packed) */
    int coarsen_rule_set;       /* --coarsen-rule given (it needs --coarsen) */
    double x_scale, x_target;   /* --scale, --target-flops: the graph as the executor runs it (0: not given) */
} run_args;

/* The top-level keys of method m's config that its agent refuses (dp_train_config_refused_key:
 * DOPPLER's networks, SEL's keys, GDP's gamma), after the keys the help lists from the shared
 * table: place --help listed them as placeto's and gdp's keys, and place refused them. */
static void help_refused_keys(FILE *f, const dp_place_method *m)
{
    int agent;
    if (!m->config || dp_agent_parse(m->name, &agent) != DP_OK) return;
    const char *names[64];
    int n = 0;
    for (const dp_schema_section *s = m->config(); s->name; s++) {
        char head[32];
        snprintf(head, sizeof head, "%.*s", (int)strcspn(s->name, "."), s->name);
        const char *cand[64];
        int nc = 0;
        if (head[0] && dp_train_config_refused_key(agent, head)) cand[nc++] = s->name[0] ? s->name : head;
        if (!s->name[0]) {
            for (const dp_schema_key *k = s->keys; k && k->key && nc < 64; k++) cand[nc++] = k->key;
            for (const char *const *o = s->others; o && *o && nc < 64; o++) cand[nc++] = *o;
        }
        for (int i = 0; i < nc && n < 64; i++) {
            if (!dp_train_config_refused_key(agent, cand[i])) continue;
            int seen = 0;
            for (int j = 0; j < n && !seen; j++) seen = strcmp(names[j], cand[i]) == 0;
            if (!seen) names[n++] = cand[i];
        }
    }
    if (!n) return;
    char line[512] = "";
    size_t len = 0;
    for (int i = 0; i < n && len < sizeof line; i++)
        len += (size_t)snprintf(line + len, sizeof line - len, "%s%s", i ? ", " : "", names[i]);
    char lead[64];
    snprintf(lead, sizeof lead, "                       refused for %s: ", m->name);
    dp_cli_help_option(f, lead, line);
}

static void place_usage(FILE *f, const char *cmd)
{
    int sim = strcmp(cmd, "simulate") == 0;
    fprintf(f, "Usage: doppler %s --graph FILE %s [OPTIONS]\n\n", cmd,
            sim ? "(--assignment FILE | --method M)" : "--method M");
    fprintf(f, "%s", sim ? "Simulate an assignment on an asynchronous, work-conserving runtime and print its makespan.\n"
                          "An assignment file is JSON {\"devices\": [d0, d1, ...]} (what --out writes), a JSON array\n"
                          "[d0, d1, ...], or device ids separated by commas (DOPPLER's format) or white space:\n"
                          "op i on device di, in the graph's op order (doc/file-formats.md).\n\n"
                        : "Place a graph with a method, simulate the assignment and print its makespan.\n\n");
    fprintf(f, "Options:\n"
               "  --graph FILE         the dataflow graph: DOPPLER .txt, native .json, WfCommons and MSR\n"
               "                       .json (by content), Kasahara .stg, DOT .dot (doc/graph-format.md), or\n"
               "                       a heterogeneous example that fixes the machine: FILE.in (nedjulius) or\n"
               "                       PREFIX_task_exe_time.csv (with PREFIX_task_connectivity.csv and\n"
               "                       PREFIX_resource_BW.csv beside it); --devices and\n"
               "                       --topology are refused (the example gives the machine)\n"
               "  --format F           graph format when the extension does not tell: doppler, json, native,\n"
               "                       wfcommons, msr, stg, dot, or heft-in / heft-csv (the examples above)\n"
               "  --scale S            the graph as the real executor runs it, every kernel dimension scaled\n"
               "                       by S, (0, 1] (a graph in FLOPs and bytes): what train --scale S trained\n"
               "                       on, so that its checkpoint places the graph it reported\n"
               "  --target-flops F     instead, the graph at F FLOPs in all (a graph of durations: F FLOPs over\n"
               "                       its whole time), as train --target-flops F (not with --scale)\n"
               );
    {
        char methods[1024] = "placement method:";
        for (const dp_place_method *m = dp_place_methods(); m->name; m++) {
            size_t L = strlen(methods);
            snprintf(methods + L, sizeof methods - L, " %s", m->name);
        }
        dp_cli_help_option(f, "  --method M           ", methods);
    }
    fprintf(f, "%s"
               "  --seed S             random seed (default 1); the methods' generator (GSL's mt19937) takes it\n"
               "                       modulo 2^32 (2^32 + 1 gives seed 1's placement), and seed 0 as 4357 (0 and\n"
               "                       4357 give one placement; 2^32, reduced after that test, gives another)\n"
               "  --device D           the device for --method single (default 0)\n"
               "  --checkpoint FILE    for --method doppler, placeto, gdp, improve: the trained policies\n"
               "                       (doppler train)\n"
               "  --parameters P       with a trained policy: 'selected' (default), the model-selected parameters\n"
               "                       (best greedy placement at the training's evaluations), or 'final', those\n"
               "                       the training ended with (train prints both stages' figures)\n"
               "  --proposals FILE     anneal, local, --refine: an improvement checkpoint (train --method improve)\n"
               "                       whose policy proposes half the moves (the other half uniform)\n"
               "  --samples K          for --method doppler, placeto, gdp: best of greedy and K sampled placements\n"
               "                       (default: greedy);\n"
               "                       random: the best of K random placements (random search, K simulations;\n"
               "                       K = 1, the default, is the plain random placement: no simulation)\n"
               "  --refine S           search at inference: anneal or local from the method's placement (a\n"
               "                       learned method's probabilities propose the moves); never worse;\n"
               "                       improve: the improvement search of the --proposals checkpoint's policy\n"
               "                       (place --method improve's) from the method's placement\n"
               "  --refine-budget N    simulations of that search, its start included (default 2000; only\n"
               "                       with --refine); the count printed adds the method's own (a learned\n"
               "                       method's rollout, one more for the policy's move proposals, and\n"
               "                       one for the best placement its training sampled, kept when better;\n"
               "                       with --coarsen neither: the refinement starts from the expanded\n"
               "                       group placement, with uniform moves; on --queue priority, one\n"
               "                       more for a method with priorities of its own, its placement run\n"
               "                       with them to compare)\n"
               "  --coarsen N          place groups of at most N ops (an acyclic group graph; doc/coarsen.md):\n"
               "                       the method places the group graph, each op takes its group's\n"
               "                       device, then --refine\n"
               "                       (if given) searches the whole graph from there; prints the groups,\n"
               "                       the simulations and CPU seconds of each phase\n"
               "  --coarsen-rule R     packed (default: chains, then merges that keep the critical path\n"
               "                       by work, then groups that feed nothing packed by their last input)\n"
               "                       or chains (an op joins its inputs' group only when they all lie\n"
               "                       in one; then the same on the reversed graph)\n"
               "  --append-only        heft, cpop, peft: append each op after its device's last op instead of\n"
               "                       inserting it into the earliest idle gap\n"
               "                       (nedjulius/heft-cpop-simulator's CPOP)\n"
               "  --ties id|heap       heft, cpop, peft: order of ready ops of equal priority: id (default, lowest\n"
               "                       op id first) or heap (a C++ std::priority_queue's, libc++: that CPOP's)\n"
               "  --out FILE           write the assignment as JSON (atomically)\n"
               "  --trace FILE         write a Chrome trace JSON of the schedule (Perfetto)\n"
               "  --format-out text|json, --json   output style (json: one object for scripts)\n",
            sim ? "  --assignment FILE    the assignment to simulate\n" : "");
    /* the defaults from the methods' own (exact's node budget was stated nowhere but the man
     * page: a review) */
    dp_search_anneal_config acfg;
    dp_search_exact_config ecfg;
    dp_search_anneal_config_init(&acfg);
    dp_search_exact_config_init(&ecfg);
    char budget[512];
    snprintf(budget, sizeof budget, "search methods: simulations (anneal, local, improve; default %ld, their config's "
             "budget) or search nodes (exact; default %ld, after which its placement is the best found, not proven); "
             "placeto, gdp: training episodes when no checkpoint (default 200; progress on stderr once it has run "
             "2 s, as train prints it)", acfg.budget, ecfg.max_nodes);
    dp_cli_help_option(f, "  --budget N           ", budget);
    fprintf(f, "  --config FILE        method config, JSON: the keys listed under each method below\n"
               "                       (kinds, ranges, defaults: doppler config METHOD; doc/improve.md,\n"
               "                       doc/baselines.md)\n");
    dp_cli_print_machine_help(f);
    fprintf(f, "  -h, --help           this help\n\n"
               "Makespans of DOPPLER graph files are in DOPPLER units (simulated time / 1e10), the\n"
               "reference simulator's unit; graphs in FLOPs and bytes give seconds. Without --topology and\n"
               "with the default simulator options the DOPPLER-compatible engine runs (exact, fast); any\n"
               "other machine runs the general engine.\n"
               "The list schedulers (heft, cpop, peft, etf) also print their own schedule's length, which\n"
               "can differ from the simulated makespan (the simulator runs each device first come first\n"
               "served; the schedulers insert ops into idle gaps and order them by rank).\n");
    /* from the method table (dp_place_method.options): the options each method reads besides
     * --seed, the machine and --refine; any other is refused */
    fprintf(f, "\nMethods and the options each reads (besides --seed, the machine, --refine and\n"
               "--refine-budget; any other is refused):\n");
    for (const dp_place_method *m = dp_place_methods(); m->name; m++) {
        char opts[256], lead[32];
        dp_place_options_text(m, opts, sizeof opts);
        snprintf(lead, sizeof lead, "  %-19s", m->name);
        dp_cli_help_option(f, lead, opts[0] ? opts : "-");
        const dp_place_method *first = dp_place_methods();
        while (m->config && first->config != m->config) first++;
        if (m->config && first != m) fprintf(f, "                       --config keys: %s's\n", first->name);
        else if (m->config) dp_cli_help_config_keys(f, "                       --config keys: ", m->config());
        help_refused_keys(f, m);
        if (m->options & DP_PLACE_OPT_TRAINS_WITHOUT_CHECKPOINT)
            fprintf(f, "                       (place trains Stage II alone: seed, stages.S.episodes, pipeline, stages.il,\n"
                       "                       coarsen and coarsen_rule are refused; give --seed, --budget, --coarsen)\n");
    }
}

/* what is printed: the engine's schedule, and the list scheduler's own schedule */
typedef struct run_out {
    double makespan;
    const double *busy;
    long n_transfers;
    double volume;
    const dp_engine_schedule *hi;      /* the general engine's schedule; NULL on the fast path */
    long sims;                  /* simulations the method spent (its searches, training, samples;
                                   with --coarsen those on the group graph too) */
    const dp_coarse_report *coarse; /* --coarsen: what the coarsened placement did, else NULL */
    const dp_list_schedule *ls; /* the list scheduler's own schedule, or NULL */
    long prefix_sims;           /* the learned methods' environment state's partial simulations */
    double cpu_s;               /* process CPU seconds of the method (dp_place) */
    int proven;                 /* exact (not coarsened): 1 optimum proven, 0 budget spent; else -1 */
} run_out;

static double util(const run_out *o, int d)
{
    return o->makespan > 0 ? o->busy[d] / o->makespan : 0.0;
}

static void print_json(const run_args *a, const dp_graph *g, const char *label, const run_out *r)
{
    const double sc = g->time_scale;
    const dp_machine *m = &a->mach;
    json_t *o = json_object();
    json_object_set_new(o, "graph", json_string(g->name));
    /* a placement read from a file is not a method: its path goes under "assignment" */
    if (a->assignment_file) json_object_set_new(o, "assignment", json_string(a->assignment_file));
    else json_object_set_new(o, "method", json_string(label));
    /* a method with a trained policy: which of its parameters placed */
    const dp_place_method *pm = a->method ? dp_place_find(a->method) : NULL;
    if (pm && (pm->options & DP_PLACE_OPT_CHECKPOINT))
        json_object_set_new(o, "parameters", json_string(a->place.final_parameters ? "final" : "selected"));
    json_object_set_new(o, "n_devices", json_integer(m->n_devices));
    json_object_set_new(o, "makespan", dp_json_number(r->makespan / sc));
    if (r->ls) json_object_set_new(o, "schedule_makespan", dp_json_number(r->ls->makespan / sc));
    json_object_set_new(o, "units", json_string(g->time_unit));
    json_t *busy = json_array(), *ut = json_array();
    for (int d = 0; d < m->n_devices; d++) {
        json_array_append_new(busy, dp_json_number(r->busy[d] / sc));
        json_array_append_new(ut, dp_json_number(util(r, d)));
    }
    json_object_set_new(o, "busy", busy);
    json_object_set_new(o, "utilisation", ut);
    json_object_set_new(o, "transfers", json_integer(r->n_transfers));
    json_object_set_new(o, "simulations", json_integer(r->sims));
    if (r->prefix_sims > 0) json_object_set_new(o, "prefix_simulations", json_integer(r->prefix_sims));
    if (r->proven >= 0) json_object_set_new(o, "proven", json_boolean(r->proven));
    json_object_set_new(o, "transfer_volume", dp_json_number(r->volume));
    if (r->coarse) {
        const dp_coarse_report *c = r->coarse;
        json_object_set_new(o, "coarsen", json_pack("{s:i,s:s,s:i,s:i,s:i,s:I,s:I,s:f,s:f,s:f,s:o,s:o,s:o,s:o}", "max_group", a->coarsen,
                                                     "rule", dp_coarse_rule_name(a->coarsen_rule),
                                                     "groups", c->n_groups, "group_edges", c->n_group_edges,
                                                     "largest_group", c->largest_group, "group_simulations",
                                                     (json_int_t)c->group_simulations, "refine_simulations",
                                                     (json_int_t)(r->sims - c->group_simulations), "cpu_group_s",
                                                     c->cpu_group_s, "cpu_place_s", c->cpu_place_s, "cpu_refine_s",
                                                     /* in the printed unit, as the text and group_makespan
                                                      * (they were the file's: 3e12 for 300.03 DOPPLER units) */
                                                     c->cpu_refine_s, "critical_path_work",
                                                     dp_json_number(c->cp_work / g->time_scale),
                                                     "work_bound", dp_json_number(c->work_bound / g->time_scale),
                                                     "group_critical_path_work",
                                                     dp_json_number(c->group_cp_work / g->time_scale),
                                                     "group_makespan", dp_json_number(c->group_makespan / g->time_scale)));
    }
    json_object_set_new(o, "transfer_volume_units",
                        json_string(dp_cli_volume_unit(g, m, "file units (comm)")));
    if (r->hi) {
        const dp_engine_schedule *h = r->hi;
        if (m->topo) json_object_set_new(o, "topology", json_string(m->topo->name));
        json_object_set_new(o, "transfer_model", json_string(dp_transfer_kind_name(m->sim.transfer_model)));
        json_object_set_new(o, "mode", json_string(m->sim.mode == DP_HISIM_MODE_BSP ? "bsp" : "async"));
        json_t *mp = json_array();
        for (int d = 0; d < m->n_devices; d++) json_array_append_new(mp, dp_json_number(h->mem_peak[d]));
        json_object_set_new(o, "memory_peak", mp);
        json_object_set_new(o, "memory_excess", dp_json_number(h->mem_excess));
        json_object_set_new(o, "penalised_makespan", dp_json_number(h->cost / sc));
        json_object_set_new(o, "events", json_integer(h->n_events));
    }
    json_dumpf(o, stdout, JSON_COMPACT | JSON_REAL_PRECISION(17));
    putchar('\n');
    json_decref(o);
}

static void print_text(const run_args *a, const dp_graph *g, const run_out *r)
{
    const double sc = g->time_scale;
    const dp_machine *m = &a->mach;
    char b[40], b2[40], b3[40];
    printf("graph %s: %d ops, %d edges, %d devices, %s\n", g->name, g->n_ops, g->n_edges, m->n_devices,
           a->assignment_file ? "assignment from file" : a->method);
    if (r->hi) {
        printf("machine: %s, transfer model %s%s, %s execution, queue %s\n",
               m->topo ? m->topo->name
                       : dp_hetero_format(a->graph, a->format) ? "the example's own processors"
                                                            : "identical devices (DOPPLER-compatible costs)",
               dp_transfer_kind_name(m->sim.transfer_model), m->topo && m->sim.copy_engines ? " with copy engines" : "",
               m->sim.mode == DP_HISIM_MODE_BSP ? "bulk-synchronous" : "asynchronous work-conserving",
               m->sim.queue == DP_HISIM_QUEUE_PRIORITY ? "by priority" : "FIFO");
    }
    printf("makespan: %s %s\n", dp_cli_fmt(r->makespan / sc, b, sizeof b), g->time_unit);
    if (r->ls)
        printf("schedule length (%s's own schedule, not simulated): %s %s\n", a->method,
               dp_cli_fmt(r->ls->makespan / sc, b, sizeof b), g->time_unit);
    for (int d = 0; d < m->n_devices; d++) {
        printf("device %d%s%s%s: busy %s %s, utilisation %.1f%%", d, m->topo ? " (" : "", m->topo ? m->topo->dev[d].name : "",
               m->topo ? ")" : "", dp_cli_fmt(r->busy[d] / sc, b, sizeof b), g->time_unit, 100.0 * util(r, d));
        if (r->hi) printf(", peak memory %s %s", dp_cli_fmt(r->hi->mem_peak[d], b2, sizeof b2),
                          g->cost_kind == DP_GRAPH_COST_PHYSICAL ? "bytes" : "file units");
        putchar('\n');
    }
    /* 0 too (the line was left out for a method that spends none, while --json said 0; a review) */
    if (!a->assignment_file) printf("simulations spent by the method: %ld\n", r->sims);
    if (r->proven == 1) printf("exact: the search finished, so the method's placement is optimal over assignments\n");
    if (r->proven == 0)
        printf("exact: the node budget (--budget) ran out before the search finished: the best placement found, "
               "not proven optimal\n");
    if (r->prefix_sims > 0)
        printf("partial simulations of the policy's exact state: %ld (prefix runs while placing, not in the count above)\n",
               r->prefix_sims);
    /* an assignment read from a file had no method (it said "CPU seconds of the method: 0.000") */
    if (!a->assignment_file) printf("CPU seconds of the method: %.3f\n", r->cpu_s);
    if (r->coarse) {
        const dp_coarse_report *c = r->coarse;
        /* the method's simulations are of the whole graph on the machine (the expanded oracle)
         * or of the group graph (the improvement search; it said "on the group graph" for both:
         * a review) */
        printf("coarsened (%s): %d groups of at most %d ops (largest %d), %d group edges; %ld simulations by the "
               "method (%ld of the whole graph, %ld of the group graph), %ld refining; CPU s: grouping %.3f, placing "
               "the groups %.3f, refining %.3f\n",
               dp_coarse_rule_name(a->coarsen_rule), c->n_groups, a->coarsen, c->largest_group, c->n_group_edges, c->group_simulations,
               c->expanded_simulations, c->group_simulations - c->expanded_simulations, r->sims - c->group_simulations,
               c->cpu_group_s, c->cpu_place_s, c->cpu_refine_s);
        printf("the groups' placement on the group graph (DOPPLER-compatible engine, one slot per device): makespan %s %s "
               "(the group graph's estimate; the makespan above is the placement's)\n", dp_cli_fmt(c->group_makespan / sc, b, sizeof b),
               g->time_unit);
        /* each figure with its unit (the bound and the groups' critical path had none: a review) */
        printf("by work alone (least op times, no transfers): critical path %s %s, lower bound %s %s (critical path or "
               "work per compute stream), the groups' critical path %s %s (%.3f times the bound)\n",
               dp_cli_fmt(c->cp_work / sc, b, sizeof b), g->time_unit, dp_cli_fmt(c->work_bound / sc, b2, sizeof b2),
               g->time_unit, dp_cli_fmt(c->group_cp_work / sc, b3, sizeof b3), g->time_unit,
               c->work_bound > 0 ? c->group_cp_work / c->work_bound : 1.0);
    }
    printf("cross-device transfers: %ld (volume %s %s)\n", r->n_transfers, dp_cli_fmt(r->volume, b, sizeof b),
           dp_cli_volume_unit(g, m, "file units"));
    if (r->hi && r->hi->mem_excess > 0)
        printf("memory over capacity by %.3g%%: penalised makespan %s %s\n", 100 * r->hi->mem_excess,
               dp_cli_fmt(r->hi->cost / sc, b, sizeof b), g->time_unit);
}

static int run_and_report(run_args *a)
{
    dp_error err;
    dp_error_clear(&err);
    int status = DP_EXIT_ERROR;
    int *assign = NULL;
    double *prio = NULL;
    dp_cost *hetero_cost = NULL;
    dp_problem *prob = NULL;
    dp_graph *g = NULL;
    dp_list_schedule *ls = NULL;
    if (dp_hetero_format(a->graph, a->format)) {
        /* the example's own machine: op time per processor, link rates and start-up costs */
        if (a->x_scale > 0 || a->x_target > 0)
            return dp_cli_usage_error(a->cmd, "--scale and --target-flops size a graph for the real executor; %s is a "
                                      "heterogeneous example with its own op times", a->graph);
        if (dp_machine_hetero_read(&a->mach, a->graph, a->format, &g, &hetero_cost, &err) != DP_OK) return dp_cli_fail(&err);
    } else {
        g = dp_graph_read(a->graph, a->format, &err);
        if (!g) return dp_cli_fail(&err);
        if (a->x_scale > 0 || a->x_target > 0) {
            /* the graph train --scale/--target-flops trained on (dp_cli_exec_graph) */
            dp_graph *gx = dp_cli_exec_graph(g, a->graph, a->x_scale, a->x_target, &err);
            dp_graph_free(g);
            if (!gx) return dp_cli_fail(&err);
            g = gx;
        }
    }
    /* the one engine of this machine: it scores the placement below and every simulation the
     * method makes (its oracle) */
    a->mach.sim.trace = a->trace != NULL;
    prob = hetero_cost ? dp_problem_alloc_with_costs(g, hetero_cost, &a->mach, &err) : dp_problem_alloc(g, &a->mach, &err);
    if (!prob) goto fail;
    if (!hetero_cost) dp_cli_warn_machine(&a->mach, g);
    const dp_cost *cost = prob->costs;
    dp_engine *eng = prob->engine;
    if (a->place.device >= a->mach.n_devices) {
        dp_error_set(&err, DP_EINVAL, "--device %d: only %d devices", a->place.device, a->mach.n_devices);
        goto fail;
    }
    assign = dp_alloc_malloc_n(g->n_ops, sizeof(int));
    prio = dp_alloc_malloc_n(g->n_ops, sizeof(double));
    if (!assign || !prio) { dp_error_set(&err, DP_ENOMEM, "out of memory"); goto fail; }
    a->place.oracle = &prob->oracle;
    a->place.machine = &a->mach;
    int has_prio = 0;
    const char *after = getenv("DOPPLER_PROGRESS_AFTER");
    train_progress_state tp = {a->method, isatty(2), now_s(), -1, 0, after && *after ? atof(after) : 2.0, 0};
    a->place.progress = train_progress;
    a->place.progress_ctx = &tp;
    dp_coarse_report coarse;
    long prefix_sims = 0;
    a->place.prefix_simulations = &prefix_sims;
    int proven = -1;
    a->place.exact_proven = a->coarsen > 0 ? NULL : &proven;
    /* the list schedulers' own schedule, reported beside the simulation of its assignment: the
     * one the method placed by (it scheduled a second time here, doubling ETF's time) */
    const dp_place_method *pm = a->method ? dp_place_find(a->method) : NULL;
    if (pm && pm->list_schedule && !a->assignment_file && !a->coarsen) {
        ls = dp_list_schedule_alloc(g->n_ops, cost->n_devices);
        if (!ls) { dp_error_set(&err, DP_ENOMEM, "out of memory"); goto fail; }
        a->place.list_schedule_out = ls;
    }
    struct timespec c0, c1;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
    if (a->assignment_file) {
        if (dp_cli_read_assignment(a->assignment_file, g->name, g->n_ops, a->mach.n_devices, assign, prio, &has_prio, &err) != DP_OK)
            goto fail;
    } else if (a->coarsen > 0) {
        if (dp_coarse_place(a->method, g, cost, &a->place, a->coarsen_rule, a->coarsen, assign, &coarse, &err) != DP_OK) goto fail;
    } else if (dp_place(a->method, g, cost, &a->place, assign, prio, &has_prio, &err) != DP_OK) {
        goto fail;
    }
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
    if (a->place.checkpoint && !a->assignment_file)
        dp_cli_note_checkpoint_place(a->cmd, a->place.checkpoint, a->coarsen, a->coarsen_rule, g, cost, eng);
    /* a priority queue without the method's priorities orders by b-level (Kwok and Ahmad 1999) */
    if (!has_prio) dp_cost_levels(g, cost, prio, NULL);
    const char *label = a->assignment_file ? a->assignment_file : a->method;
    dp_engine_schedule sched;
    const long method_sims = dp_engine_simulations(eng);
    if (dp_engine_run(eng, assign, prio, &sched, &err) != DP_OK) goto fail;
    const run_out out = {.makespan = sched.makespan, .busy = sched.busy, .n_transfers = sched.n_transfers,
                         .volume = sched.transfer_volume, .hi = dp_engine_is_general(eng) ? &sched : NULL, .ls = ls,
                         /* the caller's engine counted the coarsened method's expanded runs too */
                         .sims = method_sims + (a->coarsen > 0 ? coarse.group_simulations - coarse.expanded_simulations : 0),
                         .coarse = a->coarsen > 0 ? &coarse : NULL, .prefix_sims = prefix_sims, .proven = proven,
                         .cpu_s = (double)(c1.tv_sec - c0.tv_sec) + 1e-9 * (double)(c1.tv_nsec - c0.tv_nsec)};
    const double sc = g->time_scale;
    /* a failed run leaves neither file (the assignment was written, then the trace failed, and
     * the assignment stayed beside an exit of 1: a review): the trace first, removed when the
     * assignment then fails (each file is written whole or not at all) */
    if (a->trace && dp_engine_write_trace(eng, assign, a->trace, &err) != DP_OK) goto fail;
    /* the priorities the makespan was simulated with go into the file, where they decide it (a
     * priority queue): simulate --assignment gave another makespan without them (a review) */
    const double *out_prio = has_prio && dp_engine_priority_queue(eng) ? prio : NULL;
    if (a->out && dp_cli_write_assignment(a->out, g, label, a->mach.n_devices, assign, out_prio, out.makespan / sc, &err) != DP_OK) {
        /* only a plain file the trace was just written to: never "-", a device (/dev/null) or
         * what a symbolic link points to (a review) */
        struct stat st;
        if (a->trace && strcmp(a->trace, "-") != 0 && lstat(a->trace, &st) == 0 && S_ISREG(st.st_mode)) unlink(a->trace);
        goto fail;
    }
    /* in either output format */
    if (out.coarse && out.coarse->group_cp_work > DP_COARSE_WARN_CP * out.coarse->work_bound)
        fprintf(stderr, "doppler place: warning: --coarsen %d: the groups' critical path by work is %.2f times the "
                "graph's lower bound by work (a group runs as one piece): the groups, not the devices, bound the "
                "makespan; a smaller --coarsen keeps more parallelism (doc/coarsen.md)\n",
                a->coarsen, out.coarse->group_cp_work / out.coarse->work_bound);
    if (strcmp(a->output_format, "json") == 0) print_json(a, g, label, &out);
    else print_text(a, g, &out);
    status = 0;
    goto done;
fail:
    status = dp_cli_fail(&err);
done:
    dp_problem_free(prob);
    dp_cost_free(hetero_cost);
    dp_list_schedule_free(ls);
    free(assign);
    free(prio);
    dp_graph_free(g);
    dp_machine_free(&a->mach);
    return status;
}

static int place_or_simulate(int argc, char **argv, const char *cmd)
{
    enum { O_GRAPH = 1, O_FORMAT, O_METHOD, O_ASSIGN, O_SEED, O_DEVICE, O_OUT, O_TRACE, O_FMT_OUT, O_JSON, O_HELP,
           O_BUDGET, O_CONFIG, O_CKPT, O_SAMPLES, O_REFINE, O_REFINE_BUDGET, O_APPEND, O_TIES, O_PROPOSALS, O_COARSEN,
           O_COARSEN_RULE, O_PARAMETERS, O_SCALE, O_TARGET };
    static const struct option opts[] = {
        {"graph", required_argument, NULL, O_GRAPH}, {"format", required_argument, NULL, O_FORMAT},
        {"method", required_argument, NULL, O_METHOD}, {"assignment", required_argument, NULL, O_ASSIGN},
        {"seed", required_argument, NULL, O_SEED}, {"device", required_argument, NULL, O_DEVICE},
        {"out", required_argument, NULL, O_OUT}, {"trace", required_argument, NULL, O_TRACE},
        {"format-out", required_argument, NULL, O_FMT_OUT}, {"json", no_argument, NULL, O_JSON},
        {"help", no_argument, NULL, O_HELP}, {"budget", required_argument, NULL, O_BUDGET},
        {"config", required_argument, NULL, O_CONFIG}, {"checkpoint", required_argument, NULL, O_CKPT},
        {"samples", required_argument, NULL, O_SAMPLES}, {"refine", required_argument, NULL, O_REFINE},
        {"refine-budget", required_argument, NULL, O_REFINE_BUDGET}, {"proposals", required_argument, NULL, O_PROPOSALS}, {"append-only", no_argument, NULL, O_APPEND},
        {"ties", required_argument, NULL, O_TIES}, {"coarsen", required_argument, NULL, O_COARSEN},
        {"coarsen-rule", required_argument, NULL, O_COARSEN_RULE}, {"parameters", required_argument, NULL, O_PARAMETERS},
        {"scale", required_argument, NULL, O_SCALE}, {"target-flops", required_argument, NULL, O_TARGET},
        DP_CLI_MACHINE_OPTIONS, {NULL, 0, NULL, 0}};
    run_args a;
    memset(&a, 0, sizeof a);
    int xsize = 0; /* --scale, --target-flops given (dp_cli_exec_size_option) */
    a.cmd = cmd;
    a.output_format = "text";
    dp_machine_init(&a.mach);
    dp_place_options_init(&a.place);
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        int r = dp_cli_machine_option(&a.mach, c, optarg, cmd);
        if (r < 0) return dp_cli_machine_done(&a.mach, DP_EXIT_USAGE);
        if (r > 0) continue;
        unsigned long long u;
        switch (c) {
        case O_GRAPH: a.graph = optarg; break;
        case O_FORMAT: a.format = optarg; break;
        case O_METHOD: a.method = optarg; break;
        case O_ASSIGN: a.assignment_file = optarg; break;
        case O_SEED:
            if (dp_cli_parse_u64(optarg, &u) != 0) return dp_cli_machine_done(&a.mach, dp_cli_usage_error(cmd, "--seed: expected a non-negative integer, got '%s'", optarg));
            a.place.seed = u;
            break;
        case O_DEVICE:
            if (dp_cli_parse_int(optarg, 0, 4095, &a.place.device) != 0) return dp_cli_machine_done(&a.mach, dp_cli_usage_error(cmd, "--device: expected a device id 0..4095, got '%s'", optarg));
            break;
        case O_BUDGET:
            if (dp_cli_parse_u64(optarg, &u) != 0 || u < 1 || u > (unsigned long long)1e15)
                return dp_cli_machine_done(&a.mach, dp_cli_usage_error(cmd, "--budget: expected an integer from 1 to 1e15, got '%s'", optarg));
            a.place.budget = (long)u;
            break;
        case O_CONFIG: a.place.config = optarg; break;
        case O_CKPT: a.place.checkpoint = optarg; break;
        case O_PARAMETERS:
            if (strcmp(optarg, "selected") == 0) a.place.final_parameters = 0;
            else if (strcmp(optarg, "final") == 0) a.place.final_parameters = 1;
            else return dp_cli_machine_done(&a.mach, dp_cli_usage_error(cmd, "--parameters: selected or final, got '%s'", optarg));
            a.place.parameters_set = 1; /* either value: a method with no trained policy refuses it */
            break;
        case O_PROPOSALS: a.place.proposals = optarg; break;
        case O_SAMPLES:
            if (dp_cli_parse_int(optarg, 1, 1000000, &a.place.samples) != 0) return dp_cli_machine_done(&a.mach, dp_cli_usage_error(cmd, "--samples: expected 1..1000000, got '%s'", optarg));
            break;
        case O_REFINE:
            if (strcmp(optarg, "anneal") != 0 && strcmp(optarg, "local") != 0 && strcmp(optarg, "improve") != 0)
                return dp_cli_machine_done(&a.mach, dp_cli_usage_error(cmd, "--refine: anneal, local or improve, got '%s'", optarg));
            a.place.refine = optarg;
            break;
        case O_REFINE_BUDGET:
            if (dp_cli_parse_u64(optarg, &u) != 0 || u < 1 || u > (unsigned long long)1e15)
                return dp_cli_machine_done(&a.mach, dp_cli_usage_error(cmd, "--refine-budget: expected an integer from 1 to 1e15, got '%s'", optarg));
            a.place.refine_budget = (long)u;
            break;
        case O_APPEND: a.place.list_append_only = 1; break;
        case O_COARSEN:
            if (dp_cli_parse_int(optarg, 1, 1 << 28, &a.coarsen) != 0)
                return dp_cli_machine_done(&a.mach, dp_cli_usage_error(cmd, "--coarsen: expected 1..268435456 (ops per group), got '%s'", optarg));
            break;
        case O_COARSEN_RULE:
            if (dp_coarse_rule_parse(optarg, &a.coarsen_rule) != DP_OK)
                return dp_cli_machine_done(&a.mach, dp_cli_usage_error(cmd, "--coarsen-rule: expected packed or chains, got '%s'", optarg));
            a.coarsen_rule_set = 1;
            break;
        case O_TIES:
            if (strcmp(optarg, "id") == 0) a.place.list_ties = DP_LIST_TIES_ID;
            else if (strcmp(optarg, "heap") == 0) a.place.list_ties = DP_LIST_TIES_HEAP;
            else return dp_cli_usage_error(cmd, "--ties: id or heap, got '%s'", optarg);
            break;
        case O_SCALE:
            if (dp_cli_exec_size_option(cmd, &xsize, 1) != 0) return dp_cli_machine_done(&a.mach, DP_EXIT_USAGE);
            if (dp_cli_parse_double(optarg, &a.x_scale) != 0 || !(a.x_scale > 0 && a.x_scale <= 1))
                return dp_cli_machine_done(&a.mach, dp_cli_usage_error(cmd, "--scale: expected a number in (0, 1], got '%s'", optarg));
            break;
        case O_TARGET:
            if (dp_cli_exec_size_option(cmd, &xsize, 2) != 0 || dp_cli_parse_target_flops(cmd, optarg, &a.x_target) != 0)
                return dp_cli_machine_done(&a.mach, DP_EXIT_USAGE);
            break;
        case O_OUT: a.out = optarg; break;
        case O_TRACE: a.trace = optarg; break;
        case O_FMT_OUT: a.output_format = optarg; break;
        case O_JSON: a.output_format = "json"; break;
        case 'h': case O_HELP: place_usage(stdout, cmd); return dp_cli_machine_done(&a.mach, 0);
        default: return dp_cli_machine_done(&a.mach, dp_cli_option_error(cmd, "h", opts, argv));
        }
    }
    if (optind < argc) return dp_cli_machine_done(&a.mach, dp_cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]));
    if (!a.graph) return dp_cli_machine_done(&a.mach, dp_cli_usage_error(cmd, "--graph FILE is required"));
    if (dp_cli_check_format(cmd, a.format) || dp_cli_check_machine(cmd, &a.mach)) return dp_cli_machine_done(&a.mach, DP_EXIT_USAGE);
    if (strcmp(a.output_format, "text") != 0 && strcmp(a.output_format, "json") != 0)
        return dp_cli_machine_done(&a.mach, dp_cli_usage_error(cmd, "--format-out: text or json, got '%s'", a.output_format));
    int sim = strcmp(cmd, "simulate") == 0;
    if (sim && a.coarsen) return dp_cli_machine_done(&a.mach, dp_cli_usage_error(cmd, "--coarsen belongs to 'doppler place'"));
    if (a.coarsen_rule_set && !a.coarsen)
        return dp_cli_machine_done(&a.mach, dp_cli_usage_error(cmd, "--coarsen-rule needs --coarsen N"));
    if (sim) {
        if (!!a.assignment_file == !!a.method) return dp_cli_machine_done(&a.mach, dp_cli_usage_error(cmd, "give exactly one of --assignment FILE and --method M"));
    } else {
        if (a.assignment_file) return dp_cli_machine_done(&a.mach, dp_cli_usage_error(cmd, "--assignment belongs to 'doppler simulate'"));
        if (!a.method) return dp_cli_machine_done(&a.mach, dp_cli_usage_error(cmd, "--method M is required"));
    }
    if (a.method && !dp_place_find(a.method)) {
        dp_error err;
        int dummy = 0;
        dp_place(a.method, NULL, NULL, NULL, &dummy, NULL, NULL, &err);
        return dp_cli_machine_done(&a.mach, dp_cli_usage_error(cmd, "%s", err.msg));
    }
    if (a.method) {
        /* options the method would ignore are refused, so nobody believes they were used: the
         * method table's statement of each method's options (dp_place_check_options) */
        dp_error err;
        dp_error_clear(&err);
        if (dp_place_check_options(a.method, &a.place, &err) != DP_OK)
            return dp_cli_machine_done(&a.mach, dp_cli_usage_error(cmd, "%s", err.msg));
    }
    if (a.place.parameters_set && a.assignment_file)
        return dp_cli_machine_done(&a.mach, dp_cli_usage_error(cmd, "--parameters: the parameters of a trained policy; "
                                                                     "an assignment read from a file has none"));
    /* a heterogeneous example's device count is its own, known once it is read (run_and_report:
     * "only 4 devices" was said of a 3-processor example, a review) */
    if (!a.mach.topology && !(a.graph && dp_hetero_format(a.graph, a.format)) && a.place.device >= a.mach.n_devices)
        return dp_cli_machine_done(&a.mach, dp_cli_usage_error(cmd, "--device %d: only %d devices", a.place.device, a.mach.n_devices));
    /* no output replaces an input or the other output (place --graph g.json --out g.json wrote
     * the assignment over the graph, exit 0: a review), and each can be made: after the usage
     * errors (status 2), before any work */
    {
        const dp_cli_file outs[] = {{"--out", a.out}, {"--trace", a.trace}};
        const dp_cli_file ins[] = {{"--graph", a.graph}, {"--assignment", a.assignment_file},
                                   {"--checkpoint", a.place.checkpoint}, {"--config", a.place.config},
                                   {"--proposals", a.place.proposals},
                                   {"--topology", dp_cli_topology_path(a.mach.topology)},
                                   {"--calibration", a.mach.calibration}};
        const int rc = dp_cli_files_distinct(cmd, outs, 2, ins, 7);
        if (rc) return dp_cli_machine_done(&a.mach, rc);
    }
    return run_and_report(&a);
}

int cmd_place(int argc, char **argv)
{
    return place_or_simulate(argc, argv, "place");
}

int cmd_simulate(int argc, char **argv)
{
    return place_or_simulate(argc, argv, "simulate");
}
