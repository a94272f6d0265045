/* SPDX-License-Identifier: Apache-2.0 */
/*
 * common/rpc_limits.c -- counts calls in flight, in total and per peer
 * host, and refuses those over a cap (rpc_limits.h).
 *
 * One mutex around a small chained hash table of peers; an entry lives
 * while its peer has a call in flight, so the table never holds more
 * entries than the total cap allows calls (or than calls in flight, with
 * no total cap).  The queue thread admits, whichever thread frees a call
 * releases.
 */
#include "rpc_limits.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "util.h"

#define BUCKETS 256 /* a power of two */

typedef struct peer {
  struct peer *next;
  uint32_t n;                 /* calls in flight from this host */
  char key[KF_RPC_PEER_KEY];
} peer;

struct kf_rpc_limits {
  pthread_mutex_t mu;
  uint32_t max_calls, max_per_peer; /* 0: no cap */
  uint32_t total;                   /* guarded by mu, as is buckets */
  peer *buckets[BUCKETS];
};

int kf_rpc_limits_new(uint32_t max_calls, uint32_t max_per_peer,
                      kf_rpc_limits **out) {
  *out = NULL;
  kf_rpc_limits *l = calloc(1, sizeof *l);
  if (!l) return KF_ENOMEM;
  if (pthread_mutex_init(&l->mu, NULL) != 0) {
    free(l);
    return KF_ENOMEM;
  }
  l->max_calls = max_calls;
  l->max_per_peer = max_per_peer;
  *out = l;
  return 0;
}

void kf_rpc_limits_free(kf_rpc_limits *l) {
  if (!l) return;
  for (size_t i = 0; i < BUCKETS; i++) {
    peer *p = l->buckets[i];
    while (p) {
      peer *next = p->next;
      free(p);
      p = next;
    }
  }
  pthread_mutex_destroy(&l->mu);
  free(l);
}

void kf_rpc_limits_peer_key(const char *peer_s, char *key) {
  const char *p = peer_s ? peer_s : "";
  /* "ipv4:1.2.3.4:5555", "ipv6:[::1]:5555": drop the scheme and port.
   * Anything else ("unix:/path", "") is kept whole, cut to fit. */
  const char *host = p;
  size_t n = strlen(p);
  if (strncmp(p, "ipv4:", 5) == 0 || strncmp(p, "ipv6:", 5) == 0) {
    host = p + 5;
    const char *colon = strrchr(host, ':');
    const char *bracket = strrchr(host, ']');
    if (colon && (!bracket || colon > bracket)) n = (size_t)(colon - host);
    else n = strlen(host);
  }
  if (n >= KF_RPC_PEER_KEY) n = KF_RPC_PEER_KEY - 1;
  memcpy(key, host, n);
  key[n] = '\0';
}

static size_t bucket_of(const char *key) {
  return (size_t)(kf_fnv1a(KF_FNV1A_INIT, key, strlen(key)) & (BUCKETS - 1));
}

/* The entry for key, or NULL; with mu held. */
static peer **find(kf_rpc_limits *l, const char *key) {
  peer **pp = &l->buckets[bucket_of(key)];
  while (*pp && strcmp((*pp)->key, key) != 0) pp = &(*pp)->next;
  return pp;
}

int kf_rpc_limits_admit(kf_rpc_limits *l, const char *key, char *why,
                        size_t whylen) {
  int rc = 0;
  pthread_mutex_lock(&l->mu);
  peer **pp = find(l, key);
  if (l->max_calls && l->total >= l->max_calls) {
    rc = kf_seterr(KF_EBUSY, why, whylen,
                   "total cap reached: %u calls in flight; try again later",
                   l->total);
  } else if (l->max_per_peer && *pp && (*pp)->n >= l->max_per_peer) {
    rc = kf_seterr(KF_EBUSY, why, whylen,
                   "per-peer cap reached: %u calls in flight from %s; try"
                   " again later", (*pp)->n, key);
  } else {
    if (!*pp) {
      peer *p = calloc(1, sizeof *p);
      if (!p) {
        pthread_mutex_unlock(&l->mu);
        return kf_seterr(KF_ENOMEM, why, whylen, "out of memory");
      }
      snprintf(p->key, sizeof p->key, "%s", key);
      *pp = p;
    }
    (*pp)->n++;
    l->total++;
  }
  pthread_mutex_unlock(&l->mu);
  return rc;
}

void kf_rpc_limits_release(kf_rpc_limits *l, const char *key) {
  pthread_mutex_lock(&l->mu);
  peer **pp = find(l, key);
  if (*pp) {
    if (--(*pp)->n == 0) {
      peer *p = *pp;
      *pp = p->next;
      free(p);
    }
    if (l->total) l->total--;
  }
  pthread_mutex_unlock(&l->mu);
}

uint32_t kf_rpc_limits_in_flight(kf_rpc_limits *l, const char *key) {
  pthread_mutex_lock(&l->mu);
  uint32_t n = l->total;
  if (key) {
    peer **pp = find(l, key);
    n = *pp ? (*pp)->n : 0;
  }
  pthread_mutex_unlock(&l->mu);
  return n;
}
