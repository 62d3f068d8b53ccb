/* sweep.h: experiment sweep configs and their expansion into runs.
 *
 * A sweep config is a JSON object (doc/sweep-format.md):
 *
 *   { "name": "table1",                      optional, default: the file stem
 *     "description": "...",                  optional
 *     "fixed": { "devices": 4, ... },        parameters every run shares
 *     "grid":  { "graph": [...], "method": [...], "seed": [1, 2, 3] },
 *              or an array of such objects (a union of grids, e.g. one per method family)
 *     "repetitions": 1,                      optional: each point is run R times (rep 0..R-1)
 *     "tables": {...} }                      optional: report tables (see report.h)
 *
 * Expansion is deterministic: sub-grids in order; within one, nested loops over the axes in the
 * order the config lists them (first axis slowest), then rep innermost. A run's parameters are
 * fixed + its grid point + {"rep": r}. Its key is a 64-bit FNV-1a hash of the canonical text of
 * its parameters (JSON, keys sorted, compact, reals with 17 significant digits), written as 16
 * hex digits: it does not depend on the order of keys in the file, nor on the run's position, so
 * a sweep extended with more seeds or methods keeps the keys (and results) of the runs it had.
 * Two grid points with the same parameters are one run (the first position counts).
 */
#ifndef DP_SWEEP_H
#define DP_SWEEP_H

#include <jansson.h>
#include <stdint.h>

#include "dp_error.h"
#include "dp_schema.h"

#define DP_SWEEP_KEY_LEN 16
/* Largest number of runs one config may expand to. */
#define DP_SWEEP_MAX_RUNS 10000000L

typedef struct dp_sweep_run {
    long index;                       /* position in the expansion order, 0.. */
    char key[DP_SWEEP_KEY_LEN + 1];   /* 16 lowercase hex digits */
    json_t *params;                   /* object of every parameter (owned) */
    char *params_text;                /* its canonical JSON text */
} dp_sweep_run;

typedef struct dp_sweep {
    char *name;
    char *path;         /* the config file ("" when built from a value) */
    char *dir;          /* its directory, for resolving relative paths ("." when none) */
    json_t *config;     /* the whole config value (owned) */
    char *config_text;  /* the config, compact JSON, as stored in result files */
    long n_runs;
    dp_sweep_run *runs; /* n_runs, in expansion order */
} dp_sweep;

/* The top-level keys of a sweep config as a table (dp_schema.h): "name" (a plain file name of at
 * most 200 bytes; not given: the file's stem) and "repetitions" (1..100000, default 1) are read
 * into this; "description", "comment" (free), "fixed", "grid" (maps of parameters, checked run by
 * run against the method table by dp_run_check before a sweep runs) and "tables" (report tables,
 * report.h) are the top level's other keys; anything else is refused naming the file and the key
 * ("plots", once documented and never read, with a message that says so). */
typedef struct dp_sweep_config {
    char name[201];  /* "" when not given */
    int repetitions;
} dp_sweep_config;

/* A report table object's ("tables": {"T": {...}}) scalar keys as a table, over dp_report_spec
 * (report.h): cols, metric, title, digits; and its other keys (rows, baselines, columns, filter,
 * labels, references, comment), NULL-ended, which dp_report_spec_from_json reads itself. */
extern const dp_schema_key dp_sweep_table_keys[];
extern const char *const dp_sweep_table_others[];

/* The sections of a sweep config (the top level; fixed, grid and tables.T described),
 * for doppler config sweep and the man page. */
const dp_schema_section *dp_sweep_config_sections(void);

/* Load and expand a config file. Errors (DP_EINVAL, DP_EIO) name the file and the field:
 * unknown top-level keys, a grid axis that is not a non-empty array of scalars, a parameter in
 * both grid and fixed, a parameter name other than [a-z0-9_], "rep" given by hand, too many runs,
 * a table that report would refuse (read by dp_report_spec_from_json and dp_report_spec_check,
 * report.h; its rows, cols, filter keys and baselines the runs'). */
dp_sweep *dp_sweep_load(const char *path, dp_error *err);

/* The same from a parsed value (a reference is taken); path names the source in messages and
 * sets dir (NULL: "."). */
dp_sweep *dp_sweep_from_json(json_t *config, const char *path, dp_error *err);

void dp_sweep_free(dp_sweep *s);

/* Canonical text of a parameter object (JSON, sorted keys, compact, %.17g reals); malloc'd. */
char *dp_sweep_canonical(const json_t *params);

/* 64-bit FNV-1a of a NUL-terminated string. */
uint64_t dp_sweep_hash(const char *text);

/* The key of a parameter object: 16 hex digits of dp_sweep_hash("dp1:" + canonical text). */
void dp_sweep_key(const json_t *params, char key[DP_SWEEP_KEY_LEN + 1]);

/* Parse "I/N" (0 <= I < N): returns 0, or -1 when malformed. Run k belongs to shard I when
 * k mod N == I (round robin, so each shard gets a slice of every axis). */
int dp_sweep_parse_shard(const char *text, int *i, int *n);
static inline int dp_sweep_in_shard(long index, int i, int n) { return n <= 1 || index % n == i; }

/* A duration as the progress lines write it: "42s", "3m07s", "2h05m" (rounded to the second),
 * "?" when negative or not finite. */
void dp_sweep_format_duration(double s, char *buf, size_t cap);
/* The ETA of a progress line: "0s" when no run remains; else left_s, the estimate of the runs
 * whose method has a finished run, as a duration, and when unknown names a method without one
 * (its runs not counted), "more than D (no METHOD run finished yet)", or "unknown (no METHOD run
 * finished yet)" when D would be 0s. */
void dp_sweep_eta_text(long remaining, double left_s, const char *unknown, char *buf, size_t cap);

/* Parameter access: *out = params[name] as a string / integer / number, or def when absent.
 * An integer also reads as a number; a real with an integral value reads as an integer.
 * Returns DP_OK, or DP_EINVAL naming the parameter when it has another type. */
int dp_sweep_param_str(const json_t *params, const char *name, const char *def, const char **out,
                       dp_error *err);
int dp_sweep_param_int(const json_t *params, const char *name, long def, long *out, dp_error *err);
int dp_sweep_param_num(const json_t *params, const char *name, double def, double *out,
                       dp_error *err);

#endif
