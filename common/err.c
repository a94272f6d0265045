/* SPDX-License-Identifier: Apache-2.0 */
/* common/err.c -- names and texts for the KF_ERR_MAP table. */
#include "err.h"

#include <stdarg.h>
#include <stdio.h>

const char *kf_strerror(int err) {
  switch (err) {
  case 0: return "success";
#define XX(name, val, text) case KF_##name: return text;
  KF_ERR_MAP(XX)
#undef XX
  default: return "unknown error";
  }
}

const char *kf_err_name(int err) {
  switch (err) {
  case 0: return "OK";
#define XX(name, val, text) case KF_##name: return #name;
  KF_ERR_MAP(XX)
#undef XX
  default: return "EUNKNOWN";
  }
}

int kf_seterr(int err, char *buf, size_t len, const char *fmt, ...) {
  if (buf && len) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, len, fmt, ap);
    va_end(ap);
  }
  return err;
}
