/* SPDX-License-Identifier: Apache-2.0 */
/*
 * common/log.h -- one-line structured logs on stderr.
 *
 * Each line: "2026-11-21T16:47:52.123Z pid=123 role=c level=info
 * [worker=7] [task=42] msg=\"...\" src=file.c:10".  The level says what
 * happens next:
 *   DEBUG  detail for developers; filtered by default.
 *   INFO   normal progress.
 *   WARN   something went wrong; the work goes on (a retry, a requeue).
 *   ERROR  the current request or task is dropped; the process goes on.
 *   FATAL  the process exits (startup and harness children only).
 * Formatting is skipped for filtered levels.  Thread-safe: each line is one
 * write(2).
 */
#ifndef KF_LOG_H
#define KF_LOG_H

#include <stdint.h>

typedef enum {
  KF_LOG_DEBUG = 0,
  KF_LOG_INFO = 1,
  KF_LOG_WARN = 2,
  KF_LOG_ERROR = 3,
  KF_LOG_FATAL = 4,
} kf_log_level;

/* role: 'c' coordinator, 'w' worker, 'h' harness child, 'u' cli, 't' test. */
void kf_log_init(char role, kf_log_level min_level);
/* Parses "debug|info|warn|error"; returns -1 when unknown. */
int kf_log_parse_level(const char *s);
int kf_log_enabled(kf_log_level level);

/* Context stack of the calling thread: fields added to every line until
 * popped.  Zero means "not set". */
void kf_log_set_worker(int64_t worker_id);
void kf_log_set_task(int64_t task_id);

void kf_log_impl(kf_log_level level, const char *file, int line,
                 const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#define kf_log(level, ...)                                                    \
  do {                                                                        \
    if (kf_log_enabled(level))                                                \
      kf_log_impl((level), __FILE__, __LINE__, __VA_ARGS__);                  \
  } while (0)

#endif
