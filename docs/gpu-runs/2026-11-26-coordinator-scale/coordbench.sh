#!/bin/bash
# coordinator scale bench on the GPU machine's CPUs (not a GPU job)
O=$1
tar -C /tmp -xJf bundle/kernelfleet.tar.xz; source /tmp/kernelfleet/env.sh
nproc > $O/nproc.txt; grep -m1 "model name" /proc/cpuinfo >> $O/nproc.txt
conn=$(kf db start /tmp/bpg) || exit 1
export KF_TOKEN=bench-$$
kf-coordinator --db "$conn" --listen 127.0.0.1:0 --port-file /tmp/bport --log-level warn --max-calls 24000 --max-calls-per-peer 24000 --max-queued-ops 24000 2>$O/coord.log &
cp=$!
for _ in $(seq 100); do [ -s /tmp/bport ] && break; sleep 0.1; done
P=127.0.0.1:$(cat /tmp/bport)
run() { echo "## $*" >> $O/bench.txt; timeout 120 bundle/kf-bench-coordinator --coordinator $P "$@" >> $O/bench.txt 2>&1; }
run --workers 500 --tasks 40000 --batch 1 --channels 4
run --workers 10000 --tasks 100000 --batch 1 --channels 16
run --workers 10000 --tasks 100000 --batch 1 --channels 16 --think-ms 400
run --workers 10000 --tasks 100000 --batch 8 --channels 16
kill $cp; wait $cp; kf db stop /tmp/bpg fast
cat $O/nproc.txt $O/bench.txt
