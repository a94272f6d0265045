/* SPDX-License-Identifier: Apache-2.0 */
/*
 * worker/torch_caps.h -- what the worker can say about PyTorch at
 * registration: whether the Python the harness runs torch problems with
 * (harness/torch/python.c: $KF_PYTHON, else /usr/bin/python3) has torch,
 * which version, and whether that torch was built with CUDA.  The
 * coordinator leases a torch campaign's tasks only to workers that
 * registered the "torch" kind (and "torch.cuda" for device cuda).
 */
#ifndef KF_WORKER_TORCH_CAPS_H
#define KF_WORKER_TORCH_CAPS_H

#include <stddef.h>

#define KF_TORCH_CAPS_MAX 3
#define KF_TORCH_CAP_LEN 64

/* Probes once (a Python run that finds torch without importing it, so it
 * takes well under a second; at most 20 s).  Fills up to
 * KF_TORCH_CAPS_MAX kinds: "torch", "torch:VERSION" (characters outside
 * the kinds' alphabet become '-'), and "torch.cuda" when torch was built
 * with CUDA and gpu is true.  Returns how many; 0 with the reason in why
 * when there is no torch. */
int kf_torch_caps_probe(int gpu, char kinds[][KF_TORCH_CAP_LEN], char *why,
                        size_t whylen);

#endif
