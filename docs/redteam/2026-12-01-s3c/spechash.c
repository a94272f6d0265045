/* spechash DIR...: prints kf_spec_canonical_hash and torch_extra of each problem */
#include <stdio.h>
#include "spec.h"
int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    kf_spec *s = NULL; char err[512];
    if (kf_spec_load_dir(argv[i], &s, err, sizeof err)) { printf("%s: %s\n", argv[i], err); continue; }
    char h[65]; kf_spec_canonical_hash(s, h);
    printf("%s  %s  torch_extra=%s\n", h, argv[i], s->torch_extra);
    kf_spec_free(s);
  }
  return 0;
}
