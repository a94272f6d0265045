/* SPDX-License-Identifier: Apache-2.0 */
/*
 * harness/cpu/elfcheck.c -- the "link" stage: what a compiled candidate may
 * import and run on load.  Parses the ELF64 file itself (no nm child): the
 * section headers, .dynsym/.dynstr and .dynamic, every offset bounds-
 * checked, since the bytes came from a compiler fed hostile source.
 *
 * Policy:
 *  - every undefined dynamic symbol is on the allow-list below: libm's
 *    scalar functions, mem*, malloc family, abort and the fortify/stack
 *    protector helpers, plus the four weak toolchain symbols crtstuff
 *    always references; anything that opens files, sockets, starts threads
 *    or processes, reads the clock or environment, or touches signals is
 *    refused by name;
 *  - DT_NEEDED only libc.so.6 and libm.so.6 (the jail holds no library);
 *  - no constructor/destructor of the candidate's: gcc's crtstuff puts
 *    exactly one entry in .init_array (frame_dummy) and one in .fini_array
 *    (__do_global_dtors_aux); more is the candidate's.  .init and .fini
 *    must have the size they have in the reference built by the same
 *    compiler (code put there with inline asm runs on load), and no
 *    DT_PREINIT_ARRAY or STT_GNU_IFUNC symbol (resolvers run on load);
 *    nor a definition of a name the baseline leaves undefined: crti and
 *    crtstuff call those hooks on load when something defines them
 *    (__gmon_start__, the _ITM_ pair);
 *  - no writable static state: a kernel that keeps a counter or a cache
 *    in a global or static variable can behave differently on later calls
 *    (right while checked, fast while timed) or replay old outputs.  Every
 *    symbol (.symtab, locals included) defined in a writable section other
 *    than the toolchain's (.got, .dynamic, the init arrays, .data.rel.ro)
 *    must also be defined by the baseline, an empty kernel built by the
 *    same compiler (crtstuff's completed.0, __dso_handle, __TMC_END__),
 *    and those sections may not be larger in total than the baseline's, so
 *    unnamed data placed with inline asm is caught as well.  Read-only
 *    tables (static const) are fine.  The runner also runs every call in a
 *    fresh process, so state that slips past this rule cannot survive a
 *    call anyway; this check is what gives the user a clear reason.
 * Whatever still slips through runs at dlopen under the runner's first
 * seccomp filter, in the jail, unprivileged: this check is the cheap,
 * well-explained first line, not the only one.
 */
#include <elf.h>
#include <stdio.h>
#include <string.h>

#include "cpu.h"
#include "internal.h"
#include "elf_util.h"
#include "outcome.h"

static const char *const allowed[] = {
    /* libm, double and float */
    "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh",
    "tanh", "asinh", "acosh", "atanh", "exp", "exp2", "exp10", "expm1", "log",
    "log2", "log10", "log1p", "pow", "sqrt", "cbrt", "hypot", "fabs", "fmin",
    "fmax", "fma", "fmod", "remainder", "floor", "ceil", "round", "trunc",
    "rint", "nearbyint", "lround", "llround", "lrint", "llrint", "erf", "erfc",
    "tgamma", "lgamma", "copysign", "nextafter", "ldexp", "frexp", "modf",
    "scalbn", "ilogb", "logb", "fdim", "sincos",
    "sinf", "cosf", "tanf", "asinf", "acosf", "atanf", "atan2f", "sinhf",
    "coshf", "tanhf", "asinhf", "acoshf", "atanhf", "expf", "exp2f", "exp10f",
    "expm1f", "logf", "log2f", "log10f", "log1pf", "powf", "sqrtf", "cbrtf",
    "hypotf", "fabsf", "fminf", "fmaxf", "fmaf", "fmodf", "remainderf",
    "floorf", "ceilf", "roundf", "truncf", "rintf", "nearbyintf", "lroundf",
    "llroundf", "lrintf", "llrintf", "erff", "erfcf", "tgammaf", "lgammaf",
    "copysignf", "nextafterf", "ldexpf", "frexpf", "modff", "scalbnf",
    "ilogbf", "logbf", "fdimf", "sincosf",
    /* memory */
    "memcpy", "memmove", "memset", "memcmp", "__memcpy_chk", "__memmove_chk",
    "__memset_chk", "malloc", "calloc", "realloc", "free", "aligned_alloc",
    "posix_memalign",
    /* failure paths */
    "abort", "__assert_fail", "__stack_chk_fail",
    "abs", "labs", "llabs",
    /* crtstuff's weak references, present in every shared object */
    "__cxa_finalize", "__gmon_start__", "_ITM_deregisterTMCloneTable",
    "_ITM_registerTMCloneTable",
};

/* "calls" for "calls", "inner" for gcc's function-local "inner.0". */
static void display_name(const char *nm, char *out, size_t outlen,
                         bool *local_static) {
  snprintf(out, outlen, "%.47s", nm);
  char *dot = strrchr(out, '.');
  *local_static = false;
  if (dot && dot != out && dot[1]) {
    bool digits = true;
    for (const char *p = dot + 1; *p; p++) digits &= *p >= '0' && *p <= '9';
    if (digits) {
      *dot = '\0';
      *local_static = true;
    }
  }
}

static bool is_allowed(const char *name) {
  for (size_t i = 0; i < sizeof allowed / sizeof allowed[0]; i++)
    if (!strcmp(name, allowed[i])) return true;
  return false;
}

#define REJECT(...)                                                           \
  do {                                                                        \
    snprintf(why, whylen, __VA_ARGS__);                                       \
    return KF_OUTCOME_LINK_REJECTED;                                          \
  } while (0)

int kf_harness__elf_check(const unsigned char *buf, size_t len,
                          const kf_harness_elf_info *baseline,
                          kf_harness_elf_info *info, char *why,
                          size_t whylen) {
  memset(info, 0, sizeof *info);
  kf_harness_elf_so so;
  const char *bad = kf_harness__elf_open_so(buf, len, &so);
  if (bad) REJECT("%s", bad);
  const Elf64_Ehdr *eh = so.eh;
  const Elf64_Shdr *sh = so.sh, *shstr = so.shstr;

  const Elf64_Shdr *dynsym = NULL, *dynamic = NULL, *symtab = NULL;
  bool state_sec[256] = {false}; /* by section index, when < 256 */
  const char *big_state = NULL;  /* a non-toolchain writable section */
  for (unsigned i = 0; i < eh->e_shnum; i++) {
    const char *nm = kf_harness__elf_str(buf, len, shstr, sh[i].sh_name);
    if (!nm) continue;
    if ((sh[i].sh_flags & SHF_ALLOC) && (sh[i].sh_flags & SHF_WRITE) &&
        !kf_harness__elf_toolchain_writable(nm)) {
      if (i < 256) state_sec[i] = true;
      info->state_bytes += sh[i].sh_size;
      if (strcmp(nm, ".data") != 0 && strcmp(nm, ".bss") != 0 &&
          sh[i].sh_size)
        big_state = nm;
    }
    if (sh[i].sh_type == SHT_SYMTAB) symtab = &sh[i];
    if (!strcmp(nm, ".init")) info->init_size = sh[i].sh_size;
    if (!strcmp(nm, ".fini")) info->fini_size = sh[i].sh_size;
    if (!strcmp(nm, ".ctors") || !strcmp(nm, ".dtors"))
      if (sh[i].sh_size > 16) REJECT("section %s holds constructors", nm);
    if (sh[i].sh_type == SHT_DYNSYM) dynsym = &sh[i];
    if (sh[i].sh_type == SHT_DYNAMIC) dynamic = &sh[i];
  }
  if (!dynsym || !dynamic) REJECT("ELF: no dynamic symbol table");

  /* .dynamic: constructors, destructors, needed libraries */
  const Elf64_Dyn *dyn =
      kf_harness__elf_table(buf, len, dynamic->sh_offset, dynamic->sh_size);
  if (!dyn) REJECT("ELF: bad .dynamic");
  const Elf64_Shdr *dynstr =
      dynamic->sh_link < eh->e_shnum ? &sh[dynamic->sh_link] : NULL;
  size_t ndyn = dynamic->sh_size / sizeof(Elf64_Dyn);
  for (size_t i = 0; i < ndyn && dyn[i].d_tag != DT_NULL; i++) {
    switch (dyn[i].d_tag) {
    case DT_INIT_ARRAYSZ: info->init_array = dyn[i].d_un.d_val / 8; break;
    case DT_FINI_ARRAYSZ: info->fini_array = dyn[i].d_un.d_val / 8; break;
    case DT_PREINIT_ARRAY: info->preinit = true; break;
    case DT_NEEDED: {
      const char *lib =
          kf_harness__elf_str(buf, len, dynstr, dyn[i].d_un.d_val);
      if (!lib) REJECT("ELF: bad DT_NEEDED");
      if (strcmp(lib, "libc.so.6") != 0 && strcmp(lib, "libm.so.6") != 0)
        REJECT("needs library %.64s: only libc and libm are available", lib);
      break;
    }
    default: break;
    }
  }
  if (info->preinit) REJECT("has a .preinit_array");
  if (info->init_array > 1)
    REJECT("defines %llu constructor(s) (__attribute__((constructor)) or "
           ".init_array): code may not run on load",
           (unsigned long long)(info->init_array - 1));
  if (info->fini_array > 1)
    REJECT("defines %llu destructor(s) (__attribute__((destructor)) or "
           ".fini_array): code may not run on unload",
           (unsigned long long)(info->fini_array - 1));
  if (baseline && (info->init_size != baseline->init_size ||
                   info->fini_size != baseline->fini_size))
    REJECT("its .init/.fini sections differ from the toolchain's (%llu/%llu "
           "bytes, expected %llu/%llu): code may not run on load",
           (unsigned long long)info->init_size,
           (unsigned long long)info->fini_size,
           (unsigned long long)baseline->init_size,
           (unsigned long long)baseline->fini_size);

  /* The toolchain's own load code calls by name what it leaves undefined
   * (crti's _init: __gmon_start__, when anything defines it): defining
   * one of those names is a constructor under another name. */
  if (kf_harness__elf_hooks(buf, len, &so, baseline ? &baseline->undefs : NULL,
                            &info->undefs, why, whylen))
    return KF_OUTCOME_LINK_REJECTED;

  /* .dynsym: imports and IFUNCs */
  if (dynsym->sh_entsize != sizeof(Elf64_Sym) || dynsym->sh_link >= eh->e_shnum)
    REJECT("ELF: bad .dynsym");
  const Elf64_Sym *sym =
      kf_harness__elf_table(buf, len, dynsym->sh_offset, dynsym->sh_size);
  if (!sym) REJECT("ELF: bad .dynsym");
  const Elf64_Shdr *symstr = &sh[dynsym->sh_link];
  size_t nsym = dynsym->sh_size / sizeof(Elf64_Sym);
  for (size_t i = 1; i < nsym; i++) {
    const char *nm = kf_harness__elf_str(buf, len, symstr, sym[i].st_name);
    if (!nm) REJECT("ELF: bad symbol name");
    if (ELF64_ST_TYPE(sym[i].st_info) == STT_GNU_IFUNC)
      REJECT("defines IFUNC symbol '%.64s': resolvers run on load", nm);
    if (ELF64_ST_TYPE(sym[i].st_info) == STT_TLS)
      REJECT("uses thread-local storage ('%.64s')", nm);
    if (sym[i].st_shndx != SHN_UNDEF || !*nm) continue;
    if (!is_allowed(nm))
      REJECT("calls '%.64s', which candidates may not use (allowed: libm "
             "math, memcpy/memmove/memset/memcmp, malloc/free, abort)", nm);
  }

  /* .symtab: writable static state and local IFUNCs */
  if (symtab && symtab->sh_entsize == sizeof(Elf64_Sym) &&
      symtab->sh_link < eh->e_shnum) {
    const Elf64_Sym *ls =
        kf_harness__elf_table(buf, len, symtab->sh_offset, symtab->sh_size);
    if (!ls) REJECT("ELF: bad .symtab");
    const Elf64_Shdr *lstr = &sh[symtab->sh_link];
    size_t nls = symtab->sh_size / sizeof(Elf64_Sym);
    for (size_t i = 1; i < nls; i++) {
      const char *nm = kf_harness__elf_str(buf, len, lstr, ls[i].st_name);
      if (!nm) REJECT("ELF: bad symbol name");
      int type = ELF64_ST_TYPE(ls[i].st_info);
      if (type == STT_GNU_IFUNC)
        REJECT("defines IFUNC symbol '%.64s': resolvers run on load", nm);
      if (type != STT_OBJECT && type != STT_NOTYPE && type != STT_COMMON)
        continue;
      uint16_t shn = ls[i].st_shndx;
      if (shn == SHN_UNDEF || shn >= eh->e_shnum || shn >= 256 ||
          !state_sec[shn] || !*nm)
        continue;
      bool known = false;
      const kf_harness_elf_info *b = baseline ? baseline : info;
      for (int k = 0; k < b->n_state_syms && !known; k++)
        known = !strcmp(b->state_syms[k], nm);
      if (!baseline) {
        /* building the baseline: remember the toolchain's names */
        if (info->n_state_syms < KF_HARNESS_ELF_MAX_STATE && !known &&
            strlen(nm) < sizeof info->state_syms[0])
          strcpy(info->state_syms[info->n_state_syms++], nm);
        continue;
      }
      if (known) continue;
      char shown[48];
      bool local_static;
      display_name(nm, shown, sizeof shown, &local_static);
      const char *secn = kf_harness__elf_str(buf, len, shstr, sh[shn].sh_name);
      REJECT("writable static state '%s' (%llu bytes in %s%s): a kernel may "
             "not keep state between calls (counters, caches, flags); keep "
             "scratch in locals or the workspace, constants in static const",
             shown, (unsigned long long)ls[i].st_size, secn ? secn : "?",
             local_static ? ", a static local" : "");
    }
  }
  if (baseline && info->state_bytes > baseline->state_bytes) {
    if (big_state)
      REJECT("writable static state in section '%.64s': a kernel may not "
             "keep state between calls", big_state);
    REJECT("writable static state: %llu bytes of .data/.bss where an empty "
           "kernel has %llu: a kernel may not keep state between calls",
           (unsigned long long)info->state_bytes,
           (unsigned long long)baseline->state_bytes);
  }
  return 0;
}
