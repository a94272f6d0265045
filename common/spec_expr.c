/* SPDX-License-Identifier: Apache-2.0 */
/*
 * common/spec_expr.c -- the integer expression language of spec.json:
 * shapes, flops, bytes and index ranges are written as expressions over
 * the problem's size params ("M*N", "(N + 1) / 2", "2*M*N*K").
 *
 * Grammar (whitespace anywhere between tokens):
 *   expr    := term (('+' | '-') term)*
 *   term    := unary (('*' | '/' | '%') unary)*
 *   unary   := '-' unary | primary
 *   primary := INTEGER | NAME | '(' expr ')'
 * Arithmetic is int64 with C semantics (division truncates toward zero);
 * every operation is checked, so overflow and division by zero are errors,
 * never wrapped values: a spec whose byte count wrapped would let a
 * candidate claim an impossible roofline.
 *
 * Hand-written recursive descent, no allocation, no state; errors carry a
 * 1-based column so a spec author can find the bad character.  Depth is
 * capped so a hostile spec ("((((...") cannot exhaust the stack.
 */
#include "spec_internal.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "err.h"
#include "spec.h"

#define EXPR_MAX_DEPTH 64

typedef struct {
  const char *src;
  size_t pos;
  const char (*names)[32];
  int n_names;
  const int64_t *values; /* NULL: check syntax and names only */
  int depth;
  char *why;
  size_t whylen;
} parser;

static int col(const parser *p) { return (int)p->pos + 1; }

static void skip_ws(parser *p) {
  while (p->src[p->pos] == ' ' || p->src[p->pos] == '\t') p->pos++;
}

static int fail(parser *p, const char *what) {
  return kf_seterr(KF_ESPEC, p->why, p->whylen, "%s at column %d", what,
                   col(p));
}

static int parse_expr(parser *p, int64_t *out);

static int unknown_name(parser *p, const char *name, size_t n) {
  char list[KF_SPEC_MAX_PARAMS * 34];
  size_t off = 0;
  list[0] = '\0';
  for (int i = 0; i < p->n_names && off < sizeof list; i++)
    off += (size_t)snprintf(list + off, sizeof list - off, "%s%s",
                            i ? ", " : "", p->names[i]);
  return kf_seterr(KF_ESPEC, p->why, p->whylen,
                   "unknown name '%.*s' (params: %s)", (int)n, name,
                   p->n_names ? list : "none");
}

static int parse_primary(parser *p, int64_t *out) {
  skip_ws(p);
  char c = p->src[p->pos];
  if (c == '(') {
    p->pos++;
    int rc = parse_expr(p, out);
    if (rc) return rc;
    skip_ws(p);
    if (p->src[p->pos] != ')') return fail(p, "syntax error: expected ')'");
    p->pos++;
    return 0;
  }
  if (isdigit((unsigned char)c)) {
    int64_t v = 0;
    size_t start = p->pos;
    while (isdigit((unsigned char)p->src[p->pos])) {
      int d = p->src[p->pos] - '0';
      if (__builtin_mul_overflow(v, 10, &v) ||
          __builtin_add_overflow(v, d, &v)) {
        p->pos = start;
        return fail(p, "integer literal too large");
      }
      p->pos++;
    }
    if (isalpha((unsigned char)p->src[p->pos]) || p->src[p->pos] == '_')
      return fail(p, "syntax error: letter after number (write 2*N, not 2N)");
    *out = v;
    return 0;
  }
  if (isalpha((unsigned char)c) || c == '_') {
    size_t start = p->pos;
    while (isalnum((unsigned char)p->src[p->pos]) || p->src[p->pos] == '_')
      p->pos++;
    size_t n = p->pos - start;
    for (int i = 0; i < p->n_names; i++) {
      if (strlen(p->names[i]) == n &&
          memcmp(p->names[i], p->src + start, n) == 0) {
        *out = p->values ? p->values[i] : 1;
        return 0;
      }
    }
    p->pos = start;
    return unknown_name(p, p->src + start, n);
  }
  if (c == '\0') return fail(p, "syntax error: expression ends early");
  char what[96];
  snprintf(what, sizeof what,
           "syntax error: unexpected '%c' (expected a number, a param or "
           "'(')",
           isprint((unsigned char)c) ? c : '?');
  return fail(p, what);
}

static int parse_unary(parser *p, int64_t *out) {
  skip_ws(p);
  if (p->src[p->pos] != '-') return parse_primary(p, out);
  size_t at = p->pos++;
  if (++p->depth > EXPR_MAX_DEPTH) return fail(p, "expression nested too deeply");
  int64_t v;
  int rc = parse_unary(p, &v);
  p->depth--;
  if (rc) return rc;
  if (p->values && __builtin_sub_overflow((int64_t)0, v, out)) {
    p->pos = at;
    return fail(p, "overflow");
  }
  if (!p->values) *out = 0;
  return 0;
}

/* One binary operation at column of the operator; in check-only mode the
 * values are placeholders, so nothing is computed. */
static int apply(parser *p, char op, size_t at, int64_t a, int64_t b,
                 int64_t *out) {
  if (!p->values) {
    *out = 1;
    return 0;
  }
  bool ovf = false;
  switch (op) {
  case '+': ovf = __builtin_add_overflow(a, b, out); break;
  case '-': ovf = __builtin_sub_overflow(a, b, out); break;
  case '*': ovf = __builtin_mul_overflow(a, b, out); break;
  case '/':
  case '%':
    if (b == 0) {
      p->pos = at;
      return fail(p, op == '/' ? "division by zero" : "modulo by zero");
    }
    if (a == INT64_MIN && b == -1) {
      ovf = true;
      break;
    }
    *out = op == '/' ? a / b : a % b;
    break;
  }
  if (ovf) {
    p->pos = at;
    return fail(p, "overflow");
  }
  return 0;
}

static int parse_term(parser *p, int64_t *out) {
  int rc = parse_unary(p, out);
  for (;;) {
    if (rc) return rc;
    skip_ws(p);
    char op = p->src[p->pos];
    if (op != '*' && op != '/' && op != '%') return 0;
    size_t at = p->pos++;
    int64_t rhs;
    rc = parse_unary(p, &rhs);
    if (!rc) {
      size_t end = p->pos;
      rc = apply(p, op, at, *out, rhs, out);
      if (!rc) p->pos = end;
    }
  }
}

static int parse_expr(parser *p, int64_t *out) {
  if (++p->depth > EXPR_MAX_DEPTH) return fail(p, "expression nested too deeply");
  int rc = parse_term(p, out);
  for (;;) {
    if (rc) break;
    skip_ws(p);
    char op = p->src[p->pos];
    if (op != '+' && op != '-') break;
    size_t at = p->pos++;
    int64_t rhs;
    rc = parse_term(p, &rhs);
    if (!rc) {
      size_t end = p->pos;
      rc = apply(p, op, at, *out, rhs, out);
      if (!rc) p->pos = end;
    }
  }
  p->depth--;
  return rc;
}

int kf_spec__expr(const char *expr, const char (*names)[32], int n_names,
                  const int64_t *values, int64_t *out, char *why,
                  size_t whylen) {
  parser p = {.src = expr ? expr : "", .names = names, .n_names = n_names,
              .values = values, .why = why, .whylen = whylen};
  *out = 0;
  skip_ws(&p);
  if (p.src[p.pos] == '\0')
    return kf_seterr(KF_ESPEC, why, whylen, "empty expression");
  int64_t v;
  int rc = parse_expr(&p, &v);
  if (rc) return rc;
  skip_ws(&p);
  if (p.src[p.pos] != '\0') {
    if (p.src[p.pos] == ')') return fail(&p, "syntax error: unmatched ')'");
    char what[64];
    snprintf(what, sizeof what,
             "syntax error: unexpected '%c' (expected an operator)",
             isprint((unsigned char)p.src[p.pos]) ? p.src[p.pos] : '?');
    return fail(&p, what);
  }
  *out = values ? v : 0;
  return 0;
}
