/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/test-harness-cudastate.c -- the mutable ranges of the CUDA
 * link check (harness/cuda/elfcheck.c, linked in): kf_harness_cuda_elf's
 * mut_off/mut_len/n_mut, which the eval passes to the runner as
 * --mutable.  The runner restores a candidate's writable pages before each
 * call and, after it, refuses a change anywhere but these ranges; so they
 * must cover what the toolchain writes while kf_launch runs (nvcc's
 * launch-stub statics, the baseline's own symbols) and nothing a
 * candidate could keep state in: not the host shadow of a __constant__
 * variable, not bytes between symbols beyond alignment padding.
 *
 * nvcc builds, exactly as harness/cuda/compile.c does (-O3, -gencode for
 * sm_90a, -cudart shared, -Xcompiler -fPIC, -shared, --resource-usage,
 * -I. with kf_candidate.h beside the source), into a temporary directory:
 * the link check's baseline (KF_HARNESS_CUDA_BASELINE_SRC), a shipped
 * template with several kernels (problems/cuda/softmax/block_regs.cu) and
 * the exploit that keeps state in a __constant__ shadow
 * (tests/exploits/cuda/constant_shadow_cache.cu).  Each is checked against
 * the baseline, and the ranges are compared with the .so's own .symtab,
 * read here.  No GPU needed; without nvcc every test prints
 * "SKIPPED: no nvcc" and is skipped.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "cuda_eval.h"
#include "outcome.h"
#include "test-nvcc.h"

#ifndef KF_TEST_SOURCE_DIR
#define KF_TEST_SOURCE_DIR "."
#endif

/* ------------------------------------------------------------ builds -- */

enum { SO_BASELINE, SO_SOFTMAX, SO_SHADOW, SO_ALIAS, SO_DEVMALLOC, N_SO };

static const struct {
  const char *base; /* base.cu -> base.so */
  const char *src;  /* under the source tree; NULL: the baseline */
} sources[N_SO] = {
    [SO_BASELINE] = {"baseline", NULL},
    [SO_SOFTMAX] = {"block_regs", "problems/cuda/softmax/block_regs.cu"},
    [SO_SHADOW] = {"constant_shadow_cache",
                   "tests/exploits/cuda/constant_shadow_cache.cu"},
    [SO_ALIAS] = {"alias_baseline_symbol",
                  "tests/exploits/cuda/alias_baseline_symbol.cu"},
    [SO_DEVMALLOC] = {"device_malloc", "tests/exploits/cuda/device_malloc.cu"},
};

typedef struct {
  bool no_nvcc;
  char dir[256];
  unsigned char *so[N_SO];
  size_t so_len[N_SO];
  kf_harness_cuda_elf bi; /* the baseline, checked without one */
} fixture;

static const char *source_dir(void) {
  const char *d = getenv("KF_SOURCE_DIR");
  return d && *d ? d : KF_TEST_SOURCE_DIR;
}

static unsigned char *slurp(const char *path, size_t *len) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return NULL;
  struct stat st;
  unsigned char *buf = NULL;
  if (fstat(fd, &st) == 0 && st.st_size > 0 &&
      (buf = malloc((size_t)st.st_size))) {
    size_t off = 0;
    while (off < (size_t)st.st_size) {
      ssize_t r = read(fd, buf + off, (size_t)st.st_size - off);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) break;
      off += (size_t)r;
    }
    if (off != (size_t)st.st_size) {
      free(buf);
      buf = NULL;
    }
    *len = off;
  }
  close(fd);
  return buf;
}

static bool spit(const char *path, const void *data, size_t len) {
  FILE *f = fopen(path, "wb");
  if (!f) return false;
  bool ok = fwrite(data, 1, len, f) == len;
  return fclose(f) == 0 && ok;
}

static bool copy_file(const char *from, const char *to) {
  size_t len = 0;
  unsigned char *b = slurp(from, &len);
  if (!b) {
    fprintf(stderr, "cannot read %s: %s\n", from, strerror(errno));
    return false;
  }
  bool ok = spit(to, b, len);
  free(b);
  return ok;
}

/* nvcc as cuda_compile.c runs it, in dir, output to base.log. */
static pid_t start_nvcc(const char *nvcc, const char *dir, const char *base) {
  pid_t pid = fork();
  if (pid != 0) return pid;
  char cu[128], so[128], log[128];
  snprintf(cu, sizeof cu, "%s.cu", base);
  snprintf(so, sizeof so, "%s.so", base);
  snprintf(log, sizeof log, "%s.log", base);
  if (chdir(dir) != 0) _exit(126);
  int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) _exit(126);
  dup2(fd, 1);
  dup2(fd, 2);
  char *argv[] = {"nvcc", "-O3", "-gencode=arch=compute_90a,code=sm_90a",
                  "-cudart", "shared", "-Xcompiler", "-fPIC", "-shared",
                  "--resource-usage", "-I.", "-o", so, cu, NULL};
  /* nvcc finds its profile and tools through PATH (argv[0] is "nvcc"), so,
   * as in cuda_compile.c, its own directory goes first: the test's PATH
   * need not name it (CI's does not). */
  char path[1200];
  const char *slash = strrchr(nvcc, '/');
  snprintf(path, sizeof path, "PATH=%.*s:/usr/local/bin:/usr/bin:/bin",
           slash ? (int)(slash - nvcc) : 1, slash ? nvcc : ".");
  char *envp[] = {path, "LC_ALL=C", "LANG=C", "HOME=/nonexistent", NULL};
  execve(nvcc, argv, envp);
  _exit(127);
}

static void remove_dir(const char *dir) {
  for (int i = 0; i < N_SO; i++) {
    static const char *const ext[] = {".cu", ".so", ".log"};
    for (int e = 0; e < 3; e++) {
      char p[512];
      snprintf(p, sizeof p, "%s/%s%s", dir, sources[i].base, ext[e]);
      unlink(p);
    }
  }
  char p[512];
  snprintf(p, sizeof p, "%s/kf_candidate.h", dir);
  unlink(p);
  if (rmdir(dir) != 0)
    fprintf(stderr, "note: %s left behind: %s\n", dir, strerror(errno));
}

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  if (!f) return -1;
  *state = f;
  char nvcc[1024];
  if (!test_find_nvcc(nvcc, sizeof nvcc)) {
    f->no_nvcc = true;
    return 0;
  }
  snprintf(f->dir, sizeof f->dir, "/tmp/kf-test-cudastate-XXXXXX");
  if (!mkdtemp(f->dir)) {
    fprintf(stderr, "mkdtemp: %s\n", strerror(errno));
    return -1;
  }
  char from[1024], to[512];
  snprintf(from, sizeof from, "%s/harness/core/kf_candidate.h", source_dir());
  snprintf(to, sizeof to, "%s/kf_candidate.h", f->dir);
  if (!copy_file(from, to)) return -1;
  for (int i = 0; i < N_SO; i++) {
    snprintf(to, sizeof to, "%s/%s.cu", f->dir, sources[i].base);
    if (!sources[i].src) {
      static const char base_src[] = KF_HARNESS_CUDA_BASELINE_SRC;
      if (!spit(to, base_src, strlen(base_src))) return -1;
      continue;
    }
    snprintf(from, sizeof from, "%s/%s", source_dir(), sources[i].src);
    if (!copy_file(from, to)) return -1;
  }
  /* the builds at once */
  pid_t pid[N_SO];
  for (int i = 0; i < N_SO; i++) {
    pid[i] = start_nvcc(nvcc, f->dir, sources[i].base);
    if (pid[i] < 0) {
      fprintf(stderr, "fork: %s\n", strerror(errno));
      return -1;
    }
  }
  int bad = 0;
  for (int i = 0; i < N_SO; i++) {
    int st = 0;
    while (waitpid(pid[i], &st, 0) < 0 && errno == EINTR) {
    }
    char p[512];
    snprintf(p, sizeof p, "%s/%s.so", f->dir, sources[i].base);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 ||
        !(f->so[i] = slurp(p, &f->so_len[i]))) {
      size_t ll = 0;
      snprintf(p, sizeof p, "%s/%s.log", f->dir, sources[i].base);
      unsigned char *log = slurp(p, &ll);
      fprintf(stderr, "nvcc %s.cu failed (status %#x):\n%.*s\n",
              sources[i].base, (unsigned)st, (int)ll, log ? (char *)log : "");
      free(log);
      bad++;
    }
  }
  if (bad) return -1;
  char why[1024] = "";
  int oc = kf_harness__elf_check_cuda(f->so[SO_BASELINE], f->so_len[SO_BASELINE],
                                      NULL, &f->bi, why, sizeof why);
  if (oc) {
    fprintf(stderr, "baseline refused (%d): %s\n", oc, why);
    return -1;
  }
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  if (!f) return 0;
  for (int i = 0; i < N_SO; i++) free(f->so[i]);
  if (f->dir[0]) remove_dir(f->dir);
  free(f);
  return 0;
}

#define NEED_BUILDS(f)                                                        \
  do {                                                                        \
    if ((f)->no_nvcc) {                                                       \
      fprintf(stderr, "SKIPPED: no nvcc\n");                                  \
      skip();                                                                 \
    }                                                                         \
  } while (0)

/* ------------------------------------------------- the .so's .symtab -- */

typedef struct {
  char name[256];
  uint64_t addr, size;
  char sec[32]; /* section name */
  bool writable_state; /* in a writable section the check examines */
} xsym;

/* Writable sections of the toolchain's (as elfcheck_cuda.c's
 * toolchain_writable): not where candidate state is looked for. */
static bool toolchain_section(const char *s) {
  static const char *const t[] = {".init_array", ".fini_array",
                                  ".preinit_array", ".dynamic", ".got",
                                  ".got.plt", ".data.rel.ro",
                                  ".tm_clone_table", ".ctors", ".dtors"};
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
    if (!strcmp(s, t[i])) return true;
  return false;
}

/* Every defined object/notype symbol of .symtab with its section; the
 * test's own reading of the ELF (trusting the file nvcc just wrote). */
static xsym *read_symtab(const unsigned char *buf, size_t len, int *n) {
  *n = 0;
  const Elf64_Ehdr *eh = (const Elf64_Ehdr *)buf;
  assert_true(len >= sizeof *eh && !memcmp(eh->e_ident, ELFMAG, SELFMAG));
  assert_true(eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) <= len);
  const Elf64_Shdr *sh = (const Elf64_Shdr *)(buf + eh->e_shoff);
  const char *shstr = (const char *)buf + sh[eh->e_shstrndx].sh_offset;
  const Elf64_Shdr *symtab = NULL;
  for (unsigned i = 0; i < eh->e_shnum; i++)
    if (sh[i].sh_type == SHT_SYMTAB) symtab = &sh[i];
  assert_non_null(symtab);
  const Elf64_Sym *sym = (const Elf64_Sym *)(buf + symtab->sh_offset);
  const char *str = (const char *)buf + sh[symtab->sh_link].sh_offset;
  size_t nsym = symtab->sh_size / sizeof(Elf64_Sym);
  xsym *out = calloc(nsym ? nsym : 1, sizeof *out);
  assert_non_null(out);
  for (size_t i = 1; i < nsym; i++) {
    int type = ELF64_ST_TYPE(sym[i].st_info);
    if (type == STT_SECTION || type == STT_FILE || type == STT_FUNC ||
        sym[i].st_shndx == SHN_UNDEF || sym[i].st_shndx >= eh->e_shnum)
      continue;
    const Elf64_Shdr *s = &sh[sym[i].st_shndx];
    xsym *x = &out[(*n)++];
    snprintf(x->name, sizeof x->name, "%s", str + sym[i].st_name);
    snprintf(x->sec, sizeof x->sec, "%s", shstr + s->sh_name);
    x->addr = sym[i].st_value;
    x->size = sym[i].st_size;
    x->writable_state = (s->sh_flags & SHF_ALLOC) &&
                        (s->sh_flags & SHF_WRITE) && !toolchain_section(x->sec);
  }
  return out;
}

static const xsym *find_sym(const xsym *s, int n, const char *name) {
  for (int i = 0; i < n; i++)
    if (!strcmp(s[i].name, name)) return &s[i];
  return NULL;
}

/* [a, a + len) inside one range */
static bool covered(const kf_harness_cuda_elf *e, uint64_t a, uint64_t len) {
  for (int i = 0; i < e->n_mut; i++)
    if (a >= e->mut_off[i] && a + len <= e->mut_off[i] + e->mut_len[i])
      return true;
  return false;
}

/* [a, a + len) meets some range */
static bool overlaps(const kf_harness_cuda_elf *e, uint64_t a, uint64_t len) {
  for (int i = 0; i < e->n_mut; i++)
    if (a < e->mut_off[i] + e->mut_len[i] && e->mut_off[i] < a + len)
      return true;
  return false;
}

static bool in_baseline(const kf_harness_cuda_elf *bi, const char *name) {
  for (int i = 0; i < bi->n_state_syms; i++)
    if (!strcmp(bi->state_syms[i], name)) return true;
  return false;
}

/* What the ranges must hold: the baseline's symbols, nvcc's stub statics
 * (and the personality pointer the check lets through with them). */
static bool toolchain_state(const kf_harness_cuda_elf *bi, const xsym *x) {
  return in_baseline(bi, x->name) || strstr(x->name, "__device_stub__") ||
         !strcmp(x->name, "DW.ref.__gxx_personality_v0");
}

static uint64_t sym_size(const xsym *x) {
  /* as the check: crtstuff's __dso_handle has no size */
  return !x->size && !strcmp(x->name, "__dso_handle") ? 8 : x->size;
}

static void dump(const char *what, const kf_harness_cuda_elf *e,
                 const xsym *s, int n) {
  fprintf(stderr, "%s: %d mutable range(s)\n", what, e->n_mut);
  for (int i = 0; i < e->n_mut; i++)
    fprintf(stderr, "  [%#llx, %#llx)\n", (unsigned long long)e->mut_off[i],
            (unsigned long long)(e->mut_off[i] + e->mut_len[i]));
  for (int i = 0; i < n; i++)
    if (s[i].writable_state)
      fprintf(stderr, "  %#llx %4llu %-16s %s%s\n",
              (unsigned long long)s[i].addr, (unsigned long long)s[i].size,
              s[i].sec, s[i].name,
              sym_size(&s[i]) && covered(e, s[i].addr, sym_size(&s[i]))
                  ? "  (mutable)"
                  : "");
}

/* Checks one .so against the baseline and the ranges against its own
 * symbols.  Returns the info (ranges) for further checks. */
static kf_harness_cuda_elf check_ranges(fixture *f, int which) {
  kf_harness_cuda_elf info;
  char why[1024] = "";
  int oc = kf_harness__elf_check_cuda(f->so[which], f->so_len[which], &f->bi,
                                      &info, why, sizeof why);
  if (oc) fail_msg("%s.so refused (%d): %s", sources[which].base, oc, why);
  int n = 0;
  xsym *s = read_symtab(f->so[which], f->so_len[which], &n);
  dump(sources[which].base, &info, s, n);

  /* at least the baseline's own; sorted, disjoint, non-empty */
  assert_in_range(info.n_mut, 1, KF_HARNESS_CUDA_MAX_MUT);
  for (int i = 0; i < info.n_mut; i++) {
    assert_true(info.mut_len[i] > 0);
    assert_true(info.mut_off[i] + info.mut_len[i] > info.mut_off[i]);
    if (i + 1 < info.n_mut &&
        !(info.mut_off[i] + info.mut_len[i] <= info.mut_off[i + 1]))
      fail_msg("%s.so: range %d [%#llx, +%llu) not before range %d at %#llx",
               sources[which].base, i, (unsigned long long)info.mut_off[i],
               (unsigned long long)info.mut_len[i], i + 1,
               (unsigned long long)info.mut_off[i + 1]);
  }

  int n_stub = 0;
  for (int i = 0; i < n; i++) {
    const xsym *x = &s[i];
    uint64_t size = sym_size(x);
    bool mut = x->writable_state && size && toolchain_state(&f->bi, x);
    if (strstr(x->name, "__device_stub__")) {
      n_stub++;
      /* _ZZ...E8__handle, _ZZ...E5__tmp, _ZGVZ...E5__tmp */
      assert_true(x->writable_state);
      if (!covered(&info, x->addr, size ? size : 1))
        fail_msg("%s.so: launch-stub static %s [%#llx, +%llu) is outside "
                 "the mutable ranges",
                 sources[which].base, x->name, (unsigned long long)x->addr,
                 (unsigned long long)x->size);
    } else if (mut && !covered(&info, x->addr, size)) {
      fail_msg("%s.so: toolchain symbol %s [%#llx, +%llu) is outside the "
               "mutable ranges",
               sources[which].base, x->name, (unsigned long long)x->addr,
               (unsigned long long)size);
    } else if (x->writable_state && size && !mut &&
               overlaps(&info, x->addr, size)) {
      /* a symbol the candidate owns (a __constant__ shadow) */
      fail_msg("%s.so: %s [%#llx, +%llu) is not the toolchain's but lies "
               "in a mutable range",
               sources[which].base, x->name, (unsigned long long)x->addr,
               (unsigned long long)size);
    }
  }
  /* a kernel's stub keeps three statics */
  if (which != SO_BASELINE) assert_true(n_stub >= 3);

  /* every range starts at a toolchain symbol and ends at one's end, and
   * bytes inside it that no such symbol holds are padding: at most the
   * 16 bytes the check merges across */
  for (int r = 0; r < info.n_mut; r++) {
    uint64_t lo = info.mut_off[r], hi = lo + info.mut_len[r];
    bool starts = false, ends = false;
    for (int i = 0; i < n; i++) {
      const xsym *x = &s[i];
      uint64_t size = sym_size(x);
      if (!x->writable_state || !size || !toolchain_state(&f->bi, x)) continue;
      starts = starts || x->addr == lo;
      ends = ends || x->addr + size == hi;
    }
    if (!starts || !ends)
      fail_msg("%s.so: range [%#llx, %#llx) does not start and end at "
               "toolchain symbols",
               sources[which].base, (unsigned long long)lo,
               (unsigned long long)hi);
    for (uint64_t a = lo; a < hi;) {
      uint64_t next = hi; /* first toolchain byte at or after a */
      bool in = false;
      for (int i = 0; i < n && !in; i++) {
        const xsym *x = &s[i];
        uint64_t size = sym_size(x);
        if (!x->writable_state || !size || !toolchain_state(&f->bi, x))
          continue;
        if (x->addr <= a && a < x->addr + size) {
          in = true;
          a = x->addr + size;
        } else if (x->addr > a && x->addr < next) {
          next = x->addr;
        }
      }
      if (in) continue;
      if (next - a > 16)
        fail_msg("%s.so: range [%#llx, %#llx) holds %llu bytes at %#llx "
                 "that no toolchain symbol covers",
                 sources[which].base, (unsigned long long)lo,
                 (unsigned long long)hi, (unsigned long long)(next - a),
                 (unsigned long long)a);
      a = next;
    }
  }
  free(s);
  return info;
}

/* ------------------------------------------------------------- tests -- */

/* The baseline alone: it collects the toolchain's names, no ranges. */
static void test_baseline_collects_state(void **state) {
  fixture *f = *state;
  NEED_BUILDS(f);
  assert_true(f->bi.n_state_syms >= 2);
  bool handle = false, fatbin = false;
  for (int i = 0; i < f->bi.n_state_syms; i++) {
    handle = handle || strstr(f->bi.state_syms[i], "__cudaFatCubinHandle");
    fatbin = fatbin || strstr(f->bi.state_syms[i], "__fatDeviceText");
  }
  assert_true(handle);
  assert_true(fatbin);
  assert_int_equal(f->bi.n_mut, 0);
}

/* The baseline against itself: its own symbols are mutable. */
static void test_baseline_against_itself(void **state) {
  fixture *f = *state;
  NEED_BUILDS(f);
  kf_harness_cuda_elf info = check_ranges(f, SO_BASELINE);
  int n = 0;
  xsym *s = read_symtab(f->so[SO_BASELINE], f->so_len[SO_BASELINE], &n);
  const xsym *h = NULL;
  for (int i = 0; i < n && !h; i++)
    if (strstr(s[i].name, "__cudaFatCubinHandle")) h = &s[i];
  assert_non_null(h);
  assert_true(covered(&info, h->addr, h->size));
  free(s);
}

/* A template with four kernels (two templates, two instantiations
 * each): twelve stub statics, all mutable. */
static void test_template_stub_statics_mutable(void **state) {
  fixture *f = *state;
  NEED_BUILDS(f);
  check_ranges(f, SO_SOFTMAX);
  int n = 0;
  xsym *s = read_symtab(f->so[SO_SOFTMAX], f->so_len[SO_SOFTMAX], &n);
  int stubs = 0;
  for (int i = 0; i < n; i++) stubs += strstr(s[i].name, "__device_stub__") != 0;
  assert_true(stubs >= 12);
  free(s);
}

/* The exploit: its stub's statics are mutable, the 256-byte host shadow
 * of `__constant__ float coeffs[64]` is not (the runner then sees the
 * write to it). */
static void test_constant_shadow_not_mutable(void **state) {
  fixture *f = *state;
  NEED_BUILDS(f);
  kf_harness_cuda_elf info = check_ranges(f, SO_SHADOW);
  int n = 0;
  xsym *s = read_symtab(f->so[SO_SHADOW], f->so_len[SO_SHADOW], &n);
  const xsym *c = find_sym(s, n, "_ZL6coeffs");
  assert_non_null(c);
  assert_int_equal(c->size, 256);
  assert_true(c->writable_state);
  for (int i = 0; i < info.n_mut; i++)
    if (c->addr < info.mut_off[i] + info.mut_len[i] &&
        info.mut_off[i] < c->addr + c->size)
      fail_msg("the __constant__ shadow _ZL6coeffs [%#llx, +256) meets "
               "mutable range [%#llx, +%llu)",
               (unsigned long long)c->addr,
               (unsigned long long)info.mut_off[i],
               (unsigned long long)info.mut_len[i]);
  const xsym *h = NULL;
  for (int i = 0; i < n && !h; i++)
    if (strstr(s[i].name, "__device_stub__") &&
        strstr(s[i].name, "E8__handle"))
      h = &s[i];
  assert_non_null(h);
  assert_true(covered(&info, h->addr, 8));
  free(s);
}

/* A baseline symbol's name on a bigger object of the candidate's own is
 * not the toolchain's: refused at link, not left unchecked. */
static void test_baseline_name_needs_its_size(void **state) {
  fixture *f = *state;
  NEED_BUILDS(f);
  kf_harness_cuda_elf info;
  char why[1024] = "";
  int oc = kf_harness__elf_check_cuda(f->so[SO_ALIAS], f->so_len[SO_ALIAS],
                                      &f->bi, &info, why, sizeof why);
  assert_int_equal(oc, KF_OUTCOME_LINK_REJECTED);
  if (!strstr(why, "'completed.0'") || !strstr(why, "32 bytes"))
    fail_msg("unexpected reason: %s", why);
}

/* Device-side malloc leaves 'malloc' undefined in the cubin, for the
 * driver to supply: refused, since the heap outlives the call (g); the
 * shipped template (SO_SOFTMAX, checked elsewhere) has no such symbol. */
static void test_device_heap_refused(void **state) {
  fixture *f = *state;
  NEED_BUILDS(f);
  kf_harness_cuda_elf info;
  char why[1024] = "";
  int oc = kf_harness__elf_check_cuda(f->so[SO_DEVMALLOC],
                                      f->so_len[SO_DEVMALLOC], &f->bi, &info,
                                      why, sizeof why);
  assert_int_equal(oc, KF_OUTCOME_LINK_REJECTED);
  if (!strstr(why, "'malloc' in device code"))
    fail_msg("unexpected reason: %s", why);
  why[0] = '\0';
  oc = kf_harness__elf_check_cuda(f->so[SO_SOFTMAX], f->so_len[SO_SOFTMAX],
                                  &f->bi, &info, why, sizeof why);
  if (oc) fail_msg("the softmax template refused (%d): %s", oc, why);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_device_heap_refused),
      cmocka_unit_test(test_baseline_collects_state),
      cmocka_unit_test(test_baseline_against_itself),
      cmocka_unit_test(test_template_stub_statics_mutable),
      cmocka_unit_test(test_constant_shadow_not_mutable),
      cmocka_unit_test(test_baseline_name_needs_its_size),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
