/* SPDX-License-Identifier: Apache-2.0 */
/*
 * worker/device_cpu.c -- CPU device discovery from /proc and sysconf.
 * The ISA level follows the x86-64 psABI micro-architecture levels, so two
 * machines that can run the same compiled candidate share a class.
 */
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "device.h"
#include "util.h"

static int has_flag(const char *flags, const char *f) {
  size_t n = strlen(f);
  for (const char *p = flags; (p = strstr(p, f)); p += n)
    if ((p == flags || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\n' || !p[n]))
      return 1;
  return 0;
}

void kf_device_cpu_detect(kf_device *d) {
  memset(d, 0, sizeof *d);
  kernelfleet__device_class__init(&d->dc);
  kernelfleet__device_info__init(&d->info);
  struct utsname u;
  memset(&u, 0, sizeof u);
  const char *arch = uname(&u) == 0 ? u.machine : "unknown";
  kf_strlcpy(d->isa, arch, sizeof d->isa);
  kf_strlcpy(d->model, "unknown CPU", sizeof d->model);

  FILE *f = fopen("/proc/cpuinfo", "r");
  static char line[8192];
  while (f && fgets(line, sizeof line, f)) {
    char *colon = strchr(line, ':');
    if (!colon) continue;
    char *val = colon + 1;
    while (*val == ' ') val++;
    val[strcspn(val, "\n")] = '\0';
    if (!strncmp(line, "model name", 10)) {
      kf_strlcpy(d->model, val, sizeof d->model);
    } else if (!strncmp(line, "flags", 5) && !strcmp(arch, "x86_64")) {
      const char *lvl = "x86-64";
      if (has_flag(val, "sse4_2") && has_flag(val, "popcnt") &&
          has_flag(val, "ssse3"))
        lvl = "x86-64-v2";
      if (!strcmp(lvl, "x86-64-v2") && has_flag(val, "avx2") &&
          has_flag(val, "fma") && has_flag(val, "bmi2"))
        lvl = "x86-64-v3";
      if (!strcmp(lvl, "x86-64-v3") && has_flag(val, "avx512f") &&
          has_flag(val, "avx512bw") && has_flag(val, "avx512vl"))
        lvl = "x86-64-v4";
      kf_strlcpy(d->isa, lvl, sizeof d->isa);
      break; /* model name comes first on x86 */
    }
  }
  if (f) fclose(f);

  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
  long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
  d->info.cores = cores > 0 ? (uint32_t)cores : 0;
  d->info.mem_bytes = pages > 0 && psz > 0 ? (uint64_t)pages * psz : 0;
  d->info.l2_bytes = l2 > 0 ? (uint64_t)l2 : 0;
  kf_strlcpy(d->runtime, u.release, sizeof d->runtime);
#ifdef __VERSION__
  snprintf(d->compiler, sizeof d->compiler, "cc %.48s", __VERSION__);
#endif
  d->dc.kind = KERNELFLEET__DEVICE_KIND__DEVICE_KIND_CPU;
  d->dc.model = d->model;
  d->dc.isa = d->isa;
  d->info.driver_version = d->driver;
  d->info.runtime_version = d->runtime;
  d->info.compiler = d->compiler;
}
