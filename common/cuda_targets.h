/* SPDX-License-Identifier: Apache-2.0 */
/*
 * common/cuda_targets.h -- the one table of CUDA compile targets per
 * device class: which ISA a GPU of compute capability MAJOR.MINOR is built
 * for.  The worker registers its device with this ISA (worker/
 * device_cuda.c), the harness builds every candidate and reference for
 * the ISA its worker registered (-gencode=arch=compute_X,code=sm_X), and
 * scripts/check-cuda-problems reads this file to cross-compile every
 * problem for every row, so the classes no GPU here has (B200, RTX
 * Blackwell) are at least built in CI.
 *
 * The arch-specific ("a") targets carry the instructions that make each
 * generation fast (wgmma and TMA on 9.0, tcgen05 on 10.0, the 12.0
 * extensions on consumer Blackwell), at the price of running on that
 * compute capability only -- which is what a per-class measurement
 * wants.  A GPU whose compute capability is not listed is built for the
 * plain sm_MAJORMINOR target (kf_device_cuda_isa).
 *
 * Keep each row on one line: the check script parses them.
 */
#ifndef KF_CUDA_TARGETS_H
#define KF_CUDA_TARGETS_H

/* X(major, minor, isa, family) */
#define KF_CUDA_TARGETS(X)                                                  \
  X(9, 0, "sm_90a", "Hopper: H100, H200")                                  \
  X(10, 0, "sm_100a", "Blackwell datacenter: B200, GB200")                 \
  X(10, 3, "sm_103a", "Blackwell Ultra: B300, GB300")                      \
  X(12, 0, "sm_120a", "Blackwell RTX: RTX 5090, RTX PRO 6000")

#endif
