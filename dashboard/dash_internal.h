/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dashboard/dash_internal.h -- what the dashboard's files share: the
 * session table (dash_session.c), the JSON views of the coordinator's
 * read RPCs (dash_api.c) and the embedded assets (generated).
 */
#ifndef KF_DASH_INTERNAL_H
#define KF_DASH_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "rpc.h"

/* ------------------------------------------------------------ sessions -- */

/* A credential is 1..KF_DASH_TOKEN_MAX bytes of printable ASCII without
 * spaces: anything else is refused before it reaches a header. */
#define KF_DASH_TOKEN_MAX 512
bool kf_dash__token_ok(const char *t);

/* Session ids: 64 hex characters from getrandom(2). */
#define KF_DASH_SID_LEN 64

typedef struct kf_dash_sessions kf_dash_sessions;

/* At most cap sessions, each dropped after idle_ms without use; when full
 * the least recently used goes.  NULL on ENOMEM. */
kf_dash_sessions *kf_dash__sessions_new(size_t cap, unsigned idle_ms);
void kf_dash__sessions_free(kf_dash_sessions *t);
/* A new session holding a copy of token; sid gets its id (NUL-terminated).
 * 0 or KF_E* (no randomness, ENOMEM). */
int kf_dash__session_add(kf_dash_sessions *t, const char *token,
                         char sid[KF_DASH_SID_LEN + 1]);
/* Copies the session's token into tok (tlen >= KF_DASH_TOKEN_MAX + 1) and
 * marks it used; false when there is no such (live) session. */
bool kf_dash__session_token(kf_dash_sessions *t, const char *sid, char *tok,
                            size_t tlen);
/* Forgets a session (logout, or the coordinator refused its token). */
void kf_dash__session_drop(kf_dash_sessions *t, const char *sid);

/* ----------------------------------------------------------------- api -- */

/* One GET /api/<path> for the caller's token: calls the coordinator's read
 * RPCs and returns the HTTP status with *body a malloc'd JSON document
 * (an {"error": ...} object unless 200).  *auth_refused is set when the
 * coordinator refused the token itself (UNAUTHENTICATED). */
int kf_dash__api(kf_rpc_client *cli, const char *token, const char *path,
                 char **body, bool *auth_refused);

/* Checks a token with the coordinator (ListCampaigns, limit 1): 0, or the
 * KF_E* of the call with its text in err (KF_EAUTH: refused). */
int kf_dash__check_token(kf_rpc_client *cli, const char *token, char *err,
                         size_t errlen);

/* -------------------------------------------------------------- assets -- */

/* Embedded from dashboard/assets/ at build time (cmake/embed_file.cmake). */
extern const char kf_dash__index_html[];
extern const char kf_dash__login_html[];
extern const char kf_dash__app_js[];
extern const char kf_dash__style_css[];

#endif
