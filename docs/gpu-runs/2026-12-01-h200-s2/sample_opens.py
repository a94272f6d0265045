"""What the sampler's draw path opens or imports after torch is loaded
(runner.py sample: lockdown, then manual_seed, _seed_all, get_inputs(),
frombuffer): run with the GPU machine's python3 (the torch venv) as
`python3 sample_opens.py HARNESS_RUNNER_PY REFERENCE.py...`.  Each open
and import after the runner's own pre-lockdown steps is printed: under the
sampler's seccomp filter each one is a SIGSYS."""
import importlib.util
import sys

spec = importlib.util.spec_from_file_location("kfrunner", sys.argv[1])
runner = importlib.util.module_from_spec(spec)
spec.loader.exec_module(runner)
torch = runner._import_torch()
runner._warm(torch, "cpu")
seen = []
sys.addaudithook(lambda ev, a: seen.append((ev, str(a)[:120]))
                 if ev in ("open", "import") else None)
mods = set(sys.modules)
torch.manual_seed(1234)
seen.append(("--", "manual_seed done"))
runner._seed_all(1234)
seen.append(("--", "_seed_all done"))
for path in sys.argv[2:]:
    ns = {"__name__": "__kf_side__"}
    exec(compile(open(path).read(), path, "exec"), ns)
    seen.append(("--", "exec %s done" % path))
    xs = ns["get_inputs"]()
    seen.append(("--", "get_inputs of %s done" % path))
for ev, a in seen:
    print(ev, a)
print("modules imported after the runner's pre-lockdown steps:",
      sorted(set(sys.modules) - mods))
