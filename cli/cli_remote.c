/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cli/cli_remote.c -- `kf submit` and `kf status`: talk to a running
 * coordinator (--coordinator/--token-file, or $KF_COORDINATOR/$KF_TOKEN).
 */
#include <cjson/cJSON.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_internal.h"
#include "err.h"
#include "kernelfleet.pb-c.h"
#include "rpc.h"
#include "util.h"

int kf_cli_submit(int argc, char **argv) {
  kf_cli__remote o;
  kf_cli__remote_init(&o);
  const char *kind = NULL, *payload = "", *payload_file = NULL;
  uint64_t count = 1, max_attempts = 0, timeout_ms = 0;
  static const struct option opts[] = {
      {"coordinator", required_argument, 0, 'c'},
      KF_CLI__REMOTE_OPTIONS,
      {"kind", required_argument, 0, 'k'},
      {"payload", required_argument, 0, 'p'},
      {"payload-file", required_argument, 0, 'f'},
      {"count", required_argument, 0, 'n'},
      {"max-attempts", required_argument, 0, 'a'},
      {"timeout-ms", required_argument, 0, 'T'},
      {"json", no_argument, 0, 'j'},
      {"help", no_argument, 0, 'h'},
      {0, 0, 0, 0},
  };
  char **av = kf_cli__shift_argv(argc, argv, "kf submit");
  if (!av) return KF_EXIT_FAIL;
  optind = 0;
  int c, bad = 0;
  while (!bad && (c = getopt_long(argc + 1, av, "h", opts, NULL)) != -1) {
    switch (c) {
    case 'c': o.target = optarg; break;
    case 'k': kind = optarg; break;
    case 'p': payload = optarg; break;
    case 'f': payload_file = optarg; break;
    case 'j': o.json = true; break;
    case 'n':
      if (kf_parse_u64(optarg, &count) || count < 1 || count > 1000000) {
        fprintf(stderr, "kf submit: --count '%s': expected 1..1000000\n", optarg);
        bad = 1;
      }
      break;
    case 'a':
      if (kf_parse_u64(optarg, &max_attempts) || max_attempts < 1 ||
          max_attempts > 100) {
        fprintf(stderr, "kf submit: --max-attempts '%s': expected 1..100\n",
                optarg);
        bad = 1;
      }
      break;
    case 'T':
      if (kf_parse_u64(optarg, &timeout_ms) || timeout_ms > 86400000) {
        fprintf(stderr, "kf submit: --timeout-ms '%s': expected 0..86400000\n",
                optarg);
        bad = 1;
      }
      break;
    case 'h':
      printf("usage: kf submit --kind KIND [--payload TEXT | --payload-file F]\n"
             "                 [--count N] [--max-attempts N] [--timeout-ms N]\n"
             "                 [--coordinator HOST:PORT] [--token-file PATH] [--json]\n"
             "Submits COUNT copies of one task; prints the new task ids.\n"
             "In the payload, {i} is replaced by the copy's index.\n");
      free(av);
      return KF_EXIT_OK;
    default:
      if (!kf_cli__remote_opt(&o, c, optarg)) bad = 1;
    }
  }
  free(av);
  if (bad) return KF_EXIT_USAGE;
  if (!kind) {
    fprintf(stderr, "kf submit: --kind is required\n");
    return KF_EXIT_USAGE;
  }
  char *file_buf = NULL;
  if (payload_file) {
    char err[512];
    if (kf_read_file(payload_file, 16u << 20, &file_buf, NULL, err, sizeof err)) {
      fprintf(stderr, "kf submit: %s\n", err);
      return KF_EXIT_USAGE;
    }
    payload = file_buf;
  }
  kf_rpc_client *cli = NULL;
  int rc = kf_cli__open(&o, "kf", &cli);
  if (rc) {
    free(file_buf);
    return rc;
  }
  const char *mark = strstr(payload, "{i}");
  int exit_code = KF_EXIT_OK;
  if (o.json) printf("{\"task_ids\": [");
  for (uint64_t base = 0; base < count && exit_code == KF_EXIT_OK;) {
    size_t n = count - base > 1000 ? 1000 : (size_t)(count - base);
    Kernelfleet__TaskSpec *specs = calloc(n, sizeof *specs);
    Kernelfleet__TaskSpec **ptrs = calloc(n, sizeof *ptrs);
    char **texts = calloc(n, sizeof *texts);
    if (!specs || !ptrs || !texts) {
      free(specs); free(ptrs); free(texts);
      exit_code = KF_EXIT_FAIL;
      break;
    }
    for (size_t i = 0; i < n; i++) {
      kernelfleet__task_spec__init(&specs[i]);
      specs[i].kind = (char *)kind;
      if (mark) {
        size_t len = strlen(payload) + 24;
        texts[i] = malloc(len);
        if (texts[i])
          snprintf(texts[i], len, "%.*s%llu%s", (int)(mark - payload), payload,
                   (unsigned long long)(base + i), mark + 3);
      }
      const char *p = texts[i] ? texts[i] : payload;
      specs[i].payload.data = (uint8_t *)p;
      specs[i].payload.len = strlen(p);
      specs[i].max_attempts = (uint32_t)max_attempts;
      specs[i].timeout_ms = (uint32_t)timeout_ms;
      ptrs[i] = &specs[i];
    }
    Kernelfleet__SubmitTasksRequest req = KERNELFLEET__SUBMIT_TASKS_REQUEST__INIT;
    req.tasks = ptrs;
    req.n_tasks = n;
    ProtobufCMessage *resp = NULL;
    char err[512];
    int r = kf_rpc_client_call_sync(cli, "/kernelfleet.Coordinator/SubmitTasks",
                                    &req.base,
                                    &kernelfleet__submit_tasks_response__descriptor,
                                    30000, &resp, err, sizeof err);
    if (r) {
      fprintf(stderr, "kf submit: %s: %s\n", kf_strerror(r), err);
      exit_code = kf_cli__exit_for(r);
    } else {
      const Kernelfleet__SubmitTasksResponse *s = (const void *)resp;
      for (size_t i = 0; i < s->n_task_ids; i++)
        printf(o.json ? "%s%lld" : "%s%lld\n",
               o.json && (base + i) ? ", " : "", (long long)s->task_ids[i]);
    }
    kf_rpc_free(resp);
    for (size_t i = 0; i < n; i++) free(texts[i]);
    free(texts); free(specs); free(ptrs);
    base += n;
  }
  if (o.json) printf("]}\n");
  kf_rpc_client_close(cli);
  free(file_buf);
  return exit_code;
}

int kf_cli_status(int argc, char **argv) {
  kf_cli__remote o;
  kf_cli__remote_init(&o);
  static const struct option opts[] = {
      {"coordinator", required_argument, 0, 'c'},
      KF_CLI__REMOTE_OPTIONS,
      {"json", no_argument, 0, 'j'},
      {"help", no_argument, 0, 'h'},
      {0, 0, 0, 0},
  };
  char **av = kf_cli__shift_argv(argc, argv, "kf status");
  if (!av) return KF_EXIT_FAIL;
  optind = 0;
  int c;
  while ((c = getopt_long(argc + 1, av, "h", opts, NULL)) != -1) {
    switch (c) {
    case 'c': o.target = optarg; break;
    case 'j': o.json = true; break;
    case 'h':
      printf("usage: kf status [--coordinator HOST:PORT] [--token-file PATH] [--json]\n"
             "Task counts by state and the workers the coordinator knows.\n");
      free(av);
      return KF_EXIT_OK;
    default:
      if (!kf_cli__remote_opt(&o, c, optarg)) {
        free(av);
        return KF_EXIT_USAGE;
      }
    }
  }
  free(av);
  kf_rpc_client *cli = NULL;
  int rc = kf_cli__open(&o, "kf", &cli);
  if (rc) return rc;
  Kernelfleet__GetStatusRequest req = KERNELFLEET__GET_STATUS_REQUEST__INIT;
  ProtobufCMessage *resp = NULL;
  char err[512];
  int r = kf_rpc_client_call_sync(cli, "/kernelfleet.Coordinator/GetStatus",
                                  &req.base,
                                  &kernelfleet__get_status_response__descriptor,
                                  10000, &resp, err, sizeof err);
  kf_rpc_client_close(cli);
  if (r) {
    fprintf(stderr, "kf status: %s: %s\n", kf_strerror(r), err);
    return kf_cli__exit_for(r);
  }
  const Kernelfleet__GetStatusResponse *s = (const void *)resp;
  if (o.json) {
    /* cJSON escapes what a worker put in its name; the text form strips
     * it (kf_cli__clean). */
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "queued", (double)s->queued);
    cJSON_AddNumberToObject(j, "leased", (double)s->leased);
    cJSON_AddNumberToObject(j, "done", (double)s->done);
    cJSON_AddNumberToObject(j, "failed", (double)s->failed);
    cJSON *ws = cJSON_AddArrayToObject(j, "workers");
    for (size_t i = 0; ws && i < s->n_workers; i++) {
      cJSON *w = cJSON_CreateObject();
      if (!w) break;
      cJSON_AddItemToArray(ws, w);
      cJSON_AddNumberToObject(w, "id", (double)s->workers[i]->worker_id);
      cJSON_AddStringToObject(w, "name", s->workers[i]->name);
      cJSON_AddBoolToObject(w, "alive", s->workers[i]->alive);
      cJSON_AddNumberToObject(w, "leased", s->workers[i]->leased);
    }
    kf_cli__json_print(stdout, j);
  } else {
    printf("queued %llu  leased %llu  done %llu  failed %llu\n",
           (unsigned long long)s->queued, (unsigned long long)s->leased,
           (unsigned long long)s->done, (unsigned long long)s->failed);
    for (size_t i = 0; i < s->n_workers; i++)
      printf("worker %lld %s %s leased=%u\n",
             (long long)s->workers[i]->worker_id,
             kf_cli__clean(s->workers[i]->name, 64),
             s->workers[i]->alive ? "alive" : "silent", s->workers[i]->leased);
  }
  kf_rpc_free(resp);
  return KF_EXIT_OK;
}
