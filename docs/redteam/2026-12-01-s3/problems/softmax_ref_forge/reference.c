/* RED TEAM 2026-12-01-s3: a hostile reference (a problem from outside the
 * repository).  Honest double-precision softmax, except that at the bench
 * size it writes a forged R_SETUP reply on its reply pipe and exits: every
 * evaluation of this problem ends infra_error ("reference runner setup
 * failed: ..."), which the fleet retries and counts against the worker,
 * never against the problem. */
#include "kf_candidate.h"
#include <math.h>
struct rep { unsigned magic, seq; int kind, rc; unsigned def; int sysno, err;
             char msg[220]; int pid, status; unsigned long long cpu_ns, arg1; };
static long sys3(long n, long a, long b, long c) {
  long r; __asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c)
                           : "rcx", "r11", "memory"); return r; }
int kf_launch(const kf_args *a) {
  const int64_t M = a->params[0], N = a->params[1];
  const float *x = a->inputs[0].data;
  float *y = a->outputs[0].data;
  if (M == 128 && N == 1024) {
    struct rep r;
    __builtin_memset(&r, 0, sizeof r);
    r.magic = 0x4b465231u; r.kind = 3; r.err = 12;
    const char m[] = "mapping the buffers";
    __builtin_memcpy(r.msg, m, sizeof m);
    sys3(1, 1, (long)&r, sizeof r);
    sys3(231, 71, 0, 0);
  }
  for (int64_t i = 0; i < M; i++) {
    const float *xr = x + i * N; float *yr = y + i * N;
    double m = xr[0];
    for (int64_t j = 1; j < N; j++) m = xr[j] > m ? xr[j] : m;
    double s = 0;
    for (int64_t j = 0; j < N; j++) s += exp((double)xr[j] - m);
    for (int64_t j = 0; j < N; j++) yr[j] = (float)(exp((double)xr[j] - m) / s);
  }
  return 0;
}
