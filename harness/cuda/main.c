/* SPDX-License-Identifier: Apache-2.0 */
/*
 * harness/cuda/main.c -- kf-harness-cuda: the harness's only program that
 * links the CUDA runtime (shared, libcudart.so.13 -- the same instance a
 * candidate built with -cudart shared binds to).  Built only when CMake
 * finds the CUDA toolkit (KF_CUDA).  Modes, never run by users directly:
 *
 *   kf-harness-cuda info [--device N] [--no-measure]
 *       the device and its measured ceilings as JSON (harness/cuda/info.c);
 *       users run `kf-harness cuda-info`, which adds the nvcc version
 *   kf-harness-cuda footprint --device N --bytes B [--warm-us U]
 *       copy/read/write rates at one footprint with a timed call's cache
 *       state, for the eval's too-fast floor (harness/cuda/footprint.c)
 *   kf-harness-cuda runner --jail DIR --so NAME --device N ...
 *       the sandboxed process that loads one CUDA candidate
 *       (harness/cuda/runner.c), exec'd by `kf-harness eval`
 *   kf-harness-cuda netns-exec /PATH/PROG ARGS...
 *       PROG in a fresh network namespace with loopback up: the profiler
 *       and the profiled runner (harness/cuda/netns.c)
 */
#include <stdio.h>
#include <string.h>

#include "proto.h"

int main(int argc, char **argv) {
  if (argc >= 2 && !strcmp(argv[1], "info"))
    return kf_harness_cuda_info_main(argc - 2, argv + 2);
  if (argc >= 2 && !strcmp(argv[1], "footprint"))
    return kf_harness_cuda_footprint_main(argc - 2, argv + 2);
  if (argc >= 2 && !strcmp(argv[1], "runner"))
    return kf_harness_cuda_runner_main(argc - 2, argv + 2);
  if (argc >= 2 && !strcmp(argv[1], "netns-exec"))
    return kf_harness_cuda_netns_exec_main(argc - 2, argv + 2);
  fprintf(stderr, "usage: kf-harness-cuda info [--device N] [--no-measure]\n"
                  "       kf-harness-cuda footprint --device N --bytes B [--warm-us U] (internal)\n"
                  "       kf-harness-cuda runner ... (internal)\n"
                  "       kf-harness-cuda netns-exec /PATH/PROG ARGS... (internal)\n");
  return 2;
}
