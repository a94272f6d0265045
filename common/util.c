/* SPDX-License-Identifier: Apache-2.0 */
/* common/util.c -- clocks, bounded string copy, whole-file reads, the
 * running executable's place, tree removal. */
#include "util.h"

#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "err.h"

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t kf_now_ns(void) { return now_ns(); }
uint64_t kf_now_us(void) { return now_ns() / 1000u; }
uint64_t kf_now_ms(void) { return now_ns() / 1000000u; }

uint64_t kf_fnv1a(uint64_t h, const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ull;
  return h;
}

void kf_strlcpy(char *dst, const char *src, size_t dstlen) {
  if (!dstlen) return;
  size_t n = src ? strnlen(src, dstlen - 1) : 0;
  if (n) memcpy(dst, src, n);
  dst[n] = '\0';
}

int kf_read_file(const char *path, size_t max_bytes, char **out, size_t *len,
                 char *err, size_t errlen) {
  *out = NULL;
  FILE *f = fopen(path, "rb");
  if (!f)
    return kf_seterr(KF_EIO, err, errlen, "%s: %s", path, strerror(errno));
  size_t cap = 4096, n = 0;
  char *buf = malloc(cap);
  if (!buf) {
    fclose(f);
    return kf_seterr(KF_ENOMEM, err, errlen, "%s: out of memory", path);
  }
  for (;;) {
    if (n + 1 >= cap) {
      if (cap > max_bytes) {
        free(buf);
        fclose(f);
        return kf_seterr(KF_ETOOBIG, err, errlen, "%s: larger than %zu bytes",
                         path, max_bytes);
      }
      char *nb = realloc(buf, cap * 2);
      if (!nb) {
        free(buf);
        fclose(f);
        return kf_seterr(KF_ENOMEM, err, errlen, "%s: out of memory", path);
      }
      buf = nb;
      cap *= 2;
    }
    size_t r = fread(buf + n, 1, cap - n - 1, f);
    n += r;
    if (r == 0) break;
  }
  int bad = ferror(f);
  fclose(f);
  if (bad) {
    free(buf);
    return kf_seterr(KF_EIO, err, errlen, "%s: read error", path);
  }
  if (n > max_bytes) {
    free(buf);
    return kf_seterr(KF_ETOOBIG, err, errlen, "%s: larger than %zu bytes",
                     path, max_bytes);
  }
  buf[n] = '\0';
  *out = buf;
  if (len) *len = n;
  return 0;
}

int kf_parse_u64(const char *s, uint64_t *out) {
  if (!s || !*s) return KF_EINVAL;
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || *end || *s == '-') return KF_EINVAL;
  *out = v;
  return 0;
}

const char *kf_getenv_or(const char *name, const char *fallback) {
  const char *v = getenv(name);
  return (v && *v) ? v : fallback;
}

int kf_self_exe(char *out, size_t len) {
  if (len < 2) {
    errno = ENAMETOOLONG;
    return -1;
  }
  ssize_t n = readlink("/proc/self/exe", out, len - 1);
  if (n <= 0) return -1;
  if ((size_t)n == len - 1) { /* perhaps cut short */
    errno = ENAMETOOLONG;
    return -1;
  }
  out[n] = '\0';
  return 0;
}

int kf_self_dir(char *out, size_t len) {
  if (kf_self_exe(out, len) != 0) return -1;
  char *slash = strrchr(out, '/');
  if (!slash) { /* readlink gives an absolute path; be safe anyway */
    errno = ENOENT;
    return -1;
  }
  *slash = '\0';
  return 0;
}

void kf_self_sibling(const char *env, const char *name, char *out,
                     size_t len) {
  const char *v = env ? getenv(env) : NULL;
  char dir[PATH_MAX];
  if (v && *v)
    kf_strlcpy(out, v, len);
  else if (kf_self_dir(dir, sizeof dir) == 0)
    snprintf(out, len, "%s/%s", dir, name);
  else
    kf_strlcpy(out, name, len);
}

static int remove_entry(const char *path, const struct stat *st, int flag,
                        struct FTW *ftw) {
  (void)st;
  (void)ftw;
  if (flag == FTW_DP)
    rmdir(path);
  else
    unlink(path);
  return 0;
}

int kf_remove_tree(const char *path) {
  return nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}
