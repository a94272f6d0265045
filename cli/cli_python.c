/*
 * cli/cli_python.c -- Python source the CLI writes: string literals that
 * hold text (kernels, headers, a problem's modules) and the place in a
 * Python source where lines may be put before its own.  Shared by the
 * exports (cli_export_ext.c, cli_watch.c) and kf import (cli_import.c).
 */
#include <stdbool.h>
#include <string.h>

#include "cli_internal.h"

/* text as a Python string literal: one "..." piece per line inside
 * parentheses; backslash, quote and control bytes escaped.  Other bytes
 * pass as they are: sources come from PostgreSQL text, valid UTF-8, the
 * encoding of the file. */
void kf_cli__py_str(kf_cli__sbuf *b, const char *text) {
  kf_cli__sb_printf(b, "(\n");
  const char *p = text;
  while (*p) {
    kf_cli__sb_printf(b, "    \"");
    for (; *p && *p != '\n'; p++) {
      unsigned char ch = (unsigned char)*p;
      if (ch == '\\' || ch == '"')
        kf_cli__sb_printf(b, "\\%c", ch);
      else if (ch < 0x20 || ch == 0x7f)
        kf_cli__sb_printf(b, "\\x%02x", ch);
      else
        kf_cli__sb_printf(b, "%c", ch);
    }
    if (*p == '\n') {
      kf_cli__sb_printf(b, "\\n");
      p++;
    }
    kf_cli__sb_printf(b, "\"\n");
  }
  kf_cli__sb_printf(b, "    \"\"\n)\n");
}

/* The offset just past a Python source's `from __future__ import`
 * statements (0 when it has none): they may follow only blank lines,
 * comments and a docstring, so the scan stops at the first other
 * statement -- a "from __future__" inside a later string is text. */
size_t kf_cli__py_future_end(const char *src) {
  size_t end = 0;
  const char *p = src;
  bool doc = false; /* the docstring seen */
  while (*p) {
    const char *nl = strchr(p, '\n');
    size_t n = nl ? (size_t)(nl - p) + 1 : strlen(p);
    const char *q = p + strspn(p, " \t\r\f");
    if (*q == '\n' || *q == '#' || !*q) {
      p += n;
      continue;
    }
    if (q != p) break; /* indented: a continuation of something else */
    if (!strncmp(p, "from __future__ import", 22)) {
      /* a parenthesized list or a trailing backslash runs on */
      const char *e = p + n;
      bool paren = memchr(p, '(', n) && !memchr(p, ')', n);
      bool bs = n >= 2 && p[n - 2] == '\\';
      while (*e && (paren || bs)) {
        const char *l = e;
        nl = strchr(l, '\n');
        size_t m = nl ? (size_t)(nl - l) + 1 : strlen(l);
        if (paren && memchr(l, ')', m)) paren = false;
        bs = m >= 2 && l[m - 2] == '\\';
        e = l + m;
      }
      end = (size_t)(e - src);
      p = e;
      continue;
    }
    /* one docstring, before any future import */
    const char *d = p + (strchr("rRuU", *p) ? 1 : 0);
    if (!doc && !end && (d[0] == '"' || d[0] == '\'') && d[1] == d[0] &&
        d[2] == d[0]) {
      const char quote[4] = {d[0], d[0], d[0], 0};
      const char *close = strstr(d + 3, quote);
      if (!close) break;
      doc = true;
      nl = strchr(close + 3, '\n');
      p = nl ? nl + 1 : close + strlen(close);
      continue;
    }
    break;
  }
  return end;
}
