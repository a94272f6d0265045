/* SPDX-License-Identifier: Apache-2.0 */
/*
 * coordinator/coord_check.h -- the Coordinator service's request
 * validators, apart from their handlers.
 *
 * Each handler (coord_rpc.c, coord_campaign.c) runs one of these on the
 * unpacked request before anything reaches the database; they are here,
 * not static, so the fuzz targets (tests/fuzz) drive the very code the
 * server runs.  Pure functions: no coordinator state, no I/O, any thread.
 * Each returns true, or false with a message naming the field in bad
 * (answered as INVALID_ARGUMENT).
 */
#ifndef KF_COORD_CHECK_H
#define KF_COORD_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernelfleet.pb-c.h"
#include "spec.h"

/* coord_rpc.c */
bool kf_coord__check_register(const Kernelfleet__RegisterWorkerRequest *r,
                              char *bad, size_t blen);
bool kf_coord__check_heartbeat(const Kernelfleet__HeartbeatRequest *r,
                               char *bad, size_t blen);
bool kf_coord__check_lease(const Kernelfleet__LeaseTasksRequest *r,
                           char *bad, size_t blen);
bool kf_coord__check_report(const Kernelfleet__ReportResultRequest *r,
                            char *bad, size_t blen);
bool kf_coord__check_submit(const Kernelfleet__SubmitTasksRequest *r,
                            char *bad, size_t blen);
bool kf_coord__check_status(const Kernelfleet__GetStatusRequest *r,
                            char *bad, size_t blen);

/* coord_campaign.c */

/* What a valid CreateCampaign request yields for the store. */
typedef struct {
  kf_spec *spec;          /* parsed spec_json; kf_spec_free */
  char *templates_json;   /* campaigns.templates; free() */
  int64_t floor_bytes;    /* the spec's `bytes` at the bench size (the geometric
                             mean over a list of them), or 0 */
  uint64_t need_bytes;    /* memory the harness maps to evaluate it */
  char need_text[256];    /* how need_bytes was counted */
} kf_coord__create_checked;

/* 0 with *out filled (the caller frees out->spec and
 * out->templates_json), or KF_EINVAL / KF_ENOMEM with the reason in bad
 * and nothing left allocated. */
int kf_coord__check_create(const Kernelfleet__CreateCampaignRequest *r,
                           kf_coord__create_checked *out, char *bad,
                           size_t blen);
/* A CreateCampaign that ports another campaign (port_from_campaign > 0):
 * no problem of its own, a target class, budgets in range.  true or false
 * with the reason in bad. */
bool kf_coord__check_port(const Kernelfleet__CreateCampaignRequest *r,
                          char *bad, size_t blen);
/* GetCampaign, ListEvaluations, GetBest, StopCampaign: the campaign id
 * (and GetCampaign's top). */
bool kf_coord__check_campaign_id(int64_t id, char *bad, size_t blen);
bool kf_coord__check_get_campaign(const Kernelfleet__GetCampaignRequest *r,
                                  char *bad, size_t blen);
bool kf_coord__check_propose(const Kernelfleet__ProposeCandidateRequest *r,
                             char *bad, size_t blen);
/* ListEvaluations: the campaign id and the candidate filter (0007). */
bool kf_coord__check_list(const Kernelfleet__ListEvaluationsRequest *r,
                          char *bad, size_t blen);
bool kf_coord__check_proposer_record(
    const Kernelfleet__ProposerRecordCallsRequest *r, char *bad, size_t blen);

/* coord_views.c: the dashboard's views (limits; GetReference takes
 * kf_coord__check_campaign_id). */
bool kf_coord__check_list_campaigns(const Kernelfleet__ListCampaignsRequest *r,
                                    char *bad, size_t blen);
bool kf_coord__check_series(const Kernelfleet__GetCampaignSeriesRequest *r,
                            char *bad, size_t blen);

#endif
