/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/fuzz_text.c -- libFuzzer target: common/text.c, the module
 * that stands between untrusted text and PostgreSQL or a terminal.
 *
 * Input: one byte of options (the sanitizer's cap and flags, the message
 * type for the wire check), then the text.  Besides "no crash", it checks
 * the module's promises against each other:
 *  - whatever kf_text_sanitize writes is clean (kf_text_is_clean) and
 *    passes kf_text_check, fits the cap, and sanitizing it again changes
 *    nothing (when it was not cut);
 *  - kf_text_check_wire on arbitrary bytes as every request type of the
 *    service (it must refuse malformed bytes itself, not crash), and it
 *    agrees with kf_text_check where the two overlap.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernelfleet.pb-c.h"
#include "text.h"

static const ProtobufCMessageDescriptor *const types[] = {
    &kernelfleet__register_worker_request__descriptor,
    &kernelfleet__heartbeat_request__descriptor,
    &kernelfleet__lease_tasks_request__descriptor,
    &kernelfleet__report_result_request__descriptor,
    &kernelfleet__submit_tasks_request__descriptor,
    &kernelfleet__get_status_request__descriptor,
    &kernelfleet__create_campaign_request__descriptor,
    &kernelfleet__get_campaign_request__descriptor,
    &kernelfleet__list_evaluations_request__descriptor,
    &kernelfleet__get_best_request__descriptor,
    &kernelfleet__stop_campaign_request__descriptor,
    &kernelfleet__propose_candidate_request__descriptor,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  unsigned opt = data[0];
  const uint8_t *p = data + 1;
  size_t n = size - 1;
  unsigned flags = (opt & 1) ? KF_TEXT_MULTILINE : 0;
  /* caps from 0 (writes nothing) to far more than the input needs */
  static const size_t caps[] = {0, 1, 2, 4, 5, 8, 13, 64, 1 << 16};
  size_t cap = caps[(opt >> 1) % (sizeof caps / sizeof caps[0])];

  char *out = malloc(cap ? cap : 1);
  if (!out) return 0;
  size_t len = kf_text_sanitize(p, n, out, cap, flags);
  if (cap) {
    if (len >= cap || out[len] != '\0' || strlen(out) != len) abort();
    if (!kf_text_is_clean(out, len, flags)) abort();
    char why[96];
    if (kf_text_check(out, len, len, why, sizeof why) != 0) abort();
    /* not cut: the sanitizer is idempotent */
    if (cap == (1 << 16) && n * 4 + 4 < cap) {
      char *again = malloc(cap);
      if (!again) abort();
      size_t l2 = kf_text_sanitize(out, len, again, cap, flags);
      if (l2 != len || memcmp(out, again, len) != 0) abort();
      free(again);
    }
  } else if (len != 0) {
    abort();
  }
  free(out);

  /* clean input comes back unchanged */
  if (kf_text_is_clean(p, n, flags) && n < 4096) {
    char *same = malloc(n + 1);
    if (!same) abort();
    size_t l = kf_text_sanitize(p, n, same, n + 1, flags);
    if (l != n || memcmp(same, p, n) != 0) abort();
    free(same);
  }

  char *dup = kf_text_sanitize_dup(p, n, 100, flags);
  if (dup && strlen(dup) > 100) abort();
  free(dup);

  char why[256];
  why[0] = '\0';
  int rc = kf_text_check(p, n, n, why, sizeof why);
  if (rc != 0 && !why[0]) abort();

  const ProtobufCMessageDescriptor *t =
      types[(opt >> 4) % (sizeof types / sizeof types[0])];
  why[0] = '\0';
  rc = kf_text_check_wire(t, p, n, why, sizeof why);
  if (rc != 0 && !why[0]) abort();
  return 0;
}
