#!/usr/bin/env bash
# Table 1's Poisson 5D and Helmholtz 2D rows: FastLSQ (sin) and PIELM (tanh), three
# seeds each, in single precision.
set -euo pipefail
python fastlsq_table1.py
