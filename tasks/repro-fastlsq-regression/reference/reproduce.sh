#!/usr/bin/env bash
# Table 5's Sine-Gordon and Klein-Gordon rows with the authors' package (fastlsq 0.1.0,
# the paper's release): FastLSQ (sin) and PIELM (tanh), three seeds each, float32.
set -euo pipefail
python fastlsq_table5.py
