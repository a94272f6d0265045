/tmp/kernelfleet/bin/kf-harness eval-files --spec problems/cuda/gelu_tanh --source /work/main/bundle/rt_cuda/const_bank_carry.cu 
