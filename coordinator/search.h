/* SPDX-License-Identifier: Apache-2.0 */
/*
 * coordinator/search.h -- the evolutionary search behind campaigns.
 *
 * Stateless between calls: everything the search knows is read from the
 * store at each step (campaigns, candidates, eval_keys, evaluations), so a
 * coordinator restart resumes a campaign where it was.  A step BLOCKS on
 * the store: the coordinator runs it inside a batch, on the work thread.
 *
 * One step, per running campaign:
 *  1. rank its evaluations (noise-aware, per device class), record the
 *     best candidate (the campaign's, and each class's), and stop the
 *     search of a class when a rule says so -- each class on its own
 *     (0009: its evaluations count toward budget_evals, budget_seconds
 *     runs from when it joined, the plateau and the roofline target are
 *     its own; the campaign is done when every class is):
 *     "budget_evals reached", "budget_seconds elapsed", "plateau",
 *     "target roofline reached", "search space exhausted", "memory-bound
 *     at X% of the measured bandwidth" (every class's best diagnosed so
 *     at >= 97%: search_diag.c, docs/profiling.md) -- but never
 *     while a proposal it accepted waits for its evaluation (not planned
 *     yet, or its task queued or leased), except on budget_seconds when
 *     no worker could evaluate it; a waiting proposal is planned even
 *     past budget_evals (and counts toward it).  The class then enters
 *     its showdown (showdown.c): its top candidates re-timed with the
 *     reference in one "showdown" task; later steps record its result
 *     and end the class with the showdown's best (or the ranking's, when
 *     it failed or could not run).  The campaign is in "showdown" once no
 *     class searches, and done once every class is, its best the highest
 *     speedup of the classes';
 *  2. for every device class with alive workers that run "eval" on the
 *     campaign's backend, top the class's queued + running eval tasks up
 *     to per_slot x the alive workers' slots (never past budget_evals):
 *     proposals first, then the knob spaces of proposers' templates
 *     (proposals that declared knobs, origin "proposer") that evaluated
 *     ok on the class and hold fewer than 4 keys there, then the best
 *     genome of each other class this class has not measured
 *     (migration between the classes' islands), then the initial
 *     population (each template's defaults, then random knob values; a
 *     proposer's template only once it evaluated ok), then children of
 *     tournament
 *     selection (k = 3) over the best `population` ok candidates of that
 *     class (elitism: the best is always among them), by crossover of two
 *     parents of one template and/or mutation of one or two knobs (the
 *     first, mostly, one that matters for the parent's diagnosed bound).
 *     Each EvalRequest carries the campaign's profiling policy.
 *     A (sha256(source), flags, device class) is measured at most once
 *     per campaign (the database refuses a second task).  A drawn key
 *     this campaign already holds is skipped and another drawn.  A key
 *     another campaign of the same problem (problem_key) measured under
 *     the environment all alive workers of the class share now is reused
 *     -- unless this campaign is fresh, or the measurement was
 *     timing-dependent: the campaign gets its own candidate and an
 *     evaluation aggregating the key's measurements (reused_from), no
 *     task; it counts toward budget_evals and ranks like one of its own.
 *     A key another campaign of the problem is still measuring (task
 *     queued or leased) is skipped for now and can be reused by a later
 *     step once measured; such keys keep the space from counting as
 *     exhausted.  Anything else another campaign holds -- another
 *     environment, a timing-dependent verdict, a task that failed -- is
 *     measured again.
 *
 * The search RNG is seeded from the campaign's search_seed, the number of
 * eval tasks it has created and the device class, so a step is a function
 * of the database state.  The harness seed in each EvalRequest comes from
 * getrandom(2) and is stored only in the task payload.
 */
#ifndef KF_SEARCH_H
#define KF_SEARCH_H

#include <stdbool.h>
#include <stdint.h>

#include "store.h"

typedef struct {
  uint32_t alive_ms;      /* a worker seen within this is alive, ms */
  uint32_t per_slot;      /* eval tasks kept queued or running per alive
                           * worker slot; 0: 2 */
  uint32_t timeout_ms;    /* each eval task's wall-clock budget, ms;
                           * 0: 120000 */
  uint32_t max_attempts;  /* per eval task; 0: 2 */
  uint32_t tries;         /* random draws per wanted candidate before the
                           * space is walked in order; 0: 64 */
} kf_search_opts;

typedef struct {
  uint32_t running;    /* campaigns still running (or in their showdown)
                        * after the step */
  uint32_t scheduled;  /* eval and showdown tasks created */
  uint32_t reused;     /* other campaigns' evaluations reused, no task */
  uint32_t finished;   /* campaigns this step ended */
} kf_search_stats;

/* One step for campaign_id, or for every running campaign (or one in its
 * showdown) when it is 0.  A campaign that is neither is left alone (not
 * an error).  Returns 0
 * or the first store error (KF_E*; text on the store); campaigns after a
 * failing one are still stepped.  st may be NULL. */
int kf_search_step(kf_store *s, int64_t campaign_id, const kf_search_opts *o,
                   kf_search_stats *st);

/* Noise-aware ranking: a (median ma, relative spread sa) beats b only when
 * ma * (1 + max(sa, sb, 0.02)) < mb.  Times must be > 0. */
bool kf_search_beats(double ma, double sa, double mb, double sb);

#endif
