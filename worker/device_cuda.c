/* SPDX-License-Identifier: Apache-2.0 */
/*
 * worker/device_cuda.c -- the worker's CUDA backend: which GPU this worker
 * measures on, what it is, and its ceilings; and kf_device_setup, which
 * picks the backend from --device.
 *
 * The worker never creates a CUDA context and links no CUDA library: it
 * learns about its GPU by running `kf-harness cuda-info --device N` (the
 * harness's kf-harness-cuda does the CUDA calls, in its own process) once
 * at start, which also measures the ceilings -- device-to-device copy
 * bandwidth and the bf16 cuBLAS GEMM rate -- that every evaluation's
 * roofline check uses.  Everything in the JSON goes into the device class
 * (kind CUDA, model, compute capability, ISA = the nvcc target: sm_90a on
 * Hopper, sm_100a/sm_103a on datacenter Blackwell, sm_120 on RTX
 * Blackwell, sm_XY elsewhere) and DeviceInfo (SMs, L2, memory, driver,
 * runtime, nvcc, ceilings), which are registered with the coordinator and
 * copied into every EvalResult.
 *
 * One worker = one GPU: a host with several runs one worker per GPU (kf run
 * does, with CUDA_VISIBLE_DEVICES=i and --device cuda:0).  Evals pass
 * --device, --cuda-arch and --gpu-lock to kf-harness; the lock (one file
 * per GPU, named by its PCI bus id) is held only around the GPU stages,
 * so with --slots > 1 the compiles of queued candidates run on the CPU
 * cores while one evaluation measures.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cuda_targets.h"
#include "device.h"
#include "log.h"
#include "tasks.h"
#include "text.h"
#include "util.h"

void kf_device_cuda_isa(int major, int minor, char *out, size_t len) {
#define KF_X(ma, mi, isa, family)                                           \
  if (major == (ma) && minor == (mi)) {                                     \
    snprintf(out, len, "%s", isa);                                          \
    return;                                                                 \
  }
  KF_CUDA_TARGETS(KF_X)
#undef KF_X
  snprintf(out, len, "sm_%d%d", major, minor);
}

/* Runs argv, collecting stdout (stderr goes to ours) within timeout_ms.
 * Returns the exit status, or -1. */
static int run_capture(char *const argv[], char *out, size_t cap,
                       int timeout_ms) {
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) return -1;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, p[1], 1);
  posix_spawnattr_t at;
  posix_spawnattr_init(&at);
  posix_spawnattr_setpgroup(&at, 0);
  posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP);
  extern char **environ;
  pid_t pid;
  int rc = posix_spawn(&pid, argv[0], &fa, &at, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&at);
  close(p[1]);
  if (rc) {
    close(p[0]);
    errno = rc;
    return -1;
  }
  size_t n = 0;
  uint64_t deadline = kf_now_ms() + (uint64_t)timeout_ms;
  for (;;) {
    uint64_t now = kf_now_ms();
    if (now >= deadline) {
      kill(-pid, SIGKILL);
      break;
    }
    struct pollfd pf = {.fd = p[0], .events = POLLIN};
    int pr = poll(&pf, 1, (int)(deadline - now));
    if (pr < 0 && errno == EINTR) continue;
    if (pr <= 0) continue;
    ssize_t r = read(p[0], out + n, cap - 1 - n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    n += (size_t)r;
    if (n == cap - 1) break;
  }
  out[n] = '\0';
  close(p[0]);
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static double num(const cJSON *j, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, k);
  return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

static const char *str(const cJSON *j, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, k);
  return cJSON_IsString(v) ? v->valuestring : "";
}

int kf_device_cuda_detect(kf_device *d, int index, char *why, size_t whylen) {
  memset(d, 0, sizeof *d);
  kernelfleet__device_class__init(&d->dc);
  kernelfleet__device_info__init(&d->info);
  d->cuda_index = index;
  char exe[PATH_MAX + 16], dev[16];
  kf_self_sibling("KF_HARNESS", "kf-harness", exe, sizeof exe);
  snprintf(dev, sizeof dev, "%d", index);
  char *argv[] = {exe, "cuda-info", "--device", dev, NULL};
  static char out[65536];
  kf_log(KF_LOG_INFO, "cuda: measuring device %d (%s cuda-info)", index, exe);
  int st = run_capture(argv, out, sizeof out, 240000);
  cJSON *j = cJSON_Parse(out);
  if (st != 0 || !j) {
    const char *e = j ? str(j, "error") : "";
    snprintf(why, whylen, "%s cuda-info --device %d: %s", exe, index,
             *e ? e : st < 0 ? strerror(errno) : "failed");
    cJSON_Delete(j);
    return -1;
  }
  int major = (int)num(j, "cc_major"), minor = (int)num(j, "cc_minor");
  kf_strlcpy(d->model, str(j, "name"), sizeof d->model);
  kf_device_cuda_isa(major, minor, d->isa, sizeof d->isa);
  snprintf(d->driver, sizeof d->driver, "%s (CUDA %s)", str(j, "driver"),
           str(j, "driver_cuda"));
  kf_strlcpy(d->runtime, str(j, "runtime"), sizeof d->runtime);
  snprintf(d->compiler, sizeof d->compiler, "nvcc %s", str(j, "nvcc"));
  kf_strlcpy(d->pci, str(j, "pci_bus_id"), sizeof d->pci);
  d->dc.kind = KERNELFLEET__DEVICE_KIND__DEVICE_KIND_CUDA;
  d->dc.model = d->model;
  d->dc.cc_major = (uint32_t)major;
  d->dc.cc_minor = (uint32_t)minor;
  d->dc.isa = d->isa;
  d->info.cores = (uint32_t)num(j, "sm_count");
  d->info.l2_bytes = (uint64_t)num(j, "l2_bytes");
  d->info.mem_bytes = (uint64_t)num(j, "mem_bytes");
  d->info.driver_version = d->driver;
  d->info.runtime_version = d->runtime;
  d->info.compiler = d->compiler;
  d->info.copy_gbps = num(j, "copy_gbps");
  d->info.read_gbps = num(j, "read_gbps");
  d->info.write_gbps = num(j, "write_gbps");
  d->info.peak_gflops = num(j, "peak_gflops");
  if (!*d->model || !major) {
    snprintf(why, whylen, "cuda-info gave no device name or compute "
             "capability");
    cJSON_Delete(j);
    return -1;
  }
  const char *ge = str(j, "gemm_error");
  if (*ge) kf_log(KF_LOG_WARN, "cuda: no GEMM ceiling: %s", ge);
  kf_log(KF_LOG_INFO, "cuda: device %d: %s, cc %d.%d (%s), %u SMs, L2 %llu "
         "MiB, %llu GiB, driver %s, runtime %s, %s; ceilings: copy %.0f GB/s, "
         "bf16 GEMM %.0f GFLOP/s", index, d->model, major, minor, d->isa,
         d->info.cores, (unsigned long long)(d->info.l2_bytes >> 20),
         (unsigned long long)(d->info.mem_bytes >> 30), d->driver, d->runtime,
         d->compiler, d->info.copy_gbps, d->info.peak_gflops);
  cJSON_Delete(j);
  return 0;
}

/* The eval arguments of a CUDA worker: device, target, and the GPU lock
 * named by the PCI bus id (so that two workers that see one GPU under
 * different indices still share its lock). */
static void cuda_eval_args(const kf_device *d) {
  static char a_dev[32], a_arch[64], a_lock[PATH_MAX];
  snprintf(a_dev, sizeof a_dev, "--device=%d", d->cuda_index);
  snprintf(a_arch, sizeof a_arch, "--cuda-arch=%s", d->isa);
  char id[64];
  size_t k = 0;
  for (const char *p = d->pci; *p && k + 1 < sizeof id; p++)
    id[k++] = (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') ||
                      (*p >= 'A' && *p <= 'Z')
                  ? *p
                  : '-';
  id[k] = '\0';
  if (!k) snprintf(id, sizeof id, "%d", d->cuda_index);
  snprintf(a_lock, sizeof a_lock, "--gpu-lock=%s/kf-gpu-%s.lock",
           kf_getenv_or("TMPDIR", "/tmp"), id);
  const char *args[] = {a_dev, a_arch, a_lock};
  kf_task_eval_set_device_args(args, 3);
}

static int setup_cpu(kf_device *d) {
  kf_device_cpu_detect(d);
  d->cuda_index = -1;
  kf_ceilings c;
  if (kf_task_eval_ceilings(&c) == 0) {
    d->info.copy_gbps = c.copy_gbps;
    d->info.read_gbps = c.read_gbps;
    d->info.write_gbps = c.write_gbps;
    d->info.peak_gflops = c.gflops;
    kf_task_eval_set_ceilings(&c);
  }
  kf_task_eval_set_device(&d->dc, &d->info);
  return 0;
}

/* The identity part of the device: harness build and the toolchain that
 * builds this device's candidates, from `kf-harness identity`.  Without
 * it the worker still evaluates, but under no identity: nothing it
 * measures is ever reused. */
static void setup_identity(kf_device *d, bool cuda) {
  if (kf_task_eval_identity() == 0) {
    kf_strlcpy(d->harness_build, kf_task_eval_harness_build(),
               sizeof d->harness_build);
    const char *tc = kf_task_eval_toolchain(cuda);
    /* the coordinator takes 127 bytes of device.compiler: a longer
     * version line would keep this worker from registering at all */
    if (*tc) kf_text_sanitize(tc, strlen(tc), d->compiler, 128, 0);
  }
  d->info.harness_build = d->harness_build;
  d->info.compiler = d->compiler;
  (void)kf_task_showdown_available(); /* probed now, not on the loop */
}

static int setup(kf_device *d, const char *which, char *why, size_t whylen);

int kf_device_setup(kf_device *d, const char *which, char *why,
                    size_t whylen) {
  int rc = setup(d, which, why, whylen);
  if (rc == 0) setup_identity(d, d->cuda_index >= 0);
  return rc;
}

static int setup(kf_device *d, const char *which, char *why, size_t whylen) {
  if (!which || !strcmp(which, "cpu")) return setup_cpu(d);
  bool any = !strcmp(which, "auto");
  int index = 0;
  if (!any) {
    uint64_t v;
    if (strncmp(which, "cuda:", 5) || kf_parse_u64(which + 5, &v) || v > 255) {
      snprintf(why, whylen, "--device '%s': expected cpu, cuda:N or auto",
               which);
      return -1;
    }
    index = (int)v;
  } else if (access("/dev/nvidia0", F_OK) != 0) {
    kf_log(KF_LOG_INFO, "device auto: no /dev/nvidia0, using the CPU");
    return setup_cpu(d);
  }
  if (kf_device_cuda_detect(d, index, why, whylen)) {
    if (!any) return -1;
    kf_log(KF_LOG_WARN, "device auto: %s; using the CPU", why);
    return setup_cpu(d);
  }
  kf_ceilings c = {.copy_gbps = d->info.copy_gbps,
                   .read_gbps = d->info.read_gbps,
                   .write_gbps = d->info.write_gbps,
                   .gflops = d->info.peak_gflops};
  kf_task_eval_set_ceilings(&c);
  cuda_eval_args(d);
  kf_task_eval_set_device(&d->dc, &d->info);
  return 0;
}
