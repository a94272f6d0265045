/* SPDX-License-Identifier: Apache-2.0 */
/*
 * common/spec.h -- problem specs: what a kernel must compute, on which
 * shapes, to what tolerance, and how fast it could possibly be.
 *
 * A problem is a directory (problems/README.md documents the format):
 *   spec.json        this structure, as JSON
 *   reference.c|.cu  trusted reference implementation (the launcher ABI of
 *                    harness/core/kf_candidate.h)
 *   templates named in spec.json, each with declared knobs
 * The coordinator, the CLI and the harness all read specs through this
 * module.  The harness receives the spec as JSON text inside an
 * EvalRequest and parses it with dir == NULL (no files read).
 *
 * Errors: a malformed spec is refused with "FILE: FIELD: reason", e.g.
 * "spec.json: inputs[1].dtype: unknown dtype 'f33' (expected one of f32,
 * f64, bf16, f16, i32, i64)".  Nothing here blocks except file reads.
 */
#ifndef KF_SPEC_H
#define KF_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KF_SPEC_MAX_PARAMS 8
#define KF_SPEC_MAX_DIMS 4
#define KF_SPEC_MAX_TENSORS 8
#define KF_SPEC_MAX_DISTS 8
#define KF_SPEC_MAX_KNOBS 12
#define KF_SPEC_MAX_KNOB_VALUES 16
#define KF_SPEC_MAX_TEMPLATES 8
#define KF_SPEC_MAX_SIZES 32
#define KF_SPEC_MAX_BENCH 8  /* timed sizes (sizes.bench as a list) */
/* A campaign's roofline target is a fraction of the spec's byte floor at
 * the copy bandwidth; a problem that mostly reads passes 1 honestly. */
#define KF_TARGET_ROOFLINE_MAX 2.0

/* XX(enum name, json name, bytes per element) */
#define KF_DTYPE_MAP(XX)                                                      \
  XX(F32, "f32", 4)                                                           \
  XX(F64, "f64", 8)                                                           \
  XX(BF16, "bf16", 2)                                                         \
  XX(F16, "f16", 2)                                                           \
  XX(I32, "i32", 4)                                                           \
  XX(I64, "i64", 8)                                                           \
  XX(BOOL, "bool", 1)

typedef enum {
#define XX(e, s, b) KF_DT_##e,
  KF_DTYPE_MAP(XX)
#undef XX
  KF_DT_COUNT
} kf_dtype;

/* Input distributions the harness can draw from (harness/core/inputs.c).
 * XX(enum name, json name, meaning) */
#define KF_DIST_MAP(XX)                                                       \
  XX(NORMAL, "normal", "N(0, 1)")                                             \
  XX(UNIFORM, "uniform", "U(-1, 1)")                                          \
  XX(WIDE, "wide", "U(-100, 100): reaches every clamp and saturation")        \
  XX(OFFSET, "offset", "N(1000, 1): large common offset, tests stability")    \
  XX(TINY, "tiny", "N(0, 1e-3): near zero, all-zeros kernels fail")           \
  XX(MIXED, "mixed", "per element one of the above, plus exact 0 and +-1")   \
  XX(INDEX, "index", "integers uniform in [0, range) (range expression)")  \
  XX(UNIT, "unit", "U(0, 1), never 0: probabilities, logs and roots")        \
  XX(SAMPLE, "sample", "the reference's get_inputs() under the draw's key "  \
                       "(torch kernelbench problems)")

typedef enum {
#define XX(e, s, m) KF_DIST_##e,
  KF_DIST_MAP(XX)
#undef XX
  KF_DIST_COUNT
} kf_dist;

typedef struct {
  char name[32];
  kf_dtype dtype;
  int ndim;
  char shape[KF_SPEC_MAX_DIMS][64]; /* expressions over params */
  kf_dist dists[KF_SPEC_MAX_DISTS]; /* inputs only */
  int n_dists;
  char range[64];                   /* INDEX upper bound expression */
} kf_spec_tensor;

typedef struct {
  char name[32];                    /* becomes -DNAME=value */
  char values[KF_SPEC_MAX_KNOB_VALUES][24];
  int n_values;
} kf_spec_knob;

typedef struct {
  char name[64];
  char file[128];
  char description[256];            /* optional; what makes it different */
  char *source;                     /* file contents; NULL when dir == NULL */
  kf_spec_knob knobs[KF_SPEC_MAX_KNOBS];
  int n_knobs;
} kf_spec_template;

/* One binding of every param, in kf_spec.params order. */
typedef struct {
  int64_t v[KF_SPEC_MAX_PARAMS];
} kf_size;

typedef struct {
  double rtol, atol;
} kf_tol;

typedef struct kf_spec {
  char name[64];
  char backend[16];                 /* "cpu", "cuda" or "torch" */
  char description[1024];           /* long enough to justify tolerances */
  char params[KF_SPEC_MAX_PARAMS][32];
  int n_params;
  kf_spec_tensor inputs[KF_SPEC_MAX_TENSORS];
  int n_inputs;
  kf_spec_tensor outputs[KF_SPEC_MAX_TENSORS];
  int n_outputs;
  kf_size check_sizes[KF_SPEC_MAX_SIZES]; /* correctness sweep */
  int n_check_sizes;
  kf_size bench_size;                /* timed size (the first of them) */
  /* the timed sizes after the first, where sizes.bench is a list (GPU
   * MODE's benchmarks): every one is verified and timed, and a side's time
   * is the geometric mean of its medians at each (kf_spec_bench) */
  kf_size bench_more[KF_SPEC_MAX_BENCH - 1];
  int n_bench_more;
  kf_tol tol[KF_DT_COUNT];           /* per output dtype */
  bool allow_nan;                    /* NaN/Inf in outputs match NaN/Inf */
  bool deterministic;                /* two runs must agree bit for bit */
  char flops[128];                   /* expression: FLOPs at a size */
  char bytes[128];                   /* expression: minimum bytes moved */
  size_t workspace_bytes;            /* scratch the harness provides */
  char reference_file[128];
  char *reference_source;            /* NULL when dir == NULL */
  kf_spec_template templates[KF_SPEC_MAX_TEMPLATES];
  int n_templates;
  /* backend "torch" (harness/torch, docs/torch.md): the spec's "torch"
   * section -- the reference's kind, the device, and the model's init and
   * forward arguments as compact JSON ("" when absent) */
  char torch_kind[16];               /* "kernelbench" or "gpumode" */
  char torch_device[16];             /* "cpu" (default) or "cuda" */
  char torch_extra[4096];            /* {"init":[...],"args":[...],...} */
  char *json;                        /* the spec.json text, verbatim */
  size_t json_len;
} kf_spec;

/* Reads DIR/spec.json, the reference and every template.  On failure
 * returns KF_ESPEC (or KF_EIO / KF_ENOMEM) with "file: field: reason" in
 * err and *out NULL. */
int kf_spec_load_dir(const char *dir, kf_spec **out, char *err,
                     size_t errlen);

/* Parses spec JSON text.  dir == NULL: file fields are kept as names and
 * sources stay NULL (the harness gets them in the EvalRequest). */
int kf_spec_parse(const char *json, size_t len, const char *dir,
                  kf_spec **out, char *err, size_t errlen);

/* NULL-safe. */
void kf_spec_free(kf_spec *s);

/* Evaluates an integer expression (+ - * / %, parentheses, integer
 * literals, param names) at a size.  Returns 0 or KF_ESPEC with the reason
 * (unknown name, division by zero, overflow, syntax at column N). */
/* The timed sizes: kf_spec_n_bench of them, kf_spec_bench(s, 0) being
 * bench_size. */
int kf_spec_n_bench(const kf_spec *s);
const kf_size *kf_spec_bench(const kf_spec *s, int i);

/* The spec's bytes expression over its timed sizes, their geometric mean
 * (a time over several sizes is their times' geometric mean, so bytes /
 * time is the geometric mean of the rates); 0 with *out, else KF_ESPEC
 * and err. */
int kf_spec_bench_bytes(const kf_spec *s, int64_t *out, char *err,
                        size_t errlen);

int kf_spec_eval(const kf_spec *s, const char *expr, const kf_size *size,
                 int64_t *out, char *err, size_t errlen);

/* A tensor's dimensions and element count at a size. */
int kf_spec_shape(const kf_spec *s, const kf_spec_tensor *t,
                  const kf_size *size, int64_t dims[KF_SPEC_MAX_DIMS],
                  int64_t *numel, char *err, size_t errlen);

/* The guard bytes each backend puts on both sides of every buffer of a
 * runner's image (harness/core/layout.c): the CPU backend unmaps one page;
 * the CUDA backend fills 64 KiB with canary, enough to catch the strided
 * overruns of a whole warp.  The coordinator sizes a spec's footprint with
 * the same numbers, so the two cannot drift apart. */
#define KF_SPEC_GUARD_CPU 4096u
#define KF_SPEC_GUARD_CUDA (64u << 10)

/* Bytes of one side's image at a size (harness/core/layout.c): `sets`
 * copies of every input and `slots` of every output (the harness uses 1
 * and 1), then the workspace, each buffer rounded up to whole 4 KiB pages
 * with `guard` bytes on both sides.  The reference and the candidate each
 * have one.  0, or KF_ESPEC (bad shape, overflow) with the reason. */
int kf_spec_runner_bytes(const kf_spec *s, const kf_size *size, int sets,
                         int slots, uint64_t guard, uint64_t *bytes,
                         char *err, size_t errlen);

/* The template called NAME, or NULL. */
const kf_spec_template *kf_spec_template_find(const kf_spec *s,
                                              const char *name);

/* "M=512 N=1024" into buf (always terminated); returns buf. */
char *kf_spec_size_format(const kf_spec *s, const kf_size *size, char *buf,
                          size_t len);

/* The tolerance inequality for finite values, |got - want| <= atol +
 * rtol * |want|: the one place it is written.  kf_spec_within_tol adds the
 * NaN/Inf rules; the harness's comparison loops inline this. */
static inline bool kf_tol_ok(const kf_tol *t, double got, double want) {
  double diff = got > want ? got - want : want - got;
  return diff <= t->atol + t->rtol * (want < 0 ? -want : want);
}

/* The one definition of "close enough", shared by the harness and tests:
 * |got - want| <= atol + rtol * |want| with the tolerance of dtype DT.
 * NaN/Inf: with allow_nan, a NaN matches a NaN and an Inf the Inf of the
 * same sign; without it, any non-finite got or want fails. */
bool kf_spec_within_tol(const kf_spec *s, kf_dtype dt, double got,
                        double want);

/* The spec's part of a measurement's identity: lowercase hex sha256 (64
 * characters and a NUL into out) over a canonical serialization of every
 * field that decides what a candidate is measured against -- name,
 * backend, params, check and bench sizes, each tensor (name, dtype, shape,
 * distributions in order, range), per-dtype tolerances, allow_nan,
 * deterministic, the flops and bytes expressions and workspace_bytes.
 * Not the JSON text: key order, whitespace (also inside expressions) and
 * the spelling of numbers do not matter; any semantic edit changes it.
 * The description, the reference's file name and the templates are not
 * part of it (the reference source and each candidate's source are hashed
 * on their own).  0, or KF_ENOMEM / KF_EINTERNAL (libcrypto failed). */
int kf_spec_canonical_hash(const kf_spec *s, char out[65]);

/* Knobs become compiler arguments -DNAME=value, so both halves are
 * restricted to characters that cannot escape that argument: a name is a C
 * identifier of at most 31 chars not starting with KF_ (reserved for the
 * harness); a value is 1..23 chars of [A-Za-z0-9_.+-]. */
bool kf_spec_knob_name_ok(const char *name);
bool kf_spec_knob_value_ok(const char *value);

const char *kf_dtype_name(kf_dtype d);
size_t kf_dtype_size(kf_dtype d);
/* Integer and bool tensors: compared exactly, drawn by 'index' (or
 * 'sample'), never by a floating distribution. */
bool kf_dtype_exact(kf_dtype d);
const char *kf_dist_name(kf_dist d);
/* Name to enum; 0 or KF_ESPEC for an unknown name. */
int kf_dtype_parse(const char *name, kf_dtype *out);
int kf_dist_parse(const char *name, kf_dist *out);

#endif
