/* SPDX-License-Identifier: Apache-2.0 */
/*
 * harness/cpu/runner_proto.h -- the wire between the eval process and a
 * CPU runner process (harness/cpu/runner.c).  Both ends are built from
 * this one header; the runner side links nothing else from KernelFleet but
 * harness/core/sandbox.c (it is built without sanitizers, see
 * CMakeLists.txt), so this header holds plain structs only.
 *
 * Processes: the runner is a "zygote" that sets up the sandbox and then,
 * for every call, forks a child that maps that call's buffers and nothing
 * else, loads the candidate, runs kf_launch once and is killed.  The
 * zygote never runs candidate code, so no call can leave anything (a
 * counter in .bss or in another buffer, heap or stack residue, a register,
 * a page mapped at a fixed address) for a later one; and what the zygote
 * learns of a child (its wait status, CPU time, pid) it forgets before
 * the next fork.  The sequence number of a RUN is random, so a child
 * cannot count calls with it.
 *
 * Channels (fds in the runner):
 *   0  command pipe, eval -> zygote (ARM, EXIT) while no child lives,
 *      then eval -> child (RUN)
 *   1  reply pipe, child -> eval:   kf_harness_reply, one write each
 *   2  status pipe, zygote -> eval: READY (setup), FORKED, EXITED; the
 *      child closes it before loading the candidate, so what arrives here
 *      is the zygote's word
 *   3  the shared memfd (inputs, outputs, workspace, guard bytes); the
 *      zygote keeps a read-write and a read-only descriptor of it, which a
 *      child uses to map its call's buffers and then closes
 * Both structs are smaller than PIPE_BUF, so each write is atomic.
 *
 * One call: ARM names the buffers of the next call (maps[]: offset,
 * length, writable); the zygote forks, says FORKED (pid); the child maps
 * each buffer at an address of the kernel's choosing between two
 * PROT_NONE guard pages (inputs read-only from the read-only descriptor,
 * so not even mprotect makes them writable), closes the descriptors,
 * loads the candidate and says READY (its defenses); the eval writes RUN
 * and times until DONE, reads the child's CPU clock and kills it; the
 * zygote says EXITED (status, CPU time).
 *
 * Nothing secret crosses: the seed and the expected outputs stay in the
 * eval process.  A command says where in the memfd each tensor lies; the
 * eval process lays the memfd out and draws the inputs.
 *
 * Trust: once kf_launch has run, everything in the runner (including the
 * code that writes replies) may be the candidate's.  The eval process
 * therefore treats replies as claims: it checks sequence numbers, guards,
 * poison and the runner's CPU time while it claims to be idle.
 */
#ifndef KF_HARNESS_RUNNER_PROTO_H
#define KF_HARNESS_RUNNER_PROTO_H

#include <stdint.h>

#include "sandbox.h" /* KF_HARNESS_DEF_* */

#define KF_HARNESS_MAGIC 0x4b465231u /* "KFR1" */
#ifndef KF_HARNESS_MAX_T
#define KF_HARNESS_MAX_T 8           /* tensors per side (KF_SPEC_MAX_TENSORS) */
#define KF_HARNESS_MAX_P 8           /* size params (KF_SPEC_MAX_PARAMS) */
#endif

enum {
  KF_HARNESS_OP_RUN = 1,  /* child: call kf_launch once */
  KF_HARNESS_OP_EXIT = 2, /* zygote: _exit(0) */
  KF_HARNESS_OP_ARM = 3,  /* zygote: fork a child for the buffers in maps[] */
};

/* Reply kinds. */
enum {
  KF_HARNESS_R_READY = 1,     /* setup done; defenses in .defenses */
  KF_HARNESS_R_DONE = 2,      /* kf_launch returned .rc */
  KF_HARNESS_R_SETUP = 3,     /* setup failed: .msg, .err (errno) */
  KF_HARNESS_R_VIOLATION = 4, /* seccomp trapped syscall .sysno */
  KF_HARNESS_R_LOADFAIL = 5,  /* dlopen/dlsym failed: .msg, .err */
  KF_HARNESS_R_FORKED = 6,    /* zygote: child .pid started */
  KF_HARNESS_R_EXITED = 7,    /* zygote: child .pid ended with wait status
                                 .status after .cpu_ns of CPU */
  KF_HARNESS_R_FAULT = 8,     /* child: SIGSEGV/SIGBUS at .arg1 (byte offset
                                 in map .pid's buffer, negative before it),
                                 .sysno: KF_HARNESS_FAULT_*, .rc: 1 write */
  KF_HARNESS_R_LOADING = 9,   /* child (and the CUDA runner): about to load
                                 the side's code; every reply after it may
                                 be that code's own, a "setup failed" too */
};

/* Where a fault hit (R_FAULT .sysno). */
enum {
  KF_HARNESS_FAULT_ELSEWHERE = 0, /* outside every buffer and guard */
  KF_HARNESS_FAULT_BEFORE = 1,    /* the guard page before map .pid */
  KF_HARNESS_FAULT_AFTER = 2,     /* the guard page after map .pid */
  KF_HARNESS_FAULT_READONLY = 3,  /* a write to input map .pid */
};

typedef struct {
  uint64_t off;        /* byte offset of the data in the memfd */
  int32_t dtype;       /* kf_dtype */
  int32_t ndim;
  int64_t dims[4];
  int64_t numel;
} kf_harness_tdesc;

#define KF_HARNESS_MAX_MAPS (2 * KF_HARNESS_MAX_T + 1)

/* One buffer a call's child maps (ARM). */
typedef struct {
  uint64_t off;        /* page-aligned byte offset in the memfd */
  uint64_t len;        /* bytes (rounded up to pages when mapped) */
  uint32_t writable;   /* 0: inputs, mapped read-only */
  uint32_t pad;
} kf_harness_map;

typedef struct {
  uint32_t magic;      /* KF_HARNESS_MAGIC */
  uint32_t seq;        /* echoed in the reply */
  uint32_t op;         /* KF_HARNESS_OP_* */
  int32_t n_inputs, n_outputs, n_params;
  kf_harness_tdesc in[KF_HARNESS_MAX_T];
  kf_harness_tdesc out[KF_HARNESS_MAX_T];
  int64_t params[KF_HARNESS_MAX_P];
  uint64_t ws_off;     /* workspace offset in the memfd */
  uint64_t ws_bytes;
  int32_t n_maps;      /* ARM */
  int32_t pad2;
  kf_harness_map maps[KF_HARNESS_MAX_MAPS];
} kf_harness_cmd;

typedef struct {
  uint32_t magic;      /* KF_HARNESS_MAGIC */
  uint32_t seq;        /* the command's; 0 for READY/SETUP/VIOLATION */
  int32_t kind;        /* KF_HARNESS_R_* */
  int32_t rc;          /* kf_launch's return value (DONE) */
  uint32_t defenses;   /* KF_HARNESS_DEF_* bits (READY) */
  int32_t sysno;       /* VIOLATION: the syscall number */
  int32_t err;         /* SETUP/LOADFAIL: errno, 0 when none */
  char msg[220];       /* NUL-terminated detail */
  int32_t pid;         /* FORKED/EXITED: the child */
  int32_t status;      /* EXITED: wait status */
  uint64_t cpu_ns;     /* EXITED: the child's user+system CPU time, ns */
  uint64_t arg1;       /* VIOLATION: the call's second argument (mmap:
                          the length asked for) */
} kf_harness_reply;

_Static_assert(sizeof(kf_harness_cmd) <= 4096, "cmd fits PIPE_BUF");
_Static_assert(sizeof(kf_harness_reply) <= 512, "reply is small");

/* Runner exit codes (besides signals). */
#define KF_HARNESS_RUNNER_EXIT_OK 0
#define KF_HARNESS_RUNNER_EXIT_PROTO 70   /* bad command or lost pipe */
#define KF_HARNESS_RUNNER_EXIT_SETUP 71   /* setup failed (reply sent) */
#define KF_HARNESS_RUNNER_EXIT_SYS 72     /* seccomp violation (reply sent) */
#define KF_HARNESS_RUNNER_EXIT_CALLED 73  /* child: one call done, DONE sent */
#define KF_HARNESS_RUNNER_EXIT_MAP 74     /* child: a buffer could not be
                                             mapped (reply sent) */

/* The most a candidate may map in one mmap (its allocation budget); more
 * traps as a RESOURCE_LIMIT with the length asked for. */
#define KF_HARNESS_MMAP_MAX (1ull << 30)

/* Entry of the runner mode: argv after "runner".  Never returns. */
int kf_harness_runner_main(int argc, char **argv);

#endif
