/* dp_train_impl.h: the trainer's state and the functions its files share (private to
 * dp_train.c, dp_train_run.c, dp_train_mpi.c, dp_train_sil.c and dp_train_ckpt.c; not installed).
 * dp_train.c: binding graphs, rollouts, gradients, placements; dp_train_run.c: the training loop
 * (batches, rewards, evaluations, the pipeline of stages); dp_train_mpi.c: what data-parallel
 * ranks share and exchange; dp_train_sil.c: this project's estimators beyond the authors'
 * (self-imitation, demonstrations, distillation); dp_train_ckpt.c: checkpoints and resume. Model
 * selection and trajectory rows are the trainer runtime's (dp_runtime.h). */
#ifndef DP_TRAIN_IMPL_H
#define DP_TRAIN_IMPL_H

#include <gsl/gsl_rng.h>

#include "dp_agent.h"
#include "dp_env.h"
#include "dp_runtime.h"
#include "dp_train.h"

/* A graph bound to the trainer's model: its agent workspace (the model's parameters, this
 * graph's caches), environment and oracle, and what is kept per graph. */
typedef struct dp_train_bound {
    const dp_graph *g;
    const dp_cost *c;
    dp_oracle oracle;
    dp_agent *ag;           /* bd[0]'s owns the parameters; the others are bound to them */
    dp_env *env;
    int n, D;
    int validation;         /* 1: model selection only, never an episode */
    int *topo_pos;
    double ref;             /* raw makespan of the critical-path heuristic under the state: the
                               unit of this graph's makespans when several graphs are bound */
    int need_prepare;
    int sil_n, sil_cap;
    double *sil_ms;
    int *sil_ops, *sil_dev;
    int *hint;              /* (n) network.features "hint": the graph's best instant placement, the
                               PLC's column 12 and its Stage I target (NULL otherwise) */
} dp_train_bound;

struct dp_train {
    dp_train_bound *bd;        /* the bound graphs: bd[0] is the first training graph */
    int n_bd, cur;          /* how many, and the one in hand (its fields are the aliases below) */
    int n_train;            /* training graphs among them */
    int multi;              /* n_bd > 1: makespans in units of each graph's reference (bd.ref) */
    int max_n, max_D;       /* the episode records are sized for these */
    const dp_graph *g;
    const dp_cost *c;
    dp_train_config cfg;
    dp_agent *ag;           /* the policy being trained (dp_agent.h) */
    dp_nn_params *blk[2];   /* its parameter blocks: [0] "sel" (may be empty), [1] "plc" */
    dp_env *env;
    dp_oracle oracle;       /* the cost of an assignment (a copy of the caller's) */
    gsl_rng *master, *ep;
    int n, D;
    /* progress of the stage in hand */
    int stage;
    long episode;
    double running_sum;
    long running_count;
    double best;            /* raw unit */
    int *best_assign;
    int need_prepare;
    int traj_ready;
    char run_id[40];        /* this run's identifier, in its checkpoints and trajectory */
    /* model selection (dp_runtime.h): the parameters whose greedy placement was best at an
     * evaluation (best_score: raw unit, or a mean ratio with several graphs), the latest greedy
     * makespan (evaluation or baseline: last_score) and patience (stale) */
    dp_runtime_select sel;
    int *topo_pos;            /* (n) position of each op in the graph's topological order */
    long sims;              /* oracle calls (every rollout: training, evaluations, placements) */
    long stage_sims0;       /* sims when the current stage began (kept by checkpoints) */
    double t_origin;        /* dp_train_now_s() less the wall seconds of the run's training so far
                               (earlier processes of a resumed run included: kept by checkpoints) */
    double stage_seconds0;  /* those seconds when the current stage began */
    /* this project's estimators (dp_train_stage): forced first choice, replays, self-imitation */
    int force_first_dev;    /* >= 0: the first op goes to this device (POMO's distinct starts) */
    int forced0;            /* the last rollout's first PLC choice was forced: no gradient for it */
    int skip_oracle;        /* 1: a replay of a rollout whose makespan is known: no simulation */
    const int *forced_ops, *forced_dev; /* DP_TRAIN_MODE_FORCED: the op and device of every step */
    int *forced_assign;     /* DP_TRAIN_MODE_ASSIGN: (n) the device of every op */
    int assign_exact;       /* DP_TRAIN_MODE_ASSIGN: 1 puts every op on forced_assign's device as it is
                             * (no renaming of devices of tied logits): a demonstration */
    int *scratch_dev;       /* (n) a placement's devices renamed (self-imitation buffer) */
    int sil_n, sil_cap;     /* self-imitation buffer: the best placements found, as step sequences */
    double *sil_ms;         /* (sil_cap) their makespans (raw) */
    int *sil_ops, *sil_dev; /* (sil_cap, n) */
    /* the current episode's record. SEL: O(n) per episode, one entry per step. The ready sets
     * themselves are not kept (their sizes sum to O(n^2) on a wide graph: 2.6 GB for 20,000
     * independent ops): episode_grad rebuilds them backwards from the chosen ops (the
     * environment keeps them in increasing op id, dp_env.h) and recomputes each step's softmax
     * from the same scores in the same order, so the gradient is bit for bit the one stored sets
     * gave. */
    int *sel_a;             /* (n) index of the choice in its step's ready set */
    int *sel_v;             /* (n) the op chosen */
    int *sel_nr;            /* (n) ready-set size */
    float *sel_lpa;         /* (n) log-probability of the choice */
    int *sel_nmark;         /* (n) heuristic-optimal ops in the ready set (their count) */
    unsigned char *sel_marka; /* (n) whether the choice is one of them */
    int sel_marks_chosen;   /* 1: the imitation targets are the choices themselves (sil replay) */
    double *sel_H;
    double *sel_key;        /* (n) the static SEL scores as the ready heap's key (greedy_heap) */
    int greedy_heap;        /* dp_train_set_greedy_heap: inference rollouts keep the ready set as a
                               heap on the SEL scores */
    /* one step's ready set and its softmax (n each); the backward's step of placement and step
     * of readiness of every op (n each) */
    int *rs_ops, *rs_pos, *rs_at;
    float *rs_z, *rs_p, *rs_lp;
    unsigned char *rs_mark;
    float *plc_p, *plc_lp, *plc_z;
    unsigned char *plc_mark;
    int *plc_a;
    double *plc_H;
    float *zbuf, *gbuf;
    dp_runtime_traj traj;   /* pending trajectory rows and the rows of the file (dp_runtime.h) */
    const dp_train_comm *comm; /* the data-parallel ranks of the run in hand (dp_train.h); NULL: one process */
};

/* rollout modes: the two exploration rules (dp_train_exploration), then greedy and softmax
 * sampling. DP_TRAIN_MODE_FORCED replays a recorded step sequence (op and device of every step);
 * DP_TRAIN_MODE_ASSIGN lets SEL choose greedily and puts each op on the device of a given
 * assignment (the greedy policy's own op order with a target placement's devices) */
enum {
    DP_TRAIN_MODE_EPSILON = DP_TRAIN_EXPLORE_EPSILON_GREEDY,
    DP_TRAIN_MODE_MIXTURE = DP_TRAIN_EXPLORE_MIXTURE,
    DP_TRAIN_MODE_GREEDY,
    DP_TRAIN_MODE_SAMPLE,
    DP_TRAIN_MODE_FORCED,
    DP_TRAIN_MODE_ASSIGN
};

/* dp_train.c */
/* Make bd[i] the graph in hand: the per-graph fields of the one in hand go back to its record. */
void dp_train_graph_select(dp_train *tr, int i);
/* Make bd[i] the graph in hand without saving the one in hand (the first selection). */
void dp_train_graph_load(dp_train *tr, int i);
/* Every bound graph's forward is stale (the shared parameters changed). */
void dp_train_params_changed(dp_train *tr);
/* One episode on the graph in hand in rollout mode `mode` (DP_TRAIN_MODE_*), exploration eps, generator r
 * (NULL for the deterministic modes); *ms its makespan (raw unit), agree (may be NULL) the
 * fractions of SEL and PLC choices the critical-path heuristic shares. */
int dp_train_rollout(dp_train *tr, int mode, double eps, gsl_rng *r, double *ms, double agree[2], dp_error *err);
/* Accumulate the last episode's gradient (reward r, scaled by scale) into the parameter blocks. */
int dp_train_episode_grad(dp_train *tr, const dp_train_stage *st, double eps, double r, double scale);
/* One optimiser step of both blocks at learning rate lr. */
void dp_train_update(dp_train *tr, double lr);
/* Monotonic wall-clock seconds (CLOCK_MONOTONIC): episode and stage timings. */
double dp_train_now_s(void);

/* dp_train_run.c */
/* The agent's gradient state (dp_agent_grad_state) of the graph in hand: n arrays. */
typedef struct dp_train_grad_state {
    float *p[8];
    size_t len[8], total;
    int n;
} dp_train_grad_state;
/* dst = the episode's gradient (first) or dst += it, element by element; then the agent's
 * state is zero again, ready for the next episode. */
void dp_train_grad_take(const dp_train_grad_state *s, float *dst, int first);

/* dp_train_mpi.c: the data-parallel ranks (dp_train_comm; cm NULL: one process) */
/* Episodes j < nb of a batch that rank r of R rolls out (j mod R == r), and the position of
 * episode j in the rank-ordered concatenation of an allgather. */
long dp_train_rank_count(long nb, int R, int r);
long dp_train_rank_slot(long nb, int R, long j);
/* Allgather of each rank's own[rank] items of size bytes each into all, in rank order. */
int dp_train_gather(const dp_train_comm *cm, const void *mine, const long *own, size_t size, void *all, dp_error *err);
/* An episode's record as the ranks exchange it (dp_train_rec_size(n) doubles): makespan,
 * agreement, seconds, then per step the op, its device, the ready-set size, both
 * log-probabilities, and the assignment (by op). pack: the episode in hand's; load: its steps
 * into the trainer's episode record and its assignment into assign (n). */
enum { DP_TRAIN_REC_MS, DP_TRAIN_REC_AGREE0, DP_TRAIN_REC_AGREE1, DP_TRAIN_REC_SECONDS, DP_TRAIN_REC_HEAD };
size_t dp_train_rec_size(int n);
void dp_train_rec_pack(const dp_train *tr, double *rec, double ms, const double agree[2], double seconds);
void dp_train_rec_load(dp_train *tr, const double *rec, int *assign);
/* The self-imitation step after a batch (below, dp_train_sil_plan), its replays shared among the
 * ranks, each one's gradient (state gs) added to the batch's sum gsum in replay order. */
int dp_train_sil_batch(dp_train *tr, const dp_train_stage *st, const dp_train_comm *cm, const dp_train_grad_state *gs,
                       float *gsum, dp_error *err);
/* The model-selection score of the current parameters (raw greedy makespan, or with several
 * graphs the mean ratio to the references over the validation graphs), the graphs shared among
 * the ranks of tr->comm. */
int dp_train_eval_score(dp_train *tr, double *score, dp_error *err);

/* dp_train_sil.c */
/* Offer the last rollout (makespan ms, raw unit) to the self-imitation buffer of k_max
 * placements. DP_ENOMEM. */
int dp_train_sil_offer(dp_train *tr, int k_max, double ms);
/* The self-imitation step of a batch (st->sil_weight > 0): sil_replays placements of the buffer
 * imitated with weight st->sil_weight, drawn uniformly from the trainer's generator, or, when
 * sil_replays (> 1) is at least the buffer's size, every placement of the buffer once, each with
 * weight sil_weight / size (the cross-entropy method's elite set). dp_train_sil_plan draws them:
 * idx[k] the buffer's placement and w[k] its weight, k < the count returned (at most
 * max(sil_replays, the buffer's size)); the trainer runs each with dp_train_sil_imitate (a
 * teacher-forced replay, no simulation, its gradient accumulated), takes each one's gradient
 * apart and adds them in order (shared among MPI ranks as episodes are, dp_train.h). */
int dp_train_sil_plan(dp_train *tr, const dp_train_stage *st, int *idx, double *w);
int dp_train_sil_imitate(dp_train *tr, const dp_train_stage *st, int i, double w, dp_error *err);
/* The demonstrations a stage starts from (st->demos) and the distillation of the best placements
 * into the policy (st->distill). */
int dp_train_demo_seed(dp_train *tr, const dp_train_stage *st, dp_error *err);
int dp_train_distill_best(dp_train *tr, const dp_train_stage *st, double lr, dp_error *err);

/* dp_train_ckpt.c */
/* Write the trainer's checkpoint (dp_h5io.h) to path atomically. */
int dp_train_checkpoint_write(dp_train *tr, const char *path, dp_error *err);

#endif
