/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/fuzz_profile.c -- libFuzzer target: what a profile meets
 * before it is stored (docs/profiling.md).
 *
 * Input byte 0 picks the path, the rest is the text or message:
 *  - even: Nsight Compute output (kf_prof_parse_ncu_csv), as the harness
 *    reads it from ncu's log -- ncu prints the candidate's kernel names,
 *    so the text is the candidate's to shape;
 *  - odd: an EvalResult as a worker reports it: its profile through the
 *    coordinator's check (kf_prof_from_pb) and the classifier.
 * Besides "no crash", the promises: a parsed profile's text is clean and
 * fits, so kf_prof_to_pb then kf_prof_from_pb accepts it unchanged; a
 * refusal says why; a diagnosis has a class and a detail.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "diagnose.h"
#include "kernelfleet.pb-c.h"
#include "profile.h"
#include "text.h"

static const char *const skip[] = {"k_gen", "k_digest", NULL};

static void diagnose(const kf_prof *p, double ns) {
  kf_diag d;
  kf_diag_in in = {.gpu = true, .time_ns = ns, .gbps = 100, .gflops = 10,
                   .ceil_gbps = 3000, .ceil_gflops = 50000, .prof = p};
  if (kf_diag_classify(&in, &d) == 0 &&
      (d.bound == KF_DIAG_NONE || !d.detail[0]))
    abort();
}

static void round_trip(const kf_prof *p) {
  Kernelfleet__ProfileReport pb;
  Kernelfleet__ProfileStall st[KF_PROF_MAX_STALLS], *sp[KF_PROF_MAX_STALLS];
  kf_prof_to_pb(p, &pb, st, sp);
  kf_prof back;
  char bad[200] = "";
  if (kf_prof_from_pb(&pb, &back, bad, sizeof bad) != 0) abort();
  if (strcmp(back.kernel, p->kernel) || back.n_stalls != p->n_stalls)
    abort();
  for (int i = 0; i < p->n_stalls; i++)
    if (strcmp(back.stalls[i].name, p->stalls[i].name)) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  const char *body = (const char *)data + 1;
  size_t n = size - 1;
  if (data[0] % 2 == 0) {
    kf_prof p;
    char err[256] = "";
    int rc = kf_prof_parse_ncu_csv(body, n, skip, &p, err, sizeof err);
    if (rc && !err[0]) abort();
    if (!kf_text_is_clean(p.kernel, strlen(p.kernel), 0)) abort();
    for (int i = 0; i < p.n_stalls; i++)
      if (!kf_text_is_clean(p.stalls[i].name, strlen(p.stalls[i].name), 0))
        abort();
    if (rc == 0) {
      if (p.status != KF_PROF_OK) abort();
      round_trip(&p);
    }
    diagnose(&p, 1000);
    return 0;
  }
  Kernelfleet__EvalResult *e =
      kernelfleet__eval_result__unpack(NULL, n, (const uint8_t *)body);
  if (!e) return 0;
  if (e->profile) {
    kf_prof p;
    char bad[200] = "";
    if (kf_prof_from_pb(e->profile, &p, bad, sizeof bad) == 0)
      diagnose(&p, e->time_ns_median);
    else if (!bad[0])
      abort();
  }
  kernelfleet__eval_result__free_unpacked(e, NULL);
  return 0;
}
