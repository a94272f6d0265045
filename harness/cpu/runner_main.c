/* SPDX-License-Identifier: Apache-2.0 */
/*
 * harness/cpu/runner_main.c -- kf-harness-runner: the runner mode of kf-harness
 * as its own small executable, built without sanitizers so that RLIMIT_AS
 * and seccomp apply to plain code (ASan reserves terabytes of shadow
 * memory and makes syscalls of its own).  kf-harness eval execs this file
 * when it lies beside kf-harness, else falls back to `kf-harness runner`.
 * Never run by users.
 */
#include <string.h>

#include "runner_proto.h"

int main(int argc, char **argv) {
  if (argc < 2 || strcmp(argv[1], "runner") != 0) return 2;
  return kf_harness_runner_main(argc - 2, argv + 2);
}
