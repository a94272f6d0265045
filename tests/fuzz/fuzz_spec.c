/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/fuzz_spec.c -- libFuzzer target: the spec.json parser
 * (common/spec.c) and what the coordinator and harness compute from a
 * parsed spec before any candidate runs: the canonical hash, the flops and
 * bytes expressions, every tensor's shape, and the runner's memory at the
 * bench and check sizes (the numbers a submit is refused on).
 *
 * The input is the JSON text, parsed with dir == NULL (as the coordinator
 * parses spec_json from CreateCampaign).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "spec.h"

static void at_size(const kf_spec *s, const kf_size *z) {
  char err[384];
  int64_t v;
  if (s->flops[0]) (void)kf_spec_eval(s, s->flops, z, &v, err, sizeof err);
  if (s->bytes[0]) (void)kf_spec_eval(s, s->bytes, z, &v, err, sizeof err);
  for (int i = 0; i < s->n_inputs + s->n_outputs; i++) {
    const kf_spec_tensor *t =
        i < s->n_inputs ? &s->inputs[i] : &s->outputs[i - s->n_inputs];
    int64_t dims[KF_SPEC_MAX_DIMS], numel;
    (void)kf_spec_shape(s, t, z, dims, &numel, err, sizeof err);
  }
  uint64_t bytes;
  (void)kf_spec_runner_bytes(s, z, 1, 1, 4096, &bytes, err, sizeof err);
  (void)kf_spec_runner_bytes(s, z, 2, 3, 64u << 10, &bytes, err, sizeof err);
  char buf[160];
  kf_spec_size_format(s, z, buf, sizeof buf);
  if (strlen(buf) >= sizeof buf) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  kf_spec *s = NULL;
  char err[512];
  err[0] = '\0';
  int rc = kf_spec_parse((const char *)data, size, NULL, &s, err, sizeof err);
  if (rc != 0) {
    if (s || !err[0]) abort(); /* a refusal has a reason and no spec */
    return 0;
  }
  if (!s) abort();
  char sha[65];
  if (kf_spec_canonical_hash(s, sha) != 0 || strlen(sha) != 64) abort();
  for (int i = 0; i < kf_spec_n_bench(s); i++) at_size(s, kf_spec_bench(s, i));
  int64_t bytes;
  if (s->bytes[0] && kf_spec_bench_bytes(s, &bytes, err, sizeof err) != 0)
    abort(); /* every bench size was checked by the parser */
  for (int i = 0; i < s->n_check_sizes; i++) at_size(s, &s->check_sizes[i]);
  for (int i = 0; i < s->n_templates; i++)
    if (kf_spec_template_find(s, s->templates[i].name) == NULL) abort();
  kf_spec_free(s);
  return 0;
}
