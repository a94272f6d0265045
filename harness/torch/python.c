/* SPDX-License-Identifier: Apache-2.0 */
/*
 * harness/torch/python.c -- which Python runs torch code.  Not a PATH
 * search: the harness runs with a scrubbed environment, and a pyenv or
 * venv shim first on PATH is rarely the interpreter Debian's python3-torch
 * was installed for.
 */
#include <stdlib.h>

#include "torch.h"
#include "util.h"

void kf_harness__torch_python(char *out, size_t outlen) {
  const char *p = getenv("KF_PYTHON");
  kf_strlcpy(out, p && p[0] == '/' ? p : "/usr/bin/python3", outlen);
}
