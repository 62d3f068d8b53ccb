#include "dp_file.h"
#include "dp_alloc.h"

#include <dirent.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

char *dp_file_read(const char *path, size_t *size, dp_error *err)
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
    char *buf = dp_alloc_malloc(cap);
    if (!buf) { fclose(f); dp_error_set(err, DP_ENOMEM, "%s: out of memory", path); return NULL; }
    for (;;) {
        if (len + 1 >= cap) {
            if (cap >= DP_FILE_MAX_BYTES) {
                free(buf); fclose(f);
                dp_error_set(err, DP_ENOMEM, "%s: file larger than %zu bytes", path, (size_t)DP_FILE_MAX_BYTES);
                return NULL;
            }
            cap *= 2;
            char *nb = dp_alloc_realloc(buf, cap);
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

char *dp_file_read_text(const char *path, size_t *size, dp_error *err)
{
    size_t n;
    char *buf = dp_file_read(path, &n, err);
    if (!buf) return NULL;
    if (n >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0) {
        memmove(buf, buf + 3, n - 3 + 1);
        n -= 3;
    }
    if (dp_file_text_check(path, buf, n, err) != DP_OK) {
        free(buf);
        return NULL;
    }
    if (size) *size = n;
    return buf;
}

int dp_file_text_check(const char *path, const char *text, size_t n, dp_error *err)
{
    const char *z = memchr(text, '\0', n);
    if (!z) return DP_OK;
    int line = 1;
    const char *bol = text;
    for (const char *q = text; q < z; q++)
        if (*q == '\n') { line++; bol = q + 1; }
    return dp_error_set(err, DP_EINVAL, "%s:%d:%d: a NUL byte (0x00): not a text file", path, line, (int)(z - bol) + 1);
}

const char *dp_file_path_stem(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* One step along a chain of symbolic links: when cur (cap bytes) is a link to a path, cur
 * becomes the path it names (relative to the link's folder) and 1 is returned; 0 when cur is no
 * link, or is one to no path (a /proc/PID/fd link to a pipe, a socket or an anonymous inode,
 * "pipe:[123]": /dev/stdout under a pipe; the link itself opens it); -1 with errno on a failed
 * readlink or a name too long. The one walker of write_target and fd_of_path. */
static int link_step(char *cur, size_t cap)
{
    struct stat st;
    if (lstat(cur, &st) != 0 || !S_ISLNK(st.st_mode)) return 0;
    char link[4096];
    const ssize_t k = readlink(cur, link, sizeof link - 1);
    if (k < 0) return -1;
    link[k] = '\0';
    if (link[0] != '/' && strstr(link, ":[")) return 0;
    char next[4096];
    const char *slash = strrchr(cur, '/');
    int n;
    if (link[0] == '/' || !slash) n = snprintf(next, sizeof next, "%s", link);
    else n = snprintf(next, sizeof next, "%.*s/%s", (int)(slash - cur), cur, link);
    if (n < 0 || (size_t)n >= sizeof next || (size_t)n >= cap) { errno = ENAMETOOLONG; return -1; }
    memcpy(cur, next, (size_t)n + 1);
    return 1;
}

/* The file a write to path lands in: path itself, or, when path is a symbolic link, the file it
 * names (followed up to 40 links; a link to a file not there yet names where it will be). The
 * link stays a link: the new file replaces its target. Returns 0, or -1 with errno. */
static int write_target(const char *path, char *out, size_t cap)
{
    if (snprintf(out, cap, "%s", path) >= (int)cap) { errno = ENAMETOOLONG; return -1; }
    for (int depth = 0; depth < 40; depth++) {
        const int r = link_step(out, cap);
        if (r <= 0) return r;
    }
    errno = ELOOP;
    return -1;
}

/* The descriptor path names through its links (/dev/stdout, /dev/fd/N, /proc/self/fd/N,
 * /proc/PID/fd/N of this process), or -1. Such a path is written to the descriptor, in place:
 * replaced through the /proc link, `--out /dev/stdout >> log` lost the log's earlier lines and
 * the text the command printed before (a review). */
static int fd_of_path(const char *path)
{
    char cur[4096];
    if (snprintf(cur, sizeof cur, "%s", path) >= (int)sizeof cur) return -1;
    char self[64];
    snprintf(self, sizeof self, "/proc/%ld/fd/", (long)getpid());
    static const char *const dirs[] = {"/dev/fd/", "/proc/self/fd/", NULL};
    for (int depth = 0; depth < 40; depth++) {
        const char *num = NULL;
        for (int k = 0; dirs[k] && !num; k++)
            if (strncmp(cur, dirs[k], strlen(dirs[k])) == 0) num = cur + strlen(dirs[k]);
        if (!num && strncmp(cur, self, strlen(self)) == 0) num = cur + strlen(self);
        if (num && *num) {
            char *end;
            const long n = strtol(num, &end, 10);
            if (*end == '\0' && n >= 0 && n <= INT_MAX) return (int)n;
        }
        if (link_step(cur, sizeof cur) != 1) return -1;
    }
    return -1;
}

static const char *file_kind(mode_t m)
{
    return S_ISDIR(m) ? "a directory" : S_ISBLK(m) ? "a block device" : S_ISSOCK(m) ? "a socket"
         : S_ISCHR(m) ? "a character device" : S_ISFIFO(m) ? "a FIFO" : "not a regular file";
}

/* Whether name is "BASE.tmp.PID" or "BASE.tmp.PID.N" (a temporary file of this module or of an
 * older version); *pid gets PID. */
static int tmp_name_pid(const char *name, long *pid)
{
    const char *t = NULL;
    for (const char *q = strstr(name, ".tmp."); q; q = strstr(q + 1, ".tmp.")) t = q;
    if (!t || t == name) return 0;
    const char *d = t + 5;
    char *end;
    if (*d < '0' || *d > '9') return 0;
    long v = strtol(d, &end, 10);
    if (*end == '.') {
        const char *e2 = end + 1;
        if (*e2 < '0' || *e2 > '9') return 0;
        strtoul(e2, &end, 10);
    }
    if (*end != '\0' || v <= 0) return 0;
    *pid = v;
    return 1;
}

/* Remove the temporary files that writers killed before their rename left in dir: regular files
 * named "NAME.tmp.PID[.N]", owned by this user, whose process PID no longer exists here. Each
 * directory is cleaned once per process (a sweep writing thousands of files into one folder
 * reads it once). A writer in another PID namespace sharing the folder would look dead: such
 * setups should not share output folders. */
static void remove_stale_tmp(const char *target)
{
    char dir[4096];
    const char *slash = strrchr(target, '/');
    if (!slash) snprintf(dir, sizeof dir, ".");
    else if (slash == target) snprintf(dir, sizeof dir, "/");
    else if ((size_t)(slash - target) < sizeof dir) snprintf(dir, sizeof dir, "%.*s", (int)(slash - target), target);
    else return;
    struct stat ds;
    if (stat(dir, &ds) != 0) return;
    static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    static struct { dev_t dev; ino_t ino; } done[64];
    static int n_done;
    pthread_mutex_lock(&mu);
    int seen = 0;
    for (int i = 0; i < n_done && !seen; i++) seen = done[i].dev == ds.st_dev && done[i].ino == ds.st_ino;
    if (!seen && n_done < (int)(sizeof done / sizeof done[0])) {
        done[n_done].dev = ds.st_dev;
        done[n_done].ino = ds.st_ino;
        n_done++;
    }
    pthread_mutex_unlock(&mu);
    if (seen) return;
    DIR *d = opendir(dir);
    if (!d) return;
    const long me = (long)getpid();
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        long pid;
        if (!tmp_name_pid(e->d_name, &pid) || pid == me) continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue; /* alive, or not ours to know */
        char full[8192];
        if (snprintf(full, sizeof full, "%s/%s", dir, e->d_name) >= (int)sizeof full) continue;
        struct stat st;
        if (lstat(full, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid()) (void)unlink(full);
    }
    closedir(d);
}

const char *dp_file_shell_word(const char *s, char *buf, size_t cap)
{
    int plain = *s != '\0';
    for (const char *q = s; *q && plain; q++)
        plain = isalnum((unsigned char)*q) || strchr("_./:=,+-@%", *q) != NULL;
    if (plain) return s;
    size_t n = 0;
    if (cap < 3) return s;
    buf[n++] = '\'';
    for (const char *q = s; *q; q++) {
        const char *piece = *q == '\'' ? "'\\''" : NULL;
        const size_t k = piece ? 4 : 1;
        if (n + k + 2 > cap) return s;
        if (piece) memcpy(buf + n, piece, k);
        else buf[n] = *q;
        n += k;
    }
    buf[n++] = '\'';
    buf[n] = '\0';
    return buf;
}

/* Whether a file can be made in target's folder: DP_OK, or an error named by the user's path
 * and the folder (not by a temporary name), e the errno of a failed attempt (0: none yet). */
static int check_folder(const char *path, const char *target, int e, dp_error *err)
{
    char dir[4096];
    const char *slash = strrchr(target, '/');
    if (!slash) snprintf(dir, sizeof dir, ".");
    else snprintf(dir, sizeof dir, "%.*s", slash == target ? 1 : (int)(slash - target), target);
    struct stat st;
    if (stat(dir, &st) != 0) {
        if (errno == ENOENT) {
            char q[8300];
            return dp_error_set(err, DP_EIO, "%s: cannot write it: the folder %s does not exist (create it first: mkdir -p %s)",
                                path, dir, dp_file_shell_word(dir, q, sizeof q));
        }
        return dp_error_set(err, DP_EIO, "%s: cannot write it: the folder %s: %s", path, dir, strerror(errno));
    }
    if (!S_ISDIR(st.st_mode)) return dp_error_set(err, DP_EIO, "%s: cannot write it: %s is not a folder", path, dir);
    if (access(dir, W_OK | X_OK) != 0)
        return dp_error_set(err, DP_EIO, "%s: cannot write it in the folder %s: %s", path, dir, strerror(errno));
    if (e) return dp_error_set(err, DP_EIO, "%s: cannot write it in the folder %s: %s", path, dir, strerror(e));
    return DP_OK;
}

int dp_file_is_descriptor(const char *path)
{
    return fd_of_path(path) >= 0;
}

int dp_file_output_target(const char *path, char *target, size_t cap, dp_error *err)
{
    /* a descriptor cannot take a file made whole and renamed into place: renamed over the
     * /proc link, a PNG replaced /dev/stdout itself (a review) */
    if (fd_of_path(path) >= 0)
        return dp_error_set(err, DP_EIO, "%s: a descriptor (standard output, /dev/fd/N): this output is a file made "
                            "whole and renamed into place; name a file", path);
    if (write_target(path, target, cap) != 0) return dp_error_set(err, DP_EIO, "%s: %s", path, strerror(errno));
    struct stat st;
    if (stat(target, &st) == 0 && !S_ISREG(st.st_mode))
        return dp_error_set(err, DP_EIO, "%s: is %s, not a regular file: this output is written to a regular file", path,
                            file_kind(st.st_mode));
    int rc = check_folder(path, target, 0, err);
    if (rc != DP_OK) return rc;
    /* access() passes where a file still cannot be made: root in a read-only or pseudo file
     * system's folder (/sys), an NFS export that squashes root. The writer's own first step, a
     * temporary file made and removed, is the only true test (train found out after its first
     * 100 episodes: a review) */
    char tmp[4200];
    FILE *f = dp_file_atomic_open(target, tmp, sizeof tmp, err);
    if (!f) return err ? err->code : DP_EIO;
    dp_file_atomic_abort(f, tmp);
    return DP_OK;
}

/* path's folder, resolved (realpath), and its last component, into out: "" when the folder
 * cannot be resolved */
static void canonical_name(const char *path, char *out, size_t cap)
{
    char dir[4096], real[PATH_MAX];
    const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
    if (!slash) snprintf(dir, sizeof dir, ".");
    else snprintf(dir, sizeof dir, "%.*s", slash == path ? 1 : (int)(slash - path), path);
    if (!realpath(dir, real) || snprintf(out, cap, "%s/%s", real, base) >= (int)cap) out[0] = '\0';
}

int dp_file_same_output(const char *a, const char *b)
{
    const int fa = fd_of_path(a), fb = fd_of_path(b);
    if (fa >= 0 || fb >= 0) return fa == fb; /* one descriptor written twice interleaves */
    char ta[4096], tb[4096];
    if (write_target(a, ta, sizeof ta) != 0 || write_target(b, tb, sizeof tb) != 0) return strcmp(a, b) == 0;
    struct stat sa, sb;
    const int ea = stat(ta, &sa) == 0, eb = stat(tb, &sb) == 0;
    /* a character device or FIFO (/dev/null twice) is written in place: neither write replaces
     * the other */
    if ((ea && !S_ISREG(sa.st_mode)) || (eb && !S_ISREG(sb.st_mode))) return 0;
    if (ea && eb) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    if (ea != eb) return 0;
    char ca[8192], cb[8192];
    canonical_name(ta, ca, sizeof ca);
    canonical_name(tb, cb, sizeof cb);
    return ca[0] ? strcmp(ca, cb) == 0 : strcmp(ta, tb) == 0;
}

FILE *dp_file_atomic_open(const char *path, char *tmp_path, size_t tmp_cap, dp_error *err)
{
    if (strcmp(path, "-") == 0) {
        if (tmp_cap) tmp_path[0] = '\0';
        return stdout;
    }
    /* /dev/stdout, /dev/fd/N, /proc/self/fd/N: the descriptor itself, at its offset and in its
     * mode (>> appends), never replaced (fd_of_path) */
    const int fd = fd_of_path(path);
    if (fd >= 0) {
        if (tmp_cap) tmp_path[0] = '\0';
        if (fd == 1) return stdout;
        if (fd == 2) return stderr;
        const int d = dup(fd);
        FILE *f = d >= 0 ? fdopen(d, "w") : NULL;
        if (!f) {
            dp_error_set(err, DP_EIO, "%s: %s", path, strerror(errno));
            if (d >= 0) close(d);
        }
        return f;
    }
    if (tmp_cap < 2) {
        dp_error_set(err, DP_EINVAL, "%s: no room for the temporary name", path);
        return NULL;
    }
    char target[4096];
    if (write_target(path, target, sizeof target) != 0) {
        dp_error_set(err, DP_EIO, "%s: %s", path, strerror(errno));
        tmp_path[0] = '\0';
        return NULL;
    }
    struct stat st;
    if (stat(target, &st) == 0 && !S_ISREG(st.st_mode)) {
        tmp_path[0] = '\0';
        if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
            /* /dev/null, a terminal, a pipe: written in place, never replaced */
            FILE *f = fopen(target, "wb");
            if (!f) {
                dp_error_set(err, DP_EIO, "%s: %s", path, strerror(errno));
                return NULL;
            }
            return f; /* tmp_path "": commit closes without renaming, abort removes nothing */
        }
        dp_error_set(err, DP_EIO, "%s: is %s: doppler writes regular files (or, in place, character devices and FIFOs)",
                     path, file_kind(st.st_mode));
        return NULL;
    }
    remove_stale_tmp(target);
    /* The name is unique per process and call (threads of one sweep may write the same path at
     * once) and created exclusively ("x"), so a stale file of a dead process with a recycled pid
     * is never appended to or shared: the next number is tried instead. */
    static atomic_uint counter;
    for (int attempt = 0; attempt < 64; attempt++) {
        unsigned k = atomic_fetch_add(&counter, 1u);
        int n = snprintf(tmp_path, tmp_cap, "%s.tmp.%ld.%u", target, (long)getpid(), k);
        if (n < 0 || (size_t)n >= tmp_cap) {
            dp_error_set(err, DP_EINVAL, "%s: path too long", path);
            tmp_path[0] = '\0';
            return NULL;
        }
        FILE *f = fopen(tmp_path, "wbx");
        if (f) return f;
        if (errno != EEXIST) break;
    }
    if (errno == EEXIST) dp_error_set(err, DP_EIO, "%s: cannot create a temporary file beside it (%s and 63 more exist)", path, tmp_path);
    else check_folder(path, target, errno ? errno : EIO, err);
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

int dp_file_atomic_commit(FILE *f, const char *tmp_path, const char *path, dp_error *err)
{
    if (f == stdout || f == stderr) {
        if (fflush(f) != 0 || ferror(f))
            return dp_error_set(err, DP_EIO, "%s: %s", f == stdout ? "standard output" : "standard error", strerror(errno ? errno : EIO));
        return DP_OK;
    }
    int e = 0;
    if (fflush(f) != 0) e = errno ? errno : EIO;
    else if (ferror(f)) e = EIO;
    if (tmp_path[0] == '\0') {
        /* written in place (a character device, a FIFO): nothing to sync or rename */
        if (fclose(f) != 0 && !e) e = errno;
        return e ? dp_error_set(err, DP_EIO, "%s: write failed: %s", path, strerror(e)) : DP_OK;
    }
    if (!e && fsync(fileno(f)) != 0) e = errno;
    if (fclose(f) != 0 && !e) e = errno;
    if (e) {
        unlink(tmp_path);
        return dp_error_set(err, DP_EIO, "%s: write failed: %s", path, strerror(e));
    }
    /* the target is tmp_path less its ".tmp.PID.N" (path itself, or the file a link names) */
    char target[4096];
    const char *t = NULL;
    for (const char *q = strstr(tmp_path, ".tmp."); q; q = strstr(q + 1, ".tmp.")) t = q;
    if (!t || (size_t)(t - tmp_path) >= sizeof target) {
        unlink(tmp_path);
        return dp_error_set(err, DP_EINVAL, "%s: %s is not a temporary name of dp_file_atomic_open", path, tmp_path);
    }
    snprintf(target, sizeof target, "%.*s", (int)(t - tmp_path), tmp_path);
    if (rename(tmp_path, target) != 0) {
        e = errno;
        unlink(tmp_path);
        return dp_error_set(err, DP_EIO, "%s: cannot rename %s into place: %s", path, tmp_path, strerror(e));
    }
    sync_parent_dir(target);
    return DP_OK;
}

void dp_file_atomic_abort(FILE *f, const char *tmp_path)
{
    if (f == stdout || f == stderr) return;
    if (f) fclose(f);
    if (tmp_path && tmp_path[0]) unlink(tmp_path);
}

int dp_file_write_atomic(const char *path, const void *data, size_t len, dp_error *err)
{
    char tmp[4200];
    FILE *f = dp_file_atomic_open(path, tmp, sizeof tmp, err);
    if (!f) return err ? err->code : DP_EIO;
    errno = 0;
    if (len > 0 && fwrite(data, 1, len, f) != len) {
        int e = errno ? errno : EIO;
        dp_file_atomic_abort(f, tmp);
        return dp_error_set(err, DP_EIO, "%s: write failed: %s", path, strerror(e));
    }
    return dp_file_atomic_commit(f, tmp, path, err);
}

/* DOPPLER_MEM_LIMIT's bytes into *v (0 when unset or empty): a positive number, then optionally
 * K, M or G (powers of 1024) and optionally B or iB after it ("512M", "1.5GiB", "100KB"); 1 when
 * it is anything else (its text then unused: "abc", "0", "-5", "10X", "nan") */
static int env_mem_limit(double *v)
{
    *v = 0;
    const char *env = getenv("DOPPLER_MEM_LIMIT");
    if (!env || !*env) return 0;
    char *end;
    errno = 0;
    double x = strtod(env, &end);
    if (end == env || errno == ERANGE || !isfinite(x) || !(x > 0)) return 1;
    if (*end == 'K' || *end == 'k') x *= 1024.0, end++;
    else if (*end == 'M' || *end == 'm') x *= 1024.0 * 1024.0, end++;
    else if (*end == 'G' || *end == 'g') x *= 1024.0 * 1024.0 * 1024.0, end++;
    if (*end == 'i' && end[1] == 'B') end += 2;
    else if (*end == 'B') end++;
    if (*end) return 1;
    *v = x;
    return 0;
}

size_t dp_file_mem_limit(void)
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
    double v;
    if (env_mem_limit(&v) == 0 && v > 0 && v < lim) lim = v;
    return lim >= (double)SIZE_MAX ? SIZE_MAX : (size_t)lim;
}

/* bytes in the unit that shows them: B, KiB, MiB or GiB, 4 significant digits */
static void fmt_bytes(char *buf, size_t n, double b)
{
    static const char *unit[] = {"B", "KiB", "MiB", "GiB"};
    int u = 0;
    while (u < 3 && b >= 1024.0) b /= 1024.0, u++;
    snprintf(buf, n, "%.4g %s", b, unit[u]);
}

int dp_file_mem_env_check(dp_error *err)
{
    double v;
    if (env_mem_limit(&v))
        return dp_error_set(err, DP_EINVAL, "DOPPLER_MEM_LIMIT: expected a positive number of bytes with an optional K, M or G "
                            "suffix (powers of 1024), got '%s'", getenv("DOPPLER_MEM_LIMIT"));
    return DP_OK;
}

int dp_file_mem_check(const char *path, const char *what, double bytes, dp_error *err)
{
    if (dp_file_mem_env_check(err) != DP_OK) return DP_EINVAL;
    const double lim = (double)dp_file_mem_limit();
    if (!(bytes > lim)) return DP_OK;
    char need[32], have[32];
    fmt_bytes(need, sizeof need, bytes);
    fmt_bytes(have, sizeof have, lim);
    return dp_error_set(err, DP_ENOMEM, "%s: %s needs about %s of memory, more than the %s available "
                        "(available memory, ulimit or DOPPLER_MEM_LIMIT)", path, what, need, have);
}
