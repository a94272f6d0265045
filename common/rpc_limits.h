/* SPDX-License-Identifier: Apache-2.0 */
/*
 * common/rpc_limits.h -- how many calls a server holds at once, in total
 * and per peer host.
 *
 * Part of the rpc module (rpc_server.c is its only user outside tests);
 * no gRPC types cross it.  A call counts from its arrival (token checked,
 * before its request is unpacked) until its answer has been sent; beyond
 * a cap it is answered RESOURCE_EXHAUSTED at once, with a message that
 * names the cap, and never reaches a handler.
 *
 * A peer is the host part of gRPC's peer string ("ipv4:10.0.0.7:51234"
 * and "ipv4:10.0.0.7:40000" are one peer, "10.0.0.7"): a client cannot
 * escape the per-peer cap by opening more connections.  Every unix socket
 * client is one peer.
 *
 * Threads: every function may be called from any thread (one mutex).
 */
#ifndef KF_RPC_LIMITS_H
#define KF_RPC_LIMITS_H

#include <stddef.h>
#include <stdint.h>

typedef struct kf_rpc_limits kf_rpc_limits;

/* Longest peer key kept, bytes with the NUL (an IPv6 host fits). */
#define KF_RPC_PEER_KEY 72

/* max_calls: calls in flight in total, count; max_per_peer: calls in
 * flight from one peer host, count.  0 means no cap.  Returns 0 or
 * KF_ENOMEM; *out is NULL on failure. */
int kf_rpc_limits_new(uint32_t max_calls, uint32_t max_per_peer,
                      kf_rpc_limits **out);
/* NULL-safe.  Calls still admitted are forgotten. */
void kf_rpc_limits_free(kf_rpc_limits *l);

/* Writes peer's host (see above) into key (KF_RPC_PEER_KEY bytes). */
void kf_rpc_limits_peer_key(const char *peer, char *key);

/* Counts one more call from key (a kf_rpc_limits_peer_key result).
 * Returns 0 when admitted -- the caller then owes exactly one
 * kf_rpc_limits_release with the same key -- or KF_EBUSY with the cap
 * that refused it in why ("per-peer cap reached: 64 calls in flight
 * from 127.0.0.1"), or KF_ENOMEM. */
int kf_rpc_limits_admit(kf_rpc_limits *l, const char *key, char *why,
                        size_t whylen);
/* Forgets one admitted call from key. */
void kf_rpc_limits_release(kf_rpc_limits *l, const char *key);

/* Calls admitted now: from key's host, or in total when key is NULL. */
uint32_t kf_rpc_limits_in_flight(kf_rpc_limits *l, const char *key);

#endif
