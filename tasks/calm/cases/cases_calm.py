"""Cases for CALM: each drives the authors' code (tiny configurations, float64 on CPU)
and returns what it computed: the generative head's block and samples, the energy score,
the next-vector training loss, the autoencoder's objective, the BrierLM estimates and
the approximate temperature sampler's picks.

Inputs are drawn from numpy generators seeded with RCB_SEED, so that the checks (another
sandbox, without this code) regenerate them; parameters come from torch.manual_seed.
Where a case needs exact control (the BrierLM and temperature-sampling cases), the
autoencoder's decoder and the generative head are replaced by small stand-ins defined
here: the decoder reads a latent's entries as token ids, the head returns a fixed pool.
"""

import math
import os
import random
import tempfile
import types

import numpy as np
import torch
from torch import nn

from models.configuration_autoencoder import AutoencoderConfig
from models.configuration_calm import CALMConfig
from models.modeling_autoencoder import Autoencoder
from models.modeling_calm import CALM
from models.modeling_energy import EnergyTransformer, MLPBlock, MLPGenerator

torch.set_num_threads(1)  # the same order of floating-point work on every machine

SEED = int(os.environ.get("RCB_SEED", "0"))
VOCAB = 40


def rng(offset):
    return np.random.default_rng(1000 * SEED + offset)


def t64(a):
    return torch.tensor(np.asarray(a), dtype=torch.float64)


def arr(t):
    return t.detach().cpu().numpy()


def randomise(module, std, seed):
    """Every parameter of ``module`` redrawn from N(0, std^2) (LayerNorm weights around 1)."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in module.named_parameters():
            noise = torch.randn(p.shape, generator=gen, dtype=torch.float64).to(p.dtype) * std
            if "ln" in name or "norm" in name:
                p.copy_(1.0 + noise if name.endswith("weight") else noise)
            else:
                p.copy_(noise)


# ---- the generative head -----------------------------------------------------------


def case_gated_block():
    torch.manual_seed(SEED)
    block = MLPBlock(12).double()
    randomise(block, 0.4, SEED + 11)
    r = rng(1)
    x = r.normal(size=(3, 5, 12))
    y = r.normal(size=(3, 5, 12))
    with torch.no_grad():
        out = block(t64(x), t64(y))
    weights = {k: arr(v) for k, v in block.state_dict().items()}
    return {"out": arr(out), "weights": weights}


def generator_config():
    return CALMConfig(hidden_size=16, noise_size=6, latent_size=5, num_mlp_layers=3)


def case_generator_sample():
    gen = MLPGenerator(generator_config()).double()
    randomise(gen, 0.3, SEED + 12)
    h = t64(rng(2).normal(size=(4, 3, 16)))
    with torch.no_grad():
        torch.manual_seed(SEED + 21)
        first = gen.sample(h)
        second = gen.sample(h)
        torch.manual_seed(SEED + 21)
        again = gen.sample(h)
        torch.manual_seed(SEED + 21)
        noise = torch.rand((4, 3, 6), dtype=torch.float64) - 0.5
    weights = {k: arr(v) for k, v in gen.state_dict().items()}
    return {
        "first": arr(first),
        "second": arr(second),
        "again": arr(again),
        "noise": arr(noise),
        "weights": weights,
    }


# ---- the energy score --------------------------------------------------------------


def energy_score(x, mean, log_std, beta):
    obj = types.SimpleNamespace(beta=beta)
    obj.distance = types.MethodType(EnergyTransformer.distance, obj)
    return EnergyTransformer.energy_score(obj, x, mean, log_std)


def case_energy_score_exact():
    """log_std = -60: every target sample is the mean, so the score is deterministic."""
    r = rng(3)
    out = {}
    for beta, xs, ms in [(1.0, (8, 6, 5), (6, 5)), (1.5, (4, 3, 2, 7), (3, 2, 7)), (0.5, (2, 5, 3), (5, 3))]:
        x = r.normal(size=xs)
        mean = r.normal(size=ms)
        log_std = np.full(ms, -60.0)
        torch.manual_seed(SEED + 31)
        score = energy_score(t64(x), t64(mean), t64(log_std), beta)
        out[f"beta={beta}"] = arr(score)
    return out


def case_energy_score_sampled():
    """A Gaussian target with std around 0.3: the score is a Monte-Carlo estimate."""
    r = rng(4)
    x = r.normal(size=(8, 40, 4))
    mean = r.normal(size=(40, 4)) * 0.5
    log_std = np.log(0.3) + 0.2 * r.normal(size=(40, 4))
    torch.manual_seed(SEED + 41)
    return {"score": arr(energy_score(t64(x), t64(mean), t64(log_std), 1.0))}


# ---- the CALM model ---------------------------------------------------------------


def tiny_models(patch_size, seed, ae_tweak=None):
    """A tiny autoencoder (saved to a temporary folder, as EnergyTransformer loads it)
    and a tiny CALM on top of it, in float64, its parameters redrawn at a scale where
    every part matters (the authors initialise the generator's output layer to zero)."""
    torch.manual_seed(seed)
    aec = AutoencoderConfig(
        vocab_size=VOCAB, hidden_size=16, intermediate_size=32, latent_size=6, patch_size=patch_size
    )
    ae = Autoencoder(aec)
    randomise(ae, 0.3, seed + 1)
    if ae_tweak is not None:
        ae_tweak(ae)
    folder = tempfile.mkdtemp()
    ae.save_pretrained(folder)
    cfg = CALMConfig(
        ae_path=folder, vocab_size=VOCAB, hidden_size=24, intermediate_size=48, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=4, latent_size=6, noise_size=8, num_mlp_layers=2,
        patch_size=patch_size, num_samples=4, pad_token_id=0,
    )
    model = EnergyTransformer(cfg)
    # The decoder's output matrix is the encoder's embedding (tied in Autoencoder.__init__);
    # save_pretrained stores the shared tensor once and from_pretrained (transformers 4.47)
    # leaves the decoder's copy uninitialised memory, so the tie is restored here.
    ae = model.ae_model
    assert ae.decoder.lm_head_weight.shape == ae.encoder.embed_tokens.weight.shape
    ae.decoder.lm_head_weight = ae.encoder.embed_tokens.weight
    randomise(model.transformer, 0.3, seed + 2)
    randomise(model.embed_proj, 0.3, seed + 3)
    randomise(model.mlp_generator, 0.3, seed + 4)
    return model.double()


def tiny_log_std(ae):
    """The encoder's log-std half pinned to -60 (a point-mass posterior)."""
    with torch.no_grad():
        lat = ae.config.latent_size
        ae.encoder.hidden_to_latent.weight[lat:] = 0.0
        ae.encoder.hidden_to_latent.bias[lat:] = -60.0


def token_batch(offset, batch, n_patches, patch_size):
    return rng(offset).integers(1, VOCAB, size=(batch, n_patches * patch_size))


def training_loss(model, input_ids, labels, seed):
    model.train()
    torch.manual_seed(seed)
    out = model(input_ids=torch.tensor(input_ids), labels=torch.tensor(labels))
    return out.loss


def case_training_loss():
    model = tiny_models(4, SEED + 50)
    ids = token_batch(5, 2, 5, 4)
    labels = ids.copy()
    labels[1, -4:] = -100  # a padded last patch in the second row
    loss = training_loss(model, ids, labels, SEED + 51)
    loss.backward()
    gen_grad = sum(float(p.grad.abs().sum()) for p in model.mlp_generator.parameters() if p.grad is not None)
    backbone_grad = sum(
        float(p.grad.abs().sum()) for p in model.transformer.layers.parameters() if p.grad is not None
    )
    proj_grad = sum(float(p.grad.abs().sum()) for p in model.embed_proj.parameters() if p.grad is not None)
    ae_grads = [p.grad is not None for p in model.ae_model.parameters()]
    model.zero_grad()
    with torch.no_grad():
        # the first patch is never a target; the last one is never an input
        first_label = labels.copy()
        first_label[:, :4] = (first_label[:, :4] + 7) % VOCAB
        last_input = ids.copy()
        last_input[:, -4:] = (last_input[:, -4:] + 5) % VOCAB
        target = labels.copy()
        target[0, 8:12] = (target[0, 8:12] + 3) % VOCAB
        context = ids.copy()
        context[0, 0] = (context[0, 0] + 1) % VOCAB
        return {
            "loss": float(loss),
            "first_label_changed": float(training_loss(model, ids, first_label, SEED + 51)),
            "last_input_changed": float(training_loss(model, last_input, labels, SEED + 51)),
            "target_changed": float(training_loss(model, ids, target, SEED + 51)),
            "context_changed": float(training_loss(model, context, labels, SEED + 51)),
            "generator_grad": gen_grad,
            "backbone_grad": backbone_grad,
            "embed_proj_grad": proj_grad,
            "ae_grads": ae_grads,
        }


def case_training_loss_point_targets():
    """The autoencoder's posterior pinned to its mean, and one sample per step."""
    model = tiny_models(4, SEED + 60, ae_tweak=tiny_log_std)
    ids = token_batch(6, 3, 4, 4)
    with torch.no_grad():
        losses = {"loss": float(training_loss(model, ids, ids.copy(), SEED + 61))}
        model.num_samples = 2
        losses["two_samples"] = float(training_loss(model, ids, ids.copy(), SEED + 62))
    return losses


def eval_forward(model, ids, seed):
    """The eval forward (energy loss and BrierLM), and the smallest gap between the best
    and the second-best logit of any token the decoder picked: the checks require it to be
    clear of float64 rounding, so that no argmax is a near tie that another machine's
    arithmetic could flip."""
    gaps = []

    def record(module, args, logits):
        top = torch.topk(logits, 2, dim=-1).values
        gaps.append(float((top[..., 0] - top[..., 1]).min()))

    hook = model.ae_model.decoder.register_forward_hook(record)
    model.eval()
    torch.manual_seed(seed)
    with torch.no_grad():
        out = model(input_ids=torch.tensor(ids), labels=torch.tensor(ids))
    hook.remove()
    return {
        "loss": float(out.loss),
        "brier": [float(getattr(out, f"brier{k}")) for k in range(1, 5)],
        "min_logit_gap": min(gaps),
    }


def case_eval_long_patches():
    return eval_forward(tiny_models(4, SEED + 70), token_batch(7, 2, 5, 4), SEED + 71)


def case_eval_short_patches():
    out = {}
    for patch in (2, 3):
        model = tiny_models(patch, SEED + 80 + patch)
        out[f"K={patch}"] = eval_forward(model, token_batch(8 + patch, 2, 6, patch), SEED + 90 + patch)
    return out


# ---- the autoencoder --------------------------------------------------------------


AE_MEANS = np.linspace(-2.0, 2.0, 6)


def pinned_latent(ae):
    """The encoder's output pinned: mean = AE_MEANS, log_std = -60, whatever the tokens."""
    with torch.no_grad():
        ae.encoder.hidden_to_latent.weight.zero_()
        ae.encoder.hidden_to_latent.bias[:6] = t64(AE_MEANS)
        ae.encoder.hidden_to_latent.bias[6:] = -60.0


def tiny_autoencoder(seed, **kwargs):
    torch.manual_seed(seed)
    cfg = AutoencoderConfig(
        vocab_size=VOCAB, hidden_size=16, intermediate_size=32, latent_size=6, patch_size=4, **kwargs
    )
    ae = Autoencoder(cfg)
    randomise(ae, 0.3, seed + 1)
    return ae.double()


def ae_loss(ae, ids, training, seed):
    ae.train(training)
    torch.manual_seed(seed)
    with torch.no_grad():
        out = ae(input_ids=torch.tensor(ids), labels=torch.tensor(ids))
    return float(out.loss), arr(out.logits)


def case_autoencoder_pinned():
    """No token masking, no dropout, a point-mass posterior: the objective is exact."""
    ae = tiny_autoencoder(SEED + 100, ae_dropout=0.0, kl_clamp=60.5, kl_weight=0.01)
    pinned_latent(ae)
    ids = token_batch(10, 3, 2, 4)
    eval_loss, eval_logits = ae_loss(ae, ids, False, SEED + 101)
    train_loss, train_logits = ae_loss(ae, ids, True, SEED + 102)
    return {"eval_loss": eval_loss, "eval_logits": eval_logits, "train_loss": train_loss, "train_logits": train_logits}


def case_autoencoder_all_dropped():
    """Dropout probability 1: every token masked and the whole latent dropped."""
    ae = tiny_autoencoder(SEED + 110, ae_dropout=1.0, kl_clamp=0.5, kl_weight=0.05)
    ids = token_batch(11, 2, 3, 4)
    other = token_batch(12, 2, 3, 4)
    loss, logits = ae_loss(ae, ids, True, SEED + 111)
    ae.train()
    torch.manual_seed(SEED + 112)
    with torch.no_grad():
        other_loss = float(ae(input_ids=torch.tensor(other), labels=torch.tensor(ids)).loss)
    return {"loss": loss, "logits": logits, "other_inputs_loss": other_loss}


def case_autoencoder_training():
    """The authors' settings (dropout 0.15, KL clamp 0.5, weight 1e-3), seeded."""
    ae = tiny_autoencoder(SEED + 120)
    ids = token_batch(13, 3, 4, 4)
    loss, logits = ae_loss(ae, ids, True, SEED + 121)
    eval_loss, eval_logits = ae_loss(ae, ids, False, SEED + 122)
    return {"loss": loss, "logits": logits, "eval_loss": eval_loss, "eval_logits": eval_logits}


# ---- BrierLM with stand-ins for the decoder ---------------------------------------


class TokenDecoder(nn.Module):
    """Reads each latent entry as a token id: latents (B, L, K) -> logits (B, L*K, V)."""

    def forward(self, latent_states=None, **kwargs):
        b, length, k = latent_states.shape
        ids = latent_states.round().long()
        return nn.functional.one_hot(ids, VOCAB).double().reshape(b, length * k, VOCAB)


def brier_inputs(offset, batch, length, patch, vocab):
    """Targets, and two predictions that agree with them (and each other) often."""
    r = rng(offset)
    targets = r.integers(0, vocab, size=(batch, length, patch))
    p1 = np.where(r.random(targets.shape) < 0.7, targets, r.integers(0, vocab, size=targets.shape))
    p2 = np.where(r.random(targets.shape) < 0.6, p1, r.integers(0, vocab, size=targets.shape))
    return targets, p1, p2


def stub_calm(patch):
    obj = types.SimpleNamespace(patch_size=patch, ae_model=types.SimpleNamespace(decoder=TokenDecoder()))
    obj.device = torch.device("cpu")
    return obj


def case_brier_long_patches():
    out = {}
    for patch, offset in ((4, 20), (6, 21)):
        targets, p1, p2 = brier_inputs(offset, 3, 7, patch, 3)
        b, length, _ = targets.shape
        third = rng(offset + 50).integers(0, 3, size=p1.shape)
        latents = np.stack([p1, p2, third]).reshape(3, b * length, patch).astype(float)
        res = CALM.eval_brier(stub_calm(patch), t64(latents), torch.tensor(targets.reshape(b, -1)), None, 0.5)
        out[f"K={patch}"] = [float(getattr(res, f"brier{k}")) for k in range(1, 5)]
    return out


def case_brier_short_patches():
    """The two samples differ at every first token, so the collision term is zero and the
    estimate is the accuracy part alone (no sampling happens)."""
    out = {}
    for patch, offset in ((1, 30), (2, 31), (3, 32)):
        targets, p1, p2 = brier_inputs(offset, 2, 9, patch, 3)
        p2[..., 0] = (p1[..., 0] + 1) % 3
        b, length, _ = targets.shape
        latents = np.stack([p1, p2]).reshape(2, b * length, patch).astype(float)
        cache = [(torch.zeros(b, 1, length, 2), torch.zeros(b, 1, length, 2))]
        outputs = types.SimpleNamespace(past_key_values=cache)
        res = CALM.eval_brier(stub_calm(patch), t64(latents), torch.tensor(targets.reshape(b, -1)), outputs, 0.5)
        out[f"K={patch}"] = [float(getattr(res, f"brier{k}")) for k in range(1, 5)]
    return out


# ---- approximate temperature sampling with a fixed pool -----------------------------


# Each row's pool of six candidate patches (two tokens each), by letter.
POOLS = {
    "skewed": "AAABBC",
    "distinct": "ABCDEF",
    "even": "AABBCC",
    "single": "AAAAAB",
}
LETTER_TOKENS = {c: (i + 1, (3 * i + 2) % VOCAB) for i, c in enumerate("ABCDEF")}


class PoolHead:
    """Stands in for the generative head: returns each row's pool (already shuffled)."""

    def __init__(self, pool):
        self.pool = pool  # (B, S, 2) tokens as floats

    def sample(self, hidden_states):
        if hidden_states.dim() == 2:  # temperature 1: one sample per row
            return self.pool[:, 0, :]
        return self.pool[:, : hidden_states.shape[1], :]


def pool_rows(kind, repeats, offset):
    r = rng(offset)
    rows = []
    for _ in range(repeats):
        letters = list(POOLS[kind])
        r.shuffle(letters)
        rows.append([LETTER_TOKENS[c] for c in letters])
    return torch.tensor(rows, dtype=torch.float64)


def case_temperature_sampling():
    out = {}
    repeats = 800
    for kind, offset in (("skewed", 40), ("distinct", 41), ("even", 42), ("single", 43)):
        pool = pool_rows(kind, repeats, offset)
        obj = stub_calm(2)
        obj.generative_head = PoolHead(pool)
        hidden = torch.zeros(repeats, 8, dtype=torch.float64)
        for temperature in (1.0, 1 / 2, 1 / 3, 1 / 4):
            random.seed(SEED * 100 + offset)
            picks = CALM.temperature_sampling(obj, hidden, temperature=temperature, num_samples=6)
            out[f"{kind}@{round(1 / temperature)}"] = arr(picks)
    # a batch shaped (2, 3, hidden): the output keeps the leading shape
    obj = stub_calm(2)
    obj.generative_head = PoolHead(pool_rows("single", 6, 44))
    random.seed(SEED)
    shaped = CALM.temperature_sampling(obj, torch.zeros(2, 3, 8, dtype=torch.float64), temperature=0.5, num_samples=6)
    out["shaped"] = arr(shaped)
    return out
