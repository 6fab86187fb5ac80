"""Shared by the checks: CrystaLLM-pi's conditioning worked out in numpy (float64) from
the seeded inputs (inputs/_crystallm_inputs.py), with no code of the task.

Prefix attention (PKV): the property vector goes through Linear, LayerNorm, ReLU, Linear
and a last Linear to n_layer x n_prefix_tokens x (keys | values) numbers (per layer in
that order; once for all layers when shared); each half is split into heads, giving per
layer keys and values (batch, n_head, n_prefix_tokens, head_dim) that GPT-2's attention
reads as past keys/values.

Residual attention (Slider): each property variable has its own 1 -> kv -> hidden -> kv
MLP (tanh after the first two layers), whose output is (keys | values) over the slider
heads, each repeated for the `sharing` base heads that use it. In each layer the queries
attend over the present variables only (softmax of q.k / sqrt(head_dim)); the result,
heads concatenated and scaled by the learned factor, is added to the attention output
after its projection; with no variable present it adds nothing.
"""

import numpy as np
from _crystallm_inputs import (
    ATT, MISSING, PKV_ENCODERS, SLIDER_ENCODERS, pkv_encoder_params, slider_attention_inputs,
    slider_encoder_params,
)

# float32 code against float64 closed forms, or against the reference run in float32:
# the only legitimate differences are the order of float32 sums (einsum vs matmul, fused
# or split reshapes), a few units of 1e-7 relative; 1e-5 of the largest magnitude plus
# 1e-5 relative leaves a margin of 10-100 and still sees any wrong index or scale.
RTOL, ATOL_REL = 1e-5, 1e-5


def close(got, want, what, rtol=RTOL, atol_rel=ATOL_REL):
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    assert got.shape == want.shape, f"{what}: shape {got.shape}, expected {want.shape}"
    assert np.all(np.isfinite(got)), f"{what}: not finite"
    tol = atol_rel * max(float(np.max(np.abs(want))), 1e-12) + rtol * np.abs(want)
    err = np.abs(got - want)
    worst = np.unravel_index(np.argmax(err - tol), err.shape)
    assert np.all(err <= tol), (
        f"{what}: differs at {tuple(int(i) for i in worst)}: {got[worst]!r} vs {want[worst]!r} "
        f"(max abs error {float(err.max()):.3g})"
    )


def differ(a, b, what, at_least=1e-3):
    """a and b differ by more than at_least of their magnitude."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    gap = float(np.max(np.abs(a - b)))
    assert gap > at_least * float(np.max(np.abs(b))), f"{what}: no effect (max difference {gap:.3g})"


def _layer_norm(x, g, b, eps=1e-5):
    mu = x.mean(-1, keepdims=True)
    var = x.var(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * g + b


def pkv_prefix(name, cond=None):
    """Per layer (keys, values), each (batch, n_head, n_prefix_tokens, head_dim)."""
    c = PKV_ENCODERS[name]
    p, default = pkv_encoder_params(name)
    p = {k: v.astype(np.float64) for k, v in p.items()}
    x = np.asarray(default if cond is None else cond, dtype=np.float64)
    x = x @ p["processor.0.weight"].T + p["processor.0.bias"]
    x = np.maximum(_layer_norm(x, p["processor.1.weight"], p["processor.1.bias"]), 0.0)
    x = x @ p["processor.3.weight"].T + p["processor.3.bias"]
    x = x @ p["to_kv.weight"].T + p["to_kv.bias"]
    b, L, P, H, E = x.shape[0], c["n_layer"], c["n_prefix_tokens"], c["n_head"], c["n_embd"]
    layers = 1 if c["share_layers"] else L
    x = x.reshape(b, layers, P, 2, H, E // H)  # (keys | values), then heads
    kv = x.transpose(0, 1, 3, 4, 2, 5)  # b, layer, k/v, head, prefix, dim
    return [(kv[:, 0 if c["share_layers"] else i, 0], kv[:, 0 if c["share_layers"] else i, 1]) for i in range(L)]


def slider_kv(name):
    """keys, values (batch, n_head, n_variables, head_dim) and the presence mask (batch,
    n_variables); keys and values of a missing variable are left NaN (any value is right)."""
    c = SLIDER_ENCODERS[name]
    p, cond = slider_encoder_params(name)
    p = {k: v.astype(np.float64) for k, v in p.items()}
    V, nh, H, s = c["n_variables"], c["n_hidden"], c["n_head"], c["sharing"]
    D = c["n_embd"] // H
    kv = 2 * D * (H // s)
    mask = cond != MISSING
    x = np.where(mask, cond, 0.0).astype(np.float64)
    we = p["encode_linear.weight"].reshape(V, kv)
    be = p["encode_linear.bias"].reshape(V, kv)
    wu = p["upscale_linear.weight"].reshape(V, nh, kv)
    bu = p["upscale_linear.bias"].reshape(V, nh)
    wd = p["downscale_linear.weight"].reshape(V, kv, nh)
    bd = p["downscale_linear.bias"].reshape(V, kv)
    a = np.tanh(x[:, :, None] * we + be)  # b, V, kv
    u = np.tanh(np.einsum("vhk,bvk->bvh", wu, a) + bu)
    o = np.einsum("vkh,bvh->bvk", wd, u) + bd
    o = o.reshape(o.shape[0], V, 2, H // s, D).repeat(s, axis=3)  # each slider head to `s` heads
    keys = o[:, :, 0].transpose(0, 2, 1, 3)
    values = o[:, :, 1].transpose(0, 2, 1, 3)
    keys[~np.broadcast_to(mask[:, None, :, None], keys.shape)] = np.nan
    values[~np.broadcast_to(mask[:, None, :, None], values.shape)] = np.nan
    return keys, values, mask


def slider_contribution(factor):
    """What the residual attention adds to the layer's output (batch, seq, n_embd)."""
    w, b, hidden, keys, values, mask = (np.asarray(a, dtype=np.float64) if a.dtype != bool else a
                                        for a in slider_attention_inputs())
    E, H = ATT["n_embd"], ATT["n_head"]
    D = E // H
    q = hidden @ w[:, :E] + b[:E]  # Conv1D: x @ W + b; queries are the first third
    q = q.reshape(q.shape[0], q.shape[1], H, D).transpose(0, 2, 1, 3)
    s = np.einsum("bhnd,bhmd->bhnm", q, keys) / np.sqrt(D)
    s = np.where(mask[:, None, None, :], s, -np.inf)
    s = s - np.max(np.where(np.isfinite(s), s, -1e300), axis=-1, keepdims=True)
    e = np.where(mask[:, None, None, :], np.exp(s), 0.0)
    tot = e.sum(-1, keepdims=True)
    wts = np.divide(e, tot, out=np.zeros_like(e), where=tot > 0)
    o = np.einsum("bhnm,bhmd->bhnd", wts, values)
    return factor * o.transpose(0, 2, 1, 3).reshape(q.shape[0], q.shape[2], E)
