/* SPDX-License-Identifier: Apache-2.0 */
/*
 * harness/cuda_proto.h -- the wire between the eval process
 * (harness/eval_cuda.c) and a CUDA runner (harness/cuda_runner.c, the
 * program kf-harness-cuda, which holds the process's only CUDA context).
 * Plain structs only: the runner links nothing of KernelFleet but
 * harness/sandbox.c.
 *
 * Channels (fds in the runner), as for the CPU runner (runner_proto.h):
 *   0  command pipe, eval -> runner: kf_cuda_cmd, one write each
 *   1  reply pipe, runner -> eval:   kf_cuda_reply, one write each
 *   2  /dev/null
 *   3  the shared memfd: the host image of the device buffer.  The runner
 *      allocates ONE device buffer of the memfd's size, and device offset
 *      == memfd offset for every tensor, guard and workspace byte.
 *
 * Ops:
 *   UPLOAD    regions memfd -> device (inputs, canaries), synchronous
 *   DOWNLOAD  regions device -> memfd (outputs, guards, inputs to check)
 *   RUN       restore the candidate's static memory, scrub the stack
 *             below; poison each output (out_poison[i] bytes) and the
 *             workspace on the device; when KF_CUDA_RUN_TIMED, keep the
 *             GPU busy for --warm-us (memsets), flush L2 (a memset of a
 *             buffer >= 2 x L2) and reset persisting L2 lines; then,
 *             without waiting for those, event on the legacy stream,
 *             kf_launch(stream), event on the legacy stream (which waits
 *             for every blocking stream, the per-thread default stream
 *             included), device-wide synchronize; check that the call
 *             wrote no static memory outside --mutable; the reply carries
 *             the event time
 *   EXIT      _exit(0)
 * A CUDA error ends the runner: it replies KF_CUDA_R_CUDAERR with the
 * error's name and exits (the context is unusable after most of them).
 */
#ifndef KF_HARNESS_CUDA_PROTO_H
#define KF_HARNESS_CUDA_PROTO_H

#include <stdint.h>

#include "runner_proto.h" /* kf_harness_tdesc, KF_HARNESS_R_*, DEF bits */

#define KF_CUDA_MAGIC 0x4b464331u /* "KFC1" */
#define KF_CUDA_MAX_REGIONS 48

enum {
  KF_CUDA_OP_UPLOAD = 1,
  KF_CUDA_OP_DOWNLOAD = 2,
  KF_CUDA_OP_RUN = 3,
  KF_CUDA_OP_EXIT = 4,
};

#define KF_CUDA_RUN_TIMED 1u /* flush L2 and reset persisting lines first */

/* Reply kinds beyond KF_HARNESS_R_*. */
enum {
  KF_CUDA_R_CUDAERR = 16, /* .cuda_err, .msg "cudaErrorX: text (where)" */
  KF_CUDA_R_STATE = 17,   /* RUN: the call wrote the candidate's static
                             memory outside the --mutable ranges */
};

typedef struct {
  uint64_t off; /* bytes, memfd == device offset */
  uint64_t len; /* bytes */
} kf_cuda_region;

typedef struct {
  uint32_t magic;   /* KF_CUDA_MAGIC */
  uint32_t seq;     /* echoed in the reply */
  uint32_t op;      /* KF_CUDA_OP_* */
  uint32_t flags;   /* RUN: KF_CUDA_RUN_* */
  int32_t n_inputs, n_outputs, n_params, n_regions;
  kf_harness_tdesc in[KF_HARNESS_MAX_T];
  kf_harness_tdesc out[KF_HARNESS_MAX_T];
  uint8_t out_poison[KF_HARNESS_MAX_T]; /* byte each output is set to */
  uint8_t ws_poison;                    /* byte the workspace is set to */
  uint8_t pad[7];
  int64_t params[KF_HARNESS_MAX_P];
  uint64_t ws_off, ws_bytes;
  kf_cuda_region regions[KF_CUDA_MAX_REGIONS]; /* UPLOAD / DOWNLOAD */
} kf_cuda_cmd;

typedef struct {
  uint32_t magic;      /* KF_CUDA_MAGIC */
  uint32_t seq;        /* the command's; 0 for READY/SETUP/VIOLATION */
  int32_t kind;        /* KF_HARNESS_R_* or KF_CUDA_R_* */
  int32_t rc;          /* DONE: kf_launch's return value */
  uint32_t defenses;   /* READY: KF_HARNESS_DEF_* bits */
  int32_t sysno;       /* VIOLATION: the syscall number */
  int32_t err;         /* SETUP/LOADFAIL: errno, 0 when none */
  int32_t cuda_err;    /* CUDAERR: the cudaError_t */
  uint64_t elapsed_ns; /* DONE: event time around kf_launch */
  uint64_t l2_bytes;   /* READY: the device's L2 size */
  uint64_t flush_bytes;/* READY: the L2 flush buffer's size */
  char msg[200];       /* NUL-terminated detail */
} kf_cuda_reply;

_Static_assert(sizeof(kf_cuda_cmd) <= 4096, "cmd fits PIPE_BUF");
_Static_assert(sizeof(kf_cuda_reply) <= 512, "reply is small");

/* Entry points of kf-harness-cuda (harness/cuda_main.c). */
int kf_harness_cuda_runner_main(int argc, char **argv);
int kf_harness_cuda_info_main(int argc, char **argv);

#endif
