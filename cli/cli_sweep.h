/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cli/cli_sweep.h -- what `kf sweep` (cli_sweep.c) and its report
 * (cli_sweep_report.c) share.
 */
#ifndef KF_CLI_SWEEP_H
#define KF_CLI_SWEEP_H

/* `kf sweep report ...` with argv after "report".  An exit code. */
int kf_cli__sweep_report(int argc, char **argv);

#endif
