#include "dp_oracle.h"

int dp_oracle_sim_cost(void *ctx, const int *assignment, double *makespan, dp_error *err)
{
    dp_sim_result res;
    int rc = dp_sim_run((dp_sim *)ctx, assignment, &res, err);
    if (rc == DP_OK) *makespan = res.makespan;
    return rc;
}
