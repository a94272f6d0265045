/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cli/cli_import.c -- `kf import kernelbench FILE.py` and `kf import
 * gpumode DIR`: a problem directory (spec.json, reference.py and a starter
 * template) from a file in the format PyTorch users already have, so that
 * `kf run DIR` is the second and last command.
 *
 * What the spec needs and the file does not say -- input dtypes and
 * shapes, the model's init arguments, output dtypes and shapes -- comes
 * from running the reference once: harness/torch/runner.py's inspect mode,
 * in a child with rlimits, no network (a new namespace, as root), chrooted
 * into an empty directory after torch is imported and behind the same
 * seccomp filter as the harness's runners.  It prints one JSON object,
 * which this file turns into spec.json; anything a spec cannot hold is
 * refused with the construct named (a non-tensor input that is not a
 * number, a dtype or rank a spec lacks, an output whose shape depends on
 * the values).  Nothing is written until everything is known, and an
 * existing directory is never written into.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "cli_gm_task.h"
#include "cli_internal.h"
#include "spec.h"
#include "text.h"
#include "torch.h"
#include "util.h"

#define INSPECT_MS 300000
/* the inspector's CPU time (RLIMIT_CPU): past it the kernel kills it */
#define INSPECT_CPU_S 240
#define OUT_MAX (1u << 20)

static void usage(FILE *f) {
  fprintf(f,
"usage: kf import kernelbench FILE.py [options]\n"
"       kf import gpumode DIR [options]\n"
"Writes a problem directory for `kf run`: spec.json (backend torch),\n"
"reference.py (the file, verbatim) and a starter template.\n"
"  kernelbench  FILE.py defines Model, get_inputs and get_init_inputs;\n"
"               candidates are a ModelNew (or custom_kernel(*inputs))\n"
"  gpumode      DIR/reference.py defines generate_input and ref_kernel;\n"
"               candidates define custom_kernel(data); modules of DIR\n"
"               it imports (task.py, utils.py) go into the written\n"
"               reference.py, and candidates may import them too\n"
"Shapes come from get_inputs() / generate_input(**CASE); dtypes and the\n"
"outputs from running the reference once, sandboxed (no network, no\n"
"files, rlimits), with Debian's python3-torch ($KF_PYTHON overrides).\n"
"Options:\n"
"  --out DIR     where to write (default: ./NAME); must not exist\n"
"  --name NAME   problem name (default: the file's or directory's name)\n"
"  --case C      gpumode: generate_input's keyword arguments, a JSON\n"
"                object, or benchmarks:N / tests:N (N from 0) of DIR's\n"
"                task.yml (default: DIR/case.json, else every benchmark of\n"
"                task.yml, the largest first, the time their geometric\n"
"                mean as GPU MODE ranks, else {\"size\": 4096, \"seed\": 42})\n"
"  --rtol X      relative tolerance of float outputs (default: gpumode,\n"
"                the rtol of check_implementation = make_match_reference(\n"
"                ...) as written; else 1e-3, f16/bf16 1e-2)\n"
"  --atol X      absolute tolerance (default: as --rtol; else 1e-3,\n"
"                f16/bf16 1e-2)\n"
"  --device D    cpu (default) or cuda: where the runner puts tensors\n"
"Then: kf run DIR\n");
}

typedef struct {
  const char *kind, *src, *out, *name, *cscase, *device;
  double rtol, atol;
  bool rtol_given, atol_given; /* on the command line: they win */
} imp_opts;

/* Writes text to dir/name (a new file). */
static int put(const char *dir, const char *name, const char *text) {
  char path[1200];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  return kf_cli__write_file(path, text, "kf import");
}

static bool name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
}

/* The problem name from a path: its last component without ".py", each
 * character outside [A-Za-z0-9_.-] as '_'. */
static void name_from(const char *path, char *out, size_t outlen) {
  char tmp[512];
  kf_strlcpy(tmp, path, sizeof tmp);
  size_t n = strlen(tmp);
  while (n > 1 && tmp[n - 1] == '/') tmp[--n] = '\0';
  const char *b = strrchr(tmp, '/');
  b = b ? b + 1 : tmp;
  size_t i = 0;
  for (; b[i] && i + 1 < outlen && i < 60; i++)
    out[i] = name_char(b[i]) ? b[i] : '_';
  out[i] = '\0';
  if (i > 3 && !strcmp(out + i - 3, ".py")) out[i - 3] = '\0';
  if (!out[0] || out[0] == '.') kf_strlcpy(out, "imported", outlen);
}

/* The largest GPU MODE case, as compact JSON; and task.yml's tests */
#define CASE_MAX 1100
#define TESTS_MAX (16u << 10)

/* ^C or SIGTERM while the inspector runs: it is killed and its folder
 * removed before kf import exits (they were left behind, the inspector
 * running as nobody: red team 2026-12-02-s3-prob, M1). */
static volatile sig_atomic_t inspect_stop;

static void on_stop(int sig) { inspect_stop = sig; }

/* Runs runner.py inspect on the reference, sandboxed; *json (malloc'd)
 * is its stdout.  0, or an exit code with the reason printed. */
static int run_inspect(const imp_opts *o, const char *ref, const char *text,
                       const char *tests, char **json) {
  char tmpl[] = "/tmp/kf-import-XXXXXX";
  if (!mkdtemp(tmpl)) {
    fprintf(stderr, "kf import: mkdtemp: %s\n", strerror(errno));
    return KF_EXIT_FAIL;
  }
  char script[256], jail[256], py[512], copy[256];
  snprintf(script, sizeof script, "%s/runner.py", tmpl);
  snprintf(jail, sizeof jail, "%s/jail", tmpl);
  snprintf(copy, sizeof copy, "%s/reference.py", tmpl);
  kf_harness__torch_python(py, sizeof py);
  int rc = KF_EXIT_FAIL;
  int pfd[2] = {-1, -1}, efd[2] = {-1, -1};
  if (mkdir(jail, 0755) || kf_cli__write_file(script, kf_harness__torch_runner_py,
                                              "kf import"))
    goto out;
  /* the reference as it will be written (bundle_siblings), not the file */
  if (text) {
    if (kf_cli__write_file(copy, text, "kf import")) goto out;
    ref = copy;
  }
  if (access(py, X_OK)) {
    fprintf(stderr, "kf import: %s: %s; install python3-torch (scripts/setup)"
            " or set KF_PYTHON\n", py, strerror(errno));
    goto out;
  }
  if (pipe2(pfd, O_CLOEXEC) || pipe2(efd, O_CLOEXEC)) {
    fprintf(stderr, "kf import: pipe: %s\n", strerror(errno));
    goto out;
  }
  char envj[300], envc[CASE_MAX + 32], envd[64], envt[TESTS_MAX + 32];
  snprintf(envj, sizeof envj, "KF_INSPECT_JAIL=%s", jail);
  /* where the harness will put the tensors: only the CPU path hands a
   * reference its inputs read-only */
  snprintf(envd, sizeof envd, "KF_INSPECT_DEVICE=%s", o->device);
  snprintf(envc, sizeof envc, "KF_GPUMODE_CASE=%s", o->cscase ? o->cscase : "{}");
  snprintf(envt, sizeof envt, "KF_GPUMODE_TESTS=%s", tests ? tests : "[]");
  /* as the harness runs it (harness/torch/backend.c): PYTHONHASHSEED
   * fixed, so -s rather than -I */
  char *envp[] = {"OMP_NUM_THREADS=1", "PATH=/usr/bin:/bin", "LC_ALL=C.UTF-8",
                  "PYTHONHASHSEED=0", envj, envc, envd, envt, NULL};
  char *argv[] = {py, "-s", "-B", script, "inspect", (char *)o->kind,
                  (char *)ref, NULL};
  pid_t pid = fork();
  if (pid < 0) {
    fprintf(stderr, "kf import: fork: %s\n", strerror(errno));
    goto out;
  }
  if (pid == 0) {
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    dup2(pfd[1], 1);
    dup2(efd[1], 2);
    int nul = open("/dev/null", O_RDONLY);
    if (nul >= 0) dup2(nul, 0);
    if (geteuid() == 0) unshare(CLONE_NEWNET | CLONE_NEWIPC);
    struct rlimit cpu = {INSPECT_CPU_S, INSPECT_CPU_S}, core = {0, 0},
                  fsz = {0, 0},
                  nof = {64, 64}, as = {16ull << 30, 16ull << 30};
    if (setrlimit(RLIMIT_CPU, &cpu) || setrlimit(RLIMIT_CORE, &core) ||
        setrlimit(RLIMIT_FSIZE, &fsz) || setrlimit(RLIMIT_NOFILE, &nof) ||
        setrlimit(RLIMIT_AS, &as))
      _exit(126);
    execve(py, argv, envp);
    _exit(127);
  }
  close(pfd[1]);
  close(efd[1]);
  pfd[1] = efd[1] = -1;
  char *buf = malloc(OUT_MAX + 1);
  char err[4096];
  size_t n = 0, en = 0;
  if (!buf) {
    kill(-pid, SIGKILL);
    waitpid(pid, NULL, 0);
    fprintf(stderr, "kf import: out of memory\n");
    goto out;
  }
  uint64_t deadline = kf_now_ms() + INSPECT_MS;
  bool open_o = true, open_e = true, timed_out = false;
  struct sigaction stop = {.sa_handler = on_stop}, old_int, old_term;
  sigemptyset(&stop.sa_mask);
  inspect_stop = 0;
  sigaction(SIGINT, &stop, &old_int);
  sigaction(SIGTERM, &stop, &old_term);
  while ((open_o || open_e) && !inspect_stop) {
    uint64_t now = kf_now_ms();
    if (now >= deadline) {
      timed_out = true;
      break;
    }
    struct pollfd pf[2] = {{.fd = open_o ? pfd[0] : -1, .events = POLLIN},
                           {.fd = open_e ? efd[0] : -1, .events = POLLIN}};
    int pr = poll(pf, 2, (int)(deadline - now));
    if (pr < 0 && errno == EINTR) continue;
    if (pr < 0) break;
    if (pf[0].revents) {
      ssize_t k = read(pfd[0], buf + n, OUT_MAX - n);
      if (k <= 0 || n + (size_t)k >= OUT_MAX) open_o = false;
      if (k > 0) n += (size_t)k;
    }
    if (pf[1].revents) {
      char tmp[1024];
      ssize_t k = read(efd[0], tmp, sizeof tmp);
      if (k <= 0) open_e = false;
      for (ssize_t i = 0; i < k; i++) { /* keep the tail */
        if (en + 1 >= sizeof err) {
          memmove(err, err + 1024, en - 1024);
          en -= 1024;
        }
        err[en++] = tmp[i];
      }
    }
  }
  buf[n] = '\0';
  err[en] = '\0';
  /* the reference's stderr, shown below: display-safe */
  char raw[sizeof err];
  memcpy(raw, err, en + 1);
  kf_text_sanitize(raw, en, err, sizeof err, KF_TEXT_MULTILINE);
  kill(-pid, SIGKILL);
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
  sigaction(SIGINT, &old_int, NULL);
  sigaction(SIGTERM, &old_term, NULL);
  if (inspect_stop) {
    fprintf(stderr, "kf import: stopped (%s): the reference's run killed, "
            "nothing written\n", strsignal(inspect_stop));
    free(buf);
    rc = 128 + inspect_stop;
    goto out;
  }
  if (timed_out) {
    fprintf(stderr, "kf import: running the reference took over %d s\n",
            INSPECT_MS / 1000);
    free(buf);
    goto out;
  }
  if (WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS) {
    fprintf(stderr, "kf import: the reference made a forbidden system call "
            "(files, network, processes: killed by the sandbox)\n");
    free(buf);
    goto out;
  }
  if (!n && WIFSIGNALED(st) &&
      (WTERMSIG(st) == SIGXCPU || WTERMSIG(st) == SIGKILL)) {
    /* a reference that loops forever ended here after minutes with only
     * "printed nothing (signal 9)" (red team, 2026-11-30) */
    fprintf(stderr, "kf import: running the reference was killed (signal "
            "%d): it used up its %d s of CPU time (RLIMIT_CPU) or its "
            "memory%s%s\n", WTERMSIG(st), INSPECT_CPU_S,
            en ? "; its stderr:\n" : "", err);
    free(buf);
    goto out;
  }
  if (!n) {
    fprintf(stderr, "kf import: the reference printed nothing (%s %d)%s%s\n",
            WIFSIGNALED(st) ? "signal" : "exit status",
            WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st),
            en ? "; its stderr:\n" : "", err);
    free(buf);
    goto out;
  }
  *json = buf;
  rc = 0;
out:
  for (int i = 0; i < 2; i++) {
    if (pfd[i] >= 0) close(pfd[i]);
    if (efd[i] >= 0) close(efd[i]);
  }
  unlink(script);
  unlink(copy);
  rmdir(jail);
  rmdir(tmpl);
  return rc;
}

/* A GPU MODE import verifies at each of task.yml's tests as well as at
 * the benchmark, and times every benchmark: case 0 is the benchmark
 * (the largest), 1.. the other benchmarks and the tests kept. */
#define GM_CASES (KF_SPEC_MAX_SIZES)

/* Params: one per distinct dimension -- a position whose values across
 * the cases differ from every other's, or (one case) per distinct value
 * (at most KF_SPEC_MAX_PARAMS; further constant values stay literal). */
typedef struct {
  int64_t v[KF_SPEC_MAX_PARAMS][GM_CASES];
  int n;
  int ncase;                  /* 1: the benchmark alone */
  const cJSON *cur[GM_CASES]; /* the current tensor's shape in each case */
  bool overflow;              /* a dimension that varies found no param */
} dimset;

static const char *dim_expr(dimset *d, int axis, int64_t v, char *buf,
                            size_t len) {
  int64_t sig[GM_CASES];
  bool same = true;
  sig[0] = v;
  for (int c = 1; c < d->ncase; c++) {
    const cJSON *x = cJSON_GetArrayItem(d->cur[c], axis);
    sig[c] = cJSON_IsNumber(x) ? (int64_t)x->valuedouble : -1;
    same = same && sig[c] == v;
  }
  for (int i = 0; i < d->n; i++)
    if (!memcmp(d->v[i], sig, sizeof *sig * (size_t)d->ncase)) {
      snprintf(buf, len, "D%d", i);
      return buf;
    }
  if (d->n < KF_SPEC_MAX_PARAMS && (v > 1 || !same)) {
    memcpy(d->v[d->n], sig, sizeof *sig * (size_t)d->ncase);
    snprintf(buf, len, "D%d", d->n++);
    return buf;
  }
  if (!same) d->overflow = true;
  snprintf(buf, len, "%lld", (long long)v);
  return buf;
}

static int64_t dt_bytes(const char *dt) {
  kf_dtype d;
  return kf_dtype_parse(dt, &d) == 0 ? (int64_t)kf_dtype_size(d) : 4;
}

/* One tensor of the inspect output as a spec tensor.  An input of a
 * KernelBench file (sample) is drawn by its own get_inputs() under each
 * draw's key (distribution `sample`): whatever structure get_inputs()
 * gives it -- a scale, an offset, 0/1 masks, integral labels, a
 * permutation, a minimum -- is kept, where fixed distributions inferred
 * from one call lost it (red team of 2026-12-01,
 * docs/redteam/2026-12-01/import).  A GPU MODE generate_input() is
 * drawn by the same way (since 2026-12-02): the case's arguments with
 * its seed argument from the draw's key (runner.py _drawer). */
static cJSON *tensor_json(const cJSON *t, const char *name, dimset *d,
                          bool input, bool sample, int64_t *bytes,
                          char *bad, size_t badlen) {
  const char *dt = cJSON_GetStringValue(cJSON_GetObjectItem(t, "dtype"));
  cJSON *shape = cJSON_GetObjectItem(t, "shape");
  if (!dt || !cJSON_IsArray(shape)) {
    snprintf(bad, badlen, "%s: malformed description", name);
    return NULL;
  }
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "name", name);
  cJSON_AddStringToObject(o, "dtype", dt);
  cJSON *sh = cJSON_AddArrayToObject(o, "shape");
  int64_t numel = 1;
  const cJSON *x;
  int axis = 0;
  cJSON_ArrayForEach(x, shape) {
    char buf[32];
    int64_t v = (int64_t)x->valuedouble;
    numel *= v;
    cJSON_AddItemToArray(sh, cJSON_CreateString(dim_expr(d, axis++, v, buf,
                                                         sizeof buf)));
  }
  if (cJSON_GetArraySize(shape) == 0) /* a 0-dim tensor: one element */
    cJSON_AddItemToArray(sh, cJSON_CreateString("1"));
  if (numel == 0) {
    snprintf(bad, badlen, "%s has no elements (shape with a 0): not "
             "supported", name);
    cJSON_Delete(o);
    return NULL;
  }
  *bytes += numel * dt_bytes(dt);
  if (input && sample) {
    cJSON *ds = cJSON_AddArrayToObject(o, "dists");
    cJSON_AddItemToArray(ds, cJSON_CreateString("sample"));
  } else if (input && !strcmp(dt, "bool")) {
    /* 'index' over [0, 2): a fair coin per element */
    cJSON *ds = cJSON_AddArrayToObject(o, "dists");
    cJSON_AddItemToArray(ds, cJSON_CreateString("index"));
    cJSON_AddStringToObject(o, "range", "2");
  } else if (input) {
    cJSON *ds = cJSON_AddArrayToObject(o, "dists");
    if (!strcmp(dt, "i32") || !strcmp(dt, "i64")) {
      const cJSON *mn = cJSON_GetObjectItem(t, "min"),
                  *mx = cJSON_GetObjectItem(t, "max");
      if (!mn || !mx || mn->valuedouble < 0) {
        snprintf(bad, badlen, "%s: an integer input with negative values; "
                 "the harness draws integer inputs in [0, range)", name);
        cJSON_Delete(o);
        return NULL;
      }
      cJSON_AddItemToArray(ds, cJSON_CreateString("index"));
      char r[32];
      snprintf(r, sizeof r, "%lld", (long long)mx->valuedouble + 1);
      cJSON_AddStringToObject(o, "range", r);
    } else {
      const cJSON *mn = cJSON_GetObjectItem(t, "min");
      if (cJSON_IsNumber(mn) && mn->valuedouble >= 0) {
        /* generate_input keeps it non-negative (torch.rand): U(0, 1),
         * where N(0, 1) would feed a log or a probability negative
         * values */
        cJSON_AddItemToArray(ds, cJSON_CreateString("unit"));
      } else {
        cJSON_AddItemToArray(ds, cJSON_CreateString("normal"));
        cJSON_AddItemToArray(ds, cJSON_CreateString("uniform"));
      }
    }
  }
  return o;
}

static const char KB_STARTER[] =
    "\n\n# --- KernelFleet starter (kf import): the reference's Model as\n"
    "# ModelNew.  Replace forward with faster code; MODE is a knob.\n"
    "import torch as _kf_torch\n\n\n"
    "class ModelNew(Model):\n"
    "    def forward(self, *args):\n"
    "        if MODE == \"inference\":\n"
    "            with _kf_torch.inference_mode():\n"
    "                return super().forward(*args)\n"
    "        return super().forward(*args)\n";

static const char GM_STARTER[] =
    "\n\n# --- KernelFleet starter (kf import): the reference's kernel as\n"
    "# custom_kernel.  Replace it with faster code; MODE is a knob.\n"
    "import torch as _kf_torch\n\n\n"
    "def custom_kernel(data):\n"
    "    if MODE == \"inference\":\n"
    "        with _kf_torch.inference_mode():\n"
    "            return ref_kernel(data)\n"
    "    return ref_kernel(data)\n";

/* A GPU MODE problem directory as its repository has it: reference.py
 * imports modules that lie beside it (`from utils import
 * make_match_reference`, `from task import input_t`).  The sandbox loads
 * no file after it closes, so those imports failed, named, and no real
 * GPU MODE problem could be imported.  Their sources go into the written
 * reference.py instead, each registered under its name before the
 * reference's own code runs: the measured reference stays one file,
 * hashed whole (the measurement identity), and what the modules do is
 * the reference's, run where it runs. */
#define SIB_MAX 16
#define SIB_BYTES (256u << 10)

typedef struct {
  char name[64];
  char *src;
  bool busy, done;
} sibling;

typedef struct {
  const char *dir;
  char root[PATH_MAX]; /* realpath of DIR's parent: no module from outside */
  sibling mods[SIB_MAX];
  int n;
  int order[SIB_MAX]; /* registration order: dependencies first */
  int n_order;
  size_t total; /* the modules' bytes */
} siblings;

/* The modules and the reference together stay under what the harness
 * takes as a reference (1 MiB), with room for the prologue. */
#define SIB_TOTAL (960u << 10)

static int sib_visit(siblings *s, const char *src, const char *who,
                     char *err, size_t errlen);

/* The module names src imports (any indentation: `import a, b.c as d`,
 * `from a.b import c`, statements after `;` on one line; relative
 * imports are not names of files here), each visited when DIR/NAME.py
 * exists.  A statement ends at its line's end, a `;` or a `#`. */
static int sib_scan(siblings *s, const char *src, const char *who, char *err,
                    size_t errlen) {
  for (const char *p = src; p && *p;) {
    size_t len = strcspn(p, "\n;#");
    const char *end = p + len;
    const char *q = p + strspn(p, " \t");
    const char *rest = NULL;
    bool from = false;
    if (!strncmp(q, "import ", 7) || !strncmp(q, "import\t", 7)) {
      rest = q + 7;
    } else if (!strncmp(q, "from ", 5) || !strncmp(q, "from\t", 5)) {
      rest = q + 5;
      from = true;
    }
    while (rest && rest < end) {
      rest += strspn(rest, " \t(");
      size_t n = strspn(rest, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRST"
                              "UVWXYZ0123456789_");
      if (n && n < 64 && rest + n <= end && !(*rest >= '0' && *rest <= '9')) {
        char name[64];
        memcpy(name, rest, n);
        name[n] = '\0';
        int rc = sib_visit(s, name, who, err, errlen);
        if (rc) return rc;
      }
      if (from) break;
      /* the next name of `import a, b`: past this one's dots and alias */
      const char *comma = memchr(rest, ',', (size_t)(end - rest));
      rest = comma ? comma + 1 : NULL;
    }
    /* a comment runs to the line's end; a `;` starts the next statement */
    if (*end == '#') end += strcspn(end, "\n");
    p = *end ? end + 1 : NULL;
  }
  return 0;
}

/* Reads DIR/NAME.py when it is there (and NAME is not the reference),
 * its own siblings first; 0, or an exit code with err filled. */
static int sib_visit(siblings *s, const char *name, const char *who,
                     char *err, size_t errlen) {
  if (!strcmp(name, "reference") || !strcmp(name, "__future__")) return 0;
  for (int i = 0; i < s->n; i++)
    if (!strcmp(s->mods[i].name, name)) return 0; /* done, or a cycle */
  /* beside the reference, else one folder up: GPU MODE's repository
   * keeps utils.py there, shared by the problems (task.yml names it
   * "../utils.py") */
  char path[PATH_MAX + 80], real[PATH_MAX];
  struct stat st;
  snprintf(path, sizeof path, "%s/%s.py", s->dir, name);
  if (lstat(path, &st)) {
    snprintf(path, sizeof path, "%s/../%s.py", s->dir, name);
    if (lstat(path, &st)) return 0;
  }
  /* a link may lead anywhere (a problem unpacked from elsewhere with
   * creds.py -> ../.aws/credentials): what reaches the written reference,
   * and the coordinator, is a file of the problem's folders, nothing
   * else the user can read */
  if (!S_ISREG(st.st_mode)) {
    snprintf(err, errlen, "%.300s, imported by %.300s, is %s: kf import "
             "takes the problem's own files only (copy it in)", path, who,
             S_ISLNK(st.st_mode) ? "a symbolic link" : "not a regular file");
    return KF_EXIT_USAGE;
  }
  size_t rl = strlen(s->root);
  if (!realpath(path, real) || strncmp(real, s->root, rl) ||
      real[rl] != '/') {
    snprintf(err, errlen, "%.300s, imported by %.300s, leads outside %.300s "
             "and its parent folder (a symbolic link?): kf import takes the "
             "problem's own files only", path, who, s->dir);
    return KF_EXIT_USAGE;
  }
  if (s->n == SIB_MAX) {
    snprintf(err, errlen, "%.400s imports more than %d modules of %.400s", who,
             SIB_MAX, s->dir);
    return KF_EXIT_USAGE;
  }
  sibling *m = &s->mods[s->n++];
  kf_strlcpy(m->name, name, sizeof m->name);
  size_t len = 0;
  char rerr[600], why[120];
  if (kf_read_file(path, SIB_BYTES, &m->src, &len, rerr, sizeof rerr)) {
    snprintf(err, errlen, "%.400s imports %s: %.600s", who, name, rerr);
    return KF_EXIT_USAGE;
  }
  if (kf_text_check(m->src, len, SIB_BYTES, why, sizeof why)) {
    snprintf(err, errlen, "%.400s, imported by %.400s, %s", path, who, why);
    return KF_EXIT_USAGE;
  }
  s->total += len;
  if (s->total > SIB_TOTAL) {
    snprintf(err, errlen, "the modules %.300s imports come to more than %u "
             "KiB with %.300s; a reference and its modules are one file of "
             "at most 1 MiB", who, SIB_TOTAL >> 10, path);
    return KF_EXIT_USAGE;
  }
  int rc = sib_scan(s, m->src, path, err, errlen);
  if (rc) return rc;
  s->order[s->n_order++] = (int)(m - s->mods);
  return 0;
}

/* src with DIR's modules it imports put in front of its own code (after
 * its future imports), or src itself when it imports none: a malloc'd
 * text in *out, *names the modules' names ("task, utils").  0, or an
 * exit code with err filled. */
static int bundle_siblings(const char *dir, const char *src, char **out,
                           char *names, size_t nameslen, char *err,
                           size_t errlen) {
  siblings *sp = calloc(1, sizeof *sp);
  if (!sp) {
    snprintf(err, errlen, "out of memory");
    return KF_EXIT_FAIL;
  }
  sp->dir = dir;
  char who[PATH_MAX + 32], up[PATH_MAX + 8];
  snprintf(who, sizeof who, "%s/reference.py", dir);
  snprintf(up, sizeof up, "%s/..", dir);
  *out = NULL;
  names[0] = '\0';
  if (!realpath(up, sp->root)) {
    snprintf(err, errlen, "%.400s: %s", up, strerror(errno));
    free(sp);
    return KF_EXIT_USAGE;
  }
  if (!strcmp(sp->root, "/")) sp->root[0] = '\0'; /* "/" + name */
  int rc = sib_scan(sp, src, who, err, errlen);
  /* GPU MODE's submissions start `from task import input_t, output_t`:
   * its task.py is the problem's even where reference.py does not
   * import it */
  if (!rc) rc = sib_visit(sp, "task", who, err, errlen);
  kf_cli__sbuf b = {0};
  if (!rc && sp->n_order) {
    /* the directory's name, not its path: the written reference is the
     * measurement's identity, the same wherever DIR was */
    char base[PATH_MAX];
    kf_strlcpy(base, dir, sizeof base);
    size_t bl = strlen(base);
    while (bl > 1 && base[bl - 1] == '/') base[--bl] = '\0';
    const char *slash = strrchr(base, '/');
    const char *dname = slash && slash[1] ? slash + 1 : base;
    size_t at = kf_cli__py_future_end(src);
    /* this prologue and harness/torch/runner.py's _modules_in and
     * _register_modules are one protocol written twice (the reference runs
     * the prologue, a candidate's runner registers the same modules
     * first): the "_kf_module(" marker, the __kf_problem__ and
     * __kf_text__ attributes and the refusal of a loaded name must change
     * together */
    for (int i = 0; i < sp->n_order; i++)
      snprintf(names + strlen(names), nameslen - strlen(names), "%s%s",
               i ? ", " : "", sp->mods[sp->order[i]].name);
    kf_cli__sb_printf(&b, "%.*s%s# --- kf import: %s of %s, the modules "
                      "this reference imports, registered\n# under their "
                      "names before its code runs (the sandbox loads no "
                      "file)\nimport sys as _kf_sys\nimport types as "
                      "_kf_types\n\n\ndef _kf_module(name, text):\n"
                      "    old = _kf_sys.modules.get(name)\n"
                      "    if getattr(old, \"__kf_text__\", None) == text:\n"
                      "        return  # the runner ran it (runner.py "
                      "_register_modules)\n"
                      "    if old is not None and not getattr(old, "
                      "\"__kf_problem__\", False):\n"
                      "        raise ImportError(name + \".py of the problem's "
                      "directory has the name of a module the runner has "
                      "loaded: rename it\")\n"
                      "    m = _kf_types.ModuleType(name)\n"
                      "    m.__kf_problem__ = True\n"
                      "    m.__kf_text__ = text\n"
                      "    m.__file__ = name + \".py\"\n"
                      "    _kf_sys.modules[name] = m\n"
                      "    try:\n"
                      "        code = compile(text, name + \".py\", \"exec\", "
                      "dont_inherit=True)\n"
                      "    except SyntaxError as e:\n"
                      "        raise ImportError(\"%%s.py line %%s: %%s\" %% "
                      "(name, e.lineno, e.msg)) from None\n"
                      "    exec(code, m.__dict__)\n\n\n", (int)at, src,
                      at && src[at - 1] != '\n' ? "\n" : "", names, dname);
    for (int i = 0; i < sp->n_order; i++) {
      kf_cli__sb_printf(&b, "_kf_module(\"%s\", ", sp->mods[sp->order[i]].name);
      kf_cli__py_str(&b, sp->mods[sp->order[i]].src);
      kf_cli__sb_printf(&b, ")\n");
    }
    kf_cli__sb_printf(&b, "# --- reference.py of %s, as it was:\n%s", dname,
                      src + at);
    if (b.oom) {
      snprintf(err, errlen, "out of memory");
      rc = KF_EXIT_FAIL;
    } else {
      *out = b.p;
      b.p = NULL;
    }
  }
  free(b.p);
  for (int i = 0; i < sp->n; i++) free(sp->mods[i].src);
  free(sp);
  return rc;
}

/* The spec.json text for the inspector's report in.  tests (GPU MODE:
 * task.yml's tests, the inspector's in["tests"] in the same order) adds a
 * size per test the inspector could run, unless one_size; *too_many is
 * set when their dimensions need more params than a spec has (the caller
 * then asks for one size).  NULL with bad filled. */
static char *make_spec(const imp_opts *o, const char *name, cJSON *in,
                       const cJSON *tests, int nbx, bool one_size,
                       bool *too_many, char *bad, size_t badlen) {
  const char *e = cJSON_GetStringValue(cJSON_GetObjectItem(in, "error"));
  if (e) {
    /* the reference's own text (an exception's message): display-safe
     * (red team 2026-12-02-s3-prob, L1: a message that set the window
     * title and drew a fake "wrote" line) */
    kf_text_sanitize(e, strlen(e), bad, badlen, 0);
    return NULL;
  }
  /* args: forward's arguments, written when they are not just the
   * tensor inputs in order (a number among them, a 0-d tensor) */
  cJSON *ins = cJSON_GetObjectItem(in, "inputs"),
        *outs = cJSON_GetObjectItem(in, "outputs"),
        *names = cJSON_GetObjectItem(in, "names");
  if (!cJSON_IsArray(ins) || !cJSON_IsArray(outs)) {
    snprintf(bad, badlen, "the inspector's output lacks inputs/outputs");
    return NULL;
  }
  cJSON *s = cJSON_CreateObject();
  dimset d = {.n = 0, .ncase = 1};
  /* the tests the inspector ran: case c's shapes and arguments */
  const cJSON *tshape[GM_CASES] = {0}, *targs[GM_CASES] = {0};
  bool tbench[GM_CASES] = {0}; /* one of the first nbx: a benchmark */
  bool tests_finite = true;
  const cJSON *tr = cJSON_GetObjectItem(in, "tests");
  for (int k = 0; !one_size && k < cJSON_GetArraySize(tr) &&
                  d.ncase < GM_CASES; k++) {
    const cJSON *r = cJSON_GetArrayItem(tr, k);
    if (cJSON_GetObjectItem(r, "skip") || !cJSON_IsObject(cJSON_GetArrayItem(tests, k)))
      continue;
    tests_finite &= !cJSON_IsFalse(cJSON_GetObjectItem(r, "finite"));
    tshape[d.ncase] = r;
    tbench[d.ncase] = k < nbx;
    targs[d.ncase++] = cJSON_GetArrayItem(tests, k);
  }
  int64_t bytes = 0;
  cJSON_AddStringToObject(s, "name", name);
  cJSON_AddStringToObject(s, "backend", "torch");
  cJSON *ti = cJSON_CreateArray(), *to = cJSON_CreateArray(),
        *args = cJSON_CreateArray();
  int nt = 0, i = 0;
  bool need_args = false;
  /* `sample` needs the input function's draws to follow the seeds the
   * sampler sets (runner.py UNSEEDED, PINNED_GM; main warns when they do
   * not) */
  bool sample = cJSON_IsTrue(cJSON_GetObjectItem(in, "reproducible"));
  const cJSON *x;
  cJSON_ArrayForEach(x, ins) {
    char nm[40];
    const char *given = cJSON_GetStringValue(cJSON_GetArrayItem(names, i));
    if (given && strlen(given) < 30) snprintf(nm, sizeof nm, "%s", given);
    else snprintf(nm, sizeof nm, "x%d", i);
    /* outputs are named out, out0, out1...: forward(self, out) took the
     * name, and the spec had two tensors called out (red team) */
    if (!strncmp(nm, "out", 3) &&
        (!nm[3] || strspn(nm + 3, "0123456789") == strlen(nm + 3)))
      snprintf(nm, sizeof nm, "%.30s_in", given ? given : "x");
    if (cJSON_IsTrue(cJSON_GetObjectItem(x, "tensor"))) {
      if (nt >= KF_SPEC_MAX_TENSORS) {
        snprintf(bad, badlen, "more than %d tensor inputs", KF_SPEC_MAX_TENSORS);
        goto fail;
      }
      for (int c = 1; c < d.ncase; c++)
        d.cur[c] = cJSON_GetArrayItem(cJSON_GetObjectItem(tshape[c], "inputs"), i);
      cJSON *t = tensor_json(x, nm, &d, true, sample, &bytes, bad, badlen);
      if (!t) goto fail;
      cJSON_AddItemToArray(ti, t);
      cJSON *a = cJSON_CreateObject();
      cJSON_AddNumberToObject(a, "t", nt++);
      /* a 0-d tensor is held as shape ["1"] (tensor_json) and passed 0-d
       * again: a reference that cats s.unsqueeze(0) failed on [1] in
       * every evaluation (red team 2026-12-01-s3c, H4) */
      if (cJSON_GetArraySize(cJSON_GetObjectItem(x, "shape")) == 0) {
        cJSON_AddTrueToObject(a, "0d");
        need_args = true;
      }
      cJSON_AddItemToArray(args, a);
    } else {
      if (strcmp(o->kind, "kernelbench")) {
        snprintf(bad, badlen, "input %d (%s) is a number: GPU MODE data must"
                 " be tensors", i, nm);
        goto fail;
      }
      cJSON *a = cJSON_CreateObject();
      cJSON_AddItemToObject(a, "v", cJSON_Duplicate(cJSON_GetObjectItem(x, "value"), true));
      cJSON_AddItemToArray(args, a);
      need_args = true;
    }
    i++;
  }
  if (nt == 0) {
    snprintf(bad, badlen, "the reference takes no tensor input");
    goto fail;
  }
  i = 0;
  int nout = cJSON_GetArraySize(outs);
  if (nout > KF_SPEC_MAX_TENSORS) {
    snprintf(bad, badlen, "more than %d outputs", KF_SPEC_MAX_TENSORS);
    goto fail;
  }
  char fl_dt[8] = "f32";
  bool nonfinite = false; /* an output the reference made NaN or +-inf */
  cJSON_ArrayForEach(x, outs) {
    nonfinite |= cJSON_IsFalse(cJSON_GetObjectItem(x, "finite"));
    char nm[16];
    for (int c = 1; c < d.ncase; c++)
      d.cur[c] = cJSON_GetArrayItem(cJSON_GetObjectItem(tshape[c], "outputs"), i);
    snprintf(nm, sizeof nm, nout == 1 ? "out" : "out%d", i++);
    cJSON *t = tensor_json(x, nm, &d, false, false, &bytes, bad, badlen);
    if (!t) goto fail;
    const char *dt = cJSON_GetStringValue(cJSON_GetObjectItem(x, "dtype"));
    if (dt) kf_strlcpy(fl_dt, dt, sizeof fl_dt);
    cJSON_AddItemToArray(to, t);
  }
  /* GPU MODE: the problem's own check_implementation tolerance
   * (runner.py _gm_tolerance), where the command line gave none */
  const cJSON *ptol = cJSON_GetObjectItem(in, "tolerance");
  const cJSON *pr = cJSON_GetObjectItem(ptol, "rtol"),
              *pa = cJSON_GetObjectItem(ptol, "atol");
  bool own_r = !o->rtol_given && cJSON_IsNumber(pr),
       own_a = !o->atol_given && cJSON_IsNumber(pa);
  double rtol = own_r ? pr->valuedouble : o->rtol,
         atol = own_a ? pa->valuedouble : o->atol;
  char tolsay[160];
  if (own_r || own_a)
    snprintf(tolsay, sizeof tolsay, "Tolerance rtol %g, atol %g (%s "
             "check_implementation's make_match_reference).", rtol, atol,
             own_r && own_a ? "both from" : "in part from");
  else
    snprintf(tolsay, sizeof tolsay, "Tolerance rtol %g, atol %g (f16/bf16 "
             "at least 1e-2).", rtol, atol);
  char desc[900];
  bool kb = !strcmp(o->kind, "kernelbench");
  snprintf(desc, sizeof desc, "Imported by `kf import %s` from %s: shapes "
           "from %s, dtypes and outputs from one run of the reference "
           "(torch %s). %s%s%s %s", o->kind, o->src,
           kb ? "get_inputs()" : "generate_input()",
           cJSON_GetStringValue(cJSON_GetObjectItem(in, "torch"))
               ? cJSON_GetStringValue(cJSON_GetObjectItem(in, "torch"))
               : "?",
           sample ? "Inputs are drawn by the reference's " : "",
           sample ? (kb ? "get_inputs()" : "generate_input()") : "",
           sample ? ", seeded from each draw's secret key (distribution "
                    "sample)."
                  : "Inputs are drawn by the harness (normal and uniform "
                    "floats, U(0, 1) where the reference's gave none "
                    "negative; integers in [0, the largest seen + 1)).",
           tolsay);
  cJSON_AddStringToObject(s, "description", desc);
  if (d.overflow) {
    *too_many = true;
    snprintf(bad, badlen, "task.yml's tests have more distinct dimensions "
             "than a spec's %d params", KF_SPEC_MAX_PARAMS);
    goto fail;
  }
  nonfinite |= !tests_finite;
  cJSON *params = cJSON_AddArrayToObject(s, "params");
  if (d.n == 0) { /* every dimension 1: one param all the same */
    for (int c = 0; c < d.ncase; c++) d.v[0][c] = 1;
    d.n = 1;
  }
  /* two cases of the same shapes (top_k's k=50 and k=1 at one vocabulary)
   * are two sizes by a param no dimension uses, CASE, their number */
  bool twin = false;
  for (int a = 0; a < d.ncase && !twin; a++)
    for (int b = a + 1; b < d.ncase && !twin; b++) {
      bool eq = true;
      for (int k = 0; k < d.n; k++) eq = eq && d.v[k][a] == d.v[k][b];
      twin = eq;
    }
  if (twin && d.n >= KF_SPEC_MAX_PARAMS) {
    *too_many = true;
    snprintf(bad, badlen, "task.yml's tests need a param more than a "
             "spec's %d to tell two of the same shapes apart",
             KF_SPEC_MAX_PARAMS);
    goto fail;
  }
  for (int k = 0; k < d.n; k++) {
    char p[16];
    snprintf(p, sizeof p, "D%d", k);
    cJSON_AddItemToArray(params, cJSON_CreateString(p));
  }
  if (twin) cJSON_AddItemToArray(params, cJSON_CreateString("CASE"));
  cJSON_AddItemToObject(s, "inputs", ti);
  cJSON_AddItemToObject(s, "outputs", to);
  ti = to = NULL;
  cJSON *sizes = cJSON_AddObjectToObject(s, "sizes");
  cJSON *chk = cJSON_AddArrayToObject(sizes, "check");
  cJSON *sz = NULL, *cases = d.ncase > 1 ? cJSON_CreateArray() : NULL;
  cJSON *more = cJSON_CreateArray();
  /* the tests in task.yml's order, then the benchmark; the other
   * benchmarks timed after it, verified there too (sizes.bench) */
  for (int c = 1; c <= d.ncase; c++) {
    int cc = c % d.ncase;
    cJSON *z = cJSON_CreateObject();
    for (int k = 0; k < d.n; k++) {
      char p[16];
      snprintf(p, sizeof p, "D%d", k);
      cJSON_AddNumberToObject(z, p, (double)d.v[k][cc]);
    }
    if (twin) cJSON_AddNumberToObject(z, "CASE", cc + 1);
    if (tbench[cc]) cJSON_AddItemToArray(more, cJSON_Duplicate(z, true));
    else cJSON_AddItemToArray(chk, cJSON_Duplicate(z, true));
    if (cases) {
      cJSON *e = cJSON_CreateObject();
      cJSON_AddItemToObject(e, "size", cJSON_Duplicate(z, true));
      cJSON_AddItemToObject(e, "case", cJSON_Duplicate(
          cc ? targs[cc] : cJSON_GetObjectItem(in, "case"), true));
      cJSON_AddItemToArray(cases, e);
    }
    if (!cc) sz = cJSON_Duplicate(z, true);
    cJSON_Delete(z);
  }
  if (cJSON_GetArraySize(more)) {
    cJSON *bl = cJSON_CreateArray();
    cJSON_AddItemToArray(bl, sz);
    while (cJSON_GetArraySize(more))
      cJSON_AddItemToArray(bl, cJSON_DetachItemFromArray(more, 0));
    sz = bl;
  }
  cJSON_Delete(more);
  cJSON_AddItemToObject(sizes, "bench", sz);
  cJSON *tol = cJSON_AddObjectToObject(s, "tolerance");
  const char *fdt[] = {"f32", "f64", "f16", "bf16", "i32", "i64", "bool"};
  for (size_t k = 0; k < sizeof fdt / sizeof *fdt; k++) {
    bool used = false; /* only the outputs' dtypes */
    cJSON_ArrayForEach(x, outs) {
      const char *dt = cJSON_GetStringValue(cJSON_GetObjectItem(x, "dtype"));
      used = used || (dt && !strcmp(dt, fdt[k]));
    }
    if (!used) continue;
    cJSON *t = cJSON_AddObjectToObject(tol, fdt[k]);
    bool half = k == 2 || k == 3;
    if (k >= 4) { /* integers and bool: exact */
      cJSON_AddNumberToObject(t, "rtol", 0);
      cJSON_AddNumberToObject(t, "atol", 0);
      continue;
    }
    /* the half types' floor is kf import's default, not the problem's */
    cJSON_AddNumberToObject(t, "rtol", half && !own_r && rtol < 1e-2 ? 1e-2 : rtol);
    cJSON_AddNumberToObject(t, "atol", half && !own_a && atol < 1e-2 ? 1e-2 : atol);
  }
  (void)fl_dt;
  /* -inf in masked scores is the answer, not a fault: without this every
   * evaluation was a spec_error (red team, 2026-11-30) */
  cJSON_AddBoolToObject(s, "allow_nan", nonfinite);
  cJSON_AddBoolToObject(s, "deterministic", false);
  cJSON_AddStringToObject(s, "flops", "0");
  char b[32];
  snprintf(b, sizeof b, "%lld", (long long)bytes);
  cJSON_AddStringToObject(s, "bytes", b);
  cJSON_AddStringToObject(s, "reference", "reference.py");
  cJSON *tq = cJSON_AddObjectToObject(s, "torch");
  cJSON_AddStringToObject(tq, "kind", o->kind);
  cJSON_AddStringToObject(tq, "device", o->device);
  cJSON *init = cJSON_GetObjectItem(in, "init");
  if (init && cJSON_GetArraySize(init))
    cJSON_AddItemToObject(tq, "init", cJSON_Duplicate(init, true));
  if (need_args) cJSON_AddItemToObject(tq, "args", args);
  else cJSON_Delete(args);
  args = NULL;
  /* GPU MODE: generate_input()'s arguments, which the sampler passes
   * with a seed of its own */
  cJSON *cs = cJSON_GetObjectItem(in, "case");
  if (!strcmp(o->kind, "gpumode") && cJSON_IsObject(cs) &&
      cJSON_GetArraySize(cs))
    cJSON_AddItemToObject(tq, "case", cJSON_Duplicate(cs, true));
  if (cases) cJSON_AddItemToObject(tq, "cases", cases);
  /* and the form of its data: a 1-tuple is not its bare tensor */
  const char *pk = cJSON_GetStringValue(cJSON_GetObjectItem(in, "data"));
  if (!strcmp(o->kind, "gpumode") && pk &&
      (!strcmp(pk, "tuple") || !strcmp(pk, "list")))
    cJSON_AddStringToObject(tq, "data", pk);
  cJSON *tl = cJSON_AddArrayToObject(s, "templates");
  cJSON *t0 = cJSON_CreateObject();
  cJSON_AddStringToObject(t0, "name", "eager");
  cJSON_AddStringToObject(t0, "file", "eager.py");
  cJSON_AddStringToObject(t0, "description", "the reference itself, under "
                          "no_grad or inference_mode: a verified start");
  cJSON *kn = cJSON_AddArrayToObject(t0, "knobs");
  cJSON *k0 = cJSON_CreateObject();
  cJSON_AddStringToObject(k0, "name", "MODE");
  cJSON *vals = cJSON_AddArrayToObject(k0, "values");
  cJSON_AddItemToArray(vals, cJSON_CreateString("no_grad"));
  cJSON_AddItemToArray(vals, cJSON_CreateString("inference"));
  cJSON_AddItemToArray(kn, k0);
  cJSON_AddItemToArray(tl, t0);
  char *text = cJSON_Print(s);
  cJSON_Delete(s);
  return text;
fail:
  cJSON_Delete(ti);
  cJSON_Delete(to);
  cJSON_Delete(args);
  cJSON_Delete(s);
  return NULL;
}

int kf_cli_import(int argc, char **argv) {
  if (argc >= 1 && (!strcmp(argv[0], "--help") || !strcmp(argv[0], "-h"))) {
    usage(stdout);
    return KF_EXIT_OK;
  }
  if (argc < 2 || (strcmp(argv[0], "kernelbench") && strcmp(argv[0], "gpumode"))) {
    usage(stderr);
    return KF_EXIT_USAGE;
  }
  imp_opts o = {.kind = argv[0], .src = argv[1], .rtol = 1e-3, .atol = 1e-3,
                .device = "cpu"};
  static const struct option lo[] = {
      {"out", required_argument, 0, 'o'}, {"name", required_argument, 0, 'n'},
      {"case", required_argument, 0, 'c'}, {"rtol", required_argument, 0, 'r'},
      {"atol", required_argument, 0, 'a'}, {"device", required_argument, 0, 'd'},
      {"help", no_argument, 0, 'h'},       {0, 0, 0, 0}};
  optind = 1;
  int c;
  while ((c = getopt_long(argc - 1, argv + 1, "", lo, NULL)) != -1) {
    char *end = NULL;
    switch (c) {
    case 'o': o.out = optarg; break;
    case 'n': o.name = optarg; break;
    case 'c': o.cscase = optarg; break;
    case 'd': o.device = optarg; break;
    case 'r':
    case 'a': {
      double v = strtod(optarg, &end);
      if (!end || *end || !(v >= 0) || v > 1) {
        fprintf(stderr, "kf import: --%s '%s': a number in [0, 1]\n",
                c == 'r' ? "rtol" : "atol", optarg);
        return KF_EXIT_USAGE;
      }
      if (c == 'r') o.rtol = v, o.rtol_given = true;
      else o.atol = v, o.atol_given = true;
      break;
    }
    case 'h': usage(stdout); return KF_EXIT_OK;
    default: usage(stderr); return KF_EXIT_USAGE;
    }
  }
  if (optind != argc - 1) {
    fprintf(stderr, "kf import: unexpected argument '%s'\n", argv[optind + 1]);
    return KF_EXIT_USAGE;
  }
  if (strcmp(o.device, "cpu") && strcmp(o.device, "cuda")) {
    fprintf(stderr, "kf import: --device '%s': cpu or cuda\n", o.device);
    return KF_EXIT_USAGE;
  }
  /* the reference file.  A path the buffers cannot hold is refused: cut
   * short, it named another file, which was imported instead (red team
   * 2026-12-01-s3c, H5) */
  char ref[PATH_MAX + 32], name[64];
  struct stat stt;
  if (strlen(o.src) >= PATH_MAX || (o.out && strlen(o.out) >= PATH_MAX)) {
    fprintf(stderr, "kf import: %s is %zu bytes long; paths of up to %d "
            "bytes are taken\n", strlen(o.src) >= PATH_MAX ? "the path given" :
            "--out", strlen(strlen(o.src) >= PATH_MAX ? o.src : o.out),
            PATH_MAX - 1);
    return KF_EXIT_USAGE;
  }
  if (!strcmp(o.kind, "gpumode")) {
    if (stat(o.src, &stt) || !S_ISDIR(stt.st_mode)) {
      fprintf(stderr, "kf import gpumode: %s is not a directory (it holds "
              "reference.py)\n", o.src);
      return KF_EXIT_USAGE;
    }
    snprintf(ref, sizeof ref, "%s/reference.py", o.src);
  } else {
    kf_strlcpy(ref, o.src, sizeof ref);
  }
  char *src = NULL, err[1200];
  if (kf_read_file(ref, 1u << 20, &src, NULL, err, sizeof err)) {
    fprintf(stderr, "kf import: %s\n", err);
    return KF_EXIT_USAGE;
  }
  char *cs = NULL, cp[PATH_MAX + 32] = "", said[80] = "";
  char chosen[CASE_MAX + 100] = "";
  /* --case benchmarks:N / tests:N, or no case given: task.yml's entry */
  bool gm = !strcmp(o.kind, "gpumode");
  /* no case chosen and task.yml has benchmarks: every one is timed */
  bool every_bench = false;
  if (gm && o.cscase && !strchr(o.cscase, '{')) {
    if (kf_cli__gm_task_case(o.src, o.cscase, &cs, said, sizeof said, err,
                             sizeof err)) {
      fprintf(stderr, "kf import: %s\n", err);
      free(src);
      return KF_EXIT_USAGE;
    }
    o.cscase = cs;
  }
  if (gm && !o.cscase) {
    /* only a case.json that is not there means the default: one that
     * could not be read was replaced by it unsaid (red team
     * 2026-12-01-s3c, H6) */
    snprintf(cp, sizeof cp, "%s/case.json", o.src);
    if (access(cp, F_OK) && errno == ENOENT) {
      /* GPU MODE's own list of cases; the old default only where it has
       * none (a problem written for kf import) */
      cp[0] = 0;
      int trc = kf_cli__gm_task_case(o.src, NULL, &cs, said, sizeof said,
                                     err, sizeof err);
      if (trc < 0) {
        fprintf(stderr, "kf import: %s\n", err);
        free(src);
        return KF_EXIT_USAGE;
      }
      o.cscase = trc ? "{\"size\": 4096, \"seed\": 42}" : cs;
      every_bench = !trc;
    } else if (kf_read_file(cp, 1u << 20, &cs, NULL, err, sizeof err)) {
      fprintf(stderr, "kf import: %s\n", err);
      free(src);
      return KF_EXIT_USAGE;
    } else {
      o.cscase = cs;
    }
  }
  if (o.cscase) {
    /* compact: it travels to the inspector in an environment variable
     * of CASE_MAX bytes (run_inspect) */
    cJSON *cj = cJSON_Parse(o.cscase);
    char *compact = cJSON_IsObject(cj) ? cJSON_PrintUnformatted(cj) : NULL;
    cJSON_Delete(cj);
    const char *what = cp[0] ? cp : said[0] ? said : "--case";
    if (!compact || strlen(compact) > CASE_MAX) {
      if (compact)
        fprintf(stderr, "kf import: %s is %zu bytes as compact JSON; at most "
                "%d\n", what, strlen(compact), CASE_MAX);
      else
        fprintf(stderr, "kf import: %s must be a JSON object of "
                "generate_input's keyword arguments\n", what);
      free(compact);
      free(src);
      free(cs);
      return KF_EXIT_USAGE;
    }
    free(cs);
    o.cscase = cs = compact;
    if (said[0]) snprintf(chosen, sizeof chosen, "%s, from %s", compact, said);
  }
  if (o.name) {
    for (const char *p = o.name; *p; p++)
      if (!name_char(*p) || strlen(o.name) > 60) {
        fprintf(stderr, "kf import: --name '%s': 1..60 of [A-Za-z0-9_.-]\n",
                o.name);
        free(src);
        free(cs);
        return KF_EXIT_USAGE;
      }
    kf_strlcpy(name, o.name, sizeof name);
  } else {
    name_from(o.src, name, sizeof name);
  }
  char out[PATH_MAX];
  if (o.out) kf_strlcpy(out, o.out, sizeof out);
  else snprintf(out, sizeof out, "./%s", name);
  if (access(out, F_OK) == 0) {
    fprintf(stderr, "kf import: %s exists; give --out a new directory\n", out);
    free(src);
    free(cs);
    return KF_EXIT_USAGE;
  }
  char real[4096];
  if (!realpath(ref, real)) kf_strlcpy(real, ref, sizeof real);
  char mods[SIB_MAX * 66] = "";
  if (!strcmp(o.kind, "gpumode")) {
    char *bundled = NULL;
    int brc = bundle_siblings(o.src, src, &bundled, mods, sizeof mods, err,
                              sizeof err);
    if (brc) {
      fprintf(stderr, "kf import: %s\n", err);
      free(src);
      free(cs);
      return brc;
    }
    if (bundled) {
      free(src);
      src = bundled;
    }
  }
  /* GPU MODE: task.yml's tests are sizes the problem is verified at too,
   * each drawn by its own arguments -- a kernel right at the benchmark's
   * shape alone is not one GPU MODE accepts */
  cJSON *tests = NULL;
  char *tests_json = NULL, tests_cut[160] = "", bench_cut[200] = "";
  /* the other benchmarks (every_bench), first in `tests`: bidx[k] is
   * entry k's index in task.yml's benchmarks */
  int nbx = 0, bidx[KF_SPEC_MAX_BENCH - 1];
  if (!strcmp(o.kind, "gpumode")) {
    cJSON *bl = NULL;
    if (kf_cli__gm_task_list(o.src, "tests", &tests, err, sizeof err) < 0 ||
        (every_bench &&
         kf_cli__gm_task_list(o.src, "benchmarks", &bl, err, sizeof err) <
             0)) {
      fprintf(stderr, "kf import: %s\n", err);
      cJSON_Delete(tests);
      free(src);
      free(cs);
      return KF_EXIT_USAGE;
    }
    if (!tests) tests = cJSON_CreateArray();
    /* a test or a benchmark that is the benchmark but for its seed adds
     * nothing; nor a test that is another benchmark so */
    cJSON *bench = o.cscase ? cJSON_Parse(o.cscase) : NULL;
    cJSON_DeleteItemFromObjectCaseSensitive(bench, "seed");
    int nb0 = 0;
    /* the benchmarks first, then the tests (a new array: Debian's cJSON
     * 1.7.15 inserts into an array once, then refuses) */
    cJSON *all = cJSON_CreateArray();
    if (!all) {
      fprintf(stderr, "kf import: out of memory\n");
      cJSON_Delete(bl);
      cJSON_Delete(bench);
      cJSON_Delete(tests);
      free(src);
      free(cs);
      return KF_EXIT_FAIL;
    }
    for (int j = 0; j < cJSON_GetArraySize(bl); j++) {
      cJSON *t = cJSON_Duplicate(cJSON_GetArrayItem(bl, j), true);
      cJSON_DeleteItemFromObjectCaseSensitive(t, "seed");
      bool same = bench && cJSON_Compare(t, bench, true);
      cJSON_Delete(t);
      if (same) continue;
      nb0++;
      if (nbx == KF_SPEC_MAX_BENCH - 1) continue;
      bidx[nbx++] = j;
      cJSON_AddItemToArray(all,
                           cJSON_Duplicate(cJSON_GetArrayItem(bl, j), true));
    }
    while (cJSON_GetArraySize(tests))
      cJSON_AddItemToArray(all, cJSON_DetachItemFromArray(tests, 0));
    cJSON_Delete(tests);
    tests = all;
    if (nb0 > nbx)
      snprintf(bench_cut, sizeof bench_cut, "the first %d of task.yml's %d "
               "benchmarks are timed (at most %d)", nbx + 1,
               cJSON_GetArraySize(bl), KF_SPEC_MAX_BENCH);
    cJSON_Delete(bl);
    for (int k = cJSON_GetArraySize(tests) - 1; k >= nbx; k--) {
      cJSON *t = cJSON_Duplicate(cJSON_GetArrayItem(tests, k), true);
      cJSON_DeleteItemFromObjectCaseSensitive(t, "seed");
      bool same = bench && cJSON_Compare(t, bench, true);
      for (int j = 0; j < nbx && !same; j++) {
        cJSON *b = cJSON_Duplicate(cJSON_GetArrayItem(tests, j), true);
        cJSON_DeleteItemFromObjectCaseSensitive(b, "seed");
        same = cJSON_Compare(t, b, true);
        cJSON_Delete(b);
      }
      if (same) cJSON_ReplaceItemInArray(tests, k, cJSON_CreateNull());
      cJSON_Delete(t);
    }
    cJSON_Delete(bench);
    int n0 = cJSON_GetArraySize(tests);
    /* the tests at the end are left out first, the benchmarks never */
    while (cJSON_GetArraySize(tests) > GM_CASES - 1)
      cJSON_DeleteItemFromArray(tests, cJSON_GetArraySize(tests) - 1);
    tests_json = cJSON_PrintUnformatted(tests);
    while (tests_json && strlen(tests_json) > TESTS_MAX &&
           cJSON_GetArraySize(tests) > nbx) {
      cJSON_DeleteItemFromArray(tests, cJSON_GetArraySize(tests) - 1);
      free(tests_json);
      tests_json = cJSON_PrintUnformatted(tests);
    }
    if (!tests_json || strlen(tests_json) > TESTS_MAX) {
      fprintf(stderr, "kf import: task.yml's benchmarks are over %u bytes "
              "as compact JSON\n", TESTS_MAX);
      cJSON_Delete(tests);
      free(tests_json);
      free(src);
      free(cs);
      return KF_EXIT_USAGE;
    }
    if (cJSON_GetArraySize(tests) < n0)
      snprintf(tests_cut, sizeof tests_cut, "the first %d of task.yml's %d "
               "tests are taken (at most %d, in %u bytes)",
               cJSON_GetArraySize(tests) - nbx, n0 - nbx, GM_CASES - 1 - nbx,
               TESTS_MAX);
  }
  char *json = NULL;
  int rc = run_inspect(&o, real, mods[0] ? src : NULL, tests_json, &json);
  free(tests_json);
  if (rc) {
    cJSON_Delete(tests);
    free(src);
    free(cs);
    return rc;
  }
  /* the whole output one JSON value: nothing before or after it */
  cJSON *in = cJSON_ParseWithOpts(json, NULL, 1);
  const cJSON *rs = in ? cJSON_GetObjectItem(in, "ref_s") : NULL;
  double ref_s = cJSON_IsNumber(rs) ? rs->valuedouble : 0;
  const cJSON *is = in ? cJSON_GetObjectItem(in, "inputs_s") : NULL;
  double inputs_s = cJSON_IsNumber(is) ? is->valuedouble : 0;
  bool sample_dist =
      in && cJSON_IsTrue(cJSON_GetObjectItem(in, "reproducible"));
  const char *fn = !strcmp(o.kind, "gpumode") ? "generate_input()"
                                              : "get_inputs()";
  const char *us =
      in ? cJSON_GetStringValue(cJSON_GetObjectItem(in, "unseeded")) : NULL;
  char unseeded[700] = "";
  if (us) kf_strlcpy(unseeded, us, sizeof unseeded);
  const char *tw =
      in ? cJSON_GetStringValue(cJSON_GetObjectItem(in, "tolerance_why")) : NULL;
  char tolwhy[400] = "";
  if (tw && !(o.rtol_given && o.atol_given))
    kf_strlcpy(tolwhy, tw, sizeof tolwhy);
  char bad[1500] = "", one_why[300] = "", skipped[1200] = "";
  size_t sk = 0;
  bool too_many = false;
  char *spec = in ? make_spec(&o, name, in, tests, nbx, false, &too_many,
                              bad, sizeof bad) : NULL;
  if (!spec && too_many) { /* the benchmark's size alone, said */
    kf_strlcpy(one_why, bad, sizeof one_why);
    spec = make_spec(&o, name, in, NULL, 0, true, &too_many, bad, sizeof bad);
  }
  const cJSON *tr = in ? cJSON_GetObjectItem(in, "tests") : NULL;
  int verified = 0, nt_all = 0, timed = 0;
  for (int k = 0; k < cJSON_GetArraySize(tr); k++) {
    if (cJSON_IsNull(cJSON_GetArrayItem(tests, k))) continue;
    if (k >= nbx) nt_all++;
    const char *why =
        cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(tr, k), "skip"));
    if (!why) {
      if (k < nbx) timed++;
      else verified++;
    } else if (sk < sizeof skipped) {
      int w = snprintf(skipped + sk, sizeof skipped - sk, "%s%s:%d (%.200s)",
                       sk ? "; " : "", k < nbx ? "benchmarks" : "tests",
                       k < nbx ? bidx[k] : k - nbx, why);
      if (w > 0) sk += (size_t)w;
    }
  }
  if (one_why[0]) verified = timed = 0;
  /* inputs the problem hands over strided (a transpose): the harness
   * hands every side a row-major copy */
  char strided[300] = "";
  const cJSON *ins = in ? cJSON_GetObjectItem(in, "inputs") : NULL;
  for (int k = 0; k < cJSON_GetArraySize(ins); k++)
    if (cJSON_GetObjectItem(cJSON_GetArrayItem(ins, k), "strides") &&
        strlen(strided) < sizeof strided - 16)
      snprintf(strided + strlen(strided), sizeof strided - strlen(strided),
               "%s%d", strided[0] ? ", " : "", k);
  cJSON_Delete(tests);
  if (!in) {
    char safe[320];
    kf_text_sanitize(json, strnlen(json, 300), safe, sizeof safe, 0);
    snprintf(bad, sizeof bad, "the inspector printed no JSON: %s", safe);
  }
  cJSON_Delete(in);
  free(json);
  if (!spec) {
    fprintf(stderr, "kf import: %s: %s\n", ref, bad);
    free(src);
    free(cs);
    return KF_EXIT_USAGE;
  }
  kf_spec *chk = NULL;
  char perr[1024];
  if (kf_spec_parse(spec, strlen(spec), NULL, &chk, perr, sizeof perr)) {
    fprintf(stderr, "kf import: %s: the spec made from it does not hold: %s\n",
            ref, perr);
    free(spec);
    free(src);
    free(cs);
    return KF_EXIT_USAGE;
  }
  kf_spec_free(chk);
  size_t sl = strlen(src);
  const char *starter = !strcmp(o.kind, "kernelbench") ? KB_STARTER : GM_STARTER;
  char *tmpl = malloc(sl + strlen(starter) + 1);
  if (!tmpl || kf_cli__mkdirs(out)) {
    fprintf(stderr, "kf import: cannot create %s: %s\n", out,
            tmpl ? strerror(errno) : "out of memory");
    free(tmpl);
    free(spec);
    free(src);
    free(cs);
    return KF_EXIT_FAIL;
  }
  memcpy(tmpl, src, sl);
  memcpy(tmpl + sl, starter, strlen(starter) + 1);
  size_t spl = strlen(spec);
  char *specnl = malloc(spl + 2);
  if (specnl) {
    memcpy(specnl, spec, spl);
    memcpy(specnl + spl, "\n", 2);
  }
  rc = !specnl || put(out, "spec.json", specnl) || put(out, "reference.py", src) ||
       put(out, "eager.py", tmpl);
  free(specnl);
  free(tmpl);
  free(spec);
  free(src);
  free(cs);
  if (rc) return KF_EXIT_FAIL;
  kf_spec *sp = NULL;
  if (kf_cli__load_problem(out, "kf import", &sp)) {
    fprintf(stderr, "kf import: the written spec does not load (a bug: "
            "please report it with the input file)\n");
    return KF_EXIT_FAIL;
  }
  printf("kf import: wrote %s (%d input%s, %d output%s; spec.json, "
         "reference.py, eager.py)\nnext: kf run %s\n", out, sp->n_inputs,
         sp->n_inputs == 1 ? "" : "s", sp->n_outputs,
         sp->n_outputs == 1 ? "" : "s", out);
  if (chosen[0])
    printf("kf import: generate_input's arguments: %s\n", chosen);
  if (mods[0])
    printf("kf import: reference.py holds %s of %s, the modules it imports "
           "(and task.py): candidates may import them too\n", mods, o.src);
  /* an evaluation calls the reference some 20-40 times (verify, the
   * self-check, timing); kf run gives a task 120 s: a slow reference
   * turned every evaluation into the candidate's `timeout` (red team,
   * 2026-11-30) */
  if (verified)
    printf("kf import: verified at %d of task.yml's tests too, each a size "
           "drawn by its own arguments (spec.json torch.cases)\n", verified);
  if (timed)
    printf("kf import: timed at %d of task.yml's benchmarks, each verified "
           "too; a time is their geometric mean, as GPU MODE ranks "
           "(spec.json sizes.bench)\n", timed + 1);
  if (tests_cut[0])
    fprintf(stderr, "kf import: warning: %s\n", tests_cut);
  if (bench_cut[0])
    fprintf(stderr, "kf import: warning: %s\n", bench_cut);
  if (skipped[0])
    fprintf(stderr, "kf import: warning: not verified (or timed) at %s: "
            "not a size of the benchmark's spec\n", skipped);
  if (one_why[0])
    fprintf(stderr, "kf import: warning: verified at the benchmark's size "
            "only, not at task.yml's %d tests: %s\n", nt_all, one_why);
  /* the problem's own check then differs from the harness's: say so */
  if (tolwhy[0])
    fprintf(stderr, "kf import: warning: %s; the harness compares the "
            "outputs with the reference's at spec.json's tolerance (give "
            "--rtol and --atol the problem's)\n", tolwhy);
  if (strided[0])
    fprintf(stderr, "kf import: warning: input %s of %s is not contiguous "
            "(a transpose, a slice): every side is handed a contiguous, "
            "row-major copy, so a kernel verified here may assume a layout "
            "the problem's own harness does not give\n", strided, fn);
  if (unseeded[0])
    fprintf(stderr, "kf import: warning: %.600s; its inputs are described "
            "by dtype and range instead (fixed distributions: what "
            "%s does beyond them is not drawn)\n", unseeded, fn);
  if (ref_s > 2.0)
    fprintf(stderr, "kf import: warning: one call of the reference took "
            "%.1f s here, and an evaluation calls it 20 times or more "
            "(%s's task budget: 120 s); make get_inputs() smaller, or "
            "expect timeouts\n", ref_s, "kf run");
  /* the draws are the problem's time too (the deadline puts them on the
   * reference's account): get_inputs() at 9 s left no kernel (red team
   * 2026-12-01-s3c, H7) */
  if (inputs_s > 1.0 && sample_dist)
    fprintf(stderr, "kf import: warning: one %s took %.1f s here, "
            "and an evaluation draws by it 20 times or more (%s's task "
            "budget: 120 s); make it faster, or expect the problem's "
            "evaluations to end at their deadline\n", fn, inputs_s,
            "kf run");
  kf_spec_free(sp);
  return KF_EXIT_OK;
}
