"""Monte Carlo HJ Reachability: Headline-grade 1M-bird aerial murmuration safety.

Main module exports for HJ-Gauss solver with 4D murmuration support.
Includes multi-GPU distribution with automatic single-GPU fallback.
"""

from .src.config import SolverConfig
from .src.hj_sampler import HJReachabilitySampler
from .src.topology import TopologyState, brt_topology_signature, detect_phase_transitions

__all__ = [
    "SolverConfig",
    "HJReachabilitySampler",
    "TopologyState",
    "brt_topology_signature",
    "detect_phase_transitions",
]
