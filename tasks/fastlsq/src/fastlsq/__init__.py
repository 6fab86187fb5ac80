# Copyright (c) 2026 Antonin Sulc
# Licensed under the MIT License. See LICENSE file for details.

"""
FastLSQ -- Solving PDEs in one shot via Fourier features
with exact analytical derivatives.

Reference:
    A. Sulc, "Solving PDEs in One Shot via Fourier Features with Exact
    Analytical Derivatives," arXiv:2602.10541, 2026.
"""

from fastlsq.device import resolve_device, set_device, get_device, device_info
from fastlsq.basis import (
    SinusoidalBasis,
    BasisCache,
)
from fastlsq.solvers import FastLSQSolver
from fastlsq.linalg import solve_lstsq
from fastlsq.block import block_concat, pack_beta, unpack_beta

__version__ = "0.4.1"
__all__ = [
    # Device selection (CPU / CUDA / Apple-MPS, dtype-aware)
    "resolve_device",
    "set_device",
    "get_device",
    "device_info",
    # Basis and operators (foundation)
    "SinusoidalBasis",
    "BasisCache",
    # Core solvers
    "FastLSQSolver",
    "solve_lstsq",
    # Block assembly for vector-valued u
    "block_concat",
    "pack_beta",
    "unpack_beta",
]
