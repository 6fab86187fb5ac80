#!/usr/bin/env bash
# The whole experiment: Adam and ADOPT, three beta2 values, five seeds, 50,000 steps each.
set -euo pipefail
python adopt_toy.py
