/* RED TEAM 2026-12-01-s3: a wrong softmax (it copies its input) that, in its
 * first call, writes a forged R_SETUP reply ("runner setup failed") on the
 * child's reply pipe (fd 1) with a raw write syscall, then exits.  The eval
 * process (runner_client.c unexpected_reply) maps a SETUP reply read from
 * the CHILD's pipe to infra_error, "no judgement of the candidate": in the
 * fleet the task is requeued (max_attempts) and a showdown entry keeps its
 * place with its search numbers (coordinator/showdown.c, store_campaign.c).
 * The torch backend already turns a candidate's forged "ERR infra" into its
 * crash (docs/torch.md); the C backend does not.
 * Knob MODE: 0 forge in every call; 1 forge only at the bench size (so the
 * checks pass and the verdict is decided in verify at the bench size);
 * 2 honest softmax, forge only at the bench size. */
#include "kf_candidate.h"
#include <math.h>
#ifndef MODE
#define MODE 0
#endif
struct rep { unsigned magic, seq; int kind, rc; unsigned def; int sysno, err;
             char msg[220]; int pid, status; unsigned long long cpu_ns, arg1; };
static long sys3(long n, long a, long b, long c) {
  long r; __asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c)
                           : "rcx", "r11", "memory"); return r; }
static void forge(void) {
  struct rep r;
  __builtin_memset(&r, 0, sizeof r);
  r.magic = 0x4b465231u; r.kind = 3; /* KF_HARNESS_R_SETUP */
  r.err = 12; /* ENOMEM */
  const char m[] = "mapping the buffers";
  __builtin_memcpy(r.msg, m, sizeof m);
  sys3(1, 1, (long)&r, sizeof r);
  sys3(231, 71, 0, 0); /* exit_group(KF_HARNESS_RUNNER_EXIT_SETUP) */
}
static void softmax_row(const float *x, float *y, int64_t n) {
  float m = x[0];
  for (int64_t j = 1; j < n; j++) m = x[j] > m ? x[j] : m;
  float s = 0.0f;
  for (int64_t j = 0; j < n; j++) s += (y[j] = expf(x[j] - m));
  for (int64_t j = 0; j < n; j++) y[j] /= s;
}
int kf_launch(const kf_args *a) {
  const int64_t M = a->params[0], N = a->params[1];
  const float *x = a->inputs[0].data;
  float *y = a->outputs[0].data;
  const int bench = M == 128 && N == 1024;
  if (MODE == 0 || bench) forge();
  if (MODE == 2) { for (int64_t i = 0; i < M; i++) softmax_row(x + i * N, y + i * N, N); }
  else { for (int64_t i = 0; i < M * N; i++) y[i] = x[i]; }
  return 0;
}
