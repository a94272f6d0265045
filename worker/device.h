/* SPDX-License-Identifier: Apache-2.0 */
/*
 * worker/device.h -- what device this worker measures on.  The device
 * class (model, ISA, compute capability) keys every result; the rest is
 * recorded beside it.
 */
#ifndef KF_DEVICE_H
#define KF_DEVICE_H

#include "kernelfleet.pb-c.h"

/* Strings filled in here live in the struct below. */
typedef struct {
  Kernelfleet__DeviceClass dc;
  Kernelfleet__DeviceInfo info;
  char model[128];
  char isa[32];
  char driver[64];
  char runtime[64];
  char compiler[256];   /* the toolchain's version line */
  char harness_build[65]; /* `kf-harness identity`; "" unknown */
  char pci[32];      /* CUDA: PCI bus id (names the GPU lock); "" for CPU */
  int cuda_index;    /* CUDA device index as this process sees it; -1 CPU */
} kf_device;

/* Describes this machine's CPU: model from /proc/cpuinfo, ISA level from
 * its flags (x86-64, -v2, -v3, -v4), cores, L2/L3 size, memory, compiler.
 * Never fails: unknown fields stay empty. */
void kf_device_cpu_detect(kf_device *d);

/* worker/device_cuda.c.  Describes CUDA device `index` by running
 * `kf-harness cuda-info` (no CUDA in this process), ceilings included.
 * 0, or -1 with the reason in why. */
int kf_device_cuda_detect(kf_device *d, int index, char *why, size_t whylen);

/* The nvcc target of compute capability major.minor: "sm_90a", "sm_100a",
 * "sm_120", "sm_89". */
void kf_device_cuda_isa(int major, int minor, char *out, size_t len);

/* Sets up the worker's device from --device: "cpu", "cuda:N" or "auto"
 * (cuda:0 when /dev/nvidia0 exists and works, else the CPU); measures the
 * ceilings and hands them, the eval arguments and the device description
 * to the eval task kind; reads the harness identity (DeviceInfo
 * harness_build, and compiler: the cc line on a CPU, the nvcc line on a
 * GPU), which keys every measurement, and whether the harness runs
 * showdowns.  Blocks for seconds.  0, or -1 with why. */
int kf_device_setup(kf_device *d, const char *which, char *why,
                    size_t whylen);

#endif
