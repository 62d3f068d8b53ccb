/* testset.c: the test graphs training refuses (see testset.h). */
#include "testset.h"
#include "dp_alloc.h"
#include "cli.h"
#include "dp_gen.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void dp_testset_free(dp_testset *t)
{
    for (int i = 0; i < t->n_spec; i++) free(t->spec[i]);
    for (int i = 0; i < t->n_hash; i++) free(t->what[i]);
    free(t->spec); free(t->hash); free(t->what);
    memset(t, 0, sizeof *t);
}

static int testset_add_hash(dp_testset *t, uint64_t h, const char *what, dp_error *err)
{
    uint64_t *x = dp_alloc_realloc(t->hash, (size_t)(t->n_hash + 1) * sizeof *x);
    if (x) t->hash = x;
    char **w = dp_alloc_realloc(t->what, (size_t)(t->n_hash + 1) * sizeof *w);
    if (w) t->what = w;
    if (!x || !w || !(t->what[t->n_hash] = dp_alloc_strdup(what))) return dp_error_set(err, DP_ENOMEM, "out of memory");
    t->hash[t->n_hash++] = h;
    return DP_OK;
}

/* Read both files (an error naming the file when one cannot be read: the guard needs them) and
 * generate the test set's graphs for their hashes. */
int dp_testset_load(dp_testset *t, dp_error *err)
{
    memset(t, 0, sizeof *t);
    const char *paths[2] = {"data/testsets/transfer.txt", "data/testsets/doppler-graphs.txt"};
    int rc = DP_OK;
    for (int k = 0; k < 2 && rc == DP_OK; k++) {
        const char *path = dp_cli_data_path(paths[k]);
        FILE *f = fopen(path, "r");
        if (!f) {
            const char *env = getenv("DOPPLER_DATA");
            rc = dp_error_set(err, DP_EIO, "%s: cannot read the test set, whose graphs training refuses (looked in ./data, %s%s%s"
                              "the installed %s; set DOPPLER_DATA to the project's data folder): %s", paths[k],
                              env ? "$DOPPLER_DATA = " : "", env ? env : "", env ? ", " : "", DP_DATADIR, strerror(errno));
            break;
        }
        char line[1200];
        int lineno = 0;
        while (rc == DP_OK && fgets(line, sizeof line, f)) {
            lineno++;
            line[strcspn(line, "\r\n")] = '\0';
            if (!line[0] || line[0] == '#') continue;
            if (k == 0) {
                if (strncmp(line, "gen:", 4) != 0) continue;
                char **x = dp_alloc_realloc(t->spec, (size_t)(t->n_spec + 1) * sizeof *x);
                if (!x) { rc = dp_error_set(err, DP_ENOMEM, "out of memory"); break; }
                t->spec = x;
                if (!(t->spec[t->n_spec] = dp_alloc_strdup(line))) { rc = dp_error_set(err, DP_ENOMEM, "out of memory"); break; }
                t->n_spec++;
                dp_graph *g = dp_gen_spec(line, err);
                if (!g) { dp_error_prefix(err, "%s:%d", path, lineno); rc = err->code ? err->code : DP_EINVAL; break; }
                rc = testset_add_hash(t, dp_graph_content_hash(g), line, err);
                dp_graph_free(g);
            } else {
                char name[1024], what[1100];
                unsigned long long h;
                if (sscanf(line, "%16llx %1023s", &h, name) != 2) {
                    rc = dp_error_set(err, DP_EINVAL, "%s:%d: expected \"HASH NAME\", got \"%s\"", path, lineno, line);
                    break;
                }
                snprintf(what, sizeof what, "%s of the DOPPLER graph files", name);
                rc = testset_add_hash(t, (uint64_t)h, what, err);
            }
        }
        fclose(f);
    }
    if (rc != DP_OK) dp_testset_free(t);
    return rc;
}

/* The test graph whose structure and costs g has, or NULL. */
const char *dp_testset_match(const dp_testset *t, const dp_graph *g)
{
    const uint64_t h = dp_graph_content_hash(g);
    for (int i = 0; i < t->n_hash; i++)
        if (t->hash[i] == h) return t->what[i];
    return NULL;
}

/* The DOPPLER graph files (../shared/data/doppler-graphs) are test graphs only: by name, beside
 * the content hashes of dp_testset (an edited copy of one keeps its name). */
int dp_testset_is_doppler_file(const char *path)
{
    static const char *const base[] = {"chain_mm_112nodes", "ffnn_192nodes", "transformer_block_215nodes",
                                       "full_transformer_layer_261nodes", "8gpu_transformer_block", "8gpu_full_transformer"};
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    if (strncmp(b, "gdp_", 4) == 0) b += 4;
    for (size_t i = 0; i < sizeof base / sizeof base[0]; i++)
        if (strncmp(b, base[i], strlen(base[i])) == 0) return 1;
    return 0;
}

