/* placeholder */ typedef int kf_placeholder_rpc_server;
