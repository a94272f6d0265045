/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cli/cli_local.c -- a whole local cluster as children of the kf process:
 * the private PostgreSQL (db/pglocal.h), one kf-coordinator on a free
 * loopback port with a fresh token, and N kf-workers.  Used by `kf run`
 * and `kf cluster`.
 *
 * Children are started with fork+exec (no threads exist yet at that
 * point: the rpc client is opened afterwards), each in its own process
 * group so that a ^C typed at the terminal reaches kf alone, and with
 * PR_SET_PDEATHSIG so that they get SIGTERM if kf itself is killed.  kf
 * then stops them in order: workers first (they finish or hand back their
 * leases), the coordinator, PostgreSQL last.  Their stderr goes to
 * DIR/<name>.log.
 *
 * What this does not do: supervise.  A child that dies is noticed only by
 * what stops working (the caller's rpc calls).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "cli_internal.h"
#include "err.h"
#include "pglocal.h"
#include "store.h"
#include "token.h"
#include "util.h"

extern char **environ;

void kf_cli__bin_dir(char *out, size_t len) {
  if (kf_self_dir(out, len) != 0) kf_strlcpy(out, ".", len);
}

int kf_cli__count_gpus(void) {
  DIR *d = opendir("/dev");
  if (!d) return 0;
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    const char *p = e->d_name;
    if (strncmp(p, "nvidia", 6) || !p[6]) continue;
    p += 6;
    while (*p >= '0' && *p <= '9') p++;
    if (!*p) n++;
  }
  closedir(d);
  return n;
}

/* true when environment entry e ("NAME=value") sets one of the names
 * that extra ("NAME=value" entries, NULL-terminated) sets, or a
 * credential variable: a child gets only the credential we hand it. */
static bool env_replaced(const char *e, const char *const *extra) {
  if (!strncmp(e, "KF_TOKEN=", 9) || !strncmp(e, "KF_TOKEN_FILE=", 14))
    return true;
  for (size_t k = 0; extra && extra[k]; k++) {
    size_t keylen = (size_t)(strchr(extra[k], '=') - extra[k]) + 1;
    if (!strncmp(e, extra[k], keylen)) return true;
  }
  return false;
}

/* fork+exec argv[0] with stderr (and stdout) appended to log and the
 * environment variables of extra ("NAME=value", NULL-terminated; may be
 * NULL) set.  Credentials travel this way, never in argv, which any user
 * can read in /proc/PID/cmdline.  Returns the pid or -1 with the reason
 * printed. */
static pid_t spawn(char *const argv[], const char *log,
                   const char *const *extra, const char *cmd) {
  /* Everything the child needs is prepared before fork: after it, only
   * async-signal-safe calls. */
  size_t n = 0, nx = 0;
  while (environ[n]) n++;
  while (extra && extra[nx]) nx++;
  char **envp = calloc(n + nx + 1, sizeof *envp);
  if (!envp) return -1;
  size_t m = 0;
  for (size_t i = 0; i < n; i++)
    if (!env_replaced(environ[i], extra)) envp[m++] = environ[i];
  for (size_t k = 0; k < nx; k++) envp[m++] = (char *)extra[k];
  int logfd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (logfd < 0) {
    fprintf(stderr, "%s: %s: %s\n", cmd, log, strerror(errno));
    free(envp);
    return -1;
  }
  int pipefd[2]; /* exec failure comes back as an errno on this pipe */
  if (pipe2(pipefd, O_CLOEXEC)) {
    close(logfd);
    free(envp);
    return -1;
  }
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(127);
    int devnull = open("/dev/null", O_RDWR);
    if (devnull >= 0) dup2(devnull, 0);
    dup2(logfd, 1);
    dup2(logfd, 2);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGPIPE, SIG_DFL);
    execve(argv[0], argv, envp);
    int e = errno;
    ssize_t w = write(pipefd[1], &e, sizeof e);
    (void)w;
    _exit(127);
  }
  int saved = errno;
  close(pipefd[1]);
  close(logfd);
  free(envp);
  if (pid < 0) {
    close(pipefd[0]);
    fprintf(stderr, "%s: fork: %s\n", cmd, strerror(saved));
    return -1;
  }
  int e = 0;
  ssize_t r;
  do r = read(pipefd[0], &e, sizeof e); while (r < 0 && errno == EINTR);
  close(pipefd[0]);
  if (r == (ssize_t)sizeof e) {
    waitpid(pid, NULL, 0);
    fprintf(stderr, "%s: cannot start %s: %s\n", cmd, argv[0], strerror(e));
    return -1;
  }
  return pid;
}

static void stop_child(pid_t pid, const char *what, const char *cmd) {
  if (pid <= 0) return;
  kill(pid, SIGTERM);
  for (int i = 0; i < 100; i++) { /* 10 s grace, then SIGKILL */
    int st;
    pid_t r = waitpid(pid, &st, WNOHANG);
    if (r == pid || (r < 0 && errno == ECHILD)) {
      /* Dying of the SIGTERM we sent is a clean stop too. */
      if (r == pid &&
          ((WIFSIGNALED(st) && WTERMSIG(st) != SIGTERM) ||
           (WIFEXITED(st) && WEXITSTATUS(st) != 0)))
        fprintf(stderr, "%s: %s exited with %s %d\n", cmd, what,
                WIFSIGNALED(st) ? "signal" : "status",
                WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
      return;
    }
    usleep(100000);
  }
  fprintf(stderr, "%s: %s ignored SIGTERM for 10 s; killing it\n", cmd, what);
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
}

int kf_cli__mkdirs(const char *path) {
  char buf[PATH_MAX];
  kf_strlcpy(buf, path, sizeof buf);
  for (char *p = buf + 1; *p; p++) {
    if (*p != '/') continue;
    *p = '\0';
    if (mkdir(buf, 0755) && errno != EEXIST) return -1;
    *p = '/';
  }
  if (mkdir(buf, 0755) && errno != EEXIST) return -1;
  return 0;
}

/* The workers' own credential (role worker, named "kf run"), stored
 * before the coordinator starts so it is valid from the coordinator's
 * first call: the schema is migrated here first (the coordinator's own
 * migration then finds nothing to do).  0 or an exit code. */
static int make_worker_token(kf_cli__local *l, const char *cmd) {
  char err[512], hash[65];
  kf_store *s = NULL;
  int64_t id;
  if (kf_token_generate(l->worker_token, sizeof l->worker_token) ||
      kf_token_hash_hex(l->worker_token, strlen(l->worker_token), hash)) {
    fprintf(stderr, "%s: cannot make a worker credential\n", cmd);
    return KF_EXIT_FAIL;
  }
  int rc = kf_store_open(l->conninfo, &s, err, sizeof err);
  if (!rc && (rc = kf_store_migrate(s)) == 0)
    rc = kf_store_token_create(s, "worker", "kf run", hash, &id);
  if (rc) {
    fprintf(stderr, "%s: storing the worker credential: %s\n", cmd,
            s ? kf_store_errmsg(s) : err);
    kf_store_close(s);
    return KF_EXIT_UNAVAIL;
  }
  kf_store_close(s);
  return 0;
}

int kf_cli__local_start(kf_cli__local *l, const kf_cli__local_opts *o) {
  memset(l, 0, sizeof *l);
  l->quiet = o->quiet;
  const char *cmd = o->cmd;
  kf_strlcpy(l->dir, o->dir, sizeof l->dir);
  if (kf_cli__mkdirs(l->dir)) {
    fprintf(stderr, "%s: cannot create %s: %s\n", cmd, l->dir,
            strerror(errno));
    return KF_EXIT_USAGE;
  }
  snprintf(l->pgdir, sizeof l->pgdir, "%s/pg", l->dir);
  char err[2048];
  if (kf_pglocal_start(l->pgdir, l->conninfo, sizeof l->conninfo, err,
                       sizeof err)) {
    fprintf(stderr, "%s: PostgreSQL in %s: %s\n", cmd, l->pgdir, err);
    return KF_EXIT_UNAVAIL;
  }
  l->pg_up = true;
  if (!l->quiet) fprintf(stderr, "  postgresql  up (socket %s/sock)\n", l->pgdir);

  char bin[PATH_MAX], coord_bin[PATH_MAX + 32], worker_bin[PATH_MAX + 32];
  char portfile[600], log[600];
  kf_cli__bin_dir(bin, sizeof bin);
  snprintf(coord_bin, sizeof coord_bin, "%s/kf-coordinator", bin);
  snprintf(worker_bin, sizeof worker_bin, "%s/kf-worker", bin);
  snprintf(portfile, sizeof portfile, "%s/coordinator.port", l->dir);
  snprintf(log, sizeof log, "%s/coordinator.log", l->dir);
  unlink(portfile);
  if (kf_token_generate(l->token, sizeof l->token)) {
    fprintf(stderr, "%s: no randomness for a token\n", cmd);
    kf_cli__local_stop(l);
    return KF_EXIT_FAIL;
  }
  int mrc = make_worker_token(l, cmd);
  if (mrc) {
    kf_cli__local_stop(l);
    return mrc;
  }
  char coord_env[96], worker_env[96];
  snprintf(coord_env, sizeof coord_env, "KF_TOKEN=%s", l->token);
  snprintf(worker_env, sizeof worker_env, "KF_TOKEN=%s", l->worker_token);
  const char *cenv[] = {coord_env, NULL};
  char *cargv[] = {coord_bin, "--db", l->conninfo, "--listen", "127.0.0.1:0",
                   "--port-file", portfile, NULL};
  l->coord = spawn(cargv, log, cenv, cmd);
  if (l->coord < 0) {
    l->coord = 0;
    kf_cli__local_stop(l);
    return KF_EXIT_FAIL;
  }
  int port = 0;
  for (int i = 0; i < 600 && !port; i++) { /* 60 s */
    if (o->interrupted && *o->interrupted) break;
    FILE *f = fopen(portfile, "r");
    if (f) {
      if (fscanf(f, "%d", &port) != 1) port = 0;
      fclose(f);
    }
    if (port) break;
    if (waitpid(l->coord, NULL, WNOHANG) == l->coord) {
      fprintf(stderr, "%s: kf-coordinator exited at start; see %s\n", cmd,
              log);
      l->coord = 0;
      kf_cli__local_stop(l);
      return KF_EXIT_UNAVAIL;
    }
    usleep(100000);
  }
  if (!port) {
    if (!(o->interrupted && *o->interrupted))
      fprintf(stderr, "%s: kf-coordinator did not start; see %s\n", cmd, log);
    kf_cli__local_stop(l);
    return o->interrupted && *o->interrupted ? KF_EXIT_INTERRUPT
                                             : KF_EXIT_UNAVAIL;
  }
  snprintf(l->target, sizeof l->target, "127.0.0.1:%d", port);
  if (!l->quiet)
    fprintf(stderr, "  coordinator up (%s, pid %d)\n", l->target, (int)l->coord);

  int nw = o->workers < 1 ? 1 : o->workers;
  if (nw > KF_CLI__MAX_WORKERS) nw = KF_CLI__MAX_WORKERS;
  for (int i = 0; i < nw; i++) {
    char name[80], wlog[600], slots[16], env[128];
    snprintf(name, sizeof name, "%s-%d",
             o->worker_prefix ? o->worker_prefix : "worker", i + 1);
    snprintf(wlog, sizeof wlog, "%s/%s.log", l->dir, name);
    snprintf(slots, sizeof slots, "%d", o->slots);
    if (o->gpu_ids && o->n_gpu_ids > 0)
      snprintf(env, sizeof env, "CUDA_VISIBLE_DEVICES=%s",
               o->gpu_ids[i % o->n_gpu_ids]);
    else
      snprintf(env, sizeof env, "CUDA_VISIBLE_DEVICES=%d", i);
    /* with CUDA_VISIBLE_DEVICES=i each worker sees its one GPU as 0 */
    char *wargv[12] = {worker_bin, "--coordinator", l->target,
                       "--name", name, "--device",
                       o->cuda_per_device ? "cuda:0" : "cpu"};
    int wa = 7;
    if (o->device_class && !o->cuda_per_device) {
      wargv[wa++] = "--device-class";
      wargv[wa++] = (char *)o->device_class;
    }
    if (o->slots > 0) {
      wargv[wa++] = "--slots";
      wargv[wa++] = slots;
    }
    wargv[wa] = NULL;
    const char *wenv[] = {worker_env, o->cuda_per_device ? env : NULL, NULL};
    pid_t pid = spawn(wargv, wlog, wenv, cmd);
    if (pid < 0) {
      kf_cli__local_stop(l);
      return KF_EXIT_FAIL;
    }
    l->workers[l->n_workers++] = pid;
    if (!l->quiet)
      fprintf(stderr, "  %-11s up (pid %d)\n", name, (int)pid);
  }
  return 0;
}

void kf_cli__local_stop(kf_cli__local *l) {
  const char *cmd = "kf";
  for (int i = 0; i < l->n_workers; i++) {
    char what[32];
    snprintf(what, sizeof what, "worker-%d", i + 1);
    stop_child(l->workers[i], what, cmd);
    l->workers[i] = 0;
  }
  l->n_workers = 0;
  stop_child(l->coord, "kf-coordinator", cmd);
  l->coord = 0;
  if (l->pg_up) {
    char err[2048];
    if (kf_pglocal_stop(l->pgdir, "fast", err, sizeof err))
      fprintf(stderr, "kf: stopping PostgreSQL: %s\n", err);
    l->pg_up = false;
  }
}
