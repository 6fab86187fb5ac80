"""The cases' numpy inputs, regenerated from the same seeds (cases/cases_kronos.py draws
them the same way); the checks never read inputs back from what the cases returned."""

import os

import numpy as np

SEED = 1000 * int(os.environ.get("RCB_SEED", "0"))
S1_BITS, S2_BITS = 4, 4
D_MODEL = 32
CODE_BITS = S1_BITS + S2_BITS


def rng(offset):
    return np.random.default_rng(SEED + offset)


def random_bits():
    """case_bits_to_indices: signs of a standard normal, True where the bit is set."""
    return rng(1).standard_normal((3, 5, 8)) > 0


def quantizer_input():
    return rng(2).standard_normal((2, 5, 8)).astype(np.float32) * 3.0


def token_ids(offset, batch, length, bits):
    return rng(offset).integers(0, 2**bits, size=(batch, length))


def embedding_ids():
    return token_ids(4, 3, 7, S1_BITS), token_ids(5, 3, 7, S2_BITS)


def dependency_inputs():
    g = rng(6)
    hidden = g.standard_normal((2, 7, D_MODEL)).astype(np.float32)
    sibling = g.standard_normal((2, 7, D_MODEL)).astype(np.float32)
    return hidden, sibling


def dual_head_inputs():
    g = rng(7)
    s1_logits = g.standard_normal((3, 6, 2**S1_BITS)).astype(np.float32) * 2.0
    s2_logits = g.standard_normal((3, 6, 2**S2_BITS)).astype(np.float32) * 2.0
    s1_targets = g.integers(0, 2**S1_BITS, size=(3, 6))
    s2_targets = g.integers(0, 2**S2_BITS, size=(3, 6))
    padding = (g.random((3, 6)) < 0.3).astype(np.int64)
    padding[0, 0] = 0
    return s1_logits, s2_logits, s1_targets, s2_targets, padding


def stamps(offset, batch, length):
    """minute, hour, weekday, day, month as floats (cases/cases_kronos.py stamps)."""
    high = np.array([60, 24, 7, 32, 13])
    return rng(offset).integers(0, high, size=(batch, length, 5)).astype(np.float32)
