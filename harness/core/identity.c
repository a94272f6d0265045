/* SPDX-License-Identifier: Apache-2.0 */
/*
 * harness/core/identity.c -- `kf-harness identity`: what a measurement taken by
 * this harness depends on besides the problem, the candidate and the
 * device: the harness build itself and the compilers it drives.
 *
 * The build identity is a sha256 over the bytes of the programs that
 * judge and time a candidate (kf-harness, kf-harness-runner and, when
 * present, kf-harness-cuda), so any rebuild that changes one of them --
 * a fix to the timing protocol, a sanitizer build -- is a new identity,
 * and the coordinator never reuses a number measured by another build.
 * The toolchain identity is the first line each compiler prints for
 * --version, the compilers being the ones compile.c and cuda_compile.c
 * run.  Workers read this once at start and send it with their
 * registration; the harness also puts it into every EvalResult.
 */
#include <errno.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cuda_eval.h"
#include "internal.h"
#include "util.h"

/* Feeds one file into md: its name (so that moving bytes from one
 * program to another changes the hash) and its contents.  0, or -1 when
 * it cannot be read. */
static int hash_file(EVP_MD_CTX *md, const char *name, const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return -1;
  EVP_DigestUpdate(md, name, strlen(name) + 1);
  unsigned char buf[1 << 16];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) EVP_DigestUpdate(md, buf, n);
  int bad = ferror(f);
  fclose(f);
  return bad ? -1 : 0;
}

int kf_harness__build_id(char *out, size_t outlen) {
  static char cached[65];
  if (cached[0]) {
    kf_strlcpy(out, cached, outlen);
    return 0;
  }
  EVP_MD_CTX *md = EVP_MD_CTX_new();
  if (!md || EVP_DigestInit_ex(md, EVP_sha256(), NULL) != 1) {
    EVP_MD_CTX_free(md);
    return -1;
  }
  char self[4096], runner[4096], cuda[4096 + 32];
  int rc = 0;
  if (kf_self_exe(self, sizeof self) != 0 ||
      hash_file(md, "kf-harness", self) != 0)
    rc = -1;
  kf_harness__runner_exe(runner, sizeof runner);
  /* the runner mode of kf-harness itself, when no separate runner */
  if (!rc && strcmp(runner, self) != 0 &&
      hash_file(md, "kf-harness-runner", runner) != 0)
    rc = -1;
  if (!rc && kf_harness__cuda_exe(cuda, sizeof cuda) &&
      hash_file(md, "kf-harness-cuda", cuda) != 0)
    rc = -1;
  unsigned char d[32];
  unsigned int dl = 0;
  if (!rc && EVP_DigestFinal_ex(md, d, &dl) != 1) rc = -1;
  EVP_MD_CTX_free(md);
  if (rc) return -1;
  for (unsigned i = 0; i < dl && i < 32; i++)
    snprintf(cached + 2 * i, 3, "%02x", d[i]);
  kf_strlcpy(out, cached, outlen);
  return 0;
}

/* First line of `tool --version` (or of the line holding "release" for
 * nvcc, whose first line is a banner); "" when it does not run. */
static void tool_version(const char *tool, const char *pick, char *out,
                         size_t outlen) {
  out[0] = '\0';
  if (!tool || access(tool, X_OK) != 0) return;
  char *argv[] = {(char *)tool, "--version", NULL};
  char *envp[] = {"PATH=/usr/local/bin:/usr/bin:/bin", "LC_ALL=C", NULL};
  kf_harness_spawn_opts so = {.path = tool, .argv = argv, .envp = envp,
                              .fd = {-1, -1, -1, -1}, .new_pgrp = true};
  char buf[4096], err[256];
  int status = 0;
  bool timed_out = false;
  if (kf_harness__run(&so, 20000, buf, sizeof buf, &status, &timed_out, err,
                      sizeof err) != 0 ||
      timed_out || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return;
  const char *line = buf;
  if (pick) {
    const char *p = strstr(buf, pick);
    if (!p) return;
    while (p > buf && p[-1] != '\n') p--;
    line = p;
  }
  size_t n = strcspn(line, "\r\n");
  if (n >= outlen) n = outlen - 1;
  memcpy(out, line, n);
  out[n] = '\0';
}

void kf_harness__toolchain(bool cuda, char *out, size_t outlen) {
  if (cuda) {
    tool_version(kf_harness__nvcc_path(), "release", out, outlen);
    return;
  }
  static const char *const cands[] = {"/usr/local/bin/cc", "/usr/bin/cc",
                                      "/bin/cc"};
  for (size_t i = 0; i < sizeof cands / sizeof cands[0]; i++)
    if (access(cands[i], X_OK) == 0) {
      tool_version(cands[i], NULL, out, outlen);
      return;
    }
  out[0] = '\0';
}

/* JSON string body: the versions are plain ASCII, but a quote or a
 * control character must not break the document. */
static void put_json(const char *key, const char *v, bool last) {
  printf("  \"%s\": ", key);
  if (!*v) {
    printf("null%s\n", last ? "" : ",");
    return;
  }
  putchar('"');
  for (const unsigned char *p = (const unsigned char *)v; *p; p++) {
    if (*p == '"' || *p == '\\') printf("\\%c", *p);
    else if (*p < 0x20 || *p >= 0x7f) putchar('?');
    else putchar(*p);
  }
  printf("\"%s\n", last ? "" : ",");
}

int kf_harness__identity_cmd(int argc, char **argv) {
  if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
    printf("usage: kf-harness identity\n"
           "prints {\"harness_build\": SHA256, \"cc\": VERSION, \"nvcc\": "
           "VERSION|null}:\nthe hash of the harness programs and the "
           "compilers candidates are built with\n");
    return 0;
  }
  if (argc > 1) {
    fprintf(stderr, "kf-harness identity: unexpected argument '%s'\n",
            argv[1]);
    return 2;
  }
  char id[65], cc[256], nvcc[256];
  if (kf_harness__build_id(id, sizeof id) != 0) {
    fprintf(stderr, "kf-harness identity: cannot read the harness programs: "
            "%s\n", strerror(errno));
    return 1;
  }
  kf_harness__toolchain(false, cc, sizeof cc);
  kf_harness__toolchain(true, nvcc, sizeof nvcc);
  printf("{\n");
  put_json("harness_build", id, false);
  put_json("cc", cc, false);
  put_json("nvcc", nvcc, true);
  printf("}\n");
  return fflush(stdout) == 0 ? 0 : 1;
}
