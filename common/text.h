/* SPDX-License-Identifier: Apache-2.0 */
/*
 * common/text.h -- text that crosses a trust boundary: made safe to store
 * and to show, or checked and refused.
 *
 * Where text comes from something we do not trust (a candidate's compiler
 * errors and symbol names in a harness reason, a proposer's names, a
 * worker's report), two things can go wrong downstream: PostgreSQL
 * refuses bytes that are not UTF-8 (and a refused row used to fail a
 * whole batch), and a terminal obeys escape sequences and right-to-left
 * overrides in what `kf` prints.  So:
 *  - kf_text_sanitize makes any bytes valid, display-safe UTF-8 of a
 *    bounded length: the worker runs every text it reports through it,
 *    the CLI every name it prints;
 *  - kf_text_check says whether bytes are already acceptable (valid
 *    UTF-8, no NUL, not too long): the coordinator and the store refuse
 *    what fails it, naming the field;
 *  - kf_text_check_wire checks every string field of an encoded protobuf
 *    message before it is unpacked, because unpacking into C strings
 *    silently cuts a string at its first NUL;
 *  - kf_text_sanitize_pb sanitizes every string field of an unpacked
 *    message in place.
 *
 * No state, no locks: any thread.  Nothing here allocates except the
 * *_dup and *_pb functions, which say so.
 */
#ifndef KF_TEXT_H
#define KF_TEXT_H

#include <protobuf-c/protobuf-c.h>
#include <stdbool.h>
#include <stddef.h>

/* Bounds on reported text (bytes, without the NUL).  The worker caps what
 * it reports at these and the store refuses longer ones, so a report the
 * worker made is never refused for its length. */
#define KF_TEXT_REASON_MAX 16384 /* a result's or a stage's reason */
#define KF_TEXT_NAME_MAX 256     /* stage names, kernel names, tool names */

/* kf_text_sanitize flags. */
#define KF_TEXT_MULTILINE 1u /* keep \n and \t (reasons); else dropped */

/* Copies the n bytes at `in` to `out` (cap bytes, NUL included) as
 * display-safe UTF-8:
 *  - a byte that does not begin a valid UTF-8 sequence (stray
 *    continuation, overlong form, surrogate, beyond U+10FFFF, cut short)
 *    becomes the four characters \xNN;
 *  - control characters are dropped: NUL, C0 (except \n and \t with
 *    KF_TEXT_MULTILINE), DEL, C1 (U+0080..U+009F), and a terminal escape
 *    sequence whole (ESC [ ... final byte, ESC ] ... BEL or ESC \, ESC
 *    and one character);
 *  - bidirectional formatting characters are dropped (U+061C, U+200E,
 *    U+200F, U+202A..U+202E, U+2066..U+2069), so text cannot reorder what
 *    is printed after it;
 *  - when the result would not fit, it is cut on a character boundary
 *    and ends in "..." (an escape is never split either).
 * in may hold NULs (n says how long it is); in and out must not overlap.
 * cap 0 writes nothing.  Returns the length written (excluding NUL). */
size_t kf_text_sanitize(const void *in, size_t n, char *out, size_t cap,
                        unsigned flags);

/* kf_text_sanitize into a malloc'd string of at most max bytes (plus the
 * NUL).  NULL on ENOMEM. */
char *kf_text_sanitize_dup(const void *in, size_t n, size_t max,
                           unsigned flags);

/* true when kf_text_sanitize would return the text unchanged (valid
 * UTF-8, nothing dropped; max is not checked). */
bool kf_text_is_clean(const void *in, size_t n, unsigned flags);

/* 0 when the n bytes at s are valid UTF-8 without NUL and n <= max; else
 * KF_EINVAL with why as a phrase to put after the field's name: "is not
 * valid UTF-8 (byte 17)", "contains a NUL byte (byte 3)", "is longer than
 * 64 bytes (70)".  s may be NULL when n is 0. */
int kf_text_check(const void *s, size_t n, size_t max, char *why,
                  size_t whylen);

/* Checks the string fields of a message of type `type` encoded in
 * [p, p + n), recursively through its message fields, with kf_text_check
 * (no length limit: the handlers check lengths).  Fields the descriptor
 * does not know and non-string fields are skipped.  0, or KF_EINVAL with
 * why naming the field ("tasks[3].kind contains a NUL byte (byte 2)"), or
 * KF_EPROTO when the bytes are not a well-formed message. */
int kf_text_check_wire(const ProtobufCMessageDescriptor *type,
                       const unsigned char *p, size_t n, char *why,
                       size_t whylen);

/* Replaces every string field of m (recursively, repeated ones too) that
 * kf_text_sanitize would change, or that is longer than max bytes, by its
 * sanitized copy (flags apply to every field).  m must have been unpacked
 * with the default allocator (its strings are freed with free()).  0 or
 * KF_ENOMEM (fields done so far stay sanitized; the rest unchanged). */
int kf_text_sanitize_pb(ProtobufCMessage *m, size_t max, unsigned flags);

#endif
