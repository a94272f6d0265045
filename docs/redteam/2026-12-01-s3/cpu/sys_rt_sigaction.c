/* RED TEAM 2026-12-01-s3: an honest softmax that first makes one raw
 * syscall the run filter should not allow: rt_sigaction (13), by inline asm
 * (no libc import to refuse).  Expected: sandbox_violation. */
#include "kf_candidate.h"
#include <math.h>
static long sys3(long n, long a, long b, long c) {
  long r; __asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c)
                           : "rcx", "r11", "memory"); return r; }
int kf_launch(const kf_args *a) {
  const int64_t M = a->params[0], N = a->params[1];
  const float *x = a->inputs[0].data;
  float *y = a->outputs[0].data;
  volatile long r = sys3(13, 11, 0, 0); (void)r;
  for (int64_t i = 0; i < M; i++) {
    const float *xr = x + i * N; float *yr = y + i * N;
    float m = xr[0];
    for (int64_t j = 1; j < N; j++) m = xr[j] > m ? xr[j] : m;
    float s = 0.0f;
    for (int64_t j = 0; j < N; j++) s += (yr[j] = expf(xr[j] - m));
    for (int64_t j = 0; j < N; j++) yr[j] /= s;
  }
  return 0;
}
