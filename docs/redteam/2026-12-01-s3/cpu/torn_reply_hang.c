/* RED TEAM 2026-12-01-s3: a reply torn on purpose.  In its first call the
 * candidate writes ONE byte on the child's reply pipe (fd 1) with a raw
 * write syscall and exits (MODE=0) or spins (MODE=1).  The eval process
 * (runner_client.c read_msg) polls the reply pipe with the call's timeout,
 * sees it readable, and then loops on a BLOCKING read() until a whole
 * kf_harness_reply has arrived -- without the timeout.  The zygote still
 * holds the pipe's write end, so no EOF ever comes: the evaluation hangs
 * for good (no per-call timeout, no verdict).  MODE=2: the same byte after
 * a forged DONE with the right sequence number (as work_after_return.c
 * finds it), which hangs end_child() instead. */
#include "kf_candidate.h"
#ifndef MODE
#define MODE 0
#endif
static long sys3(long n, long a, long b, long c) {
  long r; __asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c)
                           : "rcx", "r11", "memory"); return r; }
struct rep { unsigned magic, seq; int kind, rc; unsigned def; int sysno, err;
             char msg[220]; int pid, status; unsigned long long cpu_ns, arg1; };
#define CMD_SEQ(params) (*(const unsigned *)((const char *)(params) - 916))
int kf_launch(const kf_args *a) {
  const int64_t M = a->params[0], N = a->params[1];
  const float *x = a->inputs[0].data;
  float *y = a->outputs[0].data;
  for (int64_t i = 0; i < M * N; i++) y[i] = x[i];
  if (MODE == 2) {
    struct { struct rep r; char extra; } b;
    __builtin_memset(&b, 0, sizeof b);
    b.r.magic = 0x4b465231u; b.r.seq = CMD_SEQ(a->params); b.r.kind = 2;
    b.extra = 0x31;
    sys3(1, 1, (long)&b, sizeof b.r + 1);
    for (;;) { }
  }
  char c = 0x31;
  sys3(1, 1, (long)&c, 1);
  if (MODE == 1) for (;;) { }
  sys3(231, 0, 0, 0);
  return 0;
}
