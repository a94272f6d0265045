/* SPDX-License-Identifier: Apache-2.0 */
/*
 * harness/cuda/elfcheck.c -- the link stage for CUDA candidates: what an
 * nvcc-built shared object (-cudart shared) may import and run on load.
 * Same bounds-checked ELF64 reading as harness/cpu/elfcheck.c, with a policy
 * for nvcc's output:
 *
 *  - every undefined dynamic symbol on the allow-list below: the CUDA
 *    runtime's launch path (<<<>>> and cudaLaunchKernel[ExC], cooperative
 *    launch), fatbinary/function/variable registration, error queries,
 *    function attributes, device attributes and occupancy queries; the C++
 *    runtime pieces nvcc's host stub uses (static-local guards, atexit for
 *    unregistering, the unwinder); mem*, abort, assert and libm math for
 *    launch arithmetic.  Everything else is refused by name, notably
 *    stream/event/graph creation, any allocation (cudaMalloc*, malloc,
 *    operator new), copies (cudaMemcpy*), synchronization, context, limit,
 *    stream-attribute and L2-persistence calls, driver entry points
 *    (cudaGetDriverEntryPoint hands out the whole driver API), threads,
 *    dlopen, files and sockets;
 *  - DT_NEEDED only libcudart.so.N, libstdc++.so.6, libgcc_s.so.1, libc
 *    and libm (the runner preloads them; the jail holds no library);
 *  - no more .init_array/.fini_array entries than the baseline, an empty
 *    kf_launch built by the same nvcc command line (frame_dummy and nvcc's
 *    registration constructor): one more is a constructor of the
 *    candidate's (a global object, an __attribute__((constructor)));
 *    .init/.fini of the baseline's size; no definition of a name the
 *    baseline leaves undefined (crti calls __gmon_start__ when defined);
 *    no DT_PREINIT_ARRAY, IFUNC or TLS symbol;
 *  - no writable global data in the device code.  The runner keeps one
 *    CUDA context for all calls, so a `__device__` variable (a call
 *    counter, a cache) would survive from call to call.  The cubins are
 *    read out of the fat binaries nvcc put in .nv_fatbin (magic
 *    0xBA55ED50, entries of kind 2 = ELF, uncompressed since we build SASS
 *    only and fatbinary compresses only PTX by default); every symbol in a
 *    .nv.global* section (.nv.global: zero-initialized; .nv.global.init:
 *    initialized) is refused, except the math library's argument-reduction
 *    tables (sinf, cosf, sin, ...), by name and size.  The cubin does not
 *    say what was `const` in the source (a `__device__ const` table lands
 *    in .nv.global.init as well, and stays writable through a cast), so
 *    read-only tables belong in `__constant__` memory, which kernels cannot
 *    write; `__shared__` (.nv.shared.*) is per block.  A fat binary header
 *    anywhere else in the file (one the candidate could register itself
 *    through __cudaRegisterFatBinary) is refused as well, and so is a
 *    fat binary entry we cannot read (PTX, compressed, malformed);
 *  - no writable static state in the host code either: the runner is one
 *    process for all calls, so a `static unsigned calls;` in kf_launch, a
 *    host-side cache keyed by pointer or a static local would survive from
 *    call to call.  As for CPU candidates (harness/cpu/elfcheck.c), every
 *    .symtab symbol defined in a writable section other than the
 *    toolchain's (.got, .dynamic, the init arrays, .data.rel.ro) must be
 *    explained: defined by the baseline too (an empty kf_launch built by
 *    the same nvcc command line: crtstuff's completed.0, __dso_handle,
 *    __TMC_END__, nvcc's __cudaFatCubinHandle and __fatDeviceText), one of
 *    the three statics of nvcc's launch stub of a kernel that is in the
 *    cubin (`__handle`, `__tmp` and its guard, in a function named
 *    __device_stub__<kernel>), the host shadow nvcc makes of a
 *    __constant__ variable (same name and size as the cubin's symbol), or
 *    DW.ref.__gxx_personality_v0.  Bytes of those sections no symbol
 *    covers (data placed with inline asm) are refused too, beyond the
 *    alignment padding before a symbol (less than both the alignment of
 *    its address and the section's alignment, 16 bytes unless the source
 *    asks for more).  What this cannot see: a write through a pointer
 *    to a __constant__ variable's host shadow (nvcc warns only on direct
 *    access), and inline asm naming the stubs' statics or hiding bytes in
 *    that padding.
 */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_eval.h"
#include "elf_util.h"
#include "outcome.h"

static const char *const allowed[] = {
    /* CUDA runtime: launch and registration (nvcc's host stubs) */
    "__cudaRegisterFatBinary", "__cudaRegisterFatBinaryEnd",
    "__cudaUnregisterFatBinary", "__cudaRegisterFunction", "__cudaRegisterVar",
    "__cudaPushCallConfiguration", "__cudaPopCallConfiguration",
    "__cudaInitModule", "__cudaGetKernel", "__cudaLaunchKernel",
    "__cudaLaunchKernel_ptsz", "cudaLaunchKernel", "cudaLaunchKernel_ptsz",
    "cudaLaunchKernelExC", "cudaLaunchKernelExC_ptsz",
    "cudaLaunchCooperativeKernel", "cudaLaunchCooperativeKernel_ptsz",
    /* errors */
    "cudaGetLastError", "cudaPeekAtLastError", "cudaGetErrorString",
    "cudaGetErrorName",
    /* attributes and queries */
    "cudaFuncSetAttribute", "cudaFuncGetAttributes", "cudaFuncSetCacheConfig",
    "cudaGetDevice", "cudaDeviceGetAttribute", "cudaGetDeviceProperties",
    "cudaGetDeviceProperties_v2", "cudaDriverGetVersion",
    "cudaRuntimeGetVersion",
    "cudaOccupancyMaxActiveBlocksPerMultiprocessor",
    "cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags",
    "cudaOccupancyAvailableDynamicSMemPerBlock",
    "cudaOccupancyMaxPotentialClusterSize", "cudaOccupancyMaxActiveClusters",
    /* device-side scratch set on the given stream */
    "cudaMemsetAsync", "cudaMemsetAsync_ptsz",
    /* C++ runtime pieces of nvcc's host code */
    "__cxa_atexit", "__cxa_finalize", "__cxa_guard_acquire",
    "__cxa_guard_release", "__cxa_guard_abort", "__gxx_personality_v0",
    "_Unwind_Resume", "__cxa_pure_virtual", "__gmon_start__",
    "_ITM_deregisterTMCloneTable", "_ITM_registerTMCloneTable",
    /* libc: memory and failure paths */
    "memcpy", "memmove", "memset", "memcmp", "__memcpy_chk", "__memmove_chk",
    "__memset_chk", "abort", "__assert_fail", "__stack_chk_fail", "abs",
    "labs", "llabs",
    /* libm for launch arithmetic */
    "sqrt", "sqrtf", "cbrt", "cbrtf", "exp", "expf", "exp2", "exp2f", "log",
    "logf", "log2", "log2f", "log10", "log10f", "pow", "powf", "ceil", "ceilf",
    "floor", "floorf", "round", "roundf", "trunc", "truncf", "fmin", "fminf",
    "fmax", "fmaxf", "fabs", "fabsf", "ldexp", "ldexpf", "frexp", "frexpf",
    "lround", "lroundf", "llround", "llroundf",
};

static bool is_allowed(const char *name) {
  for (size_t i = 0; i < sizeof allowed / sizeof allowed[0]; i++)
    if (!strcmp(name, allowed[i])) return true;
  return false;
}

/* Why a refused symbol is refused, for the message. */
static const char *refusal(const char *n) {
  static const struct {
    const char *prefix, *why;
  } t[] = {
      {"cudaStream", "streams belong to the harness (launch on a->stream)"},
      {"cudaEvent", "events belong to the harness (it does the timing)"},
      {"cudaGraph", "graphs are not allowed"},
      {"cudaMalloc", "allocation is not allowed (declare workspace_bytes)"},
      {"cudaFree", "allocation is not allowed (declare workspace_bytes)"},
      {"cudaMemcpy", "copies are not allowed"},
      {"cudaMemPrefetch", "managed memory is not allowed"},
      {"cudaHost", "host memory is not allowed"},
      {"cudaCtx", "the context belongs to the harness"},
      {"cudaDeviceSet", "device settings belong to the harness"},
      {"cudaDeviceReset", "the device belongs to the harness"},
      {"cudaDeviceSynchronize", "the harness synchronizes"},
      {"cudaSetDevice", "the device belongs to the harness"},
      {"cudaGetDriverEntryPoint", "the driver API is not allowed"},
      {"cudaIpc", "inter-process handles are not allowed"},
      {"__cudaRegisterManagedVar", "managed memory is not allowed"},
      {"pthread_", "threads are not allowed"},
      {"dl", "loading code is not allowed"},
      {"malloc", "host allocation is not allowed"},
      {"calloc", "host allocation is not allowed"},
      {"realloc", "host allocation is not allowed"},
      {"_Znw", "host allocation is not allowed"},
      {"_Zna", "host allocation is not allowed"},
      {"fopen", "files are not allowed"},
      {"open", "files are not allowed"},
      {"socket", "the network is not allowed"},
      {"fork", "processes are not allowed"},
      {"exec", "processes are not allowed"},
      {"system", "processes are not allowed"},
  };
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
    if (!strncmp(n, t[i].prefix, strlen(t[i].prefix))) return t[i].why;
  if (n[0] == 'c' && n[1] == 'u' && n[2] >= 'A' && n[2] <= 'Z')
    return "the driver API is not allowed";
  return "not on the allow-list";
}

static bool needed_ok(const char *lib) {
  return !strncmp(lib, "libcudart.so.", 13) || !strcmp(lib, "libstdc++.so.6") ||
         !strcmp(lib, "libgcc_s.so.1") || !strcmp(lib, "libc.so.6") ||
         !strcmp(lib, "libm.so.6");
}

#define REJECT(...)                                                           \
  do {                                                                        \
    snprintf(why, whylen, __VA_ARGS__);                                       \
    return KF_OUTCOME_LINK_REJECTED;                                          \
  } while (0)

/* The CUDA math library's read-only tables, which libdevice puts in
 * .nv.global.init when sinf/cosf/sincosf/tanf (i2opi_f) or their double
 * versions (i2opi_d, sin_cos_coeffs) are used (nvcc 13.0). */
static const struct {
  const char *name;
  uint64_t size;
} math_tables[] = {
    {"__cudart_i2opi_f", 24},
    {"__cudart_i2opi_d", 144},
    {"__cudart_sin_cos_coeffs", 128},
};

#define FATBIN_MAGIC 0xBA55ED50u

typedef struct {
  uint32_t magic;
  uint16_t version, header_size;
  uint64_t fat_size;
} fatbin_header;

typedef struct {
  uint16_t kind, version;
  uint32_t header_size;
  uint64_t size;
  uint32_t compressed_size, unknown;
  uint16_t minor, major;
  uint32_t arch;
  uint32_t name_off, name_len;
  uint64_t flags;
} fatbin_entry;

/* What the cubins define that host symbols may refer to: kernels (for
 * nvcc's launch stubs) and __constant__ variables (for their host
 * shadows).  Names point into the file being checked. */
#define MAX_DEVSYMS 2048
typedef struct {
  struct {
    const char *name;
    uint64_t size;
    bool func;
  } s[MAX_DEVSYMS];
  int n;
} devsyms;

/* One cubin (a device ELF): every symbol in a writable global section. */
static int check_cubin(const unsigned char *buf, size_t len, devsyms *ds,
                       char *why, size_t whylen) {
  const Elf64_Ehdr *eh = kf_harness__elf_table(buf, len, 0, sizeof *eh);
  if (!eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
      eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_machine != EM_CUDA)
    REJECT("device code: a fat binary entry is not a 64-bit CUDA ELF");
  if (eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_shnum == 0 ||
      eh->e_shstrndx >= eh->e_shnum)
    REJECT("device code: bad section table");
  const Elf64_Shdr *sh =
      kf_harness__elf_table(buf, len, eh->e_shoff,
                         (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr));
  if (!sh) REJECT("device code: bad section table");
  const Elf64_Shdr *shstr = &sh[eh->e_shstrndx];
  const Elf64_Shdr *symtab = NULL;
  for (unsigned i = 0; i < eh->e_shnum; i++)
    if (sh[i].sh_type == SHT_SYMTAB) symtab = &sh[i];
  const Elf64_Sym *sym = NULL;
  const Elf64_Shdr *symstr = NULL;
  size_t nsym = 0;
  if (symtab) {
    if (symtab->sh_entsize != sizeof(Elf64_Sym) ||
        symtab->sh_link >= eh->e_shnum)
      REJECT("device code: bad symbol table");
    sym = kf_harness__elf_table(buf, len, symtab->sh_offset, symtab->sh_size);
    if (!sym) REJECT("device code: bad symbol table");
    symstr = &sh[symtab->sh_link];
    nsym = symtab->sh_size / sizeof(Elf64_Sym);
  }
  for (unsigned s = 1; s < eh->e_shnum; s++) {
    const char *sec = kf_harness__elf_str(buf, len, shstr, sh[s].sh_name);
    if (!sec) REJECT("device code: bad section name");
    /* .nv.global, .nv.global.init, and any other writable data that is
     * not per block (.nv.shared.*) or per thread (.nv.local.*) */
    bool global = !strncmp(sec, ".nv.global", 10);
    bool writable = (sh[s].sh_flags & SHF_WRITE) &&
                    strncmp(sec, ".nv.shared.", 11) != 0 &&
                    strncmp(sec, ".nv.local.", 10) != 0;
    if ((!global && !writable) || sh[s].sh_size == 0) continue;
    uint64_t allowed_bytes = 0;
    unsigned n_allowed = 0;
    for (size_t i = 1; i < nsym; i++) {
      if (sym[i].st_shndx != s || ELF64_ST_TYPE(sym[i].st_info) == STT_SECTION)
        continue;
      const char *nm = kf_harness__elf_str(buf, len, symstr, sym[i].st_name);
      if (!nm) REJECT("device code: bad symbol name");
      bool ok = false;
      for (size_t t = 0; t < sizeof math_tables / sizeof math_tables[0]; t++)
        if (!strcmp(nm, math_tables[t].name) &&
            sym[i].st_size == math_tables[t].size)
          ok = true;
      if (ok) {
        allowed_bytes += sym[i].st_size;
        n_allowed++;
        continue;
      }
      if (!strncmp(nm, "$str", 4) || !strncmp(nm, "__unnamed_", 10))
        REJECT("defines writable device state '%.64s' (%s, %llu bytes: "
                   "a string literal of device printf/assert, which lives in "
                   "writable global memory): candidates may not keep state "
                   "between calls; remove printf/assert from device code",
                   nm, sec, (unsigned long long)sym[i].st_size);
      REJECT("defines writable device state '%.64s' (%s, %llu bytes): "
                 "candidates may not keep state between calls (a "
                 "__device__ variable, also a const one, is writable global "
                 "memory that outlives the call; put read-only tables in "
                 "__constant__ memory)",
                 nm, sec, (unsigned long long)sym[i].st_size);
    }
    /* bytes no allowed symbol accounts for (beyond alignment padding) */
    if (sh[s].sh_size > allowed_bytes + 16ull * (n_allowed + 1))
      REJECT("defines writable device state (%llu bytes in %s without "
                 "a symbol): candidates may not keep state between calls",
                 (unsigned long long)(sh[s].sh_size - allowed_bytes), sec);
  }
  /* Functions the cubin leaves to the driver to supply at load: the
   * device heap (malloc/free: blocks that outlive the call in memory no
   * buffer of the harness covers), device printf (vprintf), dynamic
   * parallelism (kernels launched from the device).  Shipped kernels and
   * references have none. */
  for (size_t i = 1; i < nsym; i++) {
    if (sym[i].st_shndx != SHN_UNDEF ||
        ELF64_ST_TYPE(sym[i].st_info) != STT_FUNC)
      continue;
    const char *nm = kf_harness__elf_str(buf, len, symstr, sym[i].st_name);
    if (!nm) REJECT("device code: bad symbol name");
    if (!*nm) continue;
    REJECT("calls '%.64s' in device code, which the driver supplies at load:"
           " candidates may not use the device heap (malloc/free keep "
           "memory from one call to the next; declare workspace_bytes), "
           "device printf or launch kernels from the device", nm);
  }
  /* kernels and __constant__ variables */
  for (size_t i = 1; i < nsym && ds->n < MAX_DEVSYMS; i++) {
    int type = ELF64_ST_TYPE(sym[i].st_info);
    uint16_t shn = sym[i].st_shndx;
    if ((type != STT_FUNC && type != STT_OBJECT) || shn == SHN_UNDEF ||
        shn >= eh->e_shnum)
      continue;
    const char *sec = kf_harness__elf_str(buf, len, shstr, sh[shn].sh_name);
    const char *nm = kf_harness__elf_str(buf, len, symstr, sym[i].st_name);
    if (!sec || !nm || !*nm) continue;
    if (type == STT_OBJECT && (strncmp(sec, ".nv.constant", 12) != 0 ||
                               !strncmp(sec, ".nv.constant0", 13)))
      continue;
    ds->s[ds->n].name = nm;
    ds->s[ds->n].size = sym[i].st_size;
    ds->s[ds->n].func = type == STT_FUNC;
    ds->n++;
  }
  return 0;
}

/* The fat binaries in [off, off + size) of the host object: a sequence of
 * headers and their entries, zero padding between them. */
static int check_fatbins(const unsigned char *buf, size_t len, uint64_t off,
                         uint64_t size, devsyms *ds, char *why,
                         size_t whylen) {
  const unsigned char *p = kf_harness__elf_at(buf, len, off, size);
  if (!p) REJECT("device code: .nv_fatbin lies outside the file");
  uint64_t q = 0;
  while (q < size) {
    if (size - q < sizeof(fatbin_header)) {
      for (; q < size; q++)
        if (p[q]) REJECT("device code: malformed fat binary");
      break;
    }
    fatbin_header h;
    memcpy(&h, p + q, sizeof h);
    if (h.magic == 0 && h.version == 0 && h.header_size == 0 &&
        h.fat_size == 0) { /* padding */
      q += 8;
      continue;
    }
    if (h.magic != FATBIN_MAGIC || h.header_size < sizeof h ||
        h.header_size > size - q || h.fat_size > size - q - h.header_size)
      REJECT("device code: malformed fat binary at .nv_fatbin+%llu",
                 (unsigned long long)q);
    uint64_t e = q + h.header_size, end = e + h.fat_size;
    while (e < end) {
      fatbin_entry fe;
      if (end - e < sizeof fe)
        REJECT("device code: malformed fat binary entry");
      memcpy(&fe, p + e, sizeof fe);
      if (fe.header_size < sizeof fe || fe.header_size > end - e ||
          fe.size > end - e - fe.header_size)
        REJECT("device code: malformed fat binary entry");
      if (fe.kind != 2)
        REJECT("device code: the fat binary holds an image of kind %u "
                   "(PTX?): only SASS for the target is expected",
                   (unsigned)fe.kind);
      if (fe.compressed_size != 0 || (fe.flags & 0x2000))
        REJECT("device code: a compressed cubin, which the link check "
                   "cannot inspect");
      /* check_cubin reads Elf64 structures in place (devsyms keeps names
       * pointing into the file), which needs 8-byte alignment; nvcc
       * aligns its entries, so one that is not is malformed. */
      if ((uintptr_t)(p + e + fe.header_size) % 8 != 0)
        REJECT("device code: misaligned fat binary entry");
      int oc = check_cubin(p + e + fe.header_size, fe.size, ds, why, whylen);
      if (oc) return oc;
      e += fe.header_size + fe.size;
    }
    q = end;
  }
  return 0;
}

/* Device code: every fat binary in .nv_fatbin, and none elsewhere. */
static int check_device_code(const unsigned char *buf, size_t len,
                             const Elf64_Ehdr *eh, const Elf64_Shdr *sh,
                             const Elf64_Shdr *shstr, devsyms *ds, char *why,
                             size_t whylen) {
  uint64_t fb_off = 0, fb_size = 0;
  for (unsigned i = 0; i < eh->e_shnum; i++) {
    const char *nm = kf_harness__elf_str(buf, len, shstr, sh[i].sh_name);
    if (!nm || strcmp(nm, ".nv_fatbin") != 0) continue;
    if (fb_size) REJECT("device code: two .nv_fatbin sections");
    if (sh[i].sh_type == SHT_NOBITS) continue;
    fb_off = sh[i].sh_offset;
    fb_size = sh[i].sh_size;
    int oc = check_fatbins(buf, len, fb_off, fb_size, ds, why, whylen);
    if (oc) return oc;
  }
  /* a fat binary header (magic, version 1, header size 16) outside it */
  static const unsigned char hdr[8] = {0x50, 0xed, 0x55, 0xba, 1, 0, 16, 0};
  for (size_t o = 0; o + sizeof hdr <= len;) {
    const unsigned char *m = memmem(buf + o, len - o, hdr, sizeof hdr);
    if (!m) break;
    size_t mo = (size_t)(m - buf);
    if (mo < fb_off || mo >= fb_off + fb_size)
      REJECT("holds a fat binary outside .nv_fatbin (at file offset "
                 "%zu): device code may come only from nvcc's own",
                 mo);
    o = mo + 1;
  }
  return 0;
}

/* ---------------------------------------------- host-side static state */

/* A decimal length of an Itanium-mangled name, or -1. */
static long mangled_len(const char **p) {
  long n = 0;
  if (**p < '0' || **p > '9') return -1;
  while (**p >= '0' && **p <= '9' && n < 100000) n = n * 10 + (*(*p)++ - '0');
  return n;
}

static bool has_suffix(const char *s, const char *suf) {
  size_t a = strlen(s), b = strlen(suf);
  return a >= b && !strcmp(s + a - b, suf);
}

/* One of the statics nvcc's launch stub of a kernel in the cubin keeps:
 * _ZZ[L]<n>__device_stub__<kernel...>E8__handle (8 bytes),
 * _ZZ[L]<n>__device_stub__<kernel...>E5__tmp (1) and its guard
 * _ZGVZ[L]<n>...E5__tmp (8).  The stub's name is the kernel's mangled name
 * without its leading '_' (for an extern "C" kernel: Z<len><name>...). */
static bool stub_static(const char *nm, uint64_t size, const devsyms *ds) {
  const char *p;
  if (!strncmp(nm, "_ZGVZ", 5)) {
    if (size != 8 || !has_suffix(nm, "E5__tmp")) return false;
    p = nm + 5;
  } else if (!strncmp(nm, "_ZZ", 3)) {
    if (!((size == 8 && has_suffix(nm, "E8__handle")) ||
          (size == 1 && has_suffix(nm, "E5__tmp"))))
      return false;
    p = nm + 3;
  } else {
    return false;
  }
  if (*p == 'L') p++;
  long n = mangled_len(&p);
  if (n <= 15 || (size_t)n > strlen(p) || strncmp(p, "__device_stub__", 15))
    return false;
  const char *m = p + 15; /* the kernel's name without its '_' */
  size_t ml = (size_t)n - 15;
  for (int i = 0; i < ds->n; i++) {
    if (!ds->s[i].func) continue;
    const char *k = ds->s[i].name;
    size_t kl = strlen(k);
    if (k[0] == '_' && kl == ml + 1 && !strncmp(k + 1, m, ml)) return true;
    /* extern "C": the cubin says "name", the stub Z<len>name<params> */
    if (m[0] == 'Z') {
      const char *q = m + 1;
      long d = mangled_len(&q);
      if (d > 0 && (size_t)d == kl && (size_t)(q - m) + kl <= ml &&
          !strncmp(q, k, kl))
        return true;
    }
  }
  return false;
}

/* The host shadow nvcc defines for a __constant__ variable: the cubin's
 * name with internal linkage (c -> _ZL1c, _ZN2ns1cE -> _ZN2nsL1cE), same
 * size. */
static bool constant_shadow(const char *nm, uint64_t size, const devsyms *ds) {
  char alt[256];
  size_t l = strlen(nm);
  if (l >= sizeof alt) return false;
  for (int i = 0; i < ds->n; i++) {
    if (ds->s[i].func || ds->s[i].size != size) continue;
    const char *d = ds->s[i].name;
    if (!strcmp(nm, d)) return true;
    if (!strncmp(nm, "_ZL", 3)) {
      const char *p = nm + 3;
      long n = mangled_len(&p);
      if (n > 0 && (size_t)n == strlen(p) && !strcmp(p, d)) return true;
    }
    for (size_t k = 3; k + 1 < l; k++) {
      if (nm[k] != 'L' || nm[k + 1] < '0' || nm[k + 1] > '9') continue;
      memcpy(alt, nm, k);
      memcpy(alt + k, nm + k + 1, l - k);
      if (!strcmp(alt, d)) return true;
    }
  }
  return false;
}

/* A readable name: "calls" for _ZL5calls, "inner" (a static local) for
 * _ZZ9kf_launchE5inner, "c" for _ZN2ns1cE; anything else as it is. */
static void display_name(const char *nm, char *out, size_t outlen,
                         bool *local_static) {
  *local_static = false;
  const char *p = NULL;
  if (!strncmp(nm, "_ZZ", 3)) {
    const char *e = NULL;
    for (const char *q = nm + 3; *q; q++)
      if (*q == 'E' && q[1] >= '0' && q[1] <= '9') e = q;
    if (e) {
      p = e + 1;
      *local_static = true;
    }
  } else if (!strncmp(nm, "_ZL", 3)) {
    p = nm + 3;
  } else if (!strncmp(nm, "_ZN", 3)) {
    const char *q = nm + 3, *last = NULL;
    long n = 0;
    while (*q && *q != 'E') {
      if (*q == 'L') q++;
      const char *c = q;
      n = mangled_len(&c);
      if (n <= 0 || (size_t)n > strlen(c)) break;
      last = q;
      q = c + n;
    }
    p = last;
  }
  if (p) {
    const char *c = p;
    long n = mangled_len(&c);
    if (n > 0 && (size_t)n <= strlen(c)) {
      snprintf(out, outlen, "%.*s", (int)(n < 47 ? n : 47), c);
      return;
    }
  }
  snprintf(out, outlen, "%.47s", nm);
}

/* The padding the linker may leave before addr (a symbol's, or the end
 * of the section): less than the largest power of two that divides it,
 * and than the section's alignment. */
static uint64_t max_pad(uint64_t addr, uint64_t sec_align) {
  uint64_t p = addr ? addr & (~addr + 1) : UINT64_MAX;
  if (sec_align < 1) sec_align = 1;
  return p < sec_align ? p : sec_align;
}

typedef struct {
  uint64_t addr, size;
} span;

static int span_cmp(const void *a, const void *b) {
  const span *x = a, *y = b;
  return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Does any of the candidate's own symbols (fix) lie in [lo, hi)? */
static bool gap_holds(const span *fix, size_t nfix, uint64_t lo, uint64_t hi) {
  for (size_t i = 0; i < nfix; i++)
    if (fix[i].addr < hi && lo < fix[i].addr + fix[i].size) return true;
  return false;
}

/* info's mutable ranges := spans m, sorted and merged across gaps of up
 * to 16 bytes of alignment padding (what the H100 runs were checked with:
 * padding inside the toolchain's block is restored before each call but
 * not checked after it) unless one of the candidate's own symbols (fix:
 * __constant__ shadows) lies there; when more than fit, coarsened by
 * closing the smallest gaps that hold none.  0, or -1 when they cannot
 * be made to fit. */
static int set_mutable(kf_harness_cuda_elf *info, span *m, size_t n,
                       const span *fix, size_t nfix) {
  qsort(m, n, sizeof *m, span_cmp);
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    uint64_t pend = k ? m[k - 1].addr + m[k - 1].size : 0;
    if (k && m[i].addr <= pend + 16 &&
        (m[i].addr <= pend || !gap_holds(fix, nfix, pend, m[i].addr))) {
      uint64_t end = m[i].addr + m[i].size;
      if (end > pend) m[k - 1].size = end - m[k - 1].addr;
    } else {
      m[k++] = m[i];
    }
  }
  while (k > KF_HARNESS_CUDA_MAX_MUT) {
    size_t best = 0;
    for (size_t i = 1; i < k; i++) {
      uint64_t lo = m[i - 1].addr + m[i - 1].size;
      if (gap_holds(fix, nfix, lo, m[i].addr)) continue;
      if (!best || m[i].addr - lo < m[best].addr -
                                        (m[best - 1].addr + m[best - 1].size))
        best = i;
    }
    if (!best) return -1;
    m[best - 1].size = m[best].addr + m[best].size - m[best - 1].addr;
    memmove(&m[best], &m[best + 1], (k - best - 1) * sizeof *m);
    k--;
  }
  for (size_t i = 0; i < k; i++) {
    info->mut_off[i] = m[i].addr;
    info->mut_len[i] = m[i].size;
  }
  info->n_mut = (int)k;
  return 0;
}

/* Writable static data in the host code: every symbol in a writable
 * section that is not the toolchain's is explained (baseline, nvcc's stub
 * statics, __constant__ shadows), and no bytes lie there without a
 * symbol beyond alignment padding.  Without a baseline, only records the
 * names (into info). */
static int check_host_state(const unsigned char *buf, size_t len,
                            const Elf64_Ehdr *eh, const Elf64_Shdr *sh,
                            const Elf64_Shdr *shstr,
                            const kf_harness_cuda_elf *baseline,
                            kf_harness_cuda_elf *info, const devsyms *ds,
                            char *why, size_t whylen) {
  const Elf64_Shdr *symtab = NULL;
  bool any_state = false;
  for (unsigned i = 0; i < eh->e_shnum; i++) {
    const char *nm = kf_harness__elf_str(buf, len, shstr, sh[i].sh_name);
    if (sh[i].sh_type == SHT_SYMTAB) symtab = &sh[i];
    if (nm && (sh[i].sh_flags & SHF_ALLOC) && (sh[i].sh_flags & SHF_WRITE) &&
        !kf_harness__elf_toolchain_writable(nm) && sh[i].sh_size)
      any_state = true;
  }
  if (!any_state) return 0;
  if (!symtab || symtab->sh_entsize != sizeof(Elf64_Sym) ||
      symtab->sh_link >= eh->e_shnum) {
    if (!baseline) return 0;
    REJECT("ELF: writable data but no usable .symtab");
  }
  const Elf64_Sym *ls =
      kf_harness__elf_table(buf, len, symtab->sh_offset, symtab->sh_size);
  if (!ls) REJECT("ELF: bad .symtab");
  const Elf64_Shdr *lstr = &sh[symtab->sh_link];
  size_t nls = symtab->sh_size / sizeof(Elf64_Sym);
  span *sp = baseline ? malloc((nls + 1) * sizeof *sp) : NULL;
  span *mut = baseline ? malloc((nls + 1) * sizeof *mut) : NULL;
  span *fix = baseline ? malloc((nls + 1) * sizeof *fix) : NULL;
  size_t nmut = 0, nfix = 0;
  if (baseline && (!sp || !mut || !fix)) {
    free(sp);
    free(mut);
    free(fix);
    REJECT("out of memory checking .symtab");
  }
  int oc = 0;
  for (unsigned s = 1; s < eh->e_shnum && !oc; s++) {
    const char *secn = kf_harness__elf_str(buf, len, shstr, sh[s].sh_name);
    if (!secn || !(sh[s].sh_flags & SHF_ALLOC) ||
        !(sh[s].sh_flags & SHF_WRITE) ||
            kf_harness__elf_toolchain_writable(secn) ||
        !sh[s].sh_size)
      continue;
    size_t nsp = 0;
    for (size_t i = 1; i < nls; i++) {
      if (ls[i].st_shndx != s) continue;
      int type = ELF64_ST_TYPE(ls[i].st_info);
      if (type == STT_SECTION || type == STT_FILE) continue;
      const char *nm = kf_harness__elf_str(buf, len, lstr, ls[i].st_name);
      if (!nm) {
        snprintf(why, whylen, "ELF: bad symbol name");
        oc = KF_OUTCOME_LINK_REJECTED;
        break;
      }
      uint64_t size = ls[i].st_size;
      /* crtstuff's __dso_handle is a pointer defined without a size */
      if (!strcmp(nm, "__dso_handle") && size == 0) size = 8;
      bool known = false;
      const kf_harness_cuda_elf *b = baseline ? baseline : info;
      /* by name and size: a candidate's own `static char buf[N]
       * __asm__("completed.0")` is not crtstuff's one byte */
      for (int k = 0; k < b->n_state_syms && !known; k++)
        known = !strcmp(b->state_syms[k], nm) &&
                (!baseline || b->state_size[k] == size);
      if (!baseline) {
        /* building the baseline: remember the toolchain's names */
        if (info->n_state_syms < KF_HARNESS_CUDA_MAX_STATE && !known && *nm &&
            strlen(nm) < sizeof info->state_syms[0]) {
          info->state_size[info->n_state_syms] = size;
          strcpy(info->state_syms[info->n_state_syms++], nm);
        }
        continue;
      }
      if (size) sp[nsp++] = (span){ls[i].st_value, size};
      if (known || stub_static(nm, size, ds) ||
          (!strcmp(nm, "DW.ref.__gxx_personality_v0") && size == 8)) {
        if (size) mut[nmut++] = (span){ls[i].st_value, size};
        continue;
      }
      if (constant_shadow(nm, size, ds)) {
        if (size) fix[nfix++] = (span){ls[i].st_value, size};
        continue;
      }
      char shown[48];
      bool local_static;
      display_name(*nm ? nm : "(unnamed)", shown, sizeof shown,
                   &local_static);
      snprintf(why, whylen,
               "writable static state '%s' in host code (%llu bytes in "
               "%s%s): candidates may not keep state between calls (the "
               "runner is one process for all calls; no counters, caches or "
               "flags); keep scratch in locals or the workspace, read-only "
               "tables in static const or __constant__ memory",
               shown, (unsigned long long)ls[i].st_size, secn,
               local_static ? ", a static local" : "");
      oc = KF_OUTCOME_LINK_REJECTED;
      break;
    }
    if (oc || !baseline) continue;
    /* bytes no symbol covers, beyond the padding before an aligned one */
    qsort(sp, nsp, sizeof *sp, span_cmp);
    uint64_t cur = sh[s].sh_addr, end = sh[s].sh_addr + sh[s].sh_size;
    for (size_t i = 0; i <= nsp && !oc; i++) {
      uint64_t next = i < nsp ? sp[i].addr : end;
      uint64_t pad = max_pad(next, sh[s].sh_addralign);
      if (next > cur && next - cur >= pad) {
        snprintf(why, whylen,
                 "writable static state in host code: %llu bytes at "
                 "%s+%llu that no symbol accounts for (data placed with "
                 "inline asm?): candidates may not keep state between calls",
                 (unsigned long long)(next - cur), secn,
                 (unsigned long long)(cur - sh[s].sh_addr));
        oc = KF_OUTCOME_LINK_REJECTED;
      }
      if (i < nsp && sp[i].addr + sp[i].size > cur)
        cur = sp[i].addr + sp[i].size;
    }
  }
  if (!oc && baseline && set_mutable(info, mut, nmut, fix, nfix)) {
    snprintf(why, whylen, "more than %d separate blocks of the toolchain's "
             "host variables between the candidate's own: too many to "
             "watch", KF_HARNESS_CUDA_MAX_MUT);
    oc = KF_OUTCOME_LINK_REJECTED;
  }
  free(sp);
  free(mut);
  free(fix);
  return oc;
}

int kf_harness__elf_check_cuda(const unsigned char *buf, size_t len,
                               const kf_harness_cuda_elf *baseline,
                               kf_harness_cuda_elf *info, char *why,
                               size_t whylen) {
  memset(info, 0, sizeof *info);
  kf_harness_elf_so so;
  const char *bad = kf_harness__elf_open_so(buf, len, &so);
  if (bad) REJECT("%s", bad);
  const Elf64_Ehdr *eh = so.eh;
  const Elf64_Shdr *sh = so.sh, *shstr = so.shstr;
  const Elf64_Shdr *dynsym = NULL, *dynamic = NULL;
  for (unsigned i = 0; i < eh->e_shnum; i++) {
    const char *nm = kf_harness__elf_str(buf, len, shstr, sh[i].sh_name);
    if (!nm) continue;
    if (!strcmp(nm, ".init")) info->init_size = sh[i].sh_size;
    if (!strcmp(nm, ".fini")) info->fini_size = sh[i].sh_size;
    if ((!strcmp(nm, ".ctors") || !strcmp(nm, ".dtors")) && sh[i].sh_size > 16)
      REJECT("section %s holds constructors", nm);
    if (sh[i].sh_type == SHT_DYNSYM) dynsym = &sh[i];
    if (sh[i].sh_type == SHT_DYNAMIC) dynamic = &sh[i];
  }
  if (!dynsym || !dynamic) REJECT("ELF: no dynamic symbol table");

  const Elf64_Dyn *dyn =
      kf_harness__elf_table(buf, len, dynamic->sh_offset, dynamic->sh_size);
  if (!dyn) REJECT("ELF: bad .dynamic");
  const Elf64_Shdr *dynstr =
      dynamic->sh_link < eh->e_shnum ? &sh[dynamic->sh_link] : NULL;
  size_t ndyn = dynamic->sh_size / sizeof(Elf64_Dyn);
  bool preinit = false;
  for (size_t i = 0; i < ndyn && dyn[i].d_tag != DT_NULL; i++) {
    switch (dyn[i].d_tag) {
    case DT_INIT_ARRAYSZ: info->init_array = dyn[i].d_un.d_val / 8; break;
    case DT_FINI_ARRAYSZ: info->fini_array = dyn[i].d_un.d_val / 8; break;
    case DT_PREINIT_ARRAY: preinit = true; break;
    case DT_NEEDED: {
      const char *lib =
          kf_harness__elf_str(buf, len, dynstr, dyn[i].d_un.d_val);
      if (!lib) REJECT("ELF: bad DT_NEEDED");
      if (!needed_ok(lib))
        REJECT("needs library %.64s: only the CUDA runtime (-cudart shared), "
               "libstdc++, libgcc_s, libc and libm are available", lib);
      break;
    }
    default: break;
    }
  }
  if (preinit) REJECT("has a .preinit_array");
  if (baseline && info->init_array > baseline->init_array)
    REJECT("defines %llu constructor(s) beyond nvcc's own (a global object, "
           "__attribute__((constructor)) or .init_array): code may not run "
           "on load",
           (unsigned long long)(info->init_array - baseline->init_array));
  if (baseline && info->fini_array > baseline->fini_array)
    REJECT("defines %llu destructor(s) beyond nvcc's own: code may not run "
           "on unload",
           (unsigned long long)(info->fini_array - baseline->fini_array));
  if (baseline && (info->init_size != baseline->init_size ||
                   info->fini_size != baseline->fini_size))
    REJECT("its .init/.fini sections differ from the toolchain's (%llu/%llu "
           "bytes, expected %llu/%llu): code may not run on load",
           (unsigned long long)info->init_size,
           (unsigned long long)info->fini_size,
           (unsigned long long)baseline->init_size,
           (unsigned long long)baseline->fini_size);

  /* A name the toolchain's own code calls but leaves undefined (crti's
   * __gmon_start__, cudart's entry points the registration constructor
   * calls): defining it runs the candidate's code on load. */
  if (kf_harness__elf_hooks(buf, len, &so, baseline ? &baseline->undefs : NULL,
                            &info->undefs, why, whylen))
    return KF_OUTCOME_LINK_REJECTED;

  if (dynsym->sh_entsize != sizeof(Elf64_Sym) || dynsym->sh_link >= eh->e_shnum)
    REJECT("ELF: bad .dynsym");
  const Elf64_Sym *sym =
      kf_harness__elf_table(buf, len, dynsym->sh_offset, dynsym->sh_size);
  if (!sym) REJECT("ELF: bad .dynsym");
  const Elf64_Shdr *symstr = &sh[dynsym->sh_link];
  size_t nsym = dynsym->sh_size / sizeof(Elf64_Sym);
  bool has_launch = false;
  char refused[512] = "";
  const char *first_refused = NULL;
  int n_refused = 0;
  for (size_t i = 1; i < nsym; i++) {
    const char *nm = kf_harness__elf_str(buf, len, symstr, sym[i].st_name);
    if (!nm) REJECT("ELF: bad symbol name");
    if (ELF64_ST_TYPE(sym[i].st_info) == STT_GNU_IFUNC)
      REJECT("defines IFUNC symbol '%.64s': resolvers run on load", nm);
    if (ELF64_ST_TYPE(sym[i].st_info) == STT_TLS)
      REJECT("uses thread-local storage ('%.64s')", nm);
    if (sym[i].st_shndx != SHN_UNDEF) {
      if (!strcmp(nm, "kf_launch")) has_launch = true;
      continue;
    }
    if (!*nm) continue;
    if (!is_allowed(nm)) {
      size_t l = strlen(refused);
      if (!first_refused ||
          (!strcmp(refusal(first_refused), "not on the allow-list") &&
           strcmp(refusal(nm), "not on the allow-list")))
        first_refused = nm;
      if (l + 72 < sizeof refused)
        snprintf(refused + l, sizeof refused - l, "%s'%.64s'", l ? ", " : "",
                 nm);
      n_refused++;
    }
  }
  if (n_refused)
    REJECT("calls %s, which CUDA candidates may not use: %s", refused,
           refusal(first_refused));
  devsyms *ds = calloc(1, sizeof *ds);
  if (!ds) REJECT("out of memory");
  int oc = check_device_code(buf, len, eh, sh, shstr, ds, why, whylen);
  if (!oc)
    oc = check_host_state(buf, len, eh, sh, shstr, baseline, info, ds, why,
                          whylen);
  free(ds);
  if (oc) return oc;
  if (!has_launch)
    REJECT("defines no kf_launch (it must be extern \"C\" and not static)");
  return 0;
}
