/* SPDX-License-Identifier: Apache-2.0 */
/*
 * harness/cuda/compile.c -- the compile stage for CUDA: one .cu to one
 * shared object with nvcc, for the worker's own GPU target:
 *
 *   nvcc -O3 -gencode=arch=compute_90a,code=sm_90a -cudart shared
 *        -Xcompiler -fPIC -shared --resource-usage -I. -DKNOB=value
 *        -o base.so base.cu
 *
 * (SASS for exactly that target and no PTX, so the driver never JIT-
 * compiles at load time.)  As with cc (harness/cpu/compile.c): argv only, no
 * shell, knobs checked against fixed character sets, the same text check
 * of the source (no absolute or ".." includes, no .incbin/.include),
 * kf_candidate.h written beside the source, the mount jail of
 * harness/core/compile_jail.c when root (the toolchain -- /usr, which holds
 * /usr/local/cuda, or the toolkit's own prefix -- /dev/null, a private
 * /tmp and the build directory: host code's inline asm can spell .incbin
 * by string pasting, and the host assembler would read any host file),
 * uid nobody, its own process group killed at the deadline, an almost
 * empty environment, no network.
 * Limits are wider than cc's: nvcc runs cudafe++, cicc, ptxas, fatbinary
 * and the host gcc in turn (RLIMIT_AS 8 GiB for cicc on large templates,
 * CPU 300 s, NPROC 256 for the uid, FSIZE 256 MiB).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cuda_eval.h"
#include "internal.h"
#include "log.h"
#include "outcome.h"
#include "util.h"

#define MAX_KNOBS 32

const char *kf_harness__nvcc_path(void) {
  static char found[1024];
  const char *env = getenv("KF_NVCC");
  if (env && *env) return access(env, X_OK) == 0 ? env : NULL;
#ifdef KF_NVCC_DEFAULT
  if (access(KF_NVCC_DEFAULT, X_OK) == 0) return KF_NVCC_DEFAULT;
#endif
  if (access("/usr/local/cuda/bin/nvcc", X_OK) == 0)
    return "/usr/local/cuda/bin/nvcc";
  const char *path = getenv("PATH");
  while (path && *path) {
    size_t n = strcspn(path, ":");
    if (n && n < sizeof found - 6) {
      snprintf(found, sizeof found, "%.*s/nvcc", (int)n, path);
      if (access(found, X_OK) == 0) return found;
    }
    path += n;
    if (*path == ':') path++;
  }
  return NULL;
}

int kf_harness__gencode(const char *arch, char *out, size_t outlen) {
  /* sm_<digits>[a|f] */
  if (!arch || strncmp(arch, "sm_", 3) != 0) return -1;
  const char *p = arch + 3;
  size_t d = strspn(p, "0123456789");
  if (d < 2 || d > 3) return -1;
  if (p[d] && !((p[d] == 'a' || p[d] == 'f') && !p[d + 1])) return -1;
  snprintf(out, outlen, "-gencode=arch=compute_%s,code=sm_%s", p, p);
  return 0;
}

/* Each of the (at most three) live jobs has its slot of static state. */
static int job_slot(const kf_harness_nvcc_job *j) {
  return !strcmp(j->base, "reference") ? 1
         : !strcmp(j->base, "baseline") ? 2 : 0;
}

/* The jail of each slot's nvcc: its state is known once it started. */
static kf_harness_jail g_jail[3];

int kf_harness__nvcc_start(const kf_harness_nvcc_job *j, int *pid,
                           int *out_fd, char *why, size_t whylen) {
  *pid = 0;
  *out_fd = -1;
  if (j->n_knobs > MAX_KNOBS) {
    snprintf(why, whylen, "%d knobs; at most %d", j->n_knobs, MAX_KNOBS);
    return KF_OUTCOME_SPEC_ERROR;
  }
  for (int i = 0; i < j->n_knobs; i++) {
    int oc = kf_harness__check_knob(j->knob_names[i], j->knob_values[i], why,
                                    whylen);
    if (oc) return oc;
  }
  char gencode[96];
  if (kf_harness__gencode(j->arch, gencode, sizeof gencode)) {
    snprintf(why, whylen, "CUDA target '%.32s' is not of the form sm_90a",
             j->arch ? j->arch : "");
    return KF_OUTCOME_INFRA_ERROR;
  }
  const char *nvcc = kf_harness__nvcc_path();
  if (!nvcc) {
    snprintf(why, whylen, "no nvcc ($KF_NVCC, /usr/local/cuda/bin, PATH): "
             "this machine cannot build CUDA candidates");
    return KF_OUTCOME_INFRA_ERROR;
  }
  /* three jobs may be live: candidate, reference, the link baseline */
  static char cufile[3][80], sofile[3][80], defs[3][MAX_KNOBS][140];
  static char *argv[3][24 + MAX_KNOBS];
  int slot = job_slot(j);
  snprintf(cufile[slot], sizeof cufile[slot], "%s.cu", j->base);
  int oc = kf_harness__check_source(j->src, cufile[slot], why, whylen);
  if (oc) return oc;
  kf_harness_jail *jail = &g_jail[slot];
  kf_harness__jail_init(jail);
  if ((oc = kf_harness__jail_add_tool(jail, nvcc, why, whylen))) return oc;
  char path[4096];
  snprintf(path, sizeof path, "%s/kf_candidate.h", j->dir);
  oc = kf_harness__write_source(path, kf_harness__candidate_h, why, whylen);
  if (oc) return oc;
  snprintf(path, sizeof path, "%s/%s.cu", j->dir, j->base);
  if ((oc = kf_harness__write_source(path, j->src, why, whylen))) return oc;

  snprintf(sofile[slot], sizeof sofile[slot], "%s.so", j->base);
  static char gen[3][96];
  memcpy(gen[slot], gencode, sizeof gencode);
  char **av = argv[slot];
  int a = 0;
  av[a++] = "nvcc";
  av[a++] = "-O3";
  av[a++] = gen[slot];
  av[a++] = "-cudart";
  av[a++] = "shared";
  av[a++] = "-Xcompiler";
  av[a++] = "-fPIC";
  av[a++] = "-shared";
  av[a++] = "--resource-usage";
  av[a++] = "-I.";
  for (int i = 0; i < j->n_knobs; i++) {
    snprintf(defs[slot][i], sizeof defs[slot][i], "-D%s=%s", j->knob_names[i],
             j->knob_values[i]);
    av[a++] = defs[slot][i];
  }
  av[a++] = "-o";
  av[a++] = sofile[slot];
  av[a++] = cufile[slot];
  av[a] = NULL;

  /* nvcc finds its tools relative to itself; the host compiler on PATH */
  static char envpath[3][1200], tmpenv[3][4200];
  const char *slash = strrchr(nvcc, '/');
  snprintf(envpath[slot], sizeof envpath[slot],
           "PATH=%.*s:/usr/local/bin:/usr/bin:/bin",
           slash ? (int)(slash - nvcc) : 1, slash ? nvcc : ".");
  /* relative: nvcc runs in dir as nobody, and dir's parents may be closed
   * to nobody (the worker's per-task directory is 0700) */
  snprintf(tmpenv[slot], sizeof tmpenv[slot], "TMPDIR=.");
  static char *envp[3][6];
  envp[slot][0] = envpath[slot];
  envp[slot][1] = "LC_ALL=C";
  envp[slot][2] = "LANG=C";
  envp[slot][3] = tmpenv[slot];
  envp[slot][4] = "HOME=/nonexistent";
  envp[slot][5] = NULL;

  int op[2];
  if (pipe2(op, O_CLOEXEC) != 0) {
    snprintf(why, whylen, "pipe: %s", strerror(errno));
    return KF_OUTCOME_INFRA_ERROR;
  }
  kf_harness_spawn_opts so = {
      .path = nvcc,
      .argv = av,
      .envp = envp[slot],
      .fd = {-1, op[1], op[1], -1},
      .cwd = j->dir,
      .new_pgrp = true,
      .nobody = true,
      .isolate = true,
      .limits = {{RLIMIT_CPU, 300},
                 {RLIMIT_AS, 8ull << 30},
                 {RLIMIT_FSIZE, 256ull << 20},
                 {RLIMIT_CORE, 0}},
      .n_limits = 4,
      .jail = jail,
  };
  if (geteuid() == 0)
    so.limits[so.n_limits++] = (kf_harness_limit){RLIMIT_NPROC, 256};
  char err[512];
  pid_t p;
  int rc = kf_harness__spawn(&so, &p, err, sizeof err);
  close(op[1]);
  if (rc) {
    close(op[0]);
    snprintf(why, whylen, "cannot run nvcc: %s", err);
    return KF_OUTCOME_INFRA_ERROR;
  }
  static bool warned; /* once per evaluation: it is the machine's state */
  if (jail->state != KF_HARNESS_JAIL_ON && !warned) {
    warned = true;
    char d[512];
    kf_harness__jail_defenses(jail, d, sizeof d);
    kf_log(KF_LOG_WARN, "nvcc %s: %s", cufile[slot], d);
  }
  *pid = (int)p;
  *out_fd = op[0];
  return 0;
}

/* The tail of the compiler output, whole lines, without ptxas's
 * info lines (they are the resource report, not errors). */
static void error_text(const char *out, char *why, size_t whylen,
                       const char *prefix) {
  static char kept[16384];
  size_t k = 0;
  for (const char *p = out; *p;) {
    const char *eol = strchr(p, '\n');
    size_t n = eol ? (size_t)(eol - p + 1) : strlen(p);
    if (strncmp(p, "ptxas info", 10) != 0 && strncmp(p, "    ", 4) != 0 &&
        k + n < sizeof kept) {
      memcpy(kept + k, p, n);
      k += n;
    }
    p += n;
  }
  kept[k] = '\0';
  kf_harness__tail_reason(kept, why, whylen, prefix);
}

int kf_harness__nvcc_finish(const kf_harness_nvcc_job *j, int pid, int out_fd,
                            char *out, size_t outcap, char *why,
                            size_t whylen) {
  uint64_t deadline = kf_now_ms() + (uint64_t)j->timeout_ms;
  size_t n = 0;
  bool timed_out = false;
  char buf[4096];
  for (;;) {
    uint64_t now = kf_now_ms();
    if (now >= deadline) {
      timed_out = true;
      kill(-pid, SIGKILL);
      kill(pid, SIGKILL);
      break;
    }
    struct pollfd pf = {.fd = out_fd, .events = POLLIN};
    int pr = poll(&pf, 1, (int)(deadline - now));
    if (pr < 0 && errno == EINTR) continue;
    if (pr <= 0) continue;
    ssize_t r = read(out_fd, buf, sizeof buf);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    /* keep the tail (errors end the build; a report of a few hundred
     * kernels fits well within outcap) */
    kf_harness__tail_append(out, outcap, &n, buf, (size_t)r);
  }
  close(out_fd);
  out[n] = '\0';
  int remain = (int)(deadline > kf_now_ms() ? deadline - kf_now_ms() : 0);
  int status = kf_harness__reap((pid_t)pid, timed_out ? 0 : remain + 100, true);
  kill(-pid, SIGKILL);
  if (timed_out || (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL &&
                    kf_now_ms() >= deadline)) {
    snprintf(why, whylen, "%s.cu: nvcc still running after %d ms; killed",
             j->base, j->timeout_ms);
    return KF_OUTCOME_COMPILE_TIMEOUT;
  }
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    char prefix[128];
    snprintf(prefix, sizeof prefix, "nvcc killed by %s%s\n",
             kf_harness__signame(sig),
             sig == SIGXCPU ? " (300 s CPU limit)" : "");
    error_text(out, why, whylen, prefix);
    return sig == SIGXCPU ? KF_OUTCOME_COMPILE_TIMEOUT
                          : KF_OUTCOME_COMPILE_ERROR;
  }
  if (WEXITSTATUS(status) != 0) {
    error_text(out, why, whylen, "");
    if (!*why)
      snprintf(why, whylen, "nvcc exited with status %d",
               WEXITSTATUS(status));
    return KF_OUTCOME_COMPILE_ERROR;
  }
  char path[4096];
  struct stat st;
  snprintf(path, sizeof path, "%s/%s.so", j->dir, j->base);
  if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
    snprintf(why, whylen, "nvcc succeeded but wrote no %s.so", j->base);
    return KF_OUTCOME_COMPILE_ERROR;
  }
  kf_harness__jail_defenses(&g_jail[job_slot(j)], why, whylen);
  return 0;
}
