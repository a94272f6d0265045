/* RED TEAM 2026-12-01-s3: hole 1 without writing anything.  A wrong softmax
 * (a copy) that ends its first call with exit_group(74) --
 * KF_HARNESS_RUNNER_EXIT_MAP, the code the runner's child uses when it could
 * not map its buffers.  runner_client.c classify_status maps that exit code
 * of a CALL's child to infra_error ("runner could not map its buffers"),
 * whoever chose it. */
#include "kf_candidate.h"
int kf_launch(const kf_args *a) {
  const int64_t M = a->params[0], N = a->params[1];
  const float *x = a->inputs[0].data;
  float *y = a->outputs[0].data;
  for (int64_t i = 0; i < M * N; i++) y[i] = x[i];
  long r; __asm__ volatile("syscall" : "=a"(r) : "a"(231L), "D"(74L) : "rcx", "r11", "memory");
  return 0;
}
