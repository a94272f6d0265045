/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/test-coord-fixture.h -- real kf-coordinator processes for one
 * test file, on the private database of test-store-fixture.h.  Included by
 * tests/unit/test-coord-*.c only.
 *
 * tcoord_spawn starts $KF_BIN_DIR/kf-coordinator on tdb.conninfo with its
 * bootstrap credential in the environment (never argv), stderr to
 * DIR/TAG.log, and waits for its port file.  The waits are bounded
 * generously (ASan start-up beside a loaded CI machine is slow) and poll
 * for the condition: nothing here asserts speed.
 */
#ifndef KF_TEST_COORD_FIXTURE_H
#define KF_TEST_COORD_FIXTURE_H

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#include "rpc.h"
#include "test-store-fixture.h"

#define TCOORD_FN static __attribute__((unused))

typedef struct {
  pid_t pid; /* 0: not running (reaped) */
  char target[64];
  char log[256];
  char port_file[256];
} kf_tcoord;

TCOORD_FN void tcoord_sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* The wait status if c has exited (then c->pid is 0), else -1. */
TCOORD_FN int tcoord_reap(kf_tcoord *c) {
  int st;
  if (c->pid > 0 && waitpid(c->pid, &st, WNOHANG) == c->pid) {
    c->pid = 0;
    return st;
  }
  return -1;
}

/* Starts a coordinator listening on `listen` with the flags in extra
 * (NULL-terminated, after the fixture's: a later flag overrides); token
 * is its bootstrap credential.  0 once it wrote its port, -1 (with the
 * reason on stderr) if it exited first or wrote none in 60 s. */
TCOORD_FN int tcoord_spawn(kf_tcoord *c, const char *dir, const char *tag,
                           const char *token, const char *listen,
                           const char *const *extra) {
  const char *bin = getenv("KF_BIN_DIR");
  if (!bin || !*bin) {
    fprintf(stderr, "KF_BIN_DIR is not set\n");
    return -1;
  }
  char exe[1024];
  snprintf(exe, sizeof exe, "%s/kf-coordinator", bin);
  snprintf(c->port_file, sizeof c->port_file, "%s/%s.port", dir, tag);
  snprintf(c->log, sizeof c->log, "%s/%s.log", dir, tag);
  unlink(c->port_file);
  char *argv[40] = {exe, "--db", tdb.conninfo, "--listen", (char *)listen,
                    "--port-file", c->port_file, "--log-level", "info"};
  int n = 9;
  for (size_t i = 0; extra && extra[i]; i++) {
    if (n >= 39) {
      fprintf(stderr, "tcoord_spawn: too many flags\n");
      return -1;
    }
    argv[n++] = (char *)extra[i];
  }
  argv[n] = NULL;
  pid_t pid = fork();
  if (pid < 0) {
    perror("fork");
    return -1;
  }
  if (pid == 0) {
    int fd = open(c->log, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) dup2(fd, 2);
    setenv("KF_TOKEN", token, 1);
    unsetenv("KF_TOKEN_FILE");
    execv(exe, argv);
    fprintf(stderr, "exec %s failed\n", exe);
    _exit(127);
  }
  c->pid = pid;
  for (int i = 0; i < 600; i++) {
    FILE *f = fopen(c->port_file, "r");
    int port = 0;
    if (f) {
      if (fscanf(f, "%d", &port) != 1) port = 0;
      fclose(f);
    }
    if (port > 0) {
      snprintf(c->target, sizeof c->target, "127.0.0.1:%d", port);
      return 0;
    }
    int st = tcoord_reap(c);
    if (st != -1) {
      fprintf(stderr, "kf-coordinator %s exited (status 0x%x) before "
              "listening; its log: %s\n", tag, st, c->log);
      return -1;
    }
    tcoord_sleep_ms(100);
  }
  fprintf(stderr, "kf-coordinator %s wrote no port file in 60 s\n", tag);
  return -1;
}

/* SIGTERM, and the coordinator must exit 0 (under ASan/LSan: no leak)
 * within 30 s. */
TCOORD_FN void tcoord_stop(kf_tcoord *c) {
  if (c->pid <= 0) return;
  assert_int_equal(kill(c->pid, SIGTERM), 0);
  for (int i = 0; i < 300; i++) {
    int st = tcoord_reap(c);
    if (st != -1) {
      if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        fail_msg("kf-coordinator exited with status 0x%x after SIGTERM; "
                 "its log: %s", st, c->log);
      return;
    }
    tcoord_sleep_ms(100);
  }
  fail_msg("kf-coordinator still running 30 s after SIGTERM");
}

/* For teardown after a failed test: no clean stop expected. */
TCOORD_FN void tcoord_kill(kf_tcoord *c) {
  if (c->pid <= 0) return;
  kill(c->pid, SIGKILL);
  waitpid(c->pid, NULL, 0);
  c->pid = 0;
}

/* The common shape of a coordinator test file: a private database, one
 * coordinator on it (bootstrap credential token, flags extra) and a
 * blocking client with that credential; logs in a temp dir. */
typedef struct {
  char dir[64];
  kf_tcoord co;
  kf_rpc_client *c;
} kf_tcoord_group;

/* For a cmocka group setup: 0, or -1 with the reason on stderr. */
TCOORD_FN int tcoord_group_setup(kf_tcoord_group *g, const char *tag,
                                 const char *token,
                                 const char *const *extra) {
  if (tdb_group_setup(tag)) return -1;
  snprintf(g->dir, sizeof g->dir, "/tmp/kf-%.20s-XXXXXX", tag);
  if (!mkdtemp(g->dir)) {
    perror("mkdtemp");
    return -1;
  }
  if (tcoord_spawn(&g->co, g->dir, "coord", token, "127.0.0.1:0", extra))
    return -1;
  char err[512];
  if (kf_rpc_client_open(NULL, g->co.target, token, 1u << 20, &g->c, err,
                         sizeof err)) {
    fprintf(stderr, "rpc client: %s\n", err);
    return -1;
  }
  return 0;
}

/* For the group teardown: the client closed, the coordinator killed if a
 * failed test left it running, the database dropped, the dir removed. */
TCOORD_FN void tcoord_group_teardown(kf_tcoord_group *g) {
  kf_rpc_client_close(g->c);
  g->c = NULL;
  tcoord_kill(&g->co);
  tdb_group_teardown(NULL);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", g->dir);
  if (g->dir[0] && system(cmd) != 0)
    fprintf(stderr, "could not remove %s\n", g->dir);
}

#endif
