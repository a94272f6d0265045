/* SPDX-License-Identifier: Apache-2.0 */
/*
 * worker/torch_caps.c -- the torch probe behind worker/torch_caps.h.  The
 * version comes from torch/version.py as read by the Python itself
 * (importlib finds the package; nothing of torch is imported, which
 * would take seconds and, on a GPU, a CUDA context).
 */
#include "torch_caps.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "torch.h"
#include "util.h"

#define PROBE_MS 20000

static const char PROBE[] =
    "import importlib.util, os, re, sys\n"
    "s = importlib.util.find_spec('torch')\n"
    "if s is None or not s.origin:\n"
    "    sys.exit(3)\n"
    "t = open(os.path.join(os.path.dirname(s.origin), 'version.py')).read()\n"
    "v = re.search(r\"^__version__\\s*=\\s*'([^']+)'\", t, re.M)\n"
    "c = re.search(r\"^cuda\\s*(?::[^=]*)?=\\s*'([^']+)'\", t, re.M)\n"
    "print(v.group(1) if v else '?', c.group(1) if c else 'none')\n";

/* Runs the probe; 0 with its first line in out, else -1 with why. */
static int run_probe(char *out, size_t outlen, char *why, size_t whylen) {
  char py[512];
  kf_harness__torch_python(py, sizeof py);
  if (access(py, X_OK) != 0) {
    snprintf(why, whylen, "%s: %s", py, strerror(errno));
    return -1;
  }
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) {
    snprintf(why, whylen, "pipe: %s", strerror(errno));
    return -1;
  }
  posix_spawn_file_actions_t fa;
  if (posix_spawn_file_actions_init(&fa) != 0) {
    close(p[0]);
    close(p[1]);
    snprintf(why, whylen, "posix_spawn_file_actions_init failed");
    return -1;
  }
  posix_spawn_file_actions_adddup2(&fa, p[1], 1);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  char *argv[] = {py, "-I", "-c", (char *)PROBE, NULL};
  char *envp[] = {"PATH=/usr/bin:/bin", "LC_ALL=C.UTF-8", NULL};
  pid_t pid;
  int rc = posix_spawn(&pid, py, &fa, NULL, argv, envp);
  posix_spawn_file_actions_destroy(&fa);
  close(p[1]);
  if (rc != 0) {
    close(p[0]);
    snprintf(why, whylen, "%s: %s", py, strerror(rc));
    return -1;
  }
  size_t n = 0;
  uint64_t deadline = kf_now_ms() + PROBE_MS;
  for (;;) {
    uint64_t now = kf_now_ms();
    if (now >= deadline) break;
    struct pollfd pf = {.fd = p[0], .events = POLLIN};
    int pr = poll(&pf, 1, (int)(deadline - now));
    if (pr < 0 && errno == EINTR) continue;
    if (pr <= 0) break;
    ssize_t k = read(p[0], out + n, outlen - 1 - n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) break;
    n += (size_t)k;
    if (n == outlen - 1) break;
  }
  out[n] = '\0';
  close(p[0]);
  kill(pid, SIGKILL); /* exited by now, unless it hung */
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  out[strcspn(out, "\n")] = '\0';
  if (!out[0]) {
    snprintf(why, whylen, "%s has no torch%s", py,
             WIFEXITED(st) && WEXITSTATUS(st) == 3 ? "" : " (probe failed)");
    return -1;
  }
  return 0;
}

int kf_torch_caps_probe(int gpu, char kinds[][KF_TORCH_CAP_LEN], char *why,
                        size_t whylen) {
  char line[256];
  if (run_probe(line, sizeof line, why, whylen)) return 0;
  char ver[KF_TORCH_CAP_LEN - 8] = "", cuda[32] = "";
  if (sscanf(line, "%55s %31s", ver, cuda) != 2) {
    snprintf(why, whylen, "torch probe said '%.100s'", line);
    return 0;
  }
  /* the kinds' alphabet: letters, digits and _.:- ("2.11.0+cu130") */
  for (char *c = ver; *c; c++)
    if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
          (*c >= '0' && *c <= '9') || *c == '_' || *c == '.' || *c == '-'))
      *c = '-';
  int n = 0;
  kf_strlcpy(kinds[n++], "torch", KF_TORCH_CAP_LEN);
  /* the coordinator takes kinds of up to 31 bytes */
  snprintf(kinds[n++], KF_TORCH_CAP_LEN, "torch:%.24s", ver);
  if (gpu && strcmp(cuda, "none"))
    kf_strlcpy(kinds[n++], "torch.cuda", KF_TORCH_CAP_LEN);
  return n;
}
