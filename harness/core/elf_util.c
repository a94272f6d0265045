/* SPDX-License-Identifier: Apache-2.0 */
/*
 * harness/core/elf_util.c -- bounds-checked views into an in-memory ELF file,
 * shared by the C and CUDA link checks (harness/core/elf_util.h).
 */
#include <stdio.h>

#include "elf_util.h"
#include "util.h"

#include <string.h>

const void *kf_harness__elf_at(const unsigned char *buf, size_t len,
                               uint64_t off, uint64_t size) {
  if (off > len || size > len - off) return NULL;
  return buf + off;
}

const void *kf_harness__elf_table(const unsigned char *buf, size_t len,
                                  uint64_t off, uint64_t size) {
  const unsigned char *p = kf_harness__elf_at(buf, len, off, size);
  if (p && (uintptr_t)p % 8 != 0) return NULL;
  return p;
}

const char *kf_harness__elf_str(const unsigned char *buf, size_t len,
                                const Elf64_Shdr *strtab, uint64_t idx) {
  if (!strtab || idx >= strtab->sh_size) return NULL;
  const char *s = kf_harness__elf_at(buf, len, strtab->sh_offset,
                                     strtab->sh_size);
  if (!s) return NULL;
  if (!memchr(s + idx, '\0', strtab->sh_size - idx)) return NULL;
  return s + idx;
}

const char *kf_harness__elf_open_so(const unsigned char *buf, size_t len,
                                    kf_harness_elf_so *so) {
  memset(so, 0, sizeof *so);
  const Elf64_Ehdr *eh = kf_harness__elf_table(buf, len, 0, sizeof *eh);
  if (!eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
      eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_type != ET_DYN)
    return "not a 64-bit ELF shared object";
  if (eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_shnum == 0)
    return "ELF: no section headers";
  const Elf64_Shdr *sh =
      kf_harness__elf_table(buf, len, eh->e_shoff,
                         (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr));
  if (!sh || eh->e_shstrndx >= eh->e_shnum) return "ELF: bad section table";
  so->eh = eh;
  so->sh = sh;
  so->shstr = &sh[eh->e_shstrndx];
  return NULL;
}

bool kf_harness__elf_toolchain_writable(const char *section) {
  static const char *const t[] = {".init_array", ".fini_array", ".preinit_array",
                                  ".dynamic", ".got", ".got.plt",
                                  ".data.rel.ro", ".tm_clone_table", ".ctors",
                                  ".dtors"};
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
    if (!strcmp(section, t[i])) return true;
  return false;
}

static uint64_t name_hash(const char *s) {
  return kf_fnv1a(KF_FNV1A_INIT, s, strlen(s));
}

/* Calls f on every named symbol of every SHT_SYMTAB and SHT_DYNSYM
 * section; stops when f returns true.  NULL, or what is malformed. */
typedef bool (*sym_fn)(const Elf64_Sym *sym, const char *name, void *arg);
static const char *each_symbol(const unsigned char *buf, size_t len,
                               const kf_harness_elf_so *so, sym_fn f,
                               void *arg) {
  for (unsigned i = 0; i < so->eh->e_shnum; i++) {
    const Elf64_Shdr *t = &so->sh[i];
    if (t->sh_type != SHT_SYMTAB && t->sh_type != SHT_DYNSYM) continue;
    if (t->sh_entsize != sizeof(Elf64_Sym) || t->sh_link >= so->eh->e_shnum)
      return "ELF: bad symbol table";
    const Elf64_Sym *sym = kf_harness__elf_table(buf, len, t->sh_offset,
                                                 t->sh_size);
    if (!sym) return "ELF: bad symbol table";
    const Elf64_Shdr *str = &so->sh[t->sh_link];
    size_t n = t->sh_size / sizeof(Elf64_Sym);
    for (size_t k = 1; k < n; k++) {
      const char *nm = kf_harness__elf_str(buf, len, str, sym[k].st_name);
      if (!nm) return "ELF: bad symbol name";
      if (*nm && f(&sym[k], nm, arg)) return NULL;
    }
  }
  return NULL;
}

static bool add_undef(const Elf64_Sym *sym, const char *name, void *arg) {
  kf_harness_elf_undefs *u = arg;
  if (sym->st_shndx != SHN_UNDEF) return false;
  uint64_t h = name_hash(name);
  for (int i = 0; i < u->n; i++)
    if (u->hash[i] == h) return false;
  if (u->n == KF_HARNESS_ELF_MAX_UNDEF) {
    u->truncated = true;
    return true;
  }
  u->hash[u->n++] = h;
  return false;
}

const char *kf_harness__elf_undefs(const unsigned char *buf, size_t len,
                                   const kf_harness_elf_so *so,
                                   kf_harness_elf_undefs *u) {
  u->n = 0;
  u->truncated = false;
  return each_symbol(buf, len, so, add_undef, u);
}

typedef struct {
  const kf_harness_elf_undefs *u;
  const char *found;
} defines_arg;

static bool defines_one(const Elf64_Sym *sym, const char *name, void *arg) {
  defines_arg *a = arg;
  int type = ELF64_ST_TYPE(sym->st_info);
  if (sym->st_shndx == SHN_UNDEF || type == STT_FILE || type == STT_SECTION)
    return false;
  uint64_t h = name_hash(name);
  for (int i = 0; i < a->u->n; i++)
    if (a->u->hash[i] == h) {
      a->found = name;
      return true;
    }
  return false;
}

bool kf_harness__elf_defines_undef(const unsigned char *buf, size_t len,
                                   const kf_harness_elf_so *so,
                                   const kf_harness_elf_undefs *u,
                                   char *name, size_t namelen,
                                   const char **bad) {
  defines_arg a = {u, NULL};
  *bad = each_symbol(buf, len, so, defines_one, &a);
  if (!a.found) return false;
  snprintf(name, namelen, "%s", a.found);
  return true;
}

bool kf_harness__elf_hooks(const unsigned char *buf, size_t len,
                           const kf_harness_elf_so *so,
                           const kf_harness_elf_undefs *baseline,
                           kf_harness_elf_undefs *mine, char *why,
                           size_t whylen) {
  const char *bad = NULL;
  if (!baseline) {
    bad = kf_harness__elf_undefs(buf, len, so, mine);
  } else {
    char hook[64];
    if (kf_harness__elf_defines_undef(buf, len, so, baseline, hook,
                                      sizeof hook, &bad)) {
      snprintf(why, whylen, "defines '%.64s', a name the toolchain's own "
               "startup code calls (it would run on load, before any "
               "call): code may not run on load", hook);
      return true;
    }
  }
  if (bad) snprintf(why, whylen, "%s", bad);
  return bad != NULL;
}
