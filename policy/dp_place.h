/* dp_place.h: placement methods behind one interface, looked up by name.
 *
 * A method fills assignment[v] (device of every op) and, when it has one, priority[v] (a queue
 * priority per op, higher runs first; the simulator may use it as its queue discipline). The
 * priority array may be NULL when the caller does not want it; methods without a priority leave
 * it untouched and return has_priority = 0.
 *
 * Heuristics read only the cost tables; the methods that simulate (searches, learned methods)
 * ask o->oracle, the machine's one engine (dp_engine.h), so that a method optimises the model
 * that scores it. They refuse to run without one.
 */
#ifndef DP_PLACE_H
#define DP_PLACE_H

#include <stdint.h>

#include "dp_cost.h"
#include "dp_engine.h"
#include "dp_graph.h"
#include "dp_machine.h"
#include "dp_oracle.h"
#include "dp_schema.h"

struct dp_list_schedule;

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dp_place_options {
    uint64_t seed;          /* seed of the GSL generator (random, search, learned sampling) */
    int device;             /* for "single": the device to use (default 0) */
    const char *checkpoint; /* for learned methods: a checkpoint file (NULL: none) */
    int samples;            /* learned methods: K >= 1, the best of the greedy placement and K sampled
                               ones (1 + K simulations); random: the best of K; 0 (the default):
                               greedy alone, one random placement */
    long budget;            /* for search methods: simulations to spend (0: method default) */
    const char *config;     /* optional JSON config file for the method */
    const dp_oracle *oracle;   /* the cost of an assignment (dp_engine_oracle of the machine's
                                * engine): required by the methods that simulate (anneal, local,
                                * exact, doppler, placeto, gdp), unused by the others */
    const dp_machine *machine; /* the machine simulated (NULL: unknown); exact reads its streams */
    const char *refine;     /* search at inference: "anneal" or "local" from the method's placement
                             * (NULL: none); learned methods give their policy's probabilities as
                             * the moves' proposals; or "improve": the improvement search
                             * (dp_improve_search, its defaults) of the policy of checkpoint
                             * o->proposals (required) from the method's placement */
    long refine_budget;     /* simulations of that search (0: 2000) */
    const char *proposals;  /* anneal, local and refine: an improvement checkpoint (doppler train
                             * --method improve) whose policy proposes half the moves
                             * (dp_improve_propose_search); NULL: none */
    int best_seen;          /* learned methods with a checkpoint: place with the better of the
                             * policy's placement and the best placement its training sampled in
                             * its last stage (when it was sampled on this problem:
                             * dp_place_best_sample; one more simulation). Set by the refine step, which starts
                             * from a placement the training already paid for. 0: the policy's */
    int final_parameters;   /* learned methods and improve: place with the final parameters (those
                             * at the end of the last stage's training, which `train` reports as
                             * "final"; a checkpoint's /sel/param) instead of the model-selected
                             * ones (best at the stage's evaluations: "model-selected", /sel/best;
                             * 0, the default). The same when the run selected nothing */
    int parameters_set;     /* final_parameters was given (dp_place_options_set "parameters", the
                             * command's --parameters): a method with no trained policy refuses it
                             * either way (dp_place_check_options), as it refuses final */
    float *proposal;        /* out, optional: (n_ops, n_devices) device probabilities a learned
                             * method fills (NULL: not wanted) */
    int list_append_only;   /* heft, cpop, peft: 1 appends each op after its device's last op
                             * instead of inserting it into an idle gap (dp_list_schedule) */
    int list_ties;          /* heft, cpop, peft: order of ready ops of equal priority, 0 lowest id
                             * (DP_LIST_TIES_ID), 1 a C++ std::priority_queue's (DP_LIST_TIES_HEAP) */
    struct dp_list_schedule *list_schedule_out; /* out, optional: a list scheduler (heft, cpop,
                             * peft, etf: a method with dp_place_method.list_schedule) writes its
                             * own schedule here, the one its placement came from, so that a
                             * caller reporting it does not schedule again (experiments/cmd_place.c:
                             * ETF on 38,574 ops ran twice, 7.6 CPU s each); the caller's, made by
                             * dp_list_schedule_alloc for the graph's ops and devices; its
                             * append_only and ties are set from the fields above. Other methods,
                             * and the inner placements of --coarsen and of the searches' starts,
                             * leave it as it was. NULL (default): not wanted */
    /* learned methods training without a checkpoint (doppler, placeto, gdp): called after every
     * training episode with the episodes done and the total (NULL: none) */
    void (*progress)(long done, long total, void *ctx);
    void *progress_ctx;
    long *prefix_simulations; /* out, optional: the learned methods add the partial (prefix)
                             * simulations their environment's exact state ran while placing
                             * (dp_train_prefix_simulations), which the oracle's count of
                             * simulations leaves out; NULL: not wanted */
    int *exact_proven;      /* out, optional: exact sets 1 when its search finished (the makespan
                             * is the optimum over assignments), 0 when its node budget ran out
                             * first (the best found); NULL: not wanted */
} dp_place_options;

/* Fill defaults (seed 1, device 0, samples 0: greedy alone, the rest 0/NULL). */
void dp_place_options_init(dp_place_options *o);

/* Options by key, for bindings that should not lay out dp_place_options (Python's Engine.place):
 * an options object on the heap whose text values it owns.
 *
 * dp_place_options_alloc: dp_place_options_init's defaults; NULL with DP_ENOMEM. Free it with
 * dp_place_options_free (also frees the copies dp_place_options_set made; NULL is a no-op). Only
 * an object from dp_place_options_alloc may be given to the three functions below.
 *
 * dp_place_options_set: one option from its text, the keys the command's options name (with '_'
 * for '-', as Python's keywords): seed (0 .. 2^64 - 1), device (0 .. 4095), checkpoint (a path),
 * samples (1 .. 1,000,000), budget (1 .. 1e15), config (a path), refine (anneal, local or
 * improve), refine_budget (1 .. 1e15), proposals (a path), append_only (0/1, false/true),
 * ties (id or heap) and parameters (selected or final: final_parameters); value NULL puts the key back to its default. Text values are copied. Errors
 * (DP_EINVAL, o unchanged): unknown key (the message lists the known ones), a value that is not
 * the key's kind or is out of range (the message names the key and the value); DP_ENOMEM. Whether
 * a method reads the option is dp_place_check_options' question, not this one's.
 *
 * dp_place_options_set_engine: o->oracle becomes engine's oracle (dp_engine_oracle, kept inside
 * the object; NULL engine: no oracle); engine must outlive the use of o.
 * dp_place_options_set_machine: o->machine = m (not copied; NULL: unknown). */
dp_place_options *dp_place_options_alloc(dp_error *err);
/* dp_place_options_free: free o and the strings dp_place_options_set copied into it (not the
 * engine or the machine). NULL is a no-op. */
void dp_place_options_free(dp_place_options *o);
int dp_place_options_set(dp_place_options *o, const char *key, const char *value, dp_error *err);
void dp_place_options_set_engine(dp_place_options *o, dp_engine *engine);
void dp_place_options_set_machine(dp_place_options *o, const dp_machine *m);

typedef int (*dp_place_fn)(const dp_graph *g, const dp_cost *c, const dp_place_options *o,
                           int *assignment, double *priority, int *has_priority, dp_error *err);

/* The options of dp_place_options a method reads (dp_place_method.options, a mask). The seed,
 * the oracle, the machine, refine and its budget are every method's (a seed is ignored by the
 * deterministic methods; refine starts a search from any method's placement). */
enum {
    DP_PLACE_OPT_DEVICE = 1 << 0,     /* device: the device of "single" */
    DP_PLACE_OPT_CHECKPOINT = 1 << 1, /* checkpoint: a trained policy */
    DP_PLACE_OPT_SAMPLES = 1 << 2,    /* samples > 1: the best of K sampled placements */
    DP_PLACE_OPT_BUDGET = 1 << 3,     /* budget: simulations, nodes, or training episodes */
    DP_PLACE_OPT_CONFIG = 1 << 4,     /* config: the method's JSON config */
    DP_PLACE_OPT_PROPOSALS = 1 << 5,  /* proposals: an improvement policy proposing moves */
    DP_PLACE_OPT_LIST = 1 << 6,       /* list_append_only, list_ties (list schedulers) */
    /* with DP_PLACE_OPT_CHECKPOINT: without a checkpoint the method trains here, reading budget
     * (episodes) and config; from a checkpoint it reads neither (the checkpoint holds them) */
    DP_PLACE_OPT_TRAINS_WITHOUT_CHECKPOINT = 1 << 7,
    DP_PLACE_OPT_NEEDS_CHECKPOINT = 1 << 8 /* a checkpoint is required */
};

typedef struct dp_place_method {
    const char *name;        /* "cp", "random", ... */
    const char *description; /* one line, with the source it follows */
    dp_place_fn fn;
    int simulates;           /* 1: the method needs dp_place_options.oracle */
    /* working memory, an upper estimate in bytes: per op, per edge, per (op, device) pair
     * (dp_place checks it against dp_file_mem_limit before running the method; the learned methods
     * check their networks' own estimate besides) */
    double bytes_op, bytes_edge, bytes_op_device;
    unsigned options;        /* the DP_PLACE_OPT_* it reads: the one statement of a method's options */
    /* A list scheduler's own schedule (dp_list.h: each op's device, start and finish as the
     * scheduler planned them, reported beside the simulation of its assignment), or NULL for a
     * method that plans none. */
    int (*list_schedule)(const dp_graph *g, const dp_cost *c, struct dp_list_schedule *s, dp_error *err);
    /* How a sweep's run (experiments/run.c) runs the method, DP_PLACE_SWEEP_*: a placement through
     * dp_place (0), or a training run first */
    int sweep_run;
    /* A training run's own sweep parameters besides the graph's and the machine's (NULL-ended;
     * an entry ending in '*' admits every parameter with that prefix); NULL for a placement, whose
     * parameters are dp_place_options' and are checked against `options` */
    const char *const *sweep_params;
    /* The keys of the method's --config JSON (DP_PLACE_OPT_CONFIG): its tables (dp_schema.h, ended
     * by name NULL; several with name "" share the top level), for help texts, the man page and
     * Python's keyword checks; NULL for a method without a config */
    const dp_schema_section *(*config)(void);
    /* The method's config (o->config; o->budget where it replaces the file's budget) read and
     * checked as its placement reads it before it places (the same function fn calls), without a
     * graph: DP_OK, or the placement's error naming the file and the key. NULL for a method
     * without a config. dp_place_check_config calls it. */
    int (*check_config)(const dp_place_options *o, dp_error *err);
} dp_place_method;

/* dp_place_method.sweep_run */
enum {
    DP_PLACE_SWEEP_PLACE = 0,  /* place with dp_place (a learned method: from its checkpoint) */
    DP_PLACE_SWEEP_STAGES = 1, /* DOPPLER: train Stages I and II (dp_train.h), then place */
    DP_PLACE_SWEEP_AGENT = 2   /* a learned baseline (Placeto, GDP): train its agent, then place */
};

/* The best placement the training of DOPPLER checkpoint `checkpoint` sampled (its last stage),
 * when it was sampled on this problem: the checkpoint is of graph g's name, op count and c's
 * device count, AND the placement simulated here by oracle gives the makespan training recorded
 * for it (relative difference at most 1e-9). A graph of the same name and size with other costs,
 * or another machine (bandwidth, topology, transfer model, mode), gives another makespan, and the
 * sample is then not used. *found 1: assignment (g->n_ops) and *makespan (raw unit) filled;
 * *found 0: nothing usable (not an error). Spends one simulation (oracle call) when the name and
 * size match, none otherwise. Errors: dp_h5io_ckpt_read_best_sample's, the oracle's. */
int dp_place_best_sample(const char *checkpoint, const dp_graph *g, const dp_cost *c, const dp_oracle *oracle,
                         int *assignment, double *makespan, int *found, dp_error *err);

/* The table of methods, ended by an entry with name NULL. */
const dp_place_method *dp_place_methods(void);

/* Refuse an option that method `name` would not read (so nobody believes it was used), from the
 * method table's options: every front end (doppler place, a sweep's run, Python's Engine.place)
 * checks through this one function. An option counts as given when it differs from
 * dp_place_options_init's default (device != 0, checkpoint, samples > 0, budget > 0, config,
 * proposals, list_append_only or list_ties, refine_budget > 0). Also refused: refine_budget
 * without refine; refine "improve" without proposals (a missing required checkpoint is the
 * method's own run-time error). DP_OK, DP_EINVAL with a message naming the option, the methods that read it and the
 * method given ("--samples: for --method doppler, placeto, gdp or random; --method cp does not
 * use it", in the command's spelling), or DP_EINVAL for an unknown method. */
int dp_place_check_options(const char *name, const dp_place_options *o, dp_error *err);
/* Read and check the config method `name` would place with (o->config, through the method's
 * check_config), before any graph is read: what a sweep checks of each run before it runs any
 * (experiments/run.c, dp_run_check_config). DP_OK when o is NULL, o->config is NULL or the
 * method reads no config (dp_place_check_options refuses a config such a method is given); else
 * the error the placement would give (an unknown key, a value out of range, a file that cannot
 * be read: DP_EINVAL or DP_EIO naming the file). DP_EINVAL for an unknown method. */
int dp_place_check_config(const char *name, const dp_place_options *o, dp_error *err);
/* The options a method reads as the command spells them ("--checkpoint --samples --budget ..."),
 * for help texts; "" for none beyond the common ones. buf of cap bytes. */
void dp_place_options_text(const dp_place_method *m, char *buf, size_t cap);
/* sizeof(dp_place_method) in this build (for a binding that lays the struct out; python/doppler
 * reads it through dp_place_method_at and the accessors instead). */
size_t dp_place_method_size(void);
/* Reading the method table without laying out dp_place_method (bindings: Python's
 * doppler.methods and config_keys). dp_place_method_at: method i of dp_place_methods() (i from
 * 0), NULL past the end; dp_place_method_get_name, _description, _simulates (0 or 1): its fields;
 * dp_place_method_get_config: its config tables (m->config(), a list of sections ended by name
 * NULL), NULL for a method without a config. */
const dp_place_method *dp_place_method_at(int i);
const char *dp_place_method_get_name(const dp_place_method *m);
const char *dp_place_method_get_description(const dp_place_method *m);
int dp_place_method_get_simulates(const dp_place_method *m);
const dp_schema_section *dp_place_method_get_config(const dp_place_method *m);
/* The method called name, or NULL (also for a NULL name). */
const dp_place_method *dp_place_find(const char *name);

/* Run method `name`, then o->refine if set (annealing or local search started from the method's
 * placement, o->refine_budget simulations with o->oracle, never worse than the start under the
 * oracle). has_priority may be NULL (a refined placement has no priority). Errors: a NULL name
 * (DP_EINVAL), unknown method (DP_EINVAL, listing the known ones; checked before the other
 * arguments, so a caller may ask for the message alone), a NULL graph, cost tables or assignment
 * (DP_EINVAL), a method that simulates or a refinement without
 * o->oracle (DP_EINVAL), or the method's own. */
int dp_place(const char *name, const dp_graph *g, const dp_cost *c, const dp_place_options *o,
             int *assignment, double *priority, int *has_priority, dp_error *err);

/* The search at inference of o->refine ("anneal", "local" or "improve", as dp_place runs it after
 * a method) from the placement start (g->n_ops devices): o->refine_budget simulations (0: 2000)
 * on o->oracle, seed o->seed, proposals o->proposals (a checkpoint) or proposal (n_ops, D)
 * probabilities (NULL: uniform moves); never worse than start under the oracle. Writes the
 * result to assignment (an array other than start). Errors: DP_EINVAL for no or
 * an unknown o->refine, "improve" without o->proposals, no oracle; the search's own. Used by
 * dp_place and by the coarsened placement (dp_coarse.h), which refines an expanded placement. */
int dp_place_refine(const dp_graph *g, const dp_cost *c, const dp_place_options *o, const int *start,
                    const float *proposal, int *assignment, dp_error *err);

/* The methods of the foundation (also reachable through dp_place). */
/* Critical path list scheduling (Kwok and Ahmad 1999; DOPPLER's teacher): repeatedly the ready
 * op of highest b-level (ties: lowest id) goes to the device of earliest estimated start (ties:
 * lowest device). priority = b-level. */
int dp_place_cp(const dp_graph *g, const dp_cost *c, const dp_place_options *o, int *assignment,
                double *priority, int *has_priority, dp_error *err);
/* Uniform random device per op, from a GSL mt19937 generator seeded with o->seed. With
 * o->samples = K > 1, random search: the best of the first K such placements of that generator
 * under o->oracle (K simulations; ties: the earlier one), so the best of K is never worse than the
 * best of fewer with the same seed; the oracle is then required (DP_EINVAL without it). */
int dp_place_random(const dp_graph *g, const dp_cost *c, const dp_place_options *o,
                    int *assignment, double *priority, int *has_priority, dp_error *err);
/* Op v (in topological order position k) goes to device k mod D. */
int dp_place_round_robin(const dp_graph *g, const dp_cost *c, const dp_place_options *o,
                         int *assignment, double *priority, int *has_priority, dp_error *err);
/* Every op on device o->device. */
int dp_place_single(const dp_graph *g, const dp_cost *c, const dp_place_options *o,
                    int *assignment, double *priority, int *has_priority, dp_error *err);

/* DOPPLER (Yao et al. 2026): the trained SEL and PLC policies of checkpoint o->checkpoint
 * (doppler train) place the graph greedily, or, with o->samples K >= 1, the best (simulated) of
 * the greedy placement and K placements sampled from the policies with seed o->seed (1 + K
 * simulations). The networks' parameters fit any graph and device count, so a checkpoint places
 * any graph on any machine (the command notes a machine other than the one it trained on,
 * dp_cli_note_checkpoint_place); o->final_parameters chooses the final ones over the model-selected. */
int dp_place_doppler(const dp_graph *g, const dp_cost *c, const dp_place_options *o, int *assignment,
                     double *priority, int *has_priority, dp_error *err);

/* Placeto and GDP (dp_agent.h; trained by the one trainer, dp_train.h): with o->checkpoint, the
 * policy of that checkpoint places greedily (o->samples K >= 1: the best of the greedy placement
 * and K samples, seed o->seed); without, a policy is first trained for o->budget episodes (0: 200) of Stage II
 * from seed o->seed (config o->config if given, which must be of the same method), then its
 * best-greedy parameters place greedily. A checkpoint of another method is refused. */
int dp_place_placeto(const dp_graph *g, const dp_cost *c, const dp_place_options *o, int *assignment,
                     double *priority, int *has_priority, dp_error *err);
int dp_place_gdp(const dp_graph *g, const dp_cost *c, const dp_place_options *o, int *assignment, double *priority,
                 int *has_priority, dp_error *err);

#ifdef __cplusplus
}
#endif
#endif
