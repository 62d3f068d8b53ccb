/* libFuzzer harness: the native JSON graph reader (dp_graph_read_json), and its agreement with
 * the reader of Jansson's tree of the same text (dp_json_load + dp_json_to_graph): the file reader
 * scans the document and reads plain ops and edges without Jansson (models/dp_json.h
 * dp_json_doc), so both must accept the same inputs, give the same graph and the same message. */
#include "fuzz_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *dump(const dp_graph *g)
{
    json_t *j = dp_json_from_graph(g);
    char *s = j ? json_dumps(j, JSON_SORT_KEYS | JSON_REAL_PRECISION(17)) : NULL;
    json_decref(j);
    return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size);
    dp_error err, terr;
    dp_error_clear(&err);
    dp_error_clear(&terr);
    dp_graph *g = dp_graph_read_json(path, &err);
    json_t *root = dp_json_load(path, &terr);
    dp_graph *t = root ? dp_json_to_graph(root, path, &terr) : NULL;
    json_decref(root);
    if (!g != !t) {
        fprintf(stderr, "the file reader %s, the tree's %s: %s / %s\n", g ? "accepted" : "refused",
                t ? "accepted" : "refused", g ? "" : err.msg, t ? "" : terr.msg);
        abort();
    }
    if (!g) {
        if (err.code != terr.code || strcmp(err.msg, terr.msg) != 0) {
            fprintf(stderr, "different messages: %s / %s\n", err.msg, terr.msg);
            abort();
        }
        fuzz_check_error(&err, path);
        return 0;
    }
    char *a = dump(g), *b = dump(t);
    if (a && b && strcmp(a, b) != 0) {
        fprintf(stderr, "different graphs:\n%s\n%s\n", a, b);
        abort();
    }
    free(a);
    free(b);
    dp_graph_free(t);
    fuzz_check_accepted_graph(g);
    dp_graph_free(g);
    return 0;
}
