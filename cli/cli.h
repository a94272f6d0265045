/* SPDX-License-Identifier: Apache-2.0 */
/* cli/cli.h -- subcommands of `kf`.  Each takes argc/argv after its own
 * name and returns a process exit code (see kf --help for the table). */
#ifndef KF_CLI_H
#define KF_CLI_H

/* Exit codes, documented in `kf --help` and README.md. */
enum {
  KF_EXIT_OK = 0,        /* done; for `run`, a verified kernel was found */
  KF_EXIT_FAIL = 1,      /* ran, but the work failed (no verified kernel) */
  KF_EXIT_USAGE = 2,     /* bad command line or input files */
  KF_EXIT_UNAVAIL = 3,   /* coordinator or database unreachable */
  KF_EXIT_INTERRUPT = 4, /* stopped by SIGINT/SIGTERM; state is saved */
};

int kf_cli_db(int argc, char **argv);
int kf_cli_cluster(int argc, char **argv);
int kf_cli_submit(int argc, char **argv);
int kf_cli_status(int argc, char **argv);
int kf_cli_run(int argc, char **argv);
int kf_cli_campaign(int argc, char **argv);
int kf_cli_token(int argc, char **argv);
int kf_cli_mcp(int argc, char **argv);
int kf_cli_propose(int argc, char **argv);
int kf_cli_dashboard(int argc, char **argv);
int kf_cli_import(int argc, char **argv); /* cli_import.c */
int kf_cli_wrap(int argc, char **argv);   /* cli_export_ext.c */
int kf_cli_sweep(int argc, char **argv);  /* cli_sweep.c */

#endif
