#!/bin/bash
# Red team 2026-12-01-s3b: every command, from the repository root
# (/work/main).  Each script starts its own private PostgreSQL (as the
# postgres user, via `kf db start`) and one kf-coordinator through
# tests/e2e/kfe2e.py, and removes them at the end.  Run ONE at a time.
set -x
E=docs/redteam/2026-12-01-s3b
export KF_BIN_DIR=/work/main/build

# the hostile wire client (links build/libkf_common.a, libkf_proto.a)
(cd $E && bash build_client.sh)   # -> $E/bin/rt_client

# H1: one worker credential registered twice confirms its own forged best
#     in the "second worker" showdown (forge_harness.py as KF_HARNESS)
KF_E2E_SLACK=2 python3 $E/sybil_showdown.py          # A+B only   -> results/sybil_noh.txt
KF_E2E_SLACK=2 python3 $E/sybil_showdown.py honest   # H + A + B  -> results/sybil_h.txt
# H2: a hostile worker alone in a device class of its own choosing owns the
#     campaign's overall best
KF_E2E_SLACK=2 python3 $E/sybil_showdown.py class    # H + A(own class) -> results/sybil_class.txt

# H3: a ShowdownResult with invalid UTF-8 wedges the campaign (and, H3b,
#     freezes the honest classes' search too)
KF_E2E_SLACK=1 python3 $E/hostile_worker.py sd_badutf8_entry   # -> results/hostile_sd_badutf8_entry.txt
KF_E2E_SLACK=1 python3 $E/hostile_worker.py sd_badutf8_reason  # -> results/hostile_sd_badutf8_reason.txt
KF_E2E_SLACK=1 python3 $E/freeze_campaign.py                   # -> results/freeze_sd_badutf8_entry.txt
KF_E2E_SLACK=1 python3 $E/freeze_campaign.py control           # -> results/freeze_sd_honest.txt

# H4: a forged wrong_answer is reused by later campaigns with honest
#     workers only
KF_E2E_SLACK=1 python3 $E/reuse_poison.py                      # -> results/reuse_poison.txt

# H5: a second submitter stops / proposes into another's campaign
KF_E2E_SLACK=1 python3 $E/cross_submitter.py                   # -> results/cross_submitter.txt

# defended probes (lease ownership, duplicates, UTF-8, roles, names)
KF_E2E_SLACK=1 python3 $E/probes.py                            # -> results/probes.txt
