/* SPDX-License-Identifier: Apache-2.0 */
/*
 * harness/core/parallel.c -- data-parallel loops for the eval process's host
 * work on big tensors: comparing a 64M-element output with the
 * reference's, and copying inputs into place, once per timed repetition.
 * Single-threaded, that host work, not the GPU, set how many evaluations
 * a minute a CUDA worker could do at the problems' bench sizes.
 *
 * Threads exist only inside one kf_harness__par_run call: they are
 * created, run one part each, and are joined before it returns, so the
 * eval process is single-threaded whenever it forks a compiler or a
 * runner, and nothing is shared but what the caller passes.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

#define MAX_PARTS KF_HARNESS_PAR_MAX

typedef struct {
  kf_harness_part_fn fn;
  void *arg;
  int part, parts;
} job;

static void *run_part(void *p) {
  job *j = p;
  j->fn(j->arg, j->part, j->parts);
  return NULL;
}

int kf_harness__par_parts(void) {
  /* the cores this process may run on (affinity, cpusets), not the
   * machine's */
  cpu_set_t set;
  long n = sched_getaffinity(0, sizeof set, &set) == 0
               ? CPU_COUNT(&set)
               : sysconf(_SC_NPROCESSORS_ONLN);
  if (n < 1) n = 1;
  /* leave cores to the compiles of the next candidates */
  n = n > 2 ? n / 2 : 1;
  return n > MAX_PARTS ? MAX_PARTS : (int)n;
}

int kf_harness__par_run(int parts, kf_harness_part_fn fn, void *arg) {
  if (parts < 1) parts = 1;
  if (parts > MAX_PARTS) parts = MAX_PARTS;
  job jobs[MAX_PARTS];
  pthread_t tid[MAX_PARTS];
  int started = 1;
  for (int i = 0; i < parts; i++)
    jobs[i] = (job){.fn = fn, .arg = arg, .part = i, .parts = parts};
  for (int i = 1; i < parts; i++) {
    if (pthread_create(&tid[i], NULL, run_part, &jobs[i]) != 0) break;
    started++;
  }
  /* parts that got no thread run here, in order; the result is the same */
  for (int i = started; i < parts; i++) run_part(&jobs[i]);
  run_part(&jobs[0]);
  for (int i = 1; i < started; i++) pthread_join(tid[i], NULL);
  return started;
}

void kf_harness__par_range(int64_t n, int part, int parts, int64_t align,
                           int64_t *lo, int64_t *hi) {
  int64_t step = (n + parts - 1) / parts;
  if (align > 1) step = (step + align - 1) / align * align;
  *lo = step * part < n ? step * part : n;
  *hi = *lo + step < n ? *lo + step : n;
}

typedef struct {
  unsigned char *dst;
  const unsigned char *src;
  size_t n;
} copy_job;

static void copy_part(void *arg, int part, int parts) {
  copy_job *c = arg;
  int64_t lo, hi;
  kf_harness__par_range((int64_t)c->n, part, parts, 4096, &lo, &hi);
  if (hi > lo) memcpy(c->dst + lo, c->src + lo, (size_t)(hi - lo));
}

void kf_harness__par_memcpy(void *dst, const void *src, size_t n) {
  copy_job c = {.dst = dst, .src = src, .n = n};
  if (n < (8u << 20)) {
    memcpy(dst, src, n);
    return;
  }
  kf_harness__par_run(kf_harness__par_parts(), copy_part, &c);
}
