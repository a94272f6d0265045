/* SPDX-License-Identifier: Apache-2.0 */
/*
 * proposer/llm.h -- the built-in `llm` proposer: an OpenAI-compatible
 * /v1/chat/completions endpoint, over libcurl.
 *
 * Each task becomes one chat request: the system prompt and the task's
 * prompt (the .md files of proposer/prompts, embedded at build time; their file names
 * and sha256 prefixes are the prompt_version accounted with each call)
 * filled from the context.  The reply must hold the kernel in a fenced
 * code block and may hold a ```json block declaring knobs
 * (kf_llm_reply_parse).  Requests time out (timeout_ms), and 429, 5xx,
 * timeouts and transport errors are retried with exponential backoff
 * (honouring Retry-After up to the cap); the key is sent as a bearer
 * token and never logged or stored.  Tokens are the reply's
 * usage.prompt_tokens / usage.completion_tokens, summed over attempts;
 * cost is priced per 1000 tokens.
 */
#ifndef KF_LLM_H
#define KF_LLM_H

#include <stddef.h>
#include <signal.h>

#include "proposer.h"

typedef struct {
  const char *url;        /* ".../v1" or ".../v1/chat/completions" */
  const char *model;
  const char *key;        /* may be NULL: no Authorization header */
  int timeout_ms;         /* per HTTP request; 0: 120000 */
  int connect_timeout_ms; /* 0: 10000 */
  int retries;            /* extra attempts after the first; < 0: 0 */
  int backoff_ms;         /* first retry's wait, doubled each time; 0: 500 */
  int backoff_max_ms;     /* 0: 8000 */
  double price_in_1k;     /* cost per 1000 prompt tokens */
  double price_out_1k;    /* cost per 1000 completion tokens */
  int max_tokens;         /* 0: 4096 */
  double temperature;     /* < 0: leave out */
  /* Set (by another thread or a signal handler): requests in flight are
   * abandoned and no retry starts.  May be NULL. */
  volatile sig_atomic_t *cancel;
} kf_llm_opts;

/* A proposer over o (strings copied).  0 or KF_EINVAL / KF_ENOMEM with
 * err.  Calls curl_global_init: create it before starting threads. */
int kf_llm_new(const kf_llm_opts *o, kf_proposer **out, char *err,
               size_t errlen);

/* Parses a reply's content.  The kernel is the first fenced block (```)
 * whose info string is empty or names a C-family language (c, cuda, cu,
 * cpp, c++, h); a ```json block, if any, declares the knob space:
 *   {"name": "tiled", "knobs": {"BLOCK": [64, 128], "UNROLL": ["2", "4"]}}
 * (or "knobs": [{"name": ..., "values": [...]}]), by the rules of a
 * template's knobs in spec.json: at most 12 knobs, names C identifiers
 * not starting with KF_, 1..16 distinct values each of 1..23 characters
 * of [A-Za-z0-9_.+-] (numbers are written as integers or %g).  0 with
 * *out filled, or KF_EPROTO with the reason in err ("no fenced code block
 * in the reply", "knobs JSON: ...").  out is cleared first. */
int kf_llm_reply_parse(const char *content, kf_proposal *out, char *err,
                       size_t errlen);

/* The version id of a prompt file: "NAME@" and the first 12 hex digits of
 * sha256 of its text. */
void kf_llm_prompt_version(const char *name, const char *text, char *out,
                           size_t len);

#endif
