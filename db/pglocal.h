/* SPDX-License-Identifier: Apache-2.0 */
/*
 * db/pglocal.h -- a private PostgreSQL server in a directory of our own:
 * the embedded default behind `kf run` and the test suite.
 *
 * Layout under dir: data/ (the cluster), sock/ (its unix socket; no TCP),
 * log (server log).  initdb runs on first start only, so a stop/start keeps
 * every row.  PostgreSQL refuses to run as root: when we are root, initdb
 * and pg_ctl run as the unprivileged user KF_PG_USER (default "postgres",
 * which Debian's package creates), and dir is handed to that user.
 * Binaries come from KF_PG_BINDIR, else /usr/lib/postgresql/15/bin, else
 * PATH.  Blocking; call from a plain thread, never from a loop callback.
 */
#ifndef KF_PGLOCAL_H
#define KF_PGLOCAL_H

#include <stddef.h>

/* Initializes dir if needed and starts the server (waits until it accepts
 * connections).  Starting one that runs already is not an error.  On
 * success writes a libpq conninfo for it into conninfo.  Returns 0 or
 * KF_E* with the reason (and the server log's tail) in err. */
int kf_pglocal_start(const char *dir, char *conninfo, size_t conninfo_len,
                     char *err, size_t errlen);

/* Stops the server: mode "fast" (clean) or "immediate" (crash-like).
 * Stopping one that is not running is not an error. */
int kf_pglocal_stop(const char *dir, const char *mode, char *err,
                    size_t errlen);

/* The conninfo of the server in dir, whether or not it runs. */
int kf_pglocal_conninfo(const char *dir, char *conninfo, size_t len,
                        char *err, size_t errlen);

#endif
