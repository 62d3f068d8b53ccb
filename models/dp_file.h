/* dp_file.h: whole-file reading and crash-safe (atomic) writing.
 *
 * Every file doppler writes is complete or absent: it is written to "PATH.tmp.PID.N" beside the
 * target (N counts the calls of the process, so threads never share one), flushed (fsync),
 * renamed over PATH, and the directory is synced so that the rename survives a power cut. A
 * crash leaves at most a stray .tmp file; PATH holds the old content or the new, never a mix. */
#ifndef DP_FILE_H
#define DP_FILE_H

#include <stddef.h>
#include <stdio.h>

#include "dp_error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Largest input file read whole (bytes); larger files are rejected with DP_ENOMEM. */
#define DP_FILE_MAX_BYTES ((size_t)1 << 31)

/* Read a whole file; returns a NUL-terminated malloc'd buffer (free() it) and its size in *size
 * (without the NUL). On error NULL, with DP_EIO ("PATH: No such file ...") or DP_ENOMEM. */
char *dp_file_read(const char *path, size_t *size, dp_error *err);

/* dp_file_read for a text format: a leading UTF-8 byte order mark (EF BB BF, written by some
 * Windows editors) is dropped, and a NUL byte anywhere is refused (DP_EINVAL, "PATH:LINE:COL: a
 * NUL byte (0x00): not a text file"): the parsers read C strings, so "a<NUL>x" and "a<NUL>y"
 * would silently be one name. */
char *dp_file_read_text(const char *path, size_t *size, dp_error *err);
/* The NUL check of dp_file_read_text, for a reader that needs the file's bytes as they are (byte
 * offsets into the file, a byte order mark kept): DP_OK when text (n bytes, path's content) holds
 * no NUL byte, else DP_EINVAL with "PATH:LINE:COL: a NUL byte (0x00): not a text file". */
int dp_file_text_check(const char *path, const char *text, size_t n, dp_error *err);

/* The last path component ("a/b/c.txt" -> "c.txt"); points into path. */
const char *dp_file_path_stem(const char *path);

/* Atomic write: open a temporary file beside path; write to the returned FILE*; then
 * dp_file_atomic_commit() flushes, fsyncs and renames it over path, or dp_file_atomic_abort() removes it.
 * tmp_path must hold at least 4200 bytes. "-" as path means stdout (commit just flushes).
 * Safe to call from several threads at once, for the same path too (the last commit wins, whole).
 *
 * Special files. /dev/stdout, /dev/stderr, /dev/fd/N and /proc/self/fd/N are the descriptor
 * itself, written in place at its offset and in its mode (stdout and stderr are the streams;
 * commit flushes them); replaced through the /proc link, `--out /dev/stdout >> log` lost the log.
 * When path is another symbolic link, the file it names is replaced (the link stays).
 * A character device (/dev/null, a terminal) or a FIFO is written in place, never replaced;
 * a directory, block device or socket is refused ("PATH: is a directory: ..."). Leftovers. The
 * first write of a process into a folder removes the temporary files ("NAME.tmp.PID[.N]") that
 * killed writers of this user left there, when no process PID exists any more.
 *
 * Errors name path and the cause: "PATH: write failed: No space left on device"; path is then
 * unchanged. */
FILE *dp_file_atomic_open(const char *path, char *tmp_path, size_t tmp_cap, dp_error *err);
int dp_file_atomic_commit(FILE *f, const char *tmp_path, const char *path, dp_error *err);
void dp_file_atomic_abort(FILE *f, const char *tmp_path);

/* s as one word of a POSIX shell command line, for the commands messages suggest (mkdir -p DIR,
 * doppler place ... --checkpoint FILE): s itself when every byte is a letter, digit or one of
 * _ . / : = , + - @ % (and s is not empty), else s in single quotes in buf (cap bytes), a quote
 * inside written '\''. Where buf is too small, s itself. A path with a space was printed as two
 * words, and the suggested command failed when pasted (a review). */
const char *dp_file_shell_word(const char *s, char *buf, size_t cap);

/* 1 when path names a descriptor of this process (/dev/stdout, /dev/stderr, /dev/fd/N,
 * /proc/self/fd/N, through links): dp_file_atomic_open writes such a path in place; a writer
 * that makes its file whole and renames it (HDF5 files, plots) cannot, and refuses it. */
int dp_file_is_descriptor(const char *path);

/* For writers that make their file by other means (gnuplot) and rename it over path: the file
 * to replace, in target (cap bytes): path, or the file its symbolic links name. DP_EIO when that
 * exists and is not a regular file (a device, FIFO, directory: never replaced), or when its
 * folder does not exist, is not a folder or cannot be written ("PATH: cannot write it: the folder
 * DIR does not exist ..."), so that the writer can say so before it starts; a descriptor (dp_file_is_descriptor) too. Writable means a
 * file could be made there: a temporary file beside target (dp_file_atomic_open's name) is
 * created and removed, so a folder that access() passes and that refuses new files (root on a
 * read-only or pseudo file system) is refused too; its error names path, as the write's would. */
int dp_file_output_target(const char *path, char *target, size_t cap, dp_error *err);

/* 1 when writes to the paths a and b land in the same regular file (each followed through its
 * symbolic links; an existing file by device and inode, a file not there yet by its folder's real
 * path and its name), else 0: two outputs of one command that would overwrite each other (a
 * character device or FIFO, written in place, is never such an output: 0). */
int dp_file_same_output(const char *a, const char *b);

/* Memory this process may use, in bytes: physical memory, lowered to what the kernel reports
 * available now (MemAvailable), to RLIMIT_AS / RLIMIT_DATA and to the environment variable
 * DOPPLER_MEM_LIMIT when set (a positive number of bytes, then optionally K, M or G, powers of
 * 1024, and optionally B or iB: "512M", "1.5GiB"; a malformed value is not used here, and
 * dp_file_mem_check refuses it). */
size_t dp_file_mem_limit(void);

/* Readers call this with an estimate of what an input will make them allocate, before they
 * allocate it, so that a hostile or mistaken count is refused with a message instead of ending
 * in the kernel's out-of-memory killer (Linux overcommits: malloc rarely fails). Returns DP_OK,
 * DP_ENOMEM with "PATH: WHAT needs about N MiB of memory, more than the M KiB available" (each in
 * the unit that shows it), or DP_EINVAL naming DOPPLER_MEM_LIMIT when its value is malformed
 * ("abc", "0", "10X" were taken as no limit, without a word: a review). */
int dp_file_mem_check(const char *path, const char *what, double bytes, dp_error *err);
/* DP_OK when DOPPLER_MEM_LIMIT is unset, empty or well formed (dp_file_mem_limit), else
 * DP_EINVAL naming it and its value: what a program checks once at its start, as some allocations
 * are too small to reach dp_file_mem_check (a small graph gen accepted "abc": a review). */
int dp_file_mem_env_check(dp_error *err);


/* Write a whole buffer atomically. */
int dp_file_write_atomic(const char *path, const void *data, size_t len, dp_error *err);

#ifdef __cplusplus
}
#endif
#endif
