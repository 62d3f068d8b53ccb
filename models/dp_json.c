#include "dp_json.h"
#include "dp_file.h"

#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <math.h>
#include <sys/stat.h>

int dp_json_dump_atomic(json_t *value, const char *path, size_t flags, dp_error *err)
{
    char tmp[4200];
    FILE *f = dp_file_atomic_open(path, tmp, sizeof tmp, err);
    if (!f) return err ? err->code : DP_EIO;
    if (json_dumpf(value, f, flags) != 0 || fputc('\n', f) == EOF) {
        dp_file_atomic_abort(f, tmp);
        return dp_error_set(err, DP_EIO, "%s: write failed", path);
    }
    return dp_file_atomic_commit(f, tmp, path, err);
}

json_t *dp_json_number(double x)
{
    return isfinite(x) ? json_real(x) : json_null();
}

double dp_json_parse_bytes(const char *text, size_t size)
{
    size_t obj = 0, arr = 0;
    for (size_t i = 0; i < size; i++) {
        obj += text[i] == '{';
        arr += text[i] == '[';
    }
    return (double)size * DP_JSON_BYTES_PER_BYTE + (double)obj * DP_JSON_BYTES_PER_OBJECT +
           (double)arr * DP_JSON_BYTES_PER_ARRAY;
}

char *dp_json_read_text(const char *path, size_t *size, dp_error *err)
{
    char *text = dp_file_read_text(path, size, err);
    if (text && dp_file_mem_check(path, "parsing this JSON file", dp_json_parse_bytes(text, *size), err) != DP_OK) {
        free(text);
        return NULL;
    }
    return text;
}

json_t *dp_json_load(const char *path, dp_error *err)
{
    /* Jansson keeps every value as a node: a graph file takes about 30 bytes of memory per byte
     * of text (10^6 ops: 40 MB of JSON, 1.2 GiB parsed). Refuse what cannot fit before parsing. */
    struct stat st;
    if (stat(path, &st) != 0) {
        dp_error_set(err, DP_EIO, "%s: %s", path, strerror(errno));
        return NULL;
    }
    if (S_ISDIR(st.st_mode)) {
        dp_error_set(err, DP_EIO, "%s: is a directory, not a JSON file", path);
        return NULL;
    }
    size_t size;
    char *text = dp_json_read_text(path, &size, err);
    if (!text) return NULL;
    json_error_t jerr;
    json_t *root = json_loadb(text, size, JSON_REJECT_DUPLICATES, &jerr);
    free(text);
    if (!root) dp_error_set(err, DP_EINVAL, "%s:%d:%d: %s", path, jerr.line, jerr.column, jerr.text);
    return root;
}

json_t *dp_json_loads_text(const char *text, const char *what, dp_error *err)
{
    json_error_t je;
    json_t *o = json_loads(text ? text : "", 0, &je);
    if (!o) dp_error_set(err, DP_EINVAL, "%s: line %d: %s", what, je.line, je.text);
    return o;
}
