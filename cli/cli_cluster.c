/* placeholder */ typedef int kf_placeholder_cli_cluster;
