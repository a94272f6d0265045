# SPDX-License-Identifier: Apache-2.0
"""tests/e2e/test_infra_docker.py -- infra/docker/Dockerfile lints clean,
broken copies do not, and its stages are what infra/README.md says.

Lint: dockerfile-utils 0.16.3 (the linter of the Dockerfile language
server; pinned by infra/docker/lint/package-lock.json), installed with
`npm ci` into the build tree.  It must report nothing on the Dockerfile
and must refuse each broken copy (an unknown instruction, a FROM without
its stage name, a COPY --from of a stage that does not exist, an
instruction with no arguments).  Structure, read from the file: stages
build and build-cuda on Debian 12, runtimes coordinator, worker-cpu and
worker-cuda on debian:12-slim that copy only from the build stages and
run as USER 10001 (non-root), the CUDA worker with nvcc, the CUDA runtime
and CUPTI from NVIDIA's Debian 12 repository.

When a Docker daemon answers (`docker info`), the coordinator image is
built too and `kf-coordinator --help` is run in it as its own user;
without one, the test says the build was not verified (this machine has
the docker client but no daemon).  Exit 77 (skip) without node/npm.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kfe2e import TestFailure, check  # noqa: E402

SRC = os.environ.get("KF_SOURCE_DIR") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))
DOCKERFILE = os.path.join(SRC, "infra", "docker", "Dockerfile")


def log(msg):
    print(msg, flush=True)


def install_linter():
    base = os.environ.get("KF_BIN_DIR") or tempfile.gettempdir()
    d = os.path.join(base, "dockerfile-lint")
    src = os.path.join(SRC, "infra", "docker", "lint")
    os.makedirs(d, exist_ok=True)
    fresh = False
    for f in ("package.json", "package-lock.json"):
        a, b = os.path.join(src, f), os.path.join(d, f)
        if not os.path.exists(b) or open(a, "rb").read() != open(b, "rb").read():
            shutil.copyfile(a, b)
            fresh = True
    if fresh or not os.path.isdir(os.path.join(d, "node_modules")):
        r = subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=d,
                           capture_output=True, timeout=600)
        check(r.returncode == 0, "npm ci in %s: %s" % (
            d, (r.stdout + r.stderr).decode(errors="replace")[-3000:]))
    return os.path.join(d, "node_modules", ".bin", "dockerfile-utils")


def lint(tool, path):
    r = subprocess.run([tool, "lint", path], capture_output=True, timeout=120)
    return r.returncode, (r.stdout + r.stderr).decode(errors="replace").strip()


BROKEN = [
    ("unknown instruction", "\nRUN cmake -S . -B /build ",
     "\nRUNN cmake -S . -B /build ", "Unknown instruction"),
    ("FROM without its stage name", "FROM runtime AS coordinator",
     "FROM runtime AS", "FROM requires"),
    ("COPY --from of no stage", "COPY --from=build /build/kf-coordinator",
     "COPY --from=biuld /build/kf-coordinator", ""),
    ("USER without a user", "USER 10001:10001\nEXPOSE 7070",
     "USER\nEXPOSE 7070", ""),
]


def stages(text):
    """[(name, base, [instructions])] of the Dockerfile, continuation
    lines joined."""
    out = []
    joined = re.sub(r"\\\n", " ", text)
    for line in joined.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        word, _, rest = line.partition(" ")
        if word.upper() == "FROM":
            m = re.match(r"(\S+)(?:\s+AS\s+(\S+))?$", rest.strip(), re.I)
            check(m, "bad FROM %r" % line)
            out.append((m.group(2), m.group(1), []))
        elif out:
            out[-1][2].append((word.upper(), rest.strip()))
    return out


def check_structure(text):
    st = {name: (base, ins) for name, base, ins in stages(text)}
    args = dict(re.findall(r"^ARG (\w+)=(\S+)", text, re.M))
    for s in ("build", "build-cuda", "runtime", "coordinator", "worker-cpu",
              "worker-cuda"):
        check(s in st, "no stage %s" % s)
    check(args.get("DEBIAN_IMAGE") == "debian:12" and
          args.get("DEBIAN_SLIM") == "debian:12-slim",
          "the images are not Debian 12: %r" % args)
    check(st["build"][0] == "${DEBIAN_IMAGE}" and
          st["runtime"][0] == "${DEBIAN_SLIM}", "stage bases: %r"
          % {k: v[0] for k, v in st.items()})
    for final in ("coordinator", "worker-cpu", "worker-cuda"):
        base, ins = st[final]
        check(base == "runtime", "%s is not built on the slim runtime" % final)
        users = [a for w, a in ins if w == "USER"]
        check(users and users[-1].split(":")[0] not in ("0", "root"),
              "%s does not run as a non-root user: %r" % (final, users))
        froms = re.findall(r"--from=(\S+)", " ".join(a for w, a in ins
                                                        if w == "COPY"))
        check(froms and set(froms) <= {"build", "build-cuda"},
              "%s copies from %r" % (final, froms))
        check(any(w == "ENTRYPOINT" for w, _ in ins), "%s: no ENTRYPOINT"
              % final)
    cuda = " ".join(a for w, a in st["worker-cuda"][1] if w == "RUN")
    for pkg in ("cuda-nvcc-", "cuda-cudart-dev-", "cuda-cupti-"):
        check(pkg in cuda, "worker-cuda does not install %s" % pkg)
    check("kf-harness-cuda" in " ".join(a for w, a in st["worker-cuda"][1]),
          "worker-cuda lacks kf-harness-cuda")
    check("useradd --uid 10001" in " ".join(a for w, a in st["runtime"][1]),
          "the runtime creates no user 10001")
    log("structure: %d stages; runtimes run as uid 10001" % len(st))


def docker_build():
    if not shutil.which("docker"):
        log("docker: no client here: the image build was NOT verified")
        return
    r = subprocess.run(["docker", "info"], capture_output=True, timeout=60)
    if r.returncode != 0:
        log("docker: no daemon answers (%s): the image build was NOT "
            "verified" % r.stderr.decode(errors="replace").strip()
            .splitlines()[-1][:120])
        return
    tag = "kernelfleet-test/coordinator:%d" % os.getpid()
    r = subprocess.run(["docker", "build", "-f", DOCKERFILE, "--target",
                        "coordinator", "-t", tag, SRC], capture_output=True,
                       timeout=3000)
    check(r.returncode == 0, "docker build: %s"
          % (r.stdout + r.stderr).decode(errors="replace")[-3000:])
    try:
        r = subprocess.run(["docker", "run", "--rm", tag, "--help"],
                           capture_output=True, timeout=120)
        check(r.returncode == 0 and b"kf-coordinator" in r.stdout,
              "kf-coordinator --help in the image: %r" % r.stdout[-500:])
        r = subprocess.run(["docker", "run", "--rm", "--entrypoint", "id",
                            tag, "-u"], capture_output=True, timeout=120)
        check(r.stdout.strip() == b"10001", "the image runs as %r"
              % r.stdout)
        log("docker: built the coordinator image; it runs as uid 10001")
    finally:
        subprocess.run(["docker", "rmi", "-f", tag], capture_output=True,
                       timeout=120)


def main():
    for tool in ("node", "npm"):
        if not shutil.which(tool):
            print("test_infra_docker: SKIPPED: no %s" % tool)
            return 77
    tool = install_linter()
    rc, out = lint(tool, DOCKERFILE)
    check(rc == 0 and not out, "dockerfile-utils lint: exit %d:\n%s"
          % (rc, out))
    log("dockerfile-utils lint: no problem")
    text = open(DOCKERFILE).read()
    tmp = tempfile.mkdtemp(prefix="kfdocker.")
    try:
        for what, old, new, expect in BROKEN:
            check(old in text, "%s: %r not in the Dockerfile (update the "
                  "test)" % (what, old))
            bad = os.path.join(tmp, "Dockerfile")
            with open(bad, "w") as f:
                f.write(text.replace(old, new, 1))
            rc, out = lint(tool, bad)
            refused = rc != 0 and out and expect in out
            if not refused and what == "COPY --from of no stage":
                # dockerfile-utils does not resolve stage names; ours does.
                try:
                    check_structure(open(bad).read())
                except TestFailure as e:
                    out, refused = str(e), True
            check(refused, "a Dockerfile with %s passed (exit %d): %s"
                  % (what, rc, out))
            log("refused (%s): %s" % (what, out.splitlines()[-1][:140]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    check_structure(text)
    docker_build()
    return 0


if __name__ == "__main__":
    try:
        rc = main()
    except TestFailure as e:
        print("infra_docker: FAIL: %s" % e)
        sys.exit(1)
    if rc == 0:
        print("infra_docker: PASS")
    sys.exit(rc)
