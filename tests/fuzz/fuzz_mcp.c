/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/fuzz_mcp.c -- libFuzzer target: cli/kf_mcp.c, the wire side
 * of `kf mcp`, which reads whatever an MCP client (an agent) writes.
 *
 * Input: one line as the server would read it.  Besides "no crash, no
 * leak", it checks the module's promises:
 *  - kf_mcp_parse either classifies the line (a request has a method and
 *    an integer or string id, a notification a method and no id, params
 *    an object or absent) or returns one of the JSON-RPC error codes;
 *  - the reply to it (a result or the error, with the recovered id)
 *    prints as one line: no raw newline inside;
 *  - the params of a parsed message, checked against a schema shaped like
 *    the tools' (every keyword the checker knows), never crash it, and a
 *    refusal always says why.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kf_mcp.h"

static const char *SCHEMA =
    "{\"type\": \"object\", \"properties\": {"
    "\"id\": {\"type\": \"integer\", \"minimum\": 1, \"maximum\": 10},"
    "\"f\": {\"type\": \"number\", \"exclusiveMinimum\": 0, \"maximum\": 1},"
    "\"s\": {\"type\": \"string\", \"maxLength\": 4, \"minLength\": 1},"
    "\"b\": {\"type\": \"boolean\"},"
    "\"k\": {\"type\": \"object\", \"maxProperties\": 2,"
    " \"additionalProperties\": {\"type\": [\"string\", \"integer\"]}}},"
    " \"required\": [\"id\"], \"additionalProperties\": false}";

static void one_line(cJSON *msg) {
  char *s = cJSON_PrintUnformatted(msg);
  if (s && strchr(s, '\n')) abort();
  cJSON_free(s);
  cJSON_Delete(msg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static cJSON *schema;
  if (!schema && !(schema = cJSON_Parse(SCHEMA))) abort();
  kf_mcp_msg m;
  char err[512];
  int rc = kf_mcp_parse((const char *)data, size, &m, err, sizeof err);
  if (rc) {
    if (rc != KF_MCP_PARSE_ERROR && rc != KF_MCP_INVALID_REQUEST &&
        rc != KF_MCP_INVALID_PARAMS)
      abort();
    if (!err[0]) abort();
    if (m.id && !cJSON_IsString(m.id) && !cJSON_IsNumber(m.id)) abort();
    one_line(kf_mcp_error(m.id, rc, err));
  } else {
    switch (m.kind) {
    case KF_MCP_REQUEST:
      if (!m.method || !*m.method || !m.id) abort();
      break;
    case KF_MCP_NOTIFICATION:
      if (!m.method || m.id) abort();
      break;
    case KF_MCP_RESPONSE:
      if (!m.id) abort();
      break;
    default:
      abort();
    }
    if (m.params && !cJSON_IsObject(m.params)) abort();
    if (m.params) {
      char why[256] = "";
      if (!kf_mcp_schema_check(schema, m.params, why, sizeof why) && !why[0])
        abort();
    }
    if (m.id) one_line(kf_mcp_result(m.id, cJSON_CreateObject()));
  }
  kf_mcp_msg_free(&m);
  return 0;
}
