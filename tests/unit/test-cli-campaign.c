/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/test-cli-campaign.c -- `kf campaign` and `kf run --coordinator`
 * against a fake coordinator with canned campaign answers.
 *
 * Runs the real kf binary ($KF_BIN_DIR/kf) as a child and checks its exit
 * codes, its JSON (parsed with cJSON) and the files it writes; the fake
 * records what kf sent.  No PostgreSQL, no workers: the point is the CLI's
 * contract (exit codes, --json shapes, the best-kernel file), independent
 * of the search.
 *
 * Canned campaigns:
 *   7  "running" for the first 2 GetCampaign calls, "showdown" for the
 *      third, then "done" with a best kernel 2.5x faster, timed in the
 *      final showdown (300 repetitions); 7 evaluations, 2 of them
 *      failures.
 *   9  "done" without a verified kernel (GetBest: NOT_FOUND).
 *   11 like 7 once done, but every name in it hostile: terminal escapes,
 *      a right-to-left override, bytes that are not UTF-8.
 *   13 "done", a CUDA campaign of problems/cuda/rmsnorm whose best is its
 *      block_regs.cu (THREADS=256, VPT=2) on an sm_90a class: for
 *      `export --format torch-ext`, whose package is then compiled (nvcc,
 *      and g++ against torch's headers) where those exist.
 *   anything else: NOT_FOUND.
 * GetStatus lists one worker with such a name.
 *
 * `kf cluster` always starts its own coordinator, from its own directory:
 * for its summary a copy of kf runs beside stand-in kf-coordinator and
 * kf-worker scripts, the first of which hands kf cluster a second fake
 * (started with the token kf cluster made).  That run starts a private
 * PostgreSQL, as every kf cluster does (its worker credential is stored
 * there).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
// cmocka after the headers it needs
#include <cmocka.h>
#include <cjson/cJSON.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <uv.h>

#include "err.h"
#include "kernelfleet.pb-c.h"
#include "rpc.h"
#include "test-nvcc.h"

#define TOKEN "cli-test-token"
#define PATH(m) "/kernelfleet.Coordinator/" m

static const char *kBestSource =
    "#include \"kf_candidate.h\"\n"
    "int kf_launch(const kf_args *a) {\n"
    "  const float *x = a->inputs[0].data;\n"
    "  float *y = a->outputs[0].data;\n"
    "  for (int64_t i = 0; i < a->outputs[0].numel; i += BLOCK)\n"
    "    for (int64_t j = i; j < i + BLOCK && j < a->outputs[0].numel; j++)\n"
    "      y[j] = x[j] * LANES;\n"
    "  return 0;\n"
    "}\n";

typedef struct {
  uv_loop_t loop;
  uv_thread_t thread;
  uv_async_t stop;
  kf_rpc_server *srv;
  char target[64];
  atomic_int polls7;      /* GetCampaign(7) calls */
  atomic_int stops;       /* StopCampaign calls */
  atomic_int creates;
  /* What the last CreateCampaign carried (loop thread writes, the test
   * reads after the kf child exited). */
  char problem[64];
  size_t spec_len, n_templates, n_knobs0;
  uint32_t budget_evals, budget_seconds, population;
  uint64_t seed;
  char language[16];
  bool fresh;
  uint32_t showdown_top;
} fake;

static fake F;

static Kernelfleet__Knob kBlock = {PROTOBUF_C_MESSAGE_INIT(
                                       &kernelfleet__knob__descriptor),
                                   "BLOCK", "64"};
static Kernelfleet__Knob kLanes = {PROTOBUF_C_MESSAGE_INIT(
                                       &kernelfleet__knob__descriptor),
                                   "LANES", "4"};
static Kernelfleet__Knob *kKnobs[] = {&kBlock, &kLanes};

/* campaign 13's best: read from the source tree before the fake starts */
static char *g_cuda_src = NULL;
/* and its problem's spec.json, which GetCampaign sends with_problem (the
 * export checks --problem DIR against it) */
static char *g_cuda_spec = NULL;
static Kernelfleet__Knob kThreads = {PROTOBUF_C_MESSAGE_INIT(
                                         &kernelfleet__knob__descriptor),
                                     "THREADS", "256"},
                         kVpt = {PROTOBUF_C_MESSAGE_INIT(
                                     &kernelfleet__knob__descriptor),
                                 "VPT", "2"};
static Kernelfleet__Knob *kCudaKnobs[] = {&kThreads, &kVpt};

/* What someone hostile names things: a screen clear, colour, a title
 * change, a right-to-left override (U+202E), invalid UTF-8. */
#define EVIL "ev\x1b[2J\x1b[31mil\x1b]0;pwned\x07\xe2\x80\xae" "cba\xff"

static void fill_eval(Kernelfleet__EvaluationSummary *e,
                      Kernelfleet__DeviceClass *dc, int i) {
  kernelfleet__evaluation_summary__init(e);
  e->candidate_id = 10 + i;
  e->task_id = 100 + i;
  e->template_name = i % 2 ? "three_pass" : "online";
  e->knobs = kKnobs;
  e->n_knobs = 2;
  e->proposer = "evolution";
  e->device_class = dc;
  if (i >= 5) {
    e->outcome = i == 5 ? KERNELFLEET__OUTCOME__OUTCOME_WRONG_ANSWER
                        : KERNELFLEET__OUTCOME__OUTCOME_COMPILE_ERROR;
    e->stage = i == 5 ? "verify" : "compile";
    e->reason = i == 5 ? "y[3] = 0.5, want 0.25 (size M=3 N=7, dist wide)"
                       : "error: 'BLOCK' undeclared\nsecond line";
    return;
  }
  e->outcome = KERNELFLEET__OUTCOME__OUTCOME_OK;
  e->stage = "time";
  e->reason = "";
  e->time_ns_median = 1000.0 * (1 + i);
  e->time_ns_spread = 0.02;
  e->ref_time_ns_median = 2500.0;
  e->speedup = 2500.0 / e->time_ns_median;
  e->roofline_fraction = 0.4 / (1 + i);
  e->repetitions = i == 0 ? 300 : 100;
  e->showdown = i == 0;
  e->measurements = i == 2 ? 3 : 1;
  if (i < 2) { /* torch.compile timed in these two evaluations only */
    e->compile_time_ns_median = 1800;
    e->speedup_compile = 1800 / e->time_ns_median;
  }
  if (i == 0) { /* and max-autotune in the first only */
    e->max_autotune_time_ns_median = 2400;
    e->speedup_max_autotune = 2400 / e->time_ns_median;
  }
}

static void h_create(kf_rpc_call *call, const ProtobufCMessage *req,
                     void *data) {
  fake *f = data;
  const Kernelfleet__CreateCampaignRequest *q = (const void *)req;
  snprintf(f->problem, sizeof f->problem, "%s", q->problem);
  snprintf(f->language, sizeof f->language, "%s", q->language);
  f->spec_len = q->spec_json.len;
  f->n_templates = q->n_templates;
  f->n_knobs0 = q->n_templates ? q->templates[0]->n_knobs : 0;
  f->budget_evals = q->budget_evals;
  f->budget_seconds = q->budget_seconds;
  f->population = q->population;
  f->seed = q->search_seed;
  f->fresh = q->fresh;
  f->showdown_top = q->showdown_top;
  atomic_fetch_add(&f->creates, 1);
  Kernelfleet__CreateCampaignResponse r =
      KERNELFLEET__CREATE_CAMPAIGN_RESPONSE__INIT;
  r.campaign_id = 7;
  kf_rpc_call_reply(call, &r.base);
}

static void h_get(kf_rpc_call *call, const ProtobufCMessage *req, void *data) {
  fake *f = data;
  const Kernelfleet__GetCampaignRequest *q = (const void *)req;
  if (q->campaign_id != 7 && q->campaign_id != 9 && q->campaign_id != 11 &&
      q->campaign_id != 13) {
    kf_rpc_call_fail(call, KF_ENOTFOUND, "no such campaign");
    return;
  }
  bool evil = q->campaign_id == 11;
  bool won = q->campaign_id == 7 || evil;
  int polls = q->campaign_id == 7 ? atomic_fetch_add(&f->polls7, 1) + 1 : 100;
  Kernelfleet__DeviceClass dc = KERNELFLEET__DEVICE_CLASS__INIT;
  dc.kind = KERNELFLEET__DEVICE_KIND__DEVICE_KIND_CPU;
  dc.model = "Test CPU";
  dc.isa = "x86-64-v3";
  Kernelfleet__Campaign c = KERNELFLEET__CAMPAIGN__INIT;
  c.campaign_id = q->campaign_id;
  c.name = "softmax";
  c.problem = "softmax";
  c.state = polls > 3 ? "done" : polls == 3 ? "showdown" : "running";
  c.showdown_top = 5;
  c.budget_evals = 7;
  c.budget_seconds = 600;
  c.device_class = &dc;
  Kernelfleet__OutcomeCount ok = KERNELFLEET__OUTCOME_COUNT__INIT,
                            wa = KERNELFLEET__OUTCOME_COUNT__INIT,
                            ce = KERNELFLEET__OUTCOME_COUNT__INIT;
  ok.outcome = KERNELFLEET__OUTCOME__OUTCOME_OK;
  ok.count = 5;
  wa.outcome = KERNELFLEET__OUTCOME__OUTCOME_WRONG_ANSWER;
  wa.count = 1;
  ce.outcome = KERNELFLEET__OUTCOME__OUTCOME_COMPILE_ERROR;
  ce.count = 1;
  Kernelfleet__OutcomeCount *ocs[] = {&ok, &wa, &ce};
  Kernelfleet__CampaignStatus st = KERNELFLEET__CAMPAIGN_STATUS__INIT;
  st.campaign = &c;
  st.evals_done = polls > 2 ? 7 : 3 * (uint32_t)polls;
  st.evals_ok = won ? 5 : 0;
  st.evals_running = polls > 2 ? 0 : 2;
  st.elapsed_ms = 42000;
  st.ref_time_ns = 2500;
  if (won) {
    st.best_speedup = 2.5;
    st.best_time_ns = 1000;
    st.best_candidate_id = 10;
    st.roofline_fraction = 0.4;
    st.outcomes = ocs;
    st.n_outcomes = 3;
  }
  st.stop_reason = polls > 2 ? "budget: 7 evaluations" : "";
  if (won && polls > 3) {
    st.showdown = "done";
    st.best_from_showdown = true;
    st.best_repetitions = 300;
    st.best_time_ns_spread = 0.02;
  }
  Kernelfleet__EvaluationSummary ev[5], *evp[5];
  size_t ntop = won ? (q->top < 5 ? q->top : 5) : 0;
  for (size_t i = 0; i < ntop; i++) {
    fill_eval(&ev[i], &dc, (int)i);
    if (evil) ev[i].template_name = EVIL;
    evp[i] = &ev[i];
  }
  Kernelfleet__GetCampaignResponse r = KERNELFLEET__GET_CAMPAIGN_RESPONSE__INIT;
  if (q->campaign_id == 13) {
    c.name = c.problem = "rmsnorm";
    dc.kind = KERNELFLEET__DEVICE_KIND__DEVICE_KIND_CUDA;
    dc.model = "NVIDIA H100 80GB HBM3";
    dc.isa = "sm_90a";
    if (q->with_problem && g_cuda_spec) {
      r.spec_json.data = (uint8_t *)g_cuda_spec;
      r.spec_json.len = strlen(g_cuda_spec);
    }
  }
  if (evil) {
    c.name = EVIL;
    c.problem = EVIL;
    st.stop_reason = EVIL;
    dc.model = EVIL;
    dc.isa = EVIL;
  }
  r.status = &st;
  r.top = evp;
  r.n_top = ntop;
  kf_rpc_call_reply(call, &r.base);
}

static void h_list(kf_rpc_call *call, const ProtobufCMessage *req,
                   void *data) {
  const Kernelfleet__ListEvaluationsRequest *q = (const void *)req;
  Kernelfleet__DeviceClass dc = KERNELFLEET__DEVICE_CLASS__INIT;
  dc.kind = KERNELFLEET__DEVICE_KIND__DEVICE_KIND_CPU;
  dc.model = "Test CPU";
  Kernelfleet__EvaluationSummary ev[7], *evp[7];
  size_t n = 0;
  bool evil = q->campaign_id == 11;
  for (int i = 0; (q->campaign_id == 7 || evil) && i < 7; i++) {
    if (q->failures_only && i < 5) continue;
    fill_eval(&ev[n], &dc, i);
    if (evil) {
      ev[n].stage = EVIL;
      ev[n].reason = EVIL "\n" EVIL;
    }
    evp[n] = &ev[n];
    n++;
  }
  Kernelfleet__ListEvaluationsResponse r =
      KERNELFLEET__LIST_EVALUATIONS_RESPONSE__INIT;
  r.evaluations = evp;
  r.n_evaluations = n;
  kf_rpc_call_reply(call, &r.base);
}

static void h_best(kf_rpc_call *call, const ProtobufCMessage *req,
                   void *data) {
  const Kernelfleet__GetBestRequest *q = (const void *)req;
  if (q->campaign_id != 7 && q->campaign_id != 13) {
    kf_rpc_call_fail(call, KF_ENOTFOUND, "no verified kernel");
    return;
  }
  Kernelfleet__DeviceClass dc = KERNELFLEET__DEVICE_CLASS__INIT;
  dc.kind = KERNELFLEET__DEVICE_KIND__DEVICE_KIND_CPU;
  dc.model = "Test CPU";
  Kernelfleet__EvaluationSummary e;
  fill_eval(&e, &dc, 0);
  Kernelfleet__GetBestResponse r = KERNELFLEET__GET_BEST_RESPONSE__INIT;
  r.best = &e;
  r.source = (char *)kBestSource;
  r.language = "c";
  if (q->campaign_id == 13) {
    dc.kind = KERNELFLEET__DEVICE_KIND__DEVICE_KIND_CUDA;
    dc.model = "NVIDIA H100 80GB HBM3";
    dc.isa = "sm_90a";
    e.template_name = "block_regs";
    e.knobs = kCudaKnobs;
    e.n_knobs = 2;
    r.source = g_cuda_src ? g_cuda_src : "";
    r.language = "cuda";
  }
  kf_rpc_call_reply(call, &r.base);
}

static void h_stop(kf_rpc_call *call, const ProtobufCMessage *req,
                   void *data) {
  fake *f = data;
  const Kernelfleet__StopCampaignRequest *q = (const void *)req;
  if (q->campaign_id != 7) {
    kf_rpc_call_fail(call, KF_ENOTFOUND, "no such campaign");
    return;
  }
  atomic_fetch_add(&f->stops, 1);
  Kernelfleet__StopCampaignResponse r =
      KERNELFLEET__STOP_CAMPAIGN_RESPONSE__INIT;
  kf_rpc_call_reply(call, &r.base);
}

static void h_status(kf_rpc_call *call, const ProtobufCMessage *req,
                     void *data) {
  Kernelfleet__WorkerStatus w = KERNELFLEET__WORKER_STATUS__INIT;
  w.worker_id = 3;
  w.name = EVIL;
  w.alive = true;
  Kernelfleet__WorkerStatus *wp[] = {&w};
  Kernelfleet__GetStatusResponse r = KERNELFLEET__GET_STATUS_RESPONSE__INIT;
  r.done = 5;
  r.workers = wp;
  r.n_workers = 1;
  kf_rpc_call_reply(call, &r.base);
}

/* kf cluster's checksum tasks: ids 1..n, nothing run. */
static void h_submit(kf_rpc_call *call, const ProtobufCMessage *req,
                     void *data) {
  (void)data;
  const Kernelfleet__SubmitTasksRequest *q = (const void *)req;
  int64_t *ids = calloc(q->n_tasks ? q->n_tasks : 1, sizeof *ids);
  if (!ids) {
    kf_rpc_call_fail(call, KF_ENOMEM, "out of memory");
    return;
  }
  for (size_t i = 0; i < q->n_tasks; i++) ids[i] = (int64_t)i + 1;
  Kernelfleet__SubmitTasksResponse r = KERNELFLEET__SUBMIT_TASKS_RESPONSE__INIT;
  r.task_ids = ids;
  r.n_task_ids = q->n_tasks;
  kf_rpc_call_reply(call, &r.base);
  free(ids);
}

static const kf_rpc_method kMethods[] = {
    {PATH("GetStatus"), &kernelfleet__get_status_request__descriptor,
     h_status, 0},
    {PATH("SubmitTasks"), &kernelfleet__submit_tasks_request__descriptor,
     h_submit, 0},
    {PATH("CreateCampaign"), &kernelfleet__create_campaign_request__descriptor,
     h_create, 0},
    {PATH("GetCampaign"), &kernelfleet__get_campaign_request__descriptor,
     h_get, 0},
    {PATH("ListEvaluations"),
     &kernelfleet__list_evaluations_request__descriptor, h_list, 0},
    {PATH("GetBest"), &kernelfleet__get_best_request__descriptor, h_best, 0},
    {PATH("StopCampaign"), &kernelfleet__stop_campaign_request__descriptor,
     h_stop, 0},
};

static void stop_cb(uv_async_t *h) {
  fake *f = h->data;
  kf_rpc_server_stop(f->srv);
  f->srv = NULL;
  uv_close((uv_handle_t *)h, NULL);
}

static void loop_thread(void *arg) { uv_run(&((fake *)arg)->loop, UV_RUN_DEFAULT); }

/* Credentials reach kf by file (mode 600) or environment, never argv. */
#define TOKEN_FILE "/tmp/kf-cli-test.token"
#define WRONG_FILE "/tmp/kf-cli-test.wrong"
#define OPEN_FILE "/tmp/kf-cli-test.open"

static void write_token(const char *path, const char *text, mode_t mode) {
  unlink(path);
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, mode);
  assert_true(fd >= 0);
  assert_int_equal(fchmod(fd, mode), 0); /* whatever the umask says */
  assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
  assert_int_equal(close(fd), 0);
}

static void fake_start(fake *f, const char *token) {
  memset(f, 0, sizeof *f);
  assert_int_equal(uv_loop_init(&f->loop), 0);
  assert_int_equal(uv_async_init(&f->loop, &f->stop, stop_cb), 0);
  f->stop.data = f;
  kf_rpc_server_opts o = {.loop = &f->loop, .listen_addr = "127.0.0.1:0",
                          .token = token, .methods = kMethods,
                          .n_methods = sizeof kMethods / sizeof *kMethods,
                          .data = f};
  char err[256];
  int port = 0;
  if (kf_rpc_server_start(&o, &f->srv, &port, err, sizeof err))
    fail_msg("server: %s", err);
  snprintf(f->target, sizeof f->target, "127.0.0.1:%d", port);
  assert_int_equal(uv_thread_create(&f->thread, loop_thread, f), 0);
}

static void fake_stop(fake *f) {
  uv_async_send(&f->stop);
  uv_thread_join(&f->thread);
  uv_run(&f->loop, UV_RUN_DEFAULT);
  assert_int_equal(uv_loop_close(&f->loop), 0);
}

static int setup(void **state) {
  write_token(TOKEN_FILE, TOKEN "\n", 0600);
  write_token(WRONG_FILE, "wrong\n", 0600);
  write_token(OPEN_FILE, TOKEN "\n", 0644);
  unsetenv("KF_TOKEN");
  unsetenv("KF_TOKEN_FILE");
  fake_start(&F, TOKEN);
  return 0;
}

static int teardown(void **state) {
  fake_stop(&F);
  return 0;
}

/* ------------------------------------------------------------ helpers -- */

static const char *bin_dir(void) {
  const char *d = getenv("KF_BIN_DIR");
  if (!d) fail_msg("KF_BIN_DIR is not set");
  return d;
}

static const char *src_dir(void) {
  const char *d = getenv("KF_SOURCE_DIR");
  if (!d) fail_msg("KF_SOURCE_DIR is not set");
  return d;
}

/* Runs `kf ARGS` through sh with stdout captured into out (stderr to
 * /tmp/kf-cli-test.err); returns the exit code. */
__attribute__((format(printf, 3, 4)))
static int kf(char *out, size_t outlen, const char *fmt, ...) {
  char args[2048], cmd[4096];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(args, sizeof args, fmt, ap);
  va_end(ap);
  snprintf(cmd, sizeof cmd, "'%s/kf' %s 2>>/tmp/kf-cli-test.err </dev/null",
           bin_dir(), args);
  FILE *p = popen(cmd, "r");
  assert_non_null(p);
  size_t n = fread(out, 1, outlen - 1, p);
  out[n] = '\0';
  int st = pclose(p);
  assert_true(WIFEXITED(st));
  return WEXITSTATUS(st);
}

static char g_out[1 << 16];

#define REMOTE "--coordinator %s --token-file " TOKEN_FILE

static cJSON *json_of(const char *text) {
  cJSON *j = cJSON_Parse(text);
  if (!j) fail_msg("not JSON: %s", text);
  return j;
}

static double num(const cJSON *j, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, k);
  if (!cJSON_IsNumber(v)) fail_msg("no number %s", k);
  return v->valuedouble;
}

static const char *str(const cJSON *j, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, k);
  if (!cJSON_IsString(v)) fail_msg("no string %s", k);
  return v->valuestring;
}

/* -------------------------------------------------------------- tests -- */

static void test_submit(void **state) {
  int rc = kf(g_out, sizeof g_out, "campaign submit '%s/problems/cpu/softmax' "
              REMOTE, src_dir(), F.target);
  assert_int_equal(rc, 0);
  assert_string_equal(g_out, "7\n");
  assert_int_equal(atomic_load(&F.creates), 1);
  assert_string_equal(F.problem, "softmax");
  assert_string_equal(F.language, "c");
  assert_true(F.spec_len > 100);
  assert_int_equal(F.n_templates, 2);
  assert_int_equal(F.n_knobs0, 1);
  assert_int_equal(F.budget_evals, 60);      /* documented defaults */
  assert_int_equal(F.budget_seconds, 600);
  assert_false(F.fresh);
  assert_int_equal(F.showdown_top, 0);       /* the coordinator's 5 */

  rc = kf(g_out, sizeof g_out,
          "campaign submit '%s/problems/cpu/softmax' --evals 5 --minutes 2 "
          "--population 4 --seed 99 --json " REMOTE, src_dir(), F.target);
  assert_int_equal(rc, 0);
  cJSON *j = json_of(g_out);
  assert_int_equal((int)num(j, "campaign_id"), 7);
  assert_string_equal(str(j, "problem"), "softmax");
  cJSON_Delete(j);
  assert_int_equal(F.budget_evals, 5);
  assert_int_equal(F.budget_seconds, 120);
  assert_int_equal(F.population, 4);
  assert_int_equal(F.seed, 99);

  rc = kf(g_out, sizeof g_out,
          "campaign submit '%s/problems/cpu/softmax' --fresh --showdown 3 "
          REMOTE, src_dir(), F.target);
  assert_int_equal(rc, 0);
  assert_true(F.fresh);
  assert_int_equal(F.showdown_top, 3);
  assert_int_equal(kf(g_out, sizeof g_out, "campaign submit '%s/problems/"
                      "cpu/softmax' --showdown 0 " REMOTE, src_dir(),
                      F.target),
                   2);
}

static void test_submit_bad_spec(void **state) {
  char dir[] = "/tmp/kf-cli-badXXXXXX", cmd[512];
  assert_non_null(mkdtemp(dir));
  snprintf(cmd, sizeof cmd, "cp -r '%s/problems/cpu/softmax/.' %s && "
           "sed -i 's/\"f32\", \"shape\"/\"f33\", \"shape\"/' %s/spec.json",
           src_dir(), dir, dir);
  assert_int_equal(system(cmd), 0);
  int before = atomic_load(&F.creates);
  int rc = kf(g_out, sizeof g_out, "campaign submit %s " REMOTE, dir,
              F.target);
  assert_int_equal(rc, 2);
  assert_int_equal(atomic_load(&F.creates), before); /* nothing sent */
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  assert_int_equal(system(cmd), 0);
}

static void test_status(void **state) {
  int rc = kf(g_out, sizeof g_out, "campaign status 9 --json " REMOTE,
              F.target);
  assert_int_equal(rc, 0);
  cJSON *j = json_of(g_out);
  assert_string_equal(str(j, "state"), "done");
  assert_false(cJSON_IsTrue(cJSON_GetObjectItem(j, "found_faster")));
  cJSON_Delete(j);

  rc = kf(g_out, sizeof g_out, "campaign status 7 --top 3 --json " REMOTE,
          F.target);
  assert_int_equal(rc, 0);
  j = json_of(g_out);
  assert_int_equal((int)num(j, "campaign_id"), 7);
  assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "top")), 3);
  const cJSON *t0 = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "top"), 0);
  assert_string_equal(str(t0, "outcome"), "ok");
  assert_string_equal(str(cJSON_GetObjectItem(t0, "knobs"), "BLOCK"), "64");
  assert_string_equal(str(cJSON_GetObjectItem(j, "device_class"), "kind"),
                      "cpu");
  /* the torch.compile baseline where it was timed, null where not */
  assert_true(num(t0, "speedup_compile") > 1.79 &&
              num(t0, "speedup_compile") < 1.81);
  const cJSON *t2 = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "top"), 2);
  assert_true(cJSON_IsNull(cJSON_GetObjectItem(t2, "speedup_compile")));
  assert_true(num(t0, "speedup_max_autotune") > 2.39 &&
              num(t0, "speedup_max_autotune") < 2.41);
  assert_true(cJSON_IsNull(cJSON_GetObjectItem(t2, "speedup_max_autotune")));
  cJSON_Delete(j);

  /* The table: top candidates and failures with an example reason. */
  rc = kf(g_out, sizeof g_out, "campaign status 7 " REMOTE, F.target);
  assert_int_equal(rc, 0);
  assert_non_null(strstr(g_out, "BLOCK=64 LANES=4"));
  assert_non_null(strstr(g_out, "vs compile"));
  assert_non_null(strstr(g_out, "1.80x"));
  assert_non_null(strstr(g_out, "vs max-at"));
  assert_non_null(strstr(g_out, "1.80x      2.40x")); /* one row, both */
  assert_non_null(strstr(g_out, "wrong_answer"));
  assert_non_null(strstr(g_out, "y[3] = 0.5"));
  assert_non_null(strstr(g_out, "error: 'BLOCK' undeclared second line"));

  assert_int_equal(kf(g_out, sizeof g_out, "campaign status 8 " REMOTE,
                      F.target), 2);
  assert_int_equal(kf(g_out, sizeof g_out, "campaign status x " REMOTE,
                      F.target), 2);
}

/* What kf prints of hostile names holds no terminal escape, no control
 * character, no bidi override and no invalid UTF-8 -- but still the
 * visible text.  (The JSON forms are data: escaped by cJSON, checked to
 * parse and to keep the name.) */
static void assert_printable(const char *out, const char *what) {
  if (strchr(out, '\x1b')) fail_msg("%s prints an ESC: %s", what, out);
  if (strstr(out, "\xe2\x80\xae"))
    fail_msg("%s prints a right-to-left override", what);
  if (strchr(out, '\x07')) fail_msg("%s prints a BEL", what);
  for (const unsigned char *p = (const unsigned char *)out; *p; p++)
    if (*p == 0xff) fail_msg("%s prints a 0xff byte", what);
}

/* Writes text to path, mode 0755. */
static void write_script(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  assert_int_equal(fputs(text, f) >= 0, 1);
  assert_int_equal(fclose(f), 0);
  assert_int_equal(chmod(path, 0755), 0);
}

/* Runs `kf cluster --tasks 3 --workers 1` from a directory holding a copy
 * of kf and stand-ins for kf-coordinator (it writes the token kf cluster
 * gave it, waits for the port of a fake started with that token and hands
 * it over) and kf-worker (it sleeps); stdout into out; the exit code. */
static int kf_cluster_vs_fake(char *out, size_t outlen) {
  char dir[] = "/tmp/kf-cli-clusterXXXXXX", cmd[4096], path[256];
  char script[2048];
  assert_non_null(mkdtemp(dir));
  /* PostgreSQL runs as its own user and must enter the directory */
  assert_int_equal(chmod(dir, 0755), 0);
  snprintf(cmd, sizeof cmd, "cp '%s/kf' %s/kf", bin_dir(), dir);
  assert_int_equal(system(cmd), 0);
  snprintf(script, sizeof script,
           "#!/bin/sh\n"
           "# stands in for kf-coordinator: hands kf cluster the test's fake\n"
           "pf=\n"
           "while [ $# -gt 0 ]; do\n"
           "  [ \"$1\" = --port-file ] && pf=$2\n"
           "  shift\n"
           "done\n"
           "umask 077\n"
           "printf '%%s' \"$KF_TOKEN\" > %s/token.tmp\n"
           "/bin/mv %s/token.tmp %s/token\n"
           "i=0\n"
           "while [ ! -s %s/port ] && [ $i -lt 1200 ]; do\n"
           "  /bin/sleep 0.1; i=$((i + 1))\n"
           "done\n"
           "/bin/cp %s/port \"$pf.tmp\" && /bin/mv \"$pf.tmp\" \"$pf\"\n"
           "exec /bin/sleep 600\n",
           dir, dir, dir, dir, dir);
  snprintf(path, sizeof path, "%s/kf-coordinator", dir);
  write_script(path, script);
  snprintf(path, sizeof path, "%s/kf-worker", dir);
  write_script(path, "#!/bin/sh\nexec /bin/sleep 600\n");

  /* its exit code also into DIR/exit, so a kf cluster that never starts
   * its coordinator fails the test at once */
  snprintf(cmd, sizeof cmd, "%s/kf cluster --tasks 3 --workers 1 --data "
           "%s/data 2>>/tmp/kf-cli-test.err </dev/null; echo $? >%s/exit",
           dir, dir, dir);
  FILE *p = popen(cmd, "r");
  assert_non_null(p);
  /* kf cluster first starts PostgreSQL (initdb): minutes on a loaded
   * machine, at worst */
  char token[256] = "", done[256];
  snprintf(path, sizeof path, "%s/token", dir);
  snprintf(done, sizeof done, "%s/exit", dir);
  for (int i = 0; i < 6000 && !token[0] && access(done, F_OK) != 0; i++) {
    FILE *t = fopen(path, "r");
    if (t) {
      token[fread(token, 1, sizeof token - 1, t)] = '\0';
      fclose(t);
    }
    if (!token[0]) usleep(50000);
  }
  if (!token[0]) fail_msg("kf cluster never started its coordinator");
  static fake G;
  fake_start(&G, token);
  snprintf(path, sizeof path, "%s/port.tmp", dir);
  FILE *pf = fopen(path, "w");
  assert_non_null(pf);
  fprintf(pf, "%s\n", strchr(G.target, ':') + 1);
  assert_int_equal(fclose(pf), 0);
  snprintf(cmd, sizeof cmd, "mv %s/port.tmp %s/port", dir, dir);
  assert_int_equal(system(cmd), 0);
  size_t n = fread(out, 1, outlen - 1, p);
  out[n] = '\0';
  int st = pclose(p);
  fake_stop(&G);
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  assert_int_equal(system(cmd), 0);
  assert_true(WIFEXITED(st));
  return WEXITSTATUS(st);
}

static void test_hostile_names(void **state) {
  int rc = kf(g_out, sizeof g_out, "campaign status 11 --top 5 " REMOTE,
              F.target);
  assert_int_equal(rc, 0);
  assert_printable(g_out, "kf campaign status");
  assert_non_null(strstr(g_out, "evilcba\\xff"));
  assert_non_null(strstr(g_out, "wrong_answer"));
  rc = kf(g_out, sizeof g_out, "campaign watch 11 " REMOTE, F.target);
  assert_printable(g_out, "kf campaign watch");
  rc = kf(g_out, sizeof g_out, "status " REMOTE, F.target);
  assert_int_equal(rc, 0);
  assert_printable(g_out, "kf status");
  assert_non_null(strstr(g_out, "worker 3 evilcba\\xff alive"));
  rc = kf(g_out, sizeof g_out, "status --json " REMOTE, F.target);
  assert_int_equal(rc, 0);
  cJSON *j = json_of(g_out);
  const cJSON *w0 = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "workers"), 0);
  assert_non_null(w0);
  assert_non_null(strstr(str(w0, "name"), "ev\x1b[2J"));
  cJSON_Delete(j);
  assert_null(strchr(g_out, '\x1b')); /* escaped as \u001b */
  /* kf cluster's summary lists the coordinator's workers by name too */
  rc = kf_cluster_vs_fake(g_out, sizeof g_out);
  assert_int_equal(rc, 0);
  assert_printable(g_out, "kf cluster");
  assert_non_null(strstr(g_out, "evilcba\\xff"));
}

static void test_watch(void **state) {
  atomic_store(&F.polls7, 0);
  int rc = kf(g_out, sizeof g_out, "campaign watch 7 --json " REMOTE,
              F.target);
  assert_int_equal(rc, 0);
  /* it polled until done, through the showdown */
  assert_true(atomic_load(&F.polls7) >= 4);
  cJSON *j = json_of(g_out);
  assert_string_equal(str(j, "state"), "done");
  assert_int_equal((int)num(j, "evals_done"), 7);
  assert_string_equal(str(j, "showdown"), "done");
  assert_true(cJSON_IsTrue(cJSON_GetObjectItem(j, "best_from_showdown")));
  assert_int_equal((int)num(j, "best_repetitions"), 300);
  cJSON_Delete(j);
  /* Ended without a faster kernel: exit 1. */
  assert_int_equal(kf(g_out, sizeof g_out, "campaign watch 9 " REMOTE,
                      F.target), 1);
}

static void test_best(void **state) {
  char path[] = "/tmp/kf-cli-bestXXXXXX", file[128], cmd[1024];
  assert_non_null(mkdtemp(path));
  snprintf(file, sizeof file, "%s/softmax.best.c", path);
  int rc = kf(g_out, sizeof g_out, "campaign best 7 --out %s --json " REMOTE,
              file, F.target);
  assert_int_equal(rc, 0);
  cJSON *j = json_of(g_out);
  assert_int_equal((int)num(cJSON_GetObjectItem(j, "best"), "candidate_id"),
                   10);
  assert_string_equal(str(j, "source"), kBestSource);
  assert_string_equal(str(j, "best_file"), file);
  cJSON_Delete(j);
  /* The file builds on its own: knobs are #defines in it. */
  snprintf(cmd, sizeof cmd, "cc -O2 -shared -fPIC -I '%s/harness/core' -o %s/b.so "
           "%s 2>>/tmp/kf-cli-test.err", src_dir(), path, file);
  assert_int_equal(system(cmd), 0);
  /* Without --out the file goes to stdout. */
  rc = kf(g_out, sizeof g_out, "campaign best 7 " REMOTE, F.target);
  assert_int_equal(rc, 0);
  assert_non_null(strstr(g_out, "#define BLOCK 64"));
  assert_non_null(strstr(g_out, "campaign    7"));
  assert_non_null(strstr(g_out, "2.500x"));
  assert_int_equal(kf(g_out, sizeof g_out, "campaign best 9 " REMOTE,
                      F.target), 1);
  snprintf(cmd, sizeof cmd, "rm -rf %s", path);
  assert_int_equal(system(cmd), 0);
}

/* A CUDA campaign's best as a torch extension package: the files, then
 * the kernel through nvcc and the binding through g++ against torch's
 * headers (each where present: CI has both; the binding needs none of
 * torch's CUDA headers, which Debian's CPU torch lacks).  Building and calling
 * it needs a GPU build of torch: scripts/gpu-export-remote. */
/* The single-file submission `file` parses, and its strings are the
 * torch-ext package's files in pkg (but for the kernel's "written" line
 * and the binding's first comment); nvcc gets sm_90a. */
static void check_inline_file(const char *file, const char *pkg) {
  char cmd[4096];
  snprintf(cmd, sizeof cmd,
           "/usr/bin/python3 - '%s' '%s' <<'EOF'\n"
           "import ast, sys\n"
           "src = open(sys.argv[1]).read()\n"
           "vals = {}\n"
           "for n in ast.parse(src).body:\n"
           "    if isinstance(n, ast.Assign) and len(n.targets) == 1 and \\\n"
           "            isinstance(n.targets[0], ast.Name):\n"
           "        try:\n"
           "            vals[n.targets[0].id] = ast.literal_eval(n.value)\n"
           "        except ValueError:\n"
           "            pass\n"
           "pkg = sys.argv[2]\n"
           "assert vals['_KF_ABI'] == open(pkg + '/csrc/kf_candidate.h')"
           ".read()\n"
           "k = open(pkg + '/csrc/kernel.cu').read()\n"
           "strip = lambda t: [l for l in t.splitlines() if 'written' not in l]\n"
           "assert strip(vals['_KF_KERNEL']) == strip(k)\n"
           "b = open(pkg + '/csrc/binding.cpp').read()\n"
           "assert vals['_KF_BINDING'].split('#include', 1)[1] == "
           "b.split('#include', 1)[1]\n"
           "assert 'cuda_sources=[_KF_KERNEL]' in src\n"
           "assert 'compute_90a,code=sm_90a' in src\n"
           "assert 'def custom_kernel(data)' in src and 'class ModelNew' in src\n"
           "bind = vals['_KF_BINDING']\n"
           "assert 'getCurrentCUDAStream' in bind and 'CUDAGuard' in bind\n"
           "assert 'torch.cuda' not in src  # no per-call Python lookup\n"
           "EOF\n",
           file, pkg);
  assert_int_equal(system(cmd), 0);
}

static void test_export_torch_ext_cuda(void **state) {
  char path[] = "/tmp/kf-cli-extXXXXXX", pkg[128], cmd[4096], prob[1024];
  assert_non_null(mkdtemp(path));
  snprintf(pkg, sizeof pkg, "%s/ext", path);
  snprintf(prob, sizeof prob, "%s/problems/cuda/rmsnorm", src_dir());
  /* a CPU problem for a CUDA kernel: refused, nothing written */
  assert_int_equal(kf(g_out, sizeof g_out, "campaign export 13 --format "
                      "torch-ext --problem %s/problems/cpu/softmax --out %s "
                      REMOTE, src_dir(), pkg, F.target), 2);
  assert_int_equal(access(pkg, F_OK), -1);
  assert_int_equal(kf(g_out, sizeof g_out, "campaign export 13 --format "
                      "torch-ext --problem %s --out %s " REMOTE, prob, pkg,
                      F.target), 0);
  assert_non_null(strstr(g_out, "kf_rmsnorm"));
  static const char *const files[] = {
      "setup.py", "README.md", "csrc/kernel.cu", "csrc/binding.cpp",
      "csrc/kf_candidate.h", "kf_rmsnorm/__init__.py"};
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
    snprintf(cmd, sizeof cmd, "%s/%s", pkg, files[i]);
    assert_int_equal(access(cmd, R_OK), 0);
  }
  snprintf(cmd, sizeof cmd, "grep -q 'CUDAExtension' %s/setup.py && grep -q "
           "'compute_90a,code=sm_90a' %s/setup.py && grep -q '#define VPT 2' "
           "%s/csrc/kernel.cu && grep -q 'getCurrentCUDAStream' "
           "%s/csrc/binding.cpp && ! grep -q 'torch.cuda' "
           "%s/kf_rmsnorm/__init__.py && grep -q 'kBFloat16' "
           "%s/csrc/binding.cpp",
           pkg, pkg, pkg, pkg, pkg, pkg);
  assert_int_equal(system(cmd), 0);
  char nvcc[1024];
  if (test_find_nvcc(nvcc, sizeof nvcc)) {
    snprintf(cmd, sizeof cmd, "'%s' -O3 -std=c++17 "
             "-gencode=arch=compute_90a,code=sm_90a -I %s/csrc -c "
             "%s/csrc/kernel.cu -o %s/kernel.o 2>>/tmp/kf-cli-test.err",
             nvcc, pkg, pkg, path);
    assert_int_equal(system(cmd), 0);
  } else {
    fprintf(stderr, "test_export_torch_ext_cuda: no nvcc: kernel.cu not "
            "compiled\n");
  }
  /* torch's include paths from its own cpp_extension, as setup.py gets
   * them; the CUDA runtime's headers beside nvcc.  The binding takes the
   * stream from torch's CUDA API (ATen/cuda); Debian's CPU torch ships
   * those headers but not the build's generated cuda_cmake_macros.h,
   * which an empty stand-in replaces for this syntax check. */
  char cudainc[1100] = "";
  if (test_find_nvcc(nvcc, sizeof nvcc)) {
    char *slash = strrchr(nvcc, '/');
    if (slash) *slash = '\0';
    snprintf(cudainc, sizeof cudainc, "-I %s/../include", nvcc);
  }
  snprintf(cmd, sizeof cmd,
           "[ -n '%s' ] || { echo SKIP; exit 0; }; "
           "mkdir -p %s/stub/c10/cuda/impl && "
           ": > %s/stub/c10/cuda/impl/cuda_cmake_macros.h; "
           "inc=$(/usr/bin/python3 -c \"import os, sysconfig, "
           "torch.utils.cpp_extension as c; i = c.include_paths(); "
           "assert os.path.isfile(i[0] + '/torch/extension.h'); "
           "print(' '.join(['-I' + p for p in i] + "
           "['-I' + sysconfig.get_paths()['include']]))\" 2>/dev/null) "
           "|| { echo SKIP; exit 0; }; "
           "g++ -std=c++17 -fsyntax-only $inc %s -I %s/stub -I %s/csrc "
           "-DTORCH_EXTENSION_NAME=_C %s/csrc/binding.cpp "
           "2>>/tmp/kf-cli-test.err; echo $?",
           cudainc, path, path, cudainc, path, pkg, pkg);
  FILE *p = popen(cmd, "r");
  assert_non_null(p);
  char rcbuf[32] = "";
  if (!fgets(rcbuf, sizeof rcbuf, p)) rcbuf[0] = '\0';
  pclose(p);
  if (!strncmp(rcbuf, "SKIP", 4))
    fprintf(stderr, "test_export_torch_ext_cuda: no torch or CUDA headers: "
            "binding.cpp not compiled\n");
  else
    assert_int_equal(atoi(rcbuf), 0);
  /* The same kernel as one GPU MODE file: the kernel, the ABI header and
   * the binding torch-ext wrote, as Python strings, built by load_inline
   * with nvcc for the measured ISA.  Without --problem: refused. */
  char sub[160];
  snprintf(sub, sizeof sub, "%s/submission.py", path);
  assert_int_equal(kf(g_out, sizeof g_out, "campaign export 13 --format "
                      "gpumode --out %s " REMOTE, sub, F.target), 2);
  assert_int_equal(access(sub, F_OK), -1);
  assert_int_equal(kf(g_out, sizeof g_out, "campaign export 13 --format "
                      "gpumode --problem %s --out %s " REMOTE, prob, sub,
                      F.target), 0);
  assert_non_null(strstr(g_out, "load_inline"));
  check_inline_file(sub, pkg);
  /* `kf wrap` of the package's kernel file, no coordinator: the same */
  char wrapped[160], kcu[160];
  snprintf(wrapped, sizeof wrapped, "%s/wrapped.py", path);
  snprintf(kcu, sizeof kcu, "%s/csrc/kernel.cu", pkg);
  assert_int_equal(kf(g_out, sizeof g_out, "wrap --problem %s %s --isa "
                      "sm_90a --out %s", prob, kcu, wrapped), 0);
  check_inline_file(wrapped, pkg);
  snprintf(cmd, sizeof cmd, "rm -rf %s", path);
  assert_int_equal(system(cmd), 0);
}

static void test_export_stop(void **state) {
  int rc = kf(g_out, sizeof g_out, "campaign export 7 " REMOTE, F.target);
  assert_int_equal(rc, 0);
  int lines = 0;
  for (char *p = g_out, *nl; (nl = strchr(p, '\n')); p = nl + 1) {
    *nl = '\0';
    cJSON *j = json_of(p);
    assert_non_null(cJSON_GetObjectItem(j, "task_id"));
    cJSON_Delete(j);
    lines++;
  }
  assert_int_equal(lines, 7);
  assert_int_equal(kf(g_out, sizeof g_out, "campaign stop 7 " REMOTE,
                      F.target), 0);
  assert_int_equal(atomic_load(&F.stops), 1);
  assert_int_equal(kf(g_out, sizeof g_out, "campaign stop 8 " REMOTE,
                      F.target), 2);
}

static void test_errors(void **state) {
  /* No token: usage.  Nobody listening: unreachable.  Bad token: usage.
   * A token file others may read: usage, refused before any call.  And
   * the token itself is no longer an option at all. */
  assert_int_equal(kf(g_out, sizeof g_out,
                      "campaign status 7 --coordinator %s", F.target), 2);
  assert_int_equal(kf(g_out, sizeof g_out, "campaign status 7 --coordinator "
                      "127.0.0.1:1 --token-file " TOKEN_FILE), 3);
  assert_int_equal(kf(g_out, sizeof g_out, "campaign status 7 --coordinator "
                      "%s --token-file " WRONG_FILE, F.target), 2);
  assert_int_equal(kf(g_out, sizeof g_out, "campaign status 7 --coordinator "
                      "%s --token-file " OPEN_FILE, F.target), 2);
  assert_int_equal(kf(g_out, sizeof g_out, "campaign status 7 --coordinator "
                      "%s --token " TOKEN, F.target), 2);
  /* $KF_TOKEN works as well as the file. */
  assert_int_equal(kf(g_out, sizeof g_out, "campaign status 7 --json "
                      "--coordinator %s", F.target), 2);
  setenv("KF_TOKEN", TOKEN, 1);
  assert_int_equal(kf(g_out, sizeof g_out, "campaign status 7 --json "
                      "--coordinator %s", F.target), 0);
  unsetenv("KF_TOKEN");
  assert_int_equal(kf(g_out, sizeof g_out, "campaign frobnicate 7"), 2);
  assert_int_equal(kf(g_out, sizeof g_out, "campaign status 7 --evals 3 "
                      REMOTE, F.target), 2);
  assert_int_equal(kf(g_out, sizeof g_out, "campaign --help"), 0);
  assert_int_equal(kf(g_out, sizeof g_out, "run --help"), 0);
  assert_non_null(strstr(g_out, "Exit codes"));
}

static void test_run_remote(void **state) {
  char path[] = "/tmp/kf-cli-runXXXXXX", file[128];
  assert_non_null(mkdtemp(path));
  snprintf(file, sizeof file, "%s/k.c", path);
  atomic_store(&F.polls7, 0);
  int rc = kf(g_out, sizeof g_out,
              "run '%s/problems/cpu/softmax' --evals 7 --out %s --json "
              REMOTE, src_dir(), file, F.target);
  assert_int_equal(rc, 0);
  cJSON *j = json_of(g_out);
  assert_string_equal(str(j, "best_file"), file);
  assert_string_equal(str(j, "state"), "done");
  cJSON_Delete(j);
  struct stat sb;
  assert_int_equal(stat(file, &sb), 0);
  /* The summary, the table's first row and the file name one candidate
   * with one number, and say where it was timed. */
  atomic_store(&F.polls7, 0);
  rc = kf(g_out, sizeof g_out,
          "run '%s/problems/cpu/softmax' --fresh --out %s " REMOTE, src_dir(),
          file, F.target);
  assert_int_equal(rc, 0);
  assert_true(F.fresh);
  assert_non_null(strstr(g_out, "(2.50x over the reference, spread 2.0%,"
                                " 300 repetitions, final showdown)"));
  const char *row = strstr(g_out, "   1* ");
  assert_non_null(row);
  const char *eol = strchr(row, '\n');
  assert_non_null(eol);
  char first[512];
  snprintf(first, sizeof first, "%.*s", (int)(eol - row), row);
  assert_non_null(strstr(first, "2.50x"));
  assert_non_null(strstr(first, "300"));
  assert_non_null(strstr(first, "showdown"));
  assert_non_null(strstr(g_out, "3 runs"));
  assert_non_null(strstr(g_out, "from the final showdown"));
  char text[8192] = "";
  FILE *fp = fopen(file, "r");
  assert_non_null(fp);
  text[fread(text, 1, sizeof text - 1, fp)] = '\0';
  fclose(fp);
  assert_non_null(strstr(text, "2.500x"));
  assert_non_null(strstr(text, "300 repetitions"));
  assert_non_null(strstr(text, "the final showdown"));
  char cmd[256];
  snprintf(cmd, sizeof cmd, "rm -rf %s", path);
  assert_int_equal(system(cmd), 0);
}

static char *slurp(const char *src, const char *rel) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", src ? src : ".", rel);
  FILE *f = fopen(path, "r");
  char *text = NULL;
  if (f) {
    text = calloc(1, 1 << 20);
    if (text && fread(text, 1, (1 << 20) - 1, f) == 0) {
      free(text);
      text = NULL;
    }
    fclose(f);
  }
  return text;
}

int main(void) {
  /* campaign 13's best kernel, the shipped template itself, and its
   * problem's spec */
  const char *src = getenv("KF_SOURCE_DIR");
  g_cuda_src = slurp(src, "problems/cuda/rmsnorm/block_regs.cu");
  g_cuda_spec = slurp(src, "problems/cuda/rmsnorm/spec.json");
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_submit),      cmocka_unit_test(test_submit_bad_spec),
      cmocka_unit_test(test_status),      cmocka_unit_test(test_hostile_names),
      cmocka_unit_test(test_watch),
      cmocka_unit_test(test_best),        cmocka_unit_test(test_export_stop),
      cmocka_unit_test(test_export_torch_ext_cuda),
      cmocka_unit_test(test_errors),      cmocka_unit_test(test_run_remote),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
