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
/* base[off, off+len) := the position-dependent canary. */
int kf_cuda_canary(unsigned char *base, uint64_t off, uint64_t len);
/* *first := min(*first, first offset in [off, off+len) that is not the
 * canary). */
int kf_cuda_canary_check(const unsigned char *base, uint64_t off,
                         uint64_t len, unsigned long long *first);
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

#ifdef __cplusplus
}
#endif

#endif
