/* testset.h: the test graphs `doppler train` refuses to train or model-select on (issue 16). */
#ifndef DP_TESTSET_H
#define DP_TESTSET_H

#include <stdint.h>

#include "dp_error.h"
#include "dp_graph.h"

/* The test graphs, never trained or model-selected on: the generator specs of
 * data/testsets/transfer.txt, and the content hashes (dp_graph_content_hash) of those graphs and
 * of the DOPPLER graph files (data/testsets/doppler-graphs.txt), so that a test graph renamed,
 * copied or converted to another format is known too. */
typedef struct dp_testset {
    int n_spec, n_hash;
    char **spec;
    uint64_t *hash;
    char **what;       /* per hash: the spec, or "NAME of the DOPPLER graph files" */
} dp_testset;

/* Read both files of the test set (data/testsets/transfer.txt and doppler-graphs.txt, found as
 * dp_cli_data_path finds data) into t and generate the generator specs' graphs for their content
 * hashes. Errors: DP_EIO naming the file that cannot be read (the guard needs both), DP_EINVAL
 * naming the file and line of a bad line or spec, DP_ENOMEM; t is then empty. */
int dp_testset_load(dp_testset *t, dp_error *err);
void dp_testset_free(dp_testset *t);
/* The test graph whose structure and costs g has (what the set calls it), or NULL. */
const char *dp_testset_match(const dp_testset *t, const dp_graph *g);
/* 1 when path names one of the DOPPLER graph files (test graphs by name, also as gdp_ copies). */
int dp_testset_is_doppler_file(const char *path);

#endif
