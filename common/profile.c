/* SPDX-License-Identifier: Apache-2.0 */
/*
 * common/profile.c -- kf_prof and the parser of Nsight Compute's raw CSV
 * page (profile.h).
 *
 * The format, as ncu documents it for `--csv --page raw`: every field is
 * double-quoted and comma-separated; the first row names the columns
 * ("ID", "Process ID", ..., "Kernel Name", ..., then one column per
 * metric), the second row gives units, each further row is one profiled
 * kernel launch.  Lines that do not start with a quote are ncu's own
 * notes ("==PROF== Connected to process ...", "==ERROR== ...") and are
 * skipped, except that an ERR_NVGPUCTRPERM anywhere means the driver
 * refused the counters.  Written from the documentation and not yet
 * checked against a real GPU's output (docs/profiling.md).
 */
#include "profile.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "text.h"

#define MAX_COLS 1024 /* ncu 2025.3's raw page has ~300 columns */
#define FIELD_MAX 256

const char kf_prof_ncu_metrics[] =
    "gpu__time_duration.sum,"
    "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed,"
    "sm__throughput.avg.pct_of_peak_sustained_elapsed,"
    "sm__warps_active.avg.pct_of_peak_sustained_active,"
    "l1tex__t_sector_hit_rate.pct,"
    "lts__t_sector_hit_rate.pct,"
    "launch__registers_per_thread,"
    "launch__shared_mem_per_block_static,"
    "launch__shared_mem_per_block_dynamic,"
    /* every stall reason the chip has (seen working with ncu 2025.3.1) */
    "regex:smsp__average_warps_issue_stalled_.*_per_issue_active\\.ratio";

#define STALL_PFX "smsp__average_warps_issue_stalled_"
#define STALL_SFX "_per_issue_active.ratio"

static const char *const status_names[] = {"none", "ok", "unavailable",
                                           "restricted", "failed", "skipped"};

void kf_prof_init(kf_prof *p, kf_prof_status s) {
  memset(p, 0, sizeof *p);
  p->status = s;
  p->duration_ns = p->dram_pct = p->sm_pct = p->occupancy_pct =
      p->l1_hit_pct = p->l2_hit_pct = -1;
}

const char *kf_prof_status_name(kf_prof_status s) {
  if ((int)s < 0 || (size_t)s >= sizeof status_names / sizeof *status_names)
    return NULL;
  return status_names[s];
}

int kf_prof_status_parse(const char *name) {
  for (size_t i = 0; name && i < sizeof status_names / sizeof *status_names;
       i++)
    if (!strcmp(name, status_names[i])) return (int)i;
  return -1;
}

int kf_prof_policy_parse(const char *s, int *k) {
  if (!s || !*s) s = KF_PROF_POLICY_DEFAULT;
  if (!strcmp(s, "all")) {
    *k = -1;
    return 0;
  }
  if (!strcmp(s, "none")) {
    *k = 0;
    return 0;
  }
  if (strncmp(s, "top:", 4) || s[4] < '1' || s[4] > '9') return KF_EINVAL;
  int v = 0;
  for (const char *c = s + 4; *c; c++) {
    if (*c < '0' || *c > '9' || c - (s + 4) >= 3) return KF_EINVAL;
    v = v * 10 + (*c - '0');
  }
  *k = v;
  return 0;
}

/* One CSV row of quoted fields, starting at *pos within [text, end):
 * fields into f (each cut at FIELD_MAX - 1 bytes), *pos after the line.
 * Returns the number of fields, or -1 when the line is not a quoted row. */
static int csv_row(const char *text, size_t len, size_t *pos,
                   char f[][FIELD_MAX], int maxf) {
  size_t i = *pos;
  size_t eol = i;
  while (eol < len && text[eol] != '\n') eol++;
  *pos = eol < len ? eol + 1 : len;
  while (i < eol && (text[i] == ' ' || text[i] == '\r')) i++;
  if (i >= eol || text[i] != '"') return -1;
  int n = 0;
  while (i < eol && n < maxf) {
    if (text[i] != '"') return -1;
    i++;
    size_t o = 0;
    for (;;) {
      if (i >= eol) return -1; /* unterminated */
      if (text[i] == '"') {
        if (i + 1 < eol && text[i + 1] == '"') { /* "" inside a field */
          if (o + 1 < FIELD_MAX) f[n][o++] = '"';
          i += 2;
          continue;
        }
        i++;
        break;
      }
      if (o + 1 < FIELD_MAX) f[n][o++] = text[i];
      i++;
    }
    f[n][o] = '\0';
    n++;
    while (i < eol && (text[i] == ' ' || text[i] == '\r')) i++;
    if (i < eol && text[i] == ',') {
      i++;
      while (i < eol && text[i] == ' ') i++;
    } else {
      break;
    }
  }
  return n;
}

/* A metric value: "1,234.5" -> 1234.5; "n/a", "" or junk -> -1. */
static double num(const char *s);

/* num, and -1 beyond max too (see KF_PROF_PCT_MAX). */
static double num_max(const char *s, double max) {
  double v = num(s);
  return v > max ? -1 : v;
}

static double num(const char *s) {
  char b[FIELD_MAX];
  size_t o = 0;
  for (; *s && o + 1 < sizeof b; s++)
    if (*s != ',' && *s != ' ') b[o++] = *s;
  b[o] = '\0';
  if (!o) return -1;
  char *end;
  double v = strtod(b, &end);
  if (*end || !isfinite(v) || v < 0) return -1;
  return v;
}

static bool skipped(const char *kernel, const char *const *skip) {
  size_t n = strcspn(kernel, "(");
  while (n && kernel[n - 1] == ' ') n--;
  for (; skip && *skip; skip++)
    if (strlen(*skip) == n && !strncmp(kernel, *skip, n)) return true;
  return false;
}

static int fail(kf_prof *out, kf_prof_status st, char *err, size_t errlen,
                const char *why) {
  out->status = st;
  snprintf(out->reason, sizeof out->reason, "%s", why);
  snprintf(err, errlen, "%s", why);
  return KF_EINVAL;
}

int kf_prof_parse_ncu_csv(const char *text, size_t len,
                          const char *const *skip, kf_prof *out, char *err,
                          size_t errlen) {
  kf_prof_init(out, KF_PROF_FAILED);
  snprintf(out->tool, sizeof out->tool, "ncu");
  if (!text) len = 0;
  /* memmem: the text need not be NUL-terminated */
  static const char perm[] = "ERR_NVGPUCTRPERM";
  for (size_t i = 0; i + sizeof perm - 1 <= len; i++)
    if (!memcmp(text + i, perm, sizeof perm - 1))
      return fail(out, KF_PROF_RESTRICTED, err, errlen,
                  "the driver restricts GPU performance counters to admin "
                  "users (ERR_NVGPUCTRPERM)");
  char (*hdr)[FIELD_MAX] = calloc(MAX_COLS, FIELD_MAX);
  char (*row)[FIELD_MAX] = calloc(MAX_COLS, FIELD_MAX);
  if (!hdr || !row) {
    free(hdr);
    free(row);
    return fail(out, KF_PROF_FAILED, err, errlen, "out of memory");
  }
  size_t pos = 0;
  int nh = -1, seen = 0;
  int c_name = -1, c_dur = -1, c_dram = -1, c_sm = -1, c_occ = -1,
      c_l1 = -1, c_l2 = -1, c_reg = -1, c_shs = -1, c_shd = -1;
  double best_dur = -2;
  bool units = false;
  while (pos < len) {
    if (nh < 0) {
      nh = csv_row(text, len, &pos, hdr, MAX_COLS);
      if (nh <= 0) {
        nh = -1;
        continue;
      }
      for (int i = 0; i < nh; i++) {
        const char *h = hdr[i];
        if (!strcmp(h, "Kernel Name")) c_name = i;
        else if (!strcmp(h, "gpu__time_duration.sum")) c_dur = i;
        else if (!strcmp(h, "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed")) c_dram = i;
        else if (!strcmp(h, "sm__throughput.avg.pct_of_peak_sustained_elapsed")) c_sm = i;
        else if (!strcmp(h, "sm__warps_active.avg.pct_of_peak_sustained_active")) c_occ = i;
        else if (!strcmp(h, "l1tex__t_sector_hit_rate.pct")) c_l1 = i;
        else if (!strcmp(h, "lts__t_sector_hit_rate.pct")) c_l2 = i;
        else if (!strcmp(h, "launch__registers_per_thread")) c_reg = i;
        else if (!strcmp(h, "launch__shared_mem_per_block_static")) c_shs = i;
        else if (!strcmp(h, "launch__shared_mem_per_block_dynamic")) c_shd = i;
      }
      if (c_name < 0) nh = -1; /* not ncu's header: keep looking */
      continue;
    }
    int n = csv_row(text, len, &pos, row, MAX_COLS);
    if (n < 0) continue;
    if (!units) { /* the row under the header names units */
      units = true;
      if (n > c_name && row[c_name][0] == '\0') continue;
    }
    if (n != nh) continue;
    if (skipped(row[c_name], skip)) continue;
    if (seen < (int)KF_PROF_KERNELS_MAX) seen++;
    double dur = c_dur >= 0 ? num_max(row[c_dur], KF_PROF_NS_MAX) : -1;
    /* an ms/us unit row would mislead: ncu's raw page uses ns ("nsecond")
     * for gpu__time_duration unless --print-units base is changed */
    if (dur <= best_dur) continue;
    best_dur = dur;
    /* the name is the candidate's: made display-safe and fitting here,
     * so the report the worker sends is never refused for it */
    kf_text_sanitize(row[c_name], strlen(row[c_name]), out->kernel,
                     sizeof out->kernel, 0);
    out->duration_ns = dur;
    out->dram_pct = c_dram >= 0 ? num_max(row[c_dram], KF_PROF_PCT_MAX) : -1;
    out->sm_pct = c_sm >= 0 ? num_max(row[c_sm], KF_PROF_PCT_MAX) : -1;
    out->occupancy_pct = c_occ >= 0 ? num_max(row[c_occ], KF_PROF_PCT_MAX) : -1;
    out->l1_hit_pct = c_l1 >= 0 ? num_max(row[c_l1], KF_PROF_PCT_MAX) : -1;
    out->l2_hit_pct = c_l2 >= 0 ? num_max(row[c_l2], KF_PROF_PCT_MAX) : -1;
    double reg = c_reg >= 0 ? num(row[c_reg]) : -1;
    out->registers = reg > 0 && reg <= KF_PROF_REGS_MAX ? (uint32_t)reg : 0;
    double sh = 0, v;
    if (c_shs >= 0 && (v = num(row[c_shs])) > 0) sh += v;
    if (c_shd >= 0 && (v = num(row[c_shd])) > 0) sh += v;
    out->shared_bytes = sh < 4e9 ? (uint32_t)sh : 0;
    /* the three largest stall reasons: insertion into a sorted top 3 */
    out->n_stalls = 0;
    for (int i = 0; i < nh; i++) {
      const char *h = hdr[i];
      size_t hl = strlen(h), pl = sizeof STALL_PFX - 1,
             sl = sizeof STALL_SFX - 1;
      if (hl <= pl + sl || strncmp(h, STALL_PFX, pl) ||
          strcmp(h + hl - sl, STALL_SFX))
        continue;
      /* "selected" is the cycle a warp issues: not a stall */
      if (hl - pl - sl == 8 && !strncmp(h + pl, "selected", 8)) continue;
      double c = num_max(row[i], KF_PROF_CYCLES_MAX);
      if (c <= 0) continue;
      int k = out->n_stalls;
      while (k > 0 && out->stalls[k - 1].cycles < c) k--;
      if (k >= KF_PROF_MAX_STALLS) continue;
      int last = out->n_stalls < KF_PROF_MAX_STALLS ? out->n_stalls
                                                    : KF_PROF_MAX_STALLS - 1;
      memmove(&out->stalls[k + 1], &out->stalls[k],
              (size_t)(last - k) * sizeof out->stalls[0]);
      if (out->n_stalls < KF_PROF_MAX_STALLS) out->n_stalls++;
      kf_prof_stall *st = &out->stalls[k];
      kf_text_sanitize(h + pl, hl - pl - sl, st->name, sizeof st->name, 0);
      st->cycles = c;
    }
  }
  free(hdr);
  free(row);
  out->kernels = (uint32_t)seen;
  if (nh < 0)
    return fail(out, KF_PROF_FAILED, err, errlen,
                "ncu printed no CSV header with a \"Kernel Name\" column");
  if (!seen)
    return fail(out, KF_PROF_FAILED, err, errlen,
                "ncu profiled none of the candidate's kernels");
  out->status = KF_PROF_OK;
  out->reason[0] = '\0';
  return 0;
}
