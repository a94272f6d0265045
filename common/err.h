/* SPDX-License-Identifier: Apache-2.0 */
/*
 * common/err.h -- the one table of KernelFleet error codes.
 *
 * Functions return 0 on success or a negative KF_E* code; longer text (a
 * server's message, a libpq error) lives on the object that failed or in a
 * caller-supplied buffer.  A candidate kernel that fails to compile or gives
 * wrong answers is NOT an error: it is a kf_outcome (common/outcome.h).
 */
#ifndef KF_ERR_H
#define KF_ERR_H

#include <stddef.h>

/* XX(name, value, text).  rpc_status.c maps each to a gRPC status. */
#define KF_ERR_MAP(XX)                                                        \
  XX(EINVAL, -1, "invalid argument")                                          \
  XX(ENOMEM, -2, "out of memory")                                             \
  XX(EIO, -3, "input/output error")                                           \
  XX(ENOTFOUND, -4, "not found")                                              \
  XX(EAUTH, -5, "unauthenticated")                                            \
  XX(EPERM, -6, "permission denied")                                          \
  XX(ETOOBIG, -7, "message too large")                                        \
  XX(EUNAVAIL, -8, "service unavailable")                                     \
  XX(ETIMEDOUT, -9, "deadline exceeded")                                      \
  XX(ECANCELED, -10, "cancelled")                                             \
  XX(EDB, -11, "database error")                                              \
  XX(ESTALE, -12, "stale lease")                                              \
  XX(EEXIST, -13, "already exists")                                           \
  XX(ESPAWN, -14, "cannot start child process")                              \
  XX(EPROTO, -15, "malformed message")                                        \
  XX(ESPEC, -16, "invalid problem spec")                                      \
  XX(EINTERNAL, -17, "internal error")                                        \
  XX(ESTATE, -18, "not allowed in the current state")                         \
  XX(EBUSY, -19, "too busy; try again later")

typedef enum {
  KF_OK = 0,
#define XX(name, val, text) KF_##name = (val),
  KF_ERR_MAP(XX)
#undef XX
} kf_err;

/* Static text for a code; never NULL ("unknown error" for foreign values). */
const char *kf_strerror(int err);
/* The code's name without prefix, e.g. "EINVAL"; never NULL. */
const char *kf_err_name(int err);

/* printf into a caller buffer; safe with buf == NULL or len == 0.  Returns
 * `err` so callers can write `return kf_seterr(err, buf, len, "...")`. */
int kf_seterr(int err, char *buf, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
