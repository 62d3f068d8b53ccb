/* results.h: the results of a sweep, one row per run, in an HDF5 file and a CSV beside it.
 *
 * RESULTS.h5 holds the dataset /runs: an extendible, chunked compound dataset, one element per
 * run, with the columns below (strings are fixed-length UTF-8, never HDF5's global heap:
 * dp_h5file.h; h5py and pandas read it as a structured array); its root attributes hold the
 * sweep name, the config text and the format version. RESULTS.csv (the .h5 name with .csv) holds the same rows with a header line.
 *
 * Crash safety. A finished run is appended at once as one line to the CSV, written with a single
 * write() and fsync'd. The HDF5 file is never changed in place: it is built in memory and written
 * whole to a temporary name, then renamed (dp_h5file.h), after every row while the sweep is short
 * and then whenever the rows it lacks reach 1/16 of the total (so a sweep of n runs writes O(n)
 * rows in all): during a long sweep it may lag the CSV by that much, never hold a partial row.
 * The CSV is the journal: when a sweep is started again, a CSV line cut off by a kill (the last
 * line, without a final newline; a malformed line elsewhere is an error: nothing is cut) is dropped,
 * and when the HDF5 file cannot be read or does not hold exactly the CSV's rows, it is rebuilt
 * from the CSV. So a kill loses at most the runs that were running. At the end of a sweep both
 * files are rewritten in expansion order (atomically), so a sweep run by a pool of any size, by
 * MPI ranks or by shards merged afterwards gives the same rows in the same order.
 *
 * A failed write (a full disk) is an error naming the file and the cause ("No space left on
 * device"); the CSV is cut back to its complete lines and the HDF5 file keeps its last good
 * version.
 *
 * Only one process writes a results file at a time: a lock file RESULTS.lock (flock; the stem that
 * RESULTS.h5, RESULTS.csv and RESULTS.runs share) guards
 * it. Its holder unlinks it before releasing it, and a process that locks it checks afterwards
 * that the file it locked is still the one at that path (else it starts again), so two sweeps
 * never both hold the lock.
 */
#ifndef DP_RESULTS_H
#define DP_RESULTS_H

#include <jansson.h>

#include "dp_error.h"

/* One run's row. Strings are malloc'd and never NULL ("" when absent); makespan is NaN for a
 * failed run. */
typedef struct dp_result {
    char *key;          /* the run key (sweep.h) */
    long index;         /* position in the sweep's expansion order */
    char *graph;        /* parameters copied out of params for convenience */
    char *method;
    long devices;
    char *topology;
    char *transfer;
    char *mode;
    long seed;
    long rep;
    char *status;       /* "ok" or "failed" */
    double makespan;    /* in `units` (DOPPLER units for DOPPLER files, seconds otherwise) */
    char *units;
    double seconds;     /* wall-clock seconds the method and simulation took (per repeat) */
    long episodes;      /* training episodes (0 for methods that do not train) */
    char *params;       /* canonical JSON of every parameter */
    char *metrics;      /* JSON object of further figures the method reports */
    char *assignment;   /* paths of the run's files, relative to the results file's folder */
    char *trajectory;
    char *checkpoint;
    char *error;        /* why a failed run failed */
    char *finished;     /* UTC time the run finished, ISO 8601 */
} dp_result;

/* The columns, in file order (CSV header and HDF5 member order). */
typedef enum { DP_COL_STR, DP_COL_INT, DP_COL_DBL } dp_col_type;
typedef struct dp_result_column {
    const char *name;
    dp_col_type type;
    size_t offset;      /* offsetof(dp_result, field) */
} dp_result_column;
const dp_result_column *dp_result_columns(int *n);

/* An empty row: every string "", numbers 0, makespan NaN. Returns DP_OK or DP_ENOMEM. */
int dp_result_init(dp_result *r);
void dp_result_free(dp_result *r);   /* frees the strings, not r */
int dp_result_copy(dp_result *dst, const dp_result *src);
/* Replace a string field: *field = copy of value (NULL -> ""). */
int dp_result_set(char **field, const char *value);
/* The seed a run uses when its parameters give none (every runner of run.c). */
#define DP_RESULT_SEED_DEFAULT 1
/* Fill key, index, params and the convenience columns from a run's parameters (seed: the run's
 * own, DP_RESULT_SEED_DEFAULT when absent, the seed the run uses; devices: 0 when absent, until
 * the run sets the count of the machine it simulated). */
int dp_result_set_params(dp_result *r, const char *key, long index, const json_t *params);

/* A row as a JSON object (column name -> value; NaN -> null), and back. Used to pass results
 * from worker processes and MPI ranks. from_json fills a row initialised by the caller. */
json_t *dp_result_to_json(const dp_result *r);
int dp_result_from_json(dp_result *r, const json_t *o, dp_error *err);

/* Read the /runs rows of a results file (with its config text, when wanted: malloc'd, may be
 * ""). *rows is malloc'd; free each with dp_result_free, then the array. Errors name the file.
 * Each row is checked as the CSV reader checks its lines (one function): a number that is
 * infinite, or a finished run (status ok) without a makespan (NaN), is refused naming the file,
 * the row (1-based) and the run's key. */
int dp_results_read_h5(const char *path, dp_result **rows, long *n, char **config_text, dp_error *err);
/* Read a results CSV. A last line cut off by a kill (no final newline) is not returned; *good_len
 * (may be NULL) is the byte length of the complete part. Only such a line is torn: a malformed
 * line elsewhere (a character after a quoted field other than a comma or a line end, a quote
 * never closed in a file that ends with a newline) is refused naming the line ("PATH:L:C: ' '
 * where a comma or the end of the line belongs"), so that a resumed sweep cuts nothing off its
 * journal. A number "nan" or infinite, or a finished run without a makespan, is refused naming
 * the line (the writer leaves a missing value empty), and so is a NUL byte in a complete line
 * ("PATH:L:C: a NUL byte (0x00): not a text file", dp_file_text_check). Lines are the file's: a
 * quoted field may hold a line end. */
int dp_results_read_csv(const char *path, dp_result **rows, long *n, long *good_len, dp_error *err);
/* Read a results CSV that must be whole (a reference to compare with, not a sweep's journal): as
 * dp_results_read_csv, and an empty file ("PATH: empty: no header line") or a last line cut off
 * ("PATH:LINE: the line is cut off (no final newline)") is an error (DP_EINVAL). */
int dp_results_read_csv_whole(const char *path, dp_result **rows, long *n, dp_error *err);
/* The complete rows of the CSV journal beside the results file h5_path (dp_results_csv_path) into
 * *rows (malloc'd; free each with dp_result_free, then the array): its row count, or -1 (*rows
 * NULL) when there is none or it cannot be read. A sweep killed before it wrote its last runs to
 * the HDF5 file has them there: report warns, a merge takes them. */
long dp_results_read_journal(const char *h5_path, dp_result **rows);

/* Write rows to a new HDF5 / CSV file, atomically (temporary file, then rename). */
int dp_results_write_h5(const char *path, const dp_result *rows, long n, const char *sweep_name,
                        const char *config_text, dp_error *err);
int dp_results_write_csv(const char *path, const dp_result *rows, long n, dp_error *err);

/* The CSV path beside an HDF5 path: "x.h5" -> "x.csv", otherwise PATH + ".csv". malloc'd. */
char *dp_results_csv_path(const char *h5_path);

/* ---- an open results file, for the one process that writes it ---- */
typedef struct dp_results dp_results;

/* Open (creating when absent) the results file h5_path and its CSV, taking the lock, recovering
 * from a killed sweep as described above. sweep_name and config_text are stored as attributes
 * when the file is (re)written. Errors: the lock is held by another process (DP_EIO), unreadable
 * or foreign files (DP_EINVAL, naming the file). */
dp_results *dp_results_open(const char *h5_path, const char *sweep_name, const char *config_text,
                            dp_error *err);
/* Release the lock and free. Does not rewrite anything. */
void dp_results_close(dp_results *r);
/* Write the HDF5 file when it lacks rows the CSV holds (dp_results_append writes it in batches:
 * a sweep that stops early calls this, so that report and h5py see every finished run). DP_OK,
 * or dp_results_write_h5's error (the CSV keeps the rows; the next open rebuilds from it). */
int dp_results_write_pending(dp_results *r, dp_error *err);

long dp_results_count(const dp_results *r);
/* The config text the HDF5 file held when it was opened (NULL: a new file, or one without). */
const char *dp_results_stored_config(const dp_results *r);
/* Where the rows of an opened file came from: 0 the HDF5 file (or none: a new file, or the CSV
 * with the HDF5 file behind it); 1 the CSV alone, the HDF5 file being unreadable (damaged, cut
 * off) and rewritten from it; 2 the CSV alone, the HDF5 file being absent. For a sweep to say
 * that the runs it found were recovered, not already there. dp_results_csv_of: the CSV's path. */
int dp_results_recovered(const dp_results *r);
const char *dp_results_csv_of(const dp_results *r);
const dp_result *dp_results_row(const dp_results *r, long i);
/* Row of key, or NULL. */
const dp_result *dp_results_find(const dp_results *r, const char *key);

/* Append one finished run (copied): CSV line + fsync, then (see above) the HDF5 file. A key
 * already present is an error (DP_EINVAL): every run is in the file exactly once. A failed write
 * is DP_EIO naming the file and the cause. */
int dp_results_append(dp_results *r, const dp_result *row, dp_error *err);

/* Drop the rows whose status is not "ok" (for a sweep that retries its failures); rewrites both
 * files atomically. Returns DP_OK; *dropped (may be NULL) is how many went. */
int dp_results_drop_failed(dp_results *r, long *dropped, dp_error *err);

/* Keep only the rows for which keep(row, ctx) is non-zero; rewrites both files when any went. */
int dp_results_filter(dp_results *r, int (*keep)(const dp_result *row, void *ctx), void *ctx, long *dropped,
                      dp_error *err);

/* Set the sort position of the row of key (the index in the current config). */
void dp_results_set_index(dp_results *r, const char *key, long index);

/* Rewrite both files with the rows sorted by (index, key), atomically. */
int dp_results_finalize(dp_results *r, dp_error *err);

#endif
