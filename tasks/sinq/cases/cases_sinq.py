"""Cases for SINQ: each drives the authors' code on seeded weight matrices and returns
what it computed: the Sinkhorn-style normalisation (scaled matrix and the two scale
vectors), the dual-scale quantisation of one tile, the tiled quantisation of a whole
matrix (with and without an activation-aware scale), and a quantise-dequantise round
trip through the authors' Quantizer, for SINQ and for plain RTN (unpacked, and 3-bit
codes packed into int32 words).

The matrices come from numpy generators seeded with RCB_SEED: Gaussian entries times
log-normal row and column scales (the structure that dual scales are for), a few
outliers, and a heavy-tailed matrix. The checks (another sandbox, without this code)
regenerate them and recompute the normalisation and the quantisation in numpy.
"""

import os

import numpy as np
import torch

from sinq.dual_shift import quantize_dual_scale_shift, tiled_quant_rectangle
from sinq.quantizer import Quantizer
from sinq.sinkhorn import sinkhorn_log

SEED = int(os.environ.get("RCB_SEED", "0"))


def weights(offset, rows, cols, spread=0.8, outliers=3, heavy=False):
    """rows x cols float32 weights, as checks/_sinq.py draws them."""
    rng = np.random.default_rng(SEED + offset)
    g = rng.standard_t(3, size=(rows, cols)) if heavy else rng.normal(size=(rows, cols))
    r = np.exp(spread * rng.normal(size=(rows, 1)))
    c = np.exp(spread * rng.normal(size=(1, cols)))
    w = 0.02 * g * r * c
    for _ in range(outliers):
        i, j = rng.integers(rows), rng.integers(cols)
        w[i, j] = 0.02 * rng.choice([-1.0, 1.0]) * rng.uniform(8.0, 20.0)
    return w.astype(np.float32)


def out(x):
    return x.detach().cpu().numpy() if isinstance(x, torch.Tensor) else x


SINKHORN = {  # name: (weights args, sinkhorn kwargs)
    "square_order16": ((1, 64, 64), {"order": 16}),
    "tall_order8": ((2, 96, 64, 1.2, 5), {}),
    "wide_heavy": ((3, 32, 128, 0.5, 0, True), {"order": 16}),
    "no_early_stop": ((4, 64, 64, 1.0, 2), {"order": 24, "stop_on_increasing_imbalance": False}),
    "low_clip_max": ((5, 48, 48, 0.8, 1), {"order": 16, "clip_min": 1e-4, "clip_max": 0.05}),
    "high_clip_min": ((8, 48, 48, 1.5, 1), {"order": 6, "clip_min": 5e-3, "clip_max": 0.5}),
    "zero_steps": ((6, 16, 16), {"order": 0}),
}


def case_sinkhorn():
    result = {}
    for name, (args, kwargs) in SINKHORN.items():
        scaled, mu1, mu2 = sinkhorn_log(torch.tensor(weights(*args)), **kwargs)
        result[name] = {"scaled": out(scaled), "mu1": out(mu1), "mu2": out(mu2)}
    return result


def case_sinkhorn_balanced():
    """A matrix whose rows and columns already share one standard deviation."""
    rng = np.random.default_rng(SEED + 7)
    g = rng.normal(size=(32, 32))
    g = g - g.mean(axis=0, keepdims=True)
    for _ in range(50):  # make every row and column std (nearly) equal
        g = g / g.std(axis=1, ddof=1, keepdims=True)
        g = g / g.std(axis=0, ddof=1, keepdims=True)
    scaled, mu1, mu2 = sinkhorn_log(torch.tensor(0.05 * g, dtype=torch.float32), 16)
    return {"scaled": out(scaled), "mu1": out(mu1), "mu2": out(mu2)}


TILE = {  # name: (weights args, method)
    "sinq": ((10, 64, 64), "sinq"),
    "sinq_strong_scales": ((11, 64, 64, 1.2, 4), "sinq"),
    "rtn": ((12, 64, 64), "rtn"),
    "sinq_noz": ((13, 64, 64), "sinq_noz"),
}


def case_dual_scale_tile():
    result = {}
    for name, (args, method) in TILE.items():
        nbits = 3 if "strong" in name else 4
        q, s1, s2, z = quantize_dual_scale_shift(torch.tensor(weights(*args)), [0, 2**nbits - 1], method=method)
        result[name] = {"q": out(q), "s1": out(s1), "s2": out(s2), "z": out(z)}
    return result


def case_tiled():
    result = {}
    for name, (args, block, method) in {
        "sinq_64": ((20, 48, 256, 0.5, 2), 64, "sinq"),
        "sinq_adjusted_block": ((21, 40, 96, 0.5, 2), 64, "sinq"),
        "rtn_32": ((22, 32, 128, 0.5, 2), 32, "rtn"),
    }.items():
        Q, s1, s2, z = tiled_quant_rectangle(torch.tensor(weights(*args)), [0, 15], block, method=method)
        result[name] = {"Q": out(Q), "s1": out(s1), "s2": out(s2), "z": out(z)}
    rng = np.random.default_rng(SEED + 23)
    awq = rng.uniform(0.5, 2.0, size=(1, 128)).astype(np.float32)
    Q, s1, s2, z = tiled_quant_rectangle(
        torch.tensor(weights(24, 32, 128, 0.5, 2)), [0, 15], 64, method="sinq_awq_l1", awq_scale=torch.tensor(awq)
    )
    result["sinq_awq_64"] = {"Q": out(Q), "s1": out(s1), "s2": out(s2), "z": out(z)}
    Q, s1, s2, z = tiled_quant_rectangle(torch.tensor(weights(24, 32, 128, 0.5, 2)), [0, 15], 64, method="sinq")
    result["sinq_awq_64_without_awq"] = {"Q": out(Q), "s1": out(s1), "s2": out(s2), "z": out(z)}
    return result


def case_quantizer_roundtrip():
    """Quantizer.quantize (group size 64 along the input dimension, no bit packing) and
    Quantizer.dequantize, for SINQ and for plain RTN: on a matrix with mild row and column
    scales (kurtosis below the authors' gate of 5, so SINQ runs) and on a heavy-tailed one
    (kurtosis above it: the authors fall back to RTN)."""
    result = {}
    for name, args, runs in (
        ("mild", (30, 64, 256, 0.2, 0), (("sinq", 4), ("rtn", 4), ("sinq", 3))),
        ("heavy", (31, 64, 128, 0.2, 0, True), (("sinq", 4),)),
    ):
        w = torch.tensor(weights(*args))
        for method, nbits in runs:
            W_q, meta = Quantizer.quantize(
                w, None, nbits=nbits, group_size=64, axis=1, device="cpu", bitpack=False,
                compute_dtype=torch.float32, method=method,
            )
            result[f"{name}_{method}_{nbits}"] = {
                "W_r": out(Quantizer.dequantize(W_q, meta)),
                "W_q": out(W_q),
                "scale": out(meta["scale"]),
                "scale2": out(meta["scale2"]),
                "zero": out(meta["zero"]),
            }
    # 3-bit codes packed ten to an int32: 72 groups unpack to 80 rows, the last 8 padding
    w = torch.tensor(weights(32, 36, 128, 0.2, 0))
    W_q, meta = Quantizer.quantize(
        w, None, nbits=3, group_size=64, axis=1, device="cpu", bitpack=True,
        compute_dtype=torch.float32, method="sinq",
    )
    result["packed_sinq_3"] = {
        "W_r": out(Quantizer.dequantize(W_q, meta)),
        "W_q": out(Quantizer.unpack[meta["packing"]](W_q, dtype=torch.float32)[: 36 * 128 // 64]),
        "scale": out(meta["scale"]),
        "scale2": out(meta["scale2"]),
        "zero": out(meta["zero"]),
    }
    return result


def case_dual_scale_tile_fp16():
    """One tile given in float16: computed in float32, returned in the weights' dtype."""
    w = torch.tensor(weights(15, 64, 64)).half()
    q, s1, s2, z = quantize_dual_scale_shift(w, [0, 15], method="sinq")
    return {k: {"dtype": str(v.dtype), "value": out(v)} for k, v in (("q", q), ("s1", s1), ("s2", s2), ("z", z))}
