/* SPDX-License-Identifier: Apache-2.0 */
/*
 * proposer/proposer.h -- proposers: programs that write new candidate
 * kernels for a campaign (an LLM, a person's script, another search).
 *
 * A proposer receives a context -- the problem (spec.json, the candidate
 * ABI, the reference), the best kernels per device class with their
 * measurements, diagnoses and profiles, recent failures with stage and
 * reason, and the device classes that run the campaign with their
 * measured ceilings -- and a task (one source-level evolution
 * operator: improve a kernel, combine two, apply a prescription to one,
 * port one to another device class), and returns a proposal: a source
 * and, optionally, the knob space it declares.
 *
 * The context is built from the coordinator's ordinary client RPCs
 * (GetCampaign with_problem/with_sources, ListEvaluations, GetStatus), and
 * every proposal goes back through ProposeCandidate: the coordinator
 * validates it and the workers compile, verify and time it in the same
 * sandboxed pipeline as any other candidate.  A proposal that declares
 * knobs becomes a template of the campaign (origin "proposer") whose
 * knobs the search tunes.  Each request a proposer makes to its model is
 * accounted with ProposerRecordCalls (tokens, cost, outcome and reason).
 *
 * Threads: a kf_proposer's propose may run on several threads at once
 * (kf_proposer_round caps how many); contexts are read-only after fetch.
 */
#ifndef KF_PROPOSER_H
#define KF_PROPOSER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rpc.h"
#include "spec.h"

/* One measured kernel of the campaign. */
typedef struct {
  int64_t candidate_id;
  const char *template_name;    /* "" for free-form sources */
  char knobs[512];              /* "-DA=1 -DB=2": how it is compiled */
  const char *source;
  const char *proposer;         /* "evolution", "llm:...", "user" */
  char device[256];             /* its device class, in words */
  double time_ns, ref_time_ns, speedup, roofline_fraction;
  /* The evaluation's diagnosis (common/diagnose.h, stored per evaluation
   * by the coordinator, 0007): its bound ("memory", "compute", "latency",
   * "launch"; NULL: none stored, e.g. a kernel measured before 0007),
   * the fractions of the measured ceilings, and the class with its
   * numbers in words.  The prescribe operator prescribes for the bound. */
  const char *bound;
  double bw_frac, fl_frac;
  const char *diagnosis;        /* NULL with bound */
  /* The hardware profile's numbers in words ("DRAM 85.0% of peak, SM
   * ...; achieved occupancy 42.0%; top stalls long_scoreboard ...;
   * 40 registers, 0 B spilled"), or why the profiler failed ("no
   * profile (restricted: ...)"); "" when no profiler ran (CPU workers,
   * devices without one, kernels the campaign's policy skipped). */
  char profile[480];
} kf_proposer_kernel;

/* One recent failure. */
typedef struct {
  int64_t candidate_id;
  const char *template_name, *proposer;
  const char *outcome, *stage, *reason;
} kf_proposer_failure;

typedef struct {
  int64_t campaign_id;
  const char *problem, *language;     /* "c" or "cuda" */
  const char *state;                  /* the campaign's */
  const char *spec_json;              /* NUL-terminated */
  const char *abi;                    /* harness/core/kf_candidate.h */
  const char *reference;
  /* best first within each class; classes in the order first seen */
  kf_proposer_kernel *best;
  size_t n_best;
  kf_proposer_failure *failures;      /* newest first */
  size_t n_failures;
  /* The device classes the campaign runs on (GetCampaign with_problem's
   * devices, then any other class that evaluated its candidates): the
   * class in words (kind, model, compute capability, ISA; as
   * kf_proposer_kernel.device), and with its facts (cores or SMs, L2,
   * memory, measured copy bandwidth and compute ceiling, alive workers). */
  char device_class[8][256];
  char devices[8][1024];
  size_t n_devices;
  uint32_t workers_alive;             /* of the whole cluster */
  void *priv_;                        /* the responses behind the strings */
} kf_proposer_context;

/* Fetches the context of campaign id: its top `top` kernels (0: 8; at most
 * 32) and its `nfail` (0: 6) newest failures.  0, or a KF_E* code with the reason in
 * err (KF_ENOTFOUND: no such campaign). */
int kf_proposer_context_fetch(kf_rpc_client *cli, int64_t id, uint32_t top,
                              uint32_t nfail, int timeout_ms,
                              kf_proposer_context **out, char *err,
                              size_t errlen);
void kf_proposer_context_free(kf_proposer_context *c);

/* Source-level evolution operators. */
typedef enum {
  KF_PROPOSE_IMPROVE,   /* write a faster version of a */
  KF_PROPOSE_COMBINE,   /* combine the ideas of a and b */
  KF_PROPOSE_PRESCRIBE, /* apply prescription to a */
  KF_PROPOSE_PORT,      /* port a (measured elsewhere) to device */
} kf_proposer_op;

const char *kf_proposer_op_name(kf_proposer_op op);

typedef struct {
  kf_proposer_op op;
  const kf_proposer_kernel *a, *b; /* a: NULL: start from the reference */
  char prescription[1024];         /* PRESCRIBE */
  char device[1024];               /* PORT: the target class, its facts */
} kf_proposer_task;

/* The operators a round may plan: bit (1u << op) for each; 0 means all. */
#define KF_PROPOSE_ALL 0u
/* Parses "improve,combine,prescribe,port" (any non-empty subset, in any
 * order) into a mask.  0, or KF_EINVAL with the unknown name in err. */
int kf_proposer_ops_parse(const char *list, uint32_t *mask, char *err,
                          size_t errlen);

/* Picks up to max tasks for round r of a campaign: the best kernel of each
 * class improved, the two best combined, a prescription for the best's
 * diagnosed bound (or, with no diagnosis, its roofline fraction) applied,
 * the best of one class ported to another -- rotating with r so
 * successive rounds vary, over the operators of mask (KF_PROPOSE_ALL:
 * every one).  An operator that cannot apply (combine with one kernel in
 * a class, port with one class) is skipped.  With no measured kernel
 * yet, every task improves on the reference. */
size_t kf_proposer_plan(const kf_proposer_context *c, uint32_t r,
                        uint32_t mask, kf_proposer_task *tasks, size_t max);

/* The prescription of the prescribe operator for kernel k, from its
 * diagnosis: what to change for its bound, with its numbers. */
void kf_proposer_prescription(const kf_proposer_kernel *k, char *out,
                              size_t len);

/* What a proposer returns. */
typedef struct {
  char *source;                        /* malloc'd */
  char name[64];                       /* optional template name; "" */
  kf_spec_knob knobs[KF_SPEC_MAX_KNOBS];  /* declared knob space */
  int n_knobs;
} kf_proposal;

void kf_proposal_clear(kf_proposal *p);

/* The accounting of one request to a model (proto ProposerCall). */
typedef struct {
  char model[128], prompt_version[128];
  char outcome[32];      /* "ok", "http_error", "timeout", "malformed", ... */
  char reason[1024];
  uint32_t http_status, attempts;
  uint64_t prompt_tokens, completion_tokens;
  double cost;
  uint64_t latency_ms;
} kf_proposer_acct;

typedef struct kf_proposer kf_proposer;

typedef struct {
  /* 0 with *out filled; or a KF_E* code with acct->outcome and
   * acct->reason saying why (the round records it, never crashes).
   * acct is filled either way. */
  int (*propose)(kf_proposer *self, const kf_proposer_context *ctx,
                 const kf_proposer_task *task, kf_proposal *out,
                 kf_proposer_acct *acct);
  void (*destroy)(kf_proposer *self);
} kf_proposer_ops;

struct kf_proposer {
  const kf_proposer_ops *ops;
  char label[64];        /* ProposeCandidate's proposer: "llm:MODEL" */
};

void kf_proposer_destroy(kf_proposer *p); /* NULL-safe */

typedef struct {
  uint32_t requests;     /* tasks per round; 0: 2 */
  uint32_t parallel;     /* requests at once; 0: 2 */
  int timeout_ms;        /* per coordinator rpc; 0: 30000 */
  uint32_t ops;          /* operators planned (kf_proposer_plan's mask) */
  bool quiet;            /* no progress lines on stderr */
} kf_proposer_round_opts;

typedef struct {
  uint32_t calls, proposed, duplicates, failed;
  bool ended;            /* the campaign takes no more proposals */
} kf_proposer_round_stats;

/* One round against campaign id: fetch the context, plan tasks, ask the
 * proposer (at most o->parallel at once), send each proposal with
 * ProposeCandidate, and record every request with ProposerRecordCalls.
 * Returns 0 (failures of the proposer are counted, not errors) or a KF_E*
 * code when the coordinator could not be used, with err. */
int kf_proposer_round(kf_rpc_client *cli, kf_proposer *p, int64_t id,
                      uint32_t round, const kf_proposer_round_opts *o,
                      kf_proposer_round_stats *st, char *err, size_t errlen);

#endif
