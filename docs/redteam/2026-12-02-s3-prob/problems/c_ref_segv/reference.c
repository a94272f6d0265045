#include "kf_candidate.h"
int kf_launch(const kf_args *a) { ((volatile float *)0)[0] = 1; return 0; }
