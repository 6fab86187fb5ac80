"""Cases for Archer's dual-token constraints: each drives the authors' code
(verl/trainer/ppo/core_algos.py::compute_policy_loss and
verl/workers/actor/dp_actor.py::DataParallelPPOActor.update_policy) on fixed or seeded
inputs and returns what it computed.

update_policy runs as written on a tiny bigram policy (W[token] + P[position]), with a
plain SGD optimizer that records the gradients it is given; the mask that update_policy
hands to compute_policy_loss is recorded on the way. The checks (another sandbox)
compare with hand-worked values, with the paper's rules recomputed from the same seeds,
and with the reference.
"""

import os
import sys
from types import SimpleNamespace

import numpy as np
import torch
from torch import nn

from _archer_inputs import SEED, hand_batch, random_batch, random_policy_inputs  # noqa: E402

import verl.workers.actor.dp_actor as dp_actor  # noqa: E402
from verl import DataProto  # noqa: E402
from verl.trainer.ppo.core_algos import compute_policy_loss  # noqa: E402
from verl.workers.actor.dp_actor import DataParallelPPOActor  # noqa: E402


class Config(dict):
    """An attribute-and-get dict, as the actor expects of its OmegaConf config."""

    def __getattr__(self, key):
        try:
            return self[key]
        except KeyError as e:
            raise AttributeError(key) from e


class BigramLM(nn.Module):
    """logits of the token after position p = W[input_ids[p]] + P[p]."""

    def __init__(self, W, P):
        super().__init__()
        self.W = nn.Parameter(torch.tensor(W, dtype=torch.float32))
        self.P = nn.Parameter(torch.tensor(P, dtype=torch.float32))

    def forward(self, input_ids, attention_mask=None, position_ids=None, use_cache=False, **kwargs):
        return SimpleNamespace(logits=self.W[input_ids] + self.P[position_ids])


class RecordingSGD(torch.optim.SGD):
    """SGD that keeps a copy of the gradients of every step."""

    def __init__(self, params, lr):
        super().__init__(params, lr=lr)
        self.recorded = []

    def step(self, closure=None):
        self.recorded.append([p.grad.detach().clone().numpy() for g in self.param_groups for p in g["params"]])
        return super().step(closure)


def dual_token_config(**overrides):
    config = Config(
        clip_ratio=0.2,
        clip_ratio_low=0.2,
        clip_ratio_high=0.2,
        clip_ratio_c=3.0,
        entropy_coeff=0,
        loss_agg_mode="token-mean",
        use_kl_loss=True,
        kl_loss_coef=0.05,
        kl_loss_type="low_var_kl",
        use_dynamic_bsz=False,
        ppo_epochs=1,
        ppo_mini_batch_size=4,
        ppo_micro_batch_size_per_gpu=4,
        grad_clip=1.0e6,
        use_token_entropy_separate=True,
        high_entropy_kl_loss_scale_coef=0.3,
        low_entropy_clip_ratio_low=0.15,
        low_entropy_clip_ratio_high=0.25,
        high_entropy_clip_ratio_low=0.4,
        high_entropy_clip_ratio_high=0.6,
    )
    config.update(overrides)
    return config


def run_update(inputs, config, lr=0.5):
    """Build the actor around a BigramLM (DataParallelPPOActor.__init__ wants
    torch.distributed; its attributes are set here as __init__ would set them on CPU)
    and run update_policy once. Returns the metrics, the gradients of every optimizer
    step and the mask passed to compute_policy_loss on every micro-batch."""
    torch.manual_seed(0)
    module = BigramLM(inputs["W"], inputs["P"])
    actor = DataParallelPPOActor.__new__(DataParallelPPOActor)
    actor.config = config
    actor.actor_module = module
    actor.actor_optimizer = RecordingSGD(module.parameters(), lr=lr)
    actor.use_remove_padding = False
    actor.use_fused_kernels = False
    actor.ulysses_sequence_parallel_size = 1
    actor.use_ulysses_sp = False
    actor.compute_entropy_from_logits = dp_actor.verl_F.entropy_from_logits
    actor.device_name = "cpu"

    B = inputs["input_ids"].shape[0]
    LR = inputs["advantages"].shape[1]
    batch = {
        "responses": torch.tensor(inputs["input_ids"][:, -LR:]),
        "input_ids": torch.tensor(inputs["input_ids"]),
        "attention_mask": torch.tensor(inputs["attention_mask"]),
        "position_ids": torch.tensor(inputs["position_ids"]),
        "old_log_probs": torch.tensor(inputs["old_log_probs"]),
        "advantages": torch.tensor(inputs["advantages"]),
        "ref_log_prob": torch.tensor(inputs["ref_log_prob"]),
    }
    data = DataProto(batch=batch, meta_info={"temperature": 1.0})
    assert B % config.ppo_mini_batch_size == 0

    masks = []
    original = dp_actor.compute_policy_loss

    def recording_compute_policy_loss(*args, **kwargs):
        mask = kwargs.get("high_entropy_mask")
        masks.append(None if mask is None else mask.detach().bool().numpy())
        return original(*args, **kwargs)

    dp_actor.compute_policy_loss = recording_compute_policy_loss
    try:
        metrics = actor.update_policy(data)
    finally:
        dp_actor.compute_policy_loss = original
    plain = {k: [float(x) for x in v] if isinstance(v, list) else float(v) for k, v in metrics.items()}
    grads = [{"W": g[0], "P": g[1]} for g in actor.actor_optimizer.recorded]
    return {"metrics": plain, "grads": grads, "masks": masks}


# ---- compute_policy_loss alone ----------------------------------------------------------------------


def per_token_losses(log_prob, old_log_prob, advantages, response_mask, **kwargs):
    """The per-token policy loss, read through compute_policy_loss with a one-token mask."""
    B, L = log_prob.shape
    out = np.full((B, L), np.nan)
    for b in range(B):
        for t in range(L):
            if response_mask[b, t]:
                one = torch.zeros(B, L, dtype=torch.int64)
                one[b, t] = 1
                loss, _, _, _ = compute_policy_loss(old_log_prob, log_prob, advantages, one, **kwargs)
                out[b, t] = float(loss) * (1.0 + 1e-8)  # masked_mean divides by (1 + 1e-8)
    return out


def policy_loss_outputs(inputs, **kwargs):
    t = {k: torch.tensor(v) for k, v in inputs.items()}
    pg_loss, pg_clipfrac, ppo_kl, pg_clipfrac_lower = compute_policy_loss(
        t["old_log_prob"], t["log_prob"], t["advantages"], t["response_mask"], **kwargs
    )
    seq_mean, _, _, _ = compute_policy_loss(
        t["old_log_prob"], t["log_prob"], t["advantages"], t["response_mask"], loss_agg_mode="seq-mean-token-mean",
        **{k: v for k, v in kwargs.items() if k != "loss_agg_mode"},
    )
    return {
        "per_token": per_token_losses(t["log_prob"], t["old_log_prob"], t["advantages"], t["response_mask"], **kwargs),
        "pg_loss": float(pg_loss),
        "pg_loss_seq_mean": float(seq_mean),
        "pg_clipfrac": float(pg_clipfrac),
        "ppo_kl": float(ppo_kl),
        "pg_clipfrac_lower": float(pg_clipfrac_lower),
    }


DUAL_CLIP = dict(
    cliprange=0.2,
    low_entropy_clip_ratio_low=0.15,
    low_entropy_clip_ratio_high=0.25,
    high_entropy_clip_ratio_low=0.4,
    high_entropy_clip_ratio_high=0.6,
    clip_ratio_c=3.0,
)


def case_clip_hand():
    """Ratios 0.5 .. 1.7 on a row with A = +1 and a row with A = -1; tokens 1, 3, 5 are
    high-entropy (the mask passed is True on the low-entropy tokens, as update_policy
    passes it). Low-entropy range [0.8, 1.2], high-entropy range [0.5, 1.5]."""
    ratio = torch.tensor([[0.5, 0.7, 0.9, 1.1, 1.3, 1.7], [0.5, 0.7, 0.9, 1.1, 1.3, 1.7]])
    log_prob = torch.full((2, 6), -1.0)
    old_log_prob = log_prob - torch.log(ratio)
    advantages = torch.tensor([[1.0] * 6, [-1.0] * 6])
    response_mask = torch.ones(2, 6, dtype=torch.int64)
    low_entropy = torch.tensor([[1, 0, 1, 0, 1, 0], [1, 0, 1, 0, 1, 0]])
    kwargs = dict(use_token_entropy_separate=True, high_entropy_mask=low_entropy, cliprange=0.2,
                  low_entropy_clip_ratio_low=0.2, low_entropy_clip_ratio_high=0.2,
                  high_entropy_clip_ratio_low=0.5, high_entropy_clip_ratio_high=0.5, clip_ratio_c=3.0)
    pg_loss, pg_clipfrac, _, _ = compute_policy_loss(old_log_prob, log_prob, advantages, response_mask, **kwargs)
    return {
        "per_token": per_token_losses(log_prob, old_log_prob, advantages, response_mask, **kwargs),
        "pg_loss": float(pg_loss),
        "pg_clipfrac": float(pg_clipfrac),
    }


def case_clip_random():
    inputs = random_policy_inputs(SEED + 11)
    low_entropy = torch.tensor(inputs.pop("low_entropy"))
    return policy_loss_outputs(inputs, use_token_entropy_separate=True, high_entropy_mask=low_entropy, **DUAL_CLIP)


def case_clip_random_standard():
    """The same inputs without the token split: one range [1 - 0.2, 1 + 0.28] for all."""
    inputs = random_policy_inputs(SEED + 11)
    inputs.pop("low_entropy")
    return policy_loss_outputs(inputs, use_token_entropy_separate=False, cliprange=0.2, cliprange_low=0.2,
                               cliprange_high=0.28, clip_ratio_c=3.0)


# ---- update_policy ------------------------------------------------------------------------------------


def case_update_hand():
    """The hand-worked batch (see _archer_inputs.hand_batch), the paper's settings:
    low-entropy clip 0.2, high-entropy clip 0.5, KL coefficient 0.001 on low-entropy
    tokens and 0 on high-entropy ones."""
    config = dual_token_config(
        ppo_mini_batch_size=3, ppo_micro_batch_size_per_gpu=3, kl_loss_coef=0.001, high_entropy_kl_loss_scale_coef=0.0,
        low_entropy_clip_ratio_low=0.2, low_entropy_clip_ratio_high=0.2,
        high_entropy_clip_ratio_low=0.5, high_entropy_clip_ratio_high=0.5,
    )
    return run_update(hand_batch(), config)


def case_update_random():
    return run_update(random_batch(SEED + 21), dual_token_config())


def case_update_micro_batches():
    """Two epochs over two mini-batches of two micro-batches of one response: four optimizer
    steps (2 epochs x 2 mini-batches), each after two backward passes."""
    config = dual_token_config(ppo_epochs=2, ppo_mini_batch_size=2, ppo_micro_batch_size_per_gpu=1)
    return run_update(random_batch(SEED + 31), config, lr=0.3)


def case_update_standard():
    """Without the token split: one clip range and one KL term for every token."""
    config = dual_token_config(use_token_entropy_separate=False)
    return run_update(random_batch(SEED + 21), config)
