/tmp/kernelfleet/bin/kf-harness eval-files --spec problems/cuda/gelu_tanh --source problems/cuda/gelu_tanh/grid_stride.cu --knob BLOCKS_PER_SM=1 --knob MATH=0 --knob THREADS=128 --knob UNROLL=1 
