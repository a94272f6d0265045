/* SPDX-License-Identifier: Apache-2.0 */
/*
 * db/store_sweep.h -- sweeps (migration 0010, `kf sweep`): a named record
 * grouping, per problem and device class label, the one campaign that ran
 * that problem on that class, with the torch baselines measured on each
 * class.  Resumable by construction: a (problem, label) that already has
 * a campaign is never given another, whatever machine runs the sweep next.
 *
 * The numbers of a report are not copied here: they are read from the
 * campaigns themselves (kf_store_campaign_get, kf_store_campaign_classes,
 * kf_store_best_class), so they are the ones `kf campaign best --class`
 * gives.  Every call BLOCKS.
 */
#ifndef KF_STORE_SWEEP_H
#define KF_STORE_SWEEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store.h"

/* The device class a run's workers registered, bound to a label. */
typedef struct {
  const char *label;
  const char *model;
  int64_t device_class_id;
  double ceiling_gbps;          /* > 0: --ceiling-gbps; 0 keeps the stored */
} kf_sweep_bind;

/* Finds the sweep called name, or (create) creates it, for backend (proto
 * DeviceKind: 1 cpu, 2 cuda), then adds the problems (spec names) and
 * class labels it does not have yet, after the ones it has, and with bind
 * (may be NULL) binds bind->label (one of labels or of the sweep's) to
 * the class its workers registered: the first time it is recorded, later
 * it must be the same model.  One transaction: on any error nothing is
 * written.  KF_ENOTFOUND: no such sweep and !create; KF_EINVAL: the sweep
 * exists for another backend, or the label ran on another model before
 * (the message says which).  *created may be NULL. */
int kf_store_sweep_open(kf_store *s, const char *name, int backend,
                        const char *const *problems, size_t np,
                        const char *const *labels, size_t nl, bool create,
                        const kf_sweep_bind *bind, int64_t *id,
                        bool *created);

/* The sweep whose id (all digits) or name is key.  KF_ENOTFOUND, with the
 * sweeps that exist in the message. */
int kf_store_sweep_find(kf_store *s, const char *key, int64_t *id);

/* The campaign of (problem, label); *campaign_id 0 when none yet. */
int kf_store_sweep_campaign(kf_store *s, int64_t sweep, const char *problem,
                            const char *label, int64_t *campaign_id);

/* Records campaign_id as the campaign of (problem, label). */
int kf_store_sweep_add_campaign(kf_store *s, int64_t sweep,
                                const char *problem, const char *label,
                                int64_t campaign_id);

typedef struct {
  const char *problem;
  double eager_ms, compile_ms;  /* 0: not measured / failed */
  const char *line;             /* the JSON line, verbatim */
} kf_sweep_baseline;

/* Stores baselines measured on label's device (replacing that label's
 * earlier numbers for the same problems), from file source.  One
 * transaction; a problem the sweep lacks is KF_EINVAL, nothing written. */
int kf_store_sweep_baselines_put(kf_store *s, int64_t sweep,
                                 const char *label,
                                 const kf_sweep_baseline *b, size_t n,
                                 const char *source);

/* One (problem, label) cell of a sweep. */
typedef struct {
  const char *problem, *label;
  const char *model;            /* "" while the label never ran */
  int64_t device_class_id;      /* 0 while the label never ran */
  int64_t campaign_id;          /* 0: none yet */
  double ceiling_gbps_given;    /* --ceiling-gbps; 0 none */
  bool has_baseline;
  double eager_ms, compile_ms;  /* 0: not measured */
  /* From the baseline's line when it timed a kernel by the same timer as
   * torch (a twin evaluation, scripts/twin-eval): its time, and the
   * candidate it was; 0 when the line has none. */
  double kernel_ms, max_autotune_ms;
  int64_t kernel_candidate_id;
  const char *twin_outcome;     /* the line's "outcome" ("ok", ...); "" */
  const char *baseline_source;  /* "" */
} kf_sweep_cell;

typedef struct {
  int64_t id;
  const char *name;
  int backend;
  const char *created_at;       /* ISO 8601, UTC */
  size_t n_problems, n_labels;
  /* problem-major: cell (p, l) is v[p * n_labels + l] */
  kf_sweep_cell *v;
  size_t n;
} kf_sweep;

/* The sweep with all its cells (one allocation; free()).  KF_ENOTFOUND. */
int kf_store_sweep_get(kf_store *s, int64_t id, kf_sweep **out);

/* The copy bandwidth and peak GFLOP/s (DeviceInfo, 0 when unknown) of the
 * worker that measured evaluation eval_id (of the one it reuses). */
int kf_store_sweep_eval_ceiling(kf_store *s, int64_t eval_id,
                                double *copy_gbps, double *peak_gflops);

/* The device class of the newest worker called worker_name registered at
 * or after since_unix_s (0: any time); *device_class_id 0 when none yet. */
int kf_store_sweep_worker_class(kf_store *s, const char *worker_name,
                                int64_t since_unix_s,
                                int64_t *device_class_id,
                                kf_device_class *dc);

#endif
