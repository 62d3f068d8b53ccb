#include "dp_file.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *dp_read_file(const char *path, size_t *size, dp_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        dp_error_set(err, DP_EIO, "%s: %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(f);
        dp_error_set(err, DP_EIO, "%s: is a directory", path);
        return NULL;
    }
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    if (!buf) { fclose(f); dp_error_set(err, DP_ENOMEM, "%s: out of memory", path); return NULL; }
    for (;;) {
        if (len + 1 >= cap) {
            if (cap >= DP_FILE_MAX_BYTES) {
                free(buf); fclose(f);
                dp_error_set(err, DP_ENOMEM, "%s: file larger than %zu bytes", path, (size_t)DP_FILE_MAX_BYTES);
                return NULL;
            }
            cap *= 2;
            char *nb = realloc(buf, cap);
            if (!nb) { free(buf); fclose(f); dp_error_set(err, DP_ENOMEM, "%s: out of memory", path); return NULL; }
            buf = nb;
        }
        size_t r = fread(buf + len, 1, cap - len - 1, f);
        len += r;
        if (r == 0) break;
    }
    if (ferror(f)) {
        free(buf); fclose(f);
        dp_error_set(err, DP_EIO, "%s: read error", path);
        return NULL;
    }
    fclose(f);
    buf[len] = '\0';
    if (size) *size = len;
    return buf;
}

const char *dp_path_stem(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

FILE *dp_atomic_open(const char *path, char *tmp_path, size_t tmp_cap, dp_error *err)
{
    if (strcmp(path, "-") == 0) {
        if (tmp_cap) tmp_path[0] = '\0';
        return stdout;
    }
    int n = snprintf(tmp_path, tmp_cap, "%s.tmp.%ld", path, (long)getpid());
    if (n < 0 || (size_t)n >= tmp_cap) {
        dp_error_set(err, DP_EINVAL, "%s: path too long", path);
        return NULL;
    }
    FILE *f = fopen(tmp_path, "wb");
    if (!f) dp_error_set(err, DP_EIO, "%s: cannot create %s: %s", path, tmp_path, strerror(errno));
    return f;
}

int dp_atomic_commit(FILE *f, const char *tmp_path, const char *path, dp_error *err)
{
    if (f == stdout) {
        fflush(stdout);
        return DP_OK;
    }
    int bad = fflush(f) != 0 || ferror(f);
    if (!bad) bad = fsync(fileno(f)) != 0;
    if (fclose(f) != 0) bad = 1;
    if (bad) {
        unlink(tmp_path);
        return dp_error_set(err, DP_EIO, "%s: write failed: %s", path, strerror(errno));
    }
    if (rename(tmp_path, path) != 0) {
        int e = errno;
        unlink(tmp_path);
        return dp_error_set(err, DP_EIO, "%s: cannot rename %s into place: %s", path, tmp_path, strerror(e));
    }
    return DP_OK;
}

void dp_atomic_abort(FILE *f, const char *tmp_path)
{
    if (f == stdout) return;
    if (f) fclose(f);
    if (tmp_path && tmp_path[0]) unlink(tmp_path);
}

int dp_write_file_atomic(const char *path, const void *data, size_t len, dp_error *err)
{
    char tmp[4096];
    FILE *f = dp_atomic_open(path, tmp, sizeof tmp, err);
    if (!f) return err ? err->code : DP_EIO;
    if (fwrite(data, 1, len, f) != len) {
        dp_atomic_abort(f, tmp);
        return dp_error_set(err, DP_EIO, "%s: write failed", path);
    }
    return dp_atomic_commit(f, tmp, path, err);
}
