/* SPDX-License-Identifier: Apache-2.0 */
/*
 * common/token.c -- credential secrets: generation (getrandom), hashing
 * (libcrypto's SHA-256, the same library gRPC already loads), and the one
 * way a program reads its secret (file or environment, never argv).
 */
#include "token.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"

unsigned kf_token_role_parse(const char *name) {
  if (!name) return 0;
  if (!strcmp(name, "worker")) return KF_ROLE_WORKER;
  if (!strcmp(name, "submitter")) return KF_ROLE_SUBMITTER;
  if (!strcmp(name, "admin")) return KF_ROLE_ADMIN;
  return 0;
}

const char *kf_token_role_name(unsigned role) {
  switch (role) {
  case 0: return "none";
  case KF_ROLE_WORKER: return "worker";
  case KF_ROLE_SUBMITTER: return "submitter";
  case KF_ROLE_ADMIN: return "admin";
  default: return "mixed";
  }
}

static const char HEX[] = "0123456789abcdef";

int kf_token_generate(char *out, size_t outlen) {
  if (outlen < KF_TOKEN_SECRET_LEN + 1) return KF_EINVAL;
  uint8_t raw[32];
  size_t got = 0;
  while (got < sizeof raw) {
    ssize_t n = getrandom(raw + got, sizeof raw - got, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      return KF_EIO;
    }
    got += (size_t)n;
  }
  memcpy(out, "kft_", 4);
  for (size_t i = 0; i < sizeof raw; i++) {
    out[4 + 2 * i] = HEX[raw[i] >> 4];
    out[5 + 2 * i] = HEX[raw[i] & 15];
  }
  out[KF_TOKEN_SECRET_LEN] = '\0';
  return 0;
}

int kf_token_hash(const char *secret, size_t n,
                  uint8_t out[KF_TOKEN_HASH_LEN]) {
  unsigned len = 0;
  if (EVP_Digest(secret, n, out, &len, EVP_sha256(), NULL) != 1 ||
      len != KF_TOKEN_HASH_LEN)
    return KF_EINTERNAL;
  return 0;
}

int kf_token_hash_hex(const char *secret, size_t n, char hex[65]) {
  uint8_t h[KF_TOKEN_HASH_LEN];
  int rc = kf_token_hash(secret, n, h);
  if (rc) return rc;
  for (size_t i = 0; i < sizeof h; i++) {
    hex[2 * i] = HEX[h[i] >> 4];
    hex[2 * i + 1] = HEX[h[i] & 15];
  }
  hex[64] = '\0';
  return 0;
}

static int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

int kf_token_hex_decode(const char *hex, uint8_t out[KF_TOKEN_HASH_LEN]) {
  if (!hex || strlen(hex) != 2 * KF_TOKEN_HASH_LEN) return KF_EINVAL;
  for (size_t i = 0; i < KF_TOKEN_HASH_LEN; i++) {
    int a = hexval(hex[2 * i]), b = hexval(hex[2 * i + 1]);
    if (a < 0 || b < 0) return KF_EINVAL;
    out[i] = (uint8_t)(a << 4 | b);
  }
  return 0;
}

int kf_token_read_file(const char *path, char *out, size_t outlen, char *err,
                       size_t errlen) {
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0)
    return kf_seterr(KF_EIO, err, errlen, "token file %s: %s", path,
                     strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int e = errno;
    close(fd);
    return kf_seterr(KF_EIO, err, errlen, "token file %s: %s", path,
                     strerror(e));
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    return kf_seterr(KF_EINVAL, err, errlen,
                     "token file %s: not a regular file", path);
  }
  if (st.st_mode & 077) {
    close(fd);
    return kf_seterr(KF_EPERM, err, errlen,
                     "token file %s: mode %03o lets others read it; "
                     "chmod 600 it", path, (unsigned)(st.st_mode & 0777));
  }
  size_t n = 0;
  for (;;) {
    if (n + 1 >= outlen || n >= KF_TOKEN_MAX + 2) {
      close(fd);
      return kf_seterr(KF_EINVAL, err, errlen, "token file %s: too long",
                       path);
    }
    ssize_t r = read(fd, out + n, outlen - 1 - n);
    if (r < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      close(fd);
      return kf_seterr(KF_EIO, err, errlen, "token file %s: %s", path,
                       strerror(e));
    }
    if (r == 0) break;
    n += (size_t)r;
  }
  close(fd);
  out[n] = '\0';
  if (n && out[n - 1] == '\n') out[--n] = '\0';
  if (n && out[n - 1] == '\r') out[--n] = '\0';
  if (n == 0 || n > KF_TOKEN_MAX || memchr(out, '\n', n) ||
      strlen(out) != n)
    return kf_seterr(KF_EINVAL, err, errlen,
                     "token file %s: expected one line with the token", path);
  return 0;
}

int kf_token_read_file_alloc(const char *path, char **out, char *err,
                             size_t errlen) {
  *out = NULL;
  char *buf = malloc(KF_TOKEN_MAX + 4);
  if (!buf) return kf_seterr(KF_ENOMEM, err, errlen, "out of memory");
  int rc = kf_token_read_file(path, buf, KF_TOKEN_MAX + 4, err, errlen);
  if (rc) {
    free(buf);
    return rc;
  }
  *out = buf;
  return 0;
}

int kf_token_load(const char *path, char **out, char *err, size_t errlen) {
  *out = NULL;
  if (!path || !*path) {
    const char *e = getenv("KF_TOKEN_FILE");
    if (e && *e) path = e;
  }
  if (path && *path) return kf_token_read_file_alloc(path, out, err, errlen);
  const char *e = getenv("KF_TOKEN");
  if (!e || !*e) return 0;
  if (strlen(e) > KF_TOKEN_MAX)
    return kf_seterr(KF_EINVAL, err, errlen, "$KF_TOKEN is too long");
  *out = strdup(e);
  if (!*out) return kf_seterr(KF_ENOMEM, err, errlen, "out of memory");
  return 0;
}
