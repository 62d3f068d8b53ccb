/* dp_h5file.h: HDF5 files built in memory and written through the checked atomic writer.
 *
 * Why. A file that HDF5 writes on disk fails late: with a full disk the error comes from
 * H5Dclose or H5Fclose, a failed H5Fclose leaves the half-closed file in HDF5's identifier table
 * (libhdf5 1.10 then crashes at exit trying to close it again), and a failed flush of a dataset
 * can leave rows of zeros in a file that otherwise reads well. So every HDF5 file doppler writes
 * is built in memory (the core driver without a backing store: no call touches the disk), its
 * bytes are taken (H5Fget_file_image), the in-memory file is closed (which cannot fail for lack
 * of disk), and the bytes go through dp_file_write_atomic (dp_file.h): a temporary name beside
 * the target, every write and the fsync checked, then a rename. A failed write leaves the
 * previous file as it was and reports "PATH: write failed: No space left on device".
 *
 * Changing an existing file (appending rows, truncating) reads its bytes into memory first
 * (dp_h5file_open_image), changes the copy and commits it the same way. Memory: about three times
 * the file's size while a change is made; dp_file_mem_check refuses beforehand what would not fit.
 *
 * HDF5 is not thread-safe in Debian's serial build: callers serialise their HDF5 calls.
 */
#ifndef DP_H5FILE_H
#define DP_H5FILE_H

#include <hdf5.h>

#include "dp_error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A new, empty HDF5 file in memory (file format 1.10 or later: superblock and object headers
 * carry checksums, and a dataset stored as one chunk has no chunk B-tree, which in the 1.8
 * format took about 2.6 kB per dataset: a small checkpoint of 146 tensors was 464 kB, 380 kB
 * of it chunk indexes; files need HDF5 1.10 or later to read). path only names it in messages. Returns the file id, or -1 with
 * DP_EIO in err. */
hid_t dp_h5file_create(const char *path, dp_error *err);

/* Read the HDF5 file at path into memory and open that copy for reading and writing; path is
 * not touched again until dp_h5file_commit. Returns the file id, or -1 with err: DP_EIO
 * ("PATH: No such file or directory", "PATH: is a directory", ...), DP_ENOMEM (too large for
 * the memory left), DP_EINVAL ("PATH: not an HDF5 file"). */
hid_t dp_h5file_open_image(const char *path, dp_error *err);

/* Take the bytes of the in-memory file f, close f (always, also on error), and write them
 * atomically to path. what names the file's role in messages ("the checkpoint"). Returns DP_OK,
 * or DP_EIO naming path and the cause (strerror of the failed call); path is then unchanged. */
int dp_h5file_commit(hid_t f, const char *path, const char *what, dp_error *err);

/* Recompute the checksum of the superblock at the start of an HDF5 file image (versions 2 and 3;
 * versions 0 and 1 have none). H5Fget_file_image in libhdf5 1.10 clears the superblock's
 * "open for writing" flags in the copy it returns but leaves the checksum of the flagged
 * superblock, so that the copy does not open; dp_h5file_commit calls this. Returns 0, or -1 when
 * the bytes do not start with an HDF5 superblock. */
int dp_h5file_superblock_fix(void *image, size_t len);

/* Close an in-memory file without writing it (after an error). */
void dp_h5file_discard(hid_t f);

/* Open an HDF5 file on disk read-only. Returns the id, or -1 with err naming path and why: the
 * system's reason when the file cannot be opened at all ("No such file or directory",
 * "Permission denied", "is a directory"), otherwise "not an HDF5 file (or a damaged one)". */
hid_t dp_h5file_open_read(const char *path, const char *what, dp_error *err);

/* The dataset creation property list used for fixed-size arrays of rank dims (whole-array
 * chunks with HDF5's Fletcher32 checksum filter, so that a flipped bit is refused on reading
 * instead of loaded), or H5P_DEFAULT for an empty array. Close with H5Pclose unless it is
 * H5P_DEFAULT. Returns -1 on an HDF5 error. */
hid_t dp_h5file_checked_dcpl(int rank, const hsize_t *dims);

/* Strings. Every string doppler writes into HDF5 is fixed-length UTF-8 (null-terminated, as
 * long as the text plus its NUL), stored inside the attribute or dataset that holds it. None goes
 * to HDF5's global heap, where variable-length strings live: libhdf5 1.10 reads a damaged global
 * heap collection in an endless loop (H5T__conv_vlen -> H5HG_read; a 2 kB crafted checkpoint
 * found by fuzz_checkpoint, tests/bad-h5/checkpoint-hang-1.h5), and no caller can bound that call
 * from outside. So the readers never convert a variable-length string from a file: one is
 * refused with a message naming the file and the attribute (the files of earlier versions, which
 * held them, are to be written again by this version). */

/* Create the scalar attribute name on loc holding s as a fixed-length UTF-8 string (an existing
 * attribute of that name is replaced). Returns 0, or -1 on an HDF5 error. */
int dp_h5file_attr_write_str(hid_t loc, const char *name, const char *s);

/* The fixed-length string type of dp_h5file_attr_write_str for a text of len bytes (size len + 1,
 * null-terminated, UTF-8). Close with H5Tclose. Returns -1 on an HDF5 error. */
hid_t dp_h5file_str_type(size_t len);

/* The scalar string attribute name of loc, malloc'd (free it), or NULL with err naming path
 * (the file, in messages) and the attribute: DP_EINVAL when it is absent, not a single string, or
 * damaged (its stored size is not its type's size); DP_EUNSUPPORTED for a variable-length string,
 * refused unread ("PATH: attribute "NAME" is a variable-length string, which this version does
 * not read ..."); DP_ENOMEM when it does not fit in memory. */
char *dp_h5file_attr_read_str(hid_t loc, const char *path, const char *name, dp_error *err);

/* Whether a string type read from a file is one the readers refuse to convert: a
 * variable-length string, or a compound or array holding one (1), else 0. */
int dp_h5file_type_has_vlen_str(hid_t type);

#ifdef __cplusplus
}
#endif
#endif
