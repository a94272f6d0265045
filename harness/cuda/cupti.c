/* SPDX-License-Identifier: Apache-2.0 */
/*
 * harness/cuda/cupti.c -- which GPU work a candidate's call did, whatever
 * stream it used: CUPTI's activity API records every kernel, copy and
 * memset the process runs (with its stream, context, correlation id and
 * start/end on the GPU) and every runtime and driver API call (with its
 * correlation id and host start).  The API calls made between the two
 * timestamps taken around kf_launch are the candidate's; the GPU
 * activities that carry their correlation ids are the candidate's work.
 * That attribution does not depend on the stream or on how the function
 * was reached (a runtime call, a driver call found with dlsym, a graph).
 *
 * What kf_cupti_end concludes for one call:
 *   - every candidate activity ran on the stream it was given and in this
 *     process's context; anything else is refused (work the timing events
 *     on the given stream would not see);
 *   - none started before the harness's own work ahead of the call (the
 *     cache flush) ended: work that overlapped the flush escaped the time;
 *   - the span from the end of that flush to the end of the candidate's
 *     last activity, which the runner charges if it is longer than the
 *     events' time;
 *   - the device memory the call allocated and did not free (allocation
 *     records of this process only: other processes on the GPU, runners
 *     of other evaluations among them, do not count).
 * Records are delivered by cuptiActivityFlushAll after the runner's
 * device-wide synchronize, so every activity of the call is complete.
 *
 * Runs in the CUDA runner only (kf-harness-cuda), single-threaded: CUPTI
 * is set up before the sandbox closes (its threads, if any, are created
 * then) and flushed synchronously.  Nothing here allocates after setup:
 * activity buffers come from a fixed pool.
 */
#include <cupti.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cupti_attr.h"

#define BUF_BYTES (4u << 20)
#define N_BUFS 8
#define MAX_API 65536  /* candidate API calls remembered per call */
#define MAX_GPU 65536  /* GPU activities remembered per call */

typedef enum { REC_KERNEL, REC_COPY, REC_MEMSET } rec_kind;

typedef struct {
  uint32_t corr, stream, ctx;
  uint64_t start, end;
  rec_kind kind;
  char what[64];
} gpu_rec;

static unsigned char *g_pool[N_BUFS];
static bool g_used[N_BUFS];
static uint32_t g_api[MAX_API];   /* correlation ids of API calls ... */
static uint64_t g_api_t[MAX_API]; /* ... and their host start */
static uint32_t g_n_api;
static gpu_rec g_gpu[MAX_GPU];
static uint32_t g_n_gpu;
static uint32_t g_lost;           /* records that did not fit */
static int64_t g_mem_net;         /* bytes allocated minus released */
static char g_mem_what[96];       /* the first allocation, for the reason */
static bool g_on;
/* The harness's marker after a call (kf_cupti_mark): when it began,
 * whether it allocates, and whether that allocation's record came.  Set
 * before the marker's work, so a record delivered early (a full buffer)
 * is still recognised by its timestamp. */
static uint64_t g_mark_t;
static bool g_mark_mem;
static bool g_mark_mem_seen;

static void CUPTIAPI buf_requested(uint8_t **buffer, size_t *size,
                                   size_t *max_records) {
  *buffer = NULL;
  *size = 0;
  *max_records = 0;
  for (int i = 0; i < N_BUFS; i++)
    if (!g_used[i]) {
      g_used[i] = true;
      *buffer = g_pool[i];
      *size = BUF_BYTES;
      return;
    }
}

static void keep_gpu(rec_kind kind, uint32_t corr, uint32_t stream,
                     uint32_t ctx, uint64_t start, uint64_t end,
                     const char *what) {
  if (g_n_gpu == MAX_GPU) {
    g_lost++;
    return;
  }
  gpu_rec *r = &g_gpu[g_n_gpu++];
  r->corr = corr;
  r->stream = stream;
  r->ctx = ctx;
  r->start = start;
  r->end = end;
  r->kind = kind;
  snprintf(r->what, sizeof r->what, "%s", what ? what : "?");
}

static void CUPTIAPI buf_completed(CUcontext ctx, uint32_t stream_id,
                                   uint8_t *buffer, size_t size,
                                   size_t valid) {
  (void)ctx;
  (void)stream_id;
  (void)size;
  CUpti_Activity *rec = NULL;
  while (cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
    switch (rec->kind) {
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {
      const CUpti_ActivityAPI *a = (const CUpti_ActivityAPI *)rec;
      if (g_n_api == MAX_API) {
        g_lost++;
        break;
      }
      g_api[g_n_api] = a->correlationId;
      g_api_t[g_n_api++] = a->start;
      break;
    }
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_KERNEL: {
      const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)rec;
      char what[64];
      snprintf(what, sizeof what, "kernel %.48s", k->name ? k->name : "?");
      keep_gpu(REC_KERNEL, k->correlationId, k->streamId, k->contextId,
               k->start, k->end, what);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      const CUpti_ActivityMemcpy6 *m = (const CUpti_ActivityMemcpy6 *)rec;
      keep_gpu(REC_COPY, m->correlationId, m->streamId, m->contextId,
               m->start, m->end, "a copy");
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMORY2: {
      const CUpti_ActivityMemory4 *m = (const CUpti_ActivityMemory4 *)rec;
      if (g_mark_t && m->timestamp >= g_mark_t) {
        /* the harness's marker, allocated and freed after the call */
        g_mark_mem_seen = true;
        break;
      }
      if (m->memoryOperationType ==
          CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION) {
        if (!g_mem_what[0])
          snprintf(g_mem_what, sizeof g_mem_what, "%llu bytes at 0x%llx",
                   (unsigned long long)m->bytes,
                   (unsigned long long)m->address);
        g_mem_net += (int64_t)m->bytes;
      } else if (m->memoryOperationType ==
                 CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE) {
        g_mem_net -= (int64_t)m->bytes;
      }
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      const CUpti_ActivityMemset4 *m = (const CUpti_ActivityMemset4 *)rec;
      keep_gpu(REC_MEMSET, m->correlationId, m->streamId, m->contextId,
               m->start, m->end, "a memset");
      break;
    }
    default: break;
    }
  }
  size_t dropped = 0;
  cuptiActivityGetNumDroppedRecords(ctx, stream_id, &dropped);
  g_lost += (uint32_t)dropped;
  for (int i = 0; i < N_BUFS; i++)
    if (g_pool[i] == buffer) g_used[i] = false;
}

static const CUpti_ActivityKind k_kinds[] = {
    CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER,
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
    CUPTI_ACTIVITY_KIND_MEMSET,
};
static bool g_mem_on; /* allocation records available (MEMORY2) */

static CUptiResult enable_all(bool on) {
  CUptiResult r = CUPTI_SUCCESS;
  for (size_t i = 0; r == CUPTI_SUCCESS && i < sizeof k_kinds / sizeof k_kinds[0];
       i++)
    r = on ? cuptiActivityEnable(k_kinds[i]) : cuptiActivityDisable(k_kinds[i]);
  if (r == CUPTI_SUCCESS && g_mem_on) {
    if (on) cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMORY2);
    else cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMORY2);
  }
  return r;
}

bool kf_cupti_memory(void) { return g_on && g_mem_on; }

int kf_cupti_init(char *err, size_t errlen) {
  for (int i = 0; i < N_BUFS; i++) {
    if (posix_memalign((void **)&g_pool[i], 64, BUF_BYTES) != 0) {
      snprintf(err, errlen, "no memory for CUPTI buffers");
      return -1;
    }
  }
  CUptiResult r = cuptiActivityRegisterCallbacks(buf_requested, buf_completed);
  /* allocation records are a help, not a need: without them the runner
   * falls back to the device's free memory */
  g_mem_on = r == CUPTI_SUCCESS &&
             cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMORY2) == CUPTI_SUCCESS;
  if (r == CUPTI_SUCCESS) r = enable_all(true);
  if (r != CUPTI_SUCCESS) {
    const char *s = NULL;
    cuptiGetResultString(r, &s);
    snprintf(err, errlen, "CUPTI activity tracing: %s", s ? s : "error");
    return -1;
  }
  g_on = true;
  return 0;
}

void kf_cupti_discard(void) {
  if (!g_on) return;
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  g_n_api = g_n_gpu = 0;
  g_lost = 0;
  g_mem_net = 0;
  g_mem_what[0] = '\0';
}

void kf_cupti_mark(bool with_alloc) {
  g_mark_mem = with_alloc && g_mem_on;
  g_mark_mem_seen = false;
  g_mark_t = kf_cupti_now();
}

void kf_cupti_reset(void) {
  g_mark_t = 0;
  g_mark_mem = g_mark_mem_seen = false;
  g_n_api = g_n_gpu = 0;
  g_lost = 0;
  g_mem_net = 0;
  g_mem_what[0] = '\0';
}

int kf_cupti_scope(bool on) {
  if (!g_on) return 0;
  return enable_all(on) == CUPTI_SUCCESS ? 0 : -1;
}

uint64_t kf_cupti_now(void) {
  uint64_t t = 0;
  if (g_on) cuptiGetTimestamp(&t);
  return t;
}

/* The GPU activity issued last (highest correlation id). */
static const gpu_rec *last_rec(void) {
  const gpu_rec *best = NULL;
  for (uint32_t i = 0; i < g_n_gpu; i++)
    if (!best || g_gpu[i].corr > best->corr) best = &g_gpu[i];
  return best;
}

uint32_t kf_cupti_stream_of_last(void) {
  if (!g_on) return 0;
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  const gpu_rec *r = last_rec();
  uint32_t s = r ? r->stream : 0;
  g_n_api = g_n_gpu = 0;
  return s;
}

static bool is_cand(uint32_t corr, uint32_t lo, uint32_t hi) {
  if (corr < lo || corr > hi) return false;
  for (uint32_t i = 0; i < g_n_api; i++)
    if (g_api[i] == corr) return true;
  return false;
}

int kf_cupti_end(uint64_t t0, uint64_t t1, uint32_t stream, uint32_t ctx,
                 kf_cupti_call *out) {
  memset(out, 0, sizeof *out);
  if (!g_on) return -1;
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  /* The marker first: each kind of its work must have come back with the
   * API call that issued it. */
  if (g_mark_t) {
    bool seen[3] = {false, false, false};
    for (uint32_t i = 0; i < g_n_gpu; i++)
      for (uint32_t j = 0; j < g_n_api; j++)
        if (g_api_t[j] >= g_mark_t && g_api[j] == g_gpu[i].corr)
          seen[g_gpu[i].kind] = true;
    static const char *const names[] = {"kernel", "copy", "memset"};
    for (int kd = 0; kd < 3 && !out->bad; kd++)
      if (!seen[kd]) {
        out->bad = KF_CUPTI_BLIND;
        snprintf(out->what, sizeof out->what, "the harness's own %s after "
                 "the call left no trace record", names[kd]);
      }
    if (!out->bad && g_mark_mem && !g_mark_mem_seen) {
      out->bad = KF_CUPTI_BLIND;
      snprintf(out->what, sizeof out->what, "the harness's own allocation "
               "after the call left no trace record");
    }
  }
  /* keep only the candidate's API calls: started within [t0, t1] */
  uint32_t k = 0, lo = UINT32_MAX, hi = 0;
  for (uint32_t i = 0; i < g_n_api; i++)
    if (g_api_t[i] >= t0 && g_api_t[i] <= t1) {
      g_api[k++] = g_api[i];
      if (g_api[k - 1] < lo) lo = g_api[k - 1];
      if (g_api[k - 1] > hi) hi = g_api[k - 1];
    }
  g_n_api = k;
  out->lost = g_lost;
  out->mem_kept = g_mem_net;
  snprintf(out->mem_what, sizeof out->mem_what, "%s", g_mem_what);
  /* the harness's own work before the call: the latest end among
   * activities issued before the candidate's first API call */
  uint64_t pre_end = 0;
  for (uint32_t i = 0; i < g_n_gpu; i++) {
    const gpu_rec *r = &g_gpu[i];
    if (k && r->corr < lo && r->end > pre_end) pre_end = r->end;
    if (!k && r->end > pre_end) pre_end = r->end;
  }
  out->pre_end = pre_end;
  for (uint32_t i = 0; i < g_n_gpu; i++) {
    const gpu_rec *r = &g_gpu[i];
    if (!k || !is_cand(r->corr, lo, hi)) continue;
    out->n++;
    if (!out->first_start || r->start < out->first_start)
      out->first_start = r->start;
    if (r->end > out->last_end) out->last_end = r->end;
    if (!out->bad && (r->stream != stream || r->ctx != ctx)) {
      out->bad = KF_CUPTI_FOREIGN_STREAM;
      snprintf(out->what, sizeof out->what, "%s on stream %u (context %u); "
               "it was given stream %u", r->what, r->stream, r->ctx, stream);
    } else if (!out->bad && r->start < pre_end) {
      out->bad = KF_CUPTI_EARLY;
      snprintf(out->what, sizeof out->what, "%s started %.1f us before the "
               "harness's work ahead of the call ended", r->what,
               (double)(pre_end - r->start) / 1e3);
    }
  }
  g_n_api = g_n_gpu = 0;
  g_lost = 0;
  g_mem_net = 0;
  g_mem_what[0] = '\0';
  g_mark_t = 0;
  g_mark_mem = g_mark_mem_seen = false;
  return 0;
}

uint32_t kf_cupti_context_of_last(void) {
  if (!g_on) return 0;
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  const gpu_rec *r = last_rec();
  uint32_t c = r ? r->ctx : 0;
  g_n_api = g_n_gpu = 0;
  return c;
}
