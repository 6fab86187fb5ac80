"""Cases for CE-GPPO (arXiv 2509.20712): each drives the authors'
verl/trainer/ppo/core_algos.py::compute_gppo_loss_general_beta on fixed or seeded
inputs and returns what it computed: the loss and the three metrics it returns, the
gradient of the loss with respect to log_prob (torch.autograd), and for some cases the
per-token loss (the loss with a response mask that keeps one token).

The checks (another sandbox) compare with hand-worked values, with the paper's
objective recomputed in numpy from the same seeds, and with the reference.
"""

import numpy as np
import torch

from _gppo_inputs import (
    CLIP_RATIO_C,
    ENT_BETAS,
    ENT_CLIP,
    RANDOM_SETTINGS,
    entropy_policy,
    hand_batch,
    random_batch,
)

from verl.trainer.ppo.core_algos import compute_gppo_loss_general_beta  # noqa: E402
import verl.utils.torch_functional as verl_F  # noqa: E402

torch.set_num_threads(1)


def run_loss(batch, loss_agg_mode, per_token=False, **kwargs):
    old_log_prob, log_prob, advantages, response_mask = (torch.tensor(x) for x in batch)
    log_prob = log_prob.clone().requires_grad_(True)
    pg_loss, pg_clipfrac, ppo_kl, pg_clipfrac_lower = compute_gppo_loss_general_beta(
        old_log_prob=old_log_prob, log_prob=log_prob, advantages=advantages, response_mask=response_mask,
        clip_ratio_c=CLIP_RATIO_C, loss_agg_mode=loss_agg_mode, **kwargs,
    )
    pg_loss.backward()
    out = {
        "pg_loss": float(pg_loss),
        "pg_clipfrac": float(pg_clipfrac),
        "ppo_kl": float(ppo_kl),
        "pg_clipfrac_lower": float(pg_clipfrac_lower),
        "grad": log_prob.grad.detach().numpy().astype(np.float64),
    }
    if per_token:
        values = np.zeros(log_prob.shape)
        grads = np.zeros(log_prob.shape)
        for b in range(values.shape[0]):
            for t in range(values.shape[1]):
                one = torch.zeros_like(response_mask)
                one[b, t] = 1
                lp = torch.tensor(batch[1]).requires_grad_(True)
                loss = compute_gppo_loss_general_beta(
                    old_log_prob=old_log_prob, log_prob=lp, advantages=advantages, response_mask=one,
                    clip_ratio_c=CLIP_RATIO_C, loss_agg_mode="token-mean", **kwargs,
                )[0]
                loss.backward()
                values[b, t] = float(loss)
                grads[b, t] = float(lp.grad[b, t])
        out["per_token"] = values
        out["per_token_grad"] = grads
    return out


HAND = dict(cliprange=0.2, cliprange_low=0.2, cliprange_high=0.28, gppo_loss_beta1=0.5, gppo_loss_beta2=1.0)


def case_hand():
    """Ratios 0.5 .. 1.7 with A = +1 and A = -1, and a response with A = -2 whose ratios
    reach past the dual-clip bound 3; clip interval [0.8, 1.28], beta1 = 0.5, beta2 = 1."""
    return run_loss(hand_batch(), "token-mean", per_token=True, **HAND)


def case_hand_seq_mean():
    return run_loss(hand_batch(), "seq-mean-token-mean", **HAND)


def case_random():
    """Every setting of RANDOM_SETTINGS on the same seeded batch; per-token values for the first."""
    batch = random_batch()
    return {
        name: run_loss(batch, mode, per_token=(i == 0), **kwargs)
        for i, (name, mode, kwargs) in enumerate(RANDOM_SETTINGS)
    }


def case_entropy():
    """A tiny categorical policy: log_prob of the sampled tokens from logits (T, V) through
    verl's logprobs_from_logits; the gradient of the loss with respect to the logits for
    each (beta1, beta2) of ENT_BETAS (the checks turn it into the first-order entropy
    change of a gradient step)."""
    logits_np, tokens, ratio, advantages = entropy_policy()
    out = []
    for beta1, beta2 in ENT_BETAS:
        logits = torch.tensor(logits_np[None], requires_grad=True)
        log_prob = verl_F.logprobs_from_logits(logits, torch.tensor(tokens[None]))
        old_log_prob = log_prob.detach() - torch.log(torch.tensor(ratio[None]))
        pg_loss = compute_gppo_loss_general_beta(
            old_log_prob=old_log_prob, log_prob=log_prob, advantages=torch.tensor(advantages[None]),
            response_mask=torch.ones(1, len(tokens), dtype=torch.float64), clip_ratio_c=CLIP_RATIO_C,
            loss_agg_mode="token-mean", gppo_loss_beta1=beta1, gppo_loss_beta2=beta2, **ENT_CLIP,
        )[0]
        pg_loss.backward()
        out.append({"pg_loss": float(pg_loss), "grad_logits": logits.grad[0].numpy()})
    return out
