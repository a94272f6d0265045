/* SPDX-License-Identifier: Apache-2.0 */
/*
 * db/store_tasks.c -- the task life cycle: submit, lease, report, reap.
 *
 * Every call is a fixed number of round trips whatever the batch size:
 * batches go to the server as text array literals and come apart there
 * with unnest().  Calls that are one statement (submit, reap) need no
 * BEGIN/COMMIT: a statement is its own transaction.
 *
 * Leasing groups the requests that ask for the same thing (device class
 * and set of kinds) and picks each group's tasks with one statement,
 * handing them round-robin to the group's requests so that a short queue
 * is spread out rather than given to the first worker.
 *
 * Reports lock their tasks, read the results already stored for them and
 * decide every verdict here, in C, against that snapshot (updated as the
 * batch is walked, so a report repeated within one batch is DUPLICATE).
 * Only then is anything written: one INSERT of the accepted results and
 * one UPDATE of their tasks, in one statement; then, when some of them
 * finish a campaign's eval task, one INSERT of those evaluations, in the
 * same transaction.
 *
 * Poison isolation: a report is data from outside, and one bad row must
 * not fail everybody's batch (it once did: one reason that was not UTF-8
 * made PostgreSQL refuse the whole INSERT, every worker's results waited
 * and their leases ran out).  So each accepted report is checked first
 * (outcome, text, numbers), and a bad one is refused alone (INVALID, task
 * failed with the reason).  Whatever the checks miss and the database
 * refuses as data is found by rolling back to a savepoint and writing the
 * batch's rows one by one, each under its own savepoint: only the rows
 * the database refuses are refused.  That costs round trips per row, but
 * only for a batch that holds such a row.
 */
#include <libpq-fe.h>

#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "outcome.h"
#include "store_internal.h"
#include "text.h"
#include "util.h"

/* ----------------------------------------------------------- submit -- */

/* Rows are inserted in input order (ORDER BY ordinality) and ids come
 * from one sequence that only grows, so the returned ids sorted ascending
 * line up with the specs even though RETURNING promises no order. */
static const kf_store__stmt ST_SUBMIT = {
    KF_STMT_SUBMIT,
    "INSERT INTO tasks (kind, payload, device_class_id, max_attempts,"
    " priority, campaign_id, timeout_ms)"
    " SELECT k, p, d, m, pr, c, t FROM unnest($1::text[], $2::bytea[],"
    " $3::bigint[], $4::int[], $5::int[], $6::bigint[], $7::int[])"
    " WITH ORDINALITY AS x(k, p, d, m, pr, c, t, o) ORDER BY o"
    " RETURNING id"};

static int kf_store__cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* The first campaign id of $1 that names no campaign (NULLs skipped). */
static const kf_store__stmt ST_SUBMIT_CAMPAIGNS = {
    KF_STMT_SUBMIT_CAMPAIGNS,
    "SELECT x FROM unnest($1::bigint[]) AS x WHERE x IS NOT NULL"
    " AND NOT EXISTS (SELECT 1 FROM campaigns c WHERE c.id = x) LIMIT 1"};

/* KF_ENOTFOUND when a spec names a campaign that does not exist: found
 * here, the caller hears which one, instead of a foreign-key error. */
static int kf_store__submit_campaigns(kf_store *s, const kf_task_spec *specs,
                                      size_t n) {
  kf_store__buf b = {0};
  bool any = false;
  kf_store__arr_open(&b);
  for (size_t i = 0; i < n; i++)
    if (specs[i].campaign_id) {
      kf_store__arr_i64(&b, specs[i].campaign_id);
      any = true;
    }
  kf_store__arr_close(&b);
  int rc = 0;
  if (b.oom) rc = kf_store__fail(s, KF_ENOMEM, "out of memory");
  PGresult *r = NULL;
  const char *p[] = {b.p};
  if (!rc && any &&
      !(rc = kf_store__exec(s, &ST_SUBMIT_CAMPAIGNS, 1, p, false, &r)) &&
      PQntuples(r) > 0) {
    int64_t bad = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
    size_t i = 0;
    while (i < n && specs[i].campaign_id != bad) i++;
    rc = kf_store__fail(s, KF_ENOTFOUND,
                        "task %zu: campaign_id %lld: no such campaign", i,
                        (long long)bad);
  }
  PQclear(r);
  kf_store__buf_free(&b);
  return rc;
}

int kf_store_submit(kf_store *s, const kf_task_spec *specs, size_t n,
                    int64_t *ids) {
  int rc = kf_store__ready(s);
  if (rc || n == 0) return rc;
  kf_store__buf a[7] = {{0}};
  for (int c = 0; c < 7; c++) kf_store__arr_open(&a[c]);
  if ((rc = kf_store__submit_campaigns(s, specs, n))) goto out;
  for (size_t i = 0; i < n; i++) {
    const kf_task_spec *t = &specs[i];
    char why[96];
    if (!t->kind) {
      rc = kf_store__fail(s, KF_EINVAL, "task %zu has no kind", i);
      goto out;
    }
    if (kf_text_check(t->kind, strlen(t->kind), KF_TEXT_NAME_MAX, why,
                      sizeof why)) {
      rc = kf_store__fail(s, KF_EINVAL, "task %zu: kind %s", i, why);
      goto out;
    }
    kf_store__arr_text(&a[0], t->kind);
    kf_store__arr_bytea(&a[1], t->payload, t->payload ? t->payload_len : 0);
    if (t->device_class_id)
      kf_store__arr_i64(&a[2], t->device_class_id);
    else
      kf_store__arr_null(&a[2]);
    kf_store__arr_i64(&a[3], t->max_attempts ? t->max_attempts : 3);
    kf_store__arr_i64(&a[4], t->priority);
    if (t->campaign_id)
      kf_store__arr_i64(&a[5], t->campaign_id);
    else
      kf_store__arr_null(&a[5]);
    kf_store__arr_i64(&a[6], t->timeout_ms ? t->timeout_ms : 60000);
  }
  bool oom = false;
  for (int c = 0; c < 7; c++) {
    kf_store__arr_close(&a[c]);
    oom |= a[c].oom;
  }
  if (oom) {
    rc = kf_store__fail(s, KF_ENOMEM, "out of memory");
    goto out;
  }
  const char *p[7];
  for (int c = 0; c < 7; c++) p[c] = a[c].p;
  PGresult *r;
  if ((rc = kf_store__exec(s, &ST_SUBMIT, 7, p, false, &r))) goto out;
  if ((size_t)PQntuples(r) != n) {
    PQclear(r);
    rc = kf_store__fail(s, KF_EDB, "submit inserted %d of %zu tasks",
                        PQntuples(r), n);
    goto out;
  }
  for (size_t i = 0; i < n; i++)
    ids[i] = strtoll(PQgetvalue(r, (int)i, 0), NULL, 10);
  PQclear(r);
  qsort(ids, n, sizeof *ids, kf_store__cmp_i64);
out:
  for (int c = 0; c < 7; c++) kf_store__buf_free(&a[c]);
  return rc;
}

/* ------------------------------------------------------------ lease -- */

/* What makes a queued task one a request of class $1 with kinds $2 may
 * take (the avoidance aside). */
#define LEASE_ELIGIBLE \
  " (device_class_id IS NULL OR device_class_id = $1::bigint)" \
  " AND kind = ANY($2::text[])" \
  /* a torch campaign's tasks only where torch is (worker/torch_caps.h): \
   * the "torch" kind, and "torch.cuda" for a GPU campaign */ \
  " AND (campaign_id IS NULL OR ('torch' = ANY($2::text[]) AND" \
  "  ('torch.cuda' = ANY($2::text[]) OR NOT EXISTS (SELECT 1 FROM" \
  "  campaigns c WHERE c.id = tasks.campaign_id AND c.backend = 2)))" \
  "  OR NOT EXISTS (SELECT 1 FROM campaigns c WHERE c.id =" \
  "  tasks.campaign_id AND c.language = 'python'))"

/* $1 class, $2 kinds, $3 how many, $4/$5 the slots (owner and request
 * index, in hand-out order), $6 ttl.  A task that avoids a worker
 * (0006) is left out while it does and that worker is among the owners,
 * whichever slot it would have gone to; it avoids it until avoid_until,
 * and only while another worker of its class that runs its kind was seen
 * within a lease's length (a gone one is not waited for).  When slots are
 * left over, kf_store__lease_avoided gives such a task to a free slot of
 * another worker (ST_LEASE_PROBE, ST_LEASE_AVOIDED, ST_LEASE_ASSIGN), so
 * the worker it avoids polling in the same batch does not keep it from
 * everyone.  The window numbers the picked tasks in priority order so
 * that the k-th best task goes to slot k, read by subscript rather than
 * by joining an unnest (a join the planner, blind to the array's size, ran
 * as a nested loop).  The window sits outside the locking subquery because
 * FOR UPDATE and window functions do not mix at one level. */
static const kf_store__stmt ST_LEASE = {
    KF_STMT_LEASE,
    "WITH cand AS ("
    " SELECT id, priority FROM tasks"
    " WHERE state = 'queued' AND" LEASE_ELIGIBLE
    " AND (avoid_worker IS NULL OR avoid_until <= now()"
    /* a worker of the batch that is the avoided one, or registered with
     * its credential (0014), leaves the task to ST_LEASE_AVOIDED */
    "  OR NOT EXISTS (SELECT 1 FROM unnest($4::bigint[]) b"
    "  WHERE kf_same_principal(tasks.avoid_worker, b))"
    /* the avoidance holds while another party's worker of the class that
     * runs the kind was seen within a lease's length; with none, at once */
    "  OR NOT EXISTS (SELECT 1 FROM workers w WHERE"
    "  NOT kf_same_principal(tasks.avoid_worker, w.id)"
    "  AND w.device_class_id = tasks.device_class_id"
    "  AND tasks.kind = ANY(w.task_kinds)"
    "  AND w.last_seen > now() - $6::bigint * interval '1 ms'))"
    " ORDER BY priority DESC, id LIMIT $3::int"
    " FOR UPDATE SKIP LOCKED),"
    " picked AS (SELECT id, row_number() OVER (ORDER BY priority DESC, id)"
    " AS rn FROM cand)"
    " UPDATE tasks t SET state = 'leased',"
    " lease_owner = ($4::bigint[])[picked.rn],"
    " lease_expires = now() + $6::bigint * interval '1 ms',"
    " attempt = t.attempt + 1"
    " FROM picked WHERE t.id = picked.id"
    " RETURNING ($5::int[])[picked.rn], t.id, t.attempt, t.kind, t.payload,"
    " COALESCE(t.campaign_id, 0), t.timeout_ms"};

/* $1 the workers of the batch's groups that came up short: whether a
 * queued task avoids one of them.  Asked only then, and answered from
 * the partial index of avoiding queued tasks (0011), which holds only
 * those: an ask per short batch, whatever the queue's length.  (Asked
 * inside ST_LEASE, PostgreSQL evaluated it for every batch, full or not,
 * through the index of all queued tasks: 4.4 ms a batch at 40,000
 * queued.) */
static const kf_store__stmt ST_LEASE_PROBE = {
    KF_STMT_LEASE_PROBE,
    "SELECT 1 FROM tasks WHERE state = 'queued' AND avoid_worker IS NOT NULL"
    " AND avoid_until > now() AND EXISTS (SELECT 1 FROM unnest($1::bigint[])"
    " b WHERE kf_same_principal(avoid_worker, b)) LIMIT 1"};

/* $1 class, $2 kinds, $3 how many, $4 the workers with a free slot left:
 * the tasks that avoid one of them and that ST_LEASE therefore left out,
 * locked, for kf_store_lease to place in another worker's slot. */
static const kf_store__stmt ST_LEASE_AVOIDED = {
    KF_STMT_LEASE_AVOIDED,
    "SELECT id, ARRAY(SELECT b FROM unnest($4::bigint[]) b"
    " WHERE kf_same_principal(avoid_worker, b)) FROM tasks"
    " WHERE state = 'queued' AND avoid_worker IS NOT NULL"
    " AND avoid_until > now() AND EXISTS (SELECT 1 FROM unnest($4::bigint[])"
    " b WHERE kf_same_principal(avoid_worker, b)) AND" LEASE_ELIGIBLE
    " ORDER BY priority DESC, id LIMIT $3::int FOR UPDATE SKIP LOCKED"};

/* $1 task ids, $2 their owners, $3 their request indexes, $4 ttl: leases
 * the tasks ST_LEASE_AVOIDED locked, each to the slot chosen for it.
 * Returns ST_LEASE's columns. */
static const kf_store__stmt ST_LEASE_ASSIGN = {
    KF_STMT_LEASE_ASSIGN,
    "UPDATE tasks t SET state = 'leased', lease_owner = a.owner,"
    " lease_expires = now() + $4::bigint * interval '1 ms',"
    " attempt = t.attempt + 1"
    " FROM unnest($1::bigint[], $2::bigint[], $3::int[]) AS a(id, owner, ri)"
    " WHERE t.id = a.id AND t.state = 'queued'"
    " RETURNING a.ri, t.id, t.attempt, t.kind, t.payload,"
    " COALESCE(t.campaign_id, 0), t.timeout_ms"};

typedef struct {
  int64_t dc;
  char *kinds;  /* canonical (sorted) text array literal: the group key */
  size_t first; /* its first request in `order` */
  size_t n;
  uint64_t total; /* sum of max_tasks */
  size_t nkinds;  /* distinct kinds: the order groups are served in */
} kf_store__group;

static int kf_store__cmp_str(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Canonical literal of one request's kinds: sorted, so {a,b} and {b,a}
 * fall in the same group.  NULL on allocation failure. */
static char *kf_store__kinds_key(const kf_lease_req *r, size_t *nkinds) {
  const char **k = malloc(r->n_task_kinds * sizeof *k);
  if (!k) return NULL;
  memcpy(k, r->task_kinds, r->n_task_kinds * sizeof *k);
  qsort(k, r->n_task_kinds, sizeof *k, kf_store__cmp_str);
  kf_store__buf b = {0};
  kf_store__arr_open(&b);
  *nkinds = 0;
  for (size_t i = 0; i < r->n_task_kinds; i++)
    if (i == 0 || strcmp(k[i], k[i - 1]) != 0) {
      kf_store__arr_text(&b, k[i]);
      (*nkinds)++;
    }
  kf_store__arr_close(&b);
  free(k);
  if (b.oom) {
    kf_store__buf_free(&b);
    return NULL;
  }
  return b.p;
}

static uint32_t kf_store__get_u32(const char *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return ntohl(v);
}

static int64_t kf_store__get_i64(const char *p) {
  uint64_t hi = kf_store__get_u32(p), lo = kf_store__get_u32(p + 4);
  return (int64_t)(hi << 32 | lo);
}

/* Copies every returned row into one block: grant, task array, then the
 * kinds and payloads. */
static int kf_store__build_grant(kf_store *s, PGresult **res, size_t nres,
                                 kf_lease_grant **out) {
  size_t rows = 0, bytes = 0;
  for (size_t i = 0; i < nres; i++) {
    int nt = PQntuples(res[i]);
    rows += (size_t)nt;
    for (int j = 0; j < nt; j++)
      bytes += (size_t)PQgetlength(res[i], j, 3) + 1 +
               (size_t)PQgetlength(res[i], j, 4);
  }
  size_t head = sizeof(kf_lease_grant) + rows * sizeof(kf_leased_task);
  char *blk = malloc(head + bytes + 1);
  if (!blk) return kf_store__fail(s, KF_ENOMEM, "out of memory");
  kf_lease_grant *g = (kf_lease_grant *)blk;
  g->tasks = (kf_leased_task *)(blk + sizeof(kf_lease_grant));
  g->n = rows;
  char *data = blk + head;
  size_t k = 0;
  g->avoided_err[0] = '\0';
  for (size_t i = 0; i < nres; i++) {
    for (int j = 0; j < PQntuples(res[i]); j++) {
      kf_leased_task *t = &g->tasks[k++];
      PGresult *r = res[i];
      t->req_index = kf_store__get_u32(PQgetvalue(r, j, 0));
      t->task_id = kf_store__get_i64(PQgetvalue(r, j, 1));
      t->attempt = kf_store__get_u32(PQgetvalue(r, j, 2));
      size_t kl = (size_t)PQgetlength(r, j, 3);
      memcpy(data, PQgetvalue(r, j, 3), kl);
      data[kl] = '\0';
      t->kind = data;
      data += kl + 1;
      size_t pl = (size_t)PQgetlength(r, j, 4);
      memcpy(data, PQgetvalue(r, j, 4), pl);
      t->payload = data;
      t->payload_len = pl;
      data += pl;
      t->campaign_id = kf_store__get_i64(PQgetvalue(r, j, 5));
      t->timeout_ms = kf_store__get_u32(PQgetvalue(r, j, 6));
    }
  }
  *out = g;
  return 0;
}

/* Whether id is in a bigint[] as PostgreSQL writes it ("{3,7}"). */
static bool kf_store__in_id_array(const char *a, int64_t id) {
  for (const char *p = a; *p;) {
    if (*p == '{' || *p == ',' || *p == '}') {
      p++;
      continue;
    }
    char *end;
    long long v = strtoll(p, &end, 10);
    if (end == p) return false;
    if (v == id) return true;
    p = end;
  }
  return false;
}

/* After ST_LEASE: when a group came up short and a queued task avoids
 * one of the workers of such groups (ST_LEASE_PROBE), each short group
 * gives those tasks its free slots, each to a slot of another worker than
 * the one it avoids, free slots of distinct workers first.  Its own
 * transaction, as the main leases are committed: when it fails, its
 * tasks stay queued for the next batch, res and *nres are as they were,
 * and err says why.  res has room for ngroups more results. */
static void kf_store__lease_avoided(kf_store *s, const kf_lease_req *reqs,
                                    size_t n, const kf_store__group *groups,
                                    size_t ngroups, const size_t *order,
                                    PGresult **res, size_t *nres,
                                    const char *ttl, char *err,
                                    size_t errlen) {
  const size_t nres0 = *nres;
  uint32_t *got = calloc(n ? n : 1, sizeof *got);
  bool *marked = calloc(ngroups ? ngroups : 1, sizeof *marked);
  int64_t *sl_owner = NULL;
  size_t *sl_req = NULL;
  bool *used = NULL;
  kf_store__buf a[4] = {{0}};
  PGresult *pick = NULL;
  bool in_tx = false, any = false;
  int rc = 0;
  if (!got || !marked) {
    rc = kf_store__fail(s, KF_ENOMEM, "out of memory");
    goto out;
  }
  for (size_t g = 0; g < ngroups && g < *nres; g++) {
    uint64_t granted = 0;
    for (int j = 0; j < PQntuples(res[g]); j++) {
      uint32_t ri = kf_store__get_u32(PQgetvalue(res[g], j, 0));
      if (ri < n) got[ri]++;
      granted++;
    }
    if (granted < groups[g].total) marked[g] = any = true; /* short */
  }
  if (!any) goto out;
  /* is there anything to place at all?  the short groups' workers */
  kf_store__arr_open(&a[0]);
  for (size_t g = 0; g < ngroups; g++)
    for (size_t j = 0; marked[g] && j < groups[g].n; j++)
      kf_store__arr_i64(&a[0], reqs[order[groups[g].first + j]].worker_id);
  kf_store__arr_close(&a[0]);
  if (a[0].oom) {
    rc = kf_store__fail(s, KF_ENOMEM, "out of memory");
    goto out;
  }
  {
    const char *pp[] = {a[0].p};
    if ((rc = kf_store__exec(s, &ST_LEASE_PROBE, 1, pp, false, &pick)))
      goto out;
    bool some = PQntuples(pick) > 0;
    PQclear(pick);
    pick = NULL;
    if (!some) goto out;
  }
  if ((rc = kf_store__begin(s))) goto out;
  in_tx = true;
  for (size_t g = 0; g < ngroups; g++) {
    if (!marked[g]) continue;
    const kf_store__group *gr = &groups[g];
    /* the free slots, round robin over the requests as in kf_store_lease */
    uint64_t left = 0;
    for (size_t j = 0; j < gr->n; j++) {
      const kf_lease_req *r = &reqs[order[gr->first + j]];
      left += r->max_tasks - got[order[gr->first + j]];
    }
    if (left == 0) continue;
    if (left > 1024) left = 1024; /* showdowns are few */
    free(sl_owner);
    free(sl_req);
    free(used);
    sl_owner = malloc(left * sizeof *sl_owner);
    sl_req = malloc(left * sizeof *sl_req);
    used = calloc(left, sizeof *used);
    if (!sl_owner || !sl_req || !used) {
      rc = kf_store__fail(s, KF_ENOMEM, "out of memory");
      goto out;
    }
    size_t ns = 0;
    for (uint32_t round = 0; ns < left; round++) {
      size_t before = ns;
      for (size_t j = 0; j < gr->n && ns < left; j++) {
        size_t i = order[gr->first + j];
        if (reqs[i].max_tasks - got[i] <= round) continue;
        sl_owner[ns] = reqs[i].worker_id;
        sl_req[ns++] = i;
      }
      if (ns == before) break;
    }
    for (int c = 0; c < 4; c++) kf_store__buf_reset(&a[c]);
    kf_store__arr_open(&a[0]);
    for (size_t j = 0; j < gr->n; j++)
      kf_store__arr_i64(&a[0], reqs[order[gr->first + j]].worker_id);
    kf_store__arr_close(&a[0]);
    if (a[0].oom) {
      rc = kf_store__fail(s, KF_ENOMEM, "out of memory");
      goto out;
    }
    char dc[24], lim[24];
    snprintf(dc, sizeof dc, "%lld", (long long)gr->dc);
    snprintf(lim, sizeof lim, "%zu", ns);
    const char *p[] = {dc, gr->kinds, lim, a[0].p};
    if ((rc = kf_store__exec(s, &ST_LEASE_AVOIDED, 4, p, false, &pick)))
      goto out;
    /* each task to the first free slot of a worker it does not avoid */
    int nt = PQntuples(pick);
    kf_store__arr_open(&a[1]);
    kf_store__arr_open(&a[2]);
    kf_store__arr_open(&a[3]);
    size_t placed = 0;
    for (int t = 0; t < nt; t++) {
      int64_t id = strtoll(PQgetvalue(pick, t, 0), NULL, 10);
      /* the batch's workers it avoids: "{3,7}" (the avoided worker and
       * those of its credential) */
      const char *avoid = PQgetvalue(pick, t, 1);
      for (size_t k = 0; k < ns; k++) {
        if (used[k] || kf_store__in_id_array(avoid, sl_owner[k])) continue;
        used[k] = true;
        kf_store__arr_i64(&a[1], id);
        kf_store__arr_i64(&a[2], sl_owner[k]);
        kf_store__arr_i64(&a[3], (int64_t)sl_req[k]);
        placed++;
        break;
      }
    }
    kf_store__arr_close(&a[1]);
    kf_store__arr_close(&a[2]);
    kf_store__arr_close(&a[3]);
    PQclear(pick);
    pick = NULL;
    if (a[1].oom || a[2].oom || a[3].oom) {
      rc = kf_store__fail(s, KF_ENOMEM, "out of memory");
      goto out;
    }
    if (!placed) continue;
    const char *q[] = {a[1].p, a[2].p, a[3].p, ttl};
    if ((rc = kf_store__exec(s, &ST_LEASE_ASSIGN, 4, q, true, &res[*nres])))
      goto out;
    (*nres)++;
  }
  rc = kf_store__commit(s);
  in_tx = false;
out:
  if (in_tx) kf_store__rollback(s, rc);
  if (rc) {
    /* nothing of this transaction holds: its rows are not leases */
    while (*nres > nres0) PQclear(res[--*nres]);
    snprintf(err, errlen, "%s", kf_store_errmsg(s));
  }
  PQclear(pick);
  for (int c = 0; c < 4; c++) kf_store__buf_free(&a[c]);
  free(got);
  free(marked);
  free(sl_owner);
  free(sl_req);
  free(used);
}

int kf_store_lease(kf_store *s, const kf_lease_req *reqs, size_t n,
                   int lease_ttl_ms, kf_lease_grant **out) {
  *out = NULL;
  int rc = kf_store__ready(s);
  if (rc) return rc;
  kf_store__group *groups = calloc(n ? n : 1, sizeof *groups);
  size_t *order = malloc((n ? n : 1) * sizeof *order); /* by group */
  size_t *gof = malloc((n ? n : 1) * sizeof *gof);      /* group of req */
  /* one result per group, and one more per group for its avoided tasks */
  PGresult **res = calloc(n ? 2 * n : 1, sizeof *res);
  size_t ngroups = 0, nres = 0;
  kf_store__buf owners = {0}, idx = {0};
  bool in_tx = false;
  if (!groups || !order || !gof || !res) {
    rc = kf_store__fail(s, KF_ENOMEM, "out of memory");
    goto out;
  }
  /* Group the requests: a linear scan over the groups is fine, batches
   * hold a few distinct (class, kinds) pairs. */
  for (size_t i = 0; i < n; i++) {
    gof[i] = SIZE_MAX;
    if (reqs[i].max_tasks == 0 || reqs[i].n_task_kinds == 0) continue;
    size_t nkinds = 0;
    char *key = kf_store__kinds_key(&reqs[i], &nkinds);
    if (!key) {
      rc = kf_store__fail(s, KF_ENOMEM, "out of memory");
      goto out;
    }
    size_t g = 0;
    while (g < ngroups && !(groups[g].dc == reqs[i].device_class_id &&
                            strcmp(groups[g].kinds, key) == 0))
      g++;
    if (g == ngroups) {
      groups[ngroups++] = (kf_store__group){
          .dc = reqs[i].device_class_id, .kinds = key, .nkinds = nkinds};
    } else {
      free(key);
    }
    groups[g].n++;
    groups[g].total += reqs[i].max_tasks;
    gof[i] = g;
  }
  /* Lay the requests out group by group (a counting sort). */
  for (size_t g = 1; g < ngroups; g++)
    groups[g].first = groups[g - 1].first + groups[g - 1].n;
  {
    size_t *fill = calloc(ngroups ? ngroups : 1, sizeof *fill);
    if (!fill) {
      rc = kf_store__fail(s, KF_ENOMEM, "out of memory");
      goto out;
    }
    for (size_t i = 0; i < n; i++)
      if (gof[i] != SIZE_MAX)
        order[groups[gof[i]].first + fill[gof[i]]++] = i;
    free(fill);
  }
  /* Several statements must commit together; one alone is its own
   * transaction and saves two round trips. */
  if (ngroups > 1) {
    if ((rc = kf_store__begin(s))) goto out;
    in_tx = true;
  }
  char ttl[16];
  snprintf(ttl, sizeof ttl, "%d", lease_ttl_ms);
  /* Groups are served one after another, each taking what it can, so the
   * narrowest (fewest kinds) go first: a specialist then gets the tasks
   * only it can run before a generalist takes them.  A selection sort:
   * there are only a few groups. */
  for (size_t g = 0; g < ngroups; g++) {
    size_t best = g;
    for (size_t h = g + 1; h < ngroups; h++)
      if (groups[h].nkinds < groups[best].nkinds) best = h;
    kf_store__group tmp = groups[g];
    groups[g] = groups[best];
    groups[best] = tmp;
  }
  for (size_t g = 0; g < ngroups; g++) {
    kf_store__group *gr = &groups[g];
    kf_store__buf_reset(&owners);
    kf_store__buf_reset(&idx);
    kf_store__arr_open(&owners);
    kf_store__arr_open(&idx);
    /* Round-robin slots: round k gives one task to every request that
     * still wants more than k. */
    uint64_t handed = 0;
    for (uint32_t round = 0; handed < gr->total; round++) {
      for (size_t j = 0; j < gr->n; j++) {
        const kf_lease_req *r = &reqs[order[gr->first + j]];
        if (r->max_tasks <= round) continue;
        kf_store__arr_i64(&owners, r->worker_id);
        kf_store__arr_i64(&idx, (int64_t)order[gr->first + j]);
        handed++;
      }
    }
    kf_store__arr_close(&owners);
    kf_store__arr_close(&idx);
    if (owners.oom || idx.oom) {
      rc = kf_store__fail(s, KF_ENOMEM, "out of memory");
      goto out;
    }
    char dc[24], lim[24];
    snprintf(dc, sizeof dc, "%lld", (long long)gr->dc);
    snprintf(lim, sizeof lim, "%llu",
             (unsigned long long)(gr->total > INT32_MAX ? INT32_MAX
                                                        : gr->total));
    const char *p[] = {dc, gr->kinds, lim, owners.p, idx.p, ttl};
    if ((rc = kf_store__exec(s, &ST_LEASE, 6, p, true, &res[nres]))) goto out;
    nres++;
  }
  if (in_tx) {
    if ((rc = kf_store__commit(s))) goto out;
    in_tx = false;
  }
  char avoided_err[160] = "";
  kf_store__lease_avoided(s, reqs, n, groups, ngroups, order, res, &nres, ttl,
                          avoided_err, sizeof avoided_err);
  rc = kf_store__build_grant(s, res, nres, out);
  if (!rc) memcpy((*out)->avoided_err, avoided_err, sizeof avoided_err);
  /* The leases are committed even if the copy failed for memory: they
   * expire and the reaper requeues them, which is the designed path for
   * a coordinator that lost track of a lease. */
out:
  if (in_tx) kf_store__rollback(s, rc);
  for (size_t i = 0; i < nres; i++) PQclear(res[i]);
  for (size_t g = 0; g < ngroups; g++) free(groups[g].kinds);
  free(groups);
  free(order);
  free(gof);
  free(res);
  kf_store__buf_free(&owners);
  kf_store__buf_free(&idx);
  return rc;
}

void kf_store_grant_free(kf_lease_grant *g) { free(g); }

/* ----------------------------------------------------------- report -- */

/* Locks in id order, so two coordinators reporting overlapping batches
 * wait for each other instead of deadlocking. */
static const kf_store__stmt ST_REPORT_LOCK = {
    KF_STMT_REPORT_LOCK,
    "SELECT id, state, COALESCE(lease_owner, 0), attempt, max_attempts,"
    " kind = 'eval' AND campaign_id IS NOT NULL"
    " FROM tasks WHERE id = ANY($1::bigint[]) ORDER BY id FOR UPDATE"};

/* A separate statement after the lock: its snapshot is taken once the
 * locks are held, so it sees results committed by whoever held them.
 * Written as a join from the array rather than `task_id = ANY($1)`: a
 * prepared statement's plan made while results was nearly empty (a fresh
 * database, before autovacuum's first analyze) is a sequential scan, and
 * with ANY every row of it is compared with every id of the batch -- 61
 * ms a batch at 20,000 results (bench-coordinator, pg_stat_statements);
 * joined from the unnest it is a hash probe per row at worst and an
 * index probe per id once the statistics know the table's size.  Side by
 * side on this machine: 2,768-2,931 tasks/s before, 4,212-4,242 after,
 * PostgreSQL's CPU per task 250-255 us before, 158-165 after
 * (docs/bench-notes.md). */
static const kf_store__stmt ST_REPORT_RESULTS = {
    KF_STMT_REPORT_RESULTS,
    "SELECT r.task_id, r.attempt, r.worker_id"
    " FROM unnest($1::bigint[]) AS u(id) JOIN results r ON r.task_id = u.id"};

static const kf_store__stmt ST_REPORT_WRITE = {
    KF_STMT_REPORT_WRITE,
    "WITH ins AS (INSERT INTO results (task_id, attempt, worker_id,"
    " outcome, stage, reason, output, elapsed_us, final)"
    " SELECT * FROM unnest($1::bigint[], $2::int[], $3::bigint[],"
    " $4::kf_outcome[], $5::text[], $6::text[], $7::bytea[], $8::bigint[],"
    " $9::boolean[]) RETURNING 1)"
    " UPDATE tasks t SET state = u.st::kf_task_state, lease_owner = NULL,"
    " lease_expires = NULL,"
    " finished_at = CASE WHEN u.st = 'queued' THEN NULL ELSE now() END,"
    " last_error = COALESCE(u.err, t.last_error)"
    " FROM unnest($1::bigint[], $10::text[], $11::text[]) AS u(id, st, err)"
    " WHERE t.id = u.id"};

/* The evaluation of a campaign's eval task, written with the report that
 * finishes it.  The candidate and class come from the task's eval_keys
 * row; speedup and roofline fraction are derived here (floor time in ns
 * is floor_bytes / copy_gbps of the reporting worker, or / the copy
 * ceiling the harness measured again beside the timing when that is
 * larger: a worker that measured its ceiling under load has it too low,
 * and the fraction, which can end a campaign, too high).  The environment
 * is the reporting worker's (0004), unless the EvalResult names another
 * harness build or toolchain: then none, and the number is never reused.
 * task_id is unique, and the conflict clause only backs up the verdict
 * logic. */
static const kf_store__stmt ST_REPORT_EVAL = {
    KF_STMT_REPORT_EVAL,
    "INSERT INTO evaluations (candidate_id, campaign_id, device_class_id,"
    " task_id, worker_id, outcome, stage, reason, time_ns_median,"
    " time_ns_spread, ref_time_ns_median, ref_time_ns_spread, speedup,"
    " achieved_gbps, roofline_fraction, result, environment_id,"
    " timing_dependent, repetitions, compile_time_ns_median,"
    " speedup_compile, max_autotune_time_ns_median, speedup_max_autotune)"
    " SELECT k.candidate_id, k.campaign_id, k.device_class_id, u.task,"
    " u.worker, u.oc, u.stage, u.reason, u.tm, u.ts, u.rm, u.rs,"
    " CASE WHEN u.oc = 'ok' AND u.tm > 0 AND u.rm > 0 THEN u.rm / u.tm END,"
    " COALESCE(u.gbps, CASE WHEN u.oc = 'ok' AND u.tm > 0"
    "  AND c.floor_bytes > 0 THEN c.floor_bytes / u.tm END),"
    " CASE WHEN u.oc = 'ok' AND u.tm > 0 AND c.floor_bytes > 0"
    "  AND jsonb_typeof(w.device->'copy_gbps') = 'number'"
    "  AND (w.device->>'copy_gbps')::float8 > 0"
    "  THEN c.floor_bytes / GREATEST((w.device->>'copy_gbps')::float8, u.sg)"
    "  / u.tm END,"
    " u.res,"
    " CASE WHEN COALESCE(u.hb, '') IN ('', env.harness_build)"
    "  AND COALESCE(u.tc, '') IN ('', env.toolchain) THEN env.id END,"
    " COALESCE(u.td, false), NULLIF(u.reps, 0), u.ct,"
    " CASE WHEN u.oc = 'ok' AND u.tm > 0 AND u.ct > 0 THEN u.ct / u.tm END,"
    " u.mt,"
    " CASE WHEN u.oc = 'ok' AND u.tm > 0 AND u.mt > 0 THEN u.mt / u.tm END"
    " FROM unnest($1::bigint[], $2::bigint[], $3::kf_outcome[], $4::text[],"
    " $5::text[], $6::float8[], $7::float8[], $8::float8[], $9::float8[],"
    " $10::float8[], $11::bytea[], $12::boolean[], $13::int[], $14::text[],"
    " $15::text[], $16::float8[], $17::float8[], $18::float8[])"
    " AS u(task, worker, oc, stage, reason, tm, ts, rm, rs, gbps, res, td,"
    " reps, hb, tc, ct, mt, sg)"
    " JOIN eval_keys k ON k.task_id = u.task"
    " JOIN campaigns c ON c.id = k.campaign_id"
    " LEFT JOIN workers w ON w.id = u.worker"
    " LEFT JOIN environments env ON env.id = w.environment_id"
    " ON CONFLICT (task_id) DO NOTHING"};

/* 0007: the diagnosis and profile of the evaluations just written, one
 * row each (by task). */
static const kf_store__stmt ST_REPORT_PROFILE = {
    KF_STMT_REPORT_PROFILE,
    "INSERT INTO eval_profiles (evaluation_id, bound, bandwidth_fraction,"
    " compute_fraction, detail, profiled, status, reason, tool, kernel,"
    " kernels, duration_ns, dram_pct, sm_pct, occupancy_pct, l1_hit_pct,"
    " l2_hit_pct, registers, shared_bytes, spill_bytes, stalls, profile_ms)"
    " SELECT e.id, u.bound, u.bw, u.fl, u.detail, u.profiled, u.status,"
    " u.reason, u.tool, u.kernel, u.kernels, u.dur, u.dram, u.sm, u.occ,"
    " u.l1, u.l2, u.regs, u.shm, u.spill, u.stalls, u.ms"
    " FROM unnest($1::bigint[], $2::text[], $3::float8[], $4::float8[],"
    " $5::text[], $6::boolean[], $7::text[], $8::text[], $9::text[],"
    " $10::text[], $11::int[], $12::float8[], $13::float8[], $14::float8[],"
    " $15::float8[], $16::float8[], $17::float8[], $18::int[],"
    " $19::bigint[], $20::bigint[], $21::jsonb[], $22::int[])"
    " AS u(task, bound, bw, fl, detail, profiled, status, reason, tool,"
    " kernel, kernels, dur, dram, sm, occ, l1, l2, regs, shm, spill, stalls,"
    " ms)"
    " JOIN evaluations e ON e.task_id = u.task"
    " ON CONFLICT (evaluation_id) DO NOTHING"};

typedef enum { T_QUEUED, T_LEASED, T_DONE, T_FAILED } kf_store__tstate;

/* One locked task as the batch sees it. */
typedef struct {
  int64_t id;
  kf_store__tstate state;
  int64_t owner;
  uint32_t attempt, max_attempts;
  bool eval; /* a campaign's eval task: its final report is an evaluation */
} kf_store__task;

typedef struct {
  int64_t task_id;
  uint32_t attempt;
  int64_t worker_id;
} kf_store__result;

static int kf_store__cmp_task(const void *a, const void *b) {
  const kf_store__task *x = a, *y = b;
  return (x->id > y->id) - (x->id < y->id);
}

static int kf_store__cmp_result(const void *a, const void *b) {
  const kf_store__result *x = a, *y = b;
  if (x->task_id != y->task_id) return (x->task_id > y->task_id) ? 1 : -1;
  return (x->attempt > y->attempt) - (x->attempt < y->attempt);
}

static kf_store__tstate kf_store__parse_state(const char *s) {
  switch (s[0]) {
  case 'q': return T_QUEUED;
  case 'l': return T_LEASED;
  case 'd': return T_DONE;
  default: return T_FAILED;
  }
}

static const char *const kf_store__state_name[] = {"queued", "leased", "done",
                                                   "failed"};

/* A failed task's last_error, for a report refused as INVALID. */
static const kf_store__stmt ST_REPORT_REFUSE = {
    KF_STMT_REPORT_REFUSE,
    "UPDATE tasks t SET state = 'failed', lease_owner = NULL,"
    " lease_expires = NULL, finished_at = now(), last_error = u.err"
    " FROM unnest($1::bigint[], $2::text[]) AS u(id, err) WHERE t.id = u.id"};

static const kf_store__stmt ST_SAVEPOINT = {KF_STMT_SAVEPOINT,
                                            "SAVEPOINT kf_report"};
static const kf_store__stmt ST_SAVEPOINT_UNDO = {
    KF_STMT_SAVEPOINT_UNDO, "ROLLBACK TO SAVEPOINT kf_report"};
static const kf_store__stmt ST_SAVEPOINT_RELEASE = {
    KF_STMT_SAVEPOINT_RELEASE, "RELEASE SAVEPOINT kf_report"};

/* An accepted report on its way to the database. */
typedef struct {
  size_t i;               /* its index in reps */
  kf_store__tstate state; /* the task's new state */
  const char *err;        /* the task's new last_error, or NULL */
  bool final;             /* not retried: the task's one final result */
  bool eval;              /* writes an evaluation too */
} kf_store__acc;

/* Largest believable time (ns), spread or bandwidth: beyond it a number
 * is garbage, and dividing by it (speedup, roofline) could overflow. */
#define KF_STORE__NUM_MAX 1e15
/* Smallest believable non-zero time, ns. */
#define KF_STORE__TIME_MIN 1e-3

static bool kf_store__num_bad(double v, bool is_time) {
  if (!isfinite(v) || v == 0) return false; /* stored as NULL */
  return v < 0 || v > KF_STORE__NUM_MAX || (is_time && v < KF_STORE__TIME_MIN);
}

/* Why a report of the live lease cannot be stored ("" when it can).
 * The same bounds the worker sanitizes to (text.h), so what a worker
 * made is never refused here. */
static bool kf_store__report_bad(const kf_report *rp, bool eval, char *why,
                                 size_t len) {
  char w[120];
  if (!kf_outcome_name(rp->outcome)) {
    snprintf(why, len, "outcome %d is not an outcome", rp->outcome);
    return true;
  }
  if (rp->stage &&
      kf_text_check(rp->stage, strlen(rp->stage), KF_TEXT_NAME_MAX, w,
                    sizeof w)) {
    snprintf(why, len, "stage %s", w);
    return true;
  }
  if (rp->reason &&
      kf_text_check(rp->reason, strlen(rp->reason), KF_TEXT_REASON_MAX, w,
                    sizeof w)) {
    snprintf(why, len, "reason %s", w);
    return true;
  }
  if (rp->elapsed_us > (uint64_t)INT64_MAX) {
    snprintf(why, len, "elapsed_us %llu is out of range",
             (unsigned long long)rp->elapsed_us);
    return true;
  }
  if (eval && rp->eval) {
    const kf_eval_row *e = rp->eval;
    const struct {
      const char *name;
      double v;
      bool time;
    } nums[] = {{"time_ns_median", e->time_ns_median, true},
                {"time_ns_spread", e->time_ns_spread, false},
                {"ref_time_ns_median", e->ref_time_ns_median, true},
                {"ref_time_ns_spread", e->ref_time_ns_spread, false},
                {"achieved_gbps", e->achieved_gbps, false},
                {"compile_time_ns_median", e->compile_time_ns_median, true},
                {"max_autotune_time_ns_median", e->max_autotune_time_ns_median,
                 true},
                {"stream_gbps", e->stream_gbps, false}};
    for (size_t k = 0; k < sizeof nums / sizeof nums[0]; k++)
      if (kf_store__num_bad(nums[k].v, nums[k].time)) {
        snprintf(why, len, "%s %g is out of range", nums[k].name, nums[k].v);
        return true;
      }
    const struct {
      const char *name, *v;
    } texts[] = {{"harness_build", e->harness_build},
                 {"toolchain", e->toolchain}};
    for (size_t k = 0; k < sizeof texts / sizeof texts[0]; k++)
      if (texts[k].v && kf_text_check(texts[k].v, strlen(texts[k].v),
                                      KF_TEXT_NAME_MAX, w, sizeof w)) {
        snprintf(why, len, "%s %s", texts[k].name, w);
        return true;
      }
    if (e->bad && e->bad[0]) {
      snprintf(why, len, "%s", e->bad);
      return true;
    }
    if (e->repetitions > INT32_MAX) {
      snprintf(why, len, "repetitions %llu is out of range",
               (unsigned long long)e->repetitions);
      return true;
    }
  }
  why[0] = '\0';
  return false;
}

/* A percentage or duration of a profile: negative (not measured) and
 * non-finite -> NULL. */
static void kf_store__arr_measured(kf_store__buf *b, double v) {
  kf_store__arr_f64(b, v >= 0 ? v : NAN, false);
}

/* Adds ev's eval_profiles row (ST_REPORT_PROFILE's 22 columns) to f when
 * it has a diagnosis or a profile; false when neither. */
static bool kf_store__profile_row(kf_store__buf *f, int64_t task,
                                  const kf_eval_row *ev) {
  const kf_diag *d = ev->diag && ev->diag->bound != KF_DIAG_NONE ? ev->diag
                                                                  : NULL;
  const kf_prof *p = ev->prof;
  if (!d && !p) return false;
  kf_store__arr_i64(&f[0], task);
  kf_store__arr_text(&f[1], d ? kf_diag_bound_name(d->bound) : NULL);
  kf_store__arr_f64(&f[2], d ? d->bw_frac : NAN, false);
  kf_store__arr_f64(&f[3], d ? d->fl_frac : NAN, false);
  kf_store__arr_text(&f[4], d ? d->detail : "");
  kf_store__arr_text(&f[5], d && d->profiled ? "t" : "f");
  kf_prof none;
  if (!p) {
    kf_prof_init(&none, KF_PROF_NONE);
    p = &none;
  }
  const char *st = kf_prof_status_name(p->status);
  kf_store__arr_text(&f[6], st ? st : "none");
  kf_store__arr_text(&f[7], p->reason);
  kf_store__arr_text(&f[8], p->tool);
  kf_store__arr_text(&f[9], p->kernel);
  kf_store__arr_i64(&f[10], p->kernels > INT32_MAX ? INT32_MAX : p->kernels);
  kf_store__arr_measured(&f[11], p->duration_ns);
  kf_store__arr_measured(&f[12], p->dram_pct);
  kf_store__arr_measured(&f[13], p->sm_pct);
  kf_store__arr_measured(&f[14], p->occupancy_pct);
  kf_store__arr_measured(&f[15], p->l1_hit_pct);
  kf_store__arr_measured(&f[16], p->l2_hit_pct);
  if (p->status == KF_PROF_OK) {
    kf_store__arr_i64(&f[17], p->registers > INT32_MAX ? INT32_MAX
                                                       : p->registers);
    kf_store__arr_i64(&f[18], p->shared_bytes);
    kf_store__arr_i64(&f[19], p->spill_bytes);
  } else {
    kf_store__arr_null(&f[17]);
    kf_store__arr_null(&f[18]);
    kf_store__arr_null(&f[19]);
  }
  /* the stall names are checked text (the coordinator's profile check),
   * written as JSON strings with cJSON's escaping */
  cJSON *arr = cJSON_CreateArray();
  for (int i = 0; arr && i < p->n_stalls && i < KF_PROF_MAX_STALLS; i++) {
    cJSON *o = cJSON_CreateObject();
    if (!o || !cJSON_AddStringToObject(o, "reason", p->stalls[i].name) ||
        !cJSON_AddNumberToObject(o, "cycles", isfinite(p->stalls[i].cycles)
                                                  ? p->stalls[i].cycles
                                                  : 0)) {
      cJSON_Delete(o);
      continue;
    }
    cJSON_AddItemToArray(arr, o);
  }
  char *js = arr ? cJSON_PrintUnformatted(arr) : NULL;
  cJSON_Delete(arr);
  if (js) kf_store__arr_text(&f[20], js);
  else f[20].oom = true;
  free(js);
  kf_store__arr_i64(&f[21], p->profile_ms > INT32_MAX ? INT32_MAX
                                                      : p->profile_ms);
  return true;
}

/* Writes the m accepted reports acc[] (results, task states, evaluations):
 * one statement for the results and tasks, one for the evaluations. */
static int kf_store__report_write(kf_store *s, const kf_report *reps,
                                  const kf_store__acc *acc, size_t m) {
  enum { NA = 11, NE = 18, NP = 22 }; /* result, evaluation, profile */
  kf_store__buf a[NA] = {{0}}, e[NE] = {{0}}, f[NP] = {{0}};
  PGresult *r = NULL;
  size_t neval = 0, nprof = 0;
  int rc = 0;
  for (int c = 0; c < NA; c++) kf_store__arr_open(&a[c]);
  for (int c = 0; c < NE; c++) kf_store__arr_open(&e[c]);
  for (int c = 0; c < NP; c++) kf_store__arr_open(&f[c]);
  for (size_t k = 0; k < m; k++) {
    const kf_report *rp = &reps[acc[k].i];
    kf_store__arr_i64(&a[0], rp->task_id);
    kf_store__arr_i64(&a[1], rp->attempt);
    kf_store__arr_i64(&a[2], rp->worker_id);
    kf_store__arr_text(&a[3], kf_outcome_name(rp->outcome));
    kf_store__arr_text(&a[4], rp->stage);
    kf_store__arr_text(&a[5], rp->reason);
    kf_store__arr_bytea(&a[6], rp->output, rp->output ? rp->output_len : 0);
    kf_store__arr_i64(&a[7], (int64_t)rp->elapsed_us);
    kf_store__arr_text(&a[8], acc[k].final ? "t" : "f");
    kf_store__arr_text(&a[9], kf_store__state_name[acc[k].state]);
    kf_store__arr_text(&a[10], acc[k].err);
    if (!acc[k].eval) continue;
    /* Final: this report is the candidate's evaluation.  (A task that
     * fails after its retries has no evaluation: the worker, not the
     * candidate, failed.) */
    const kf_eval_row *ev = rp->eval;
    const kf_eval_row none = {0};
    if (!ev) ev = &none;
    kf_store__arr_i64(&e[0], rp->task_id);
    kf_store__arr_i64(&e[1], rp->worker_id);
    kf_store__arr_text(&e[2], kf_outcome_name(rp->outcome));
    kf_store__arr_text(&e[3], rp->stage);
    kf_store__arr_text(&e[4], rp->reason);
    kf_store__arr_f64(&e[5], ev->time_ns_median, true);
    kf_store__arr_f64(&e[6], ev->time_ns_spread, false);
    kf_store__arr_f64(&e[7], ev->ref_time_ns_median, true);
    kf_store__arr_f64(&e[8], ev->ref_time_ns_spread, false);
    kf_store__arr_f64(&e[9], ev->achieved_gbps, true);
    if (ev->result)
      kf_store__arr_bytea(&e[10], ev->result, ev->result_len);
    else
      kf_store__arr_null(&e[10]);
    kf_store__arr_text(&e[11], ev->timing_dependent ? "t" : "f");
    kf_store__arr_i64(&e[12], ev->repetitions);
    kf_store__arr_text(&e[13], ev->harness_build);
    kf_store__arr_text(&e[14], ev->toolchain);
    kf_store__arr_f64(&e[15], ev->compile_time_ns_median, true);
    kf_store__arr_f64(&e[16], ev->max_autotune_time_ns_median, true);
    kf_store__arr_f64(&e[17], ev->stream_gbps, true);
    neval++;
    if (kf_store__profile_row(f, rp->task_id, ev)) nprof++;
  }
  bool oom = false;
  const char *p[NA], *q[NE];
  for (int c = 0; c < NA; c++) {
    kf_store__arr_close(&a[c]);
    oom |= a[c].oom;
    p[c] = a[c].p;
  }
  for (int c = 0; c < NE; c++) {
    kf_store__arr_close(&e[c]);
    oom |= e[c].oom;
    q[c] = e[c].p;
  }
  const char *pp[NP];
  for (int c = 0; c < NP; c++) {
    kf_store__arr_close(&f[c]);
    oom |= f[c].oom;
    pp[c] = f[c].p;
  }
  if (oom) {
    rc = kf_store__fail(s, KF_ENOMEM, "out of memory");
    goto out;
  }
  if ((rc = kf_store__exec(s, &ST_REPORT_WRITE, NA, p, false, &r))) goto out;
  long updated = strtol(PQcmdTuples(r), NULL, 10);
  if (updated != (long)m) {
    rc = kf_store__fail(s, KF_EDB, "report updated %ld of %zu tasks",
                        updated, m);
    goto out;
  }
  if (neval > 0)
    rc = kf_store__exec(s, &ST_REPORT_EVAL, NE, q, false, NULL);
  if (!rc && nprof > 0)
    rc = kf_store__exec(s, &ST_REPORT_PROFILE, NP, pp, false, NULL);
out:
  PQclear(r);
  for (int c = 0; c < NA; c++) kf_store__buf_free(&a[c]);
  for (int c = 0; c < NE; c++) kf_store__buf_free(&e[c]);
  for (int c = 0; c < NP; c++) kf_store__buf_free(&f[c]);
  return rc;
}

/* The database refused a row: the reason for the worker, without the
 * bytes that caused it (libpq quotes hex, but say so plainly anyway). */
static void kf_store__refused_by_db(kf_store *s, char *why, size_t len) {
  char clean[144];
  kf_text_sanitize(s->errmsg, strlen(s->errmsg), clean, sizeof clean, 0);
  snprintf(why, len, "the database refused it (SQLSTATE %.5s): %s",
           s->sqlstate, clean);
}

int kf_store_report(kf_store *s, const kf_report *reps, size_t n,
                    kf_verdict *verdicts) {
  return kf_store_report_ex(s, reps, n, verdicts, NULL);
}

int kf_store_report_ex(kf_store *s, const kf_report *reps, size_t n,
                       kf_verdict *verdicts, kf_report_note *notes) {
  int rc = kf_store__ready(s);
  if (rc || n == 0) return rc;
  if (notes)
    for (size_t i = 0; i < n; i++) notes[i].text[0] = '\0';
  kf_store__task *tasks = NULL;
  kf_store__result *results = NULL;
  /* Results this batch adds, searched linearly: accepted reports are
   * checked against them so a repeat later in the batch is DUPLICATE. */
  kf_store__result *added = calloc(n, sizeof *added);
  kf_store__acc *acc = calloc(n, sizeof *acc);
  size_t *refused = calloc(n, sizeof *refused); /* indices into reps */
  char (*why)[200] = calloc(n, sizeof *why);     /* per refused report */
  kf_store__buf ids = {0}, rid = {0}, rerr = {0};
  PGresult *r = NULL;
  bool in_tx = false;
  size_t ntasks = 0, nresults = 0, nacc = 0, nref = 0;
  if (!added || !acc || !refused || !why) {
    rc = kf_store__fail(s, KF_ENOMEM, "out of memory");
    goto out;
  }
  kf_store__arr_open(&ids);
  for (size_t i = 0; i < n; i++) kf_store__arr_i64(&ids, reps[i].task_id);
  kf_store__arr_close(&ids);
  if (ids.oom) {
    rc = kf_store__fail(s, KF_ENOMEM, "out of memory");
    goto out;
  }
  if ((rc = kf_store__begin(s))) goto out;
  in_tx = true;
  const char *p1[] = {ids.p};
  if ((rc = kf_store__exec(s, &ST_REPORT_LOCK, 1, p1, false, &r))) goto out;
  ntasks = (size_t)PQntuples(r);
  tasks = calloc(ntasks ? ntasks : 1, sizeof *tasks);
  if (!tasks) {
    rc = kf_store__fail(s, KF_ENOMEM, "out of memory");
    goto out;
  }
  for (size_t i = 0; i < ntasks; i++) {
    int j = (int)i;
    tasks[i] = (kf_store__task){
        .id = strtoll(PQgetvalue(r, j, 0), NULL, 10),
        .state = kf_store__parse_state(PQgetvalue(r, j, 1)),
        .owner = strtoll(PQgetvalue(r, j, 2), NULL, 10),
        .attempt = (uint32_t)strtoul(PQgetvalue(r, j, 3), NULL, 10),
        .max_attempts = (uint32_t)strtoul(PQgetvalue(r, j, 4), NULL, 10),
        .eval = PQgetvalue(r, j, 5)[0] == 't'};
  }
  PQclear(r);
  r = NULL;
  if ((rc = kf_store__exec(s, &ST_REPORT_RESULTS, 1, p1, false, &r)))
    goto out;
  nresults = (size_t)PQntuples(r);
  results = calloc(nresults ? nresults : 1, sizeof *results);
  if (!results) {
    rc = kf_store__fail(s, KF_ENOMEM, "out of memory");
    goto out;
  }
  for (size_t i = 0; i < nresults; i++) {
    int j = (int)i;
    results[i] = (kf_store__result){
        .task_id = strtoll(PQgetvalue(r, j, 0), NULL, 10),
        .attempt = (uint32_t)strtoul(PQgetvalue(r, j, 1), NULL, 10),
        .worker_id = strtoll(PQgetvalue(r, j, 2), NULL, 10)};
  }
  PQclear(r);
  r = NULL;
  qsort(tasks, ntasks, sizeof *tasks, kf_store__cmp_task);
  qsort(results, nresults, sizeof *results, kf_store__cmp_result);

  for (size_t i = 0; i < n; i++) {
    const kf_report *rp = &reps[i];
    kf_store__task key = {.id = rp->task_id};
    kf_store__task *t =
        bsearch(&key, tasks, ntasks, sizeof *tasks, kf_store__cmp_task);
    if (!t) {
      verdicts[i] = KF_VERDICT_UNKNOWN_TASK;
      continue;
    }
    /* Already stored (or about to be, earlier in this batch)? */
    kf_store__result rk = {rp->task_id, rp->attempt, 0};
    const kf_store__result *have = bsearch(&rk, results, nresults,
                                           sizeof *results,
                                           kf_store__cmp_result);
    if (!have)
      for (size_t k = 0; k < nacc; k++)
        if (added[k].task_id == rp->task_id &&
            added[k].attempt == rp->attempt) {
          have = &added[k];
          break;
        }
    if (have) {
      /* Same worker: a resend (lost reply); changes nothing.  Another
       * worker: that attempt was never this one's. */
      verdicts[i] = have->worker_id == rp->worker_id ? KF_VERDICT_DUPLICATE
                                                     : KF_VERDICT_NOT_HOLDER;
      continue;
    }
    if (rp->attempt == 0 || rp->attempt > t->attempt ||
        (rp->attempt == t->attempt && t->state == T_LEASED &&
         t->owner != rp->worker_id)) {
      verdicts[i] = KF_VERDICT_NOT_HOLDER;
      continue;
    }
    if (rp->attempt < t->attempt || t->state != T_LEASED) {
      /* An older attempt, or the live one after it was reaped. */
      verdicts[i] = KF_VERDICT_STALE;
      continue;
    }
    /* The live lease, held by this worker: accept, unless it cannot be
     * stored -- then the task fails with the reason (a resend of the same
     * bytes could never do better), and the batch goes on without it. */
    bool retry = kf_outcome_name(rp->outcome) &&
                 kf_outcome_retryable(rp->outcome);
    kf_store__tstate next =
        !retry ? T_DONE
               : t->attempt >= t->max_attempts ? T_FAILED : T_QUEUED;
    if (kf_store__report_bad(rp, t->eval && next == T_DONE, why[nref],
                             sizeof why[nref])) {
      verdicts[i] = KF_VERDICT_INVALID;
      refused[nref++] = i;
      t->state = T_FAILED;
      t->owner = 0;
      continue;
    }
    verdicts[i] = KF_VERDICT_ACCEPTED;
    t->state = next;
    t->owner = 0;
    acc[nacc] = (kf_store__acc){
        .i = i,
        .state = next,
        .err = retry ? (rp->reason ? rp->reason : kf_outcome_name(rp->outcome))
                     : NULL,
        .final = !retry,
        .eval = t->eval && next == T_DONE};
    added[nacc++] = (kf_store__result){rp->task_id, rp->attempt,
                                       rp->worker_id};
  }
  if (nacc > 0) {
    /* The batch in one go; if the database refuses its data, find the
     * rows it refuses one by one, each under its own savepoint. */
    if ((rc = kf_store__exec(s, &ST_SAVEPOINT, 0, NULL, false, NULL)))
      goto out;
    rc = kf_store__report_write(s, reps, acc, nacc);
    if (rc && kf_store__data_error(s)) {
      if ((rc = kf_store__exec(s, &ST_SAVEPOINT_UNDO, 0, NULL, false, NULL)))
        goto out;
      for (size_t k = 0; k < nacc; k++) {
        if ((rc = kf_store__exec(s, &ST_SAVEPOINT, 0, NULL, false, NULL)))
          goto out;
        rc = kf_store__report_write(s, reps, &acc[k], 1);
        if (rc && kf_store__data_error(s)) {
          size_t i = acc[k].i;
          kf_store__refused_by_db(s, why[nref], sizeof why[nref]);
          verdicts[i] = KF_VERDICT_INVALID;
          refused[nref++] = i;
          rc = kf_store__exec(s, &ST_SAVEPOINT_UNDO, 0, NULL, false, NULL);
        } else if (!rc) {
          rc = kf_store__exec(s, &ST_SAVEPOINT_RELEASE, 0, NULL, false, NULL);
        }
        if (rc) goto out;
      }
    } else if (rc) {
      goto out;
    }
  }
  if (nref > 0) {
    kf_store__arr_open(&rid);
    kf_store__arr_open(&rerr);
    for (size_t k = 0; k < nref; k++) {
      const kf_report *rp = &reps[refused[k]];
      char err[300];
      snprintf(err, sizeof err, "result of attempt %u refused: %s",
               rp->attempt, why[k]);
      kf_store__arr_i64(&rid, rp->task_id);
      kf_store__arr_text(&rerr, err);
      if (notes)
        kf_strlcpy(notes[refused[k]].text, why[k], sizeof notes[0].text);
    }
    kf_store__arr_close(&rid);
    kf_store__arr_close(&rerr);
    if (rid.oom || rerr.oom) {
      rc = kf_store__fail(s, KF_ENOMEM, "out of memory");
      goto out;
    }
    const char *p2[] = {rid.p, rerr.p};
    if ((rc = kf_store__exec(s, &ST_REPORT_REFUSE, 2, p2, false, NULL)))
      goto out;
  }
  if ((rc = kf_store__commit(s))) goto out;
  in_tx = false;
out:
  if (in_tx) kf_store__rollback(s, rc);
  PQclear(r);
  free(tasks);
  free(results);
  free(added);
  free(acc);
  free(refused);
  free(why);
  kf_store__buf_free(&ids);
  kf_store__buf_free(&rid);
  kf_store__buf_free(&rerr);
  return rc;
}

/* ------------------------------------------------------------- reap -- */

/* One statement: expired leases go back to the queue, or fail once their
 * attempts are used up, keeping the last reported reason after ours. */
static const kf_store__stmt ST_REAP = {
    KF_STMT_REAP,
    "WITH u AS (UPDATE tasks SET"
    " state = CASE WHEN attempt >= max_attempts THEN 'failed'"
    " ELSE 'queued' END::kf_task_state,"
    " last_error = CASE WHEN attempt >= max_attempts THEN"
    " 'lease expired after ' || attempt || ' attempts'"
    " || COALESCE(' (last error: ' || last_error || ')', '')"
    " ELSE last_error END,"
    " finished_at = CASE WHEN attempt >= max_attempts THEN now() END,"
    " lease_owner = NULL, lease_expires = NULL"
    " WHERE state = 'leased' AND lease_expires < now() RETURNING state)"
    " SELECT count(*) FILTER (WHERE state = 'queued'),"
    " count(*) FILTER (WHERE state = 'failed') FROM u"};

int kf_store_reap(kf_store *s, int *requeued, int *failed) {
  int rc = kf_store__ready(s);
  if (rc) return rc;
  PGresult *r;
  if ((rc = kf_store__exec(s, &ST_REAP, 0, NULL, false, &r))) return rc;
  if (requeued) *requeued = atoi(PQgetvalue(r, 0, 0));
  if (failed) *failed = atoi(PQgetvalue(r, 0, 1));
  PQclear(r);
  return 0;
}

/* ---------------------------------------------------------- unlease -- */

/* $1 owners, $2 task ids, $3 attempts: only a lease still exactly as
 * granted goes back, so a task already requeued, reported or leased again
 * is left alone. */
static const kf_store__stmt ST_UNLEASE = {
    KF_STMT_UNLEASE,
    "WITH g AS (SELECT * FROM unnest($1::bigint[], $2::bigint[],"
    " $3::int[]) AS g(owner, id, attempt)),"
    " u AS (UPDATE tasks t SET state = 'queued', lease_owner = NULL,"
    " lease_expires = NULL, attempt = t.attempt - 1 FROM g"
    " WHERE t.id = g.id AND t.state = 'leased' AND t.lease_owner = g.owner"
    " AND t.attempt = g.attempt RETURNING 1)"
    " SELECT count(*) FROM u"};

int kf_store_unlease(kf_store *s, const kf_lease_ref *refs, size_t n,
                     int *undone) {
  if (undone) *undone = 0;
  int rc = kf_store__ready(s);
  if (rc || n == 0) return rc;
  kf_store__buf a[3] = {{0}};
  for (int c = 0; c < 3; c++) kf_store__arr_open(&a[c]);
  for (size_t i = 0; i < n; i++) {
    kf_store__arr_i64(&a[0], refs[i].worker_id);
    kf_store__arr_i64(&a[1], refs[i].task_id);
    kf_store__arr_i64(&a[2], refs[i].attempt);
  }
  for (int c = 0; c < 3; c++) kf_store__arr_close(&a[c]);
  if (a[0].oom || a[1].oom || a[2].oom) {
    rc = kf_store__fail(s, KF_ENOMEM, "out of memory");
  } else {
    const char *p[] = {a[0].p, a[1].p, a[2].p};
    PGresult *r = NULL;
    rc = kf_store__exec(s, &ST_UNLEASE, 3, p, false, &r);
    if (!rc) {
      if (undone) *undone = atoi(PQgetvalue(r, 0, 0));
      PQclear(r);
    }
  }
  for (int c = 0; c < 3; c++) kf_store__buf_free(&a[c]);
  return rc;
}
