/* SPDX-License-Identifier: Apache-2.0 */
/*
 * common/log.c -- logfmt lines on stderr, one write(2) each so that lines
 * from several threads or processes sharing a pipe never interleave.
 */
#include "log.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static char log_role = '?';
static atomic_int log_min = KF_LOG_INFO;
static _Thread_local int64_t ctx_worker;
static _Thread_local int64_t ctx_task;

static const char *const level_names[] = {"debug", "info", "warn", "error",
                                          "fatal"};

void kf_log_init(char role, kf_log_level min_level) {
  log_role = role;
  atomic_store(&log_min, (int)min_level);
}

int kf_log_parse_level(const char *s) {
  for (int i = 0; i < 5; i++)
    if (strcmp(s, level_names[i]) == 0) return i;
  return -1;
}

int kf_log_enabled(kf_log_level level) {
  return (int)level >= atomic_load(&log_min);
}

void kf_log_set_worker(int64_t worker_id) { ctx_worker = worker_id; }
void kf_log_set_task(int64_t task_id) { ctx_task = task_id; }

void kf_log_impl(kf_log_level level, const char *file, int line,
                 const char *fmt, ...) {
  char buf[2048];
  struct timespec ts;
  struct tm tm;
  clock_gettime(CLOCK_REALTIME, &ts);
  gmtime_r(&ts.tv_sec, &tm);
  int n = snprintf(buf, sizeof buf,
                   "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ pid=%d role=%c "
                   "level=%s",
                   tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                   tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000L, (int)getpid(),
                   log_role, level_names[level]);
  if (ctx_worker && n < (int)sizeof buf)
    n += snprintf(buf + n, sizeof buf - n, " worker=%lld",
                  (long long)ctx_worker);
  if (ctx_task && n < (int)sizeof buf)
    n += snprintf(buf + n, sizeof buf - n, " task=%lld", (long long)ctx_task);
  if (n < (int)sizeof buf) n += snprintf(buf + n, sizeof buf - n, " msg=\"");
  if (n < (int)sizeof buf) {
    char msg[1536];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    /* Quote-escape so one log line stays one parseable record. */
    for (const char *p = msg; *p && n < (int)sizeof buf - 2; p++) {
      if (*p == '"' || *p == '\\') buf[n++] = '\\';
      buf[n++] = (*p == '\n') ? ' ' : *p;
    }
  }
  const char *base = strrchr(file, '/');
  if (n < (int)sizeof buf)
    n += snprintf(buf + n, sizeof buf - n, "\" src=%s:%d\n",
                  base ? base + 1 : file, line);
  if (n >= (int)sizeof buf) {
    n = sizeof buf;
    buf[n - 1] = '\n';
  }
  ssize_t w = write(STDERR_FILENO, buf, (size_t)n);
  (void)w;
}
