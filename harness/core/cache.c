/* SPDX-License-Identifier: Apache-2.0 */
/*
 * harness/core/cache.c -- a worker-local cache of compiled TRUSTED code:
 * the reference and the link check's empty baseline are the same for
 * every evaluation of a campaign, so their objects are built once and
 * copied afterwards.  Candidates' objects are never cached here (each is
 * compiled, and judged, from its own source); the torch backend's JIT
 * snapshots (harness/torch/jitcache.c) live in a subdirectory.
 *
 * The key is a sha256 over the harness build identity, the compiler's
 * version line, the target and the source, so a new harness or toolchain
 * misses.  The directory ($KF_HARNESS_CACHE, else $TMPDIR/kf-harness-cache,
 * else /tmp/...) is created 0700 by this uid; an entry is written to a
 * temporary name and renamed, so a reader sees a whole file or none, and
 * concurrent evaluations may race harmlessly.  Any failure is a miss.
 */
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "log.h"
#include "util.h"

#define MAX_ENTRY (256u << 20)

int kf_harness__cache_key(const char *const *parts, int n, char *out,
                          size_t outlen) {
  char build[80];
  if (kf_harness__build_id(build, sizeof build) != 0) return -1;
  EVP_MD_CTX *md = EVP_MD_CTX_new();
  if (!md || EVP_DigestInit_ex(md, EVP_sha256(), NULL) != 1) {
    EVP_MD_CTX_free(md);
    return -1;
  }
  EVP_DigestUpdate(md, build, strlen(build) + 1);
  for (int i = 0; i < n; i++)
    EVP_DigestUpdate(md, parts[i] ? parts[i] : "", strlen(parts[i] ? parts[i] : "") + 1);
  unsigned char d[32];
  unsigned int dl = 0;
  int ok = EVP_DigestFinal_ex(md, d, &dl) == 1;
  EVP_MD_CTX_free(md);
  if (!ok || outlen < 65) return -1;
  for (unsigned i = 0; i < dl && i < 32; i++)
    snprintf(out + 2 * i, 3, "%02x", d[i]);
  return 0;
}

int kf_harness__cache_dir(char *out, size_t outlen) {
  const char *env = getenv("KF_HARNESS_CACHE");
  if (env && *env)
    kf_strlcpy(out, env, outlen);
  else
    snprintf(out, outlen, "%s/kf-harness-cache-%u",
             kf_getenv_or("TMPDIR", "/tmp"), (unsigned)geteuid());
  if (mkdir(out, 0700) != 0 && errno != EEXIST) return -1;
  struct stat st;
  /* ours alone: nobody else may plant an object here */
  if (lstat(out, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
      (st.st_mode & 0077))
    return -1;
  return 0;
}

static int copy_file(const char *from, const char *to, mode_t mode) {
  char *data;
  size_t len;
  char err[256];
  if (kf_read_file(from, MAX_ENTRY, &data, &len, err, sizeof err)) return -1;
  int fd = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
  if (fd < 0) {
    free(data);
    return -1;
  }
  size_t off = 0;
  while (off < len) {
    ssize_t w = write(fd, data + off, len - off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) break;
    off += (size_t)w;
  }
  free(data);
  if (close(fd) != 0 || off != len) {
    unlink(to);
    return -1;
  }
  return 0;
}

bool kf_harness__cache_get(const char *key, const char *dst) {
  char dir[1024], path[1200];
  if (kf_harness__cache_dir(dir, sizeof dir)) return false;
  snprintf(path, sizeof path, "%s/%s.so", dir, key);
  return copy_file(path, dst, 0644) == 0;
}

void kf_harness__cache_put(const char *key, const char *src) {
  char dir[1024], tmp[1200], path[1200];
  if (kf_harness__cache_dir(dir, sizeof dir)) return;
  snprintf(path, sizeof path, "%s/%s.so", dir, key);
  snprintf(tmp, sizeof tmp, "%s/.%s.%d", dir, key, (int)getpid());
  if (copy_file(src, tmp, 0600) == 0 && rename(tmp, path) != 0) unlink(tmp);
}
