# SPDX-License-Identifier: Apache-2.0
"""tests/e2e/test_infra_k8s.py -- the Kubernetes manifests of infra/k8s
validate, and broken copies of them do not.

Schema validation: infra/k8s/validate (node; kubernetes-models 4.5.1,
ajv validators generated from the Kubernetes 1.27 OpenAPI, and yaml,
both pinned by package-lock.json) is installed with `npm ci` into the
build tree and run over every manifest: each document must be found by
apiVersion/kind and valid.  Then each of several deliberately broken
copies (a string where an integer goes, a required field removed, a
misspelt kind, an unknown apiVersion, bad YAML) must be refused, naming
the document.  Finally what the schema cannot say, checked by name on the
parsed YAML: one GPU per GPU worker pod with a node selection on
nvidia.com/gpu.product for H100, H200, B200 and RTX Blackwell, a CPU
worker without GPUs, every secret referenced is defined with that key,
tokens only from secrets (never in args), Services select existing pods,
every metrics port is declared.

Exit 77 (skip) when node or npm is missing, saying so.
"""
import copy
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kfe2e  # noqa: E402
from kfe2e import TestFailure, check  # noqa: E402

try:
    import yaml
except ImportError:  # Debian's python3-yaml under another python3
    sys.path.append("/usr/lib/python3/dist-packages")
    import yaml

SRC = os.environ.get("KF_SOURCE_DIR") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))
K8S = os.path.join(SRC, "infra", "k8s")
# GPU Feature Discovery's product names (NVML's, spaces as dashes).
GPU_PRODUCTS = {"H100": r"^NVIDIA-H100-", "H200": r"^NVIDIA-H200(-|$)",
                "B200": r"^NVIDIA-B200(-|$)",
                "RTX Blackwell": r"^NVIDIA-(RTX-PRO-\d+-Blackwell|GeForce-RTX-50\d0)"}


def log(msg):
    print(msg, flush=True)


def install_validator():
    """Copies infra/k8s/validate into the build tree and runs npm ci
    there (the lockfile pins every package); returns its directory."""
    base = os.environ.get("KF_BIN_DIR") or tempfile.gettempdir()
    d = os.path.join(base, "k8s-validate")
    src = os.path.join(K8S, "validate")
    os.makedirs(d, exist_ok=True)
    fresh = False
    for f in ("package.json", "package-lock.json", "validate.js"):
        a, b = os.path.join(src, f), os.path.join(d, f)
        if not os.path.exists(b) or open(a, "rb").read() != open(b, "rb").read():
            shutil.copyfile(a, b)
            fresh = True
    if fresh or not os.path.isdir(os.path.join(d, "node_modules")):
        r = subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=d,
                           capture_output=True, timeout=600)
        check(r.returncode == 0, "npm ci in %s: %s" % (
            d, (r.stdout + r.stderr).decode(errors="replace")[-3000:]))
        log("npm ci: validator installed in %s" % d)
    return d


def validate(vdir, files):
    r = subprocess.run(["node", os.path.join(vdir, "validate.js")] + files,
                       capture_output=True, timeout=300)
    return r.returncode, r.stdout.decode(errors="replace") + \
        r.stderr.decode(errors="replace")


def docs_of(files):
    out = []
    for f in files:
        with open(f) as fh:
            for d in yaml.safe_load_all(fh):
                if d is not None:
                    out.append((os.path.basename(f), d))
    return out


BROKEN = [
    # (what, file, old text, new text, what the validator must name)
    ("replicas as a string", "30-coordinator.yaml", "replicas: 1",
     'replicas: "one"', "Deployment/kf-coordinator"),
    ("containers removed", "41-worker-cpu.yaml", "      containers:\n",
     "      initContainers:\n", "Deployment/kf-worker-cpu"),
    ("misspelt kind", "20-postgres.yaml", "kind: StatefulSet",
     "kind: StatefulSett", "StatefulSett/kf-postgres"),
    ("unknown apiVersion", "00-namespace.yaml", "apiVersion: v1",
     "apiVersion: v9", "Namespace/kernelfleet"),
    ("port as text", "30-coordinator.yaml", "containerPort: 7070",
     "containerPort: grpc-port", "Deployment/kf-coordinator"),
    ("bad YAML", "10-secrets.yaml", "stringData:\n  token:",
     "stringData:\n token: [", "10-secrets.yaml"),
]


def check_broken(vdir, tmp):
    for what, name, old, new, names in BROKEN:
        text = open(os.path.join(K8S, name)).read()
        check(old in text, "%s: %r not in %s (update the test)"
              % (what, old, name))
        bad = os.path.join(tmp, name)
        with open(bad, "w") as f:
            f.write(text.replace(old, new, 1))
        rc, out = validate(vdir, [bad])
        check(rc == 1, "a copy of %s with %s: validator exit %d:\n%s"
              % (name, what, rc, out))
        hit = [l for l in out.splitlines() if l.startswith("INVALID")
               and names in l]
        check(hit, "a copy of %s with %s: no INVALID line naming %s:\n%s"
              % (name, what, names, out))
        log("refused (%s): %s" % (what, hit[0][:160]))


def pod_spec(d):
    return d["spec"]["template"]["spec"]


def check_semantics(docs):
    secrets = {d["metadata"]["name"]: set(d.get("stringData", {})) |
               set(d.get("data", {})) for _, d in docs if d["kind"] == "Secret"}
    for _, d in docs:
        check(d["metadata"].get("namespace", "kernelfleet") == "kernelfleet"
              or d["kind"] == "Namespace", "%s/%s outside the namespace"
              % (d["kind"], d["metadata"]["name"]))
    workloads = [(f, d) for f, d in docs
                 if d["kind"] in ("Deployment", "StatefulSet", "DaemonSet")]
    pods_labels = [d["spec"]["template"]["metadata"]["labels"]
                   for _, d in workloads]
    for f, d in workloads:
        spec = pod_spec(d)
        for c in spec["containers"]:
            for e in c.get("env", []):
                ref = e.get("valueFrom", {}).get("secretKeyRef")
                if ref:
                    check(ref["key"] in secrets.get(ref["name"], ()),
                          "%s: env %s refers to secret %s key %s, not "
                          "defined" % (d["metadata"]["name"], e["name"],
                                       ref["name"], ref["key"]))
            for a in c.get("args", []):
                check("token" not in a.lower() or "--token-file" in a,
                      "%s: a token in args: %r" % (d["metadata"]["name"], a))
                if a.startswith("--metrics-listen="):
                    port = int(a.rsplit(":", 1)[1])
                    check(port in [p["containerPort"] for p in
                                   c.get("ports", [])],
                          "%s: metrics port %d not declared"
                          % (d["metadata"]["name"], port))
        for v in spec.get("volumes", []):
            if "secret" in v:
                check(v["secret"]["secretName"] in secrets, "%s: volume of "
                      "undefined secret %s" % (d["metadata"]["name"],
                                               v["secret"]["secretName"]))
        sel = d["spec"]["selector"]["matchLabels"]
        lab = d["spec"]["template"]["metadata"]["labels"]
        check(all(lab.get(k) == v for k, v in sel.items()),
              "%s: selector does not match its pods" % d["metadata"]["name"])
    for _, d in docs:
        if d["kind"] == "Service":
            sel = d["spec"]["selector"]
            check(any(all(l.get(k) == v for k, v in sel.items())
                      for l in pods_labels),
                  "Service %s selects no pod" % d["metadata"]["name"])

    gpu, cpu = {}, []
    for f, d in workloads:
        c = pod_spec(d)["containers"][0]
        if "--device=cuda:0" in c.get("args", []):
            gpu[d["metadata"]["name"]] = d
        elif "--device=cpu" in c.get("args", []):
            cpu.append(d)
    covered = set()
    for name, d in gpu.items():
        spec = pod_spec(d)
        lim = spec["containers"][0]["resources"]["limits"]
        check(str(lim.get("nvidia.com/gpu")) == "1",
              "%s: nvidia.com/gpu limit %r, not 1" % (name, lim))
        terms = spec["affinity"]["nodeAffinity"][
            "requiredDuringSchedulingIgnoredDuringExecution"][
            "nodeSelectorTerms"]
        exprs = [e for t in terms for e in t["matchExpressions"]
                 if e["key"] == "nvidia.com/gpu.product"]
        check(len(terms) == 1 and len(exprs) == 1 and
              exprs[0]["operator"] == "In" and exprs[0]["values"],
              "%s: no node selection on nvidia.com/gpu.product" % name)
        prods = [p for p, rx in GPU_PRODUCTS.items()
                 if all(re.search(rx, v) for v in exprs[0]["values"])]
        check(len(prods) == 1, "%s selects %r: not one product"
              % (name, exprs[0]["values"]))
        check(prods[0] not in covered, "two Deployments for %s" % prods[0])
        covered.add(prods[0])
        check(any(t.get("key") == "nvidia.com/gpu" for t in
                  spec.get("tolerations", [])),
              "%s: no toleration of the nvidia.com/gpu taint" % name)
    check(covered == set(GPU_PRODUCTS), "GPU products covered: %r"
          % sorted(covered))
    check(cpu, "no CPU worker")
    for d in cpu:
        res = pod_spec(d)["containers"][0].get("resources", {})
        check("nvidia.com/gpu" not in str(res), "a CPU worker asks for a GPU")
    check(any(d["kind"] == "StatefulSet" and "postgres" in d["metadata"]
              ["name"] for _, d in docs), "no PostgreSQL StatefulSet")
    check(any(s == "kf-tls" for s in secrets), "no TLS secret")
    log("semantic checks: %d GPU worker Deployments (%s), %d CPU"
        % (len(gpu), ", ".join(sorted(covered)), len(cpu)))


def _mutations():
    def no_gpu_limit(docs):
        for _, d in docs:
            if d["metadata"]["name"] == "kf-worker-h200":
                del pod_spec(d)["containers"][0]["resources"]["limits"][
                    "nvidia.com/gpu"]

    def typo_selector(docs):
        for _, d in docs:
            if d["metadata"]["name"] == "kf-worker-b200":
                pod_spec(d)["affinity"]["nodeAffinity"][
                    "requiredDuringSchedulingIgnoredDuringExecution"][
                    "nodeSelectorTerms"][0]["matchExpressions"][0]["key"] = \
                    "nvidia.com/gpu.prodcut"

    def unknown_secret_key(docs):
        for _, d in docs:
            if d["metadata"]["name"] == "kf-coordinator" and \
                    d["kind"] == "Deployment":
                for e in pod_spec(d)["containers"][0]["env"]:
                    if e["name"] == "KF_TOKEN":
                        e["valueFrom"]["secretKeyRef"]["key"] = "tokn"

    def token_in_args(docs):
        for _, d in docs:
            if d["metadata"]["name"] == "kf-worker-cpu":
                pod_spec(d)["containers"][0]["args"].append("--token=abc")
    return [no_gpu_limit, typo_selector, unknown_secret_key, token_in_args]


def check_semantics_refuse(docs):
    """Each mutation must make check_semantics fail: its checks can."""
    for m in _mutations():
        bad = copy.deepcopy(docs)
        m(bad)
        try:
            check_semantics(bad)
        except TestFailure as e:
            log("refused (%s): %s" % (m.__name__, e))
            continue
        raise TestFailure("the semantic checks accepted %s" % m.__name__)


def main():
    for tool in ("node", "npm"):
        if not shutil.which(tool):
            print("test_infra_k8s: SKIPPED: no %s (scripts/setup installs "
                  "nodejs and npm)" % tool)
            return 77
    files = sorted(glob.glob(os.path.join(K8S, "*.yaml")))
    check(len(files) >= 5, "infra/k8s has %d manifests" % len(files))
    vdir = install_validator()
    rc, out = validate(vdir, files)
    log(out.strip())
    docs = docs_of(files)
    check(rc == 0, "the manifests do not validate (exit %d)" % rc)
    check("%d documents, 0 invalid" % len(docs) in out,
          "the validator saw another number of documents than the %d "
          "YAML holds" % len(docs))
    tmp = tempfile.mkdtemp(prefix="kfk8s.")
    try:
        check_broken(vdir, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    check_semantics(docs)
    check_semantics_refuse(docs)
    return 0


if __name__ == "__main__":
    try:
        rc = main()
    except TestFailure as e:
        print("infra_k8s: FAIL: %s" % e)
        sys.exit(1)
    if rc == 0:
        print("infra_k8s: PASS")
    sys.exit(rc)
