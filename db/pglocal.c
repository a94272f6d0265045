/* SPDX-License-Identifier: Apache-2.0 */
/*
 * db/pglocal.c -- start and stop a private PostgreSQL server.
 *
 * Runs Debian's initdb and pg_ctl in child processes (fork + exec, waited
 * for here).  When the caller is root the child drops to KF_PG_USER before
 * exec, because the server refuses to run as root; the directory is chowned
 * to that user first.  The server listens only on a unix socket in
 * dir/sock: a private server is never reachable over the network.
 *
 * Deliberately not here: anything about the schema (db/store.c migrates).
 */
#include "pglocal.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "err.h"
#include "util.h"

/* sun_path is 108 bytes; PostgreSQL appends "/.s.PGSQL.5432". */
#define PG_SOCK_MAX 90

static int find_bindir(char *out, size_t len, char *err, size_t errlen) {
  const char *env = getenv("KF_PG_BINDIR");
  const char *cands[] = {env, "/usr/lib/postgresql/15/bin",
                         "/usr/lib/postgresql/16/bin",
                         "/usr/lib/postgresql/17/bin"};
  for (size_t i = 0; i < sizeof cands / sizeof *cands; i++) {
    if (!cands[i] || !*cands[i]) continue;
    char p[512];
    snprintf(p, sizeof p, "%s/pg_ctl", cands[i]);
    if (access(p, X_OK) == 0) {
      kf_strlcpy(out, cands[i], len);
      return 0;
    }
  }
  return kf_seterr(KF_ENOTFOUND, err, errlen,
                   "no PostgreSQL server binaries (pg_ctl) found in "
                   "$KF_PG_BINDIR or /usr/lib/postgresql/15/bin; run "
                   "scripts/setup or install postgresql-15");
}

/* Runs argv as `user` (NULL: ourselves), stdout+stderr to logpath (or
 * /dev/null); returns the exit status, or -1 with err set. */
static int run_as(const struct passwd *pw, char *const argv[],
                  const char *logpath, char *err, size_t errlen) {
  pid_t pid = fork();
  if (pid < 0) {
    kf_seterr(KF_ESPAWN, err, errlen, "fork: %s", strerror(errno));
    return -1;
  }
  if (pid == 0) {
    int fd = open(logpath ? logpath : "/dev/null",
                  O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
    }
    int nul = open("/dev/null", O_RDONLY);
    if (nul >= 0) dup2(nul, 0);
    if (pw) {
      if (setgroups(0, NULL) != 0 || setgid(pw->pw_gid) != 0 ||
          setuid(pw->pw_uid) != 0) {
        dprintf(2, "kf: cannot become %s: %s\n", pw->pw_name,
                strerror(errno));
        _exit(126);
      }
    }
    /* pg_ctl daemonizes the server; keep it out of our process group so a
     * ^C aimed at `kf` is handled by kf, which then stops it cleanly. */
    setsid();
    execv(argv[0], argv);
    dprintf(2, "kf: exec %s: %s\n", argv[0], strerror(errno));
    _exit(127);
  }
  int st;
  while (waitpid(pid, &st, 0) < 0) {
    if (errno != EINTR) {
      kf_seterr(KF_ESPAWN, err, errlen, "waitpid: %s", strerror(errno));
      return -1;
    }
  }
  if (WIFEXITED(st)) return WEXITSTATUS(st);
  return 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

static int chown_tree(const char *path, const struct passwd *pw) {
  if (!pw) return 0;
  return chown(path, pw->pw_uid, pw->pw_gid);
}

static int prepare(const char *dir, const struct passwd **pw_out,
                   char *bindir, size_t bindir_len, char *err,
                   size_t errlen) {
  int rc = find_bindir(bindir, bindir_len, err, errlen);
  if (rc) return rc;
  if (strlen(dir) + 5 > PG_SOCK_MAX)
    return kf_seterr(KF_EINVAL, err, errlen,
                     "%s: path too long for a unix socket (%d bytes max); "
                     "choose a shorter data directory",
                     dir, PG_SOCK_MAX - 5);
  if (dir[0] != '/')
    return kf_seterr(KF_EINVAL, err, errlen,
                     "%s: data directory must be an absolute path", dir);
  /* The socket directory reaches the server through pg_ctl -o (split at
   * blanks), unix_socket_directories (a comma-separated list) and a libpq
   * conninfo (blanks, quotes and backslashes are syntax): a path holding
   * one of these starts a server on the wrong directory or none
   * ("could not create lock file /tmp/d0/.s.PGSQL.5432.lock" for a data
   * directory /tmp/d0,1). */
  for (const char *c = dir; *c; c++)
    if (*c == ',' || *c == '\'' || *c == '"' || *c == '\\' ||
        (unsigned char)*c <= ' ' || *c == 0x7f)
      return kf_seterr(KF_EINVAL, err, errlen,
                       "%s: data directory path holds %s%c%s at byte %zu, "
                       "which PostgreSQL's socket settings cannot take "
                       "(commas, quotes, backslashes, blanks and control "
                       "characters); choose another path",
                       dir, (unsigned char)*c > ' ' ? "'" : "",
                       (unsigned char)*c > ' ' ? *c : '?',
                       (unsigned char)*c > ' ' ? "'" : " (a blank or control "
                       "character)", (size_t)(c - dir));
  *pw_out = NULL;
  if (geteuid() == 0) {
    const char *user = kf_getenv_or("KF_PG_USER", "postgres");
    const struct passwd *pw = getpwnam(user);
    if (!pw)
      return kf_seterr(KF_ENOTFOUND, err, errlen,
                       "running as root, and PostgreSQL refuses root: no "
                       "user '%s' to run it as (create one with `useradd "
                       "-M -r %s`, or set KF_PG_USER)",
                       user, user);
    *pw_out = pw;
  }
  char sub[600];
  if (mkdir(dir, 0700) != 0 && errno != EEXIST)
    return kf_seterr(KF_EIO, err, errlen, "mkdir %s: %s", dir,
                     strerror(errno));
  snprintf(sub, sizeof sub, "%s/sock", dir);
  if (mkdir(sub, 0700) != 0 && errno != EEXIST)
    return kf_seterr(KF_EIO, err, errlen, "mkdir %s: %s", sub,
                     strerror(errno));
  if (chown_tree(dir, *pw_out) != 0 || chown_tree(sub, *pw_out) != 0)
    return kf_seterr(KF_EIO, err, errlen, "chown %s: %s", dir,
                     strerror(errno));
  if (*pw_out) {
    /* The unprivileged user must be able to reach dir: every parent needs
     * search permission for it.  Say so plainly instead of letting initdb
     * fail with "permission denied" on a path the user never typed. */
    char probe[600];
    snprintf(probe, sizeof probe, "%s", dir);
    for (char *slash = strrchr(probe, '/'); slash && slash != probe;
         slash = strrchr(probe, '/')) {
      *slash = '\0';
      struct stat stp;
      if (stat(probe, &stp) == 0 && !(stp.st_mode & S_IXOTH) &&
          stp.st_uid != (*pw_out)->pw_uid)
        return kf_seterr(KF_EPERM, err, errlen,
                         "%s: PostgreSQL runs as '%s', which cannot enter "
                         "%s (mode %o); choose a data directory outside it",
                         dir, (*pw_out)->pw_name, probe,
                         (unsigned)(stp.st_mode & 0777));
    }
  }
  return 0;
}

static void log_tail(const char *logpath, char *err, size_t errlen) {
  size_t used = strlen(err);
  char *text = NULL;
  size_t len = 0;
  if (kf_read_file(logpath, 1 << 20, &text, &len, NULL, 0) != 0) return;
  const char *tail = len > 600 ? text + len - 600 : text;
  snprintf(err + used, errlen - used, "; server log %s ends: %s", logpath,
           tail);
  free(text);
}

int kf_pglocal_conninfo(const char *dir, char *conninfo, size_t len,
                        char *err, size_t errlen) {
  int n = snprintf(conninfo, len,
                   "host=%s/sock port=5432 dbname=postgres user=postgres "
                   "connect_timeout=5",
                   dir);
  if (n < 0 || (size_t)n >= len)
    return kf_seterr(KF_EINVAL, err, errlen, "conninfo too long");
  return 0;
}

int kf_pglocal_start(const char *dir, char *conninfo, size_t conninfo_len,
                     char *err, size_t errlen) {
  const struct passwd *pw;
  char bindir[512];
  int rc = prepare(dir, &pw, bindir, sizeof bindir, err, errlen);
  if (rc) return rc;

  char data[600], logpath[600], ver[640], prog[600], sock[600];
  snprintf(data, sizeof data, "%s/data", dir);
  snprintf(logpath, sizeof logpath, "%s/log", dir);
  snprintf(ver, sizeof ver, "%s/PG_VERSION", data);
  snprintf(sock, sizeof sock, "%s/sock", dir);

  if (access(ver, F_OK) != 0) {
    snprintf(prog, sizeof prog, "%s/initdb", bindir);
    char *argv[] = {prog,          "-D",          data,     "-U",
                    "postgres",    "--auth=trust", "-E",     "UTF8",
                    "--locale=C", NULL};
    int st = run_as(pw, argv, NULL, err, errlen);
    if (st < 0) return KF_ESPAWN;
    if (st != 0)
      return kf_seterr(KF_EIO, err, errlen,
                       "initdb -D %s failed (exit %d); is the directory "
                       "empty and writable by the server user?",
                       data, st);
  }

  /* Already running?  pg_ctl status exits 0 then. */
  snprintf(prog, sizeof prog, "%s/pg_ctl", bindir);
  {
    char *argv[] = {prog, "-D", data, "status", NULL};
    int st = run_as(pw, argv, NULL, err, errlen);
    if (st == 0) return kf_pglocal_conninfo(dir, conninfo, conninfo_len, err,
                                            errlen);
  }
  char opts[900];
  const char *extra = kf_getenv_or("KF_PG_OPTIONS", "");
  snprintf(opts, sizeof opts,
           "-k %s -c listen_addresses='' -c max_connections=100 -c jit=off %s", sock,
           extra);
  char *argv[] = {prog, "-D", data, "-l", logpath, "-o", opts,
                  "-w", "-t", "60", "start", NULL};
  int st = run_as(pw, argv, NULL, err, errlen);
  if (st < 0) return KF_ESPAWN;
  if (st != 0) {
    kf_seterr(KF_EUNAVAIL, err, errlen, "pg_ctl start -D %s failed (exit %d)",
              data, st);
    log_tail(logpath, err, errlen);
    return KF_EUNAVAIL;
  }
  return kf_pglocal_conninfo(dir, conninfo, conninfo_len, err, errlen);
}

int kf_pglocal_stop(const char *dir, const char *mode, char *err,
                    size_t errlen) {
  if (strcmp(mode, "fast") != 0 && strcmp(mode, "immediate") != 0 &&
      strcmp(mode, "smart") != 0)
    return kf_seterr(KF_EINVAL, err, errlen,
                     "stop mode '%s': expected fast, immediate or smart",
                     mode);
  const struct passwd *pw;
  char bindir[512];
  int rc = prepare(dir, &pw, bindir, sizeof bindir, err, errlen);
  if (rc) return rc;
  char data[600], prog[600], pid[640];
  snprintf(data, sizeof data, "%s/data", dir);
  snprintf(pid, sizeof pid, "%s/postmaster.pid", data);
  if (access(pid, F_OK) != 0) return 0; /* not running */
  snprintf(prog, sizeof prog, "%s/pg_ctl", bindir);
  char *argv[] = {prog, "-D", data, "-m", (char *)mode,
                  "-w", "-t", "60", "stop", NULL};
  int st = run_as(pw, argv, NULL, err, errlen);
  if (st < 0) return KF_ESPAWN;
  if (st != 0 && access(pid, F_OK) == 0)
    return kf_seterr(KF_EIO, err, errlen, "pg_ctl stop -D %s failed (exit %d)",
                     data, st);
  return 0;
}
