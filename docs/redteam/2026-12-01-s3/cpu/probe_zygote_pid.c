/* RED TEAM 2026-12-01-s3 probe: is the zygote's pid (kf_harness_runner_main's
 * local `zygote`, inherited by fork) readable on the call child's stack?  At
 * the first check (M=1 N=1) it writes, as its wrong answer, P - Z + 1e6 *
 * (word offset above its frame) for the nearest pid-like word Z < P (P = its
 * own pid), so the wrong_answer reason leaks it. */
#include "kf_candidate.h"
static long sys0(long n) { long r; __asm__ volatile("syscall" : "=a"(r) : "a"(n) : "rcx", "r11", "memory"); return r; }
int kf_launch(const kf_args *a) {
  volatile int here = 0;
  const int P = (int)sys0(39); /* getpid */
  const int *s = (const int *)&here;
  int best = 0, bestoff = 0;
  for (int i = 0; i < 2048; i++) { /* 8 KiB above */
    int v = s[i];
    if (v < P && v > P - 500 && v > best) { best = v; bestoff = i; }
  }
  float *y = a->outputs[0].data;
  y[0] = best ? (float)(P - best) + 1e6f * (float)bestoff : -1.0f;
  return 0;
}
