/* SPDX-License-Identifier: Apache-2.0 */
/*
 * harness/core/compile_jail.c -- the compiler's mount jail: cc and nvcc (and
 * everything they run: cc1, as, ld, cicc, ptxas...) see the toolchain and
 * the build directory, and nothing else of the host.
 *
 * Why: the compile stage's text check (check_includes in compile.c)
 * refuses `#include "/etc/..."` and `.incbin`, but inline asm can spell
 * the directive by string pasting (`".inc" "bin \"/etc/hostname\""`), and
 * then the assembler reads any world-readable host file into the object
 * or echoes it in an error.  In the jail such a path does not exist.
 *
 * kf_harness__spawn (proc.c) calls kf_harness__jail_enter in the forked
 * child, after chdir to the build directory and before the rlimits and
 * the drop to uid nobody.  As root, in this order:
 *   1. unshare(CLONE_NEWNS); every mount made private, so nothing done
 *      here propagates back to the host;
 *   2. a small tmpfs mounted over the build directory becomes the new
 *      root (the child's cwd still holds the directory underneath: it is
 *      bound back in step 5, so no other mount point is needed);
 *   3. read-only, nosuid bind mounts of /usr, of /bin /sbin /lib /lib32
 *      /lib64 /libx32 (recreated as symlinks where they are ones, as
 *      under usrmerge), of /etc/alternatives (Debian's /usr/bin/cc ->
 *      /etc/alternatives/cc) and /etc/ld.so.cache (the loader finds the
 *      libraries of /usr/local/lib and of ld.so.conf.d, CUDA's, only
 *      through it), of /dev/null, and of the toolkit directories outside
 *      /usr that kf_harness__jail_add_tool found (a KF_NVCC in /opt);
 *   4. a private tmpfs on /tmp (64 MiB);
 *   5. the build directory, read-write, at the path it has on the host,
 *      so file names in messages are unchanged;
 *   6. the new root remounted read-only, pivot_root into it (chroot where
 *      pivot_root is refused), the old root detached, chdir back to the
 *      build directory.
 * Not there: the rest of /etc, /proc, /sys, /root, /home, /var, /run,
 * /work, the evaluation's other directories (the runners' jails) -- the
 * EvalRequest with the seed never touches the disk (it comes on stdin).
 * Every file descriptor above 3 is made close-on-exec first, so no
 * inherited descriptor leads out of the jail.  /proc is not needed:
 * cicc probes /proc/self/exe and /dev/urandom and does without.
 *
 * Steps 1 and 2 may fail for want of privilege (not root; a container
 * without CAP_SYS_ADMIN; a seccomp or LSM profile refusing mounts): then
 * nothing has changed yet, the compiler runs as before this file, and
 * the parent records why in kf_harness_jail.note, which the compile
 * stage's "defenses:" text shows.  A failure after step 2 ends the spawn
 * (INFRA_ERROR): a half-built jail is never used.
 *
 * Between fork and exec (the eval process may have threads): only
 * syscalls and string functions here, no allocation, no stdio.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "internal.h"
#include "outcome.h"
#include "util.h"

#define TMP_OPTS "size=64m,mode=1777"
#define ROOT_OPTS "size=1m,nr_inodes=4096,mode=0755"

enum how {
  RO_DIR,      /* bind read-only */
  DIR_OR_LINK, /* a symlink is recreated, a directory bound read-only */
  RO_FILE,     /* bind a file read-only */
  DEV,         /* bind a device node (read-only mount, device usable) */
};

/* What the compiler sees of the host besides the build directory (see the
 * top comment for why each); those missing on the host are left out. */
static const struct {
  const char *path;
  enum how how;
} g_host[] = {
    {"/usr", RO_DIR},
    {"/bin", DIR_OR_LINK},
    {"/sbin", DIR_OR_LINK},
    {"/lib", DIR_OR_LINK},
    {"/lib32", DIR_OR_LINK},
    {"/lib64", DIR_OR_LINK},
    {"/libx32", DIR_OR_LINK},
    {"/etc/alternatives", DIR_OR_LINK},
    {"/etc/ld.so.cache", RO_FILE},
    {"/dev/null", DEV},
};
#define N_HOST (int)(sizeof g_host / sizeof g_host[0])

/* Step codes (what kf_harness__jail_enter reports in *step): the kind in
 * the high byte, the g_host or binds index in the low one. */
enum {
  J_NOT_ROOT = 1 << 8,
  J_GETCWD = 2 << 8,
  J_UNSHARE = 3 << 8,
  J_PRIVATE = 4 << 8,
  J_ROOTFS = 5 << 8,
  /* fatal from here on */
  J_FDS = 6 << 8,
  J_HOST = 7 << 8,  /* | g_host index */
  J_EXTRA = 8 << 8, /* | binds index */
  J_TMP = 9 << 8,
  J_BUILD = 10 << 8,
  J_RDONLY = 11 << 8,
  J_PIVOT = 12 << 8,
  J_CHDIR = 13 << 8,
  J_BADDIR = 14 << 8,
};

/* ------------------------------------------------------ parent side */

void kf_harness__jail_init(kf_harness_jail *j) {
  memset(j, 0, sizeof *j);
}

static bool under(const char *path, const char *dir) {
  size_t n = strlen(dir);
  return !strncmp(path, dir, n) && (path[n] == '/' || path[n] == '\0');
}

/* True when path is already in the jail through g_host. */
static bool covered(const char *path) {
  for (int i = 0; i < N_HOST; i++)
    if (g_host[i].how != RO_FILE && g_host[i].how != DEV &&
        under(path, g_host[i].path))
      return true;
  return false;
}

static int add_bind(kf_harness_jail *j, const char *dir, char *why,
                    size_t whylen) {
  if (!strcmp(dir, "/") || covered(dir)) return 0;
  for (int i = 0; i < j->n_binds; i++)
    if (!strcmp(j->binds[i], dir)) return 0;
  if (j->n_binds >= KF_HARNESS_JAIL_MAX_BINDS ||
      strlen(dir) >= sizeof j->binds[0]) {
    snprintf(why, whylen, "compiler jail: too many or too long toolchain "
             "directories (%.200s)", dir);
    return KF_OUTCOME_INFRA_ERROR;
  }
  kf_strlcpy(j->binds[j->n_binds++], dir, sizeof j->binds[0]);
  return 0;
}

/* The install prefix of an executable: PREFIX for PREFIX/bin/tool, else
 * the tool's own directory (never more of the host than that). */
static void prefix_of(const char *exe, char *out, size_t outlen) {
  kf_strlcpy(out, exe, outlen);
  char *s = strrchr(out, '/');
  if (!s) {
    kf_strlcpy(out, "/", outlen);
    return;
  }
  *s = '\0';
  s = strrchr(out, '/');
  if (s && !strcmp(s, "/bin")) *s = '\0';
  if (!*out) kf_strlcpy(out, "/", outlen);
}

int kf_harness__jail_add_tool(kf_harness_jail *j, const char *exe, char *why,
                              size_t whylen) {
  if (exe[0] != '/') {
    snprintf(why, whylen, "compiler jail: %.200s is not an absolute path",
             exe);
    return KF_OUTCOME_INFRA_ERROR;
  }
  char real[PATH_MAX], pre[PATH_MAX];
  if (!realpath(exe, real)) {
    snprintf(why, whylen, "compiler jail: realpath %.200s: %s", exe,
             strerror(errno));
    return KF_OUTCOME_INFRA_ERROR;
  }
  /* both the path it is run by and where it lies, so that a symlinked
   * toolkit (/opt/cuda -> /opt/cuda-12.4) resolves inside the jail */
  prefix_of(exe, pre, sizeof pre);
  int oc = add_bind(j, pre, why, whylen);
  if (oc) return oc;
  prefix_of(real, pre, sizeof pre);
  return add_bind(j, pre, why, whylen);
}

static void step_str(const kf_harness_jail *j, int step, char *out,
                     size_t outlen) {
  int i = step & 0xff;
  switch (step & ~0xff) {
  case J_GETCWD: snprintf(out, outlen, "getcwd"); return;
  case J_UNSHARE: snprintf(out, outlen, "unshare(CLONE_NEWNS)"); return;
  case J_PRIVATE: snprintf(out, outlen, "make mounts private"); return;
  case J_ROOTFS: snprintf(out, outlen, "mount tmpfs root"); return;
  case J_FDS: snprintf(out, outlen, "close-on-exec fds"); return;
  case J_HOST:
    snprintf(out, outlen, "bind %s", i < N_HOST ? g_host[i].path : "?");
    return;
  case J_EXTRA:
    snprintf(out, outlen, "bind %.200s",
             j && i < j->n_binds ? j->binds[i] : "?");
    return;
  case J_TMP: snprintf(out, outlen, "mount tmpfs /tmp"); return;
  case J_BUILD: snprintf(out, outlen, "bind the build directory"); return;
  case J_RDONLY: snprintf(out, outlen, "remount root read-only"); return;
  case J_PIVOT: snprintf(out, outlen, "pivot_root/chroot"); return;
  case J_CHDIR: snprintf(out, outlen, "chdir into the jail"); return;
  case J_BADDIR: snprintf(out, outlen, "build directory is /"); return;
  }
  snprintf(out, outlen, "step %d", step);
}

void kf_harness__jail_why(const kf_harness_jail *j, int step, int err,
                          char *out, size_t outlen) {
  if (step == J_NOT_ROOT) {
    snprintf(out, outlen, "not root");
    return;
  }
  char what[256];
  step_str(j, step, what, sizeof what);
  snprintf(out, outlen, "%s: %s", what, strerror(err));
}

void kf_harness__jail_defenses(const kf_harness_jail *j, char *out,
                               size_t outlen) {
  bool root = geteuid() == 0;
  snprintf(out, outlen, "defenses: %s%s%srlimits watchdog%s%s%s",
           j->state == KF_HARNESS_JAIL_ON ? "mount-jail " : "",
           root ? "uid-nobody " : "", root && !j->no_netns ? "netns " : "",
           j->state == KF_HARNESS_JAIL_ON ? "" : "; no mount jail (",
           j->state == KF_HARNESS_JAIL_ON ? "" : j->note,
           j->state == KF_HARNESS_JAIL_ON
               ? ""
               : "): the compiler can read every world-readable host file");
}

/* ------------------------------------------------------- child side */

/* dst = a b; -1 (ENAMETOOLONG) when it does not fit. */
static int join(char *dst, size_t cap, const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b);
  if (la + lb + 1 > cap) {
    errno = ENAMETOOLONG;
    return -1;
  }
  memcpy(dst, a, la);
  memcpy(dst + la, b, lb + 1);
  return 0;
}

/* mkdir -p of path's components after its first `skip` bytes (the jail
 * root, which exists); the last one too when `last`. */
static int mkdirs(char *path, size_t skip, bool last) {
  for (char *p = path + skip + 1;; p++) {
    if (*p != '/' && *p != '\0') continue;
    if (*p == '\0' && !last) return 0;
    char c = *p;
    *p = '\0';
    int rc = mkdir(path, 0755);
    *p = c;
    if (rc != 0 && errno != EEXIST) return -1;
    if (c == '\0') return 0;
  }
}

/* Mount flags a bind mount must keep when remounted (in a user namespace
 * the kernel refuses to clear them; elsewhere they are simply kept). */
static int kept_flags(const char *src, unsigned long *flags) {
  struct statfs sf;
  if (statfs(src, &sf) != 0) return -1;
  unsigned long f = 0;
  if (sf.f_flags & ST_NODEV) f |= MS_NODEV;
  if (sf.f_flags & ST_NOEXEC) f |= MS_NOEXEC;
  if (sf.f_flags & ST_NOATIME) f |= MS_NOATIME;
  if (sf.f_flags & ST_NODIRATIME) f |= MS_NODIRATIME;
  if (sf.f_flags & ST_RELATIME) f |= MS_RELATIME;
  if (sf.f_flags & ST_RDONLY) f |= MS_RDONLY;
  *flags = f;
  return 0;
}

/* Binds src on dst (with the mounts below it when rec), then remounts it
 * nosuid plus `add`. */
static int bind(const char *src, const char *dst, bool rec,
                unsigned long add) {
  unsigned long keep;
  if (kept_flags(src, &keep) != 0) return -1;
  if (mount(src, dst, NULL, MS_BIND | (rec ? MS_REC : 0), NULL) != 0)
    return -1;
  return mount(NULL, dst, NULL, MS_REMOUNT | MS_BIND | MS_NOSUID | keep | add,
               NULL);
}

/* Puts host path `path` into the jail rooted at root (dst: scratch of cap
 * bytes); 0 also when the host has no such path. */
static int expose(char *dst, size_t cap, const char *root, const char *path,
                  enum how how) {
  struct stat st;
  if (lstat(path, &st) != 0) return errno == ENOENT ? 0 : -1;
  if (join(dst, cap, root, path) != 0) return -1;
  size_t rlen = strlen(root);
  if (how == DIR_OR_LINK && S_ISLNK(st.st_mode)) {
    char target[PATH_MAX];
    ssize_t n = readlink(path, target, sizeof target - 1);
    if (n < 0) return -1;
    target[n] = '\0';
    if (mkdirs(dst, rlen, false) != 0) return -1;
    return symlink(target, dst);
  }
  if (how == RO_FILE || how == DEV) {
    if (stat(path, &st) != 0) return errno == ENOENT ? 0 : -1;
    if (mkdirs(dst, rlen, false) != 0) return -1;
    int fd = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0444);
    if (fd < 0 || close(fd) != 0) return -1;
    /* a read-only mount leaves a device node writable; nodev would not */
    return bind(path, dst, false, MS_RDONLY | MS_NOEXEC);
  }
  if (stat(path, &st) != 0) return errno == ENOENT ? 0 : -1;
  if (!S_ISDIR(st.st_mode)) return 0;
  if (mkdirs(dst, rlen, true) != 0) return -1;
  return bind(path, dst, true, MS_RDONLY | MS_NODEV);
}

/* Every descriptor above 3 close-on-exec: an inherited directory fd would
 * lead out of the jail. */
static int cloexec_fds(void) {
#ifdef SYS_close_range
  if (syscall(SYS_close_range, 4u, ~0u, 4u /* CLOSE_RANGE_CLOEXEC */) == 0)
    return 0;
  if (errno != ENOSYS && errno != EINVAL) return -1;
#endif
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return -1;
  int max = rl.rlim_cur > 65536 ? 65536 : (int)rl.rlim_cur;
  for (int fd = 4; fd < max; fd++) {
    int f = fcntl(fd, F_GETFD);
    if (f >= 0 && !(f & FD_CLOEXEC) && fcntl(fd, F_SETFD, f | FD_CLOEXEC) != 0)
      return -1;
  }
  return 0;
}

#define FAIL(s)                                                               \
  do {                                                                        \
    *step = (s);                                                              \
    return -1;                                                                \
  } while (0)
#define SKIP(s)                                                               \
  do {                                                                        \
    *step = (s);                                                              \
    return 1;                                                                 \
  } while (0)

int kf_harness__jail_enter(const kf_harness_jail *j, int *step) {
  if (geteuid() != 0) {
    errno = EPERM;
    SKIP(J_NOT_ROOT);
  }
  /* the build directory: the cwd, as an absolute path */
  char dir[PATH_MAX];
  if (!getcwd(dir, sizeof dir)) SKIP(J_GETCWD);
  if (!strcmp(dir, "/")) {
    errno = EINVAL;
    FAIL(J_BADDIR);
  }
  if (unshare(CLONE_NEWNS) != 0) SKIP(J_UNSHARE);
  if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) SKIP(J_PRIVATE);
  /* the new root over the build directory (see the top comment) */
  const char *root = dir;
  if (mount("kf-compile-jail", root, "tmpfs", MS_NOSUID | MS_NODEV,
            ROOT_OPTS) != 0)
    SKIP(J_ROOTFS);

  if (cloexec_fds() != 0) FAIL(J_FDS);
  char dst[2 * PATH_MAX + 8];
  for (int i = 0; i < N_HOST; i++)
    if (expose(dst, sizeof dst, root, g_host[i].path, g_host[i].how) != 0)
      FAIL(J_HOST | i);
  for (int i = 0; i < j->n_binds; i++)
    if (expose(dst, sizeof dst, root, j->binds[i], RO_DIR) != 0)
      FAIL(J_EXTRA | i);
  if (join(dst, sizeof dst, root, "/tmp") != 0 || mkdir(dst, 0755) != 0 ||
      mount("kf-compile-tmp", dst, "tmpfs", MS_NOSUID | MS_NODEV, TMP_OPTS) != 0)
    FAIL(J_TMP);
  /* "." is still the build directory underneath the new root; not
   * recursive, which would bring the new root (mounted on it) along */
  if (join(dst, sizeof dst, root, dir) != 0 ||
      mkdirs(dst, strlen(root), true) != 0 ||
      bind(".", dst, false, MS_NODEV) != 0)
    FAIL(J_BUILD);
  if (mount(NULL, root, NULL, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV,
            NULL) != 0)
    FAIL(J_RDONLY);
  if (chdir(root) != 0) FAIL(J_CHDIR);
  if (syscall(SYS_pivot_root, ".", ".") == 0) {
    /* the old root now lies over the new one: detach it */
    if (umount2(".", MNT_DETACH) != 0) FAIL(J_PIVOT);
  } else if (errno != EINVAL || chroot(".") != 0) {
    /* EINVAL: the host root is no mount point (itself in a chroot) */
    FAIL(J_PIVOT);
  }
  if (chdir("/") != 0 || chdir(dir) != 0) FAIL(J_CHDIR);
  return 0;
}
