#!/usr/bin/env bash
# The windows of data/ give y and Γ; stochastic EKI for seeds RCB_SEED + 0..4.
set -euo pipefail
python eki_l96.py
