/* SPDX-License-Identifier: Apache-2.0 */
/*
 * harness/core/elf_util.h -- bounds-checked reading of an ELF file held in
 * memory, for the link checks of C (harness/cpu/elfcheck.c) and CUDA
 * (harness/cuda/elfcheck.c) shared objects.  Nothing here trusts an
 * offset or size the file states: a view that does not fit is NULL.
 */
#ifndef KF_HARNESS_ELF_UTIL_H
#define KF_HARNESS_ELF_UTIL_H

#include <elf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* buf[off, off + size), or NULL when that is not inside buf[0, len). */
const void *kf_harness__elf_at(const unsigned char *buf, size_t len,
                               uint64_t off, uint64_t size);
/* kf_harness__elf_at for a table of Elf64 structures (headers, symbols,
 * dynamic entries): also NULL when the view is not 8-byte aligned.  Every
 * linker aligns these; reading one through a misaligned pointer is
 * undefined behaviour (found by fuzz_elf_cpu), so such a file is refused
 * as malformed.  buf itself must be 8-byte aligned (malloc'd). */
const void *kf_harness__elf_table(const unsigned char *buf, size_t len,
                                  uint64_t off, uint64_t size);
/* The NUL-terminated string at idx of string table strtab, or NULL. */
const char *kf_harness__elf_str(const unsigned char *buf, size_t len,
                                const Elf64_Shdr *strtab, uint64_t idx);
/* The section table of a 64-bit ELF shared object held in buf. */
typedef struct {
  const Elf64_Ehdr *eh;
  const Elf64_Shdr *sh;    /* eh->e_shnum entries, inside buf */
  const Elf64_Shdr *shstr; /* the section-name table: one of sh */
} kf_harness_elf_so;
/* NULL when buf is a 64-bit ELF shared object with a section table that
 * fits; else what is wrong with it (a reason text, static). */
const char *kf_harness__elf_open_so(const unsigned char *buf, size_t len,
                                    kf_harness_elf_so *so);
/* Writable sections the dynamic linker fills at load (RELRO makes most
 * read-only after it) or that hold only toolchain bookkeeping: not a
 * candidate's state. */
bool kf_harness__elf_toolchain_writable(const char *section);

#endif
