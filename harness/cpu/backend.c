/* SPDX-License-Identifier: Apache-2.0 */
/*
 * harness/cpu/backend.c -- the CPU backend: C candidates built with cc and
 * run on this CPU, behind the pipeline's seam (core/backend.h).
 *
 *   compile  cc as nobody in the compiler's mount jail (compile.c), the
 *            reference, every candidate and an empty baseline kernel that
 *            shows what the toolchain itself puts in every object
 *   link     elfcheck.c against that baseline
 *   start    a runner per side (runner_client.c / runner.c): a sandboxed
 *            zygote that forks a fresh process per call; each side's
 *            buffers live in its memfd, which is also the side's image
 *   gen      inputs drawn by this process into the first side's image and
 *            copied to the others
 *   arm      a fresh process that maps exactly the call's buffers (inputs
 *            read-only), each between PROT_NONE guard pages, and nothing
 *            else -- no other buffer of the memfd is reachable from it
 *   call     outputs poisoned and the workspace filled here; for a timed
 *            call the caches flushed by this process on the same core
 *            (a bounded buffer, min(2 x LLC, 64 MiB)); then one kf_launch,
 *            charged the larger of wall and the child's CPU time
 *   probe    the canary left around each buffer (the tail of its last
 *            page: the rest is unmapped in the child), input digests
 *
 * The eval process and all runners are pinned to one core, so the timed
 * process runs alone on it, and while this process runs the child does
 * not.
 */
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "cpu.h"
#include "internal.h"
#include "log.h"
#include "outcome.h"
#include "spec.h"
#include "util.h"

#define MAX_SO (64u << 20)
#define FLUSH_MAX (64u << 20)
#define FLUSH_MIN (8u << 20)
/* The link check's yardstick. */
#define BASELINE_SRC                                                          \
  "#include \"kf_candidate.h\"\n"                                            \
  "int kf_launch(const kf_args *a) { return a == 0; }\n"

typedef struct {
  int cpu;
  unsigned char *flush;
  size_t flush_len;
  uint64_t flush_sink;
  char exe[1024];
  bool have_baseline;
  kf_harness_elf_info baseline;
} cpu_ev;

typedef struct {
  kf_harness_runner r;
} cpu_side;

#define CE(e) ((cpu_ev *)(e)->bes)
#define CS(s) ((cpu_side *)(s)->be)

static int cpu_open(kf_ev *e) {
  cpu_ev *c = calloc(1, sizeof *c);
  if (!c) {
    kf_strlcpy(e->why, "out of memory", KF_HARNESS_WHY);
    return KF_OUTCOME_INFRA_ERROR;
  }
  e->bes = c;
  c->cpu = e->o->cpu >= 0 ? e->o->cpu : sched_getcpu();
  if (c->cpu >= 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(c->cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0)
      kf_log(KF_LOG_WARN, "cannot pin to cpu %d: %s; timing unpinned",
             c->cpu, strerror(errno));
  }
  size_t llc = kf_harness__llc_bytes(c->cpu);
  c->flush_len = llc ? 2 * llc : FLUSH_MAX;
  if (c->flush_len > FLUSH_MAX) c->flush_len = FLUSH_MAX;
  if (c->flush_len < FLUSH_MIN) c->flush_len = FLUSH_MIN;
  kf_harness__runner_exe(c->exe, sizeof c->exe);
  return 0;
}

static void cpu_close(kf_ev *e) {
  cpu_ev *c = CE(e);
  if (!c) return;
  free(c->flush);
  free(c);
  e->bes = NULL;
}

static int cpu_compile(kf_ev *e, kf_side **sides, int n, char *facts,
                       size_t factslen) {
  char why[KF_HARNESS_WHY];
  for (int i = 0; i < n; i++) {
    kf_side *s = sides[i];
    if (s->oc) continue;
    /* a candidate's compile is its own time, for the deadline's "whose
     * fault" (pipeline.c past_deadline): one that compiles slowly is not
     * the reference's fault (red team 2026-12-01-s3: spec_error for it).
     * The reference's is not its calls' slowness, which is what that
     * verdict names. */
    uint64_t t0 = kf_now_ns();
    int oc = kf_harness__compile(e->wd.build, s->base, s->source, s->knobs,
                                 s->n_knobs, e->o->compile_timeout_ms, why,
                                 sizeof why);
    if (!s->is_ref) s->busy_ns += kf_now_ns() - t0;
    if (oc && s->is_ref) {
      kf_strlcpy(e->why, why, KF_HARNESS_WHY);
      return oc;
    }
    if (oc) {
      s->oc = oc;
      kf_strlcpy(s->why, why, KF_HARNESS_WHY);
    } else if (!s->is_ref && !facts[0]) {
      kf_strlcpy(facts, why, factslen); /* the compile defenses */
    }
  }
  int oc = kf_harness__compile(e->wd.build, "baseline", BASELINE_SRC, NULL, 0,
                               e->o->compile_timeout_ms, why, sizeof why);
  if (oc) {
    snprintf(e->why, KF_HARNESS_WHY, "empty baseline kernel: %.2000s", why);
    return KF_OUTCOME_INFRA_ERROR;
  }
  return 0;
}

static int cpu_link(kf_ev *e, kf_side *s, char *facts, size_t factslen) {
  cpu_ev *c = CE(e);
  int oc = kf_harness__workdir_jail(&e->wd, s->base, s->jail, sizeof s->jail,
                                    e->why, KF_HARNESS_WHY);
  if (oc) return oc;
  unsigned char *buf;
  size_t len;
  if (!c->have_baseline) {
    char path[1200], err[256];
    snprintf(path, sizeof path, "%s/baseline.so", e->wd.build);
    char *b;
    size_t bl;
    if (kf_read_file(path, MAX_SO, &b, &bl, err, sizeof err)) {
      snprintf(e->why, KF_HARNESS_WHY, "baseline.so: %s", err);
      return KF_OUTCOME_INFRA_ERROR;
    }
    char why[KF_HARNESS_WHY];
    if (kf_harness__elf_check((unsigned char *)b, bl, NULL, &c->baseline, why,
                              sizeof why))
      kf_log(KF_LOG_WARN, "the empty baseline fails the link check: %s", why);
    free(b);
    c->have_baseline = true;
  }
  oc = kf_harness__take_so(e->wd.build, s->base, s->jail, "kernel.so", MAX_SO,
                           &buf, &len, e->why, KF_HARNESS_WHY);
  if (oc) return oc;
  if (s->is_ref) { /* trusted: it may import and keep what it likes */
    free(buf);
    return 0;
  }
  kf_harness_elf_info info;
  oc = kf_harness__elf_check(buf, len, &c->baseline, &info, e->why,
                             KF_HARNESS_WHY);
  free(buf);
  if (!oc) snprintf(facts, factslen, "imports on the allow-list, no "
                    "load-time code, no writable static state");
  return oc;
}

static int cpu_start(kf_ev *e, kf_side **sides, int n, size_t map_len,
                     char *facts, size_t factslen) {
  cpu_ev *c = CE(e);
  int cpu_s = e->o->call_timeout_ms / 1000 * 4 + 30;
  for (int i = 0; i < n; i++) {
    kf_side *s = sides[i];
    cpu_side *cs = calloc(1, sizeof *cs);
    if (!cs) {
      kf_strlcpy(e->why, "out of memory", KF_HARNESS_WHY);
      return KF_OUTCOME_INFRA_ERROR;
    }
    s->be = cs;
    cs->r.memfd = cs->r.cmd_fd = cs->r.reply_fd = cs->r.status_fd = -1;
    int oc = kf_harness__runner_start(&cs->r, s->who, c->exe, s->jail,
                                      "kernel.so", map_len, cpu_s,
                                      e->o->call_timeout_ms * (s->is_ref ? 3 : 1),
                                      e->why, KF_HARNESS_WHY);
    if (oc && s->is_ref) return oc;
    if (oc) {
      s->oc = oc;
      kf_strlcpy(s->why, e->why, KF_HARNESS_WHY);
      continue;
    }
    s->map = cs->r.map;
    s->map_len = cs->r.map_len;
    s->defenses = cs->r.defenses;
  }
  c->flush = malloc(c->flush_len);
  if (!c->flush) {
    kf_strlcpy(e->why, "no memory for the cache flush buffer", KF_HARNESS_WHY);
    return KF_OUTCOME_INFRA_ERROR;
  }
  memset(c->flush, 1, c->flush_len);
  uint32_t def = 0;
  for (int i = 1; i < n; i++)
    if (!sides[i]->oc) def = sides[i]->defenses;
  char defs[256];
  kf_harness__defenses_str(def, defs, sizeof defs);
  if (!(def & KF_HARNESS_DEF_SECCOMP) || !(def & KF_HARNESS_DEF_CHROOT))
    kf_log(KF_LOG_WARN, "sandbox incomplete: %s", defs);
  snprintf(facts, factslen, "defenses: %s; pinned to cpu %d; cache flush "
           "%zu MiB before each timed call", defs, c->cpu,
           c->flush_len >> 20);
  return 0;
}

static int cpu_prepare(kf_ev *e, kf_side *s, const kf_harness_layout *L) {
  (void)e;
  kf_harness_region r[2 * KF_HARNESS_MAX_T + 2];
  int n = kf_harness__gap_regions(L, r);
  for (int i = 0; i < n; i++)
    kf_harness__canary(s->map, r[i].off, r[i].off + r[i].len, L->canary_salt);
  return 0;
}

static int cpu_gen(kf_ev *e, kf_side **sides, int n, const kf_gen *g) {
  (void)e;
  const kf_harness_layout *L = g->L;
  for (int i = 0; i < L->n_in; i++) {
    unsigned char *dst = sides[0]->map + L->in_off[i];
    kf_harness__fill(dst, L->in_dt[i], L->in_n[i], g->dist[i], g->range[i],
                     g->key[i]);
    for (int k = 1; k < n; k++)
      kf_harness__par_memcpy(sides[k]->map + L->in_off[i], dst, L->in_b[i]);
  }
  return 0;
}

/* The call's buffers as an ARM plan, with names for fault reports. */
static void plan_of(const kf_spec *sp, const kf_harness_layout *L,
                    kf_harness_runner *r, kf_harness_cmd *p) {
  memset(p, 0, sizeof *p);
  uint64_t off;
  size_t len;
  int k = 0;
  for (int b = 0; kf_harness__buffer_at(L, b, &off, &len); b++, k++) {
    p->maps[k] = (kf_harness_map){.off = off, .len = len,
                                  .writable = b >= L->n_in};
    if (b < L->n_in)
      snprintf(r->names[k], sizeof r->names[k], "input '%.32s'",
               sp->inputs[b].name);
    else if (b < L->n_in + L->n_out)
      snprintf(r->names[k], sizeof r->names[k], "output '%.32s'",
               sp->outputs[b - L->n_in].name);
    else
      snprintf(r->names[k], sizeof r->names[k], "the workspace");
  }
  p->n_maps = k;
}

static int cpu_arm(kf_ev *e, kf_side *s, const kf_call *c) {
  kf_harness_cmd plan;
  kf_harness_runner *r = &CS(s)->r;
  plan_of(e->spec, c->L, r, &plan);
  return kf_harness__runner_arm(r, &plan,
                                e->o->call_timeout_ms * (s->is_ref ? 3 : 1),
                                e->why, KF_HARNESS_WHY);
}

/* Not instrumented: under ASan the read loop would dominate the test
 * suite's time, and it touches only our own buffer. */
__attribute__((no_sanitize("address", "undefined")))
static void flush_caches(cpu_ev *c) {
  memset(c->flush, (int)(c->flush_sink & 0xff), c->flush_len);
  uint64_t s = 0;
  for (size_t i = 0; i < c->flush_len; i += 64) s += c->flush[i];
  c->flush_sink += s + 1;
}

static void flush_cb(void *arg) { flush_caches(arg); }

/* The rate at a footprint, each sample after the flush a timed call gets,
 * on this pinned core; every runner is idle (its per-call process exited
 * at DONE), so nothing of a candidate's runs meanwhile. */
static double cpu_footprint_gbps(kf_ev *e, size_t bytes) {
  cpu_ev *c = CE(e);
  if (!c->flush) return 0;
  kf_harness_fp_rates r;
  double g = kf_harness__footprint_gbps(bytes, flush_cb, c, 5, &r);
  kf_log(KF_LOG_INFO, "%zu bytes after a flush: copy %.2f, read %.2f, "
         "write %.2f GB/s", r.bytes, r.copy, r.read, r.write);
  return g;
}

/* The worker's copy ceiling, measured again by the same code the worker
 * ran at its start (`kf-harness ceilings`), on this pinned core. */
static double cpu_stream_gbps(kf_ev *e) {
  (void)e;
  return kf_harness__measure_copy_gbps();
}

static int cpu_call(kf_ev *e, kf_side *s, const kf_call *c, uint64_t *ns) {
  cpu_side *cs = CS(s);
  const kf_harness_layout *L = c->L;
  kf_harness_cmd cmd;
  plan_of(e->spec, L, &cs->r, &cmd);
  cmd.n_inputs = L->n_in;
  cmd.n_outputs = L->n_out;
  for (int i = 0; i < L->n_in; i++)
    cmd.in[i] = (kf_harness_tdesc){.off = L->in_off[i], .dtype = L->in_dt[i],
                                   .ndim = L->in_ndim[i],
                                   .numel = L->in_n[i]};
  for (int i = 0; i < L->n_out; i++)
    cmd.out[i] = (kf_harness_tdesc){.off = L->out_off[i],
                                    .dtype = L->out_dt[i],
                                    .ndim = L->out_ndim[i],
                                    .numel = L->out_n[i]};
  for (int i = 0; i < L->n_in; i++)
    memcpy(cmd.in[i].dims, L->in_dims[i], sizeof cmd.in[i].dims);
  for (int i = 0; i < L->n_out; i++)
    memcpy(cmd.out[i].dims, L->out_dims[i], sizeof cmd.out[i].dims);
  cmd.n_params = e->spec->n_params;
  for (int i = 0; i < e->spec->n_params && i < KF_HARNESS_MAX_P; i++)
    cmd.params[i] = c->size->v[i];
  cmd.ws_off = L->ws_off;
  cmd.ws_bytes = L->ws_b;
  for (int i = 0; i < L->n_out; i++)
    memset(s->map + L->out_off[i],
           kf_harness__out_poison(L->out_dt[i], c->alt_poison), L->out_b[i]);
  if (L->ws_b) memset(s->map + L->ws_off, c->ws_poison, L->ws_b);
  int timeout = e->o->call_timeout_ms * (s->is_ref ? 3 : 1);
  /* armed before the flush: forking and loading would undo it */
  int oc = kf_harness__runner_arm(&cs->r, &cmd, timeout, e->why,
                                  KF_HARNESS_WHY);
  if (oc) return oc;
  if (c->timed || c->cold) flush_caches(CE(e));
  oc = kf_harness__runner_call(&cs->r, &cmd, timeout, ns, e->why,
                               KF_HARNESS_WHY);
  if (oc) s->defenses = cs->r.defenses;
  return oc;
}

static int cpu_fetch(kf_ev *e, kf_side *s, const kf_harness_region *r,
                     int n) {
  (void)e;
  (void)s;
  (void)r;
  (void)n; /* the memfd is the side's memory */
  return 0;
}

static int cpu_probe(kf_ev *e, kf_side *s, const kf_harness_layout *L,
                     kf_probe *out) {
  (void)e;
  kf_harness_region g[2 * (2 * KF_HARNESS_MAX_T + 1)];
  int n = kf_harness__guard_regions(L, g);
  out->bad = UINT64_MAX;
  for (int i = 0; i < n && out->bad == UINT64_MAX; i++) {
    size_t b = kf_harness__canary_bad(s->map, g[i].off, g[i].off + g[i].len,
                                      L->canary_salt);
    if (b != g[i].off + g[i].len) out->bad = b;
  }
  for (int i = 0; i < L->n_in; i++)
    out->in_digest[i] = kf_harness__digest(s->map + L->in_off[i], L->in_b[i]);
  return 0;
}

static void cpu_stop(kf_ev *e, kf_side *s) {
  (void)e;
  if (!s || !s->be) return;
  kf_harness__runner_stop(&CS(s)->r);
  free(s->be);
  s->be = NULL;
  s->map = NULL;
}

const kf_backend kf_harness_cpu_backend = {
    .name = "cpu",
    .language = "c",
    .guard = KF_SPEC_GUARD_CPU,
    .roof_factor = KF_HARNESS_ROOF_FACTOR,
    .min_reps = 10,
    .open = cpu_open,
    .compile = cpu_compile,
    .link = cpu_link,
    .start = cpu_start,
    .prepare = cpu_prepare,
    .gen = cpu_gen,
    .arm = cpu_arm,
    .call = cpu_call,
    .fetch = cpu_fetch,
    .probe = cpu_probe,
    .footprint_gbps = cpu_footprint_gbps,
    .stream_gbps = cpu_stream_gbps,
    .stop = cpu_stop,
    .close = cpu_close,
};
