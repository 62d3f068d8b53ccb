/* dp_h5file.c: HDF5 files built in memory, written atomically (see dp_h5file.h). */
#include "dp_h5file.h"
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

/* The core driver without backing store, 1.8 format or later; the caller closes it. */
static hid_t mem_fapl(void)
{
    hid_t p = H5Pcreate(H5P_FILE_ACCESS);
    if (p < 0) return -1;
    if (H5Pset_fapl_core(p, MEM_INCREMENT, 0) < 0 || H5Pset_libver_bounds(p, H5F_LIBVER_V18, H5F_LIBVER_LATEST) < 0) {
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

/* Whether the bytes open as an HDF5 file (a last check before they replace a good file). */
static int image_opens(const void *img, size_t len)
{
    hid_t p = mem_fapl();
    if (p < 0) return 0;
    char name[64];
    mem_name(name, sizeof name, "check");
    hid_t f = H5Pset_file_image(p, (void *)img, len) >= 0 ? H5Fopen(name, H5F_ACC_RDONLY, p) : -1;
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
    if (stat(path, &st) == 0 && dp_mem_check(path, "changing this HDF5 file", 3.0 * (double)st.st_size, err) != DP_OK)
        return -1;
    size_t len = 0;
    char *img = dp_read_file(path, &len, err);
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
        img = malloc((size_t)len);
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
    int rc = dp_write_file_atomic(path, img, (size_t)len, &e);
    free(img);
    if (rc != DP_OK) return dp_error_set(err, rc, "%s (%s)", e.msg, what);
    return DP_OK;
}

void dp_h5file_discard(hid_t f)
{
    if (f >= 0) H5Fclose(f);
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
    if (f < 0) dp_error_set(err, DP_EINVAL, "%s: cannot open %s: not an HDF5 file (or a damaged one)", path, what);
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
