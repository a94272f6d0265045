/* SPDX-License-Identifier: Apache-2.0 */
/* common/outcome.c -- lookups over KF_OUTCOME_MAP. */
#include "outcome.h"

#include <string.h>

const char *kf_outcome_name(int outcome) {
  switch (outcome) {
#define XX(name, val, sql, retry) case val: return sql;
  KF_OUTCOME_MAP(XX)
#undef XX
  default: return NULL;
  }
}

int kf_outcome_parse(const char *name) {
#define XX(n, val, sql, retry) if (strcmp(name, sql) == 0) return val;
  KF_OUTCOME_MAP(XX)
#undef XX
  return KF_OUTCOME_UNSPECIFIED;
}

int kf_outcome_retryable(int outcome) {
  switch (outcome) {
#define XX(name, val, sql, retry) case val: return retry;
  KF_OUTCOME_MAP(XX)
#undef XX
  default: return 0;
  }
}
