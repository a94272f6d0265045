/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/fuzz_seeds.c -- writes fuzz_rpc's seed corpus: one valid
 * request per Coordinator method, packed by protobuf-c and prefixed by the
 * method's index in kf_coord__methods (the byte fuzz_rpc dispatches on).
 * Valid requests are where the interesting mutations start: libFuzzer
 * would take long to build a CreateCampaign with a parseable spec_json.
 *
 * Usage: fuzz_seeds OUTDIR SPEC_JSON_FILE.  Run by hand when the protocol
 * changes (the files it wrote are committed under corpus/fuzz_rpc/).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coord.h"

static int write_seed(const char *dir, const char *name,
                      const ProtobufCMessage *m) {
  size_t idx;
  for (idx = 0; idx < kf_coord__n_methods; idx++)
    if (kf_coord__methods[idx].request == m->descriptor) break;
  if (idx == kf_coord__n_methods) return -1;
  size_t n = protobuf_c_message_get_packed_size(m);
  unsigned char *buf = malloc(n + 1);
  if (!buf) return -1;
  buf[0] = (unsigned char)idx;
  protobuf_c_message_pack(m, buf + 1);
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(buf, 1, n + 1, f) != n + 1 || fclose(f) != 0) {
    free(buf);
    return -1;
  }
  free(buf);
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: fuzz_seeds OUTDIR SPEC_JSON\n");
    return 2;
  }
  static char spec[1 << 16];
  FILE *sf = fopen(argv[2], "rb");
  size_t spec_len = sf ? fread(spec, 1, sizeof spec, sf) : 0;
  if (sf) fclose(sf);
  if (!spec_len) return 1;
  int rc = 0;

  Kernelfleet__DeviceClass dc = KERNELFLEET__DEVICE_CLASS__INIT;
  dc.kind = KERNELFLEET__DEVICE_KIND__DEVICE_KIND_CPU;
  dc.model = "AMD EPYC 7B13";
  dc.isa = "x86-64-v3";
  Kernelfleet__DeviceInfo di = KERNELFLEET__DEVICE_INFO__INIT;
  di.cores = 2;
  di.mem_bytes = 8ull << 30;
  di.copy_gbps = 20.5;
  di.compiler = "gcc 12.2.0";
  di.harness_build = "0123456789abcdef";
  char *kinds[] = {"checksum", "eval"};
  Kernelfleet__RegisterWorkerRequest reg =
      KERNELFLEET__REGISTER_WORKER_REQUEST__INIT;
  reg.name = "w1";
  reg.hostname = "host";
  reg.device_class = &dc;
  reg.device = &di;
  reg.n_task_kinds = 2;
  reg.task_kinds = kinds;
  reg.slots = 4;
  rc |= write_seed(argv[1], "register", &reg.base);

  Kernelfleet__TaskRef tr = KERNELFLEET__TASK_REF__INIT, *trs[] = {&tr};
  tr.task_id = 7;
  tr.attempt = 1;
  Kernelfleet__HeartbeatRequest hb = KERNELFLEET__HEARTBEAT_REQUEST__INIT;
  hb.worker_id = 1;
  hb.n_running = 1;
  hb.running = trs;
  rc |= write_seed(argv[1], "heartbeat", &hb.base);

  Kernelfleet__LeaseTasksRequest le = KERNELFLEET__LEASE_TASKS_REQUEST__INIT;
  le.worker_id = 1;
  le.max_tasks = 4;
  le.wait_ms = 1000;
  rc |= write_seed(argv[1], "lease", &le.base);

  Kernelfleet__TaskResult res = KERNELFLEET__TASK_RESULT__INIT,
                          *ress[] = {&res};
  res.task_id = 7;
  res.attempt = 1;
  res.outcome = KERNELFLEET__OUTCOME__OUTCOME_OK;
  res.stage = "time";
  res.reason = "ok";
  res.elapsed_us = 1000;
  Kernelfleet__ReportResultRequest rep =
      KERNELFLEET__REPORT_RESULT_REQUEST__INIT;
  rep.worker_id = 1;
  rep.n_results = 1;
  rep.results = ress;
  rc |= write_seed(argv[1], "report", &rep.base);

  Kernelfleet__TaskSpec ts = KERNELFLEET__TASK_SPEC__INIT, *tss[] = {&ts};
  ts.kind = "checksum";
  ts.payload.data = (uint8_t *)"abc";
  ts.payload.len = 3;
  ts.device_class = &dc;
  ts.max_attempts = 3;
  ts.timeout_ms = 5000;
  Kernelfleet__SubmitTasksRequest sub = KERNELFLEET__SUBMIT_TASKS_REQUEST__INIT;
  sub.n_tasks = 1;
  sub.tasks = tss;
  rc |= write_seed(argv[1], "submit", &sub.base);

  Kernelfleet__GetStatusRequest st = KERNELFLEET__GET_STATUS_REQUEST__INIT;
  st.campaign_id = 1;
  rc |= write_seed(argv[1], "status", &st.base);

  char *vals[] = {"1", "2", "4"};
  Kernelfleet__KnobSpace ks = KERNELFLEET__KNOB_SPACE__INIT, *kss[] = {&ks};
  ks.name = "UNROLL";
  ks.n_values = 3;
  ks.values = vals;
  Kernelfleet__TemplateSource tpl = KERNELFLEET__TEMPLATE_SOURCE__INIT,
                              *tpls[] = {&tpl};
  tpl.name = "base";
  tpl.file = "base.c";
  tpl.source = "void kf_launch(void) {}\n";
  tpl.n_knobs = 1;
  tpl.knobs = kss;
  Kernelfleet__CreateCampaignRequest cc =
      KERNELFLEET__CREATE_CAMPAIGN_REQUEST__INIT;
  cc.name = "c1";
  cc.problem = "vecsum";
  cc.spec_json.data = (uint8_t *)spec;
  cc.spec_json.len = spec_len;
  cc.reference_source = "void kf_launch(void) {}\n";
  cc.n_templates = 1;
  cc.templates = tpls;
  cc.backend = KERNELFLEET__DEVICE_KIND__DEVICE_KIND_CPU;
  cc.budget_evals = 20;
  cc.target_roofline = 0.9;
  rc |= write_seed(argv[1], "create_campaign", &cc.base);

  Kernelfleet__GetCampaignRequest gc = KERNELFLEET__GET_CAMPAIGN_REQUEST__INIT;
  gc.campaign_id = 1;
  gc.top = 5;
  rc |= write_seed(argv[1], "get_campaign", &gc.base);
  Kernelfleet__ListEvaluationsRequest lv =
      KERNELFLEET__LIST_EVALUATIONS_REQUEST__INIT;
  lv.campaign_id = 1;
  rc |= write_seed(argv[1], "list_evaluations", &lv.base);
  Kernelfleet__GetBestRequest gb = KERNELFLEET__GET_BEST_REQUEST__INIT;
  gb.campaign_id = 1;
  rc |= write_seed(argv[1], "get_best", &gb.base);
  Kernelfleet__StopCampaignRequest sc = KERNELFLEET__STOP_CAMPAIGN_REQUEST__INIT;
  sc.campaign_id = 1;
  rc |= write_seed(argv[1], "stop_campaign", &sc.base);

  Kernelfleet__Knob kn = KERNELFLEET__KNOB__INIT, *kns[] = {&kn};
  kn.name = "UNROLL";
  kn.value = "4";
  Kernelfleet__ProposeCandidateRequest pc =
      KERNELFLEET__PROPOSE_CANDIDATE_REQUEST__INIT;
  pc.campaign_id = 1;
  pc.source = "void kf_launch(void) {}\n";
  pc.proposer = "llm:test";
  pc.template_name = "base";
  pc.n_knobs = 1;
  pc.knobs = kns;
  rc |= write_seed(argv[1], "propose", &pc.base);

  /* a proposal declaring a knob space (proposers) */
  char *pvals[] = {"4", "8"};
  Kernelfleet__KnobSpace pks = KERNELFLEET__KNOB_SPACE__INIT,
                         *pkss[] = {&pks};
  pks.name = "UNROLL";
  pks.values = pvals;
  pks.n_values = 2;
  Kernelfleet__ProposeCandidateRequest pk =
      KERNELFLEET__PROPOSE_CANDIDATE_REQUEST__INIT;
  pk.campaign_id = 1;
  pk.source = "void kf_launch(void) { int u = UNROLL; (void)u; }\n";
  pk.proposer = "llm:test";
  pk.n_knob_space = 1;
  pk.knob_space = pkss;
  rc |= write_seed(argv[1], "propose_knobs", &pk.base);

  Kernelfleet__ProposerCall call = KERNELFLEET__PROPOSER_CALL__INIT,
                            *calls[] = {&call};
  call.proposer = "llm:test";
  call.model = "m";
  call.prompt_version = "system.md@000000000000";
  call.operation = "improve";
  call.outcome = "malformed";
  call.reason = "no fenced code block in the reply";
  call.prompt_tokens = 100;
  call.completion_tokens = 10;
  call.cost = 0.01;
  Kernelfleet__ProposerRecordCallsRequest rcq =
      KERNELFLEET__PROPOSER_RECORD_CALLS_REQUEST__INIT;
  rcq.campaign_id = 1;
  rcq.n_calls = 1;
  rcq.calls = calls;
  rc |= write_seed(argv[1], "proposer_record", &rcq.base);
  Kernelfleet__ProposerUsageRequest pu =
      KERNELFLEET__PROPOSER_USAGE_REQUEST__INIT;
  pu.campaign_id = 1;
  rc |= write_seed(argv[1], "proposer_usage", &pu.base);
  Kernelfleet__ListCampaignsRequest lc =
      KERNELFLEET__LIST_CAMPAIGNS_REQUEST__INIT;
  lc.limit = 10;
  lc.before_id = 5;
  rc |= write_seed(argv[1], "list_campaigns", &lc.base);
  Kernelfleet__GetCampaignSeriesRequest gs =
      KERNELFLEET__GET_CAMPAIGN_SERIES_REQUEST__INIT;
  gs.campaign_id = 1;
  gs.limit = 100;
  rc |= write_seed(argv[1], "get_series", &gs.base);
  Kernelfleet__GetReferenceRequest gr = KERNELFLEET__GET_REFERENCE_REQUEST__INIT;
  gr.campaign_id = 1;
  rc |= write_seed(argv[1], "get_reference", &gr.base);
  return rc ? 1 : 0;
}
