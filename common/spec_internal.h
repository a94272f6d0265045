/* SPDX-License-Identifier: Apache-2.0 */
/*
 * common/spec_internal.h -- names shared by spec.c and spec_expr.c only.
 */
#ifndef KF_SPEC_INTERNAL_H
#define KF_SPEC_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

/* Evaluates EXPR over the names NAMES[0..n_names) bound to VALUES.  With
 * values == NULL only syntax and names are checked (*out is set to 0), so a
 * spec can be refused before any size is known.  Returns 0 or KF_ESPEC
 * with the bare reason in why ("unknown name 'K' (params: M, N)", "syntax
 * error at column 4: ...", "division by zero at column 3", "overflow at
 * column 2"); the caller adds file and field. */
int kf_spec__expr(const char *expr, const char (*names)[32], int n_names,
                  const int64_t *values, int64_t *out, char *why,
                  size_t whylen);

#endif
