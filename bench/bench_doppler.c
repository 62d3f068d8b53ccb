/* bench_doppler: seconds per DOPPLER episode, inference and training separately, on each of
 * DOPPLER's graphs, beside the authors' figures (Yao et al. 2026, per-episode cost table; their
 * machine and PyTorch/DGL code). "train ms" is one parameter update per episode (the authors'
 * batch 1); "B=8 ms" the time per episode when 8 episodes share one update, so one forward and one
 * backward of the message-passing networks serve 8 rollouts. Each is given as wall-clock and as
 * CPU milliseconds (the two differ when other processes share the core).
 * Usage: bench_doppler [GRAPH_DIR [REPS [CONFIG.json]]].
 * One BLAS thread. Build: make bench. */
#include "dp_engine.h"
#include "dp_train.h"

#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>


int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "../shared/data/doppler-graphs";
    int reps = argc > 2 ? atoi(argv[2]) : 20;
    const char *cfgpath = argc > 3 ? argv[3] : NULL;
    static const struct { const char *name, *file; int devices; double infer, train; } G[] = {
        {"ChainMM", "chain_mm_112nodes.txt", 4, 1.18, 1.84},
        {"FFNN", "ffnn_192nodes.txt", 4, 2.87, 4.25},
        {"Llama-block", "transformer_block_215nodes.txt", 4, 2.46, 3.65},
        {"Llama-layer", "full_transformer_layer_261nodes.txt", 4, 3.29, 4.95},
        {"8-GPU block", "8gpu_transformer_block.txt", 8, 4.63, 7.24},
        {"8-GPU layer", "8gpu_full_transformer.txt", 8, 5.53, 9.01},
    };
    openblas_set_num_threads(1);
    dp_train_config cfg;
    dp_train_config_default(&cfg);
    dp_error err;
    if (cfgpath && dp_train_config_load(&cfg, cfgpath, &err) != DP_OK) {
        fprintf(stderr, "bench_doppler: %s\n", err.msg);
        return 1;
    }
    printf("network: hidden %d, mlp_hidden %d, steps %d, edge_hidden %d; %d repetitions; one core\n", cfg.arch.hidden,
           cfg.arch.mlp_hidden, cfg.arch.steps, cfg.arch.edge_hidden, reps);
    printf("%-12s %5s %4s | %15s %15s %15s | %12s %12s\n", "graph", "ops", "dev", "infer ms", "train ms",
           "B=8 train ms", "authors inf s", "authors tr s");
    printf("%-12s %5s %4s | %15s %15s %15s |\n", "", "", "", "wall / cpu", "wall / cpu", "wall / cpu");
    for (size_t i = 0; i < sizeof G / sizeof G[0]; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, G[i].file);
        dp_graph *g = dp_graph_read(path, NULL, &err);
        if (!g) {
            fprintf(stderr, "bench_doppler: %s\n", err.msg);
            return 77;
        }
        dp_cost *c = dp_cost_graph(g, G[i].devices, &err);
        dp_engine *eng = c ? dp_engine_alloc(g, c, NULL, &err) : NULL;
        const dp_oracle oracle = eng ? dp_engine_oracle(eng) : (dp_oracle){0};
        dp_train *tr = eng ? dp_train_alloc(g, c, &cfg, &oracle, &err) : NULL;
        double w0[2], c0[2], w1[2], c1[2], w8[2], c8[2];
        int ok = tr && dp_train_bench_batch(tr, 2, 1, w0, c0, &err) == DP_OK; /* warm-up */
        ok = ok && dp_train_bench_batch(tr, reps, 1, w1, c1, &err) == DP_OK;
        ok = ok && dp_train_bench_batch(tr, reps < 32 ? 32 : reps, 8, w8, c8, &err) == DP_OK;
        if (!ok) {
            fprintf(stderr, "bench_doppler: %s\n", err.msg);
            return 1;
        }
        printf("%-12s %5d %4d | %7.2f / %5.2f %7.2f / %5.2f %7.2f / %5.2f | %12.2f %12.2f\n", G[i].name, g->n_ops, G[i].devices,
               1e3 * w1[0], 1e3 * c1[0], 1e3 * w1[1], 1e3 * c1[1], 1e3 * w8[1], 1e3 * c8[1], G[i].infer, G[i].train);
        fflush(stdout);
        dp_train_free(tr);
        dp_cost_free(c);
        dp_graph_free(g);
    }
    return 0;
}
