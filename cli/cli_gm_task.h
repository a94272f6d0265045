/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cli/cli_gm_task.h -- GPU MODE's task.yml, as `kf import gpumode` reads
 * it (cli_gm_task.c): the `tests` and `benchmarks` lists of the keyword
 * arguments generate_input() is called with.  Only the list asked for is
 * walked; each entry must be a mapping of plain values (numbers, strings,
 * booleans).  Bounded: 256 KiB of file, nesting 32 deep, 100,000 nodes
 * with aliases expanded.
 */
#ifndef KF_CLI_GM_TASK_H
#define KF_CLI_GM_TASK_H

#include <stddef.h>

struct cJSON;

/* text (len bytes of YAML) parsed, and its list named list: 0 with *out
 * (a JSON array, the caller deletes it; NULL when the text has no such
 * key), or -1 with err ("line 3: ..."). */
int kf_cli__gm_task_parse(const char *text, size_t len, const char *list,
                          struct cJSON **out, char *err, size_t errlen);

/* The same for DIR/task.yml: 0 with *out, 1 when DIR has no task.yml,
 * -1 with err (naming the file). */
int kf_cli__gm_task_list(const char *dir, const char *list, struct cJSON **out,
                         char *err, size_t errlen);

/* The keyword arguments of one entry -- which is "benchmarks:N" or
 * "tests:N", NULL for the largest benchmark (the greatest product of its
 * numbers >= 1 other than the seed; the last of equals): 0 with *case_json (malloc'd compact JSON) and said ("task.yml
 * benchmarks:4 (of 5)"); 1 when DIR has no task.yml and which is NULL;
 * -1 with err. */
int kf_cli__gm_task_case(const char *dir, const char *which, char **case_json,
                         char *said, size_t saidlen, char *err, size_t errlen);

#endif
