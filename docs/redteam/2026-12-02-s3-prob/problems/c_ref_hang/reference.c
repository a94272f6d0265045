#include "kf_candidate.h"
int kf_launch(const kf_args *a) { volatile int z = 1; while (z) {} return 0; }
