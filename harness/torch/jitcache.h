/* SPDX-License-Identifier: Apache-2.0 */
/*
 * harness/torch/jitcache.h -- the JIT sandbox's compile cache: what a
 * side's process wrote into its private cache directory (/tmp/kf-jit:
 * load_inline's builds, Triton's and Inductor's caches) by the end of its
 * load, kept on this worker and given to every later process of the same
 * side -- the determinism check's fresh process, and later evaluations of
 * the same source -- so that they do not compile it all again.
 *
 * The property it keeps: nothing a side's process does once it could see
 * an input reaches another process.  A snapshot is taken only right
 * after READY, with the process stopped, before its first call and
 * before any input is drawn into its image; the harness copies it (the
 * side cannot write the copy), into a directory of this uid's alone, and
 * only a side with the same source, configuration and Python gets it.
 * The reference, trusted, is also kept after its torch.compile builds
 * (harness/torch/backend.c p_prep), under a key of its own.
 */
#ifndef KF_HARNESS_JITCACHE_H
#define KF_HARNESS_JITCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The key of a side: sha256 (hex) over the harness build, the source,
 * its torch.json (without the seed) and the Python.  0 or -1. */
int kf_harness__jit_key(const char *source, const char *config,
                        const char *python, char *out, size_t outlen);

/* The snapshot directory of key when one is stored (its mtime refreshed:
 * the most recently used are kept), else -1. */
int kf_harness__jit_lookup(const char *key, char *path, size_t pathlen);

/* Snapshots /tmp/kf-jit of process pid (stopped, in its own mount
 * namespace) under key, with the side's torch version beside it, then
 * drops the least recently used snapshots past the cache's limits.
 * 0: stored; 1: not stored, for a reason in why that is the side's doing
 * (no directory there, a symlink, too large); -1: the harness's failure
 * (why says it).  Never fails the evaluation. */
int kf_harness__jit_store(const char *key, pid_t pid, const char *torch_ver,
                          char *why, size_t whylen);

#endif
