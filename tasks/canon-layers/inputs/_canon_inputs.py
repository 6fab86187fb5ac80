"""Seeded inputs for the Canon-layer cases and checks (numpy only).

Both sandboxes import this file: the checks rebuild every input from the same seed
instead of reading it back from the cases. RCB_SEED (0 when grading; rcb validate runs
0..9) varies every random input. Parameters are drawn by name (not in creation order),
so a model whose layers create their modules in another order gets the same weights.
"""

import os
import zlib

import numpy as np

SEED = int(os.environ.get("RCB_SEED", "0"))

VOCAB = 48
BATCH = 2
SEQ = 9  # tokens per sequence in the model cases
T0 = 4  # first position changed in the causality case
PREFILLS = (2, 5)  # one shorter and one longer than the kernel (4) before decoding
PAD = 3  # left padding of row 0 in the padding case

BASE = dict(
    vocab_size=VOCAB,
    hidden_size=32,
    intermediate_size=64,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,  # grouped queries: q, k and v have different widths
    max_position_embeddings=64,
    attn_implementation="eager",
)

MODELS = {
    "none": dict(canon_set=""),
    "abcd": dict(canon_set="ABCD", qk_norm=True),
    "abcd_act_k3": dict(canon_set="ABCD", canon_activation=True, canon_residual=False, canon_kernel=3),
    "abcd_plain_k2": dict(canon_set="ABCD", canon_residual=False, canon_kernel=2),
    "a": dict(canon_set="A"),
    "b": dict(canon_set="B", qk_norm=True),
    "c": dict(canon_set="C"),
    "d": dict(canon_set="D"),
}

# the canon layer on its own: (kernel, silu activation, residual)
LAYERS = {
    "k4_res": (4, False, True),
    "k3_act_res": (3, True, True),
    "k2_plain": (2, False, False),
    "k4_act": (4, True, False),
}
LAYER_DIM = 6
LAYER_T = 7
LAYER_MASK = np.array([[0, 0, 0, 1, 1, 1, 1], [1, 1, 1, 1, 1, 1, 1]], dtype=np.float64)


def _rng(*key):
    return np.random.default_rng([SEED] + [zlib.crc32(str(k).encode()) for k in key])


def param(name, shape):
    """The value of the parameter ``name`` (float64)."""
    z = _rng("param", name).standard_normal(shape)
    if "norm" in name:
        return 1.0 + 0.2 * z
    if "canon" in name:
        return 0.5 * z
    if "embed" in name:
        return z
    return z / np.sqrt(shape[-1])


def tokens(tag, shape=(BATCH, SEQ)):
    return _rng("tokens", tag).integers(1, VOCAB, size=shape)


def changed_tokens(tag):
    """tokens(tag) with every position from T0 on redrawn (each one different)."""
    ids = tokens(tag).copy()
    new = _rng("changed", tag).integers(1, VOCAB - 1, size=ids[:, T0:].shape)
    ids[:, T0:] = np.where(new >= ids[:, T0:], new + 1, new)
    return ids


def layer_x(tag, batch=BATCH, T=LAYER_T, dim=LAYER_DIM):
    return _rng("layer_x", tag).standard_normal((batch, T, dim))


def layer_w(tag, kernel, dim=LAYER_DIM):
    """Depthwise weights, (dim, kernel): the layout of a Conv1d weight without its middle axis."""
    return 0.7 * _rng("layer_w", tag).standard_normal((dim, kernel))


def layer_b(tag, dim=LAYER_DIM):
    return 0.3 * _rng("layer_b", tag).standard_normal(dim)
