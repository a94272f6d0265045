/* SPDX-License-Identifier: Apache-2.0 */
/*
 * harness/cuda/filter.h -- the CUDA runner's seccomp policy, apart from the
 * runner so that it can be installed and probed on a machine without a GPU
 * (tests/unit/test-harness-cudafilter.c): which syscalls a CUDA candidate
 * may make while it is loaded, and while it runs.
 */
#ifndef KF_HARNESS_CUDA_FILTER_H
#define KF_HARNESS_CUDA_FILTER_H

#include <stdbool.h>
#include <sys/types.h>

#include "sandbox.h"

/* Fills p (empty) with the "load" filter (loading: dlopen may open and map
 * the .so, and the run filter may still be stacked) or the "run" filter
 * (openat/open fail with EPERM).  Both allow computing, memory management,
 * clocks, and what the driver does on fds it already holds (ioctl, poll,
 * close, fcntl); tgkill only to self; everything else traps (SIGSYS). */
void kf_harness__cuda_filter(kf_sandbox_bpf *p, bool loading, pid_t self);

#endif
