# Copyright (c) 2026 Antonin Sulc
# Licensed under the MIT License. See LICENSE file for details.

"""PDE problem definitions for FastLSQ benchmarks."""

from fastlsq.problems.linear import (
    PoissonND,
)
from fastlsq.problems.nonlinear import (
    SteadyBurgers1D,
)

__all__ = [
    # Linear (solver mode)
    "PoissonND",
    # Nonlinear (Newton solver mode)
    "SteadyBurgers1D",
]
