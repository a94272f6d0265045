/* SPDX-License-Identifier: Apache-2.0 */
/*
 * db/store_tokens.c -- credentials (api_tokens, 0005) and which credential
 * a worker is bound to.
 *
 * Only hashes are stored and read here; secrets never reach this file
 * (token.h makes and hashes them).  Every call is one statement outside a
 * transaction, so a dead connection is retried once.
 */
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "store_internal.h"
#include "util.h"

static const kf_store__stmt ST_TOKEN_CREATE = {
    KF_STMT_TOKEN_CREATE,
    "INSERT INTO api_tokens (role, name, hash) VALUES ($1, $2, $3)"
    " RETURNING id"};

int kf_store_token_create(kf_store *s, const char *role, const char *name,
                          const char *hash_hex, int64_t *id) {
  int rc = kf_store__ready(s);
  if (rc) return rc;
  if (!role || (strcmp(role, "worker") && strcmp(role, "submitter") &&
                strcmp(role, "admin")))
    return kf_store__fail(s, KF_EINVAL,
                          "role must be worker, submitter or admin");
  if (!hash_hex || strlen(hash_hex) != 64 ||
      strspn(hash_hex, "0123456789abcdef") != 64)
    return kf_store__fail(s, KF_EINVAL, "hash must be 64 lowercase hex digits");
  const char *p[] = {role, name ? name : "", hash_hex};
  PGresult *r;
  /* An INSERT sent alone: if the connection died before the server saw
   * it, nothing was stored; if after, the retry hits the unique hash and
   * fails, and the caller makes a new secret.  Either way no duplicate. */
  if ((rc = kf_store__exec_retry(s, &ST_TOKEN_CREATE, 3, p, false, &r)))
    return rc;
  *id = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
  PQclear(r);
  return 0;
}

static const kf_store__stmt ST_TOKEN_LIST = {
    KF_STMT_TOKEN_LIST,
    "SELECT id, role, name, hash,"
    " to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS'),"
    " COALESCE(to_char(revoked_at AT TIME ZONE 'UTC',"
    " 'YYYY-MM-DD HH24:MI:SS'), '')"
    " FROM api_tokens WHERE $1::bool OR revoked_at IS NULL ORDER BY id"};

int kf_store_token_list(kf_store *s, bool with_revoked, kf_token_row **rows,
                        size_t *n) {
  *rows = NULL;
  *n = 0;
  int rc = kf_store__ready(s);
  if (rc) return rc;
  const char *p[] = {with_revoked ? "true" : "false"};
  PGresult *r;
  if ((rc = kf_store__exec_retry(s, &ST_TOKEN_LIST, 1, p, false, &r)))
    return rc;
  int nt = PQntuples(r);
  kf_token_row *out = calloc(nt ? (size_t)nt : 1, sizeof *out);
  if (!out) {
    PQclear(r);
    return kf_store__fail(s, KF_ENOMEM, "out of memory");
  }
  for (int i = 0; i < nt; i++) {
    out[i].id = strtoll(PQgetvalue(r, i, 0), NULL, 10);
    kf_strlcpy(out[i].role, PQgetvalue(r, i, 1), sizeof out[i].role);
    kf_strlcpy(out[i].name, PQgetvalue(r, i, 2), sizeof out[i].name);
    kf_strlcpy(out[i].hash, PQgetvalue(r, i, 3), sizeof out[i].hash);
    kf_strlcpy(out[i].created_at, PQgetvalue(r, i, 4),
               sizeof out[i].created_at);
    kf_strlcpy(out[i].revoked_at, PQgetvalue(r, i, 5),
               sizeof out[i].revoked_at);
  }
  PQclear(r);
  *rows = out;
  *n = (size_t)nt;
  return 0;
}

static const kf_store__stmt ST_TOKEN_REVOKE = {
    KF_STMT_TOKEN_REVOKE,
    "UPDATE api_tokens SET revoked_at = COALESCE(revoked_at, now())"
    " WHERE id = $1::bigint RETURNING id"};

int kf_store_token_revoke(kf_store *s, int64_t id) {
  int rc = kf_store__ready(s);
  if (rc) return rc;
  char ids[24];
  snprintf(ids, sizeof ids, "%lld", (long long)id);
  const char *p[] = {ids};
  PGresult *r;
  /* Idempotent (COALESCE keeps the first time), so a retry is safe. */
  if ((rc = kf_store__exec_retry(s, &ST_TOKEN_REVOKE, 1, p, false, &r)))
    return rc;
  int found = PQntuples(r);
  PQclear(r);
  if (!found)
    return kf_store__fail(s, KF_ENOTFOUND, "no credential %lld",
                          (long long)id);
  return 0;
}
