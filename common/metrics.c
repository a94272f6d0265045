/* SPDX-License-Identifier: Apache-2.0 */
/*
 * common/metrics.c -- Prometheus text format: the buffer, escaping,
 * samples and histograms (metrics.h).
 *
 * Escaping follows the exposition format: in HELP text backslash and
 * newline; in label values also the double quote.  Metric and label names
 * are ours (literals in the code), never escaped.
 */
#include "metrics.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void kf_metrics_buf_free(kf_metrics_buf *b) {
  free(b->p);
  memset(b, 0, sizeof *b);
}

static bool reserve(kf_metrics_buf *b, size_t more) {
  if (b->oom) return false;
  if (b->len + more + 1 <= b->cap) return true;
  size_t ncap = b->cap ? b->cap : 4096;
  while (ncap < b->len + more + 1) ncap *= 2;
  char *np = realloc(b->p, ncap);
  if (!np) {
    b->oom = true;
    return false;
  }
  b->p = np;
  b->cap = ncap;
  return true;
}

static void put(kf_metrics_buf *b, const char *s, size_t n) {
  if (!reserve(b, n)) return;
  memcpy(b->p + b->len, s, n);
  b->len += n;
  b->p[b->len] = '\0';
}

void kf_metrics_printf(kf_metrics_buf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char small[256];
  int n = vsnprintf(small, sizeof small, fmt, ap);
  va_end(ap);
  if (n < 0) {
    b->oom = true;
    return;
  }
  if ((size_t)n < sizeof small) {
    put(b, small, (size_t)n);
    return;
  }
  if (!reserve(b, (size_t)n)) return;
  va_start(ap, fmt);
  vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
}

void kf_metrics_family(kf_metrics_buf *b, const char *name, const char *type,
                       const char *help) {
  kf_metrics_printf(b, "# HELP %s ", name);
  for (const char *c = help; *c; c++) {
    if (*c == '\\') put(b, "\\\\", 2);
    else if (*c == '\n') put(b, "\\n", 2);
    else put(b, c, 1);
  }
  kf_metrics_printf(b, "\n# TYPE %s %s\n", name, type);
}

const char *kf_metrics_labels(char *out, size_t outlen, ...) {
  va_list ap;
  va_start(ap, outlen);
  size_t k = 0;
  if (outlen) out[0] = '\0';
  const char *name;
  bool first = true;
  while ((name = va_arg(ap, const char *))) {
    const char *v = va_arg(ap, const char *);
    if (!v) v = "";
    /* name="...": room for the name, '=', two quotes and a comma */
    size_t need = strlen(name) + 4;
    if (k + need >= outlen) break;
    k += (size_t)snprintf(out + k, outlen - k, "%s%s=\"", first ? "" : ",",
                          name);
    first = false;
    for (const char *c = v; *c; c++) {
      const char *esc = *c == '\\' ? "\\\\" : *c == '"' ? "\\\""
                        : *c == '\n' ? "\\n" : NULL;
      size_t n = esc ? 2 : 1;
      /* leave room for the closing quote and NUL */
      if (k + n + 2 > outlen) break;
      /* never cut a UTF-8 sequence: stop before a lead byte that does
       * not fit with its continuation bytes */
      unsigned char u = (unsigned char)*c;
      size_t seq = u >= 0xF0 ? 4 : u >= 0xE0 ? 3 : u >= 0xC0 ? 2 : 1;
      if (!esc && k + seq + 2 > outlen) break;
      if (esc) {
        memcpy(out + k, esc, 2);
      } else {
        out[k] = *c;
      }
      k += n;
    }
    out[k++] = '"';
    out[k] = '\0';
  }
  va_end(ap);
  return out;
}

static void put_value(kf_metrics_buf *b, double v) {
  if (isnan(v)) kf_metrics_printf(b, "NaN");
  else if (isinf(v)) kf_metrics_printf(b, v > 0 ? "+Inf" : "-Inf");
  else kf_metrics_printf(b, "%.17g", v);
}

void kf_metrics_sample(kf_metrics_buf *b, const char *name,
                       const char *labels, double v) {
  if (labels && *labels) kf_metrics_printf(b, "%s{%s} ", name, labels);
  else kf_metrics_printf(b, "%s ", name);
  put_value(b, v);
  put(b, "\n", 1);
}

int kf_metrics_hist_init(kf_metrics_hist *h, const double *le, size_t n) {
  memset(h, 0, sizeof *h);
  if (n > KF_METRICS_MAX_BUCKETS) return -1;
  for (size_t i = 0; i < n; i++)
    if (!isfinite(le[i]) || (i && le[i] <= le[i - 1])) return -1;
  memcpy(h->le, le, n * sizeof *le);
  h->n = n;
  return 0;
}

void kf_metrics_hist_observe(kf_metrics_hist *h, double v) {
  size_t i = 0;
  while (i < h->n && v > h->le[i]) i++;
  h->in[i]++;
  h->count++;
  h->sum += v;
}

void kf_metrics_hist_render(kf_metrics_buf *b, const char *name,
                            const char *labels, const kf_metrics_hist *h) {
  const char *sep = labels && *labels ? "," : "";
  if (!labels) labels = "";
  uint64_t cum = 0;
  for (size_t i = 0; i <= h->n; i++) {
    cum += h->in[i];
    if (i < h->n)
      kf_metrics_printf(b, "%s_bucket{%s%sle=\"%g\"} %llu\n", name, labels,
                        sep, h->le[i], (unsigned long long)cum);
    else
      kf_metrics_printf(b, "%s_bucket{%s%sle=\"+Inf\"} %llu\n", name, labels,
                        sep, (unsigned long long)cum);
  }
  char n2[128];
  snprintf(n2, sizeof n2, "%s_sum", name);
  kf_metrics_sample(b, n2, labels, h->sum);
  snprintf(n2, sizeof n2, "%s_count", name);
  kf_metrics_sample(b, n2, labels, (double)h->count);
}
