/* SPDX-License-Identifier: Apache-2.0 */
/*
 * common/outcome.h -- what happened to one evaluation.  Not an error code:
 * a kernel that crashes is a result to store.  The same table is mirrored in
 * proto/kernelfleet.proto (enum Outcome) and db/migrations (type kf_outcome);
 * tests/unit/test-common-outcome.c checks that the three agree.
 *
 * XX(NAME, proto value, sql label, retryable)
 * retryable: the worker, not the candidate, failed; the task is requeued.
 */
#ifndef KF_OUTCOME_H
#define KF_OUTCOME_H

#define KF_OUTCOME_MAP(XX)                                                    \
  XX(OK, 1, "ok", 0)                                                          \
  XX(COMPILE_ERROR, 2, "compile_error", 0)                                    \
  XX(COMPILE_TIMEOUT, 3, "compile_timeout", 0)                                \
  XX(LINK_REJECTED, 4, "link_rejected", 0)                                    \
  XX(CRASH, 5, "crash", 0)                                                    \
  XX(TIMEOUT, 6, "timeout", 0)                                                \
  XX(WRONG_ANSWER, 7, "wrong_answer", 0)                                      \
  XX(UNWRITTEN_OUTPUT, 8, "unwritten_output", 0)                              \
  XX(OUT_OF_BOUNDS, 9, "out_of_bounds", 0)                                    \
  XX(NONDETERMINISTIC, 10, "nondeterministic", 0)                             \
  XX(TOO_FAST, 11, "too_fast", 0)                                             \
  XX(SANDBOX_VIOLATION, 12, "sandbox_violation", 0)                           \
  XX(RESOURCE_LIMIT, 13, "resource_limit", 0)                                 \
  XX(SPEC_ERROR, 14, "spec_error", 0)                                         \
  XX(INFRA_ERROR, 15, "infra_error", 1)

typedef enum {
  KF_OUTCOME_UNSPECIFIED = 0,
#define XX(name, val, sql, retry) KF_OUTCOME_##name = (val),
  KF_OUTCOME_MAP(XX)
#undef XX
} kf_outcome;

/* SQL label ("ok", "wrong_answer"...); NULL for values outside the table. */
const char *kf_outcome_name(int outcome);
/* Inverse of kf_outcome_name; 0 (UNSPECIFIED) when unknown. */
int kf_outcome_parse(const char *name);
/* 1 when the failure is the worker's and the task should run again. */
int kf_outcome_retryable(int outcome);

#endif
