/* libFuzzer harness: loading HDF5 checkpoints and trajectories (policy/dp_h5io.h) the way a
 * resumed training run does: dp_h5io_ckpt_read_config, dp_train_resume (every parameter tensor,
 * Adam state, RNG state, counters, best assignment) and dp_h5io_traj_count, on mutated files.
 *
 * Seeds: with DP_FUZZ_WRITE_SEEDS=DIR in the environment (fuzz/run-fuzz.sh sets it) the harness
 * first trains 4 episodes of a small network on a 12-op graph and leaves the checkpoint and the
 * trajectory in DIR. A crash inside libhdf5 itself on a corrupt container is an HDF5 bug, to
 * be reported upstream (run-fuzz.sh runs this harness with allocator_may_return_null=1, as a
 * normal malloc returns NULL for the absurd sizes a corrupt header gives HDF5); what doppler
 * must do is check everything it reads (shapes, counts, ranges), fail with a message, and close
 * every HDF5 object it opened. */
#include "fuzz_common.h"
#include "dp_engine.h"
#include "dp_h5io.h"
#include "dp_train.h"

#include <hdf5.h>
#include <sys/stat.h>

static dp_graph *g;
static dp_cost *c;
static dp_engine *engine;
static dp_oracle oracle;
static dp_train_config cfg;

static dp_graph *layered_graph(void)
{
    dp_graph_builder *b = dp_graph_builder_alloc("fz", "fz", DP_GRAPH_COST_TIME);
    for (int i = 0; i < 12; i++) dp_graph_builder_add_op(b, NULL, NULL, 1 + i % 4, 1 + i % 3);
    for (int i = 0; i < 12; i++)
        for (int j = i + 1; j < 12 && j <= i + 4; j++)
            if ((i + j) % 3 != 0) dp_graph_builder_add_edge(b, i, j, 1 + (i * j) % 3);
    dp_graph *h = dp_graph_builder_finish(b, NULL);
    dp_graph_builder_free(b);
    return h;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc; (void)argv;
    g = layered_graph();
    c = dp_cost_graph(g, 3, NULL);
    dp_error e0;
    engine = dp_engine_alloc(g, c, NULL, &e0);
    FUZZ_CHECK(engine != NULL);
    oracle = dp_engine_oracle(engine);
    dp_train_config_default(&cfg);
    cfg.arch.hidden = 4;
    cfg.arch.mlp_hidden = 4;
    cfg.arch.edge_hidden = 4;
    cfg.arch.steps = 1;
    cfg.checkpoint_every = 2;
    cfg.stage[DP_TRAIN_STAGE_IL].episodes = 4;
    const char *dir = getenv("DP_FUZZ_WRITE_SEEDS");
    if (dir && *dir) {
        char ck[1024], tj[1024];
        snprintf(ck, sizeof ck, "%s/checkpoint.h5", dir);
        snprintf(tj, sizeof tj, "%s/trajectory.h5", dir);
        dp_error err;
        dp_train *tr = dp_train_alloc(g, c, &cfg, &oracle, &err);
        FUZZ_CHECK(tr != NULL);
        dp_train_io io = {.trajectory = tj, .checkpoint = ck};
        if (dp_train_run(tr, DP_TRAIN_STAGE_IL, 0, &io, &err) != DP_OK) fprintf(stderr, "seed run: %s\n", err.msg);
        dp_train_free(tr);
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_real_file(data, size);
    dp_error err;
    dp_error_clear(&err);
    char *json = NULL;
    if (dp_h5io_ckpt_read_config(path, &json, &err) == DP_OK) {
        FUZZ_CHECK(json != NULL);
        free(json);
    }
    dp_train *tr = dp_train_alloc(g, c, &cfg, &oracle, &err);
    FUZZ_CHECK(tr != NULL);
    if (dp_train_resume(tr, path, NULL, &err) == DP_OK) {
        FUZZ_CHECK(dp_train_episode(tr) >= 0);
        int st = dp_train_current_stage(tr);
        FUZZ_CHECK(st >= 0 && st < DP_TRAIN_N_STAGES);
    } else {
        FUZZ_CHECK(err.msg[0] != '\0');
    }
    dp_train_free(tr);
    long ne = -1, ns = -1;
    if (dp_h5io_traj_count(path, &ne, &ns, &err) == DP_OK) FUZZ_CHECK(ne >= 0 && ns >= 0);
    /* every HDF5 object opened on the way, error paths included, is closed again */
    ssize_t open_objects = H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL);
    if (open_objects != 0) fprintf(stderr, "%zd HDF5 objects left open\n", open_objects);
    FUZZ_CHECK(open_objects == 0);
    return 0;
}
