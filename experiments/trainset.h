/* trainset.h: the graphs `doppler train` trains and model-selects on (issue 16): --graph,
 * --graphs, --family and --validation, each graph with its costs and engine on a machine of its
 * own drawn from --bandwidth-range, --comm-ratio-range, --speed-range and --devices-range; the
 * test set (testset.h) refused. Both trainers (DOPPLER's, Placeto's and GDP's dp_train, and the
 * improvement method's dp_improve_train) assemble their graphs here. */
#ifndef DP_TRAINSET_H
#define DP_TRAINSET_H

#include "dp_coarse.h"
#include "dp_error.h"
#include "dp_graph.h"
#include "dp_problem.h"
#include "testset.h"

/* The per-graph machines of --bandwidth-range, --comm-ratio-range and --speed-range: [lo, hi]
 * each, 0 0 for none */
typedef struct dp_trainset_draws {
    double bw[2], cr[2], sp[2];
    int dv[2];           /* --devices-range: device counts [lo, hi], 0 0 for none */
} dp_trainset_draws;

/* The graphs of a run beyond --graph: sources (files or generator specs), loaded with their costs
 * and engines on the run's machine. */
typedef struct dp_trainset {
    int n, cap;
    int given_end;       /* the graphs before it were given (--graph, --graphs, --validation),
                            or drawn for training; the validation graphs from it on were drawn */
    char **src;          /* file path or "gen:..." spec */
    int *validation;
    dp_graph **g;
    dp_problem **p;      /* each graph on its machine (owned) */
    dp_cost **own;       /* --speed-range: each graph's drawn cost tables (owned; p[i] reads them) */
    const dp_cost **c;   /* views of p: p[i]->costs, p[i]->engine (dp_improve_train's arrays) */
    dp_engine **e;
    dp_trainset_draws draws; /* the ranges each graph's machine is drawn in */
    double *bw;          /* (n) each graph's link bandwidth, bytes/s, or NULL: the machine's */
    double *cr;          /* (n) each graph's comm_ratio (dp_machine.h; 0: a graph of the bandwidth
                            draws when both ranges are given), or NULL: the machine's */
    unsigned long sp_seed;  /* --speed-range: graph i's device speeds come from a generator seeded
                             * with sp_seed + i */
    int *dv;             /* (n) --devices-range: each graph's device count, or NULL: the machine's */
    int coarsen;         /* --coarsen N: set before dp_trainset_load to train on every graph's group
                            graph (groups of at most N ops; 0: the graphs themselves) */
    dp_coarse_rule coarsen_rule; /* --coarsen-rule: the grouping rule (dp_coarse.h) */
    dp_coarse_problem **coarse;  /* (n) with coarsen: graph i's coarsened problem (owned); g[i],
                                    p[i], c[i] and e[i] are then its group graph, problem, costs and
                                    engine, orig[i] and orig_p[i] the graph itself and its
                                    problem on its machine (own[i] its drawn costs), and
                                    dp_trainset_oracle the expanded oracle that scores on it */
    dp_graph **orig;     /* (n) with coarsen: each graph before grouping (owned) */
    dp_problem **orig_p; /* (n) with coarsen: each graph's problem before grouping (owned) */
    uint64_t *drawn_hash; /* the content hashes of the graphs --family drew so far, training and
                           * validation (dp_graph_content_hash): a draw equal to one is drawn
                           * again, as a test graph is */
    int n_drawn, drawn_cap;
} dp_trainset;

/* The training and validation graphs of --graph, --graphs, --family (drawn with family_seed) and
 * --validation, or *val_count (< 0: four from --family unless --validation) drawn from --family,
 * into gs; the test set into test. Refused when no training graph is given. Both trainers
 * (DOPPLER's and the improvement method's) assemble their graphs here. */
int dp_trainset_assemble(dp_trainset *gs, dp_testset *test, const char *graph, const char *graphs, const char *family,
                         int family_count, unsigned long family_seed, const char *validation, int *val_count,
                         dp_error *err);
/* Read or generate every graph of the set, with its costs and engine on machine m; with
 * s->coarsen > 0, each graph is then replaced by its group graph as `doppler place --coarsen N`
 * builds it (dp_coarse_problem_init on the graph's costs on its own drawn machine: the group
 * graph is on the DOPPLER-compatible engine of that many uniform devices). refuse_test:
 * a test graph (in test[0..nt), or a DOPPLER graph file) is an error; 0 when the set is one --graph
 * alone, trained on as its own placement search (fine-tuning on the graph to be placed), as
 * DOPPLER's per-graph training is. */
int dp_trainset_load(dp_trainset *s, const char *format, dp_machine *m, const dp_testset *test, int refuse_test,
                     dp_error *err);
/* The problem of graph i of the set (g: its graph, or the one the trainer runs) on its own drawn
 * machine: m with --bandwidth-range's link bandwidth or --comm-ratio-range's comm_ratio (they only
 * enter the costs of graphs in FLOPs and bytes, read once by dp_problem_alloc), and --speed-range's
 * device speeds (any graph: the cost tables are drawn first, the engine built on them, and *own
 * holds them for the caller to free after the problem); else on m as it is (*own NULL). NULL with
 * err set on failure. */
dp_problem *dp_trainset_problem(const dp_trainset *s, int i, dp_machine *m, const dp_graph *g, dp_cost **own,
                                dp_error *err);
/* The oracle graph i is scored by: its problem's, or with coarsen the expanded oracle of its group
 * graph (dp_coarse_problem_expand_oracle: a group assignment scored by its expansion's makespan
 * on the graph's own machine, what `doppler place --coarsen N` reports). Valid while s is. */
const dp_oracle *dp_trainset_oracle(const dp_trainset *s, int i);
/* "  (links B bytes/s)" for a graph of --bandwidth-range in FLOPs and bytes, "  (comm R x time)"
 * for one of --comm-ratio-range, else "" (a static buffer: one call per printf) */
const char *dp_trainset_note(const dp_trainset *s, int i);
/* Free everything the set holds (graphs, problems, drawn costs) and zero it. */
void dp_trainset_free(dp_trainset *s);

#endif
