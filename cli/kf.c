/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cli/kf.c -- the `kf` command: dispatch to subcommands.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "log.h"

static void usage(FILE *f) {
  fprintf(f,
"usage: kf COMMAND [ARGS]\n"
"\n"
"Commands:\n"
"  run PROBLEM_DIR       optimize a kernel: a local campaign (PostgreSQL,\n"
"                        coordinator, workers) from one command\n"
"  campaign ACTION ...   submit, status, watch, best, export, stop\n"
"                        campaigns on a running coordinator\n"
"  cluster [--tasks N]   run a local cluster (private PostgreSQL, coordinator,\n"
"                        two workers) over N checksum tasks and report\n"
"  db start|stop|url DIR the private PostgreSQL server in DIR\n"
"  submit --kind K ...   submit tasks to a running coordinator\n"
"  status [--json]       task counts and workers of a running coordinator\n"
"  token create|list|revoke  credentials (roles worker, submitter, admin)\n"
"  mcp                   an MCP server on stdio: AI agents propose kernels\n"
"                        to a running coordinator (docs/mcp.md)\n"
"  propose llm|usage     proposers: an LLM writes candidates for a campaign;\n"
"                        tokens and cost it spent\n"
"  dashboard [--listen H:P]  read-only web dashboard of a running coordinator\n"
"  import kernelbench FILE.py | gpumode DIR   a torch problem directory\n"
"  sweep PROBLEM_DIR... | report SWEEP   the same campaigns on every device\n"
"                        class, and a report of them (docs/sweep.md)\n"
"  wrap --problem DIR KERNEL   a CUDA or C kernel file as a GPU MODE /\n"
"                        KernelBench submission (load_inline at import)\n"
"\n"
"Exit codes: 0 ok, 1 the work failed, 2 usage or input error,\n"
"            3 coordinator or database unreachable, 4 interrupted.\n"
"Run `kf COMMAND --help` for a command's options.\n");
}

int main(int argc, char **argv) {
  kf_log_init('u', KF_LOG_WARN);
  if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
      !strcmp(argv[1], "help")) {
    usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? KF_EXIT_USAGE : KF_EXIT_OK;
  }
  if (!strcmp(argv[1], "run")) return kf_cli_run(argc - 2, argv + 2);
  if (!strcmp(argv[1], "campaign")) return kf_cli_campaign(argc - 2, argv + 2);
  if (!strcmp(argv[1], "db")) return kf_cli_db(argc - 2, argv + 2);
  if (!strcmp(argv[1], "cluster")) return kf_cli_cluster(argc - 2, argv + 2);
  if (!strcmp(argv[1], "submit")) return kf_cli_submit(argc - 2, argv + 2);
  if (!strcmp(argv[1], "status")) return kf_cli_status(argc - 2, argv + 2);
  if (!strcmp(argv[1], "token")) return kf_cli_token(argc - 2, argv + 2);
  if (!strcmp(argv[1], "mcp")) return kf_cli_mcp(argc - 2, argv + 2);
  if (!strcmp(argv[1], "propose")) return kf_cli_propose(argc - 2, argv + 2);
  if (!strcmp(argv[1], "dashboard"))
    return kf_cli_dashboard(argc - 2, argv + 2);
  if (!strcmp(argv[1], "import")) return kf_cli_import(argc - 2, argv + 2);
  if (!strcmp(argv[1], "sweep")) return kf_cli_sweep(argc - 2, argv + 2);
  if (!strcmp(argv[1], "wrap")) return kf_cli_wrap(argc - 2, argv + 2);
  fprintf(stderr, "kf: unknown command '%s'\n", argv[1]);
  usage(stderr);
  return KF_EXIT_USAGE;
}
