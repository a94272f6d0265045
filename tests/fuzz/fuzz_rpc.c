/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/fuzz_rpc.c -- libFuzzer target: every Coordinator request,
 * from its bytes on the wire to the handler's verdict.
 *
 * The first input byte picks a method of kf_coord__methods (so one target
 * covers all twelve, and the table itself is what is exercised); the rest
 * is the request body.  Each input goes through exactly what the server
 * does before a handler runs -- kf_rpc__unpack_request over a gRPC byte
 * buffer, with the wire-level text check unless the method is in
 * kf_coord__raw_text -- and then through that method's validator
 * (coordinator/coord_check.h).  A crash, a sanitizer report, a leak or a
 * refusal without a message is a finding.
 */
#include <grpc/byte_buffer.h>
#include <grpc/grpc.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coord.h"
#include "coord_check.h"
#include "rpc_internal.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  grpc_init();
  return 0;
}

static bool raw_text(const char *path) {
  for (size_t k = 0; kf_coord__raw_text[k]; k++)
    if (strcmp(kf_coord__raw_text[k], path) == 0) return true;
  return false;
}

/* The validator behind a method, by its request type. */
static bool validate(const ProtobufCMessage *m, char *bad, size_t blen) {
  const ProtobufCMessageDescriptor *d = m->descriptor;
  if (d == &kernelfleet__register_worker_request__descriptor)
    return kf_coord__check_register((const void *)m, bad, blen);
  if (d == &kernelfleet__heartbeat_request__descriptor)
    return kf_coord__check_heartbeat((const void *)m, bad, blen);
  if (d == &kernelfleet__lease_tasks_request__descriptor)
    return kf_coord__check_lease((const void *)m, bad, blen);
  if (d == &kernelfleet__report_result_request__descriptor)
    return kf_coord__check_report((const void *)m, bad, blen);
  if (d == &kernelfleet__submit_tasks_request__descriptor)
    return kf_coord__check_submit((const void *)m, bad, blen);
  if (d == &kernelfleet__get_status_request__descriptor)
    return kf_coord__check_status((const void *)m, bad, blen);
  if (d == &kernelfleet__create_campaign_request__descriptor) {
    /* A port (0009) is checked on its own: it carries no problem. */
    if (((const Kernelfleet__CreateCampaignRequest *)m)->port_from_campaign)
      return kf_coord__check_port((const void *)m, bad, blen);
    kf_coord__create_checked ck;
    int rc = kf_coord__check_create((const void *)m, &ck, bad, blen);
    if (rc == 0) {
      /* what the handler does next with a valid spec */
      char sha[65];
      if (kf_spec_canonical_hash(ck.spec, sha) != 0) abort();
      kf_spec_free(ck.spec);
      free(ck.templates_json);
    }
    return rc == 0;
  }
  if (d == &kernelfleet__get_campaign_request__descriptor)
    return kf_coord__check_get_campaign((const void *)m, bad, blen);
  if (d == &kernelfleet__list_evaluations_request__descriptor)
    return kf_coord__check_list((const void *)m, bad, blen);
  if (d == &kernelfleet__get_best_request__descriptor)
    return kf_coord__check_campaign_id(
        ((const Kernelfleet__GetBestRequest *)m)->campaign_id, bad, blen);
  if (d == &kernelfleet__stop_campaign_request__descriptor)
    return kf_coord__check_campaign_id(
        ((const Kernelfleet__StopCampaignRequest *)m)->campaign_id, bad,
        blen);
  if (d == &kernelfleet__propose_candidate_request__descriptor)
    return kf_coord__check_propose((const void *)m, bad, blen);
  if (d == &kernelfleet__proposer_record_calls_request__descriptor)
    return kf_coord__check_proposer_record((const void *)m, bad, blen);
  if (d == &kernelfleet__proposer_usage_request__descriptor)
    return kf_coord__check_campaign_id(
        ((const Kernelfleet__ProposerUsageRequest *)m)->campaign_id, bad,
        blen);
  if (d == &kernelfleet__list_campaigns_request__descriptor)
    return kf_coord__check_list_campaigns((const void *)m, bad, blen);
  if (d == &kernelfleet__get_campaign_series_request__descriptor)
    return kf_coord__check_series((const void *)m, bad, blen);
  if (d == &kernelfleet__get_reference_request__descriptor)
    return kf_coord__check_campaign_id(
        ((const Kernelfleet__GetReferenceRequest *)m)->campaign_id, bad,
        blen);
  fprintf(stderr, "fuzz_rpc: no validator for %s\n", d->name);
  abort(); /* a method was added without one: fail loudly */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  const kf_rpc_method *meth = &kf_coord__methods[data[0] % kf_coord__n_methods];
  grpc_byte_buffer *bb = kf_rpc__bytes(data + 1, size - 1);
  if (!bb) abort();
  char why[256] = "";
  ProtobufCMessage *m = kf_rpc__unpack_request(
      bb, meth->request, !raw_text(meth->path), why, sizeof why);
  grpc_byte_buffer_destroy(bb);
  if (!m) {
    if (!why[0]) abort(); /* a refusal must say why */
    return 0;
  }
  char bad[768] = "";
  if (!validate(m, bad, sizeof bad) && !bad[0]) abort();
  if (strlen(bad) >= sizeof bad) abort();
  protobuf_c_message_free_unpacked(m, NULL);
  return 0;
}
