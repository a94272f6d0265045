/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/fuzz_gm_task.c -- libFuzzer target: cli/cli_gm_task.c, the
 * reader of GPU MODE's task.yml, a file that comes with a problem from
 * elsewhere (`kf import gpumode DIR`).
 *
 * Input: a task.yml.  Besides "no crash, no leak, bounded memory" (its
 * aliases may expand exponentially: the walk is bounded), it checks what
 * kf_cli__gm_task_parse promises: a list it returns is an array of
 * mappings of numbers, strings and booleans, and a refusal says why.
 */
#include <stdint.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

#include "cli_gm_task.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const char *const lists[] = {"tests", "benchmarks"};
  for (int k = 0; k < 2; k++) {
    cJSON *out = NULL;
    char err[400] = "";
    int rc = kf_cli__gm_task_parse((const char *)data, size, lists[k], &out,
                                   err, sizeof err);
    if (rc != 0 && rc != -1) abort();
    if (rc == -1 && (out || !err[0])) abort();
    if (rc == 0 && out) {
      if (!cJSON_IsArray(out)) abort();
      const cJSON *c, *v;
      cJSON_ArrayForEach(c, out) {
        if (!cJSON_IsObject(c)) abort();
        cJSON_ArrayForEach(v, c)
          if (!cJSON_IsNumber(v) && !cJSON_IsString(v) && !cJSON_IsBool(v))
            abort();
      }
    }
    cJSON_Delete(out);
  }
  return 0;
}
