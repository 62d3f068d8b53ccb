#include "dp_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
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
    /* The name is unique per process and call (threads of one sweep may write the same path at
     * once) and created exclusively ("x"), so a stale file of a dead process with a recycled pid
     * is never appended to or shared: the next number is tried instead. */
    static atomic_uint counter;
    for (int attempt = 0; attempt < 64; attempt++) {
        unsigned k = atomic_fetch_add(&counter, 1u);
        int n = snprintf(tmp_path, tmp_cap, "%s.tmp.%ld.%u", path, (long)getpid(), k);
        if (n < 0 || (size_t)n >= tmp_cap) {
            dp_error_set(err, DP_EINVAL, "%s: path too long", path);
            return NULL;
        }
        FILE *f = fopen(tmp_path, "wbx");
        if (f) return f;
        if (errno != EEXIST) break;
    }
    dp_error_set(err, DP_EIO, "%s: cannot create %s: %s", path, tmp_path, strerror(errno));
    tmp_path[0] = '\0';
    return NULL;
}

/* Make a rename durable: fsync the directory that holds path (best effort: some file systems
 * refuse, and the file itself is complete either way). */
static void sync_parent_dir(const char *path)
{
    char dir[4096];
    const char *slash = strrchr(path, '/');
    if (!slash) snprintf(dir, sizeof dir, ".");
    else if (slash == path) snprintf(dir, sizeof dir, "/");
    else if ((size_t)(slash - path) < sizeof dir) snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    else return;
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd < 0) return;
    (void)fsync(fd);
    close(fd);
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
    sync_parent_dir(path);
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

size_t dp_mem_limit(void)
{
    double lim = 0;
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    if (pages > 0 && psz > 0) lim = (double)pages * (double)psz;
    if (!(lim > 0)) lim = (double)SIZE_MAX;
    /* what the kernel says is available now (other processes hold the rest) */
    FILE *mi = fopen("/proc/meminfo", "r");
    if (mi) {
        char line[256];
        unsigned long long kb;
        while (fgets(line, sizeof line, mi))
            if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) {
                if (kb > 0 && (double)kb * 1024.0 < lim) lim = (double)kb * 1024.0;
                break;
            }
        fclose(mi);
    }
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && (double)rl.rlim_cur < lim)
        lim = (double)rl.rlim_cur;
    if (getrlimit(RLIMIT_DATA, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && (double)rl.rlim_cur < lim)
        lim = (double)rl.rlim_cur;
    const char *env = getenv("DOPPLER_MEM_LIMIT");
    if (env && *env) {
        char *end;
        double v = strtod(env, &end);
        if (*end == 'K' || *end == 'k') v *= 1024.0;
        else if (*end == 'M' || *end == 'm') v *= 1024.0 * 1024.0;
        else if (*end == 'G' || *end == 'g') v *= 1024.0 * 1024.0 * 1024.0;
        if (v > 0 && v < lim) lim = v;
    }
    return lim >= (double)SIZE_MAX ? SIZE_MAX : (size_t)lim;
}

int dp_mem_check(const char *path, const char *what, double bytes, dp_error *err)
{
    const double lim = (double)dp_mem_limit();
    if (!(bytes > lim)) return DP_OK;
    return dp_error_set(err, DP_ENOMEM, "%s: %s needs about %.1f MiB of memory, more than the %.1f MiB available "
                        "(available memory, ulimit or DOPPLER_MEM_LIMIT)", path, what, bytes / 1048576.0,
                        lim / 1048576.0);
}
