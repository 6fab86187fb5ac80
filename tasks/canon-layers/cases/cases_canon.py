"""Cases for the Canon layers: each drives the authors' code (tiny configurations,
float64 on CPU) and returns what it computed.

The layer cases build one Canon layer with `create_canon` and run it through
`apply_canon` (whole sequences, a left-padded batch, and prefill plus token-by-token
decoding with several layers sharing one cache). The model cases build
`LlamaCanonForCausalLM` with every parameter set by name from inputs/, and return
logits and hidden states: full forward, Canon weights zeroed or set to the identity,
a changed suffix (causality), cached decoding and a left-padded batch.
"""

import contextlib
import io

import numpy as np
import torch
from transformers import DynamicCache

from _canon_inputs import (
    BASE, LAYER_DIM, LAYER_MASK, LAYERS, MODELS, PAD, PREFILLS, SEQ, changed_tokens, layer_b, layer_w,
    layer_x, param, tokens,
)
from canon_helper import ShortConvolution, apply_canon, create_canon
from configuration_llama_canon import LlamaCanonConfig
from modeling_llama_canon import LlamaCanonForCausalLM

torch.set_num_threads(1)  # the same order of floating-point work on every machine


def t64(a):
    return torch.tensor(np.asarray(a), dtype=torch.float64)


def arr(t):
    return t.detach().cpu().numpy()


def quiet(fn, *args, **kwargs):
    """Call fn with its stdout dropped (the authors' code prints masks)."""
    with contextlib.redirect_stdout(io.StringIO()):
        return fn(*args, **kwargs)


# ---- one Canon layer ---------------------------------------------------------------


def layer(spec, tag):
    kernel, act, res = LAYERS[spec]
    cfg = LlamaCanonConfig(canon_kernel=kernel, canon_activation=act, canon_residual=res)
    canon = create_canon(LAYER_DIM, cfg).double()
    with torch.no_grad():
        canon.weight.copy_(t64(layer_w(tag, kernel))[:, None, :])
    return canon


def case_canon_layer():
    out = {}
    with torch.no_grad():
        for spec in LAYERS:
            canon = layer(spec, spec)
            x = t64(layer_x(spec))
            out[spec] = arr(apply_canon("canonA", canon, x, cache=None, layer_idx=0, attention_mask=None))
    return out


def case_canon_layer_masked():
    out = {}
    with torch.no_grad():
        for spec in ("k4_res", "k3_act_res"):
            canon = layer(spec, "masked_" + spec)
            x = t64(layer_x("masked_" + spec))
            y = quiet(apply_canon, "canonA", canon, x, cache=None, layer_idx=0, attention_mask=t64(LAYER_MASK))
            out[spec] = arr(y)
    return out


STREAMS = (("canonA", 0, "k4_res"), ("canonA", 1, "k3_act_res"), ("canonB", 0, "k2_plain"))


def case_canon_layer_decode():
    """Three layers share one cache (two store names, two layer indices); after a
    prefill they are stepped one token at a time, interleaved."""
    out = {}
    with torch.no_grad():
        for prefill in PREFILLS:
            cache = DynamicCache()
            layers = [layer(spec, f"stream{i}") for i, (_, _, spec) in enumerate(STREAMS)]
            xs = [t64(layer_x(f"stream{i}")) for i in range(len(STREAMS))]
            ys = [[] for _ in STREAMS]
            for i, (store, idx, _) in enumerate(STREAMS):
                ys[i].append(apply_canon(store, layers[i], xs[i][:, :prefill], cache=cache, layer_idx=idx, attention_mask=None))
            for t in range(prefill, xs[0].shape[1]):
                for i, (store, idx, _) in enumerate(STREAMS):
                    ys[i].append(apply_canon(store, layers[i], xs[i][:, t:t + 1], cache=cache, layer_idx=idx, attention_mask=None))
            out[f"prefill{prefill}"] = [arr(torch.cat(y, dim=1)) for y in ys]
    return out


def case_canon_step_bias():
    """The short convolution with a bias (not reachable through create_canon), run
    directly: a 3-token prefill that returns the state, then one token at a time."""
    out = {}
    with torch.no_grad():
        for act in (None, "silu"):
            tag = f"bias_{act}"
            conv = ShortConvolution(hidden_size=LAYER_DIM, kernel_size=4, bias=True, activation=act, use_fast_conv1d=False).double()
            conv.weight.copy_(t64(layer_w(tag, 4))[:, None, :])
            conv.bias.copy_(t64(layer_b(tag)))
            x = t64(layer_x(tag))
            y, cache = conv(x[:, :3].clone(), output_final_state=True)
            ys = [y]
            for t in range(3, x.shape[1]):
                y, cache = conv(x[:, t:t + 1].clone(), cache=cache)
                ys.append(y)
            out[tag] = arr(torch.cat(ys, dim=1))
    return out


# ---- the model ---------------------------------------------------------------------


def model(name, canon=None, dtype=torch.float64, **overrides):
    """LlamaCanonForCausalLM for MODELS[name]; canon: None (drawn), 'zero' or 'identity'."""
    cfg = LlamaCanonConfig(**BASE, **{**MODELS[name], **overrides})
    m = LlamaCanonForCausalLM(cfg).to(dtype).eval()
    with torch.no_grad():
        for pname, p in m.named_parameters():
            value = t64(param(pname, tuple(p.shape))).to(dtype)
            if "canon" in pname and canon == "zero":
                value = torch.zeros_like(value)
            elif "canon" in pname and canon == "identity":
                value = torch.zeros_like(value)
                value[..., -1] = 1.0
            p.copy_(value)
    return m


def run(m, ids, **kwargs):
    return m(input_ids=torch.as_tensor(np.asarray(ids)), **kwargs)


def case_model_forward():
    out = {}
    with torch.no_grad():
        for name in MODELS:
            res = run(model(name), tokens("forward"), output_hidden_states=True)
            out[name] = {"logits": arr(res.logits), "hidden": [arr(h) for h in res.hidden_states]}
    return out


def case_model_neutral_canon():
    """Canon weights zero (with the residual) or the current-token tap only (without):
    both should leave the model as it is without Canon layers."""
    ids = tokens("neutral")
    with torch.no_grad():
        return {
            "none": arr(run(model("none"), ids).logits),
            "none_qk_norm": arr(run(model("none", qk_norm=True), ids).logits),
            "abcd_zero": arr(run(model("abcd", canon="zero"), ids).logits),
            "c_zero": arr(run(model("c", canon="zero"), ids).logits),
            "abcd_plain_k2_identity": arr(run(model("abcd_plain_k2", canon="identity"), ids).logits),
        }


def case_model_causal():
    out = {}
    with torch.no_grad():
        for name in ("abcd", "abcd_act_k3"):
            m = model(name)
            out[name] = {
                "original": arr(run(m, tokens("causal")).logits),
                "changed": arr(run(m, changed_tokens("causal")).logits),
            }
    return out


def case_model_decode():
    out = {}
    ids = torch.as_tensor(tokens("decode"))
    with torch.no_grad():
        for name in ("abcd", "abcd_act_k3", "b", "d"):
            m = model(name)
            res = {"full": arr(run(m, ids).logits)}
            for prefill in PREFILLS:
                cache = DynamicCache()
                steps = [m(input_ids=ids[:, :prefill], past_key_values=cache, use_cache=True).logits]
                for t in range(prefill, SEQ):
                    steps.append(m(input_ids=ids[:, t:t + 1], past_key_values=cache, use_cache=True).logits)
                res[f"prefill{prefill}"] = arr(torch.cat(steps, dim=1))
            out[name] = res
    return out


def case_model_padding():
    """Row 0 is left-padded by PAD tokens; also returned: row 0's tokens on their own.
    In float32: the authors' eager attention takes its softmax in float32, where the
    float64 mask value of a fully masked (padded) query row would overflow to -inf."""
    ids = tokens("padding")
    padded = ids.copy()
    padded[0, :PAD] = 0
    mask = np.ones_like(ids)
    mask[0, :PAD] = 0
    with torch.no_grad():
        m = model("abcd", dtype=torch.float32)
        res = quiet(run, m, padded, attention_mask=torch.as_tensor(mask))
        alone = run(m, ids[:1, PAD:])
    return {"padded": arr(res.logits), "alone": arr(alone.logits)}
