/* dp_problem.c: a graph on a machine, its cost tables and its engine (see dp_problem.h). */
#include "dp_problem.h"
#include "dp_alloc.h"

#include <stdlib.h>

/* c: the graph's own cost tables (borrowed), or NULL for the machine's */
static dp_problem *assemble(const dp_graph *g, const dp_cost *c, dp_machine *m, dp_error *err)
{
    if (!g || !m) {
        dp_error_set(err, DP_EINVAL, "problem: a graph and a machine are required");
        return NULL;
    }
    dp_problem *p = dp_alloc_calloc(1, sizeof *p);
    if (!p) {
        dp_error_set(err, DP_ENOMEM, "out of memory");
        return NULL;
    }
    p->graph = g;
    p->machine = m;
    p->costs = c;
    if (dp_machine_load(m, err) != DP_OK || (!c && !(p->costs = p->owned_costs = dp_machine_costs(m, g, err))) ||
        !(p->engine = dp_engine_alloc(g, p->costs, m, err))) {
        dp_problem_free(p);
        return NULL;
    }
    p->oracle = dp_engine_oracle(p->engine);
    return p;
}

dp_problem *dp_problem_alloc(const dp_graph *g, dp_machine *m, dp_error *err)
{
    return assemble(g, NULL, m, err);
}

dp_problem *dp_problem_alloc_with_costs(const dp_graph *g, const dp_cost *c, dp_machine *m, dp_error *err)
{
    if (!c) {
        dp_error_set(err, DP_EINVAL, "problem: no cost tables");
        return NULL;
    }
    return assemble(g, c, m, err);
}

void dp_problem_free(dp_problem *p)
{
    if (!p) return;
    dp_engine_free(p->engine);
    dp_cost_free(p->owned_costs);
    free(p);
}

const dp_cost *dp_problem_costs(const dp_problem *p)
{
    return p->costs;
}

dp_engine *dp_problem_engine(const dp_problem *p)
{
    return p->engine;
}

const dp_oracle *dp_problem_oracle(const dp_problem *p)
{
    return &p->oracle;
}
