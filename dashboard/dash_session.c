/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dashboard/dash_session.c -- the login sessions: a random id (the
 * cookie's value) mapped to the coordinator credential it was opened
 * with, in this process's memory only.  The browser never holds the token
 * after the login form; a restart of the dashboard logs everyone out.
 *
 * HTTP requests run on libmicrohttpd's threads, so one mutex guards the
 * table.  Ids are compared in constant time: a near-miss id must not be
 * found faster than a far one.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "dash_internal.h"
#include "err.h"
#include "util.h"

typedef struct {
  bool used;
  char sid[KF_DASH_SID_LEN + 1];
  char token[KF_DASH_TOKEN_MAX + 1];
  uint64_t last_ms;
} session;

struct kf_dash_sessions {
  pthread_mutex_t mu;
  session *v;
  size_t cap;
  unsigned idle_ms;
};

bool kf_dash__token_ok(const char *t) {
  size_t n = t ? strlen(t) : 0;
  if (n == 0 || n > KF_DASH_TOKEN_MAX) return false;
  for (size_t i = 0; i < n; i++)
    if (t[i] <= 0x20 || t[i] >= 0x7f) return false;
  return true;
}

kf_dash_sessions *kf_dash__sessions_new(size_t cap, unsigned idle_ms) {
  kf_dash_sessions *t = calloc(1, sizeof *t);
  if (!t) return NULL;
  t->v = calloc(cap, sizeof *t->v);
  if (!t->v || pthread_mutex_init(&t->mu, NULL)) {
    free(t->v);
    free(t);
    return NULL;
  }
  t->cap = cap;
  t->idle_ms = idle_ms;
  return t;
}

void kf_dash__sessions_free(kf_dash_sessions *t) {
  if (!t) return;
  /* the tokens are credentials: leave none behind in freed memory */
  explicit_bzero(t->v, t->cap * sizeof *t->v);
  free(t->v);
  pthread_mutex_destroy(&t->mu);
  free(t);
}

static bool same_sid(const char *a, const char *b) {
  unsigned char d = 0;
  for (size_t i = 0; i < KF_DASH_SID_LEN; i++)
    d |= (unsigned char)(a[i] ^ b[i]);
  return d == 0;
}

static bool sid_shape_ok(const char *sid) {
  if (!sid || strlen(sid) != KF_DASH_SID_LEN) return false;
  for (size_t i = 0; i < KF_DASH_SID_LEN; i++)
    if (!strchr("0123456789abcdef", sid[i])) return false;
  return true;
}

int kf_dash__session_add(kf_dash_sessions *t, const char *token,
                         char sid[KF_DASH_SID_LEN + 1]) {
  if (!kf_dash__token_ok(token)) return KF_EINVAL;
  unsigned char raw[KF_DASH_SID_LEN / 2];
  size_t got = 0;
  while (got < sizeof raw) {
    ssize_t n = getrandom(raw + got, sizeof raw - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return KF_EIO;
    got += (size_t)n;
  }
  for (size_t i = 0; i < sizeof raw; i++)
    snprintf(sid + 2 * i, 3, "%02x", raw[i]);
  explicit_bzero(raw, sizeof raw);
  uint64_t now = kf_now_ms();
  pthread_mutex_lock(&t->mu);
  size_t slot = 0;
  uint64_t oldest = UINT64_MAX;
  for (size_t i = 0; i < t->cap; i++) {
    session *s = &t->v[i];
    if (!s->used || now - s->last_ms > t->idle_ms) {
      slot = i;
      break;
    }
    if (s->last_ms < oldest) {
      oldest = s->last_ms;
      slot = i;
    }
  }
  session *s = &t->v[slot];
  s->used = true;
  memcpy(s->sid, sid, KF_DASH_SID_LEN + 1);
  snprintf(s->token, sizeof s->token, "%s", token);
  s->last_ms = now;
  pthread_mutex_unlock(&t->mu);
  return 0;
}

bool kf_dash__session_token(kf_dash_sessions *t, const char *sid, char *tok,
                            size_t tlen) {
  if (!sid_shape_ok(sid)) return false;
  uint64_t now = kf_now_ms();
  bool found = false;
  pthread_mutex_lock(&t->mu);
  for (size_t i = 0; i < t->cap; i++) {
    session *s = &t->v[i];
    if (!s->used || !same_sid(s->sid, sid)) continue;
    if (now - s->last_ms > t->idle_ms) {
      explicit_bzero(s, sizeof *s);
      break;
    }
    s->last_ms = now;
    snprintf(tok, tlen, "%s", s->token);
    found = true;
    break;
  }
  pthread_mutex_unlock(&t->mu);
  return found;
}

void kf_dash__session_drop(kf_dash_sessions *t, const char *sid) {
  if (!sid_shape_ok(sid)) return;
  pthread_mutex_lock(&t->mu);
  for (size_t i = 0; i < t->cap; i++)
    if (t->v[i].used && same_sid(t->v[i].sid, sid))
      explicit_bzero(&t->v[i], sizeof t->v[i]);
  pthread_mutex_unlock(&t->mu);
}
