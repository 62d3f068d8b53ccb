/* dp_error.h: the error record every fallible doppler function fills.
 *
 * Functions that can fail return an int status (DP_OK = 0, or a negative DP_E* code) and,
 * when given a non-NULL dp_error, write a one-line message that names the file and the place
 * (line, field, op) of the fault. No library function prints or exits: only experiments/ does.
 */
#ifndef DP_ERROR_H
#define DP_ERROR_H

#include <stddef.h>

/* the checked allocators (dp_alloc_malloc_n, ...) every module uses, declared by their module */
#include "dp_alloc.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
    DP_OK = 0,
    DP_EINVAL = -1,  /* malformed input: bad syntax, wrong count, value out of range */
    DP_EIO = -2,     /* a file could not be opened, read or written */
    DP_ENOMEM = -3,  /* allocation failed, or a size beyond what memory can hold */
    DP_ECYCLE = -4,  /* the graph has a cycle */
    DP_ERANGE = -5,  /* a resource limit was exceeded (memory capacity, ...) */
    DP_EUNSUPPORTED = -6
};

#define DP_ERROR_MSG_MAX 1024

typedef struct dp_error {
    int code;                    /* last status written, DP_OK when none */
    char msg[DP_ERROR_MSG_MAX];  /* "FILE:LINE: what is wrong" style message */
} dp_error;

/* Clear an error record (code DP_OK, empty message). err may be NULL. */
void dp_error_clear(dp_error *err);

/* Record an error: code and a printf-style message. err may be NULL (then nothing is kept).
 * Returns code, so a caller can write `return dp_error_set(err, DP_EINVAL, "...")`. */
int dp_error_set(dp_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Prefix the existing message with "prefix: " (for adding a file name or context). */
void dp_error_prefix(dp_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* s as a message may show it (for a name or field read from a file, echoed in a message that
 * reaches a terminal): a control byte (below 0x20, 0x7f, and the C1 controls U+0080..U+009F,
 * which some terminals obey) is written as a C escape (\x1b, \r, \n, \t), a backslash as \\,
 * every other byte as it is. Written into buf (cap bytes, always
 * NUL-terminated) and cut with "..." when it does not fit; returns buf ("" when cap is 0, "(null)"
 * for a NULL s). */
const char *dp_error_visible(const char *s, char *buf, size_t cap);

/* A short name for a status code ("invalid input", "cycle", ...). */
const char *dp_error_string(int code);

#ifdef __cplusplus
}
#endif
#endif
