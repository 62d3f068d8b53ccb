/* libFuzzer harness: the sweep config reader (dp_sweep_load, experiments/sweep.h). An accepted
 * config expands to at most DP_SWEEP_MAX_RUNS runs with distinct keys, each key the hash of its
 * run's canonical parameters. */
#include "fuzz_common.h"
#include "sweep.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size);
    dp_error err;
    dp_error_clear(&err);
    dp_sweep *s = dp_sweep_load(path, &err);
    if (!s) {
        fuzz_check_error(&err, path);
        return 0;
    }
    FUZZ_CHECK(s->n_runs >= 0 && s->n_runs <= DP_SWEEP_MAX_RUNS);
    for (long i = 0; i < s->n_runs; i++) {
        const dp_sweep_run *r = &s->runs[i];
        FUZZ_CHECK(r->index >= i && strlen(r->key) == DP_SWEEP_KEY_LEN);
        char *canon = dp_sweep_canonical(r->params);
        FUZZ_CHECK(canon != NULL && strcmp(canon, r->params_text) == 0);
        free(canon);
        char key[DP_SWEEP_KEY_LEN + 1];
        dp_sweep_key(r->params, key);
        FUZZ_CHECK(strcmp(key, r->key) == 0);
        if (i > 0 && s->n_runs < 2000)
            for (long j = 0; j < i; j++) FUZZ_CHECK(strcmp(s->runs[j].key, r->key) != 0 || strcmp(s->runs[j].params_text, r->params_text) != 0);
    }
    dp_sweep_free(s);
    return 0;
}
