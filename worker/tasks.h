/* SPDX-License-Identifier: Apache-2.0 */
/*
 * worker/tasks.h -- the task kinds a worker can run.
 *
 * A kind's run function is called on a libuv work thread (never the loop
 * thread) with one leased task and fills in its result.  It must return
 * within the task's timeout; anything it starts (a harness child) is its
 * own to reap.  A task that fails is a result with an outcome, not an
 * error: run returns nothing.
 */
#ifndef KF_TASKS_H
#define KF_TASKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
  /* in */
  int64_t task_id;
  uint32_t attempt;
  const char *kind;
  const void *payload;
  size_t payload_len;
  uint32_t timeout_ms;
  /* out */
  int outcome;        /* kf_outcome */
  char stage[32];     /* where it stopped */
  char reason[1024];  /* shown to users */
  void *output;       /* malloc'd, owned by the task record */
  size_t output_len;
  uint64_t elapsed_us;
} kf_task_exec;

typedef struct {
  const char *kind;
  void (*run)(kf_task_exec *t);
  /* NULL, or whether this worker can run the kind (asked once, before
   * registering; may block for seconds) */
  bool (*available)(void);
} kf_task_kind;

/* NULL-terminated list of built-in kinds. */
extern const kf_task_kind kf_task_kinds[];

/* The kind's entry, or NULL. */
const kf_task_kind *kf_task_kind_find(const char *kind);

/* "checksum": payload {"data": str, "repeat": n, "sleep_ms": n}; output
 * {"fnv1a64": "<16 hex digits>"} over data repeated n times.  sleep_ms
 * makes the task hold its lease for a while (demos and fault tests).
 * timeout_ms (0: none) bounds sleep and hashing together: past it the
 * task stops with outcome TIMEOUT. */
void kf_task_checksum(kf_task_exec *t);

/* "eval": payload an EvalRequest; output the EvalResult bytes.  Runs
 * `kf-harness eval` (worker/task_eval.c). */
void kf_task_eval(kf_task_exec *t);

/* "showdown": payload a ShowdownRequest; output the ShowdownResult bytes.
 * Runs `kf-harness showdown` (worker/task_eval.c) like eval. */
void kf_task_showdown(kf_task_exec *t);

/* Whether this worker's kf-harness has the showdown mode (`kf-harness
 * showdown --help` succeeds); asked once, then cached. */
bool kf_task_showdown_available(void);

/* Runs `kf-harness identity` once (blocking): 0, or -1 when the harness
 * gives no build hash (then the getters return ""; what this worker
 * measures is never reused).  Call at startup, before tasks run. */
int kf_task_eval_identity(void);
/* The harness build hash (64 hex) and the compiler version line of the C
 * (cuda false) or CUDA toolchain; "" unknown. */
const char *kf_task_eval_harness_build(void);
const char *kf_task_eval_toolchain(bool cuda);

/* A device's measured ceilings; 0 where unknown. */
typedef struct {
  double copy_gbps;  /* copy, bytes read + written */
  double read_gbps;  /* read-only streaming */
  double write_gbps; /* write-only streaming */
  double gflops;     /* compute */
} kf_ceilings;

/* Runs `kf-harness ceilings` once (blocking, a few seconds): 0 with the
 * numbers, -1 (all 0) when the harness is missing or fails.  Call at
 * startup. */
int kf_task_eval_ceilings(kf_ceilings *out);

/* Ceilings passed to every eval as --copy-gbps/--read-gbps/--write-gbps/
 * --gflops; set once, before any task runs. */
void kf_task_eval_set_ceilings(const kf_ceilings *c);

/* Extra kf-harness eval arguments for this worker's device (CUDA:
 * --device, --cuda-arch, --gpu-lock); copied; at most 8; set once, before
 * any task runs. */
void kf_task_eval_set_device_args(const char *const *args, int n);

/* The worker's work directory (watchdog.h): each eval's directory is
 * made in it.  NULL or "": $TMPDIR.  Set once, before any task runs. */
void kf_task_eval_set_workdir(const char *dir);

struct Kernelfleet__DeviceClass;
struct Kernelfleet__DeviceInfo;
/* The device copied into every EvalResult the worker reports; the pointers
 * must outlive the tasks.  Set once, before any task runs. */
void kf_task_eval_set_device(const struct Kernelfleet__DeviceClass *dc,
                             const struct Kernelfleet__DeviceInfo *info);

#endif
