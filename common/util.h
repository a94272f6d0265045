/* SPDX-License-Identifier: Apache-2.0 */
/* common/util.h -- small helpers shared by every program: clocks, strings,
 * whole-file reads, where this program and its companions are, removing a
 * tree.  No state. */
#ifndef KF_UTIL_H
#define KF_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* Monotonic clock, milliseconds / microseconds / nanoseconds. */
uint64_t kf_now_ms(void);
uint64_t kf_now_us(void);
uint64_t kf_now_ns(void);

/* FNV-1a, 64 bits, over n bytes, continuing from h (KF_FNV1A_INIT to
 * start): a fast, well-spread hash for tables and keys, not a digest an
 * adversary cannot steer. */
#define KF_FNV1A_INIT 0xcbf29ce484222325ull
uint64_t kf_fnv1a(uint64_t h, const void *p, size_t n);

/* strdup that aborts the process on ENOMEM is deliberately absent: callers
 * check.  Copies at most dstlen-1 bytes and always terminates. */
void kf_strlcpy(char *dst, const char *src, size_t dstlen);

/* Reads a whole file into a malloc'd, NUL-terminated buffer.  Returns 0 or
 * KF_EIO / KF_ENOMEM / KF_ETOOBIG (over max_bytes) with text in err. */
int kf_read_file(const char *path, size_t max_bytes, char **out, size_t *len,
                 char *err, size_t errlen);

/* Parses a positive integer option value; returns 0 or KF_EINVAL. */
int kf_parse_u64(const char *s, uint64_t *out);

/* Environment variable or fallback when unset or empty. */
const char *kf_getenv_or(const char *name, const char *fallback);

/* The running executable's path / the directory holding it (from
 * /proc/self/exe).  0, or -1 with errno (ENAMETOOLONG: len too small). */
int kf_self_exe(char *out, size_t len);
int kf_self_dir(char *out, size_t len);

/* Where a companion program is: $env when set and not empty, else `name`
 * beside the running executable, else `name` as it is.  The programs of
 * one build or bundle live in one directory. */
void kf_self_sibling(const char *env, const char *name, char *out, size_t len);

/* Removes a directory tree without following links, best effort: what
 * can be removed is.  0, or -1 when the walk itself failed. */
int kf_remove_tree(const char *path);

#endif
