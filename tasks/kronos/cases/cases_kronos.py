"""Cases for Kronos: each builds a small tokenizer or predictor from a seed (the authors'
classes, a tiny configuration so that everything runs on one CPU core in seconds), drives
the code under test on seeded inputs and returns what it computed.

The checks (another sandbox, without this code) regenerate the numpy inputs from the same
seeds and compare the outputs with closed forms (bit codes, cross-entropies, the fusion
projection, RMS normalisation), with relations between the outputs of one case, and with
the reference's outputs.
"""

import os

import numpy as np
import torch
from model.kronos import Kronos, KronosTokenizer, auto_regressive_inference
from model.module import BSQuantizer, DependencyAwareLayer, DualHead, HierarchicalEmbedding

# RCB_SEED varies every random input and every model's weights (rcb validate runs several
# seeds); each input is drawn from SEED + a fixed offset, and checks/_inputs.py agrees.
SEED = 1000 * int(os.environ.get("RCB_SEED", "0"))
S1_BITS, S2_BITS = 4, 4
D_MODEL = 32


def rng(offset):
    return np.random.default_rng(SEED + offset)


def tensor(a):
    return torch.from_numpy(np.ascontiguousarray(a))


def quantizer():
    return BSQuantizer(S1_BITS, S2_BITS, beta=0.05, gamma0=1.0, gamma=1.1, zeta=0.05, group_size=4).eval()


def tokenizer():
    torch.manual_seed(SEED + 100)
    tok = KronosTokenizer(
        d_in=6, d_model=D_MODEL, n_heads=4, ff_dim=64, n_enc_layers=3, n_dec_layers=3,
        ffn_dropout_p=0.0, attn_dropout_p=0.0, resid_dropout_p=0.0,
        s1_bits=S1_BITS, s2_bits=S2_BITS, beta=0.05, gamma0=1.0, gamma=1.1, zeta=0.05, group_size=4,
    )  # fmt: skip
    return tok.eval()


def predictor():
    torch.manual_seed(SEED + 200)
    model = Kronos(
        s1_bits=S1_BITS, s2_bits=S2_BITS, n_layers=2, d_model=D_MODEL, n_heads=4, ff_dim=64,
        ffn_dropout_p=0.0, attn_dropout_p=0.0, resid_dropout_p=0.0, token_dropout_p=0.0, learn_te=False,
    )  # fmt: skip
    return model.eval()


def klines(offset, batch, length):
    """Normalised K-lines (open, high, low, close, volume, amount), a few beyond the clip."""
    g = rng(offset)
    x = g.standard_normal((batch, length, 6)).astype(np.float32)
    x[:, 1, 4] = 40.0
    x[:, 2, 0] = -25.0
    return x


def stamps(offset, batch, length):
    """minute, hour, weekday, day, month as floats, as the predictor passes them."""
    g = rng(offset)
    high = np.array([60, 24, 7, 32, 13])
    return (g.integers(0, high, size=(batch, length, 5))).astype(np.float32)


def token_ids(offset, batch, length, bits):
    return rng(offset).integers(0, 2**bits, size=(batch, length))


# ---- the tokenizer: binary codes split into a coarse and a fine subtoken ------------------


def case_bits_to_indices():
    q = quantizer()
    scale = 1.0 / np.sqrt(8.0)
    hand = np.array([[[1, -1, 1, 1, -1, -1, -1, 1]]], dtype=np.float32) * scale
    with_zero = np.array([[[0, -1, -1, 1, 1, -1, 0, -1]]], dtype=np.float32)
    random_bits = np.where(rng(1).standard_normal((3, 5, 8)) > 0, 1.0, -1.0).astype(np.float32) * scale
    return {
        "hand": q.bits_to_indices(tensor(hand)),
        "hand_coarse": q.bits_to_indices(tensor(hand[..., :4])),
        "with_zero": q.bits_to_indices(tensor(with_zero)),
        "random": q.bits_to_indices(tensor(random_bits)),
    }


def case_quantizer():
    q = quantizer()
    z = rng(2).standard_normal((2, 5, 8)).astype(np.float32) * 3.0
    loss_half, quantized_half, (coarse, fine) = q(tensor(z), half=True)
    loss_full, quantized_full, full = q(tensor(z), half=False)
    loss_fast, quantized_fast, (coarse_fast, fine_fast) = q(tensor(z), half=True, collect_metrics=False)
    return {
        "loss_half": loss_half, "quantized_half": quantized_half, "coarse": coarse, "fine": fine,
        "loss_full": loss_full, "quantized_full": quantized_full, "full": full,
        "loss_fast": loss_fast, "quantized_fast": quantized_fast,
        "coarse_fast": coarse_fast, "fine_fast": fine_fast,
    }  # fmt: skip


def case_tokenizer_round_trip():
    tok = tokenizer()
    x = tensor(klines(3, 2, 12))
    with torch.no_grad():
        (z_pre, z), bsq_loss, quantized, z_indices = tok(x)
        coarse, fine = tok.encode(x, half=True)
        full = tok.encode(x, half=False)
        bits_half = tok.indices_to_bits((coarse, fine), half=True)
        bits_full = tok.indices_to_bits(full, half=False)
        decoded = tok.decode([coarse, fine], half=True)
    return {
        "z_pre": z_pre, "z": z, "bsq_loss": bsq_loss, "quantized": quantized, "z_indices": z_indices,
        "coarse": coarse, "fine": fine, "full": full,
        "bits_half": bits_half, "bits_full": bits_full, "decoded": decoded,
    }  # fmt: skip


def case_indices_to_bits_hand():
    tok = tokenizer()
    coarse = torch.tensor([[13, 0, 15]])
    fine = torch.tensor([[8, 15, 6]])
    full = torch.tensor([[141, 255, 0]])
    return {
        "half": tok.indices_to_bits((coarse, fine), half=True),
        "full": tok.indices_to_bits(full, half=False),
    }


# ---- the predictor: hierarchical embedding, dependency-aware layer, dual head --------------


def case_hierarchical_embedding():
    torch.manual_seed(SEED + 300)
    emb = HierarchicalEmbedding(S1_BITS, S2_BITS, D_MODEL)
    s1 = token_ids(4, 3, 7, S1_BITS)
    s2 = token_ids(5, 3, 7, S2_BITS)
    composite = (s1 << S2_BITS) | s2
    with torch.no_grad():
        return {
            "as_list": emb([tensor(s1), tensor(s2)]),
            "as_tuple": emb((tensor(s1), tensor(s2))),
            "composite": emb(tensor(composite)),
            "emb_s1": emb.emb_s1.weight, "emb_s2": emb.emb_s2.weight,
            "fusion_weight": emb.fusion_proj.weight, "fusion_bias": emb.fusion_proj.bias,
        }  # fmt: skip


def case_dependency_aware_layer():
    torch.manual_seed(SEED + 400)
    layer = DependencyAwareLayer(D_MODEL).eval()
    g = rng(6)
    hidden = tensor(g.standard_normal((2, 7, D_MODEL)).astype(np.float32))
    sibling = tensor(g.standard_normal((2, 7, D_MODEL)).astype(np.float32))
    last = sibling[:, -1:, :]
    with torch.no_grad():
        return {
            "out": layer(hidden, sibling),
            "attn": layer.cross_attn(query=sibling, key=hidden, value=hidden),
            "out_last": layer(hidden, last),
            "attn_last": layer.cross_attn(query=last, key=hidden, value=hidden),
        }


def case_dual_head_loss():
    torch.manual_seed(SEED + 500)
    head = DualHead(S1_BITS, S2_BITS, D_MODEL)
    g = rng(7)
    s1_logits = g.standard_normal((3, 6, 2**S1_BITS)).astype(np.float32) * 2.0
    s2_logits = g.standard_normal((3, 6, 2**S2_BITS)).astype(np.float32) * 2.0
    s1_targets = g.integers(0, 2**S1_BITS, size=(3, 6))
    s2_targets = g.integers(0, 2**S2_BITS, size=(3, 6))
    padding = (g.random((3, 6)) < 0.3).astype(np.int64)
    padding[0, 0] = 0
    args = (tensor(s1_logits), tensor(s2_logits), tensor(s1_targets), tensor(s2_targets))
    with torch.no_grad():
        return {
            "no_mask": list(head.compute_loss(*args)),
            "mask": list(head.compute_loss(*args, padding_mask=tensor(padding))),
            "mask_none_padded": list(head.compute_loss(*args, padding_mask=torch.zeros(3, 6, dtype=torch.long))),
        }


def case_teacher_forcing():
    model = predictor()
    s1 = tensor(token_ids(8, 2, 9, S1_BITS))
    s2 = tensor(token_ids(9, 2, 9, S2_BITS))
    targets = tensor(token_ids(10, 2, 9, S1_BITS))
    stamp = tensor(stamps(11, 2, 9))
    with torch.no_grad():
        s1_logits, s2_logits = model(s1, s2, stamp, use_teacher_forcing=True, s1_targets=targets)
        s1_direct, context = model.decode_s1(s1, s2, stamp)
        s2_direct = model.decode_s2(context, targets)
        no_stamp = model(s1, s2, use_teacher_forcing=True, s1_targets=targets)
    return {
        "s1_logits": s1_logits, "s2_logits": s2_logits,
        "s1_direct": s1_direct, "s2_direct": s2_direct, "no_stamp": list(no_stamp),
    }  # fmt: skip


def case_sampled_coarse_token():
    """Without teacher forcing the coarse token is sampled from the model's own s1
    distribution. Biasing the s1 head to two tokens (5 and 11, probability 1/2 each) makes
    every correct sampler give one of two known conditionals, whatever random numbers
    it draws."""
    model = predictor()
    with torch.no_grad():
        model.head.proj_s1.weight.zero_()
        model.head.proj_s1.bias.fill_(-60.0)
        model.head.proj_s1.bias[5] = 0.0
        model.head.proj_s1.bias[11] = 0.0
    s1 = tensor(token_ids(12, 32, 8, S1_BITS))
    s2 = tensor(token_ids(13, 32, 8, S2_BITS))
    torch.manual_seed(SEED + 600)
    with torch.no_grad():
        s1_logits, s2_logits = model(s1, s2)
        _, context = model.decode_s1(s1, s2)
        if_5 = model.decode_s2(context, torch.full_like(s1, 5))
        if_11 = model.decode_s2(context, torch.full_like(s1, 11))
    return {"s1_logits": s1_logits, "s2_logits": s2_logits, "if_5": if_5, "if_11": if_11}


# ---- autoregressive inference ---------------------------------------------------------------


class Recording:
    """Passes every call through to the wrapped tokenizer or model and keeps what the
    inference code handed to it: the windows of tokens and time stamps it feeds the
    predictor, the coarse tokens it conditions the fine head on, the tokens it decodes."""

    def __init__(self, inner):
        self.inner = inner
        self.calls = {}

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def record(self, name, *values):
        self.calls.setdefault(name, []).append([v.detach().clone() for v in values])


class RecordingPredictor(Recording):
    def decode_s1(self, s1_ids, s2_ids, stamp=None, padding_mask=None):
        self.record("decode_s1", s1_ids, s2_ids, stamp)
        return self.inner.decode_s1(s1_ids, s2_ids, stamp, padding_mask)

    def decode_s2(self, context, s1_ids, padding_mask=None):
        self.record("decode_s2", s1_ids)
        return self.inner.decode_s2(context, s1_ids, padding_mask)


class RecordingTokenizer(Recording):
    def decode(self, x, half=False):
        self.record("decode", *x)
        return self.inner.decode(x, half)


def infer(x, x_stamp, y_stamp, max_context, pred_len, **kw):
    """auto_regressive_inference on a fresh tokenizer and predictor, with what they were
    handed; and the tokens of the clipped history, from the tokenizer itself."""
    tok, model = RecordingTokenizer(tokenizer()), RecordingPredictor(predictor())
    preds = auto_regressive_inference(tok, model, tensor(x), tensor(x_stamp), tensor(y_stamp), max_context, pred_len, **kw)
    with torch.no_grad():
        history = tok.inner.encode(torch.clip(tensor(x), -5, 5), half=True)
    windows = model.calls.get("decode_s1", [])
    return {
        "preds": preds,
        "history": list(history),
        "windows": [w[:2] for w in windows],
        "stamps": [w[2] for w in windows],
        "coarse_samples": [c[0] for c in model.calls.get("decode_s2", [])],
        "decoded": tok.calls.get("decode", [[]])[-1],
    }


def case_inference_greedy():
    """top_k = 1: every path takes the most likely coarse and fine token, no randomness."""
    x, xs, ys = klines(14, 2, 10), stamps(15, 2, 10), stamps(16, 2, 5)
    return {
        "three_paths": infer(x, xs, ys, 12, 5, top_k=1, sample_count=3),
        "one_path": infer(x, xs, ys, 12, 5, top_k=1, sample_count=1),
    }


def case_inference_history():
    """A context window holding the whole sequence: the decoder is causal, so the first
    positions of the output are the decoded (clipped) history, whatever is generated."""
    x, xs, ys = klines(17, 2, 9), stamps(18, 2, 9), stamps(19, 2, 4)
    tok = tokenizer()
    with torch.no_grad():
        decoded_history = tok.decode(tok.encode(torch.clip(tensor(x), -5, 5), half=True), half=True)
    return {"run": infer(x, xs, ys, 32, 4, top_k=1, sample_count=2), "decoded_history": decoded_history}


def case_inference_long_context():
    """The history is longer than the context window: only its last max_context tokens
    are read, and the window slides as tokens are generated."""
    x, xs, ys = klines(20, 2, 14), stamps(21, 2, 14), stamps(22, 2, 6)
    return infer(x, xs, ys, 8, 6, top_k=1, sample_count=2)


def case_inference_sampled():
    """Temperature sampling with nucleus filtering, averaged over four paths of one series.
    The random numbers are drawn by sample_from_logits, once for the coarse and then once
    for the fine token of every step: a correct implementation draws them in this order,
    and with one series every path starts from the same tokens, so the mean over paths
    does not depend on how the paths are laid out in the batch."""
    x, xs, ys = klines(23, 1, 10), stamps(24, 1, 10), stamps(25, 1, 6)
    torch.manual_seed(SEED + 700)
    return infer(x, xs, ys, 12, 6, T=1.0, top_k=0, top_p=0.9, sample_count=4)
