/* placeholder */ typedef int kf_placeholder_bench_coordinator;
