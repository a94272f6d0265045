/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cli/cli_dashboard.c -- `kf dashboard`: option parsing and signals around
 * kf_dash_run (dashboard/dash.h), which serves the read-only web view of a
 * running coordinator.  The dashboard holds no credential of its own:
 * each user logs in with theirs (docs/dashboard.md).
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_internal.h"
#include "dash.h"
#include "err.h"
#include "log.h"
#include "util.h"

static volatile sig_atomic_t stop_flag;
static void on_signal(int sig) { (void)sig; stop_flag = 1; }

static void usage(FILE *f) {
  fprintf(f,
"usage: kf dashboard [--listen HOST:PORT] [--coordinator HOST:PORT]\n"
"                    [--tls-ca PATH [--tls-cert PATH --tls-key PATH]]\n"
"                    [--https-cert PATH --https-key PATH] [--port-file PATH]\n"
"\n"
"Serves a read-only web dashboard of a running coordinator: campaigns and\n"
"their progress per device class, best-so-far over time, a roofline plot,\n"
"evaluations with their outcomes and reasons, the best source beside the\n"
"reference.  Users log in with their own coordinator credential (a\n"
"submitter or admin token); every request reads the coordinator with it,\n"
"so the coordinator's roles decide.  The dashboard holds no token itself.\n"
"\n"
"  --listen HOST:PORT   where to serve HTTP            [127.0.0.1:8080]\n"
"                       (PORT 0: any free port; [::1]:PORT for IPv6)\n"
"  --coordinator H:P    coordinator [$KF_COORDINATOR, else 127.0.0.1:7070]\n"
"  --tls-ca PATH        PEM CA: reach the coordinator over TLS and verify\n"
"                       it [$KF_TLS_CA]\n"
"  --tls-cert PATH      client certificate and key toward the coordinator\n"
"  --tls-key PATH       (PEM) [$KF_TLS_CERT, $KF_TLS_KEY]\n"
"  --https-cert PATH    serve HTTPS with this certificate and key (PEM);\n"
"  --https-key PATH     the session cookie is then Secure.  Off loopback,\n"
"                       use them (or a TLS proxy in front)\n"
"  --port-file PATH     write the bound port there once serving\n"
"  --log-level LEVEL    debug, info, warn, error             [warn]\n"
"\n"
"Stops on SIGINT or SIGTERM.  Exit codes: 0 stopped, 2 usage error,\n"
"3 cannot serve (address in use, unreadable PEM files).\n");
}

int kf_cli_dashboard(int argc, char **argv) {
  kf_cli__remote r;
  kf_cli__remote_init(&r);
  kf_dash_opts o = {.listen = "127.0.0.1:8080", .stop = &stop_flag};
  static const struct option opts[] = {
      {"listen", required_argument, 0, 'l'},
      {"coordinator", required_argument, 0, 'c'},
      KF_CLI__REMOTE_OPTIONS,
      {"https-cert", required_argument, 0, 'C'},
      {"https-key", required_argument, 0, 'K'},
      {"port-file", required_argument, 0, 'p'},
      {"log-level", required_argument, 0, 'L'},
      {"help", no_argument, 0, 'h'},
      {0, 0, 0, 0},
  };
  char **av = kf_cli__shift_argv(argc, argv, "kf dashboard");
  if (!av) return KF_EXIT_FAIL;
  optind = 0;
  int c, bad = 0;
  while (!bad && (c = getopt_long(argc + 1, av, "h", opts, NULL)) != -1) {
    switch (c) {
    case 'l': o.listen = optarg; break;
    case 'c': r.target = optarg; break;
    case 'C': o.https_cert = optarg; break;
    case 'K': o.https_key = optarg; break;
    case 'p': o.port_file = optarg; break;
    case 'L': {
      int lv = kf_log_parse_level(optarg);
      if (lv < 0) {
        fprintf(stderr, "kf dashboard: --log-level '%s': expected debug, "
                        "info, warn or error\n", optarg);
        bad = 1;
      } else {
        kf_log_init('u', (kf_log_level)lv);
      }
      break;
    }
    case 'h':
      usage(stdout);
      free(av);
      return KF_EXIT_OK;
    case 0x200:
      fprintf(stderr, "kf dashboard: --token-file: the dashboard holds no "
                      "credential; each user logs in with their own\n");
      bad = 1;
      break;
    default:
      if (!kf_cli__remote_opt(&r, c, optarg)) {
        fprintf(stderr, "Run `kf dashboard --help` for the options.\n");
        bad = 1;
      }
    }
  }
  if (!bad && optind < argc + 1) {
    fprintf(stderr, "kf dashboard: unexpected argument '%s'\n", av[optind]);
    bad = 1;
  }
  free(av);
  if (bad) return KF_EXIT_USAGE;
  if ((r.tls_cert != NULL) != (r.tls_key != NULL)) {
    fprintf(stderr, "kf dashboard: --tls-cert and --tls-key go together\n");
    return KF_EXIT_USAGE;
  }
  o.coordinator = r.target;
  o.tls = (kf_rpc_tls){r.tls_ca, r.tls_cert, r.tls_key};
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  if (sigaction(SIGINT, &sa, NULL) || sigaction(SIGTERM, &sa, NULL)) {
    perror("kf dashboard: sigaction");
    return KF_EXIT_FAIL;
  }
  signal(SIGPIPE, SIG_IGN);
  char err[512] = "";
  int rc = kf_dash_run(&o, err, sizeof err);
  if (rc) {
    fprintf(stderr, "kf dashboard: %s\n", err);
    return rc == KF_EINVAL ? KF_EXIT_USAGE : KF_EXIT_UNAVAIL;
  }
  return KF_EXIT_OK;
}
