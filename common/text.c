/* SPDX-License-Identifier: Apache-2.0 */
/*
 * common/text.c -- sanitizing and checking untrusted text (text.h).
 *
 * One decoder (u8_seq) decides what a valid UTF-8 sequence is (RFC 3629:
 * no overlong forms, no surrogates, nothing above U+10FFFF), and both the
 * sanitizer and the checker use it, so "valid" means the same thing where
 * text is made and where it is refused -- the same thing PostgreSQL means.
 *
 * The sanitizer is one loop over "pieces" (a character kept, an escape
 * written, something dropped); cutting to a length happens between pieces,
 * so neither a character nor an escape is ever split.  When the text does
 * not fit, the loop runs again with room kept for the "..." mark.
 */
#include "text.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"

/* Length of the valid UTF-8 sequence at p (1..4), or 0 when the bytes
 * there do not begin one.  *cp gets the code point. */
static size_t u8_seq(const unsigned char *p, size_t n, uint32_t *cp) {
  unsigned char b = p[0];
  if (b < 0x80) {
    *cp = b;
    return 1;
  }
  size_t len;
  unsigned char lo = 0x80, hi = 0xBF; /* bounds of the second byte */
  if (b >= 0xC2 && b <= 0xDF) {
    len = 2;
  } else if (b >= 0xE0 && b <= 0xEF) {
    len = 3;
    if (b == 0xE0) lo = 0xA0;      /* overlong */
    else if (b == 0xED) hi = 0x9F; /* surrogates */
  } else if (b >= 0xF0 && b <= 0xF4) {
    len = 4;
    if (b == 0xF0) lo = 0x90;      /* overlong */
    else if (b == 0xF4) hi = 0x8F; /* above U+10FFFF */
  } else {
    return 0; /* continuation byte, C0/C1 overlong lead, F5..FF */
  }
  if (n < len) return 0;
  if (p[1] < lo || p[1] > hi) return 0;
  for (size_t i = 2; i < len; i++)
    if ((p[i] & 0xC0) != 0x80) return 0;
  uint32_t c = b & (0x7F >> len);
  for (size_t i = 1; i < len; i++) c = c << 6 | (p[i] & 0x3F);
  *cp = c;
  return len;
}

/* Bidirectional formatting characters: they reorder what follows. */
static bool is_bidi(uint32_t c) {
  return c == 0x061C || c == 0x200E || c == 0x200F ||
         (c >= 0x202A && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069);
}

/* Length of the terminal escape sequence starting with the ESC at p[0]
 * (at least 1: the ESC alone). */
static size_t esc_len(const unsigned char *p, size_t n) {
  if (n < 2) return 1;
  unsigned char k = p[1];
  if (k == '[') { /* CSI: parameters and intermediates, then a final byte */
    size_t i = 2;
    while (i < n && p[i] >= 0x20 && p[i] <= 0x3F) i++;
    if (i < n && p[i] >= 0x40 && p[i] <= 0x7E) return i + 1;
    return i; /* malformed: drop what was read, keep the rest */
  }
  if (k == ']' || k == 'P' || k == 'X' || k == '^' || k == '_') {
    /* OSC, DCS, SOS, PM, APC: a string up to BEL or ESC \ (ST); a
     * newline ends it too, so one bad line cannot eat a whole reason. */
    size_t i = 2;
    while (i < n) {
      if (p[i] == 0x07) return i + 1;
      if (p[i] == 0x1B && i + 1 < n && p[i + 1] == '\\') return i + 2;
      if (p[i] == '\n') return i;
      i++;
    }
    return n;
  }
  if (k >= 0x20 && k <= 0x7E) return 2; /* ESC and one character */
  return 1;
}

/* What the piece at in[i] becomes: *skip input bytes are consumed and
 * *w bytes of rep (0: dropped) are written. */
static void piece(const unsigned char *in, size_t n, size_t i, unsigned flags,
                  size_t *skip, char rep[5], size_t *w) {
  uint32_t c;
  size_t len = u8_seq(in + i, n - i, &c);
  if (len == 0) {
    static const char hex[] = "0123456789abcdef";
    rep[0] = '\\';
    rep[1] = 'x';
    rep[2] = hex[in[i] >> 4];
    rep[3] = hex[in[i] & 15];
    *skip = 1;
    *w = 4;
    return;
  }
  *skip = len;
  *w = 0;
  if (c == 0x1B) {
    *skip = esc_len(in + i, n - i);
    return;
  }
  if (c < 0x20 || c == 0x7F) {
    if ((flags & KF_TEXT_MULTILINE) && (c == '\n' || c == '\t')) {
      rep[0] = (char)c;
      *w = 1;
    }
    return;
  }
  if ((c >= 0x80 && c <= 0x9F) || is_bidi(c)) return;
  memcpy(rep, in + i, len);
  *w = len;
}

/* Writes pieces while they fit in `limit` bytes.  Returns the length;
 * *all tells whether every input byte was consumed. */
static size_t emit(const unsigned char *in, size_t n, char *out, size_t limit,
                   unsigned flags, bool *all) {
  size_t i = 0, o = 0;
  while (i < n) {
    size_t skip, w;
    char rep[5];
    piece(in, n, i, flags, &skip, rep, &w);
    if (o + w > limit) break;
    if (w) memcpy(out + o, rep, w);
    o += w;
    i += skip;
  }
  *all = i >= n;
  return o;
}

size_t kf_text_sanitize(const void *in, size_t n, char *out, size_t cap,
                        unsigned flags) {
  if (cap == 0) return 0;
  const unsigned char *u = in;
  if (!u) n = 0;
  bool all;
  size_t o = emit(u, n, out, cap - 1, flags, &all);
  if (!all) {
    /* Cut: again with room for the mark ("..." when it fits at all). */
    size_t mark = cap - 1 >= 3 ? 3 : 0;
    o = emit(u, n, out, cap - 1 - mark, flags, &all);
    memcpy(out + o, "...", mark);
    o += mark;
  }
  out[o] = '\0';
  return o;
}

char *kf_text_sanitize_dup(const void *in, size_t n, size_t max,
                           unsigned flags) {
  /* At most 4 output bytes per input byte (an escape). */
  size_t need = n <= (SIZE_MAX - 1) / 4 ? 4 * n : SIZE_MAX - 1;
  size_t cap = (need < max ? need : max) + 1;
  char *out = malloc(cap);
  if (!out) return NULL;
  kf_text_sanitize(in, n, out, cap, flags);
  return out;
}

bool kf_text_is_clean(const void *in, size_t n, unsigned flags) {
  const unsigned char *u = in;
  for (size_t i = 0; i < n;) {
    size_t skip, w;
    char rep[5];
    piece(u, n, i, flags, &skip, rep, &w);
    if (w != skip || memcmp(rep, u + i, w) != 0) return false;
    i += skip;
  }
  return true;
}

int kf_text_check(const void *s, size_t n, size_t max, char *why,
                  size_t whylen) {
  if (n > max)
    return kf_seterr(KF_EINVAL, why, whylen, "is longer than %zu bytes (%zu)",
                     max, n);
  const unsigned char *u = s;
  for (size_t i = 0; i < n;) {
    if (u[i] == 0)
      return kf_seterr(KF_EINVAL, why, whylen,
                       "contains a NUL byte (byte %zu)", i);
    uint32_t c;
    size_t len = u8_seq(u + i, n - i, &c);
    if (len == 0)
      return kf_seterr(KF_EINVAL, why, whylen,
                       "is not valid UTF-8 (byte %zu)", i);
    i += len;
  }
  return 0;
}

/* ------------------------------------------------------------ wire -- */

/* Reads a varint at *i; false when it runs past n or over 10 bytes. */
static bool wire_varint(const unsigned char *p, size_t n, size_t *i,
                        uint64_t *v) {
  uint64_t x = 0;
  for (int shift = 0; shift < 70; shift += 7) {
    if (*i >= n) return false;
    unsigned char b = p[(*i)++];
    x |= (uint64_t)(b & 0x7F) << shift;
    if (!(b & 0x80)) {
      *v = x;
      return true;
    }
  }
  return false;
}

#define WIRE_MAX_DEPTH 32

static int wire_walk(const ProtobufCMessageDescriptor *type,
                     const unsigned char *p, size_t n, char *path,
                     size_t pathlen, size_t pathcap, int depth, char *why,
                     size_t whylen) {
  if (depth > WIRE_MAX_DEPTH)
    return kf_seterr(KF_EPROTO, why, whylen, "messages nested too deeply");
  /* Index of the next element of each repeated field, by field index. */
  unsigned *seen = calloc(type->n_fields + 1, sizeof *seen);
  if (!seen) return kf_seterr(KF_ENOMEM, why, whylen, "out of memory");
  int rc = 0;
  size_t i = 0;
  while (i < n && !rc) {
    uint64_t key, len = 0;
    if (!wire_varint(p, n, &i, &key)) {
      rc = kf_seterr(KF_EPROTO, why, whylen, "malformed field key");
      break;
    }
    unsigned wt = (unsigned)(key & 7);
    uint64_t num = key >> 3;
    const unsigned char *body = NULL;
    switch (wt) {
    case 0:
      if (!wire_varint(p, n, &i, &len))
        rc = kf_seterr(KF_EPROTO, why, whylen, "malformed varint");
      continue;
    case 1:
      if (n - i < 8) rc = kf_seterr(KF_EPROTO, why, whylen, "short fixed64");
      i += 8;
      continue;
    case 5:
      if (n - i < 4) rc = kf_seterr(KF_EPROTO, why, whylen, "short fixed32");
      i += 4;
      continue;
    case 2:
      if (!wire_varint(p, n, &i, &len) || len > n - i) {
        rc = kf_seterr(KF_EPROTO, why, whylen, "malformed length");
        continue;
      }
      body = p + i;
      i += (size_t)len;
      break;
    default: /* groups (3, 4) and 6, 7: protobuf-c refused them already */
      rc = kf_seterr(KF_EPROTO, why, whylen, "wire type %u", wt);
      continue;
    }
    const ProtobufCFieldDescriptor *f =
        num <= UINT32_MAX
            ? protobuf_c_message_descriptor_get_field(type, (unsigned)num)
            : NULL;
    if (!f || (f->type != PROTOBUF_C_TYPE_STRING &&
               f->type != PROTOBUF_C_TYPE_MESSAGE))
      continue;
    size_t fi = (size_t)(f - type->fields);
    unsigned idx = seen[fi]++;
    /* path + "." name + "[index]" */
    size_t at = pathlen;
    int w = snprintf(path + at, pathcap - at, "%s%s", at ? "." : "",
                     f->name);
    if (w > 0 && (size_t)w < pathcap - at) at += (size_t)w;
    if (f->label == PROTOBUF_C_LABEL_REPEATED) {
      w = snprintf(path + at, pathcap - at, "[%u]", idx);
      if (w > 0 && (size_t)w < pathcap - at) at += (size_t)w;
    }
    if (f->type == PROTOBUF_C_TYPE_STRING) {
      char what[96];
      if (kf_text_check(body, (size_t)len, SIZE_MAX, what, sizeof what))
        rc = kf_seterr(KF_EINVAL, why, whylen, "%s %s", path, what);
    } else {
      rc = wire_walk(f->descriptor, body, (size_t)len, path, at, pathcap,
                     depth + 1, why, whylen);
    }
    path[pathlen] = '\0';
  }
  free(seen);
  return rc;
}

int kf_text_check_wire(const ProtobufCMessageDescriptor *type,
                       const unsigned char *p, size_t n, char *why,
                       size_t whylen) {
  char path[256] = "";
  static const unsigned char none[1];
  return wire_walk(type, p ? p : none, p ? n : 0, path, 0, sizeof path, 0,
                   why, whylen);
}

/* ------------------------------------------------------ unpacked -- */

/* Sanitizes the string at *slot when needed; default is the field's
 * default value, which belongs to the descriptor and is never freed. */
static int fix_string(char **slot, const void *dflt, size_t max,
                      unsigned flags) {
  char *s = *slot;
  if (!s) return 0;
  size_t n = strlen(s);
  if (n <= max && kf_text_is_clean(s, n, flags)) return 0;
  char *c = kf_text_sanitize_dup(s, n, max, flags);
  if (!c) return KF_ENOMEM;
  if (s != dflt) free(s);
  *slot = c;
  return 0;
}

int kf_text_sanitize_pb(ProtobufCMessage *m, size_t max, unsigned flags) {
  if (!m) return 0;
  const ProtobufCMessageDescriptor *d = m->descriptor;
  for (unsigned i = 0; i < d->n_fields; i++) {
    const ProtobufCFieldDescriptor *f = &d->fields[i];
    if (f->type != PROTOBUF_C_TYPE_STRING &&
        f->type != PROTOBUF_C_TYPE_MESSAGE)
      continue;
    char *base = (char *)m;
    if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
      uint32_t which;
      memcpy(&which, base + f->quantifier_offset, sizeof which);
      if (which != f->id) continue;
    }
    size_t count = 1;
    void **items = (void **)(base + f->offset);
    if (f->label == PROTOBUF_C_LABEL_REPEATED) {
      memcpy(&count, base + f->quantifier_offset, sizeof count);
      items = *(void ***)(base + f->offset);
      if (!items) continue;
    }
    for (size_t k = 0; k < count; k++) {
      int rc = f->type == PROTOBUF_C_TYPE_STRING
                   ? fix_string((char **)&items[k], f->default_value, max,
                                flags)
                   : kf_text_sanitize_pb(items[k], max, flags);
      if (rc) return rc;
    }
  }
  return 0;
}
