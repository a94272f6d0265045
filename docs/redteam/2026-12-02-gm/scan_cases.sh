#!/bin/bash
# Scanner (cli/cli_import.c bundle_siblings / sib_scan) cases: each builds
# /tmp/rt-gm/s_NAME from the test's GM_TASK/GM_UTILS/GM_LAYOUT and imports it.
export KF_PYTHON=/usr/bin/python3
KF=/work/main/build/kf
R=/tmp/rt-gm
T=$R/GM_TASK.txt; U=$R/GM_UTILS.txt; L=$R/GM_LAYOUT.txt
mk() { rm -rf $R/s_$1 $R/s_$1_out; mkdir -p $R/s_$1; cp $T $R/s_$1/task.py; cp $U $R/s_$1/utils.py; cp $L $R/s_$1/reference.py; }
imp() { echo "=== $1"; $KF import gpumode $R/s_$1 --out $R/s_$1_out --case '{"size": 64, "seed": 3}' 2>&1 | tail -4; echo "rc=${PIPESTATUS[0]}";
        [ -f $R/s_$1_out/reference.py ] && grep -o '^_kf_module("[a-zA-Z0-9_]*"' $R/s_$1_out/reference.py | tr '\n' ' '; echo; }
# 1 docstring mentioning a sibling: bundled and run though never imported
mk doc; printf 'raise SystemExit("scratch.py ran")\n' > $R/s_doc/scratch.py
printf '"""Usage:\nimport scratch\n"""\n' | cat - $L > $R/s_doc/reference.py; imp doc
# 2 relative import
mk rel; sed -i 's/^from utils import/from .utils import/' $R/s_rel/reference.py; imp rel
# 3 import a, b / import X as Y
mk list; sed -i 's/^from utils import make_match_reference/import torch, utils as U\nmake_match_reference = U.make_match_reference/' $R/s_list/reference.py; imp list
# 4 semicolon / inline / conditional import
mk semi; sed -i 's/^from utils import make_match_reference/import os; from utils import make_match_reference/' $R/s_semi/reference.py; imp semi
mk cond; sed -i 's/^from utils import make_match_reference/if True: from utils import make_match_reference/' $R/s_cond/reference.py; imp cond
# 5 module imports reference back
mk back; printf 'import reference\n' >> $R/s_back/utils.py; imp back
# 6 cycle task <-> utils (task imports utils at top level, uses it lazily)
mk cyc; printf 'import utils\ndef helper():\n    return utils.make_match_reference\n' >> $R/s_cyc/task.py; imp cyc
# 7 invalid UTF-8 / NUL
mk utf; printf 'X = "\xff"\n' >> $R/s_utf/task.py; imp utf
mk nul; printf 'X = 1\n\0\n' >> $R/s_nul/task.py; imp nul
# 8 300 KiB sibling
mk big; /usr/bin/python3 -c "print('#' + 'x'*300*1024)" >> $R/s_big/task.py; imp big
# 9 17 modules
mk many; for i in $(seq 1 17); do echo "V$i = $i" > $R/s_many/m$i.py; echo "import m$i" ; done > $R/s_many/hdr; cat $R/s_many/hdr $L > $R/s_many/reference.py; rm $R/s_many/hdr; imp many
# 10 symlink to /etc/passwd, to /proc/self/environ, and a directory X.py
mk lnk; ln -s /etc/passwd $R/s_lnk/passwd.py; sed -i '1i import passwd' $R/s_lnk/reference.py; imp lnk
mk dir; mkdir $R/s_dir/helpers.py; sed -i '1i import helpers' $R/s_dir/reference.py; imp dir
# 11 a sibling named like a stdlib module the runner did not load yet
mk stdl; printf 'def mean(x):\n    return 42\n' > $R/s_stdl/statistics.py; sed -i '1i import statistics' $R/s_stdl/reference.py; imp stdl
# 12 from X import with line continuation / parenthesised multi-line
mk paren; sed -i 's/^from task import input_t, output_t, SCALE/from task import (input_t,\n    output_t, SCALE)/' $R/s_paren/reference.py; imp paren
# 13 CRLF sibling
mk crlf; sed -i 's/$/\r/' $R/s_crlf/task.py; imp crlf
