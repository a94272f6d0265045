/* SPDX-License-Identifier: Apache-2.0 */
/*
 * coordinator/search_internal.h -- what search.c and showdown.c share and
 * nothing else.  Same rules as search.h: work thread, store only.
 */
#ifndef KF_SEARCH_INTERNAL_H
#define KF_SEARCH_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "kernelfleet.pb-c.h"
#include "search.h"
#include "store.h"

/* A device class and its noise-aware best row (points into a list). */
typedef struct {
  int64_t dc;
  const kf_cand_row *best;
} kf_search__best;

/* Walks evals in their order and keeps, per device class, the ok row with
 * a time that no later row beats (kf_search_beats).  Fills out[0..cap)
 * and returns how many classes; *since (may be NULL) is the number of
 * rows after the last change of any class's best: the plateau count. */
size_t kf_search__class_bests(const kf_cand_list *evals, kf_search__best *out,
                              size_t cap, uint32_t *since);

/* coordinator/showdown.c.  The search of campaign c stopped (reason):
 * creates the showdown -- one "showdown" task per device class with an
 * alive worker that runs them, holding the class's best and then the
 * fastest of its ok candidates, at most c->showdown_top -- and moves the
 * campaign to "showdown"; with nothing to re-time anywhere it concludes
 * the campaign at once, best from the aggregated ranking.  evals: the
 * campaign's evaluations by id.  Counts the campaign in st (running or
 * finished). */
int kf_search__showdown_begin(kf_store *s, const kf_search_opts *o,
                              const kf_campaign *c, const char *reason,
                              const kf_cand_list *evals, kf_search_stats *st);

/* A campaign in its showdown: records each showdown task that ended (or
 * that can no longer end: no worker for it, or past its deadline), and
 * once none is running concludes the campaign -- per class the showdown's
 * fastest ok candidate, else the aggregated ranking's best of those that
 * did not fail a showdown; overall the highest speedup. */
int kf_search__showdown_step(kf_store *s, const kf_search_opts *o,
                             const kf_campaign *c, kf_search_stats *st);

/* Per-class campaigns (migration 0009).  The search of class dc stopped
 * (reason): creates its showdown task -- the class's best and then its
 * fastest ok candidates, at most c->showdown_top -- and moves the class
 * to "showdown"; with nothing to re-time there (no verified candidate,
 * no alive worker of the class that runs showdowns: cls NULL or none)
 * the class is done at once, best from the aggregated ranking.
 * *changed: the class was running. */
int kf_search__class_stop(kf_store *s, const kf_search_opts *o,
                          const kf_campaign *c, int64_t dc,
                          const char *reason, const kf_cand_list *evals,
                          const kf_eval_class *cls, bool *changed);

/* Records the showdowns of classes that ended (or can no longer end) and
 * concludes each such class ("done"): its best is its showdown's fastest
 * ok candidate, else the aggregated ranking's best of those that did not
 * fail a showdown. */
int kf_search__class_showdowns(kf_store *s, const kf_search_opts *o,
                               const kf_campaign *c,
                               const kf_class_list *classes);

/* Every class is done: concludes the campaign, best overall the highest
 * speedup of the classes' finals (as kf_search__showdown_step does);
 * reason: the stop reason unless it has one; none_text: the showdown
 * text when no showdown ran at all (NULL: "skipped: no showdown ran"). */
int kf_search__finish(kf_store *s, const kf_search_opts *o,
                      const kf_campaign *c, const char *reason,
                      const char *none_text, kf_search_stats *st);
/* coordinator/search_diag.c: profiles and diagnoses in the search. */

/* Sets rq's profile and profile_below_ns by the campaign's policy: "off"
 * for "none"; "on" otherwise, for top:K with the K-th best ok median of
 * class dc in evals (0 while the class has fewer than K). */
void kf_search__profile_request(const kf_campaign *c,
                                const kf_cand_list *evals, int64_t dc,
                                Kernelfleet__EvalRequest *rq);

/* The stop reason (written into buf) when every class's best is
 * memory-bound at >= KF_DIAG_MEMORY_STOP of its measured bandwidth, and
 * not past it (over 1 the measurement is no ceiling); NULL otherwise (or
 * with no class). */
const char *kf_search__diag_stop(const kf_search__best *bests, size_t nb,
                                 char *buf, size_t len);

/* For a mutation of a parent diagnosed `bound`: the index j into mut[0..m)
 * (knob indices into names) of a knob relevant to the bound, picked by u
 * (uniform in [0, 1)) when u < 0.75 and one is relevant; else -1 (pick
 * as before). */
int kf_search__pick_knob(const char *const *names, const int *mut, int m,
                         const char *bound, double u);

#endif
