// SPDX-License-Identifier: Apache-2.0
// docs/gpu-runs/2026-11-29-h200-s3/busyprobe.cu -- issue 9, "a sound
// device-side busy span": a study of two runner kernels before putting
// them in harness/cuda/runner.c.
//
//  gate   one block per SM that fills the SM (the opt-in shared memory:
//         no other block fits beside it), each counting itself in host
//         memory and spinning until the host opens it.  The host calls the
//         candidate only when every SM holds a gate block, so nothing the
//         candidate queues anywhere can run before the gate opens; the
//         candidate's own stream starts the moment it does (no launch
//         latency charged).
//  probe  queued right after the call: the same shape, and a grid barrier,
//         so it completes only once every SM was free at the same time --
//         after all work queued before it, on any stream.
//
// busy = probe's barrier time - gate's opening time (both %globaltimer).
// Scenarios: honest kernels of several lengths; a "candidate" that queues
// its real work on a non-blocking stream of its own; the host delayed
// before it queues the probe (what made the 2026-11-26 host-side rule
// refuse honest kernels).  One JSON line per scenario.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <vector>
#include <cuda_runtime.h>

#define CK(x)                                                              \
  do {                                                                     \
    cudaError_t e_ = (x);                                                  \
    if (e_ != cudaSuccess) {                                               \
      fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x,            \
              cudaGetErrorString(e_));                                     \
      exit(1);                                                             \
    }                                                                      \
  } while (0)

__device__ __forceinline__ unsigned long long gtime(void) {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

struct slots {
  unsigned long long gate_open[1024]; /* per gate block: when it left */
  unsigned long long probe_start[1024];
  unsigned long long probe_all;        /* the barrier passed */
  unsigned long long work_first, work_last; /* the work's blocks */
  unsigned resident;                   /* gate blocks that arrived */
  unsigned open;                       /* set by gate block 0 */
  unsigned arrived;                    /* probe barrier */
};

// Only block 0 talks to host memory (one PCIe write when all are
// resident, one poller for the host's "open"): the others wait on device
// memory, so they leave within a few hundred ns of each other.
__global__ void gate(volatile int *all_resident, volatile int *host_open,
                     slots *s) {
  extern __shared__ unsigned char fill_smem[];
  if (threadIdx.x) return;
  fill_smem[0] = 0;
  if (atomicAdd(&s->resident, 1u) + 1 == gridDim.x) {
    *all_resident = 1;
    __threadfence_system();
  }
  volatile unsigned *o = &s->open;
  if (blockIdx.x == 0) {
    while (!*host_open) __nanosleep(64);
    *o = 1;
  } else {
    while (!*o) __nanosleep(16);
  }
  s->gate_open[blockIdx.x] = gtime();
}

__global__ void probe(slots *s) {
  extern __shared__ unsigned char fill_smem[];
  if (threadIdx.x) return;
  fill_smem[0] = 0;
  s->probe_start[blockIdx.x] = gtime();
  unsigned n = atomicAdd(&s->arrived, 1u) + 1;
  if (n < gridDim.x) {
    volatile unsigned *a = &s->arrived;
    while (*a < gridDim.x) __nanosleep(16);
  } else {
    s->probe_all = gtime();
  }
}

// honest work: a memory sweep of n words
__global__ void work(float *p, size_t n, int iters, slots *s) {
  if (threadIdx.x == 0) atomicMin(&s->work_first, gtime());
  for (int it = 0; it < iters; it++)
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
      p[i] = p[i] * 0.999f + 1.0f;
  __syncthreads();
  if (threadIdx.x == 0) atomicMax(&s->work_last, gtime());
}

static double now_ns(clockid_t c) {
  struct timespec t;
  clock_gettime(c, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

static int sms, smem;
static volatile int *h_resident, *h_open;
static int *d_resident, *d_open;
static const unsigned long long kFar = ~0ull;
static slots *d_s;
static cudaEvent_t ev0, ev1;
static float *d_buf;
static cudaStream_t hidden;

struct rep {
  double ev_us, busy_us, host_us, enq_to_start_us, gate_wait_us;
  double skew_us;      /* last gate block out - first */
  double open_to_work; /* first gate block out -> first work block in */
  double work_us;      /* first work block in -> last work block out */
  double work_to_probe; /* last work block out -> first probe block in */
  double probe_us;     /* first probe block in -> barrier passed */
};

// kind: 0 honest on the stream, 1 real work on the hidden stream (and a
// token kernel on the stream), 2 honest and the host 300 us late
static rep one(int kind, size_t n, int iters) {
  rep r;
  CK(cudaMemset(d_s, 0, sizeof(slots)));
  CK(cudaMemcpy(&d_s->work_first, &kFar, 8, cudaMemcpyHostToDevice));
  CK(cudaDeviceSynchronize());
  *h_resident = 0;
  *h_open = 0;
  gate<<<sms, 32, smem>>>(d_resident, d_open, d_s);
  CK(cudaGetLastError());
  double w0 = now_ns(CLOCK_MONOTONIC);
  while (!*h_resident)
    if (now_ns(CLOCK_MONOTONIC) - w0 > 1e9) {
      fprintf(stderr, "gate: not every SM after 1 s\n");
      exit(1);
    }
  r.gate_wait_us = (now_ns(CLOCK_MONOTONIC) - w0) / 1e3;
  CK(cudaEventRecord(ev0, 0));
  /* the call */
  if (kind == 1) {
    work<<<sms * 4, 256, 0, hidden>>>(d_buf, n, iters, d_s);
    work<<<1, 32>>>(d_buf, 32, 1, d_s);
  } else {
    work<<<sms * 4, 256>>>(d_buf, n, iters, d_s);
  }
  CK(cudaGetLastError());
  *h_open = 1;
  CK(cudaEventRecord(ev1, 0));
  if (kind == 2) {
    double t = now_ns(CLOCK_MONOTONIC);
    while (now_ns(CLOCK_MONOTONIC) - t < 300e3) {
    }
  }
  double enq = now_ns(CLOCK_REALTIME);
  probe<<<sms, 32, smem>>>(d_s);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  double host_idle = now_ns(CLOCK_REALTIME);
  slots h;
  CK(cudaMemcpy(&h, d_s, sizeof h, cudaMemcpyDeviceToHost));
  float ms;
  CK(cudaEventElapsedTime(&ms, ev0, ev1));
  /* from the first SM the gate freed: the most a candidate could use */
  unsigned long long open = ~0ull, pmin = ~0ull, omax = 0;
  for (int i = 0; i < sms; i++) {
    open = std::min(open, h.gate_open[i]);
    omax = std::max(omax, h.gate_open[i]);
    pmin = std::min(pmin, h.probe_start[i]);
  }
  r.skew_us = (double)(omax - open) / 1e3;
  r.open_to_work = ((double)h.work_first - (double)open) / 1e3;
  r.work_us = ((double)h.work_last - (double)h.work_first) / 1e3;
  r.work_to_probe = ((double)pmin - (double)h.work_last) / 1e3;
  r.probe_us = ((double)h.probe_all - (double)pmin) / 1e3;
  r.ev_us = ms * 1e3;
  r.busy_us = (double)(h.probe_all - open) / 1e3;
  r.host_us = (host_idle - (double)open) / 1e3; /* realtime vs globaltimer */
  r.enq_to_start_us = ((double)pmin - enq) / 1e3;
  return r;
}

static void report(const char *name, int kind, size_t n, int iters,
                   int reps) {
  std::vector<rep> v;
  for (int i = 0; i < reps + 2; i++) {
    rep r = one(kind, n, iters);
    if (i >= 2) v.push_back(r);
  }
  auto stat = [&](double rep::*f, const char *key) {
    std::vector<double> x;
    for (auto &r : v) x.push_back(r.*f);
    std::sort(x.begin(), x.end());
    printf("\"%s\":[%.1f,%.1f,%.1f,%.1f]", key, x[0], x[x.size() / 2],
           x[x.size() * 9 / 10], x.back());
  };
  printf("{\"scenario\":\"%s\",\"reps\":%d,", name, reps);
  stat(&rep::ev_us, "ev_us");
  printf(",");
  stat(&rep::busy_us, "busy_us");
  printf(",");
  std::vector<double> d;
  for (auto &r : v) d.push_back(r.busy_us - r.ev_us);
  std::sort(d.begin(), d.end());
  printf("\"busy_minus_ev_us\":[%.1f,%.1f,%.1f,%.1f],", d[0], d[d.size() / 2],
         d[d.size() * 9 / 10], d.back());
  stat(&rep::host_us, "host_realtime_minus_open_us");
  printf(",");
  stat(&rep::enq_to_start_us, "probe_enq_to_start_us");
  printf(",");
  stat(&rep::gate_wait_us, "gate_wait_us");
  printf(",");
  stat(&rep::skew_us, "gate_skew_us");
  printf(",");
  stat(&rep::open_to_work, "open_to_work_us");
  printf(",");
  stat(&rep::work_us, "work_us");
  printf(",");
  stat(&rep::work_to_probe, "work_to_probe_us");
  printf(",");
  stat(&rep::probe_us, "probe_us");
  printf("}\n");
  fflush(stdout);
}

int main(void) {
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  sms = p.multiProcessorCount;
  CK(cudaDeviceGetAttribute(&smem, cudaDevAttrMaxSharedMemoryPerBlockOptin,
                            0));
  CK(cudaFuncSetAttribute(gate, cudaFuncAttributeMaxDynamicSharedMemorySize,
                          smem));
  CK(cudaFuncSetAttribute(probe, cudaFuncAttributeMaxDynamicSharedMemorySize,
                          smem));
  int per_sm = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, gate, 32, smem));
  fprintf(stderr, "%s sms %d smem optin %d gate blocks/SM %d\n", p.name, sms,
          smem, per_sm);
  CK(cudaHostAlloc((void **)&h_resident, 4, cudaHostAllocMapped));
  CK(cudaHostAlloc((void **)&h_open, 4, cudaHostAllocMapped));
  CK(cudaHostGetDevicePointer((void **)&d_resident, (void *)h_resident, 0));
  CK(cudaHostGetDevicePointer((void **)&d_open, (void *)h_open, 0));
  CK(cudaMalloc(&d_s, sizeof(slots)));
  CK(cudaEventCreate(&ev0));
  CK(cudaEventCreate(&ev1));
  size_t n = 64ull << 20; /* 256 MB of floats */
  CK(cudaMalloc(&d_buf, n * 4));
  CK(cudaMemset(d_buf, 0, n * 4));
  CK(cudaStreamCreateWithFlags(&hidden, cudaStreamNonBlocking));
  const int R = 40;
  report("honest tiny (32 words)", 0, 32, 1, R);
  report("honest 1 MB", 0, 256 << 10, 1, R);
  report("honest 256 MB", 0, n, 1, R);
  report("honest 256 MB x4", 0, n, 4, R);
  report("hidden 1 MB", 1, 256 << 10, 1, R);
  report("hidden 256 MB", 1, n, 1, R);
  report("honest tiny, host 300 us late", 2, 32, 1, R);
  report("honest 256 MB, host 300 us late", 2, n, 1, R);
  return 0;
}
