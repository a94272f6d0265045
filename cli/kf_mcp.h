/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cli/kf_mcp.h -- the wire side of `kf mcp`: JSON-RPC 2.0 messages as the
 * Model Context Protocol's stdio transport carries them (one message per
 * line, UTF-8, no embedded newlines), and a small JSON Schema checker for
 * tool arguments.
 *
 * What it promises:
 *  - kf_mcp_read_line never holds more than max_line bytes of one message:
 *    a longer line is skipped up to its newline and reported as
 *    KF_ETOOBIG, so a hostile client cannot make the server grow without
 *    bound, and the next message still parses;
 *  - kf_mcp_parse classifies a line as a request, a notification or a
 *    response, or says which JSON-RPC error it deserves (-32700 parse
 *    error, -32600 invalid request) and why;
 *  - kf_mcp_send writes exactly one line to the fd (write(2), all of it)
 *    and nothing else ever goes to it;
 *  - kf_mcp_schema_check accepts exactly the arguments the tool's
 *    inputSchema describes (the subset of JSON Schema the tools use:
 *    object, string, integer, number, boolean; required; minimum/maximum;
 *    maxLength; additionalProperties false or a schema), naming the first
 *    offending field.
 * Single-threaded; nothing here talks to the coordinator.
 */
#ifndef KF_MCP_H
#define KF_MCP_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

/* JSON-RPC 2.0 error codes (https://www.jsonrpc.org/specification). */
enum {
  KF_MCP_PARSE_ERROR = -32700,
  KF_MCP_INVALID_REQUEST = -32600,
  KF_MCP_METHOD_NOT_FOUND = -32601,
  KF_MCP_INVALID_PARAMS = -32602,
  KF_MCP_INTERNAL_ERROR = -32603,
};

/* Protocol revisions this server speaks, newest first. */
extern const char *const kf_mcp_versions[];

/* The revision to answer an initialize that asked for `requested`: the
 * same when supported, else the newest this server speaks (the client
 * then decides whether it can go on). */
const char *kf_mcp_negotiate(const char *requested);

/* true when `version` is at least `than` (both "YYYY-MM-DD"). */
bool kf_mcp_version_ge(const char *version, const char *than);

/* ------------------------------------------------------------ reading -- */

typedef struct {
  int fd;
  char *buf;          /* bytes read, not yet returned */
  size_t len, cap;
  size_t max_line;    /* longest message accepted, bytes */
  size_t start;       /* where the next line begins in buf */
  bool eof;
  bool skipping;      /* inside an over-long line: drop up to its '\n' */
} kf_mcp_reader;

/* 0, or KF_ENOMEM. */
int kf_mcp_reader_init(kf_mcp_reader *r, int fd, size_t max_line);
void kf_mcp_reader_free(kf_mcp_reader *r);

/* Next line without its newline (nor a CR before it), NUL
 * terminated, valid until the next call.  Waits at most timeout_ms (< 0:
 * forever).  Returns 1 with *line and *len; 0 when nothing complete arrived
 * in time; -1 at end of input (a last line without '\n' is returned
 * first); KF_ETOOBIG once per line longer than max_line (skipped);
 * KF_EIO when read(2) failed. */
int kf_mcp_read_line(kf_mcp_reader *r, int timeout_ms, char **line,
                     size_t *len);

/* ------------------------------------------------------------ messages -- */

typedef enum {
  KF_MCP_REQUEST,       /* method and id: must be answered */
  KF_MCP_NOTIFICATION,  /* method, no id: never answered */
  KF_MCP_RESPONSE,      /* result or error for one of ours: ignored */
} kf_mcp_kind;

typedef struct {
  cJSON *root;          /* owns everything below */
  kf_mcp_kind kind;
  const char *method;   /* requests and notifications */
  const cJSON *id;      /* requests: a string or an integer */
  const cJSON *params;  /* an object, or NULL when absent */
} kf_mcp_msg;

/* Parses one line.  Returns 0 with *m filled (free with kf_mcp_msg_free),
 * or a JSON-RPC error code with the reason in err and m->root NULL; m->id
 * is then the request's id when it could be recovered (answer with it),
 * else NULL (answer with id null).  The id stays valid until
 * kf_mcp_msg_free, so the caller keeps m->root for it: on error m->root
 * may be non-NULL too. */
int kf_mcp_parse(const char *line, size_t len, kf_mcp_msg *m, char *err,
                 size_t errlen);
void kf_mcp_msg_free(kf_mcp_msg *m);

/* {"jsonrpc": "2.0", "id": id, "result": result}; takes result. */
cJSON *kf_mcp_result(const cJSON *id, cJSON *result);
/* {"jsonrpc": "2.0", "id": id or null, "error": {code, message}}. */
cJSON *kf_mcp_error(const cJSON *id, int code, const char *message);
/* {"jsonrpc": "2.0", "method": method, "params": params}; takes params. */
cJSON *kf_mcp_notification(const char *method, cJSON *params);

/* Writes msg as one line to fd and frees it.  0, KF_ENOMEM or KF_EIO (the
 * client went away). */
int kf_mcp_send(int fd, cJSON *msg);

/* ------------------------------------------------------------ schemas -- */

/* Checks value against schema.  true, or false with "NAME: reason" (NAME
 * the path of the offending field, "arguments" for the top) in err. */
bool kf_mcp_schema_check(const cJSON *schema, const cJSON *value,
                         char *err, size_t errlen);

#endif
