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

/* The names a toolchain's own object code calls but leaves to others to
 * define: the undefined symbols of a baseline (an empty kernel built by
 * the same compiler), as FNV-1a hashes of their names.  crti's _init
 * calls __gmon_start__ when anything defines it, crtstuff's frame_dummy
 * the _ITM_ hooks, nvcc's registration constructor cudart's entry
 * points: a candidate that defines one of these names has its code run
 * on load (red team, 2026-11-30: a defined __gmon_start__ passed every
 * check, ran before the inputs were drawn, forged READY and did a gemm
 * outside the timed window, 26x). */
#define KF_HARNESS_ELF_MAX_UNDEF 1024
typedef struct {
  uint64_t hash[KF_HARNESS_ELF_MAX_UNDEF];
  int n;
  bool truncated; /* more than fit: only the first are checked */
} kf_harness_elf_undefs;
/* Collects so's undefined symbol names (.symtab and .dynsym) into u.
 * NULL, or what is malformed. */
const char *kf_harness__elf_undefs(const unsigned char *buf, size_t len,
                                   const kf_harness_elf_so *so,
                                   kf_harness_elf_undefs *u);
/* The first symbol so defines (any binding: a hidden definition is local
 * in the output, yet it satisfied the toolchain's reference at link
 * time) whose name is among u's, into name (NUL-terminated, cut to
 * namelen); true when there is one.  *bad is set when so is malformed. */
bool kf_harness__elf_defines_undef(const unsigned char *buf, size_t len,
                                   const kf_harness_elf_so *so,
                                   const kf_harness_elf_undefs *u,
                                   char *name, size_t namelen,
                                   const char **bad);

/* The link checks' use of the two above: without a baseline (building
 * one), collects so's undefined names into mine; with one, refuses a
 * definition of any of the baseline's.  true when refused, with why. */
bool kf_harness__elf_hooks(const unsigned char *buf, size_t len,
                           const kf_harness_elf_so *so,
                           const kf_harness_elf_undefs *baseline,
                           kf_harness_elf_undefs *mine, char *why,
                           size_t whylen);

#endif
