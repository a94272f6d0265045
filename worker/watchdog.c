/* SPDX-License-Identifier: Apache-2.0 */
/*
 * worker/watchdog.c -- the worker's work directory, the watchdog that
 * cleans it up when the worker dies, and the one way harness children are
 * spawned (watchdog.h says why).
 *
 * The channel to the watchdog is a SOCK_SEQPACKET socket pair, not a
 * pipe: each "+PGID" / "-PGID" is one record whichever work thread sends
 * it, and send(MSG_NOSIGNAL) cannot kill the worker with SIGPIPE should
 * the watchdog be gone.  Its end of file is the worker's death.
 *
 * The lock file (flock, LOCK_EX) is what "in use" means for a work
 * directory: the worker holds it, and the watchdog holds the same open
 * file (fd 3) until it has removed the directory, so the stale-directory
 * sweep of a worker starting meanwhile never races a live one.
 *
 * Harness children are started with fork + execve rather than
 * posix_spawn, because only the child itself can ask for
 * PR_SET_PDEATHSIG.  Between the two it calls only async-signal-safe
 * functions (the worker has threads).  The parent-death signal fires when
 * the spawning *thread* exits: work threads of the libuv pool live as
 * long as the process, so that is the worker's death.
 */
#include "watchdog.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "util.h"

#define PREFIX "kf-worker-"

static int g_sock = -1; /* our end of the channel; set once at start */

/* -------------------------------------------------------------- worker -- */

static const char *tmp_base(void) {
  const char *t = getenv("TMPDIR");
  return t && *t ? t : "/tmp";
}

/* Removes work directories under base whose lock nobody holds. */
static void sweep_stale(const char *base) {
  DIR *d = opendir(base);
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (strncmp(e->d_name, PREFIX, strlen(PREFIX)) != 0) continue;
    char dir[PATH_MAX], lock[PATH_MAX + 8];
    snprintf(dir, sizeof dir, "%s/%s", base, e->d_name);
    snprintf(lock, sizeof lock, "%s/lock", dir);
    /* No lock file: a worker between mkdtemp and creating it; leave it. */
    int fd = open(lock, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) continue;
    if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
      kf_log(KF_LOG_WARN, "removing %s, left by a worker that is gone", dir);
      kf_remove_tree(dir);
    }
    close(fd);
  }
  closedir(d);
}

int kf_watchdog_start(char *dir, size_t dirlen, char *why, size_t whylen) {
  const char *base = tmp_base();
  sweep_stale(base);
  int n = snprintf(dir, dirlen, "%s/" PREFIX "XXXXXX", base);
  if (n < 0 || (size_t)n >= dirlen || !mkdtemp(dir)) {
    snprintf(why, whylen, "mkdtemp %s/" PREFIX "XXXXXX: %s", base,
             strerror(errno));
    return -1;
  }
  char lock[PATH_MAX + 8], exe[PATH_MAX];
  snprintf(lock, sizeof lock, "%s/lock", dir);
  int lk = open(lock, O_CREAT | O_RDWR | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (lk < 0 || flock(lk, LOCK_EX) != 0) {
    snprintf(why, whylen, "lock %s: %s", lock, strerror(errno));
    if (lk >= 0) close(lk);
    kf_remove_tree(dir);
    return -1;
  }
  int sv[2];
  if (kf_self_exe(exe, sizeof exe) != 0 ||
      socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
    snprintf(why, whylen, "watchdog: %s", strerror(errno));
    close(lk);
    kf_remove_tree(dir);
    return -1;
  }
  char *argv[] = {exe, KF_WATCHDOG_ARG, dir, NULL};
  pid_t pid;
  /* fd 0: its end of the channel; fd 3: the lock, held until it is done.
   * Not tracked, and no parent-death signal: it must outlive us. */
  int rc = kf_watchdog_spawn(argv, sv[1], -1, lk, false, &pid, why, whylen);
  close(sv[1]);
  /* The lock stays open (and held) here for the worker's life. */
  if (rc) {
    close(sv[0]);
    close(lk);
    kf_remove_tree(dir);
    return -1;
  }
  g_sock = sv[0];
  kf_log(KF_LOG_INFO, "work directory %s, watchdog pid %d", dir, (int)pid);
  return 0;
}

static void say(char sign, pid_t pgid) {
  if (g_sock < 0 || pgid <= 0) return;
  char line[32];
  int n = snprintf(line, sizeof line, "%c%d", sign, (int)pgid);
  while (send(g_sock, line, (size_t)n, MSG_NOSIGNAL) < 0 && errno == EINTR) {
  }
}

void kf_watchdog_track(pid_t pgid) { say('+', pgid); }
void kf_watchdog_untrack(pid_t pgid) { say('-', pgid); }

/* dup2 that also clears close-on-exec when from == to (dup2 would leave
 * it set).  Async-signal-safe. */
static int move_fd(int from, int to) {
  if (from == to) return fcntl(to, F_SETFD, 0);
  return dup2(from, to) < 0 ? -1 : 0;
}

int kf_watchdog_spawn(char *const argv[], int fd0, int fd12, int fd3,
                      bool harness, pid_t *pid, char *why, size_t whylen) {
  extern char **environ;
  int ep[2];
  if (pipe2(ep, O_CLOEXEC) != 0) {
    snprintf(why, whylen, "pipe: %s", strerror(errno));
    return -1;
  }
  pid_t parent = getpid();
  pid_t c = fork();
  if (c < 0) {
    snprintf(why, whylen, "fork: %s", strerror(errno));
    close(ep[0]);
    close(ep[1]);
    return -1;
  }
  if (c == 0) {
    /* Child: async-signal-safe calls only until execve. */
    int err = 0;
    if (harness) {
      if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) err = errno;
      /* The worker may have died before the prctl: then nobody would
       * ever send the signal. */
      if (!err && getppid() != parent) _exit(127);
    }
    if (!err && setpgid(0, 0) != 0) err = errno;
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    static const int sigs[] = {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGCHLD};
    for (size_t i = 0; !err && i < sizeof sigs / sizeof sigs[0]; i++)
      if (sigaction(sigs[i], &dfl, NULL) != 0) err = errno;
    sigset_t none;
    sigemptyset(&none);
    if (!err && sigprocmask(SIG_SETMASK, &none, NULL) != 0) err = errno;
    if (!err && fd0 < 0) {
      int z = open("/dev/null", O_RDONLY);
      if (z < 0 || move_fd(z, 0) != 0) err = errno;
    } else if (!err && move_fd(fd0, 0) != 0) {
      err = errno;
    }
    if (!err && fd12 >= 0 && (move_fd(fd12, 1) != 0 || move_fd(fd12, 2) != 0))
      err = errno;
    /* fd 3 last: whatever sat on 3 was copied above already. */
    if (!err && fd3 >= 0 && move_fd(fd3, 3) != 0) err = errno;
    if (!err) {
      execve(argv[0], argv, environ);
      err = errno;
    }
    while (write(ep[1], &err, sizeof err) < 0 && errno == EINTR) {
    }
    _exit(127);
  }
  close(ep[1]);
  /* Also from this side, so the group exists before anyone signals it
   * (fails harmlessly once the child has exec'd). */
  (void)setpgid(c, c);
  int err = 0;
  ssize_t r;
  while ((r = read(ep[0], &err, sizeof err)) < 0 && errno == EINTR) {
  }
  close(ep[0]);
  if (r > 0) {
    snprintf(why, whylen, "cannot start %s: %s", argv[0], strerror(err));
    while (waitpid(c, NULL, 0) < 0 && errno == EINTR) {
    }
    return -1;
  }
  if (harness) kf_watchdog_track(c);
  *pid = c;
  return 0;
}

/* ------------------------------------------------------------ watchdog -- */

static void nap_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

int kf_watchdog_main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "kf-worker: %s is for kf-worker's own use\n",
            KF_WATCHDOG_ARG);
    return 2;
  }
  const char *dir = argv[2];
  signal(SIGPIPE, SIG_IGN);
  size_t n = 0, cap = 0;
  pid_t *groups = NULL;
  for (;;) {
    char rec[32];
    ssize_t r = read(0, rec, sizeof rec - 1);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break; /* the worker is gone */
    rec[r] = '\0';
    long g = strtol(rec + 1, NULL, 10);
    if (g <= 0) continue;
    if (rec[0] == '+') {
      if (n == cap) {
        size_t nc = cap ? cap * 2 : 16;
        pid_t *ng = realloc(groups, nc * sizeof *ng);
        if (!ng) continue; /* its parent-death signal still stands */
        groups = ng;
        cap = nc;
      }
      groups[n++] = (pid_t)g;
    } else if (rec[0] == '-') {
      for (size_t i = 0; i < n; i++)
        if (groups[i] == (pid_t)g) {
          groups[i] = groups[--n];
          break;
        }
    }
  }
  /* The worker died or exited: nothing it started may outlive it. */
  for (size_t i = 0; i < n; i++) kill(-groups[i], SIGKILL);
  for (int t = 0; t < 100; t++) { /* until they are gone, at most ~10 s */
    bool alive = false;
    for (size_t i = 0; i < n; i++)
      if (kill(-groups[i], 0) == 0) alive = true;
    if (!alive) break;
    nap_ms(100);
  }
  free(groups);
  /* A dying process may still create a file: try again until it is gone. */
  struct stat st;
  for (int t = 0; t < 100 && lstat(dir, &st) == 0; t++) {
    kf_remove_tree(dir);
    if (lstat(dir, &st) != 0) break;
    nap_ms(100);
  }
  return 0;
}
