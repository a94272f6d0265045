/* SPDX-License-Identifier: Apache-2.0 */
/*
 * harness/cuda/kernels.h -- the trusted device code of kf-harness-cuda
 * (kernels.cu), as plain C entry points.  Each launches asynchronously on
 * the legacy default stream and returns the cudaError_t of the launch (0
 * on success); results land in device memory the caller reads after a
 * synchronize.
 */
#ifndef KF_HARNESS_CUDA_KERNELS_H
#define KF_HARNESS_CUDA_KERNELS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* n elements of dtype dt (KF_GEN_*) at dst, distribution dist under key
 * (core/gen.h). */
int kf_cuda_gen(unsigned char *dst, int dt, uint64_t n, int dist,
                int64_t range, uint64_t key);
/* base[off, off+len) := the position-dependent canary, xor salt. */
int kf_cuda_canary(unsigned char *base, uint64_t off, uint64_t len,
                   unsigned char salt);
/* *first := min(*first, first offset in [off, off+len) that is not that
 * canary). */
int kf_cuda_canary_check(const unsigned char *base, uint64_t off,
                         uint64_t len, unsigned char salt,
                         unsigned long long *first);
/* *sum += the digest of p[0, len) (core/gen.h's terms). */
int kf_cuda_digest(const unsigned char *p, uint64_t len,
                   unsigned long long *sum);
/* Reads bytes at p once (16-byte loads, sms x 8 blocks): the read
 * bandwidth probe. */
int kf_cuda_read(const void *p, uint64_t bytes, int sms,
                 unsigned long long *sink);

/* Lets the scrub below take all the shared memory a block may opt in to
 * on device; *bytes := that size (0 on failure). */
int kf_cuda_smem_prepare(int device, int *bytes);
/* Zeroes `bytes` of shared memory in each of `sms` blocks: with a block's
 * whole opt-in size only one fits on an SM, so the blocks land on every
 * SM, and what an earlier kernel left in shared memory is gone. */
int kf_cuda_smem_scrub(int sms, int bytes);

/* The local-memory scrub: picks the smallest of its kernels (512 B to 64
 * KiB of local array a thread) that covers max(min_bytes, the context's
 * stack-size limit) -- min_bytes: the candidate's largest stack frame --
 * and a grid of two full waves on every SM: *variant, *blocks for the
 * scrub.  Fails (cudaError_t) when no kernel is large enough. */
int kf_cuda_lmem_prepare(int device, uint32_t min_bytes, int *variant,
                         int *blocks);
/* Zeroes every hardware thread slot's local-memory window up to the
 * prepared size: what an earlier kernel left in its uninitialized local
 * arrays is gone. */
int kf_cuda_lmem_scrub(int variant, int blocks);

/* The register scrub: two kernels (32 and 64 registers a thread), each
 * a cooperative grid of one full wave, so that every warp slot of every
 * SM runs one of its warps and overwrites the registers ptxas gives it --
 * all but the top two of each warp's allocation (kernels.cu says what
 * that leaves).  Checks cooperative launch and the occupancy that needs,
 * and that scratch_bytes holds what the kernels load.  Fails
 * (cudaError_t) when the device cannot run them so. */
typedef struct {
  int blocks32, blocks64;
} kf_cuda_regscrub;
int kf_cuda_reg_prepare(int device, uint64_t scratch_bytes,
                        kf_cuda_regscrub *r);
/* Overwrites the registers of every SM with words of scratch (loaded
 * only): what an earlier kernel left there is gone, but for the rows
 * above. */
int kf_cuda_reg_scrub(void *scratch, const kf_cuda_regscrub *r);

/* The timing gate.  A kernel of one block per SM, each taking the whole
 * opt-in shared memory, so that no block of any other kernel, on any
 * stream, runs beside it: the runner launches it after its own work ahead
 * of a timed call and calls the candidate only once every SM holds a gate
 * block (host[KF_CUDA_GATE_RESIDENT] set by the device), so nothing the
 * candidate queues -- on its stream or one it made -- runs before the
 * runner opens the gate (host[KF_CUDA_GATE_OPEN] set by the host) after
 * the call returns.  A gate not opened within expire_ns opens itself (a
 * call that waits for its own work inside kf_launch would otherwise never
 * return) and says so in host[KF_CUDA_GATE_EXPIRED].  d is device memory,
 * zeroed before each launch; host is mapped host memory, its words zeroed
 * by the host. */
typedef struct {
  unsigned resident; /* gate blocks that arrived */
  unsigned open;     /* set by block 0 when the host opened the gate */
} kf_cuda_gate_dev;
enum {
  KF_CUDA_GATE_RESIDENT = 0, /* host word: every SM holds a gate block */
  KF_CUDA_GATE_OPEN = 1,     /* host word: the host opened the gate */
  KF_CUDA_GATE_EXPIRED = 2   /* host word: the gate opened itself */
};
/* *blocks := the SMs, *smem := the opt-in size; fails (cudaError_t)
 * when more than one gate block would fit on an SM. */
int kf_cuda_gate_prepare(int device, int *blocks, int *smem);
/* One tiny kernel on the legacy stream, adding 1 to *w (the idle gate's
 * probe, runner.c). */
int kf_cuda_probe(unsigned *w);
int kf_cuda_gate(kf_cuda_gate_dev *d, volatile unsigned *host, int blocks,
                 int smem, uint64_t expire_ns);

#ifdef __cplusplus
}
#endif

#endif
