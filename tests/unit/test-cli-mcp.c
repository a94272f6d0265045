/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/test-cli-mcp.c -- cli/kf_mcp.c, the wire side of `kf mcp`:
 * lines read from a real pipe (split across writes, CR LF, over-long lines
 * skipped without losing the next message, a last line without newline),
 * JSON-RPC classification and the error each malformed message earns,
 * replies written as exactly one line, version negotiation and the
 * tool-argument schema checker.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "err.h"
#include "kf_mcp.h"

static void put(int fd, const char *s) {
  size_t n = strlen(s);
  assert_int_equal(write(fd, s, n), (ssize_t)n);
}

static void expect_line(kf_mcp_reader *r, const char *want) {
  char *line;
  size_t len;
  assert_int_equal(kf_mcp_read_line(r, 5000, &line, &len), 1);
  assert_int_equal(len, strlen(want));
  assert_string_equal(line, want);
}

static void reader_lines(void **state) {
  int p[2];
  assert_int_equal(pipe(p), 0);
  kf_mcp_reader r;
  assert_int_equal(kf_mcp_reader_init(&r, p[0], 64), 0);
  put(p[1], "one\ntwo\r\nthr");
  expect_line(&r, "one");
  expect_line(&r, "two");
  char *line;
  size_t len;
  /* "thr" is not a line yet: nothing within the timeout. */
  assert_int_equal(kf_mcp_read_line(&r, 50, &line, &len), 0);
  put(p[1], "ee\n\n");
  expect_line(&r, "three");
  expect_line(&r, ""); /* an empty line is a line; the server skips it */
  /* Longer than 64 bytes: skipped to its newline, reported once; the
   * message after it arrives intact, even when the long one comes in
   * pieces with no newline in the first ones. */
  char big[200];
  memset(big, 'x', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  put(p[1], big);
  assert_int_equal(kf_mcp_read_line(&r, 5000, &line, &len), KF_ETOOBIG);
  put(p[1], big);
  put(p[1], "\nafter\n");
  expect_line(&r, "after");
  /* Exactly at the limit is fine. */
  char edge[66];
  memset(edge, 'y', 64);
  edge[64] = '\n';
  edge[65] = '\0';
  put(p[1], edge);
  edge[64] = '\0';
  expect_line(&r, edge);
  /* At end of input a last line without newline still counts. */
  put(p[1], "last");
  close(p[1]);
  expect_line(&r, "last");
  assert_int_equal(kf_mcp_read_line(&r, 5000, &line, &len), -1);
  assert_int_equal(kf_mcp_read_line(&r, 5000, &line, &len), -1);
  kf_mcp_reader_free(&r);
  close(p[0]);
}

static int parse(const char *s, kf_mcp_msg *m, char *err) {
  return kf_mcp_parse(s, strlen(s), m, err, 256);
}

static void parse_kinds(void **state) {
  kf_mcp_msg m;
  char err[256];
  assert_int_equal(parse("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}",
                         &m, err), 0);
  assert_int_equal(m.kind, KF_MCP_REQUEST);
  assert_string_equal(m.method, "ping");
  assert_int_equal(m.id->valueint, 3);
  assert_null(m.params);
  kf_mcp_msg_free(&m);
  assert_int_equal(parse("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/"
                         "initialized\",\"params\":{}}", &m, err), 0);
  assert_int_equal(m.kind, KF_MCP_NOTIFICATION);
  assert_null(m.id);
  assert_non_null(m.params);
  kf_mcp_msg_free(&m);
  assert_int_equal(parse("{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"result\":{}}",
                         &m, err), 0);
  assert_int_equal(m.kind, KF_MCP_RESPONSE);
  kf_mcp_msg_free(&m);
  /* A literal backslash followed by "u0000" is text, not a NUL. */
  assert_int_equal(parse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\","
                         "\"params\":{\"s\":\"a\\\\u0000\"}}", &m, err), 0);
  kf_mcp_msg_free(&m);
}

/* Each malformed message: its code, whether the id was recovered, and a
 * word of the reason. */
static void parse_errors(void **state) {
  static const struct {
    const char *in;
    int code;
    bool id;
    const char *why;
  } cases[] = {
      {"", KF_MCP_PARSE_ERROR, false, "not valid JSON"},
      {"{\"jsonrpc\":", KF_MCP_PARSE_ERROR, false, "not valid JSON"},
      {"{} {}", KF_MCP_PARSE_ERROR, false, "bytes after"},
      {"[]", KF_MCP_INVALID_REQUEST, false, "batches"},
      {"7", KF_MCP_INVALID_REQUEST, false, "object"},
      {"{\"id\":1,\"method\":\"ping\"}", KF_MCP_INVALID_REQUEST, true,
       "jsonrpc"},
      {"{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}",
       KF_MCP_INVALID_REQUEST, false, "id"},
      {"{\"jsonrpc\":\"2.0\",\"id\":true,\"method\":\"ping\"}",
       KF_MCP_INVALID_REQUEST, false, "id"},
      {"{\"jsonrpc\":\"2.0\",\"id\":2.5,\"method\":\"ping\"}",
       KF_MCP_INVALID_REQUEST, false, "id"},
      {"{\"jsonrpc\":\"2.0\",\"id\":1}", KF_MCP_INVALID_REQUEST, true,
       "method"},
      {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\"}",
       KF_MCP_INVALID_REQUEST, true, "method"},
      {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":[1]}",
       KF_MCP_INVALID_PARAMS, true, "object"},
      {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":"
       "{\"s\":\"a\\u0000b\"}}", KF_MCP_INVALID_PARAMS, true, "U+0000"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    kf_mcp_msg m;
    char err[256] = "";
    int rc = parse(cases[i].in, &m, err);
    if (rc != cases[i].code || (m.id != NULL) != cases[i].id ||
        !strstr(err, cases[i].why))
      fail_msg("case %zu '%s': code %d id %p err '%s'", i, cases[i].in, rc,
               (void *)m.id, err);
    kf_mcp_msg_free(&m);
  }
}

static void replies_are_one_line(void **state) {
  int p[2];
  assert_int_equal(pipe(p), 0);
  cJSON *id = cJSON_CreateString("r-1");
  cJSON *res = cJSON_CreateObject();
  cJSON_AddStringToObject(res, "text", "two\nlines \"quoted\"");
  assert_int_equal(kf_mcp_send(p[1], kf_mcp_result(id, res)), 0);
  assert_int_equal(kf_mcp_send(p[1], kf_mcp_error(NULL, -32700, "bad")), 0);
  close(p[1]);
  char buf[512] = "";
  ssize_t n = read(p[0], buf, sizeof buf - 1);
  assert_true(n > 0);
  assert_string_equal(
      buf, "{\"jsonrpc\":\"2.0\",\"id\":\"r-1\",\"result\":{\"text\":\"two\\n"
           "lines \\\"quoted\\\"\"}}\n"
           "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,"
           "\"message\":\"bad\"}}\n");
  cJSON_Delete(id);
  close(p[0]);
  /* A reader gone: an error value, not a SIGPIPE death (the server
   * ignores SIGPIPE; here it is ignored too). */
  assert_int_equal(pipe(p), 0);
  close(p[0]);
  signal(SIGPIPE, SIG_IGN);
  assert_int_equal(kf_mcp_send(p[1], kf_mcp_error(NULL, 1, "x")), KF_EIO);
  close(p[1]);
}

static void negotiation(void **state) {
  assert_string_equal(kf_mcp_negotiate("2025-06-18"), "2025-06-18");
  assert_string_equal(kf_mcp_negotiate("2024-11-05"), "2024-11-05");
  assert_string_equal(kf_mcp_negotiate("2099-01-01"), kf_mcp_versions[0]);
  assert_string_equal(kf_mcp_negotiate(NULL), kf_mcp_versions[0]);
  assert_true(kf_mcp_version_ge("2025-11-25", "2025-06-18"));
  assert_true(kf_mcp_version_ge("2025-06-18", "2025-06-18"));
  assert_false(kf_mcp_version_ge("2025-03-26", "2025-06-18"));
  assert_false(kf_mcp_version_ge(NULL, "2025-06-18"));
}

static const char *SCHEMA =
    "{\"type\": \"object\", \"properties\": {"
    "\"id\": {\"type\": \"integer\", \"minimum\": 1, \"maximum\": 10},"
    "\"f\": {\"type\": \"number\", \"exclusiveMinimum\": 0, \"maximum\": 1},"
    "\"s\": {\"type\": \"string\", \"maxLength\": 4},"
    "\"b\": {\"type\": \"boolean\"},"
    "\"k\": {\"type\": \"object\", \"maxProperties\": 2,"
    " \"additionalProperties\": {\"type\": [\"string\", \"integer\"]}}},"
    " \"required\": [\"id\"], \"additionalProperties\": false}";

static void schema_checks(void **state) {
  cJSON *schema = cJSON_Parse(SCHEMA);
  assert_non_null(schema);
  static const struct {
    const char *args;
    const char *why; /* NULL: accepted */
  } cases[] = {
      {"{\"id\": 1}", NULL},
      {"{\"id\": 10, \"f\": 1, \"s\": \"abcd\", \"b\": false, "
       "\"k\": {\"A\": \"x\", \"B\": 3}}", NULL},
      {"{}", "arguments: missing required field \"id\""},
      {"[]", "arguments: expected an object, got an array"},
      {"{\"id\": \"1\"}", "arguments.id: expected an integer, got a string"},
      {"{\"id\": 1.5}", "arguments.id: expected an integer, got a fraction"},
      {"{\"id\": 0}", "arguments.id: 0 is out of range (>= 1 and <= 10)"},
      {"{\"id\": 11}", "out of range"},
      {"{\"id\": 1, \"f\": 0}", "arguments.f: 0 is out of range (> 0 and"},
      {"{\"id\": 1, \"s\": \"abcde\"}", "arguments.s: longer than 4 bytes"},
      {"{\"id\": 1, \"b\": 1}", "arguments.b: expected a boolean"},
      {"{\"id\": 1, \"zz\": 1}",
       "arguments.zz: unknown field (this tool takes: id, f, s, b, k)"},
      {"{\"id\": 1, \"k\": {\"A\": [1]}}",
       "arguments.k.A: expected string or integer, got an array"},
      {"{\"id\": 1, \"k\": {\"A\": 1.5}}", "arguments.k.A: expected string"},
      {"{\"id\": 1, \"k\": {\"A\": 1, \"B\": 2, \"C\": 3}}",
       "arguments.k: at most 2 fields"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    cJSON *v = cJSON_Parse(cases[i].args);
    assert_non_null(v);
    char err[256] = "";
    bool ok = kf_mcp_schema_check(schema, v, err, sizeof err);
    if (cases[i].why ? ok || !strstr(err, cases[i].why) : !ok)
      fail_msg("case %zu %s: ok %d err '%s'", i, cases[i].args, ok, err);
    cJSON_Delete(v);
  }
  cJSON_Delete(schema);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(reader_lines),
      cmocka_unit_test(parse_kinds),
      cmocka_unit_test(parse_errors),
      cmocka_unit_test(replies_are_one_line),
      cmocka_unit_test(negotiation),
      cmocka_unit_test(schema_checks),
  };
  return cmocka_run_group_tests_name("cli-mcp", tests, NULL, NULL);
}
