/* SPDX-License-Identifier: Apache-2.0 */
/*
 * harness/cuda/cuda_eval.h -- names shared between the eval-side files of the
 * harness's CUDA backend (kf_harness__*).  None of these files includes a
 * CUDA header or links the CUDA runtime: the eval process drives nvcc and
 * kf-harness-cuda, and never creates a CUDA context, so all of this builds
 * (and the compile and link stages run) on machines without a GPU, and
 * everything but the compile stage on machines without nvcc.
 *
 *   backend.c   the backend's operations (core/backend.h), the GPU lock
 *   compile.c   nvcc, the resource report
 *   usage.c     parsing that report (no dependencies)
 *   elfcheck.c  the link stage's allow-list for nvcc's objects
 *   info_cmd.c  `kf-harness cuda-info`
 * The runner program (kf-harness-cuda: main.c, runner.c, info.c,
 * filter.c, cupti.c, kernels.cu) is the only CUDA code.
 */
#ifndef KF_HARNESS_CUDA_INTERNAL_H
#define KF_HARNESS_CUDA_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "elf_util.h"
#include "harness.h"
#include "kernelfleet.pb-c.h"

/* One kernel's resources, from ptxas. */
typedef struct {
  char kernel[128];          /* mangled entry name */
  uint32_t registers;        /* per thread */
  uint32_t shared_bytes;     /* static shared memory per block */
  uint32_t spill_bytes;      /* spill stores, bytes per thread */
  uint32_t spill_load_bytes; /* spill loads, bytes per thread */
  uint32_t stack_bytes;      /* stack frame, bytes per thread */
} kf_harness_kres;

/* Parses nvcc --resource-usage output; returns the number of kernels
 * stored in out (at most max). */
int kf_harness__parse_resource_usage(const char *text, kf_harness_kres *out,
                                     int max);

/* The nvcc to run: $KF_NVCC, then the toolkit CMake found
 * (KF_NVCC_DEFAULT), /usr/local/cuda/bin/nvcc, then PATH.  NULL when none
 * is executable. */
const char *kf_harness__nvcc_path(void);

/* "-gencode=arch=compute_90a,code=sm_90a" for "sm_90a" (also sm_100a,
 * sm_120, ...).  Returns 0, or -1 for a malformed target. */
int kf_harness__gencode(const char *arch, char *out, size_t outlen);

typedef struct {
  const char *dir;     /* build directory (owned by uid nobody as root) */
  const char *base;    /* "candidate" -> base.cu, base.so */
  const char *src;
  const char *const *knob_names, *const *knob_values;
  int n_knobs;
  const char *arch;    /* "sm_90a" */
  int timeout_ms;      /* wall clock for nvcc and all its children */
} kf_harness_nvcc_job;

/* Writes dir/base.cu and dir/kf_candidate.h, starts nvcc (as nobody when
 * root, own process group, limits) and returns at once with *pid set;
 * *out_fd is the read end of its merged stdout/stderr.  0, or an outcome
 * (SPEC_ERROR for a bad knob, COMPILE_ERROR for a source the text check
 * refuses, INFRA_ERROR) with why.  nvcc runs in the mount jail of
 * compile_jail.c when root. */
int kf_harness__nvcc_start(const kf_harness_nvcc_job *j, int *pid,
                           int *out_fd, char *why, size_t whylen);

/* Collects a started nvcc's output and status (until its deadline, then
 * kills its group).  Both jobs run at once: reference and candidate
 * compile in parallel.  Returns 0 or COMPILE_ERROR / COMPILE_TIMEOUT /
 * INFRA_ERROR with why; out receives the compiler's output (for the
 * resource report), NUL-terminated.  On success why says which defenses
 * applied ("defenses: mount-jail uid-nobody ..."). */
int kf_harness__nvcc_finish(const kf_harness_nvcc_job *j, int pid, int out_fd,
                            char *out, size_t outcap, char *why, size_t whylen);

/* Link-stage facts of an nvcc shared object. */
#define KF_HARNESS_CUDA_MAX_STATE 32
#define KF_HARNESS_CUDA_MAX_MUT 64 /* = the runner's MAX_MUT */
typedef struct {
  uint64_t init_array, fini_array; /* entries */
  uint64_t init_size, fini_size;   /* .init / .fini bytes */
  kf_harness_elf_undefs undefs;    /* a baseline's: names its toolchain
                                      code calls (elf_util.h) */
  /* symbols defined in host-side writable data (.data, .bss,
   * .nvFatBinSegment, ...): in a baseline, the toolchain's own */
  char state_syms[KF_HARNESS_CUDA_MAX_STATE][64];
  uint64_t state_size[KF_HARNESS_CUDA_MAX_STATE]; /* a candidate's symbol
                                                    of that name must have
                                                    the same size */
  int n_state_syms;
  /* checked against a baseline: where the toolchain's own writable
   * symbols lie (the baseline's, nvcc's launch-stub statics), which may
   * change while kf_launch runs; virtual addresses, sorted, merged.  The
   * runner restores all writable data before each call but compares only
   * the rest after it (cuda_runner.c --mutable). */
  uint64_t mut_off[KF_HARNESS_CUDA_MAX_MUT], mut_len[KF_HARNESS_CUDA_MAX_MUT];
  int n_mut;
} kf_harness_cuda_elf;

/* The source of the link check's baseline: an empty candidate, built by
 * the same nvcc command line (backend.c builds it beside the others). */
#define KF_HARNESS_CUDA_BASELINE_SRC                                          \
  "#include \"kf_candidate.h\"\n"                                            \
  "extern \"C\" int kf_launch(const kf_args *a) { return a == 0; }\n"

/* The CUDA link check: every undefined dynamic symbol on the CUDA
 * allow-list, DT_NEEDED only libcudart.so.13 and the C/C++ runtime, no
 * more constructors/destructors than `baseline` (an empty candidate built
 * by the same nvcc: frame_dummy + nvcc's registration), no IFUNC, TLS or
 * preinit, no writable device data, and no writable host data beyond the
 * baseline's own symbols, nvcc's per-kernel launch-stub statics and the
 * host shadows of __constant__ variables (NULL baseline: only collects
 * `info`, skipping the comparisons).  0 or LINK_REJECTED naming the
 * symbol. */
int kf_harness__elf_check_cuda(const unsigned char *buf, size_t len,
                               const kf_harness_cuda_elf *baseline,
                               kf_harness_cuda_elf *info, char *why,
                               size_t whylen);

/* `kf-harness cuda-info [--device N] [--no-measure]`: runs
 * kf-harness-cuda info, adds the nvcc version, prints JSON.  Exit code. */
int kf_harness__cuda_info_cmd(int argc, char **argv);


#endif
