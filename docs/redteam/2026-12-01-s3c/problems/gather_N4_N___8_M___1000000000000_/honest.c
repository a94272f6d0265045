/* out[i] = x[idx[i]] */
#include "kf_candidate.h"
int kf_launch(const kf_args *a) {
  const int64_t N = a->params[0], M = a->params[1];
  const float *x = a->inputs[0].data;
  const int32_t *idx = a->inputs[1].data;
  float *o = a->outputs[0].data;
  for (int64_t i = 0; i < M; i++) {
    int32_t j = idx[i];
    if (j < 0 || j >= N) return 3;
    o[i] = x[j];
  }
  return 0;
}
