"""Seeded inputs shared by the cases and the checks (never shown to the model): the
tiny configurations, the parameters of the conditioning encoders and of the query
projection, the property vectors and the slider keys/values, all drawn with numpy from
RCB_SEED so that the checks regenerate them without the code under test."""

import os

import numpy as np

SEED = int(os.environ.get("RCB_SEED", "0"))
MISSING = -100.0  # MISSING_CONDITION_VALUE of Slider_model.py

# PKV (prefix attention) encoders; every size differs, so that a swapped axis shows
PKV_ENCODERS = {
    "per_layer": dict(batch=5, n_layer=2, n_head=4, n_embd=24, n_prefix_tokens=3,
                      n_input_vector=2, n_hidden_cond=8, share_layers=False),
    "shared": dict(batch=4, n_layer=3, n_head=2, n_embd=24, n_prefix_tokens=2,
                   n_input_vector=3, n_hidden_cond=6, share_layers=True),
}

# Slider (residual attention) encoders
SLIDER_ENCODERS = {
    "shared_heads": dict(batch=4, n_head=4, n_embd=24, n_variables=3, n_hidden=10, sharing=2),
    "own_heads": dict(batch=3, n_head=2, n_embd=20, n_variables=2, n_hidden=7, sharing=1),
}

# the slider attention layer: batch, tokens, width, heads, condition variables
ATT = dict(batch=3, seq=5, n_embd=24, n_head=4, n_variables=3)


def _rng(offset):
    return np.random.default_rng(SEED + offset)


def _linear(rng, fan_out, fan_in, scale=1.0):
    w = rng.normal(size=(fan_out, fan_in)) * scale / np.sqrt(fan_in)
    b = rng.normal(size=fan_out) * 0.3
    return w.astype(np.float32), b.astype(np.float32)


def pkv_kv_size(c):
    kv = c["n_prefix_tokens"] * c["n_embd"] * 2
    return kv if c["share_layers"] else kv * c["n_layer"]


def pkv_encoder_params(name):
    """PKVEncoder's state dict (numpy float32) and the property vectors (batch, n_input_vector)."""
    c = PKV_ENCODERS[name]
    rng = _rng(101 + 10 * list(PKV_ENCODERS).index(name))
    h = c["n_hidden_cond"]
    w0, b0 = _linear(rng, h, c["n_input_vector"])
    ln_w = (1.0 + 0.3 * rng.normal(size=h)).astype(np.float32)
    ln_b = (0.3 * rng.normal(size=h)).astype(np.float32)
    w3, b3 = _linear(rng, 2 * h, h)
    wkv, bkv = _linear(rng, pkv_kv_size(c), 2 * h)
    params = {
        "processor.0.weight": w0, "processor.0.bias": b0,
        "processor.1.weight": ln_w, "processor.1.bias": ln_b,
        "processor.3.weight": w3, "processor.3.bias": b3,
        "to_kv.weight": wkv, "to_kv.bias": bkv,
    }
    cond = rng.normal(size=(c["batch"], c["n_input_vector"])).astype(np.float32)
    return params, cond


def slider_encoder_params(name, missing=True):
    """SliderEncoder's state dict (numpy float32) and the property vectors
    (batch, n_variables), some of them MISSING when ``missing``."""
    c = SLIDER_ENCODERS[name]
    rng = _rng(201 + 10 * list(SLIDER_ENCODERS).index(name))
    v, nh = c["n_variables"], c["n_hidden"]
    kv = 2 * (c["n_embd"] // c["n_head"]) * (c["n_head"] // c["sharing"])
    we, be = _linear(rng, v * kv, 1)
    wu, bu = _linear(rng, v * nh, kv, scale=1.5)
    wd, bd = _linear(rng, v * kv, nh, scale=1.5)
    params = {
        "encode_linear.weight": we, "encode_linear.bias": be,
        "upscale_linear.weight": wu, "upscale_linear.bias": bu,
        "downscale_linear.weight": wd, "downscale_linear.bias": bd,
        "attention_factor.weight": np.array([[0.75]], dtype=np.float32),
    }
    cond = rng.uniform(-2.0, 2.0, size=(c["batch"], v)).astype(np.float32)
    if missing:
        cond[1, 0] = MISSING
        cond[-1, :] = MISSING
    return params, cond


def slider_attention_inputs():
    """c_attn (Conv1D: x @ W + b) weight (E, 3E) and bias, hidden states (B, N, E), slider
    keys and values (B, H, M, D), the presence mask (B, M): row 1 lacks one variable,
    row 2 all of them."""
    a = ATT
    e, h, m = a["n_embd"], a["n_head"], a["n_variables"]
    d = e // h
    rng = _rng(301)
    w = (rng.normal(size=(e, 3 * e)) / np.sqrt(e)).astype(np.float32)
    b = (0.3 * rng.normal(size=3 * e)).astype(np.float32)
    hidden = rng.normal(size=(a["batch"], a["seq"], e)).astype(np.float32)
    keys = (1.5 * rng.normal(size=(a["batch"], h, m, d))).astype(np.float32)
    values = rng.normal(size=(a["batch"], h, m, d)).astype(np.float32)
    mask = np.ones((a["batch"], m), dtype=bool)
    mask[1, 1] = False
    mask[2, :] = False
    return w, b, hidden, keys, values, mask


# the PKV model: its conditioning encoder is PKV_ENCODERS["per_layer"]; the rest of the
# weights come from torch's initialisation under the seed
PKV_MODEL = dict(vocab_size=40, n_positions=32, seq=6)
SLIDER_MODEL = dict(vocab_size=40, n_positions=32, n_embd=24, n_layer=2, n_head=4,
                    n_variables=3, n_hidden=10, sharing=2, batch=3, seq=6)


def pkv_model_conditions():
    """The PKV model's property vectors (5, 2): the per-layer encoder's, with row 2 set to row 0's."""
    _, cond = pkv_encoder_params("per_layer")
    cond[2] = cond[0]
    return cond


def pkv_model_tokens():
    """Token ids (5, 6): rows 0, 1 and 2 share their tokens (rows 0 and 2 also their
    property vector); the padded mask left-pads row 3 and right-pads row 4."""
    rng = _rng(401)
    b, t = PKV_ENCODERS["per_layer"]["batch"], PKV_MODEL["seq"]
    ids = rng.integers(0, PKV_MODEL["vocab_size"], size=(b, t))
    ids[1] = ids[0]
    ids[2] = ids[0]
    padded = np.ones((b, t), dtype=np.int64)
    padded[3, :2] = 0
    padded[4, -2:] = 0
    return ids, padded


def slider_model_inputs():
    """Token ids (3, 6) and property vectors (3, 3): row 1 lacks variable 1, row 2 all."""
    rng = _rng(501)
    s = SLIDER_MODEL
    ids = rng.integers(0, s["vocab_size"], size=(s["batch"], s["seq"]))
    cond = rng.uniform(-2.0, 2.0, size=(s["batch"], s["n_variables"])).astype(np.float32)
    cond[1, 1] = MISSING
    cond[2, :] = MISSING
    return ids, cond
