/* SPDX-License-Identifier: Apache-2.0 */
/*
 * worker/tasks.c -- built-in task kinds.  "checksum" keeps the task loop
 * honest end to end before any kernel is compiled: its answer is easy to
 * recompute in a test, and a wrong one is easy to see.
 */
#include "tasks.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "outcome.h"
#include "util.h"

const kf_task_kind kf_task_kinds[] = {
    {"checksum", kf_task_checksum, NULL},
    {"eval", kf_task_eval, NULL},
    {"showdown", kf_task_showdown, kf_task_showdown_available},
    {NULL, NULL, NULL},
};

const kf_task_kind *kf_task_kind_find(const char *kind) {
  for (const kf_task_kind *k = kf_task_kinds; k->kind; k++)
    if (strcmp(k->kind, kind) == 0) return k;
  return NULL;
}

static void fail(kf_task_exec *t, int outcome, const char *stage,
                 const char *reason) {
  t->outcome = outcome;
  kf_strlcpy(t->stage, stage, sizeof t->stage);
  kf_strlcpy(t->reason, reason, sizeof t->reason);
}

/* The task's time is up: TIMEOUT, like an eval the harness had to kill. */
static void timed_out(kf_task_exec *t) {
  char why[128];
  snprintf(why, sizeof why, "checksum still running after the task's %u ms;"
           " stopped", t->timeout_ms);
  fail(t, KF_OUTCOME_TIMEOUT, "checksum", why);
}

/* Sleeps until now + ms or the deadline (ms, kf_now_ms clock; 0: none),
 * whichever comes first; false when the deadline cut it short. */
static bool sleep_until(uint64_t ms, uint64_t deadline) {
  uint64_t end = kf_now_ms() + ms;
  bool cut = deadline && deadline < end;
  if (cut) end = deadline;
  for (uint64_t now; (now = kf_now_ms()) < end;) {
    uint64_t left = end - now;
    struct timespec ts = {(time_t)(left / 1000),
                          (long)(left % 1000) * 1000000L};
    nanosleep(&ts, NULL); /* EINTR: the loop sleeps the rest */
  }
  return !cut;
}

void kf_task_checksum(kf_task_exec *t) {
  uint64_t t0 = kf_now_us();
  /* timeout_ms bounds the whole task (sleep and hashing); 0: unbounded. */
  uint64_t deadline = t->timeout_ms ? kf_now_ms() + t->timeout_ms : 0;
  cJSON *j = cJSON_ParseWithLength(t->payload, t->payload_len);
  if (!j || !cJSON_IsObject(j)) {
    cJSON_Delete(j);
    fail(t, KF_OUTCOME_SPEC_ERROR, "parse",
         "checksum payload is not a JSON object");
    return;
  }
  const cJSON *data = cJSON_GetObjectItemCaseSensitive(j, "data");
  const cJSON *rep = cJSON_GetObjectItemCaseSensitive(j, "repeat");
  const cJSON *slp = cJSON_GetObjectItemCaseSensitive(j, "sleep_ms");
  if (!cJSON_IsString(data)) {
    cJSON_Delete(j);
    fail(t, KF_OUTCOME_SPEC_ERROR, "parse",
         "checksum payload: \"data\" must be a string");
    return;
  }
  double repeat = cJSON_IsNumber(rep) ? rep->valuedouble : 1;
  double sleep_ms = cJSON_IsNumber(slp) ? slp->valuedouble : 0;
  if (repeat < 1 || repeat > 1e6 || sleep_ms < 0 || sleep_ms > 600000) {
    cJSON_Delete(j);
    fail(t, KF_OUTCOME_SPEC_ERROR, "parse",
         "checksum payload: repeat must be 1..1e6, sleep_ms 0..600000");
    return;
  }
  if (sleep_ms > 0 && !sleep_until((uint64_t)sleep_ms, deadline)) {
    cJSON_Delete(j);
    timed_out(t);
    return;
  }
  uint64_t h = KF_FNV1A_INIT;
  const unsigned char *p = (const unsigned char *)data->valuestring;
  size_t n = strlen(data->valuestring);
  /* Look at the clock about every MiB hashed. */
  long every = n >= (1u << 20) ? 1 : (long)((1u << 20) / (n ? n : 1));
  for (long r = 0; r < (long)repeat; r++) {
    if (deadline && r % every == 0 && kf_now_ms() >= deadline) {
      cJSON_Delete(j);
      timed_out(t);
      return;
    }
    h = kf_fnv1a(h, p, n);
  }
  cJSON_Delete(j);
  char out[64];
  int len = snprintf(out, sizeof out, "{\"fnv1a64\": \"%016llx\"}",
                     (unsigned long long)h);
  t->output = malloc((size_t)len);
  if (!t->output) {
    fail(t, KF_OUTCOME_INFRA_ERROR, "output", "worker out of memory");
    return;
  }
  memcpy(t->output, out, (size_t)len);
  t->output_len = (size_t)len;
  t->outcome = KF_OUTCOME_OK;
  kf_strlcpy(t->stage, "done", sizeof t->stage);
  t->elapsed_us = kf_now_us() - t0;
}
