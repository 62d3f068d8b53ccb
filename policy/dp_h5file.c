/* dp_h5file.c: HDF5 files built in memory, written atomically (see dp_h5file.h). */
#include "dp_h5file.h"
#include "dp_alloc.h"
#include "dp_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Growth step of an in-memory file (bytes). */
#define MEM_INCREMENT ((size_t)1 << 20)

static void quiet(void)
{
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

/* The core driver without backing store, 1.10 format or later (dp_h5file.h); the caller closes it. */
static hid_t mem_fapl(void)
{
    hid_t p = H5Pcreate(H5P_FILE_ACCESS);
    if (p < 0) return -1;
    if (H5Pset_fapl_core(p, MEM_INCREMENT, 0) < 0 || H5Pset_libver_bounds(p, H5F_LIBVER_V110, H5F_LIBVER_LATEST) < 0) {
        H5Pclose(p);
        return -1;
    }
    return p;
}

/* HDF5 takes two in-memory files of one name for the same file: give each its own. */
static void mem_name(char *buf, size_t cap, const char *path)
{
    static atomic_uint counter;
    snprintf(buf, cap, "%s#mem.%ld.%u", path, (long)getpid(), atomic_fetch_add(&counter, 1u));
}

/* Bob Jenkins' lookup3 hash (hashlittle, byte by byte), the checksum of HDF5's metadata
 * (H5_checksum_lookup3 with initval 0). */
#define ROT(x, k) (((x) << (k)) ^ ((x) >> (32 - (k))))
static uint32_t lookup3(const uint8_t *k, size_t length)
{
    uint32_t a, b, c;
    a = b = c = 0xdeadbeefu + (uint32_t)length;
    while (length > 12) {
        a += k[0] + ((uint32_t)k[1] << 8) + ((uint32_t)k[2] << 16) + ((uint32_t)k[3] << 24);
        b += k[4] + ((uint32_t)k[5] << 8) + ((uint32_t)k[6] << 16) + ((uint32_t)k[7] << 24);
        c += k[8] + ((uint32_t)k[9] << 8) + ((uint32_t)k[10] << 16) + ((uint32_t)k[11] << 24);
        a -= c; a ^= ROT(c, 4); c += b;
        b -= a; b ^= ROT(a, 6); a += c;
        c -= b; c ^= ROT(b, 8); b += a;
        a -= c; a ^= ROT(c, 16); c += b;
        b -= a; b ^= ROT(a, 19); a += c;
        c -= b; c ^= ROT(b, 4); b += a;
        length -= 12;
        k += 12;
    }
    switch (length) {
    case 12: c += (uint32_t)k[11] << 24; /* fall through */
    case 11: c += (uint32_t)k[10] << 16; /* fall through */
    case 10: c += (uint32_t)k[9] << 8;   /* fall through */
    case 9: c += k[8];                   /* fall through */
    case 8: b += (uint32_t)k[7] << 24;   /* fall through */
    case 7: b += (uint32_t)k[6] << 16;   /* fall through */
    case 6: b += (uint32_t)k[5] << 8;    /* fall through */
    case 5: b += k[4];                   /* fall through */
    case 4: a += (uint32_t)k[3] << 24;   /* fall through */
    case 3: a += (uint32_t)k[2] << 16;   /* fall through */
    case 2: a += (uint32_t)k[1] << 8;    /* fall through */
    case 1: a += k[0]; break;
    case 0: return c;
    }
    c ^= b; c -= ROT(b, 14);
    a ^= c; a -= ROT(c, 11);
    b ^= a; b -= ROT(a, 25);
    c ^= b; c -= ROT(b, 16);
    a ^= c; a -= ROT(c, 4);
    b ^= a; b -= ROT(a, 14);
    c ^= b; c -= ROT(b, 24);
    return c;
}
#undef ROT

int dp_h5file_superblock_fix(void *image, size_t len)
{
    /* superblock version 2 or 3 at offset 0: signature (8), version, size of offsets, size of
     * lengths, status flags (1 each), four addresses, checksum (4, little-endian) */
    uint8_t *b = image;
    static const uint8_t sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
    if (len < 12 || memcmp(b, sig, 8) != 0) return -1;
    if (b[8] < 2) return 0; /* versions 0 and 1 have no checksum */
    size_t off = 12 + 4 * (size_t)b[9];
    if (b[9] == 0 || off + 4 > len) return -1;
    uint32_t c = lookup3(b, off);
    b[off] = (uint8_t)c;
    b[off + 1] = (uint8_t)(c >> 8);
    b[off + 2] = (uint8_t)(c >> 16);
    b[off + 3] = (uint8_t)(c >> 24);
    return 0;
}

/* File image callbacks that lend the caller's bytes instead of copying them (what libhdf5_hl's
 * H5LTopen_file_image does with H5LT_FILE_IMAGE_DONT_COPY | H5LT_FILE_IMAGE_DONT_RELEASE): HDF5
 * copies a file image into the property list and again into the core driver, so a read-only
 * check of a checkpoint's bytes held three copies of it at once (issue 19: the peak memory of
 * training). udata is the lent image; it outlives the property list and the file. */
typedef struct lent_image { void *buf; size_t len; } lent_image;

static void *lent_malloc(size_t size, H5FD_file_image_op_t op, void *udata)
{
    (void)op;
    lent_image *im = udata;
    return size <= im->len ? im->buf : NULL;
}

static void *lent_memcpy(void *dest, const void *src, size_t size, H5FD_file_image_op_t op, void *udata)
{
    (void)op; (void)udata;
    if (dest != src) memmove(dest, src, size); /* never happens: every copy is the lent buffer */
    return dest;
}

static void *lent_realloc(void *ptr, size_t size, H5FD_file_image_op_t op, void *udata)
{
    (void)ptr; (void)size; (void)op; (void)udata;
    return NULL; /* read-only: the image never grows */
}

static herr_t lent_free(void *ptr, H5FD_file_image_op_t op, void *udata)
{
    (void)ptr; (void)op; (void)udata;
    return 0;
}

static void *lent_udata_copy(void *udata)
{
    return udata;
}

static herr_t lent_udata_free(void *udata)
{
    (void)udata;
    return 0;
}

/* Whether the bytes open as an HDF5 file (a last check before they replace a good file); they
 * are read in place. */
static int image_opens(const void *img, size_t len)
{
    hid_t p = mem_fapl();
    if (p < 0) return 0;
    char name[64];
    mem_name(name, sizeof name, "check");
    lent_image im = {(void *)img, len};
    H5FD_file_image_callbacks_t cb = {lent_malloc, lent_memcpy, lent_realloc, lent_free, lent_udata_copy, lent_udata_free, &im};
    hid_t f = H5Pset_file_image_callbacks(p, &cb) >= 0 && H5Pset_file_image(p, (void *)img, len) >= 0
              ? H5Fopen(name, H5F_ACC_RDONLY, p) : -1;
    H5Pclose(p);
    if (f < 0) return 0;
    return H5Fclose(f) >= 0;
}

hid_t dp_h5file_create(const char *path, dp_error *err)
{
    quiet();
    hid_t p = mem_fapl();
    char name[4200];
    mem_name(name, sizeof name, path);
    hid_t f = p < 0 ? -1 : H5Fcreate(name, H5F_ACC_TRUNC, H5P_DEFAULT, p);
    if (p >= 0) H5Pclose(p);
    if (f < 0) dp_error_set(err, DP_EIO, "%s: cannot create an HDF5 file in memory", path);
    return f;
}

hid_t dp_h5file_open_image(const char *path, dp_error *err)
{
    quiet();
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        dp_error_set(err, DP_EIO, "%s: %s, not a regular file: an HDF5 file cannot be changed there", path,
                     S_ISDIR(st.st_mode) ? "is a directory" : S_ISCHR(st.st_mode) ? "is a character device"
                     : S_ISFIFO(st.st_mode) ? "is a FIFO" : "is a special file");
        return -1;
    }
    if (stat(path, &st) == 0 && dp_file_mem_check(path, "changing this HDF5 file", 3.0 * (double)st.st_size, err) != DP_OK)
        return -1;
    size_t len = 0;
    char *img = dp_file_read(path, &len, err);
    if (!img) return -1;
    hid_t f = -1;
    if (len == 0) {
        dp_error_set(err, DP_EINVAL, "%s: empty file, not an HDF5 file", path);
        free(img);
        return -1;
    }
    hid_t p = mem_fapl();
    char name[4200];
    mem_name(name, sizeof name, path);
    /* H5Pset_file_image copies the bytes, and the core driver copies them again when the file
     * is opened: free ours at once */
    if (p >= 0 && H5Pset_file_image(p, img, len) >= 0) f = H5Fopen(name, H5F_ACC_RDWR, p);
    free(img);
    if (p >= 0) H5Pclose(p);
    if (f < 0) dp_error_set(err, DP_EINVAL, "%s: not an HDF5 file (or a damaged one)", path);
    return f;
}

int dp_h5file_commit(hid_t f, const char *path, const char *what, dp_error *err)
{
    quiet();
    void *img = NULL;
    ssize_t len = -1;
    if (H5Fflush(f, H5F_SCOPE_LOCAL) >= 0) len = H5Fget_file_image(f, NULL, 0);
    if (len > 0) {
        img = dp_alloc_malloc((size_t)len);
        if (!img) {
            H5Fclose(f);
            return dp_error_set(err, DP_ENOMEM, "%s: out of memory for %s (%zd bytes)", path, what, len);
        }
        if (H5Fget_file_image(f, img, (size_t)len) != len) len = -1;
    }
    /* an in-memory file without backing store: closing writes nothing and cannot fail for want
     * of disk; a failure here is HDF5's own (an object left open) */
    int closed = H5Fclose(f) >= 0;
    /* H5Fget_file_image clears the superblock's "open for writing" flags in the copy it returns
     * but (libhdf5 1.10) leaves the checksum of the flagged superblock: recompute it, and check
     * that the bytes open before they replace anything */
    if (len > 0 && (dp_h5file_superblock_fix(img, (size_t)len) != 0 || !image_opens(img, (size_t)len))) len = -1;
    if (len <= 0 || !closed) {
        free(img);
        return dp_error_set(err, DP_EIO, "%s: cannot build %s in memory (HDF5 error)", path, what);
    }
    dp_error e;
    int rc = dp_file_write_atomic(path, img, (size_t)len, &e);
    free(img);
    if (rc != DP_OK) return dp_error_set(err, rc, "%s (%s)", e.msg, what);
    return DP_OK;
}

void dp_h5file_discard(hid_t f)
{
    if (f >= 0) H5Fclose(f);
}

/* H5Aiterate2's visit of one attribute: its header read (open, type, space) */
static herr_t attr_readable(hid_t loc, const char *name, const H5A_info_t *info, void *data)
{
    (void)info;
    (void)data;
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
    if (a < 0) return -1;
    hid_t t = H5Aget_type(a), sp = H5Aget_space(a);
    const herr_t rc = t < 0 || sp < 0 ? -1 : 0;
    if (t >= 0) H5Tclose(t);
    if (sp >= 0) H5Sclose(sp);
    H5Aclose(a);
    return rc;
}

/* H5Ovisit2's visit of one object: its attributes' headers readable; the first object that
 * fails is named in data (a char[256]) */
static herr_t object_readable(hid_t root, const char *name, const H5O_info_t *info, void *data)
{
    (void)info;
    hid_t o = H5Oopen(root, name, H5P_DEFAULT);
    herr_t rc = o < 0 ? -1 : H5Aiterate2(o, H5_INDEX_NAME, H5_ITER_NATIVE, NULL, attr_readable, NULL) < 0 ? -1 : 0;
    if (o >= 0) H5Oclose(o);
    if (rc < 0) snprintf((char *)data, 256, "%s", strcmp(name, ".") == 0 ? "/" : name);
    return rc;
}

hid_t dp_h5file_open_read(const char *path, const char *what, dp_error *err)
{
    quiet();
    /* the system's reason first: HDF5's own message says only that the open failed */
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        dp_error_set(err, DP_EIO, "%s: cannot open %s: %s", path, what, strerror(errno));
        return -1;
    }
    struct stat st;
    int is_dir = fstat(fd, &st) == 0 && S_ISDIR(st.st_mode);
    close(fd);
    if (is_dir) {
        dp_error_set(err, DP_EIO, "%s: cannot open %s: is a directory", path, what);
        return -1;
    }
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) {
        dp_error_set(err, DP_EINVAL, "%s: cannot open %s: not an HDF5 file (or a damaged one)", path, what);
        return -1;
    }
    /* every object's header and attributes readable: a flipped bit in the root group's header
     * made the first attribute read fail, called "not a doppler checkpoint" or "attribute config
     * missing" (a review); the datasets' bytes have their own checksums (dp_h5file_checked_dcpl) */
    char bad[256] = "";
    if (H5Ovisit2(f, H5_INDEX_NAME, H5_ITER_NATIVE, object_readable, bad, H5O_INFO_BASIC) < 0) {
        /* a file of an earlier version (a variable-length "format") is refused as one (its
         * headers may not read here for that reason) */
        dp_error e;
        dp_error_clear(&e);
        char *fmt = dp_h5file_attr_read_str(f, path, "format", &e);
        free(fmt);
        if (!fmt && e.code == DP_EUNSUPPORTED) dp_error_set(err, e.code, "%s", e.msg);
        else
            dp_error_set(err, DP_EINVAL, "%s: %s is damaged: HDF5 cannot read the header or attributes of %s", path, what,
                         bad[0] ? bad : "an object");
        H5Fclose(f);
        return -1;
    }
    return f;
}

hid_t dp_h5file_checked_dcpl(int rank, const hsize_t *dims)
{
    hsize_t chunk[8];
    if (rank < 1 || rank > 8) return -1;
    hsize_t rest = 1;
    for (int i = 0; i < rank; i++) {
        if (dims[i] == 0) return H5P_DEFAULT;
        if (i > 0) rest *= dims[i];
        chunk[i] = dims[i];
    }
    /* whole-array chunks up to 2^20 elements (HDF5 limits a chunk to 4 GiB) */
    const hsize_t max_elems = (hsize_t)1 << 20;
    if (rest >= max_elems) {
        chunk[0] = 1;
        for (int i = 1; i < rank; i++) chunk[i] = 1;
        chunk[rank - 1] = dims[rank - 1] < max_elems ? dims[rank - 1] : max_elems;
    } else if (chunk[0] * rest > max_elems) {
        chunk[0] = max_elems / rest;
    }
    hid_t p = H5Pcreate(H5P_DATASET_CREATE);
    if (p < 0) return -1;
    if (H5Pset_chunk(p, rank, chunk) < 0 || H5Pset_fletcher32(p) < 0) {
        H5Pclose(p);
        return -1;
    }
    return p;
}

/* ---- strings (see dp_h5file.h: never the global heap) ---- */

hid_t dp_h5file_str_type(size_t len)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    if (t < 0) return -1;
    if (H5Tset_size(t, len + 1) < 0 || H5Tset_strpad(t, H5T_STR_NULLTERM) < 0 || H5Tset_cset(t, H5T_CSET_UTF8) < 0) {
        H5Tclose(t);
        return -1;
    }
    return t;
}

int dp_h5file_attr_write_str(hid_t loc, const char *name, const char *s)
{
    if (!s) s = "";
    hid_t t = dp_h5file_str_type(strlen(s));
    hid_t sp = H5Screate(H5S_SCALAR);
    int bad = t < 0 || sp < 0;
    if (!bad && H5Aexists(loc, name) > 0 && H5Adelete(loc, name) < 0) bad = 1;
    hid_t a = bad ? -1 : H5Acreate2(loc, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
    if (a < 0 || H5Awrite(a, t, s) < 0) bad = 1;
    if (a >= 0 && H5Aclose(a) < 0) bad = 1;
    if (sp >= 0 && H5Sclose(sp) < 0) bad = 1;
    if (t >= 0 && H5Tclose(t) < 0) bad = 1;
    return bad ? -1 : 0;
}

int dp_h5file_type_has_vlen_str(hid_t type)
{
    H5T_class_t c = H5Tget_class(type);
    if (c == H5T_STRING) return H5Tis_variable_str(type) != 0; /* a failed query counts as one */
    if (c == H5T_VLEN) return 1;
    if (c == H5T_COMPOUND) {
        int n = H5Tget_nmembers(type);
        if (n < 0) return 1;
        for (int i = 0; i < n; i++) {
            hid_t m = H5Tget_member_type(type, (unsigned)i);
            int v = m < 0 || dp_h5file_type_has_vlen_str(m);
            if (m >= 0) H5Tclose(m);
            if (v) return 1;
        }
        return 0;
    }
    if (c == H5T_ARRAY) {
        hid_t b = H5Tget_super(type);
        int v = b < 0 || dp_h5file_type_has_vlen_str(b);
        if (b >= 0) H5Tclose(b);
        return v;
    }
    return c < 0;
}

char *dp_h5file_attr_read_str(hid_t loc, const char *path, const char *name, dp_error *err)
{
    quiet();
    if (H5Aexists(loc, name) <= 0) {
        dp_error_set(err, DP_EINVAL, "%s: attribute \"%s\" missing", path, name);
        return NULL;
    }
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
    if (a < 0) {
        dp_error_set(err, DP_EINVAL, "%s: attribute \"%s\" cannot be opened (a damaged file?)", path, name);
        return NULL;
    }
    hid_t ft = H5Aget_type(a), sp = H5Aget_space(a);
    char *s = NULL;
    hssize_t npts = sp < 0 ? -1 : H5Sget_simple_extent_npoints(sp);
    if (ft < 0 || H5Tget_class(ft) != H5T_STRING) {
        dp_error_set(err, DP_EINVAL, "%s: attribute \"%s\" is not a string", path, name);
    } else if (H5Tis_variable_str(ft) != 0) {
        /* never converted: reading it goes through the global heap, which libhdf5 1.10 can read
         * forever when it is damaged */
        dp_error_set(err, DP_EUNSUPPORTED,
                     "%s: attribute \"%s\" is a variable-length string, which this version does not read "
                     "(libhdf5 can hang on a damaged one); doppler wrote them so before checkpoint and "
                     "trajectory format version 3 and results format 2: write the file again with this version",
                     path, name);
    } else if (npts != 1) {
        dp_error_set(err, DP_EINVAL, "%s: attribute \"%s\" is not a single string", path, name);
    } else {
        size_t n = H5Tget_size(ft);
        hsize_t stored = H5Aget_storage_size(a);
        hid_t mt = -1;
        if (n == 0 || stored != (hsize_t)n) {
            dp_error_set(err, DP_EINVAL, "%s: attribute \"%s\" holds %llu bytes for a string of %zu (a damaged file)", path, name,
                         (unsigned long long)stored, n);
        } else if (!(s = dp_alloc_calloc(n + 1, 1))) {
            dp_error_set(err, DP_ENOMEM, "%s: out of memory for attribute \"%s\" (%zu bytes)", path, name, n);
        } else if ((mt = H5Tcopy(ft)) < 0 || H5Tset_size(mt, n + 1) < 0 || H5Tset_strpad(mt, H5T_STR_NULLTERM) < 0 ||
                   H5Aread(a, mt, s) < 0) {
            free(s);
            s = NULL;
            dp_error_set(err, DP_EINVAL, "%s: attribute \"%s\" cannot be read (a damaged file?)", path, name);
        }
        if (mt >= 0) H5Tclose(mt);
    }
    if (sp >= 0) H5Sclose(sp);
    if (ft >= 0) H5Tclose(ft);
    H5Aclose(a);
    return s;
}
