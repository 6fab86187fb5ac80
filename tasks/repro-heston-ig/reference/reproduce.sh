#!/usr/bin/env bash
# The closed form, then Monte Carlo prices: the IG scheme on 1 to 32 steps and the
# Euler baseline on 4 and 32, five seeds of 100,000 paths each.
set -euo pipefail
python heston_ig.py
