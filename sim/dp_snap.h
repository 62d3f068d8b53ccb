/* dp_snap.h (internal, not installed): a byte cursor that saves a simulator's state into a
 * buffer or restores it from one, for the general engine's delta runs (dp_hisim.h: snapshots of
 * the event state, issue 31 item 1) and the transfer models' states (dp_transfer_model.h).
 *
 * One function serves both directions (dp_snap_io: save appends the bytes at p to the buffer,
 * restore copies the next bytes of the buffer to p), so a component's state is written by one
 * function that lists its fields once, and what it saves and what it restores cannot differ.
 * A field whose length varies from one state to the next (a heap's live elements) is listed
 * after its length; on restore the owner reads the length first and makes room before the
 * elements (dp_snap_restoring). */
#ifndef DP_SNAP_H
#define DP_SNAP_H

#include <stddef.h>
#include <string.h>

#include "dp_alloc.h"

typedef struct dp_snap {
    unsigned char *buf; /* the state's bytes (owned by the caller's slot) */
    size_t pos, cap;    /* bytes written or read so far; bytes allocated */
    int restore;        /* 0: save (the buffer grows), 1: restore */
    int failed;         /* save: out of memory (the state is incomplete; nothing more is written) */
} dp_snap;

/* A cursor that saves into buf (cap bytes, may be NULL and 0: it grows by dp_alloc_realloc; the
 * caller takes buf and cap back from the cursor) or restores from it. */
static inline dp_snap dp_snap_begin(unsigned char *buf, size_t cap, int restore)
{
    dp_snap sn = {.buf = buf, .pos = 0, .cap = cap, .restore = restore, .failed = 0};
    return sn;
}

static inline int dp_snap_restoring(const dp_snap *sn)
{
    return sn->restore;
}

/* bytes at p to the state (save) or from it (restore) */
static inline void dp_snap_io(dp_snap *sn, void *p, size_t bytes)
{
    if (sn->failed || bytes == 0) return;
    if (sn->restore) {
        memcpy(p, sn->buf + sn->pos, bytes);
        sn->pos += bytes;
        return;
    }
    if (bytes > sn->cap - sn->pos) {
        size_t nc = sn->cap ? sn->cap : 4096;
        while (nc - sn->pos < bytes) nc *= 2;
        unsigned char *b = dp_alloc_realloc(sn->buf, nc);
        if (!b) {
            sn->failed = 1;
            return;
        }
        sn->buf = b;
        sn->cap = nc;
    }
    memcpy(sn->buf + sn->pos, p, bytes);
    sn->pos += bytes;
}

/* one variable (an lvalue) */
#define DP_SNAP_VAR(sn, x) dp_snap_io((sn), &(x), sizeof(x))

#endif
