/* SPDX-License-Identifier: Apache-2.0 */
/*
 * harness/core/elf_util.c -- bounds-checked views into an in-memory ELF file,
 * shared by the C and CUDA link checks (harness/core/elf_util.h).
 */
#include "elf_util.h"

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
