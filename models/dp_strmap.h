/* dp_strmap.h (internal, not installed): a string -> int map for the graph readers (op and file
 * names -> indices): open addressing on FNV-1a, capacity a power of two kept at least twice the
 * entries. Keys are borrowed, not copied: they must outlive the map. */
#ifndef DP_STRMAP_H
#define DP_STRMAP_H

#include <stddef.h>

/* A string -> int map (open addressing, FNV-1a); keys are borrowed, not copied. */
typedef struct dp_strmap {
    const char **key;
    int *val;
    size_t cap, n;
} dp_strmap;

/* An empty map sized for about `expect` keys. DP_OK, or DP_ENOMEM (then dp_strmap_free). */
int dp_strmap_init(dp_strmap *m, size_t expect);
void dp_strmap_free(dp_strmap *m);
/* Value of key, or -1. */
int dp_strmap_get(const dp_strmap *m, const char *key);
/* Insert key -> val unless present; returns the value now stored (the old one if present), or
 * DP_ENOMEM (negative) when growing fails. */
int dp_strmap_put(dp_strmap *m, const char *key, int val);

#endif
