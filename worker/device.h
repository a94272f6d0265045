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
  char compiler[64];
} kf_device;

/* Describes this machine's CPU: model from /proc/cpuinfo, ISA level from
 * its flags (x86-64, -v2, -v3, -v4), cores, L2/L3 size, memory, compiler.
 * Never fails: unknown fields stay empty. */
void kf_device_cpu_detect(kf_device *d);

#endif
