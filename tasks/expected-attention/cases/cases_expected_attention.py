"""Cases for Expected Attention: each drives the authors' ExpectedAttentionPress on a
Llama attention layer of transformers (a tiny random configuration, float64) and
returns what it computed: the query statistics, the RoPE-averaged statistics, the
scores, the key-value pairs a compression keeps, and a whole prefill of a two-layer
Llama under the press.

Hidden states, projections, keys and values come from numpy generators seeded with
RCB_SEED, so that the checks (another sandbox, without this code) regenerate them and
compute the same quantities in closed form. The rotary base is 256 with head_dim 16,
so that RoPE's inverse frequencies are the powers 2^-i, exact in float32 (the
precision transformers computes the angles in).
"""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402
from transformers import DynamicCache, LlamaConfig, LlamaForCausalLM  # noqa: E402
from transformers.models.llama.modeling_llama import (  # noqa: E402
    LlamaAttention,
    LlamaRotaryEmbedding,
)

from kvpress import ExpectedAttentionPress  # noqa: E402

SEED = int(os.environ.get("RCB_SEED", "0"))

torch.set_num_threads(1)  # the same order of floating-point work on every machine

HIDDEN, HEADS, KV_HEADS, HEAD_DIM, THETA = 32, 4, 2, 16, 256.0


def config(num_key_value_heads=KV_HEADS, layers=1):
    return LlamaConfig(
        hidden_size=HIDDEN,
        num_attention_heads=HEADS,
        num_key_value_heads=num_key_value_heads,
        head_dim=HEAD_DIM,
        intermediate_size=48,
        num_hidden_layers=layers,
        vocab_size=101,
        max_position_embeddings=4096,
        rope_parameters={"rope_type": "default", "rope_theta": THETA},
        attn_implementation="eager",
    )


def inputs(offset, bsz, seq_len, num_key_value_heads=KV_HEADS):
    """Wq (HEADS*HEAD_DIM, HIDDEN), hidden states (bsz, seq_len, HIDDEN), keys and values
    (bsz, kv_heads, seq_len, HEAD_DIM), as checks/_ea.py draws them."""
    rng = np.random.default_rng(SEED + offset)
    wq = rng.normal(size=(HEADS * HEAD_DIM, HIDDEN)) / np.sqrt(HIDDEN)
    shift = rng.normal(size=HIDDEN)
    h = rng.normal(size=(bsz, seq_len, HIDDEN)) + shift
    keys = rng.normal(size=(bsz, num_key_value_heads, seq_len, HEAD_DIM))
    values = rng.normal(size=(bsz, num_key_value_heads, seq_len, HEAD_DIM)) * rng.uniform(0.2, 2.0, size=(1, 1, seq_len, 1))
    return wq, h, keys, values


def attention_layer(wq, num_key_value_heads=KV_HEADS):
    """A Llama attention layer with the seeded query projection and, as BasePress.__call__
    attaches it, the model's rotary embedding."""
    cfg = config(num_key_value_heads)
    module = LlamaAttention(cfg, layer_idx=0).double()
    with torch.no_grad():
        module.q_proj.weight.copy_(torch.tensor(wq))
    module.rotary_emb = LlamaRotaryEmbedding(cfg)
    return module


def out(x):
    return None if x is None else x.detach().cpu().numpy()


# ---- query statistics and the averaged RoPE ---------------------------------------------


STATS = {  # name: (n_sink, n_future_positions, use_covariance)
    "default": (4, 512, True),
    "no_sink_next_position": (0, 1, True),
    "short_horizon": (2, 24, True),
    "mean_only": (3, 40, False),
}


def case_query_statistics():
    wq, h, _, _ = inputs(1, 2, 30)
    module = attention_layer(wq)
    result = {}
    for name, (n_sink, n_future, use_cov) in STATS.items():
        press = ExpectedAttentionPress(n_sink=n_sink, n_future_positions=n_future, use_covariance=use_cov)
        with torch.no_grad():
            mu, cov = press.get_query_statistics(module, torch.tensor(h))
        result[name] = {"mu": out(mu), "cov": out(cov)}
    return result


def random_statistics(offset, bsz=2, heads=HEADS):
    rng = np.random.default_rng(SEED + offset)
    mu = rng.normal(size=(bsz, heads, HEAD_DIM))
    a = rng.normal(size=(bsz, heads, HEAD_DIM, HEAD_DIM)) / np.sqrt(HEAD_DIM)
    cov = a @ np.swapaxes(a, -1, -2)
    return mu, cov


AVG_ROPE = {  # name: (q_len, n_future_positions)
    "one_position": (0, 1),
    "next_position": (13, 1),
    "few_positions": (9, 6),
    "long_horizon": (21, 300),
}


def case_avg_rope():
    wq, _, _, _ = inputs(2, 1, 8)
    module = attention_layer(wq)
    mu, cov = random_statistics(3)
    result = {}
    for name, (q_len, n_future) in AVG_ROPE.items():
        press = ExpectedAttentionPress(n_future_positions=n_future)
        with torch.no_grad():
            m, c = press.apply_avg_rope(module, torch.tensor(mu), torch.tensor(cov), q_len)
            m0, c0 = press.apply_avg_rope(module, torch.tensor(mu), None, q_len)
        result[name] = {"mu": out(m), "cov": out(c), "mu_without_cov": out(m0), "cov_none": c0 is None}
    return result


# ---- scores ---------------------------------------------------------------------------


SCORES = {  # name: (kv_heads, n_sink, n_future, use_covariance, use_vnorm, epsilon)
    "default": (2, 4, 512, True, True, 0.0),
    "mean_only": (2, 4, 64, False, True, 0.0),
    "no_vnorm": (2, 2, 64, True, False, 0.0),
    "epsilon": (2, 4, 32, True, True, 0.05),
    "no_sink_mha": (4, 0, 16, True, True, 0.0),
    "one_kv_head": (1, 3, 48, True, True, 0.02),
}


def case_scores():
    result = {}
    for i, (name, (kv, n_sink, n_future, use_cov, use_vnorm, eps)) in enumerate(SCORES.items()):
        wq, h, keys, values = inputs(10 + i, 2, 28, kv)
        module = attention_layer(wq, kv)
        press = ExpectedAttentionPress(
            n_sink=n_sink, n_future_positions=n_future, use_covariance=use_cov, use_vnorm=use_vnorm, epsilon=eps
        )
        with torch.no_grad():
            scores = press.score(module, torch.tensor(h), torch.tensor(keys), torch.tensor(values), None, {})
        result[name] = out(scores)
    return result


def case_identical_queries():
    """Every hidden state equal: the queries have no spread, so the covariance is zero
    and the scores are those of the mean alone."""
    wq, h, keys, values = inputs(20, 1, 24)
    h[:] = h[:, :1]
    module = attention_layer(wq)
    result = {}
    for use_cov in (True, False):
        press = ExpectedAttentionPress(n_future_positions=32, use_covariance=use_cov)
        with torch.no_grad():
            mu, cov = press.get_query_statistics(module, torch.tensor(h))
            scores = press.score(module, torch.tensor(h), torch.tensor(keys), torch.tensor(values), None, {})
        result["cov" if use_cov else "mean"] = {"scores": out(scores), "cov": out(cov)}
    return result


# ---- compression ----------------------------------------------------------------------


def kept(keys, values, full_keys, full_values):
    """Where the kept keys (bsz, heads, m, d) sit in the full cache (bsz, heads, n, d),
    sorted (the kept set, whatever order the compression returns it in), and how far
    each kept value is from the full cache's value at its key's position (zero when
    keys and values were pruned together)."""
    keys, values, full_keys, full_values = out(keys), out(values), out(full_keys), out(full_values)
    positions = np.empty(keys.shape[:3], dtype=int)
    value_error = 0.0
    for b in range(keys.shape[0]):
        for j in range(keys.shape[1]):
            d = np.abs(keys[b, j][:, None, :] - full_keys[b, j][None, :, :]).max(axis=-1)
            positions[b, j] = np.argmin(d, axis=1)
            value_error = max(value_error, float(np.abs(values[b, j] - full_values[b, j][positions[b, j]]).max()))
    return {"positions": np.sort(positions, axis=-1), "value_error": value_error}


def case_compress():
    result = {}
    for name, ratio, n_sink in (("half", 0.5, 4), ("most", 0.8, 2)):
        wq, h, keys, values = inputs(30 if name == "half" else 31, 2, 40)
        module = attention_layer(wq)
        press = ExpectedAttentionPress(compression_ratio=ratio, n_sink=n_sink, n_future_positions=128)
        with torch.no_grad():
            k, v = press.compress(module, torch.tensor(h), torch.tensor(keys), torch.tensor(values), None, {})
        result[name] = {"shape": list(k.shape), **kept(k, v, torch.tensor(keys), torch.tensor(values))}
    return result


# ---- a prefill of a whole model under the press --------------------------------------------


def case_model_prefill():
    """A two-layer random Llama prefills 48 tokens with the press active (the forward hook
    compresses each layer's cache), then decodes one token from the compressed cache."""
    torch.manual_seed(SEED)
    model = LlamaForCausalLM(config(layers=2)).double().eval()
    rng = np.random.default_rng(SEED + 40)
    input_ids = torch.tensor(rng.integers(0, 101, size=(1, 48)))
    with torch.no_grad():
        full = DynamicCache()
        model(input_ids, past_key_values=full)
        press = ExpectedAttentionPress(compression_ratio=0.5, n_future_positions=64)
        scores = []  # what the press scored in each layer, so that the checks can tell near ties
        score = press.score
        press.score = lambda *args: scores.append(score(*args)) or scores[-1]
        cache = DynamicCache()
        with press(model):
            model(input_ids, past_key_values=cache)
        result = {
            "seq_length": int(cache.get_seq_length()),
            "layers": [
                kept(cache.layers[i].keys, cache.layers[i].values, full.layers[i].keys, full.layers[i].values)
                for i in range(2)
            ],
            "scores": [out(s) for s in scores],
        }
        logits = model(torch.tensor([[7]]), past_key_values=cache, position_ids=torch.tensor([[48]])).logits
    result["next_logits"] = out(logits[0, -1])
    return result
