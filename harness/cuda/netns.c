/* SPDX-License-Identifier: Apache-2.0 */
/*
 * harness/cuda/netns.c -- `kf-harness-cuda netns-exec PROG ARGS...`: runs
 * PROG in a fresh network namespace whose only interface, loopback, is up.
 *
 * Why: the profiling pass runs a candidate's runner under Nsight Compute,
 * whose library injected into the runner talks to its front end (ncu)
 * over TCP on loopback.  A timed runner unshares its own network
 * namespace; the profiled runner cannot (it would lose ncu), so ncu and
 * the runner share this one instead, and the candidate still reaches no
 * network but its own profiler's.  Without root (no new namespaces)
 * PROG runs as it is, as an unprivileged runner would.
 */
#include <errno.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "proto.h"

/* Loopback up in the current (fresh) namespace.  0, or -1 with errno. */
static int loopback_up(void) {
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  struct ifreq ifr;
  memset(&ifr, 0, sizeof ifr);
  snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "lo");
  int rc = ioctl(fd, SIOCGIFFLAGS, &ifr);
  if (rc == 0) {
    ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
    rc = ioctl(fd, SIOCSIFFLAGS, &ifr);
  }
  int saved = errno;
  close(fd);
  errno = saved;
  return rc;
}

int kf_harness_cuda_netns_exec_main(int argc, char **argv) {
  if (argc < 1 || argv[0][0] != '/') {
    fprintf(stderr, "kf-harness-cuda netns-exec: usage: netns-exec /PATH/PROG [ARGS...]\n");
    return 2;
  }
  if (geteuid() == 0) {
    if (unshare(CLONE_NEWNET) != 0) {
      fprintf(stderr, "kf-harness-cuda netns-exec: unshare(CLONE_NEWNET): %s\n",
              strerror(errno));
      return 126;
    }
    if (loopback_up() != 0) {
      fprintf(stderr, "kf-harness-cuda netns-exec: loopback up: %s\n", strerror(errno));
      return 126;
    }
  }
  execv(argv[0], argv);
  fprintf(stderr, "kf-harness-cuda netns-exec: %s: %s\n", argv[0], strerror(errno));
  return 127;
}
