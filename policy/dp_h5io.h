/* dp_h5io.h: HDF5 files of a training run: the trajectory file and checkpoints
 * (layout of doc/file-formats.md, which also shows how to read them from Python).
 *
 * Trajectory file (one per run, appended to at every checkpoint):
 *   /                   attributes: format "doppler-trajectory", version 3 (DP_H5IO_TRAJ_VERSION),
 *                       graph, n_ops,
 *                       n_devices, oracle, time_unit, config (JSON text of the run's config),
 *                       run_id (the training run's identifier, also in its checkpoint)
 *   /episodes/NAME      1-D extendible chunked datasets, one row per episode:
 *                       stage (int32: 0 il, 1 sim, 2 real), episode (int64, index in its stage),
 *                       seed (uint64, the episode's GSL seed), makespan (double, printed unit),
 *                       reward (double), wall_s (double, seconds of the episode's rollout alone), lr, epsilon
 *                       (double), sel_agree, plc_agree (double: fraction of steps whose choice is
 *                       one of the critical-path heuristic's; a tie counts as agreement),
 *                       step_offset (int64), n_steps (int32)
 *   /steps/NAME         one row per step; rows step_offset .. step_offset + n_steps - 1 of an
 *                       episode: sel_op (int32, the op SEL picked), sel_logp (float), ready
 *                       (int32, ready-set size), plc_device (int32), plc_logp (float)
 *   /evaluations/NAME   one row per model-selection evaluation (version 2; absent in version 1
 *                       files, which read as having none): stage (int32), episode (int64, the
 *                       stage's episodes done when evaluated: 0 at its start), makespan (double,
 *                       printed unit: the greedy placement's), best (double, printed unit: the
 *                       best greedy makespan of the stage so far, the model-selected one),
 *                       simulations (int64, oracle calls of the run so far, this one included),
 *                       unix_s (double, wall-clock time, seconds since 1970-01-01 UTC)
 * h5py: f["episodes/makespan"][:]; pandas: pd.DataFrame({k: f["episodes"][k][:] for k in ...});
 * string attributes are fixed-length UTF-8 (bytes in h5py: f.attrs["config"].decode()).
 *
 * Every change (create, append at each flush, truncate) is made on a copy in memory that is then
 * written whole to a temporary name and renamed over the file (dp_h5file.h), so a crash or a full
 * disk at any moment leaves a complete, readable file (h5dump, h5py) with the rows it had. A
 * resumed run first truncates it to the rows its checkpoint accounts for. Every dataset carries
 * HDF5's Fletcher32 checksum.
 *
 * Checkpoint file (written whole to a temporary name, then renamed):
 *   /   attributes: format "doppler-checkpoint", version 3 (DP_H5IO_CKPT_VERSION), trained_on (JSON text: {"train": [{"graph",
 *       "n_ops", "n_devices", "costs", "engine"}, ...], "validation": [...]}; costs: dp_cost_fingerprint in
 *       16 hexadecimal digits, absent in files before 2026-12-02; engine: dp_engine_fingerprint
 *       likewise, the simulator beyond the costs, absent before 2026-12-06 and without a
 *       simulator; what the parameters were trained and model-selected on), features (the PLC's device feature set, "doppler" or "engine"),
 *       graph, n_ops, n_devices (the run's first training graph: what --resume and
 *       best_assignment refer to), config
 *       (JSON), run_id (string; absent in older files), stage (int32), episode (int64, episodes done in that stage), running_sum (double),
 *       running_count (int64), best_makespan (double, raw unit), traj_episodes, traj_steps,
 *       traj_evaluations (int64; absent before version 2 of the trajectory), simulations (int64,
 *       oracle calls of the run so far; absent in older files), stage_simulations0 (int64, those
 *       calls when the current stage began; absent in older files), last_greedy (double, the
 *       latest greedy makespan the progress lines show: model selection's last evaluation or
 *       the batch's greedy baseline, raw unit or a mean ratio; absent in older files), seconds and
 *       stage_seconds0 (double: wall seconds of the run's training so far, and when its stage
 *       began, so that a resumed run reports the whole run's; absent in older files),
 *       rng_name (string); when written
 *       with a time_scale: time_unit (string, the printed unit), time_scale (double: printed =
 *       raw / time_scale), best_makespan_printed and best_greedy_printed (double, printed unit)
 *   /rng_state        uint8 (the GSL generator's state bytes: gsl_rng_state / gsl_rng_size)
 *   /best_assignment  int32 (n_ops)
 *   /sil_makespan, /sil_ops, /sil_dev  the self-imitation buffer when it holds placements
 *                     (attribute sil_n: double (sil_n), int32 (sil_n, n_ops) twice); attribute
 *                     stale: int64, evaluations without improvement (patience)
 *   /sil_graph_n, /sil_all_makespan, /sil_all_ops, /sil_all_dev  with several graphs, every
 *                     graph's buffer instead (attribute sil_graphs: int32 (sil_graphs), double
 *                     (sum of sil_graph_n), int32 (sum of sil_graph_n x the graph's ops) twice,
 *                     graph by graph)
 *   /sel, /plc        groups (another method's own names: dp_h5io_ckpt.blocks, the improvement
 *                     method's /op and /move), each with attribute adam_t (int64) and groups param, adam_m,
 *                     adam_v (and best, when has_best: attribute best_greedy at the root)
 *                     holding one float dataset (rows, cols) per tensor, by name.
 * Every checkpoint dataset is chunked whole with HDF5's Fletcher32 checksum: a flipped bit is
 * refused at load ("PATH: /sel/param/W1 fails its checksum ...: the file is damaged").
 *
 * Errors of the writers: DP_EIO naming the file and the cause ("PATH: write failed: No space
 * left on device"); the file at PATH is then the one before the call, whole.
 */
#ifndef DP_H5IO_H
#define DP_H5IO_H

#include <stddef.h>
#include <stdint.h>

#include "dp_error.h"
#include "dp_nn.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dp_h5io_traj_episode {
    int32_t stage;
    int64_t episode;
    uint64_t seed;
    double makespan, reward, wall_s, lr, epsilon, sel_agree, plc_agree;
    int64_t step_offset;
    int32_t n_steps;
} dp_h5io_traj_episode;

typedef struct dp_h5io_traj_eval {
    int32_t stage;
    int64_t episode;      /* the stage's episodes done when evaluated */
    double makespan;      /* the greedy placement's, printed unit */
    double best;          /* best greedy makespan of the stage so far, printed unit */
    int64_t simulations;  /* oracle calls of the run so far, this evaluation included */
    double unix_s;        /* wall-clock time, seconds since the Unix epoch */
} dp_h5io_traj_eval;

typedef struct dp_h5io_traj_step {
    int32_t sel_op;
    float sel_logp;
    int32_t ready;
    int32_t plc_device;
    float plc_logp;
} dp_h5io_traj_step;

/* Create a new, empty trajectory file (atomically) with its attributes; run_id (may be NULL: "")
 * identifies the training run (dp_h5io_run_id_new), so that a resume can refuse another run's
 * trajectory. */
int dp_h5io_traj_create(const char *path, const char *graph, int n_ops, int n_devices, const char *oracle,
                   const char *time_unit, const char *config_json, const char *run_id, dp_error *err);
/* DP_OK when path is a trajectory file of this format version (DP_H5IO_TRAJ_VERSION); otherwise
 * the refusal every reader gives: DP_EUNSUPPORTED for a file of versions 1 and 2 (variable-length
 * strings, not read: "PATH: attribute "format" is a variable-length string ..."), DP_EINVAL for
 * another file ("PATH: not a doppler trajectory file") or version ("PATH: trajectory format
 * version 4, this build reads version 3 only"), DP_EIO when it cannot be opened. The Python
 * package's read_trajectory calls it first. */
int dp_h5io_traj_check(const char *path, dp_error *err);
/* The run_id attribute of a trajectory file into run_id (cap bytes; "" for a file of an older
 * version without one); the file's format and version checked as dp_h5io_traj_check does. */
int dp_h5io_traj_run_id(const char *path, char *run_id, size_t cap, dp_error *err);
/* Number of episode and step rows in an existing file. */
int dp_h5io_traj_count(const char *path, long *n_episodes, long *n_steps, dp_error *err);
/* The same and the evaluation rows (n_evaluations may be NULL; 0 for a version 1 file). */
int dp_h5io_traj_count_rows(const char *path, long *n_episodes, long *n_steps, long *n_evaluations, dp_error *err);
/* Cut the file down to its first n_episodes and n_steps rows (resume); evaluations kept. */
int dp_h5io_traj_truncate(const char *path, long n_episodes, long n_steps, dp_error *err);
/* The same and its first n_evaluations evaluation rows (< 0: keep them all, for a checkpoint that
 * does not count them). DP_EINVAL when the file has fewer rows of any kind than asked. */
int dp_h5io_traj_truncate_rows(const char *path, long n_episodes, long n_steps, long n_evaluations, dp_error *err);
/* Append rows (the file is changed in memory and written whole). */
int dp_h5io_traj_append(const char *path, const dp_h5io_traj_episode *ep, long n_ep, const dp_h5io_traj_step *st, long n_st,
                   dp_error *err);
/* The same with evaluation rows (ev may be NULL when n_ev is 0); a version 1 file gets the
 * /evaluations group at its first evaluation rows. */
int dp_h5io_traj_append_rows(const char *path, const dp_h5io_traj_episode *ep, long n_ep, const dp_h5io_traj_step *st, long n_st,
                        const dp_h5io_traj_eval *ev, long n_ev, dp_error *err);

/* A whole trajectory file as read back: the one reader of the layout above (experiments/report.c
 * and the Python package's read_trajectory use it). Strings malloc'd ("" when the file has none);
 * rows in file order, n_episodes x dp_h5io_traj_episode, n_steps x dp_h5io_traj_step (episode
 * i's steps are rows step_offset .. step_offset + n_steps - 1), n_evaluations x dp_h5io_traj_eval
 * (0 and NULL when the file has no /evaluations group). */
typedef struct dp_h5io_traj {
    int version;            /* DP_H5IO_TRAJ_VERSION */
    int n_ops, n_devices;
    char *graph, *oracle, *time_unit, *config_json, *run_id;
    long n_episodes, n_steps, n_evaluations;
    dp_h5io_traj_episode *episodes;
    dp_h5io_traj_step *steps;
    dp_h5io_traj_eval *evaluations;
} dp_h5io_traj;
/* Read the trajectory file at path into t (free it with dp_h5io_traj_free; zeroed on error).
 * Errors: those of dp_h5io_traj_check (not a trajectory, another version, an unreadable file);
 * DP_EINVAL naming the dataset when a column is missing, of another length than its group's
 * first, or fails its checksum ("PATH: /episodes/makespan cannot be read ..."); DP_ENOMEM. */
int dp_h5io_traj_read(const char *path, dp_h5io_traj *t, dp_error *err);
/* Free what dp_h5io_traj_read put in *t (its strings and rows) and zero it (a second free is
 * harmless); the struct itself is the caller's. NULL is a no-op. */
void dp_h5io_traj_free(dp_h5io_traj *t);

/* Reading a trajectory without laying out dp_h5io_traj and its rows (bindings: Python's
 * read_trajectory).
 *   dp_h5io_traj_open: a dp_h5io_traj on the heap, read from path (dp_h5io_traj_read's errors);
 *     NULL on error. dp_h5io_traj_close frees it and its rows (NULL is a no-op).
 *   dp_h5io_traj_get_int: attribute "version", "n_ops" or "n_devices"; -1 for another name.
 *   dp_h5io_traj_get_text: attribute "graph", "oracle", "time_unit", "config" (JSON text) or
 *     "run_id" (NUL-ended, "" when the file has none); NULL for another name.
 *   dp_h5io_traj_get_n_rows: rows of table "episodes", "steps" or "evaluations"; -1 for another.
 *   dp_h5io_traj_column_name, dp_h5io_traj_column_type: column i (from 0) of a table, in the
 *     file's order (the fields of dp_h5io_traj_episode, _step, _eval), and its type: 'i' int32,
 *     'l' int64, 'u' uint64, 'f' float, 'd' double; NULL and 0 past the end or for another table.
 *   dp_h5io_traj_get_column: the column's values, one per row of the table, written to out
 *     (n_rows elements of the column's type, packed). DP_EINVAL naming the table or column when
 *     either is unknown (out untouched). */
dp_h5io_traj *dp_h5io_traj_open(const char *path, dp_error *err);
void dp_h5io_traj_close(dp_h5io_traj *t);
int dp_h5io_traj_get_int(const dp_h5io_traj *t, const char *name);
const char *dp_h5io_traj_get_text(const dp_h5io_traj *t, const char *name);
long dp_h5io_traj_get_n_rows(const dp_h5io_traj *t, const char *table);
const char *dp_h5io_traj_column_name(const char *table, int i);
char dp_h5io_traj_column_type(const char *table, int i);
int dp_h5io_traj_get_column(const dp_h5io_traj *t, const char *table, const char *column, void *out, dp_error *err);

/* Format versions. 3 (this one): every string attribute is fixed-length UTF-8 (h5py reads it as
 * bytes: .decode()). Versions 1 and 2 held variable-length strings, which the readers refuse
 * unread with "PATH: attribute "format" is a variable-length string ..." (DP_EUNSUPPORTED): a
 * damaged global heap makes libhdf5 1.10 spin forever converting one (dp_h5file.h); such files are
 * to be made again by this version (train again, or h5py on a trusted file: rewrite each string
 * attribute as numpy.bytes_). */
#define DP_H5IO_CKPT_VERSION 3
#define DP_H5IO_TRAJ_VERSION 3

typedef struct dp_h5io_ckpt {
    const char *graph;       /* write: graph name; read: malloc'd */
    int n_ops, n_devices;
    int same_graph;          /* read: 1 (resume): the file must be of a run on n_ops ops and
                                n_devices devices, and best_assignment (n_ops) is read; 0 (--init,
                                place: the parameters only, for any graph) neither */
    const char *trained_on;  /* write: JSON text (see above); NULL: "{}" */
    const char *features;    /* write: the device feature set's name */
    char *config_json;       /* write: the config; read: malloc'd */
    char run_id[40];         /* the training run's identifier ("" in files of older versions) */
    int32_t stage;
    int64_t episode;
    double running_sum;
    int64_t running_count;
    double best_makespan;
    int *best_assignment;    /* (n_ops) caller's buffer, both ways */
    int64_t traj_episodes, traj_steps;
    int64_t traj_evaluations; /* trajectory evaluation rows; read: -1 when the file has none */
    int64_t simulations;      /* oracle calls of the run so far; read: 0 when the file has none */
    int64_t stage_simulations0; /* oracle calls of the run when the current stage began (so a
                               * resumed stage reports the stage's total); read: -1 when the file
                               * has none */
    int64_t stale;            /* model-selection evaluations in a row without improvement (a stage's
                                 patience); read: 0 when the file has none */
    double seconds;           /* wall seconds of the run's training so far, earlier processes of a
                                 resumed run included; read: -1 when the file has none */
    double stage_seconds0;    /* those seconds when the current stage began; read: -1 when none */
    double last_greedy;       /* the latest greedy makespan (dp_runtime_select.last_score); read: NAN
                                 when the file has none (a resumed run's progress lines showed 0
                                 until its next evaluation: a review) */
    /* the self-imitation buffer (dp_train.h: sil_k best placements, as step sequences): sil_n
     * placements, their makespans (sil_n) and their ops and devices step by step (sil_n x n_ops);
     * write: the caller's arrays (sil_n 0: none written); read (same_graph only): malloc'd here
     * (free them), sil_n 0 and NULL when the file has none */
    int sil_n;
    double *sil_ms;
    int *sil_ops, *sil_dev;
    /* several bound graphs (dp_train_add_graph): every graph's buffer, graph by graph, instead of
     * the one-graph form above. sil_graphs graphs; sil_graph_ops and sil_graph_devices (caller's,
     * sil_graphs each, both ways): each graph's op and device count; sil_graph_n (sil_graphs):
     * each graph's placements; sil_all_ms (sum of sil_graph_n) their makespans, and sil_all_ops,
     * sil_all_dev (sum over the graphs of sil_graph_n x its ops) their ops and devices step by
     * step, concatenated in graph order. write: the caller's arrays (sil_graphs 0 or no placement:
     * none written); read (same_graph and sil_graphs > 0 only): the caller sets sil_graphs and the
     * two count arrays to its graphs', a file of another number of graphs is refused (DP_EINVAL),
     * placements out of their graph's op or device range too, and sil_graph_n
     * and the three arrays are malloc'd here (free them; NULL when the file has none) */
    int sil_graphs;
    const int *sil_graph_ops, *sil_graph_devices;
    int *sil_graph_n;
    double *sil_all_ms;
    int *sil_all_ops, *sil_all_dev;
    const char *time_unit;    /* write only: the printed unit (NULL: "") */
    double time_scale;        /* write only: printed = raw / time_scale; 0: no printed-unit attributes */
    char rng_name[64];
    unsigned char *rng_state;/* caller's buffer of rng_size bytes, both ways */
    size_t rng_size;
    /* the parameters whose greedy placement was best at the checkpoint evaluations so far
     * (dp_train.h), stored as /sel/best and /plc/best; the caller's buffers of sel->n and
     * plc->n floats, both ways (NULL: none); has_best says whether they hold any */
    float *sel_best, *plc_best;
    int has_best;
    double best_greedy;      /* raw unit; INFINITY when none */
    /* a method's own training state beyond the fields above (the improvement method's
     * per-graph best placements and model-selection counters, dp_improve.h), so that its runs
     * resume exactly too:
     * method_state: JSON text (attribute "method_state"); write: NULL for none; read (only when
     *   read_method_state is 1): malloc'd, free it; NULL when the file has none;
     * method_ints: the caller's buffer of n_method_ints ints, both ways (dataset "method_ints";
     *   write: n_method_ints 0 for none; read: when method_ints is not NULL the dataset must
     *   exist with exactly n_method_ints entries, else DP_EINVAL naming it). */
    char *method_state;
    int read_method_state;
    int *method_ints;
    int64_t n_method_ints;
    /* the names of the two parameter groups (NULL: "sel" and "plc", DOPPLER's and its agents'):
     * a method's own slots (the improvement method's "op" and "move"). read: a file without a
     * group blocks[0] is read from "sel" and "plc" instead (a checkpoint written before the
     * method had its own). best_assignment NULL: none written (write) or read */
    const char *blocks[2];
} dp_h5io_ckpt;

/* Write a checkpoint atomically. */
int dp_h5io_ckpt_write(const char *path, const dp_h5io_ckpt *ck, const dp_nn_params *sel, const dp_nn_params *plc,
                  dp_error *err);
/* What a checkpoint says about itself, read before its tensors (to refuse an incompatible one
 * naming what differs): every string malloc'd. */
typedef struct dp_h5io_ckpt_info {
    int version;
    char *graph;
    int n_ops, n_devices;
    char *config_json;
    char *trained_on;
    int64_t traj_episodes;  /* episode rows the run's trajectory file holds (0: none written) */
} dp_h5io_ckpt_info;
/* DP_OK; DP_EINVAL: not a doppler checkpoint, or a version this build does not read ("PATH:
 * checkpoint format version V, this build reads version 3 only", DP_H5IO_CKPT_VERSION);
 * DP_EUNSUPPORTED: a file of versions 1 and 2, whose variable-length strings this build does not
 * read (the message says so); dp_h5file_open_read's errors (a file that cannot be opened, not
 * HDF5, or damaged, naming the object). */
int dp_h5io_ckpt_read_info(const char *path, dp_h5io_ckpt_info *info, dp_error *err);
/* Free the strings dp_h5io_ckpt_read_info put in *info and zero it (a second free is harmless);
 * the struct itself is the caller's. info NULL: nothing to do. */
void dp_h5io_ckpt_info_free(dp_h5io_ckpt_info *info);
/* Whether a run resumed on the graphs `mine` describes continues the run of checkpoint `path`,
 * whose trained_on is `theirs` (both in the form above: lists "train" and "validation" of
 * {"graph", "n_ops", "n_devices", "costs"}): the same graphs, in the same order, of the same
 * sizes, on the same device counts, and with the same cost fingerprint (dp_cost_fingerprint;
 * entries without "costs", of checkpoints written before 2026-12-02, are not compared on it).
 * DP_OK, or DP_EINVAL naming the graph whose costs differ, or both lists when the graphs differ;
 * theirs NULL (a version 1 file) is accepted. */
int dp_h5io_trained_on_check(const char *path, const char *theirs, const char *mine, dp_error *err);
/* Read the config JSON text of a checkpoint (malloc'd into *json). */
int dp_h5io_ckpt_read_config(const char *path, char **json, dp_error *err);
/* Read a checkpoint into ck (whose best_assignment and rng_state buffers, sized by n_ops and
 * rng_size, the caller provides; graph and config_json are malloc'd, free them; ck->same_graph
 * says whether the file must be of the same graph, above) and into the
 * parameter blocks: every tensor must exist with the same shape. with_adam also restores the Adam
 * moments and step counts (resume); otherwise those are reset (a new stage from --init). */
int dp_h5io_ckpt_read(const char *path, dp_h5io_ckpt *ck, dp_nn_params *sel, dp_nn_params *plc, int with_adam, dp_error *err);

/* The best placement a training run sampled in its latest stage (/best_assignment), when the
 * checkpoint is of graph `graph` (its name) on n_ops ops and n_devices devices and holds one:
 * *found 1, assignment (n_ops) filled and *makespan (may be NULL) the makespan training measured
 * for it (best_makespan, raw unit); otherwise *found 0 (no error). A name and size say nothing of
 * the costs or the machine: dp_place_best_sample checks the makespan too. DP_EINVAL: not a
 * checkpoint, a best_assignment of another shape or naming a device out of range; DP_EIO. */
int dp_h5io_ckpt_read_best_sample(const char *path, const char *graph, int n_ops, int n_devices, int *assignment,
                                  double *makespan, int *found, dp_error *err);

/* A new run identifier: 32 hexadecimal digits from /dev/urandom (cap >= 33 bytes). */
void dp_h5io_run_id_new(char *buf, size_t cap);
/* DP_OK when the trajectory file belongs to the run run_id (read from checkpoint, named in the
 * message), or when run_id is "" (a checkpoint of an older version); otherwise DP_EINVAL
 * "TRAJ: the trajectory of another run ...", and the file is left alone. */
int dp_h5io_traj_check_run(const char *trajectory, const char *checkpoint, const char *run_id, dp_error *err);

#ifdef __cplusplus
}
#endif
#endif
