/* SPDX-License-Identifier: Apache-2.0 */
/*
 * worker/task_eval.c -- the "eval" task kind: one candidate kernel checked
 * and timed by `kf-harness eval`, a child process.
 *
 * The worker never loads candidate code.  The run function (on a libuv work
 * thread) spawns kf-harness -- the sibling of this kf-worker binary, or
 * $KF_HARNESS -- in its own process group, with the worker's death as its
 * own (kf_watchdog_spawn), writes the task payload (an EvalRequest) to its stdin
 * with a 4-byte little-endian length, and reads one length-prefixed
 * EvalResult from its fd 3 within the task's timeout; on expiry the whole
 * group (harness, compiler, runners) gets SIGKILL and the task is a
 * TIMEOUT.  The harness works in a per-task directory made here, under
 * the worker's work directory, and removed here after it exits, so a
 * killed harness leaves nothing behind; if the worker itself is killed,
 * its watchdog kills the harness's group and removes the directory.
 * The harness's stderr lines are logged again here, under the
 * task id.  A harness that dies or writes no result is INFRA_ERROR, which
 * the coordinator retries.
 *
 * Ceilings: kf_task_eval_ceilings runs `kf-harness ceilings` once at worker
 * start; the numbers go into the worker's DeviceInfo and, through
 * kf_task_eval_set_ceilings, onto every eval's command line.  They are set
 * before any task runs and only read afterwards.  So is the identity
 * (`kf-harness identity`: harness build and compilers), which the worker
 * registers and every measurement it reports is keyed by.
 *
 * The "showdown" task kind runs `kf-harness showdown` the same way, with a
 * ShowdownRequest in and a ShowdownResult back; a worker offers the kind
 * only when its harness has that mode.
 *
 * An evaluation killed at the task's deadline is reported as TIMEOUT with
 * an EvalResult that says it was timing-dependent, so it is never reused.
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

#include "kernelfleet.pb-c.h"
#include "log.h"
#include "outcome.h"
#include "profile.h"
#include "tasks.h"
#include "text.h"
#include "util.h"
#include "watchdog.h"

#define DEFAULT_TIMEOUT_MS (10u * 60u * 1000u)
#define MAX_RESULT (16u << 20)

static kf_ceilings g_ceil; /* written once before tasks run */
static char g_workdir[PATH_MAX];     /* likewise: the worker's work dir */
static char g_dev_args[8][PATH_MAX]; /* likewise: device arguments */
static int g_n_dev_args;
static const Kernelfleet__DeviceClass *g_dc; /* likewise: into results */
static const Kernelfleet__DeviceInfo *g_info;

void kf_task_eval_set_device_args(const char *const *args, int n) {
  g_n_dev_args = 0;
  for (int i = 0; i < n && i < 8; i++)
    kf_strlcpy(g_dev_args[g_n_dev_args++], args[i], sizeof g_dev_args[0]);
}

void kf_task_eval_set_workdir(const char *dir) {
  kf_strlcpy(g_workdir, dir ? dir : "", sizeof g_workdir);
}

void kf_task_eval_set_device(const Kernelfleet__DeviceClass *dc,
                             const Kernelfleet__DeviceInfo *info) {
  g_dc = dc;
  g_info = info;
}

void kf_task_eval_set_ceilings(const kf_ceilings *c) { g_ceil = *c; }

typedef struct {
  pid_t pid;
  int in_fd, res_fd, err_fd; /* our ends; -1 when closed */
} child;

/* Spawns `kf-harness ARGS` in its own process group; in_fd/res_fd/err_fd
 * are pipes to its 0, 3 and 2 (res_fd/in_fd optional). */
static int spawn_harness(char *const argv[], bool want_in, bool want_res,
                         child *c, char *why, size_t whylen) {
  int in[2] = {-1, -1}, res[2] = {-1, -1}, err[2] = {-1, -1};
  c->pid = 0;
  c->in_fd = c->res_fd = c->err_fd = -1;
  if ((want_in && pipe2(in, O_CLOEXEC)) || (want_res && pipe2(res, O_CLOEXEC)) ||
      pipe2(err, O_CLOEXEC)) {
    snprintf(why, whylen, "pipe: %s", strerror(errno));
    goto fail;
  }
  /* Its own process group, with the worker's death as its own
   * (watchdog.c): a harness never outlives the worker. */
  if (kf_watchdog_spawn(argv, want_in ? in[0] : -1, err[1],
                        want_res ? res[1] : -1, true, &c->pid, why,
                        whylen) != 0) {
    c->pid = 0;
    goto fail;
  }
  if (want_in) close(in[0]);
  if (want_res) close(res[1]);
  close(err[1]);
  c->in_fd = want_in ? in[1] : -1;
  c->res_fd = want_res ? res[0] : -1;
  c->err_fd = err[0];
  if (c->in_fd >= 0) fcntl(c->in_fd, F_SETFL, O_NONBLOCK);
  return 0;
fail:
  for (int i = 0; i < 2; i++) {
    if (in[i] >= 0) close(in[i]);
    if (res[i] >= 0) close(res[i]);
    if (err[i] >= 0) close(err[i]);
  }
  return -1;
}

/* Logs complete lines of buf[0..*n) and keeps the partial tail. */
static void relay_lines(char *buf, size_t *n, bool flush) {
  size_t start = 0;
  for (size_t i = 0; i < *n; i++)
    if (buf[i] == '\n') {
      buf[i] = '\0';
      if (i > start) kf_log(KF_LOG_INFO, "harness: %s", buf + start);
      start = i + 1;
    }
  if (flush && start < *n) {
    buf[*n] = '\0';
    kf_log(KF_LOG_INFO, "harness: %s", buf + start);
    start = *n;
  }
  memmove(buf, buf + start, *n - start);
  *n -= start;
}

/* Drives the child until its pipes close or the deadline passes.  Writes
 * `in` to its stdin, collects fd 3 into *res, relays stderr.  Returns true
 * when the deadline passed (the group was killed). */
static bool drive(child *c, const unsigned char *in, size_t in_len,
                  unsigned char **res, size_t *res_len, char *out_text,
                  size_t out_cap, uint32_t timeout_ms) {
  uint64_t deadline = kf_now_ms() + timeout_ms;
  size_t in_off = 0, cap = 0;
  char line[4096 + 1];
  size_t line_n = 0, text_n = 0;
  bool timed_out = false;
  *res = NULL;
  *res_len = 0;
  if (c->in_fd >= 0 && in_len == 0) {
    close(c->in_fd);
    c->in_fd = -1;
  }
  while (c->res_fd >= 0 || c->err_fd >= 0) {
    uint64_t now = kf_now_ms();
    if (now >= deadline) {
      timed_out = true;
      kill(-c->pid, SIGKILL);
      break;
    }
    struct pollfd pf[3];
    int np = 0, ii = -1, ri = -1, ei = -1;
    if (c->in_fd >= 0) pf[ii = np++] = (struct pollfd){c->in_fd, POLLOUT, 0};
    if (c->res_fd >= 0) pf[ri = np++] = (struct pollfd){c->res_fd, POLLIN, 0};
    if (c->err_fd >= 0) pf[ei = np++] = (struct pollfd){c->err_fd, POLLIN, 0};
    int pr = poll(pf, (nfds_t)np, (int)(deadline - now));
    if (pr < 0 && errno == EINTR) continue;
    if (pr < 0) break;
    if (ii >= 0 && pf[ii].revents) {
      ssize_t w = write(c->in_fd, in + in_off, in_len - in_off);
      if (w > 0) in_off += (size_t)w;
      if ((w < 0 && errno != EAGAIN && errno != EINTR) || in_off == in_len) {
        close(c->in_fd);
        c->in_fd = -1;
      }
    }
    if (ri >= 0 && pf[ri].revents) {
      if (*res_len == cap) {
        size_t nc = cap ? cap * 2 : 65536;
        unsigned char *nb = nc <= MAX_RESULT + 4 ? realloc(*res, nc) : NULL;
        if (!nb) { /* oversized or no memory: stop reading, it is invalid */
          close(c->res_fd);
          c->res_fd = -1;
          *res_len = 0;
          continue;
        }
        *res = nb;
        cap = nc;
      }
      ssize_t r = read(c->res_fd, *res + *res_len, cap - *res_len);
      if (r > 0) *res_len += (size_t)r;
      else if (r == 0 || errno != EINTR) {
        close(c->res_fd);
        c->res_fd = -1;
      }
    }
    if (ei >= 0 && pf[ei].revents) {
      ssize_t r = read(c->err_fd, line + line_n, sizeof line - 1 - line_n);
      if (r > 0) {
        if (out_text && text_n + (size_t)r < out_cap) {
          memcpy(out_text + text_n, line + line_n, (size_t)r);
          text_n += (size_t)r;
          out_text[text_n] = '\0';
        }
        line_n += (size_t)r;
        relay_lines(line, &line_n, line_n == sizeof line - 1);
      } else if (r == 0 || errno != EINTR) {
        close(c->err_fd);
        c->err_fd = -1;
      }
    }
  }
  relay_lines(line, &line_n, true);
  if (c->in_fd >= 0) close(c->in_fd);
  if (c->res_fd >= 0) close(c->res_fd);
  if (c->err_fd >= 0) close(c->err_fd);
  c->in_fd = c->res_fd = c->err_fd = -1;
  return timed_out;
}

static int reap(child *c) {
  int st = 0;
  while (waitpid(c->pid, &st, 0) < 0 && errno == EINTR) {
  }
  kill(-c->pid, SIGKILL); /* stragglers of the group, if any */
  kf_watchdog_untrack(c->pid);
  return st;
}

static double num_or0(const cJSON *j, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
  return cJSON_IsNumber(v) && v->valuedouble > 0 ? v->valuedouble : 0;
}

int kf_task_eval_ceilings(kf_ceilings *out) {
  char exe[PATH_MAX + 16], why[256];
  kf_self_sibling("KF_HARNESS", "kf-harness", exe, sizeof exe);
  char *argv[] = {exe, "ceilings", NULL};
  child c;
  memset(out, 0, sizeof *out);
  if (spawn_harness(argv, false, false, &c, why, sizeof why)) {
    kf_log(KF_LOG_WARN, "ceilings: %s; eval tasks will fail", why);
    return -1;
  }
  char text[1024] = "";
  unsigned char *res;
  size_t res_len;
  bool to = drive(&c, NULL, 0, &res, &res_len, text, sizeof text, 60000);
  free(res);
  int st = reap(&c);
  cJSON *j = to ? NULL : cJSON_Parse(text);
  const cJSON *g = cJSON_GetObjectItemCaseSensitive(j, "copy_gbps");
  const cJSON *f = cJSON_GetObjectItemCaseSensitive(j, "gflops");
  int rc = -1;
  if (WIFEXITED(st) && WEXITSTATUS(st) == 0 && cJSON_IsNumber(g) &&
      cJSON_IsNumber(f)) {
    out->copy_gbps = g->valuedouble;
    out->gflops = f->valuedouble;
    out->read_gbps = num_or0(j, "read_gbps");
    out->write_gbps = num_or0(j, "write_gbps");
    rc = 0;
    kf_log(KF_LOG_INFO, "ceilings: copy %.2f GB/s, read %.2f GB/s, write "
           "%.2f GB/s, FMA %.2f GFLOP/s (one core)", out->copy_gbps,
           out->read_gbps, out->write_gbps, out->gflops);
  } else {
    kf_log(KF_LOG_WARN, "ceilings: %s gave no numbers (status %d)", exe, st);
  }
  cJSON_Delete(j);
  return rc;
}

/* Stage and reason are cut on a character boundary (kf_text_sanitize),
 * never mid-character as a byte copy would. */
static void set(kf_task_exec *t, int outcome, const char *stage,
                const char *reason) {
  t->outcome = outcome;
  kf_text_sanitize(stage, strlen(stage), t->stage, sizeof t->stage, 0);
  kf_text_sanitize(reason, strlen(reason), t->reason, sizeof t->reason,
                   KF_TEXT_MULTILINE);
}

/* --------------------------------------------------------- identity -- */

static char g_build[65], g_cc[256], g_nvcc[256]; /* written once at start */

int kf_task_eval_identity(void) {
  char exe[PATH_MAX + 16], why[256];
  kf_self_sibling("KF_HARNESS", "kf-harness", exe, sizeof exe);
  char *argv[] = {exe, "identity", NULL};
  child c;
  g_build[0] = g_cc[0] = g_nvcc[0] = '\0';
  if (spawn_harness(argv, false, false, &c, why, sizeof why)) {
    kf_log(KF_LOG_WARN, "identity: %s; nothing this worker measures will be"
           " reused", why);
    return -1;
  }
  char text[4096] = "";
  unsigned char *res;
  size_t res_len;
  bool to = drive(&c, NULL, 0, &res, &res_len, text, sizeof text, 60000);
  free(res);
  int st = reap(&c);
  cJSON *j = to ? NULL : cJSON_Parse(text);
  const cJSON *b = cJSON_GetObjectItemCaseSensitive(j, "harness_build");
  const cJSON *cc = cJSON_GetObjectItemCaseSensitive(j, "cc");
  const cJSON *nv = cJSON_GetObjectItemCaseSensitive(j, "nvcc");
  int rc = -1;
  if (WIFEXITED(st) && WEXITSTATUS(st) == 0 && cJSON_IsString(b) &&
      strlen(b->valuestring) == 64) {
    kf_strlcpy(g_build, b->valuestring, sizeof g_build);
    if (cJSON_IsString(cc)) kf_strlcpy(g_cc, cc->valuestring, sizeof g_cc);
    if (cJSON_IsString(nv))
      kf_strlcpy(g_nvcc, nv->valuestring, sizeof g_nvcc);
    rc = 0;
    kf_log(KF_LOG_INFO, "identity: harness %.12s..., cc \"%s\", nvcc \"%s\"",
           g_build, g_cc, g_nvcc);
  } else {
    kf_log(KF_LOG_WARN, "identity: %s identity gave no harness build (status"
           " %d); nothing this worker measures will be reused", exe, st);
  }
  cJSON_Delete(j);
  return rc;
}

const char *kf_task_eval_harness_build(void) { return g_build; }
const char *kf_task_eval_toolchain(bool cuda) { return cuda ? g_nvcc : g_cc; }

/* -------------------------------------------------------- the child -- */

/* Runs `kf-harness MODE` on the task's payload: a directory of its own,
 * the device's arguments, the task's deadline.  true: it ran, with its
 * exit status in *st and its length-prefixed reply in *res (*rl is the
 * reply's length after the prefix, 0 when the prefix does not match what
 * came; *res may be NULL); *timed_out when it was killed at the deadline.
 * false: it could not start (t is set to INFRA_ERROR). */
/* The shortest task whose harness gets --deadline-ms (run_harness). */
#define DEADLINE_MIN_MS 20000u

static bool run_harness(kf_task_exec *t, const char *mode,
                        unsigned char **res, size_t *rl, int *st,
                        bool *timed_out) {
  char exe[PATH_MAX + 16], why[512];
  kf_self_sibling("KF_HARNESS", "kf-harness", exe, sizeof exe);
  char gbps[32], rbps[32], wbps[32], gflops[32];
  snprintf(gbps, sizeof gbps, "--copy-gbps=%.3f", g_ceil.copy_gbps);
  snprintf(rbps, sizeof rbps, "--read-gbps=%.3f", g_ceil.read_gbps);
  snprintf(wbps, sizeof wbps, "--write-gbps=%.3f", g_ceil.write_gbps);
  snprintf(gflops, sizeof gflops, "--gflops=%.3f", g_ceil.gflops);
  /* Under the worker's work directory, which its watchdog removes
   * whatever happens to the worker (watchdog.h). */
  const char *tmp = g_workdir[0] ? g_workdir : getenv("TMPDIR");
  char work[PATH_MAX + 16], workarg[PATH_MAX + 32];
  snprintf(work, sizeof work, "%.*s/%s", PATH_MAX - 1,
           tmp && *tmp ? tmp : "/tmp",
           g_workdir[0] ? "eval-XXXXXX" : "kf-eval-XXXXXX");
  *res = NULL;
  *rl = 0;
  *st = 0;
  *timed_out = false;
  if (!mkdtemp(work)) {
    snprintf(why, sizeof why, "mkdtemp %.300s: %s", work, strerror(errno));
    set(t, KF_OUTCOME_INFRA_ERROR, "spawn", why);
    return false;
  }
  snprintf(workarg, sizeof workarg, "--workdir=%s", work);
  uint32_t timeout = t->timeout_ms ? t->timeout_ms : DEFAULT_TIMEOUT_MS;
  /* A task of DEADLINE_MIN_MS or more: the harness ends the evaluation
   * itself a quarter before the task's time, between calls, and names
   * whose calls took the time -- a reference too slow for the task is
   * the spec's error, not the candidate's timeout.  The kill at the
   * task's time stays for a harness that does not get there (one call
   * past the deadline), and is all a shorter task gets: a quarter of a
   * few seconds is less than a loaded machine's compile. */
  char deadline[40];
  snprintf(deadline, sizeof deadline, "--deadline-ms=%u",
           timeout - timeout / 4);
  char *argv[8 + 9] = {exe, (char *)mode, gbps, rbps, wbps, gflops, workarg};
  int na = 7;
  if (timeout >= DEADLINE_MIN_MS) argv[na++] = deadline;
  for (int i = 0; i < g_n_dev_args; i++) argv[na++] = g_dev_args[i];
  argv[na] = NULL;

  size_t n = t->payload_len;
  unsigned char *req = malloc(n + 4);
  if (!req) {
    rmdir(work);
    set(t, KF_OUTCOME_INFRA_ERROR, "spawn", "worker out of memory");
    return false;
  }
  req[0] = (unsigned char)n;
  req[1] = (unsigned char)(n >> 8);
  req[2] = (unsigned char)(n >> 16);
  req[3] = (unsigned char)(n >> 24);
  if (n) memcpy(req + 4, t->payload, n);

  child c;
  if (spawn_harness(argv, true, true, &c, why, sizeof why)) {
    free(req);
    rmdir(work);
    set(t, KF_OUTCOME_INFRA_ERROR, "spawn", why);
    return false;
  }
  size_t res_len;
  *timed_out = drive(&c, req, n + 4, res, &res_len, NULL, 0, timeout);
  free(req);
  *st = reap(&c);
  kf_remove_tree(work);
  if (!*timed_out && res_len >= 4) {
    const unsigned char *b = *res;
    size_t l = (size_t)b[0] | (size_t)b[1] << 8 | (size_t)b[2] << 16 |
               (size_t)b[3] << 24;
    if (l + 4 == res_len) *rl = l;
  }
  return true;
}

/* Why a harness gave no usable reply, from its exit status. */
static void no_reply(char *why, size_t len, int st, bool any) {
  if (WIFSIGNALED(st))
    snprintf(why, len, "kf-harness killed by signal %d without a result",
             WTERMSIG(st));
  else
    snprintf(why, len, "kf-harness exited with status %d and %s",
             WEXITSTATUS(st), any ? "a malformed result" : "no result");
}

/* The output of an eval the worker ended at its deadline: an EvalResult
 * saying so, timing-dependent (a slower machine, or a loaded one, would
 * have finished), with this worker's device. */
static void timeout_result(kf_task_exec *t, const char *why) {
  Kernelfleet__StageResult sr = KERNELFLEET__STAGE_RESULT__INIT;
  Kernelfleet__StageResult *srp = &sr;
  sr.stage = "eval";
  sr.outcome = KERNELFLEET__OUTCOME__OUTCOME_TIMEOUT;
  sr.reason = (char *)why;
  Kernelfleet__EvalResult r = KERNELFLEET__EVAL_RESULT__INIT;
  r.outcome = KERNELFLEET__OUTCOME__OUTCOME_TIMEOUT;
  r.n_stages = 1;
  r.stages = &srp;
  r.timing_dependent = true;
  r.device_class = (Kernelfleet__DeviceClass *)g_dc;
  r.device = (Kernelfleet__DeviceInfo *)g_info;
  size_t pl = kernelfleet__eval_result__get_packed_size(&r);
  unsigned char *out = malloc(pl ? pl : 1);
  if (!out) return; /* the outcome alone still says it */
  kernelfleet__eval_result__pack(&r, out);
  t->output = out;
  t->output_len = pl;
}

/* Cuts *s, already sanitized, to at most max bytes on a character
 * boundary.  The store bounds names tighter than reasons (harness_build
 * and toolchain: KF_TEXT_NAME_MAX; the profile's texts: kf_prof's
 * fields), and a name the harness cut in the middle of a character (its
 * compiler's version line, at 255 bytes) grows when the escape replaces
 * the cut bytes: without this the coordinator would refuse the whole
 * result for good.  0, or -1 without memory (then *s is left). */
static int cap_text(char **s, size_t max) {
  if (!*s || strlen(*s) <= max) return 0;
  char *c = kf_text_sanitize_dup(*s, strlen(*s), max, 0);
  if (!c) return -1;
  free(*s); /* unpacked with the default allocator: malloc'd */
  *s = c;
  return 0;
}

#define KF__FIELD_MAX(type, f) (sizeof ((type *)0)->f - 1)

static int cap_names(Kernelfleet__EvalResult *r) {
  int rc = cap_text(&r->harness_build, KF_TEXT_NAME_MAX) |
           cap_text(&r->toolchain, KF_TEXT_NAME_MAX);
  Kernelfleet__ProfileReport *p = r->profile;
  if (p) {
    rc |= cap_text(&p->reason, KF__FIELD_MAX(kf_prof, reason)) |
          cap_text(&p->tool, KF__FIELD_MAX(kf_prof, tool)) |
          cap_text(&p->kernel, KF__FIELD_MAX(kf_prof, kernel));
    for (size_t i = 0; i < p->n_stalls; i++)
      if (p->stalls[i])
        rc |= cap_text(&p->stalls[i]->reason,
                       KF__FIELD_MAX(kf_prof_stall, name));
  }
  return rc;
}

void kf_task_eval(kf_task_exec *t) {
  unsigned char *res;
  size_t rl;
  int st;
  bool timed_out;
  char why[512];
  if (!run_harness(t, "eval", &res, &rl, &st, &timed_out)) return;
  if (timed_out) {
    free(res);
    snprintf(why, sizeof why, "evaluation still running after the task's "
             "%u ms; killed", t->timeout_ms ? t->timeout_ms
                                              : DEFAULT_TIMEOUT_MS);
    set(t, KF_OUTCOME_TIMEOUT, "eval", why);
    timeout_result(t, why);
    kf_log(KF_LOG_WARN, "%s", why);
    return;
  }
  Kernelfleet__EvalResult *r =
      rl ? kernelfleet__eval_result__unpack(NULL, rl, res + 4) : NULL;
  /* Every string in the EvalResult (stage names, reasons quoting the
   * candidate's compiler output and symbol names, tool names) is made
   * valid, display-safe and bounded before anything reads it: it is
   * stored and shown as it is here. */
  if (r && (kf_text_sanitize_pb(&r->base, KF_TEXT_REASON_MAX,
                                KF_TEXT_MULTILINE) != 0 ||
            cap_names(r) != 0)) {
    kernelfleet__eval_result__free_unpacked(r, NULL);
    r = NULL;
  }
  if (!r || !kf_outcome_name(r->outcome)) {
    if (r) kernelfleet__eval_result__free_unpacked(r, NULL);
    no_reply(why, sizeof why, st, res != NULL);
    free(res);
    set(t, KF_OUTCOME_INFRA_ERROR, "eval", why);
    kf_log(KF_LOG_ERROR, "%s", why);
    return;
  }
  const Kernelfleet__StageResult *last =
      r->n_stages ? r->stages[r->n_stages - 1] : NULL;
  if (r->outcome == KERNELFLEET__OUTCOME__OUTCOME_OK) {
    char msg[256];
    snprintf(msg, sizeof msg, "candidate %.0f ns, reference %.0f ns (%.2fx), "
             "%u repetitions", r->time_ns_median, r->ref_time_ns_median,
             r->time_ns_median > 0 ? r->ref_time_ns_median / r->time_ns_median
                                   : 0.0,
             r->repetitions);
    set(t, KF_OUTCOME_OK, last ? last->stage : "time", msg);
  } else {
    set(t, (int)r->outcome, last ? last->stage : "eval",
        last ? last->reason : "");
  }
  /* output: the EvalResult bytes, with this worker's device in them */
  /* Packed again, always: the strings may have been sanitized. */
  unsigned char *packed = NULL;
  bool add_dev = g_dc && !r->device_class && !r->device;
  if (add_dev) {
    r->device_class = (Kernelfleet__DeviceClass *)g_dc;
    r->device = (Kernelfleet__DeviceInfo *)g_info;
  }
  size_t pl = kernelfleet__eval_result__get_packed_size(r);
  if ((packed = malloc(pl ? pl : 1))) {
    kernelfleet__eval_result__pack(r, packed);
    rl = pl;
  }
  if (add_dev) {
    r->device_class = NULL;
    r->device = NULL;
  }
  kernelfleet__eval_result__free_unpacked(r, NULL);
  if (packed) {
    free(res);
    res = packed;
  } else {
    /* No memory to pack: nothing unsanitized may leave, so no output. */
    free(res);
    set(t, KF_OUTCOME_INFRA_ERROR, "eval", "worker out of memory packing the"
        " result");
    return;
  }
  t->output = res;
  t->output_len = rl;
}

/* --------------------------------------------------------- showdown -- */

static int g_showdown = -1; /* -1 not probed; written once at start */

bool kf_task_showdown_available(void) {
  if (g_showdown >= 0) return g_showdown == 1;
  char exe[PATH_MAX + 16], why[256];
  kf_self_sibling("KF_HARNESS", "kf-harness", exe, sizeof exe);
  char *argv[] = {exe, "showdown", "--help", NULL};
  child c;
  g_showdown = 0;
  if (spawn_harness(argv, false, false, &c, why, sizeof why)) return false;
  unsigned char *res;
  size_t res_len;
  char text[2048];
  bool to = drive(&c, NULL, 0, &res, &res_len, text, sizeof text, 30000);
  free(res);
  int st = reap(&c);
  g_showdown = !to && WIFEXITED(st) && WEXITSTATUS(st) == 0;
  if (!g_showdown)
    kf_log(KF_LOG_INFO, "%s has no showdown mode: this worker does not take"
           " showdown tasks", exe);
  return g_showdown == 1;
}

/* The output of a showdown that gave no usable ShowdownResult. */
static void showdown_fail(kf_task_exec *t, int outcome, const char *why) {
  set(t, outcome, "showdown", why);
  Kernelfleet__ShowdownResult r = KERNELFLEET__SHOWDOWN_RESULT__INIT;
  r.outcome = (Kernelfleet__Outcome)outcome;
  r.reason = (char *)why;
  size_t pl = kernelfleet__showdown_result__get_packed_size(&r);
  unsigned char *out = malloc(pl ? pl : 1);
  if (!out) return;
  kernelfleet__showdown_result__pack(&r, out);
  t->output = out;
  t->output_len = pl;
}

void kf_task_showdown(kf_task_exec *t) {
  unsigned char *res;
  size_t rl;
  int st;
  bool timed_out;
  char why[512];
  if (!run_harness(t, "showdown", &res, &rl, &st, &timed_out)) return;
  if (timed_out) {
    free(res);
    snprintf(why, sizeof why, "showdown still running after the task's "
             "%u ms; killed", t->timeout_ms ? t->timeout_ms
                                              : DEFAULT_TIMEOUT_MS);
    showdown_fail(t, KF_OUTCOME_TIMEOUT, why);
    kf_log(KF_LOG_WARN, "%s", why);
    return;
  }
  Kernelfleet__ShowdownResult *r =
      rl ? kernelfleet__showdown_result__unpack(NULL, rl, res + 4) : NULL;
  /* Its strings are stored and shown: made safe as an eval's are. */
  if (r && kf_text_sanitize_pb(&r->base, KF_TEXT_REASON_MAX,
                               KF_TEXT_MULTILINE) != 0) {
    kernelfleet__showdown_result__free_unpacked(r, NULL);
    r = NULL;
  }
  if (!r || !kf_outcome_name(r->outcome)) {
    if (r) kernelfleet__showdown_result__free_unpacked(r, NULL);
    no_reply(why, sizeof why, st, res != NULL);
    free(res);
    set(t, KF_OUTCOME_INFRA_ERROR, "showdown", why);
    kf_log(KF_LOG_ERROR, "%s", why);
    return;
  }
  if (r->outcome == KERNELFLEET__OUTCOME__OUTCOME_OK) {
    uint32_t ok = 0;
    for (size_t i = 0; i < r->n_entries; i++)
      ok += r->entries[i]->outcome == KERNELFLEET__OUTCOME__OUTCOME_OK;
    snprintf(why, sizeof why, "%u of %zu candidates re-timed ok; reference "
             "%.0f ns, %u repetitions", ok, r->n_entries,
             r->ref_time_ns_median, r->ref_repetitions);
    set(t, KF_OUTCOME_OK, "showdown", why);
  } else {
    set(t, (int)r->outcome, "showdown", r->reason ? r->reason : "");
  }
  /* output: the ShowdownResult, packed again (sanitized strings) */
  free(res);
  size_t pl = kernelfleet__showdown_result__get_packed_size(r);
  unsigned char *out = malloc(pl ? pl : 1);
  if (out) {
    kernelfleet__showdown_result__pack(r, out);
    t->output = out;
    t->output_len = pl;
  } else {
    set(t, KF_OUTCOME_INFRA_ERROR, "showdown", "worker out of memory");
  }
  kernelfleet__showdown_result__free_unpacked(r, NULL);
}
