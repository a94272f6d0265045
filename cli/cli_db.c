/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cli/cli_db.c -- `kf db start|stop|url DIR`: the private PostgreSQL that
 * `kf run` and the tests use, exposed so a person (or a test) can start,
 * crash and restart it by hand.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "err.h"
#include "pglocal.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: kf db start DIR      initialize (first time) and start\n"
          "       kf db stop DIR [MODE] stop; MODE fast (default) or "
          "immediate\n"
          "       kf db url DIR        print the libpq conninfo\n"
          "The server listens on a unix socket in DIR/sock only.  As root it "
          "runs as\n$KF_PG_USER (default postgres).\n");
}

int kf_cli_db(int argc, char **argv) {
  if (argc < 2 || !strcmp(argv[0], "--help") || !strcmp(argv[0], "-h")) {
    usage(argc >= 1 && argv[0][0] == '-' ? stdout : stderr);
    return argc >= 1 && argv[0][0] == '-' ? KF_EXIT_OK : KF_EXIT_USAGE;
  }
  char err[2048] = "", conninfo[1024];
  int rc;
  if (!strcmp(argv[0], "start")) {
    rc = kf_pglocal_start(argv[1], conninfo, sizeof conninfo, err, sizeof err);
    if (rc == 0) printf("%s\n", conninfo);
  } else if (!strcmp(argv[0], "stop")) {
    rc = kf_pglocal_stop(argv[1], argc > 2 ? argv[2] : "fast", err,
                         sizeof err);
  } else if (!strcmp(argv[0], "url")) {
    rc = kf_pglocal_conninfo(argv[1], conninfo, sizeof conninfo, err,
                             sizeof err);
    if (rc == 0) printf("%s\n", conninfo);
  } else {
    fprintf(stderr, "kf db: unknown action '%s'\n", argv[0]);
    usage(stderr);
    return KF_EXIT_USAGE;
  }
  if (rc) {
    fprintf(stderr, "kf db %s: %s\n", argv[0], err);
    return rc == KF_EINVAL || rc == KF_EPERM ? KF_EXIT_USAGE : KF_EXIT_UNAVAIL;
  }
  return KF_EXIT_OK;
}
