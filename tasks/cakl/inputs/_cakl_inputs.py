"""Inputs shared by the cases and the checks: DNA strings (fixed ones and ones drawn
from RCB_SEED), the settings each case featurizes them with, and the k-mer positions
(the point cloud of one k-mer: the 0-based start of each occurrence, as the authors'
`occurrence` returns them; recomputed here so that the checks need no code under test).
"""

import itertools
import os

import numpy as np

SEED = int(os.environ.get("RCB_SEED", "0")) + 20250813
ALPHABET = ["A", "C", "G", "T"]

FIXED = {
    "periodic": "ACGT" * 6,
    "homopolymer": "A" * 9,
    "blocks": "AAAACCCCGGGGTTTT" * 2,
    "quasi_repeat": "AGTCAGTCAGTT" * 3,
}


def random_strings():
    """Three seeded DNA strings of 40 to 70 bases (uniform over ACGT)."""
    rng = np.random.default_rng(SEED)
    lengths = rng.integers(40, 71, size=3)
    return {f"random{i}": "".join(rng.choice(ALPHABET, size=int(n))) for i, n in enumerate(lengths)}


def kmers(k):
    return ["".join(p) for p in itertools.product(ALPHABET, repeat=k)]


def positions(dna, kmer):
    k = len(kmer)
    return [i for i in range(len(dna) - k + 1) if dna[i : i + k] == kmer]


# A scan over distances: Rips complexes on the positions up to max_edge_length, read on
# a grid that includes values between the integer distances and beyond max_edge_length.
RICH = {"max_edge_length": 5.0, "max_dimension": 2, "grid": [0.0, 0.5, 1.0, 2.0, 2.5, 3.0, 4.0, 5.0, 7.0]}
# Tetrahedra too (h-vectors of length 5), on the fixed strings only.
DEEP = {"max_edge_length": 4.0, "max_dimension": 3, "grid": [0.0, 1.0, 2.0, 3.0, 4.0]}
# Edges only (h-vectors of length 3).
FLAT = {"max_edge_length": 3.0, "max_dimension": 1, "grid": [0.0, 1.0, 2.0, 3.0]}
# The authors' featurization (Featurization.ipynb, example.py): max_edge_length 2.0,
# max_dimension 2, filtration values i * 4**k for i = 0..num with num = 2.
PAPER_NUM = 2


def paper_grid(k):
    return [i * 4**k for i in range(PAPER_NUM + 1)]


def scan_inputs():
    """(label, dna, k, settings) for every k-mer scan the cases run."""
    out = []
    for name, dna in random_strings().items():
        for k in (1, 2):
            out.append((f"{name}_k{k}_rich", dna, k, RICH))
    for name, dna in FIXED.items():
        out.append((f"{name}_k1_rich", dna, 1, RICH))
        out.append((f"{name}_k2_deep", dna, 2, DEEP))
        out.append((f"{name}_k1_deep", dna, 1, DEEP))
        out.append((f"{name}_k1_flat", dna, 1, FLAT))
    return out


def paper_inputs():
    """(label, dna, k) featurized with the authors' settings."""
    strings = random_strings()
    return [
        ("random0_k2", strings["random0"], 2),
        ("random1_k3", strings["random1"], 3),
        ("blocks_k2", FIXED["blocks"], 2),
    ]
