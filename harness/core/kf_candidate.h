/* SPDX-License-Identifier: Apache-2.0 */
/*
 * harness/core/kf_candidate.h -- the ABI every candidate and reference kernel
 * implements.  Shipped with KernelFleet; a candidate includes it and
 * defines exactly one function:
 *
 *   int kf_launch(const kf_args *a);
 *
 * CPU candidates are C sources compiled to a shared object; CUDA
 * candidates are .cu sources whose kf_launch is `extern "C"` and launches
 * its kernels on a->stream.  Knobs arrive as -DNAME=value.  kf_launch
 * returns 0 on success; any other value is reported as a crash.
 *
 * What a candidate may rely on: inputs hold the values the harness drew
 * (never the same twice), outputs are poisoned before each call and must be
 * written completely, workspace holds workspace_bytes of scratch with
 * undefined contents.  What it must not do: keep state between calls, read
 * or write outside these buffers, start threads, processes or streams, or
 * touch files or the network.  The harness checks all of this.
 */
#ifndef KF_CANDIDATE_H
#define KF_CANDIDATE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KF_ABI_VERSION 1
#define KF_MAX_DIMS 4

typedef struct {
  void *data;               /* host memory (cpu) or device memory (cuda) */
  int32_t dtype;            /* kf_dtype order: f32 f64 bf16 f16 i32 i64 bool */
  int32_t ndim;
  int64_t dims[KF_MAX_DIMS];
  int64_t numel;
} kf_tensor;

typedef struct {
  int32_t abi_version;      /* KF_ABI_VERSION */
  int32_t n_inputs;
  int32_t n_outputs;
  int32_t n_params;
  const kf_tensor *inputs;
  kf_tensor *outputs;
  const int64_t *params;    /* size parameters, in spec order */
  void *workspace;
  size_t workspace_bytes;
  void *stream;             /* cudaStream_t for cuda; NULL for cpu */
} kf_args;

typedef int (*kf_launch_fn)(const kf_args *a);

#ifdef __cplusplus
}
#endif

#endif
