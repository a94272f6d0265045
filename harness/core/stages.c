/* SPDX-License-Identifier: Apache-2.0 */
/*
 * harness/core/stages.c -- bookkeeping every evaluation needs whatever its
 * backend: the list of stages and their clocks, the private work
 * directory with a jail per runner, taking a built object into a jail,
 * length-prefixed protobuf I/O and how much memory the machine has.
 * Runs in the eval process, single-threaded, and never touches candidate
 * code.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"
#include "internal.h"
#include "kernelfleet.pb-c.h"
#include "log.h"
#include "outcome.h"
#include "text.h"
#include "util.h"

/* ------------------------------------------------------------ stages */

void kf_harness__clean_why(char *out, const char *in, size_t cap) {
  if (out == in) {
    char tmp[KF_HARNESS_WHY];
    kf_strlcpy(tmp, in, sizeof tmp);
    kf_text_sanitize(tmp, strlen(tmp), out, cap, KF_TEXT_MULTILINE);
    return;
  }
  kf_text_sanitize(in, strlen(in), out, cap, KF_TEXT_MULTILINE);
}

int kf_harness__stage_begin(kf_harness_stages *st, const char *name) {
  size_t i = st->n;
  if (i >= KF_HARNESS_MAX_STAGES) abort(); /* fixed list of stages */
  kernelfleet__stage_result__init(&st->stages[i]);
  kf_strlcpy(st->names[i], name, sizeof st->names[i]);
  st->stages[i].stage = st->names[i];
  st->reasons[i][0] = '\0';
  st->stages[i].reason = st->reasons[i];
  st->ptrs[i] = &st->stages[i];
  st->n = i + 1;
  st->t0 = kf_now_us();
  return (int)i;
}

int kf_harness__stage_end(kf_harness_stages *st, int outcome,
                          const char *reason) {
  size_t i = st->n - 1;
  st->stages[i].outcome =
      (Kernelfleet__Outcome)(outcome ? outcome : KF_OUTCOME_OK);
  /* a reason quotes what a side wrote (its replies, its errors): the
   * result is UTF-8 text, and a side's raw bytes made eval-files' JSON
   * unreadable (red team, 2026-11-30) */
  kf_harness__clean_why(st->reasons[i], reason ? reason : "", KF_HARNESS_WHY);
  st->stages[i].elapsed_us = kf_now_us() - st->t0;
  if (outcome)
    kf_log(KF_LOG_INFO, "stage %s: %s: %s", st->names[i],
           kf_outcome_name(outcome), st->reasons[i]);
  else
    kf_log(KF_LOG_INFO, "stage %s: ok (%" PRIu64 " us)%s%s", st->names[i],
           (uint64_t)st->stages[i].elapsed_us, *st->reasons[i] ? ": " : "",
           st->reasons[i]);
  return outcome;
}

/* ----------------------------------------------------------- workdir */

int kf_harness__workdir_make(kf_harness_workdir *w, const char *base,
                             char *why, size_t whylen) {
  if (!base || !*base) base = kf_getenv_or("TMPDIR", "/tmp");
  snprintf(w->work, sizeof w->work, "%s/kf-harness-XXXXXX", base);
  if (!mkdtemp(w->work)) {
    snprintf(why, whylen, "mkdtemp %s: %s", w->work, strerror(errno));
    return KF_OUTCOME_INFRA_ERROR;
  }
  w->have_work = true;
  snprintf(w->build, sizeof w->build, "%s/build", w->work);
  bool root = geteuid() == 0;
  if (chmod(w->work, 0711) != 0 || mkdir(w->build, 0700) != 0 ||
      (root && chown(w->build, 65534, 65534) != 0)) {
    snprintf(why, whylen, "workdir %s: %s", w->work, strerror(errno));
    return KF_OUTCOME_INFRA_ERROR;
  }
  return 0;
}

int kf_harness__workdir_jail(const kf_harness_workdir *w, const char *name,
                             char *out, size_t outlen, char *why,
                             size_t whylen) {
  snprintf(out, outlen, "%s/jail-%s", w->work, name);
  if (mkdir(out, 0755) != 0) {
    snprintf(why, whylen, "mkdir %s: %s", out, strerror(errno));
    return KF_OUTCOME_INFRA_ERROR;
  }
  return 0;
}

void kf_harness__workdir_remove(kf_harness_workdir *w) {
  if (w->have_work) kf_remove_tree(w->work);
  w->have_work = false;
}

int kf_harness__take_so(const char *build, const char *base, const char *jail,
                        const char *name, size_t max, unsigned char **buf,
                        size_t *len, char *why, size_t whylen) {
  char path[1400], err[512];
  snprintf(path, sizeof path, "%s/%s.so", build, base);
  char *data;
  int rc = kf_read_file(path, max, &data, len, err, sizeof err);
  if (rc) {
    if (rc == KF_ETOOBIG)
      snprintf(why, whylen, "%s.so: larger than %zu MiB", base, max >> 20);
    else
      snprintf(why, whylen, "%s.so: %s", base, err);
    return rc == KF_ETOOBIG ? KF_OUTCOME_LINK_REJECTED : KF_OUTCOME_INFRA_ERROR;
  }
  *buf = (unsigned char *)data;
  snprintf(path, sizeof path, "%s/%s", jail, name);
  FILE *f = fopen(path, "wbx");
  if (!f || fwrite(data, 1, *len, f) != *len || fclose(f) != 0 ||
      chmod(path, 0444) != 0) {
    snprintf(why, whylen, "write %s: %s", path, strerror(errno));
    return KF_OUTCOME_INFRA_ERROR;
  }
  return 0;
}

/* --------------------------------------------------------------- I/O */

static int write_full(int fd, const void *buf, size_t n) {
  size_t off = 0;
  while (off < n) {
    ssize_t w = write(fd, (const char *)buf + off, n - off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    off += (size_t)w;
  }
  return 0;
}

static int read_full(int fd, void *buf, size_t n) {
  size_t got = 0;
  while (got < n) {
    ssize_t r = read(fd, (char *)buf + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return -1;
    got += (size_t)r;
  }
  return 0;
}

int kf_harness__write_msg(const ProtobufCMessage *m, int fd) {
  size_t n = protobuf_c_message_get_packed_size(m);
  unsigned char *buf = malloc(n + 4);
  if (!buf) return KF_ENOMEM;
  buf[0] = (unsigned char)n;
  buf[1] = (unsigned char)(n >> 8);
  buf[2] = (unsigned char)(n >> 16);
  buf[3] = (unsigned char)(n >> 24);
  protobuf_c_message_pack(m, buf + 4);
  int rc = write_full(fd, buf, n + 4);
  free(buf);
  if (rc) {
    kf_log(KF_LOG_ERROR, "cannot write the result: %s", strerror(errno));
    return KF_EIO;
  }
  return 0;
}

int kf_harness__read_msg(int fd, size_t max, unsigned char **buf,
                         size_t *len) {
  unsigned char hdr[4];
  *buf = NULL;
  if (read_full(fd, hdr, 4) != 0) return -1;
  uint32_t n = (uint32_t)hdr[0] | (uint32_t)hdr[1] << 8 |
               (uint32_t)hdr[2] << 16 | (uint32_t)hdr[3] << 24;
  if (n > max) return -1;
  unsigned char *b = malloc(n ? n : 1);
  if (!b) return -1;
  if (read_full(fd, b, n) != 0) {
    free(b);
    return -1;
  }
  *buf = b;
  *len = n;
  return 0;
}

uint64_t kf_harness__mem_available(void) {
  FILE *f = fopen("/proc/meminfo", "r");
  if (!f) return 0;
  char line[256];
  uint64_t kb = 0;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "MemAvailable: %" SCNu64 " kB", &kb) == 1) break;
  fclose(f);
  return kb * 1024;
}
