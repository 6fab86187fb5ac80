#!/usr/bin/env bash
# The truth run and its windows, then stochastic EKI for seeds 0 to 4.
set -euo pipefail
python eki_l96.py
