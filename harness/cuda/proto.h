/* SPDX-License-Identifier: Apache-2.0 */
/*
 * harness/cuda/proto.h -- the wire between the eval process
 * (harness/cuda/backend.c) and a CUDA runner (harness/cuda/runner.c, the
 * program kf-harness-cuda, which holds the process's only CUDA context).
 * Plain structs only: the runner links nothing of KernelFleet but
 * harness/core/sandbox.c and its own device code.
 *
 * Channels (fds in the runner), as for the CPU runner (cpu/runner_proto.h):
 *   0  command pipe, eval -> runner: kf_cuda_cmd, one write each
 *   1  reply pipe, runner -> eval:   kf_cuda_reply, one write each
 *   2  /dev/null
 *   3  the shared memfd: the host image of the device buffer.  The runner
 *      allocates ONE device buffer of the memfd's size, and device offset
 *      == memfd offset for every tensor, guard and workspace byte.
 *
 * Ops (all but RUN run the runner's own trusted code, kernels.cu):
 *   CANARY    regions := the position-dependent canary, on the device
 *   GEN       each gen[] tensor drawn on the device from its key
 *             (core/gen.h): the key arrives with the command that draws,
 *             right before the calls that use the data
 *   RUN       restore the candidate's static memory, scrub the stack
 *             below; poison each output and fill the workspace on the
 *             device; scrub local memory, every register and shared
 *             memory of every SM; scrub the L2 flush buffer (every call:
 *             it can hold nothing from one call to the next) -- for a
 *             timed call (KF_CUDA_RUN_TIMED, always with PREPPED: a timed
 *             RUN without it ends the runner) PREP did the scrubs, the
 *             warm-up and the persisting-L2 reset, and a read sweep evicts
 *             the drawn inputs; then, without waiting,
 *             event on the legacy stream, kf_launch(stream), event,
 *             device-wide synchronize; check that no device memory stayed
 *             allocated and no static memory outside --mutable was written;
 *             with CUPTI, attribute every kernel, copy and memset the
 *             process ran during the call (cupti.c): work on another
 *             stream or context is refused (KF_CUDA_R_TIMING), and the
 *             time is the largest of the events, the host time of the call
 *             and the span from the end of the flush to the end of the
 *             candidate's last GPU activity
 *   PREP      before a timed call's draw: the idle gate (--idle-gate),
 *             the warm-up and RUN's clearing of what the last call left
 *             (local and shared memory, the flush buffer and L2, the probe
 *             scratch), so that the GEN and RUN that follow (flag
 *             PREPPED) do little but the call: the eval holds the time
 *             the runner claims to its own clock of those two commands.
 *             A PREPPED RUN replies as soon as the call is done, with a
 *             digest of each output (.digest) that the outputs downloaded
 *             later must match; its trace comes with CHECK
 *   CHECK     after a PREPPED RUN's DONE: the call's trace (CUPTI's
 *             attribution and the harness's marker work), which may raise
 *             the time or refuse the call
 *   DOWNLOAD  regions device -> memfd
 *   PROBE     the first changed canary byte in regions (guards), and a
 *             digest of each in[] tensor
 *   CASE      a verification case in one command: GEN, an untimed RUN,
 *             DOWNLOAD of the outputs, PROBE; one reply with all of it
 *   EXIT      _exit(0)
 * A CUDA error ends the runner: it replies KF_CUDA_R_CUDAERR with the
 * error's name and exits (the context is unusable after most of them).
 */
#ifndef KF_HARNESS_CUDA_PROTO_H
#define KF_HARNESS_CUDA_PROTO_H

#include <stdint.h>

#include "runner_proto.h" /* kf_harness_tdesc, KF_HARNESS_R_* */

#define KF_CUDA_MAGIC 0x4b464332u /* "KFC2" */
#define KF_CUDA_MAX_REGIONS 40

enum {
  KF_CUDA_OP_CANARY = 1,
  KF_CUDA_OP_DOWNLOAD = 2,
  KF_CUDA_OP_RUN = 3,
  KF_CUDA_OP_EXIT = 4,
  KF_CUDA_OP_GEN = 5,
  KF_CUDA_OP_PROBE = 6,
  KF_CUDA_OP_CASE = 7, /* GEN + untimed RUN + DOWNLOAD of out[] + PROBE */
  KF_CUDA_OP_PREP = 8, /* a timed RUN's gate, warm-up and clearing */
  KF_CUDA_OP_CHECK = 9, /* a PREPPED RUN's trace, after its DONE */
};

#define KF_CUDA_RUN_TIMED 1u /* warm-up memsets first; persisting L2 reset */
#define KF_CUDA_RUN_PREPPED 2u /* RUN: PREP did the gate and the clearing */

/* Reply kinds beyond KF_HARNESS_R_*. */
enum {
  KF_CUDA_R_CUDAERR = 16, /* .cuda_err, .msg "cudaErrorX: text (where)" */
  KF_CUDA_R_STATE = 17,   /* RUN: the call wrote the candidate's static
                             memory outside the --mutable ranges, or left
                             device memory allocated */
  KF_CUDA_R_TIMING = 18,  /* RUN: GPU work outside the given stream or
                             context, or before the call began */
};

typedef struct {
  uint64_t off; /* bytes, memfd == device offset */
  uint64_t len; /* bytes */
} kf_cuda_region;

typedef struct {
  uint64_t off;   /* the tensor's device offset */
  uint64_t n;     /* elements */
  int32_t dtype;  /* kf_dtype */
  int32_t dist;   /* kf_dist */
  int64_t range;  /* INDEX bound */
  uint64_t key;
} kf_cuda_draw;

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
  uint8_t canary_salt;                  /* CANARY PROBE: xor'ed into it */
  uint8_t pad[2];
  int32_t n_gen;                        /* GEN */
  int64_t params[KF_HARNESS_MAX_P];
  uint64_t ws_off, ws_bytes;
  kf_cuda_region regions[KF_CUDA_MAX_REGIONS]; /* CANARY DOWNLOAD PROBE */
  kf_cuda_draw gen[KF_HARNESS_MAX_T];
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
  uint64_t elapsed_ns; /* DONE (RUN): the time of the call */
  uint64_t event_ns;   /* DONE (RUN): the events' part of it */
  uint32_t n_activity; /* DONE (RUN): GPU activities attributed to it */
  uint32_t idle_slow;  /* DONE (timed RUN, --idle-gate): probes that found
                          the GPU held by another process before the call */
  uint64_t idle_busy_ns; /* ... from the first probe to the last slow one */
  uint32_t idle_ranout;  /* ... 1: still busy at the gate's deadline */
  uint32_t pad;
  uint64_t l2_bytes;   /* READY: the device's L2 size */
  uint64_t flush_bytes;/* READY: the L2 flush buffer's size */
  uint64_t bad;        /* PROBE: first changed canary byte, UINT64_MAX:
                          none */
  uint64_t digest[KF_HARNESS_MAX_T]; /* PROBE: per in[] tensor;
                                        PREPPED RUN: per out[] tensor */
  char msg[200];       /* NUL-terminated detail */
} kf_cuda_reply;

_Static_assert(sizeof(kf_cuda_cmd) <= 4096, "cmd fits PIPE_BUF");
_Static_assert(sizeof(kf_cuda_reply) <= 512, "reply is small");

/* Entry points of kf-harness-cuda (harness/cuda/main.c). */
int kf_harness_cuda_runner_main(int argc, char **argv);
/* harness/cuda/netns.c */
int kf_harness_cuda_netns_exec_main(int argc, char **argv);
int kf_harness_cuda_info_main(int argc, char **argv);
int kf_harness_cuda_footprint_main(int argc, char **argv);

#endif
