/* placeholder */ typedef int kf_placeholder_store_tasks;
