/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cli/cli_token.c -- `kf token create|list|revoke`: credentials, managed
 * on the store directly (like `kf db`), not through the coordinator.
 *
 * Whoever can write the database can already do anything, so the store is
 * the natural place to manage who may talk to the coordinator; a running
 * coordinator picks up a new or revoked credential within about a second
 * (it reloads its table every second, and at once on an unknown token).
 * The secret is printed once (or written to a mode-600 file with --out)
 * and never stored: the table holds its SHA-256 only.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cli_internal.h"
#include "err.h"
#include "pglocal.h"
#include "store.h"
#include "text.h"
#include "token.h"
#include "util.h"

static void usage(FILE *f) {
  fprintf(f,
"usage: kf token create --role worker|submitter|admin [--name TEXT]\n"
"                       [--out FILE]\n"
"       kf token list [--all] [--json]\n"
"       kf token revoke ID\n"
"Where (every action):\n"
"  --db URL     the coordinator's database [$KF_DB_URL]\n"
"  --data DIR   or the private PostgreSQL of `kf run --data DIR`\n"
"\n"
"create prints the new credential's id and then its secret, once (or\n"
"writes the secret to FILE, mode 600, and prints only the id); only its\n"
"SHA-256 is stored.  Hand it to the worker or user by file\n"
"(--token-file) or $KF_TOKEN, never on a command line.  Roles: worker\n"
"(register, heartbeat, lease, report), submitter (submit tasks, campaigns,\n"
"proposals, and read), admin (everything).  list shows valid credentials\n"
"(--all: revoked ones too).  revoke takes effect on a running coordinator\n"
"within about a second.\n");
}

/* Opens the store named by --db / --data / $KF_DB_URL.  0 or exit code. */
static int open_store(const char *db, const char *data, kf_store **s) {
  char conninfo[1024], err[2048];
  if (!db && data) {
    char pg[600];
    snprintf(pg, sizeof pg, "%s/pg", data);
    if (kf_pglocal_conninfo(pg, conninfo, sizeof conninfo, err, sizeof err)) {
      fprintf(stderr, "kf token: %s\n", err);
      return KF_EXIT_USAGE;
    }
    db = conninfo;
  }
  if (!db) db = kf_getenv_or("KF_DB_URL", NULL);
  if (!db) {
    fprintf(stderr, "kf token: no database: pass --db URL, --data DIR or set"
            " KF_DB_URL\n");
    return KF_EXIT_USAGE;
  }
  if (kf_store_open(db, s, err, sizeof err)) {
    fprintf(stderr, "kf token: database: %s\n", err);
    return KF_EXIT_UNAVAIL;
  }
  /* A fresh database (tokens made before the coordinator first ran). */
  if (kf_store_migrate(*s)) {
    fprintf(stderr, "kf token: migrating schema: %s\n", kf_store_errmsg(*s));
    kf_store_close(*s);
    *s = NULL;
    return KF_EXIT_UNAVAIL;
  }
  return 0;
}

/* Writes secret + "\n" to a new file of mode 600.  0 or exit code. */
static int write_secret(const char *path, const char *secret) {
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
                0600);
  if (fd < 0) {
    fprintf(stderr, "kf token: %s: %s\n", path, strerror(errno));
    return KF_EXIT_USAGE;
  }
  size_t n = strlen(secret);
  bool ok = write(fd, secret, n) == (ssize_t)n && write(fd, "\n", 1) == 1;
  if (close(fd) != 0) ok = false;
  if (!ok) {
    fprintf(stderr, "kf token: writing %s failed\n", path);
    unlink(path);
    return KF_EXIT_FAIL;
  }
  return 0;
}

static int do_create(kf_store *s, const char *role, const char *name,
                     const char *out) {
  if (!kf_token_role_parse(role)) {
    fprintf(stderr, "kf token create: --role must be worker, submitter or "
            "admin\n");
    return KF_EXIT_USAGE;
  }
  char why[96];
  if (name && kf_text_check(name, strlen(name), 127, why, sizeof why)) {
    fprintf(stderr, "kf token create: --name %s\n", why);
    return KF_EXIT_USAGE;
  }
  char secret[KF_TOKEN_SECRET_LEN + 1], hash[65];
  if (kf_token_generate(secret, sizeof secret) ||
      kf_token_hash_hex(secret, strlen(secret), hash)) {
    fprintf(stderr, "kf token create: no randomness or no SHA-256\n");
    return KF_EXIT_FAIL;
  }
  int64_t id;
  if (kf_store_token_create(s, role, name, hash, &id)) {
    fprintf(stderr, "kf token create: %s\n", kf_store_errmsg(s));
    return KF_EXIT_UNAVAIL;
  }
  int rc = 0;
  if (out) {
    rc = write_secret(out, secret);
    if (rc) {
      /* The secret is lost: do not leave a credential nobody holds. */
      kf_store_token_revoke(s, id);
      return rc;
    }
    printf("%lld\n", (long long)id);
  } else {
    printf("%lld\n%s\n", (long long)id, secret);
  }
  memset(secret, 0, sizeof secret);
  return KF_EXIT_OK;
}

static int do_list(kf_store *s, bool all, bool json) {
  kf_token_row *rows;
  size_t n;
  if (kf_store_token_list(s, all, &rows, &n)) {
    fprintf(stderr, "kf token list: %s\n", kf_store_errmsg(s));
    return KF_EXIT_UNAVAIL;
  }
  if (json) printf("[");
  else printf("%-6s %-10s %-20s %-20s %s\n", "ID", "ROLE", "CREATED (UTC)",
              "REVOKED (UTC)", "NAME");
  for (size_t i = 0; i < n; i++) {
    const char *name = kf_cli__clean(rows[i].name, 0);
    if (json)
      /* name is printable UTF-8 after kf_cli__clean; escape " and \ */
      printf("%s{\"id\": %lld, \"role\": \"%s\", \"created_at\": \"%s\", "
             "\"revoked_at\": %s%s%s, \"name\": \"", i ? ", " : "",
             (long long)rows[i].id, rows[i].role, rows[i].created_at,
             rows[i].revoked_at[0] ? "\"" : "",
             rows[i].revoked_at[0] ? rows[i].revoked_at : "null",
             rows[i].revoked_at[0] ? "\"" : "");
    else
      printf("%-6lld %-10s %-20s %-20s ", (long long)rows[i].id, rows[i].role,
             rows[i].created_at,
             rows[i].revoked_at[0] ? rows[i].revoked_at : "-");
    for (const char *p = name; *p; p++) {
      if (json && (*p == '"' || *p == '\\')) putchar('\\');
      putchar(*p);
    }
    printf(json ? "\"}" : "\n");
  }
  if (json) printf("]\n");
  free(rows);
  return KF_EXIT_OK;
}

int kf_cli_token(int argc, char **argv) {
  if (argc < 1 || !strcmp(argv[0], "--help") || !strcmp(argv[0], "-h")) {
    usage(argc < 1 ? stderr : stdout);
    return argc < 1 ? KF_EXIT_USAGE : KF_EXIT_OK;
  }
  const char *action = argv[0];
  const char *db = NULL, *data = NULL, *role = NULL, *name = NULL,
             *out = NULL;
  bool all = false, json = false;
  static const struct option opts[] = {
      {"db", required_argument, 0, 'd'},
      {"data", required_argument, 0, 'D'},
      {"role", required_argument, 0, 'r'},
      {"name", required_argument, 0, 'n'},
      {"out", required_argument, 0, 'o'},
      {"all", no_argument, 0, 'a'},
      {"json", no_argument, 0, 'j'},
      {"help", no_argument, 0, 'h'},
      {0, 0, 0, 0},
  };
  optind = 1; /* argv[0] is the action, as argv[0] is a program name */
  int c;
  while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
    switch (c) {
    case 'd': db = optarg; break;
    case 'D': data = optarg; break;
    case 'r': role = optarg; break;
    case 'n': name = optarg; break;
    case 'o': out = optarg; break;
    case 'a': all = true; break;
    case 'j': json = true; break;
    case 'h': usage(stdout); return KF_EXIT_OK;
    default: usage(stderr); return KF_EXIT_USAGE;
    }
  }
  int64_t id = 0;
  if (!strcmp(action, "revoke")) {
    uint64_t v;
    if (optind + 1 != argc || kf_parse_u64(argv[optind], &v) || v < 1 ||
        v > INT64_MAX) {
      fprintf(stderr, "kf token revoke: expected one credential id\n");
      return KF_EXIT_USAGE;
    }
    id = (int64_t)v;
  } else if (optind != argc) {
    fprintf(stderr, "kf token %s: unexpected argument '%s'\n", action,
            argv[optind]);
    return KF_EXIT_USAGE;
  }
  if (strcmp(action, "create") && strcmp(action, "list") &&
      strcmp(action, "revoke")) {
    fprintf(stderr, "kf token: unknown action '%s'\n", action);
    usage(stderr);
    return KF_EXIT_USAGE;
  }
  if (!strcmp(action, "create") && !role) {
    fprintf(stderr, "kf token create: --role is required\n");
    return KF_EXIT_USAGE;
  }
  kf_store *s = NULL;
  int rc = open_store(db, data, &s);
  if (rc) return rc;
  if (!strcmp(action, "create")) {
    rc = do_create(s, role, name, out);
  } else if (!strcmp(action, "list")) {
    rc = do_list(s, all, json);
  } else {
    int e = kf_store_token_revoke(s, id);
    if (e) {
      fprintf(stderr, "kf token revoke: %s\n", kf_store_errmsg(s));
      rc = e == KF_ENOTFOUND ? KF_EXIT_USAGE : KF_EXIT_UNAVAIL;
    } else {
      printf("revoked %lld\n", (long long)id);
    }
  }
  kf_store_close(s);
  return rc;
}
