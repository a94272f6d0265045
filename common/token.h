/* SPDX-License-Identifier: Apache-2.0 */
/*
 * common/token.h -- API credentials: roles, secrets, their hashes, and
 * reading a secret without putting it in argv.
 *
 * A credential is a random secret ("kft_" + 64 hex digits, 256 random
 * bits from getrandom).  Only its SHA-256 is stored (db: api_tokens.hash,
 * 64 lowercase hex digits) and only the hash is compared by the server,
 * so the database never holds anything a client could present.
 *
 * Roles are bits so a method can allow several: a worker runs tasks, a
 * submitter submits and reads, an admin may do everything.  No state.
 */
#ifndef KF_TOKEN_H
#define KF_TOKEN_H

#include <stddef.h>
#include <stdint.h>

#define KF_ROLE_WORKER 1u
#define KF_ROLE_SUBMITTER 2u
#define KF_ROLE_ADMIN 4u

#define KF_TOKEN_SECRET_LEN 68 /* "kft_" + 64 hex, without the NUL */
#define KF_TOKEN_HASH_LEN 32   /* SHA-256, bytes */
#define KF_TOKEN_MAX 4096      /* longest secret accepted from a file/env */

/* Role name ("worker", "submitter", "admin") -> KF_ROLE_*; 0 if unknown. */
unsigned kf_token_role_parse(const char *name);
/* KF_ROLE_* -> static name; "none" for 0, "mixed" for several bits. */
const char *kf_token_role_name(unsigned role);

/* Writes a fresh secret (KF_TOKEN_SECRET_LEN chars + NUL) into out, which
 * must hold at least KF_TOKEN_SECRET_LEN + 1 bytes.  0, or KF_EIO when the
 * kernel has no randomness for us, KF_EINVAL when out is too small. */
int kf_token_generate(char *out, size_t outlen);

/* SHA-256 of the secret's n bytes.  0 or KF_EINTERNAL (libcrypto). */
int kf_token_hash(const char *secret, size_t n,
                  uint8_t out[KF_TOKEN_HASH_LEN]);
/* The same as 64 lowercase hex digits + NUL (hex must hold 65 bytes). */
int kf_token_hash_hex(const char *secret, size_t n, char hex[65]);
/* 64 hex digits -> 32 bytes; 0 or KF_EINVAL. */
int kf_token_hex_decode(const char *hex, uint8_t out[KF_TOKEN_HASH_LEN]);

/* Reads a secret from a file: it must be a regular file readable by its
 * owner only (mode & 077 == 0: a token file others can read is a leaked
 * token), hold 1..KF_TOKEN_MAX bytes on one line; one trailing "\n" or
 * "\r\n" is stripped.  0, or KF_EIO / KF_EPERM / KF_EINVAL with text in
 * err. */
int kf_token_read_file(const char *path, char *out, size_t outlen, char *err,
                       size_t errlen);

/* kf_token_read_file into a malloc'd buffer (*out; caller frees). */
int kf_token_read_file_alloc(const char *path, char **out, char *err,
                             size_t errlen);

/* The credential a program presents: the file when path is set (the
 * --token-file flag), else $KF_TOKEN_FILE, else $KF_TOKEN.  *out is
 * malloc'd (caller frees), NULL when none was given (returns 0).  Errors
 * as kf_token_read_file, or KF_ENOMEM. */
int kf_token_load(const char *path, char **out, char *err, size_t errlen);

#endif
