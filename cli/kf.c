/* placeholder */ typedef int kf_placeholder_kf;
