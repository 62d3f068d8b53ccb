#include "dp_json.h"
#include "dp_file.h"

#include <string.h>

int dp_json_dump_atomic(json_t *value, const char *path, size_t flags, dp_error *err)
{
    char tmp[4096];
    FILE *f = dp_atomic_open(path, tmp, sizeof tmp, err);
    if (!f) return err ? err->code : DP_EIO;
    if (json_dumpf(value, f, flags) != 0 || fputc('\n', f) == EOF) {
        dp_atomic_abort(f, tmp);
        return dp_error_set(err, DP_EIO, "%s: write failed", path);
    }
    return dp_atomic_commit(f, tmp, path, err);
}

json_t *dp_json_load(const char *path, dp_error *err)
{
    json_error_t jerr;
    json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
    if (!root) {
        if (jerr.line < 0 || strstr(jerr.text, "unable to open"))
            dp_error_set(err, DP_EIO, "%s: %s", path, jerr.text);
        else
            dp_error_set(err, DP_EINVAL, "%s:%d:%d: %s", path, jerr.line, jerr.column, jerr.text);
    }
    return root;
}
