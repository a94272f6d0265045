/* SPDX-License-Identifier: Apache-2.0 */
/*
 * harness/torch/jitcache.c -- the JIT sandbox's compile cache (see
 * jitcache.h for what it keeps and why that is safe).  Layout, under the
 * harness cache (core/cache.c, this uid's alone, 0700):
 *
 *   jit/KEY/meta    "torch=VERSION\nbytes=N\n": the runner seeds only a
 *                   process of the same torch (a build of another
 *                   torch's headers would load and then crash)
 *   jit/KEY/tree/   the copy of the side's /tmp/kf-jit
 *
 * The copy walks the stopped process's directory through /proc/PID/root
 * with openat and O_NOFOLLOW at every step: an absolute symlink there
 * would resolve against this process's root, so a side that made its
 * cache directory a link to /etc must get nothing, not the host's /etc.
 * Symlinks inside are copied as links (their text), never followed;
 * files keep their times (ninja compares them: a build copied with new
 * times would run again) and lose set-id bits; anything else (fifos,
 * sockets, devices) is skipped.  An entry is written under a temporary name and renamed, so
 * concurrent evaluations race harmlessly; a reader that loses its entry
 * to eviction mid-copy just starts without it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "jitcache.h"
#include "log.h"
#include "util.h"

#define SNAP_MAX_BYTES (512ull << 20) /* one side's snapshot */
#define SNAP_MAX_FILES 50000u
#define SNAP_MAX_DEPTH 40
#define CACHE_MAX_ENTRIES 48
#define CACHE_MAX_BYTES (4ull << 30)

typedef struct {
  uint64_t bytes;
  unsigned files;
  bool side;      /* stopped for the side's doing (too large, too deep) */
  char *why;
  size_t whylen;
} walk;

static int jit_root(char *out, size_t outlen) {
  char dir[1024];
  if (kf_harness__cache_dir(dir, sizeof dir)) return -1;
  if ((size_t)snprintf(out, outlen, "%s/jit", dir) >= outlen) return -1;
  if (mkdir(out, 0700) != 0 && errno != EEXIST) return -1;
  struct stat st;
  if (lstat(out, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid())
    return -1;
  return 0;
}

int kf_harness__jit_key(const char *source, const char *config,
                        const char *python, char *out, size_t outlen) {
  const char *parts[] = {"torch-jit-snapshot", source, config, python};
  return kf_harness__cache_key(parts, 4, out, outlen);
}

int kf_harness__jit_lookup(const char *key, char *path, size_t pathlen) {
  char root[1100];
  if (jit_root(root, sizeof root)) return -1;
  if ((size_t)snprintf(path, pathlen, "%s/%s", root, key) >= pathlen)
    return -1;
  struct stat st;
  if (lstat(path, &st) != 0 || !S_ISDIR(st.st_mode)) return -1;
  /* used now: eviction keeps it */
  utimensat(AT_FDCWD, path, NULL, AT_SYMLINK_NOFOLLOW);
  return 0;
}

static int fail(walk *w, bool side, const char *what, const char *name) {
  w->side = side;
  snprintf(w->why, w->whylen, "%s%s%s%s", what, name ? " (" : "",
           name ? name : "", name ? ")" : "");
  return -1;
}

static int copy_file(walk *w, int sfd, int dfd, const char *name,
                     const struct stat *sb) {
  int in = openat(sfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (in < 0) return fail(w, false, strerror(errno), name);
  struct stat st;
  if (fstat(in, &st) != 0 || !S_ISREG(st.st_mode) || st.st_ino != sb->st_ino) {
    close(in);
    return fail(w, true, "a file changed while it was copied", name);
  }
  int out = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
                   O_CLOEXEC, (st.st_mode & 0755) | 0600);
  if (out < 0) {
    close(in);
    return fail(w, false, strerror(errno), name);
  }
  static char buf[1 << 16];
  int rc = 0;
  for (;;) {
    ssize_t n = read(in, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      rc = fail(w, false, strerror(errno), name);
      break;
    }
    if (n == 0) break;
    w->bytes += (uint64_t)n;
    if (w->bytes > SNAP_MAX_BYTES) {
      rc = fail(w, true, "over 512 MiB", NULL);
      break;
    }
    for (ssize_t off = 0; off < n;) {
      ssize_t k = write(out, buf + off, (size_t)(n - off));
      if (k < 0 && errno == EINTR) continue;
      if (k <= 0) {
        rc = fail(w, false, strerror(errno), name);
        break;
      }
      off += k;
    }
    if (rc) break;
  }
  close(in);
  /* ninja decides "up to date" by modification times, to the nanosecond:
   * a copied build must keep them */
  struct timespec ts[2] = {st.st_atim, st.st_mtim};
  if (!rc && futimens(out, ts) != 0) rc = fail(w, false, strerror(errno), name);
  if (close(out) != 0 && !rc) rc = fail(w, false, strerror(errno), name);
  return rc;
}

static int copy_dir(walk *w, int sfd, int dfd, int depth) {
  if (depth > SNAP_MAX_DEPTH) return fail(w, true, "nested too deep", NULL);
  int fd = dup(sfd);
  DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
  if (!d) {
    if (fd >= 0) close(fd);
    return fail(w, false, strerror(errno), NULL);
  }
  int rc = 0;
  struct dirent *de;
  while (!rc && (errno = 0, de = readdir(d))) {
    const char *name = de->d_name;
    if (!strcmp(name, ".") || !strcmp(name, "..")) continue;
    if (++w->files > SNAP_MAX_FILES) {
      rc = fail(w, true, "over 50,000 files", NULL);
      break;
    }
    struct stat sb;
    if (fstatat(sfd, name, &sb, AT_SYMLINK_NOFOLLOW) != 0) {
      rc = fail(w, false, strerror(errno), name);
    } else if (S_ISDIR(sb.st_mode)) {
      if (mkdirat(dfd, name, 0700) != 0) {
        rc = fail(w, false, strerror(errno), name);
        break;
      }
      int ns = openat(sfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
                      O_CLOEXEC);
      int nd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
                      O_CLOEXEC);
      if (ns < 0 || nd < 0)
        rc = fail(w, ns < 0, strerror(errno), name);
      else
        rc = copy_dir(w, ns, nd, depth + 1);
      if (ns >= 0) close(ns);
      if (nd >= 0) close(nd);
    } else if (S_ISREG(sb.st_mode)) {
      rc = copy_file(w, sfd, dfd, name, &sb);
    } else if (S_ISLNK(sb.st_mode)) {
      char target[PATH_MAX];
      ssize_t n = readlinkat(sfd, name, target, sizeof target - 1);
      if (n < 0) {
        rc = fail(w, false, strerror(errno), name);
        break;
      }
      target[n] = '\0';
      if (symlinkat(target, dfd, name) != 0)
        rc = fail(w, false, strerror(errno), name);
    }
    /* fifos, sockets, devices: not a compiler's output; skipped */
  }
  if (!rc && errno) rc = fail(w, false, strerror(errno), NULL);
  closedir(d);
  return rc;
}

typedef struct {
  char name[80];
  struct timespec used;
  uint64_t bytes;
} entry;

static int by_age(const void *a, const void *b) {
  const entry *x = a, *y = b;
  if (x->used.tv_sec != y->used.tv_sec)
    return x->used.tv_sec < y->used.tv_sec ? -1 : 1;
  return (x->used.tv_nsec > y->used.tv_nsec) - (x->used.tv_nsec < y->used.tv_nsec);
}

static uint64_t meta_bytes(const char *root, const char *name) {
  char path[1300];
  snprintf(path, sizeof path, "%s/%s/meta", root, name);
  FILE *f = fopen(path, "re");
  unsigned long long n = 0;
  char line[160];
  while (f && fgets(line, sizeof line, f))
    if (sscanf(line, "bytes=%llu", &n) == 1) break;
  if (f) fclose(f);
  return n;
}

/* Drops the least recently used entries past the limits. */
static void evict(const char *root) {
  DIR *d = opendir(root);
  if (!d) return;
  entry *ents = NULL;
  size_t n = 0, cap = 0;
  struct dirent *de;
  while ((de = readdir(d))) {
    if (strlen(de->d_name) != 64) continue; /* keys; not .tmp-* */
    struct stat st;
    char path[1300];
    snprintf(path, sizeof path, "%s/%s", root, de->d_name);
    if (lstat(path, &st) != 0 || !S_ISDIR(st.st_mode)) continue;
    if (n == cap) {
      size_t nc = cap ? 2 * cap : 64;
      entry *ne = realloc(ents, nc * sizeof *ne);
      if (!ne) break;
      ents = ne;
      cap = nc;
    }
    kf_strlcpy(ents[n].name, de->d_name, sizeof ents[n].name);
    ents[n].used = st.st_mtim;
    ents[n].bytes = meta_bytes(root, de->d_name);
    n++;
  }
  closedir(d);
  qsort(ents, n, sizeof *ents, by_age);
  uint64_t total = 0;
  for (size_t i = 0; i < n; i++) total += ents[i].bytes;
  for (size_t i = 0; i < n && (n - i > CACHE_MAX_ENTRIES ||
                               total > CACHE_MAX_BYTES); i++) {
    char path[1300];
    snprintf(path, sizeof path, "%s/%s", root, ents[i].name);
    kf_remove_tree(path);
    total -= ents[i].bytes;
  }
  free(ents);
}

int kf_harness__jit_store(const char *key, pid_t pid, const char *torch_ver,
                          char *why, size_t whylen) {
  char root[1100], tmp[1300], path[1300], src[64];
  if (jit_root(root, sizeof root)) {
    snprintf(why, whylen, "no cache directory of this uid's alone");
    return -1;
  }
  snprintf(path, sizeof path, "%s/%s", root, key);
  struct stat st;
  if (lstat(path, &st) == 0) return 0; /* stored meanwhile */
  snprintf(src, sizeof src, "/proc/%d/root/tmp", (int)pid);
  /* "root" is followed (a magic link: the process's own root); /tmp is
   * its private tmpfs, which it cannot replace; kf-jit it could */
  int tfd = open(src, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (tfd < 0) {
    snprintf(why, whylen, "%s: %s", src, strerror(errno));
    return -1;
  }
  int sfd = openat(tfd, "kf-jit", O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
                   O_CLOEXEC);
  close(tfd);
  if (sfd < 0) {
    snprintf(why, whylen, "its /tmp/kf-jit is %s",
             errno == ELOOP || errno == ENOTDIR ? "not a directory"
                                                : strerror(errno));
    return errno == ELOOP || errno == ENOTDIR || errno == ENOENT ? 1 : -1;
  }
  snprintf(tmp, sizeof tmp, "%s/.tmp-%.16s-%d", root, key, (int)getpid());
  kf_remove_tree(tmp);
  char tree[1400];
  snprintf(tree, sizeof tree, "%s/tree", tmp);
  if (mkdir(tmp, 0700) != 0 || mkdir(tree, 0700) != 0) {
    snprintf(why, whylen, "%s: %s", tmp, strerror(errno));
    close(sfd);
    kf_remove_tree(tmp);
    return -1;
  }
  int dfd = open(tree, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  walk w = {.why = why, .whylen = whylen};
  int rc = dfd < 0 ? fail(&w, false, strerror(errno), tree)
                   : copy_dir(&w, sfd, dfd, 0);
  close(sfd);
  if (dfd >= 0) close(dfd);
  if (!rc) {
    char meta[1400];
    snprintf(meta, sizeof meta, "%s/meta", tmp);
    FILE *f = fopen(meta, "wxe");
    if (!f || fprintf(f, "torch=%s\nbytes=%" PRIu64 "\n", torch_ver,
                      w.bytes) < 0 || fclose(f) != 0) {
      if (f) fclose(f);
      rc = fail(&w, false, "cannot write meta", NULL);
    }
  }
  if (!rc && rename(tmp, path) != 0 && errno != EEXIST && errno != ENOTEMPTY)
    rc = fail(&w, false, strerror(errno), path);
  kf_remove_tree(tmp); /* after a rename: gone already; after a race: ours */
  if (rc) return w.side ? 1 : -1;
  snprintf(why, whylen, "%u files, %" PRIu64 " bytes", w.files, w.bytes);
  evict(root);
  return 0;
}
