/* SPDX-License-Identifier: Apache-2.0 */
/*
 * common/profile_json.h -- the JSON views of an evaluation's diagnosis and
 * profile, one shape for every reader: `kf campaign status/export/profile
 * --json`, `kf mcp` and the dashboard's API.  NULL or empty input gives
 * JSON null; a number the profile did not measure is null, not 0.
 */
#ifndef KF_PROFILE_JSON_H
#define KF_PROFILE_JSON_H

#include <cjson/cJSON.h>

#include "kernelfleet.pb-c.h"

/* New cJSON values (the caller owns them); NULL only when out of memory. */
cJSON *kf_prof_json_diagnosis(const Kernelfleet__ProfileDiagnosis *d);
cJSON *kf_prof_json_report(const Kernelfleet__ProfileReport *p);

#endif
