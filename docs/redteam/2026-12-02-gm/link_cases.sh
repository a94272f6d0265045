#!/bin/bash
# Symlinked siblings are followed (sib_visit: stat(), not lstat()) and
# syntax errors in a sibling are reported as a sandbox kill.
export KF_PYTHON=/usr/bin/python3
KF=/work/main/build/kf
R=/tmp/rt-gm; L=$R/GM_LAYOUT.txt; T=$R/GM_TASK.txt; U=$R/GM_UTILS.txt
mk() { rm -rf $R/l_$1 $R/l_$1_out; mkdir -p $R/l_$1; cp $T $R/l_$1/task.py; cp $U $R/l_$1/utils.py; cp $L $R/l_$1/reference.py; }
imp() { echo "=== $1"; $KF import gpumode $R/l_$1 --out $R/l_$1_out --case '{"size": 64, "seed": 3}' 2>&1 | tail -3; echo "rc=${PIPESTATUS[0]}"; }
# a) syntax error in task.py: reported as "forbidden system call"
mk syn; printf 'def broken(:\n' >> $R/l_syn/task.py; imp syn
# b) a file outside DIR, reached by a symlink, copied into the written reference
mkdir -p $R/home_secret; printf 'AWS_SECRET = "AKIA-not-really-hunter2"\n' > $R/home_secret/creds.py
mk exf; ln -s $R/home_secret/creds.py $R/l_exf/creds.py; sed -i '1i import creds' $R/l_exf/reference.py; imp exf
grep -n hunter2 $R/l_exf_out/reference.py
# c) a non-Python file outside DIR (/etc/hostname stands for ~/.ssh/id_rsa):
#    an earlier sibling swaps builtins.compile so the secret's module "compiles"
mk exf2; ln -s /etc/hostname $R/l_exf2/hn.py
cat > $R/l_exf2/aaa.py <<'PY'
import builtins
_c = builtins.compile
def compile(text, name, *a, **k):
    if name == "hn.py":
        text = "pass"
    return _c(text, name, *a, **k)
builtins.compile = compile
PY
sed -i '1i import aaa\nimport hn' $R/l_exf2/reference.py; imp exf2
grep -n -A2 '_kf_module("hn"' $R/l_exf2_out/reference.py; echo "hostname: $(cat /etc/hostname)"
