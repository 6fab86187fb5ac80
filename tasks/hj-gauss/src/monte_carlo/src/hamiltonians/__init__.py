"""Hamiltonians for HJ reachability: pursuit-evasion games."""

from .base import Hamiltonian
from .quadratic import QuadraticHamiltonian
from .double_integrator import DoubleIntegratorHamiltonian

__all__ = [
    "Hamiltonian",
    "QuadraticHamiltonian",
    "DoubleIntegratorHamiltonian",
]
