/* SPDX-License-Identifier: Apache-2.0 */
/*
 * harness/cuda/usage.c -- reads ptxas's resource report (nvcc
 * --resource-usage, printed on the compiler's stderr) into one record per
 * kernel entry:
 *
 *   ptxas info    : Compiling entry function '_Z1kPf' for 'sm_90a'
 *   ptxas info    : Function properties for _Z1kPf
 *       432 bytes stack frame, 580 bytes spill stores, 584 bytes spill loads
 *   ptxas info    : Used 24 registers, used 0 barriers, 400 bytes smem
 *
 * Only entry functions (kernels) are recorded; device functions' property
 * lines are skipped.  Pure text processing with no dependencies, so the
 * unit tests link it directly.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_eval.h"

static unsigned long num_before(const char *line, const char *unit) {
  const char *p = strstr(line, unit);
  if (!p) return 0;
  while (p > line && p[-1] == ' ') p--;
  const char *q = p;
  while (q > line && q[-1] >= '0' && q[-1] <= '9') q--;
  return q < p ? strtoul(q, NULL, 10) : 0;
}

static int find(kf_harness_kres *out, int n, const char *name) {
  for (int i = 0; i < n; i++)
    if (!strcmp(out[i].kernel, name)) return i;
  return -1;
}

int kf_harness__parse_resource_usage(const char *text, kf_harness_kres *out,
                                     int max) {
  int n = 0, cur = -1;
  const char *p = text;
  while (p && *p) {
    const char *eol = strchr(p, '\n');
    size_t len = eol ? (size_t)(eol - p) : strlen(p);
    char line[1024];
    if (len >= sizeof line) len = sizeof line - 1;
    memcpy(line, p, len);
    line[len] = '\0';
    p = eol ? eol + 1 : NULL;

    const char *k;
    if ((k = strstr(line, "Compiling entry function '"))) {
      k += strlen("Compiling entry function '");
      size_t m = strcspn(k, "'");
      char name[sizeof out[0].kernel];
      if (m >= sizeof name) m = sizeof name - 1;
      memcpy(name, k, m);
      name[m] = '\0';
      cur = find(out, n, name);
      if (cur < 0 && n < max) {
        cur = n++;
        memset(&out[cur], 0, sizeof out[cur]);
        memcpy(out[cur].kernel, name, m + 1);
      }
    } else if ((k = strstr(line, "Function properties for "))) {
      k += strlen("Function properties for ");
      char name[sizeof out[0].kernel];
      size_t m = strcspn(k, " \r");
      if (m >= sizeof name) m = sizeof name - 1;
      memcpy(name, k, m);
      name[m] = '\0';
      cur = find(out, n, name); /* -1 for device functions: skipped */
    } else if (cur >= 0 && strstr(line, "bytes stack frame")) {
      out[cur].stack_bytes = (uint32_t)num_before(line, "bytes stack frame");
      out[cur].spill_bytes = (uint32_t)num_before(line, "bytes spill stores");
      out[cur].spill_load_bytes = (uint32_t)num_before(line, "bytes spill loads");
    } else if (cur >= 0 && strstr(line, "Used ") && strstr(line, "registers")) {
      out[cur].registers = (uint32_t)num_before(line, "registers");
      out[cur].shared_bytes = (uint32_t)num_before(line, "bytes smem");
      cur = -1; /* the last line of an entry's report */
    }
  }
  return n;
}
