/* SPDX-License-Identifier: Apache-2.0 */
/*
 * harness/torch/torch.h -- what the torch backend's files and `kf import`
 * share: the embedded runner script and the Python that runs it.
 */
#ifndef KF_HARNESS_TORCH_H
#define KF_HARNESS_TORCH_H

#include <stddef.h>

/* harness/torch/runner.py, embedded at build time (cmake/embed_file.cmake)
 * so that no install path is needed at run time. */
extern const char kf_harness__torch_runner_py[];

/* The Python interpreter with torch: $KF_PYTHON when set (an absolute
 * path), else /usr/bin/python3 (Debian's, where python3-torch installs). */
void kf_harness__torch_python(char *out, size_t outlen);

#endif
