/* SPDX-License-Identifier: Apache-2.0 */
/*
 * worker/watchdog.h -- the worker's work directory and the process that
 * cleans up after the worker however it dies.
 *
 * Every harness a worker starts works in a directory under the worker's
 * own work directory ($TMPDIR/kf-worker-XXXXXX), and runs in its own
 * process group.  A kill -9 of the worker used to leave both behind: the
 * harness was re-parented to init and ran on, and its directory stayed.
 * Now three things make sure neither survives:
 *  - each harness gets PR_SET_PDEATHSIG (SIGKILL) when it is spawned
 *    (task_eval.c), so it dies with the worker's thread that started it;
 *  - a watchdog process, started by the worker before anything else,
 *    holds the read end of a pipe whose only write end the worker holds.
 *    The worker tells it each harness group it starts and reaps; when the
 *    pipe reaches end of file -- the worker exited, normally or killed --
 *    it SIGKILLs every group still listed and removes the whole work
 *    directory, then exits;
 *  - a worker starting up removes the work directories of workers that
 *    are gone (no process holds their lock file), in case a watchdog was
 *    killed too.
 *
 * The watchdog is kf-worker itself, exec'd with a hidden first argument
 * (kf_watchdog_main), in its own process group so a terminal's ^C reaches
 * the worker, which then stops in order, and not the cleanup.
 */
#ifndef KF_WATCHDOG_H
#define KF_WATCHDOG_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* argv[1] of the watchdog mode of kf-worker. */
#define KF_WATCHDOG_ARG "--internal-watchdog"

/* Removes stale work directories under $TMPDIR (or /tmp), makes this
 * worker's ($TMPDIR/kf-worker-XXXXXX, with a lock file held for the
 * process's life) and starts the watchdog on it.  dir receives its path.
 * 0, or -1 with why (the worker cannot run evaluations safely then).
 * Call once, before any thread or child is started. */
int kf_watchdog_start(char *dir, size_t dirlen, char *why, size_t whylen);

/* Starts argv[0] (a path) with argv in a new process group: fd0 as its
 * stdin (-1: /dev/null), fd12 as its stdout and stderr (-1: ours), fd3
 * as its fd 3 (-1: none), signal dispositions and mask reset; every other
 * descriptor of ours that is close-on-exec stays ours.  harness: it also
 * gets PR_SET_PDEATHSIG(SIGKILL) and is tracked (kf_watchdog_track).
 * Exec failure is reported here.  0 with *pid, or -1 with why.  Any
 * thread. */
int kf_watchdog_spawn(char *const argv[], int fd0, int fd12, int fd3,
                      bool harness, pid_t *pid, char *why, size_t whylen);

/* Tells the watchdog that process group pgid exists (a harness just
 * spawned) / is gone (reaped).  Any thread; a no-op before start. */
void kf_watchdog_track(pid_t pgid);
void kf_watchdog_untrack(pid_t pgid);

/* The watchdog process: argv[2] is the work directory.  Reads "+PGID" and
 * "-PGID" lines from stdin until end of file, then kills the groups still
 * listed and removes the directory.  Returns the exit code. */
int kf_watchdog_main(int argc, char **argv);

#endif
