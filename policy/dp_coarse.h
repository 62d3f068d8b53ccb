/* dp_coarse.h: coarsened placement of large graphs (issue 30 item 4): group ops by the graph's
 * structure, place the group graph with any placement method, expand the groups' devices to
 * their ops, refine the expanded placement with a search on the whole graph.
 *
 * Grouping (dp_coarse_groups), two rules:
 *
 * DP_COARSE_PACKED (the default; "packed"): the chains rule below, then two phases on its groups
 * that keep the group graph acyclic by keeping its numbering topological:
 *   1. Merges within the critical path. A group L may join the highest-numbered group M that
 *      feeds it, or the lowest-numbered group m it feeds: every other group feeding L is
 *      numbered below M and every group L feeds above L > M (resp. every group feeding L below
 *      L < m, every group L feeds above m), so the merged group, numbered M (resp. m), keeps
 *      every edge going up. Groups are tried smallest first (ties: lowest number), M before m;
 *      a merge is made when the merged group has at most max_group ops and the longest path
 *      through it stays within the group graph's critical path, by work alone (mean op times,
 *      no transfers; a merged group runs its work in one piece: it starts when all its inputs
 *      are there and its outputs leave when it ends). The levels of the groups it changes are
 *      updated at once (forward and backward, as far as they change), so no later merge uses
 *      slack an earlier one took: the critical path by work stays the chains rule's (to a
 *      relative 1e-12).
 *   2. Sink packing. Groups that feed no other group (a training graph's weight gradients with
 *      their updates: two ops each, 1,888 of the chains rule's 3,226 groups below) and share their
 *      highest-numbered input group are packed next fit, in their order, into groups of at most
 *      max_group ops, numbered after all the others (nothing reads them, so any place after
 *      their inputs is topological). A group with no input group either (an independent
 *      component, e.g. a data-parallel replica) stays alone: it shares no input with another.
 *      A pack starts when its members' last input is there and runs their work in one piece, so
 *      a group joins the open pack only when the pack still ends within the critical path by
 *      work (the same levels as phase 1); otherwise it opens a new pack. Both phases together
 *      therefore keep the chains rule's critical path by work (to a relative 1e-12;
 *      tests/test_coarse.c).
 * On `graph gen llama-layer --layers 8 --tp 8 --training` (9,774 ops) at max_group 16: chains
 * 3,226 groups, phase 1 2,937, phase 2 1,575. What stays small are the reductions of the
 * tensor-parallel shards (every path through them is critical) and 5 to 8-op pieces of a head
 * or a feed-forward block. O((n + edges) log n) for the heap; phase 1's level updates are local
 * in practice (bounded by the groups whose levels change).
 *
 * DP_COARSE_CHAINS ("chains"): linear clusters along the critical path, as the clustering step
 * of DSC-style schedulers (Yang and Gerasoulis 1994) reduce a graph before placing it. Ops are
 * visited in a topological order that prefers high b-level (Kahn's algorithm with a max-heap on
 * (b-level, -id), mean costs: dp_cost_levels). Op v joins the group G of its predecessors when
 *   (a) every predecessor of v is in G, and
 *   (b) G has fewer than max_group ops;
 * otherwise v starts a group. (a) makes every group convex and the group graph acyclic: a group
 * is entered only at its first op (every later member's inputs are inside), so a path leaving a
 * group cannot come back into it. Groups are numbered in the order they were started, which is
 * a topological order of the group graph. The same rule then runs on the group graph reversed
 * (a group joins the group of its successors when they all lie in one group: fan-ins), then
 * forward again, in turn, until two passes in a row merge nothing (DP_COARSE_MAX_PASSES passes
 * at most). Rule (a) cannot merge an op whose inputs lie in two groups: on the tensor-parallel
 * training graphs it stops at about 3 ops per group whatever max_group above 16.
 *
 * Group graph (dp_coarse_graph): one op per group, an edge G -> H when an op of G feeds an op
 * of H, costs on the same devices: a group's time on device d is the sum of its ops' times on d
 * (its ops run one after another there, in the order they were added); an edge's data is the
 * sum of the edge data of the distinct (u, v) pairs it stands for, its transfer latency +
 * data / bandwidth of the original tables (one transfer instead of several: the latencies of
 * the others are dropped). The group graph is DP_GRAPH_COST_TIME with the original's time scale.
 *
 * Placement (dp_coarse_place): the group graph is a problem of its own on the
 * DOPPLER-compatible engine of those cost tables (dp_problem_alloc_with_costs on a machine of
 * the same device count: contention-free transfers, one FIFO slot per device), so a learned
 * method's rollout on it costs the fast path's incremental state (dp_env.h); the method sees the
 * group graph as it sees any graph. Whatever it simulates to choose (a learned method's best of
 * K samples, annealing's moves, random search) is scored by the expanded oracle: the expansion
 * on the caller's machine (dp_coarse_problem_expand_oracle), except the improvement search,
 * which searches the group graph's own engine. Its simulations are counted apart from the
 * refinement's (dp_coarse_report). The expanded placement is then refined on the caller's oracle
 * (the real machine: topology, contention) with o->refine (dp_place_refine: anneal, local or
 * improve) and o->refine_budget simulations, never worse than the expansion under that oracle.
 */
#ifndef DP_COARSE_H
#define DP_COARSE_H

#include "dp_cost.h"
#include "dp_graph.h"
#include "dp_machine.h"
#include "dp_place.h"
#include "dp_problem.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The grouping rules (above). */
typedef enum dp_coarse_rule {
    DP_COARSE_PACKED = 0,    /* chains, then merges within the critical path's slack, then sinks packed */
    DP_COARSE_CHAINS = 1     /* convex chains by rule (a), forward and backward passes */
} dp_coarse_rule;

/* `doppler place --coarsen N` warns when the groups' critical path by work is more than this
 * many times the graph's lower bound by work (dp_coarse_report's group_cp_work / work_bound). */
#define DP_COARSE_WARN_CP 1.1

/* Passes of the chains rule (forward, backward, forward, ...) at most. */
#define DP_COARSE_MAX_PASSES 8

/* What a coarsened placement did, for the command to print. CPU seconds are the process's
 * (clock()), per phase. */
typedef struct dp_coarse_report {
    int n_groups, n_group_edges; /* the group graph's size */
    int largest_group;           /* ops in the largest group */
    long group_simulations;      /* simulations the method spent: of the whole graph through the
                                    expanded oracle (dp_coarse_problem_expand_oracle), and on the
                                    group graph's engine (the improvement search's, the
                                    environment's prefix runs aside) */
    long expanded_simulations;   /* of group_simulations, those through the expanded oracle: the
                                    caller's oracle ran them (its engine counts them too) */
    double group_makespan;       /* the groups' placement's makespan on the group graph's engine
                                    (time units of c): the group graph's estimate of the placement
                                    (one more simulation there, not in group_simulations) */
    double cpu_group_s;          /* grouping and building the group graph and its problem */
    double cpu_place_s;          /* the method on the group graph */
    double cpu_refine_s;         /* expanding and refining (0 without o->refine) */
    double cp_work;              /* the graph's critical path by work: the longest path of least op
                                    times (each op on its fastest device), no transfers (time
                                    units of c) */
    double work_bound;           /* the graph's lower bound by work: max(cp_work, the least op
                                    times summed / compute streams), dp_cost_lower_bound's */
    double group_cp_work;        /* the group graph's critical path by work, a group running its
                                    work in one piece. Above work_bound, the groups and not the
                                    devices bound the makespan: the grouping took parallelism
                                    away (a large max_group chains whole paths: doc/coarsen.md) */
} dp_coarse_report;

/* Group g's ops by rule `rule` (above): group_of (n_ops) receives each op's group,
 * 0..*n_groups-1, numbered in a topological order of the group graph; every group has 1 to
 * max_group ops. The same graph and arguments give the same groups. max_group >= 1 (1: every op
 * its own group). c: g's costs (b-levels and the work of the groups: mean op times).
 * Errors: DP_EINVAL for max_group < 1, an unknown rule or costs not of g; DP_ENOMEM. */
int dp_coarse_groups(const dp_graph *g, const dp_cost *c, dp_coarse_rule rule, int max_group, int *group_of,
                     int *n_groups, dp_error *err);

/* The rule named "packed" or "chains" into *rule: DP_OK, or DP_EINVAL (*rule unchanged). */
int dp_coarse_rule_parse(const char *name, dp_coarse_rule *rule);
/* The rule's name, "packed" or "chains" (dp_coarse_rule_parse's inverse). */
const char *dp_coarse_rule_name(dp_coarse_rule rule);
/* A grouping as the commands spell it, into buf (cap bytes): "--coarsen N", then
 * " --coarsen-rule chains" for the chains rule (packed is the default), or "no --coarsen" for
 * max_group 0. Returns buf. */
const char *dp_coarse_options_text(int max_group, dp_coarse_rule rule, char *buf, size_t cap);

/* The group graph of a grouping (group_of from dp_coarse_groups, or any grouping whose groups
 * are numbered in a topological order of an acyclic group graph: DP_EINVAL naming the edge
 * otherwise) and its cost tables on c's devices (rules above). *gg and *gc are the caller's to
 * free (dp_graph_free, dp_cost_free). Group k is named after its first op ("NAME+M" when it has
 * M more), kind "group". Errors: DP_EINVAL, DP_ENOMEM; nothing is returned on error. */
int dp_coarse_graph(const dp_graph *g, const dp_cost *c, const int *group_of, int n_groups, dp_graph **gg,
                    dp_cost **gc, dp_error *err);

/* assignment[v] = group_assignment[group_of[v]] for the n_ops ops. */
void dp_coarse_expand(int n_ops, const int *group_of, const int *group_assignment, int *assignment);

/* A coarsened problem, as dp_coarse_place places it and `doppler train --coarsen N` trains on it:
 * g's grouping (dp_coarse_groups), the group graph with its cost tables (dp_coarse_graph), and
 * the group graph's problem (dp_problem.h) on the DOPPLER-compatible engine of c->n_devices
 * uniform devices with those tables (contention-free transfers, one FIFO slot per device,
 * whatever g's machine). Everything is owned by the struct; the problem borrows its machine
 * member, so the struct must not be moved or copied while the problem is in use. */
typedef struct dp_coarse_problem {
    int n_ops;            /* g's ops */
    int n_groups;         /* the group graph's ops */
    int *group_of;        /* (n_ops) each op's group, 0..n_groups-1 */
    dp_graph *graph;      /* the group graph (op k: group k) */
    dp_cost *costs;       /* its cost tables, on c's devices, c's time units */
    dp_machine machine;   /* "devices D": the problem's machine */
    dp_problem *problem;  /* graph on machine with costs */
    dp_oracle expanded;   /* dp_coarse_problem_expand_oracle: scores a group assignment on g */
    dp_oracle inner;      /* the oracle of g the expanded one scores with (copied) */
    int *scratch;         /* (n_ops) the expanded assignment */
    long expanded_calls;  /* calls of the expanded oracle (each one simulation of g) */
} dp_coarse_problem;

/* Group g (costs c: levels, and the group graph's tables) by rule `rule` into groups of at most
 * max_group ops and build the coarsened problem into *cp. The same arguments give the same
 * problem. Errors: dp_coarse_groups', dp_coarse_graph's, the machine's and problem's, DP_ENOMEM;
 * on error *cp holds nothing (dp_coarse_problem_free on it is a no-op). */
int dp_coarse_problem_init(dp_coarse_problem *cp, const dp_graph *g, const dp_cost *c, dp_coarse_rule rule,
                           int max_group, dp_error *err);

/* Make cp->expanded an oracle of the group graph that scores a group assignment (n_groups
 * device ids) by the makespan of its expansion (dp_coarse_expand) under `inner`, an oracle of g
 * (g's machine: topology, contention; copied, its ctx must outlive cp): what a coarsened
 * placement is judged by, so a policy trained on the group graph is rewarded for the placement
 * `doppler place --coarsen N` gives, not for the group graph's own makespan (a proxy: a group runs
 * as one piece there and its outputs leave when it ends, where the expanded ops overlap; on 28
 * validation graphs its ranking of two placements often disagreed with the expansion's). It has
 * no engine (its costs are no engine's own, so a search simulates through cost and
 * cost_bounded, inner's expanded); its state_engine is the group graph's (cp->problem->engine),
 * whose partial-simulation state the environment's engine state reads as its estimate. One call
 * at a time (one scratch buffer); cp->expanded_calls counts the calls. DP_OK, or DP_EINVAL for a
 * NULL inner. */
int dp_coarse_problem_expand_oracle(dp_coarse_problem *cp, const dp_oracle *inner, dp_error *err);

/* Free what *cp holds and zero it. NULL is a no-op. */
void dp_coarse_problem_free(dp_coarse_problem *cp);

/* Place g by method `method` (dp_place's names) on its groups of at most max_group ops (rule
 * `rule`), expand,
 * and refine with o->refine when set (above). o as dp_place's: the method's options (seed,
 * checkpoint, samples, budget, config, ...) apply to the group graph, except the oracle and
 * machine, which are the group problem's; o->oracle (required when o->refine is set) scores the
 * refinement on g. rep may be NULL. Errors: dp_place's on the group graph, dp_place_refine's,
 * the grouping's, DP_ENOMEM; assignment is written only on success. */
int dp_coarse_place(const char *method, const dp_graph *g, const dp_cost *c, const dp_place_options *o,
                    dp_coarse_rule rule, int max_group, int *assignment, dp_coarse_report *rep, dp_error *err);

#ifdef __cplusplus
}
#endif
#endif
