/* SPDX-License-Identifier: Apache-2.0 */
/*
 * harness/cpu/compile.c -- the "compile" stage: one C source to one shared
 * object with the system compiler.
 *
 * The compiler gets argv only, never a shell: knob names and values are
 * checked against fixed character sets first.  kf_candidate.h is embedded
 * in the binary at build time (cmake/embed_file.cmake) and written next to
 * the source, so the harness works from the build tree and from an
 * installed bundle alike, with no include path to find.
 *
 * The compiler runs in its own process group, in a mount jail when we are
 * root (harness/core/compile_jail.c: it sees the toolchain, /dev/null, a
 * private /tmp and the build directory, nothing else of the host), as uid
 * 65534, with an almost empty environment, without network (when it may
 * unshare), under rlimits (CPU 60 s, AS 2 GiB, FSIZE 64 MiB, NPROC 64) and
 * a wall-clock watchdog that kills the group.  Its messages name files
 * relative to the build directory, so no host path reaches the user.  On
 * success `why` says which of these defenses applied ("defenses: ...").
 *
 * Before that, kf_harness__check_source() refuses sources that would make
 * the compiler read files outside the build directory and the system
 * headers: an #include (or include_next/import/embed) of an absolute path
 * or one with "..", a computed #include (a macro operand), and the
 * assembler's .incbin/.include.  The compiler echoes what it read in its
 * errors, so without this a candidate could read world-readable host
 * files (#include "/etc/hostname") or hang the preprocessor on a device
 * (#include "/dev/zero").  It is a text check, the first and friendliest
 * line: string pasting in inline asm still spells .incbin past it, and
 * the jail is what stops that (the path does not exist there).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "err.h"
#include "cpu.h"
#include "internal.h"
#include "log.h"
#include "outcome.h"
#include "util.h"

#define MAX_KNOBS 32

static bool name_ok(const char *s) {
  if (!s || !*s || strlen(s) > 64) return false;
  if (!((*s >= 'A' && *s <= 'Z') || *s == '_')) return false;
  for (const char *p = s + 1; *p; p++)
    if (!((*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_'))
      return false;
  return true;
}

static bool value_ok(const char *s) {
  if (!s || !*s || strlen(s) > 64) return false;
  for (const char *p = s; *p; p++)
    if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
          (*p >= '0' && *p <= '9') || *p == '_' || *p == '-' || *p == '.'))
      return false;
  return true;
}

int kf_harness__check_knob(const char *name, const char *value, char *why,
                           size_t whylen) {
  if (!name_ok(name)) {
    snprintf(why, whylen,
             "knob name '%.64s' must match [A-Z_][A-Z0-9_]* (at most 64)",
             name ? name : "");
    return KF_OUTCOME_SPEC_ERROR;
  }
  if (!value_ok(value)) {
    snprintf(why, whylen,
             "knob %s: value '%.64s' must match [-A-Za-z0-9_.]+ (at most 64)",
             name, value ? value : "");
    return KF_OUTCOME_SPEC_ERROR;
  }
  return 0;
}

int kf_harness__write_source(const char *path, const char *text, char *why,
                             size_t whylen) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
                0644);
  if (fd < 0) {
    snprintf(why, whylen, "create %s: %s", path, strerror(errno));
    return KF_OUTCOME_INFRA_ERROR;
  }
  /* the compiler runs as nobody and must read it, whatever the umask */
  if (fchmod(fd, 0644) != 0) {
    snprintf(why, whylen, "chmod %s: %s", path, strerror(errno));
    close(fd);
    return KF_OUTCOME_INFRA_ERROR;
  }
  size_t n = strlen(text), off = 0;
  while (off < n) {
    ssize_t w = write(fd, text + off, n - off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      snprintf(why, whylen, "write %s: %s", path, strerror(errno));
      close(fd);
      return KF_OUTCOME_INFRA_ERROR;
    }
    off += (size_t)w;
  }
  if (close(fd) != 0) {
    snprintf(why, whylen, "close %s: %s", path, strerror(errno));
    return KF_OUTCOME_INFRA_ERROR;
  }
  return 0;
}

void kf_harness__tail_reason(const char *out, char *why, size_t whylen,
                             const char *prefix) {
  size_t n = strlen(out);
  size_t keep = whylen > 200 ? whylen - 100 : whylen / 2;
  const char *start = out;
  if (n > keep) {
    start = out + n - keep;
    const char *nl = strchr(start, '\n');
    if (nl && nl[1]) start = nl + 1;
  }
  snprintf(why, whylen, "%s%s%s", prefix, start != out ? "...\n" : "", start);
  size_t l = strlen(why);
  while (l && (why[l - 1] == '\n' || why[l - 1] == ' ')) why[--l] = '\0';
}

/* Skips spaces, tabs and block comments; returns the next character. */
static const char *skip_blank(const char *p) {
  for (;;) {
    while (*p == ' ' || *p == '\t' || *p == '\f' || *p == '\v') p++;
    if (p[0] == '/' && p[1] == '*') {
      const char *e = strstr(p + 2, "*/");
      if (!e) return p + strlen(p);
      p = e + 2;
      continue;
    }
    return p;
  }
}

/* See internal.h and the top comment.  Works on a copy with line splices
 * and the trigraph spelling of '#' undone (the digraph %: is matched
 * directly). */
int kf_harness__check_source(const char *src, const char *file, char *why,
                             size_t whylen) {
  size_t n = strlen(src);
  char *t = malloc(n + 1);
  if (!t) {
    snprintf(why, whylen, "out of memory");
    return KF_OUTCOME_INFRA_ERROR;
  }
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    if (src[i] == '\\' && (src[i + 1] == '\n' ||
                            (src[i + 1] == '\r' && src[i + 2] == '\n'))) {
      i += src[i + 1] == '\r' ? 2 : 1; /* splice */
      continue;
    }
    if (src[i] == '?' && src[i + 1] == '?' && src[i + 2] == '=') {
      t[k++] = '#';
      i += 2;
      continue;
    }
    t[k++] = src[i];
  }
  t[k] = '\0';
  int oc = 0;
  if (strstr(t, "incbin") || strstr(t, ".include")) {
    snprintf(why, whylen, "the assembler's .incbin/.include directives are "
             "not allowed: a kernel may not read files at build time");
    oc = KF_OUTCOME_COMPILE_ERROR;
  }
  int line = 1;
  for (char *p = t; !oc && *p; line++) {
    char *eol = strchr(p, '\n');
    if (eol) *eol = '\0';
    const char *q = skip_blank(p);
    if (*q == '#' || (q[0] == '%' && q[1] == ':')) {
      q = skip_blank(q + (*q == '#' ? 1 : 2));
      static const char *const kw[] = {"include_next", "include", "import",
                                       "embed"};
      for (size_t i = 0; i < sizeof kw / sizeof kw[0]; i++) {
        size_t l = strlen(kw[i]);
        if (strncmp(q, kw[i], l) != 0) continue;
        const char *op = skip_blank(q + l);
        if (*op != '"' && *op != '<') {
          snprintf(why, whylen, "%s:%d: computed #%s (a macro "
                   "operand) is not allowed: name the header", file, line,
                   kw[i]);
          oc = KF_OUTCOME_COMPILE_ERROR;
        } else {
          const char *end = strchr(op + 1, *op == '"' ? '"' : '>');
          size_t len = end ? (size_t)(end - op - 1) : strlen(op + 1);
          if (op[1] == '/' || memmem(op + 1, len, "..", 2)) {
            snprintf(why, whylen, "%s:%d: #%s %.*s: only headers "
                     "by a relative name are allowed (no absolute path, no "
                     "'..'): a kernel may not read files at build time",
                     file, line, kw[i], (int)(len + 2 > 200 ? 200 : len + 2),
                     op);
            oc = KF_OUTCOME_COMPILE_ERROR;
          }
        }
        break;
      }
    }
    if (!eol) break;
    p = eol + 1;
  }
  free(t);
  return oc;
}

int kf_harness__compile(const char *dir, const char *base, const char *src,
                        const kf_harness_knob *knobs, int n_knobs,
                        int timeout_ms, char *why, size_t whylen) {
  char path[4096];
  if (n_knobs > MAX_KNOBS) {
    snprintf(why, whylen, "%d knobs; at most %d", n_knobs, MAX_KNOBS);
    return KF_OUTCOME_SPEC_ERROR;
  }
  for (int i = 0; i < n_knobs; i++) {
    int oc = kf_harness__check_knob(knobs[i].name, knobs[i].value, why, whylen);
    if (oc) return oc;
  }
  char cfile[80], sofile[80];
  snprintf(cfile, sizeof cfile, "%s.c", base);
  snprintf(sofile, sizeof sofile, "%s.so", base);
  int oc = kf_harness__check_source(src, cfile, why, whylen);
  if (oc) return oc;
  snprintf(path, sizeof path, "%s/kf_candidate.h", dir);
  oc = kf_harness__write_source(path, kf_harness__candidate_h, why, whylen);
  if (oc) return oc;
  snprintf(path, sizeof path, "%s/%s.c", dir, base);
  oc = kf_harness__write_source(path, src, why, whylen);
  if (oc) return oc;

  char defs[MAX_KNOBS][140];
  char *argv[16 + MAX_KNOBS];
  int a = 0;
  argv[a++] = "cc";
  argv[a++] = "-O3";
  argv[a++] = "-march=native";
  argv[a++] = "-std=c11";
  argv[a++] = "-shared";
  argv[a++] = "-fPIC";
  argv[a++] = "-I.";
  for (int i = 0; i < n_knobs; i++) {
    snprintf(defs[i], sizeof defs[i], "-D%s=%s", knobs[i].name,
             knobs[i].value);
    argv[a++] = defs[i];
  }
  argv[a++] = "-o";
  argv[a++] = sofile;
  argv[a++] = cfile;
  argv[a++] = "-lm";
  argv[a] = NULL;

  /* TMPDIR relative (the compiler runs in dir): the assembler's messages
   * name ./ccXXXX.s, not a host path, and the path holds in the jail even
   * where dir was reached through a symlink (the jail has the real one) */
  char *envp[] = {"PATH=/usr/local/bin:/usr/bin:/bin", "LC_ALL=C", "LANG=C",
                  "TMPDIR=.", NULL};
  const char *ccpath = NULL;
  static const char *const cands[] = {"/usr/local/bin/cc", "/usr/bin/cc",
                                      "/bin/cc"};
  for (size_t i = 0; i < sizeof cands / sizeof cands[0]; i++)
    if (access(cands[i], X_OK) == 0) {
      ccpath = cands[i];
      break;
    }
  if (!ccpath) {
    snprintf(why, whylen, "no C compiler (cc) in /usr/local/bin, /usr/bin, /bin");
    return KF_OUTCOME_INFRA_ERROR;
  }
  kf_harness_jail jail;
  kf_harness__jail_init(&jail);
  oc = kf_harness__jail_add_tool(&jail, ccpath, why, whylen);
  if (oc) return oc;
  kf_harness_spawn_opts so = {
      .path = ccpath,
      .argv = argv,
      .envp = envp,
      .fd = {-1, -1, -1, -1},
      .cwd = dir,
      .new_pgrp = true,
      .nobody = true,
      .isolate = true,
      .limits = {{RLIMIT_CPU, 60},
                 {RLIMIT_AS, 2ull << 30},
                 {RLIMIT_FSIZE, 64ull << 20},
                 {RLIMIT_CORE, 0}},
      .n_limits = 4,
      .jail = &jail,
  };
  if (geteuid() == 0) so.limits[so.n_limits++] = (kf_harness_limit){RLIMIT_NPROC, 64};
  static char out[16384];
  int status = 0;
  bool timed_out = false;
  char err[512];
  int rc = kf_harness__run(&so, timeout_ms, out, sizeof out, &status,
                           &timed_out, err, sizeof err);
  if (rc) {
    snprintf(why, whylen, "cannot run the compiler: %s", err);
    return KF_OUTCOME_INFRA_ERROR;
  }
  char defs_text[512];
  kf_harness__jail_defenses(&jail, defs_text, sizeof defs_text);
  static bool warned; /* once per evaluation: it is the machine's state */
  if (jail.state != KF_HARNESS_JAIL_ON && !warned) {
    warned = true;
    kf_log(KF_LOG_WARN, "compile %s: %s", cfile, defs_text);
  }
  if (timed_out) {
    snprintf(why, whylen, "%s: compiler still running after %d ms; killed",
             cfile, timeout_ms);
    return KF_OUTCOME_COMPILE_TIMEOUT;
  }
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    char prefix[128];
    snprintf(prefix, sizeof prefix, "compiler killed by %s%s\n",
             kf_harness__signame(sig),
             sig == SIGXCPU || sig == SIGKILL ? " (60 s CPU limit)" : "");
    kf_harness__tail_reason(out, why, whylen, prefix);
    return sig == SIGXCPU ? KF_OUTCOME_COMPILE_TIMEOUT
                          : KF_OUTCOME_COMPILE_ERROR;
  }
  if (WEXITSTATUS(status) != 0) {
    kf_harness__tail_reason(out, why, whylen, "");
    if (!*why) snprintf(why, whylen, "compiler exited with status %d",
                        WEXITSTATUS(status));
    return KF_OUTCOME_COMPILE_ERROR;
  }
  snprintf(path, sizeof path, "%s/%s", dir, sofile);
  struct stat st;
  if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
    snprintf(why, whylen, "compiler succeeded but wrote no %s", sofile);
    return KF_OUTCOME_COMPILE_ERROR;
  }
  kf_strlcpy(why, defs_text, whylen);
  return 0;
}
