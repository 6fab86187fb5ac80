"""KTO (Ethayarajh et al., 2024): Kahneman–Tversky optimisation in numpy.

KTO learns from unpaired examples (x, y) that carry one binary label:
desirable or undesirable. A batch is a list of prompts, a list of completions
and a boolean array ``desirable``. Policies are given as functions
``log_prob(x, y)`` returning the sequence log-likelihood log π(y|x).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

LogProb = Callable[[int, int], float]


def sigmoid(x: np.ndarray) -> np.ndarray:
    """The logistic function σ(x), without overflow for large |x|."""
    # <paper2code name="stable sigmoid">
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))
    # </paper2code name="stable sigmoid">


def log_softmax(logits: np.ndarray) -> np.ndarray:
    shifted = logits - logits.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


def sequence_log_prob(token_logps: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """log π(y|x) = Σ_t log π(y_t | x, y_<t) over the response tokens (mask), shape (B,)."""
    # <paper2code name="sequence log-likelihood">
    return np.sum(token_logps * mask, axis=1)
    # </paper2code name="sequence log-likelihood">


def implicit_reward(policy_logps: np.ndarray, reference_logps: np.ndarray) -> np.ndarray:
    """r_θ(x, y) = log π_θ(y|x) / π_ref(y|x)."""
    # <paper2code name="implicit reward">
    return policy_logps - reference_logps
    # </paper2code name="implicit reward">


def kl_pairs(m: int) -> np.ndarray:
    """For each prompt i of a batch of m, the index j of the completion it is paired with for z0."""
    # <paper2code name="mismatched pairs">
    return np.roll(np.arange(m), -1)
    # </paper2code name="mismatched pairs">


def reference_point(policy_kl_logps: np.ndarray, reference_kl_logps: np.ndarray) -> float:
    """The reference point z0: the batch estimate of KL(π_θ || π_ref) from mismatched pairs, clamped at 0."""
    # <paper2code name="reference point">
    estimate = np.mean(policy_kl_logps - reference_kl_logps)
    return float(max(estimate, 0.0))
    # </paper2code name="reference point">


def kto_value(
    rewards: np.ndarray, z0: float, desirable: np.ndarray, beta: float, lambda_d: float, lambda_u: float
) -> np.ndarray:
    """The Kahneman–Tversky value v(x, y) of every example."""
    # <paper2code name="value function">
    # <paper2code name="desirable value">
    v_desirable = lambda_d * sigmoid(beta * (rewards - z0))
    # </paper2code name="desirable value">
    # <paper2code name="undesirable value">
    v_undesirable = lambda_u * sigmoid(beta * (z0 - rewards))
    # </paper2code name="undesirable value">
    return np.where(desirable, v_desirable, v_undesirable)
    # </paper2code name="value function">


def kto_losses(
    rewards: np.ndarray, z0: float, desirable: np.ndarray, beta: float, lambda_d: float, lambda_u: float
) -> np.ndarray:
    """Per-example KTO losses λ_y − v(x, y)."""
    # <paper2code name="kto losses">
    lambda_y = np.where(desirable, lambda_d, lambda_u)
    return lambda_y - kto_value(rewards, z0, desirable, beta, lambda_d, lambda_u)
    # </paper2code name="kto losses">


def kto_batch(
    policy: LogProb,
    reference: LogProb,
    prompts: Sequence[int],
    completions: Sequence[int],
    desirable: np.ndarray,
    beta: float = 0.1,
    lambda_d: float = 1.0,
    lambda_u: float = 1.0,
) -> tuple[float, np.ndarray, float]:
    """The KTO loss of a batch (mean over its examples), with the rewards and z0 it used."""
    m = len(prompts)
    # <paper2code name="kto batch loss">
    policy_logps = np.array([policy(x, y) for x, y in zip(prompts, completions)])
    reference_logps = np.array([reference(x, y) for x, y in zip(prompts, completions)])
    rewards = implicit_reward(policy_logps, reference_logps)
    pairs = [(prompts[i], completions[j]) for i, j in enumerate(kl_pairs(m))]
    policy_kl = np.array([policy(x, y) for x, y in pairs])
    reference_kl = np.array([reference(x, y) for x, y in pairs])
    z0 = reference_point(policy_kl, reference_kl)
    loss = float(np.mean(kto_losses(rewards, z0, desirable, beta, lambda_d, lambda_u)))
    # </paper2code name="kto batch loss">
    return loss, rewards, z0


def kto_metrics(rewards: np.ndarray, desirable: np.ndarray, z0: float, beta: float) -> dict[str, float]:
    """Mean scaled rewards β·r of the desirable and of the undesirable examples, their margin, and z0."""
    # <paper2code name="kto metrics">
    chosen = float(np.mean(beta * rewards[desirable]))
    rejected = float(np.mean(beta * rewards[~desirable]))
    return {"rewards/chosen": chosen, "rewards/rejected": rejected, "rewards/margins": chosen - rejected, "kl": z0}
    # </paper2code name="kto metrics">


def desirable_weight_range(n_desirable: int, n_undesirable: int, lambda_u: float = 1.0) -> tuple[float, float]:
    """The interval of λ_D that keeps λ_D n_D / (λ_U n_U) within the recommended [1, 4/3]."""
    # <paper2code name="desirable weight range">
    low = lambda_u * n_undesirable / n_desirable
    return low, low * 4.0 / 3.0
    # </paper2code name="desirable weight range">


def weights_balanced(lambda_d: float, lambda_u: float, n_desirable: int, n_undesirable: int) -> bool:
    """Whether λ_D n_D / (λ_U n_U) lies in the recommended [1, 4/3]."""
    # <paper2code name="weight balance check">
    ratio = lambda_d * n_desirable / (lambda_u * n_undesirable)
    return bool(1.0 <= ratio <= 4.0 / 3.0)
    # </paper2code name="weight balance check">


def kto_reward_gradient(
    rewards: np.ndarray, z0: float, desirable: np.ndarray, beta: float, lambda_d: float, lambda_u: float
) -> np.ndarray:
    """∂/∂r_i of the mean KTO loss of the batch, with z0 held constant."""
    # <paper2code name="reward gradient">
    s = sigmoid(beta * np.where(desirable, rewards - z0, z0 - rewards))
    lambda_y = np.where(desirable, lambda_d, lambda_u)
    sign = np.where(desirable, -1.0, 1.0)
    return sign * lambda_y * beta * s * (1.0 - s) / len(rewards)
    # </paper2code name="reward gradient">


class TabularPolicy:
    """A toy policy over a finite set of completions: π(y|x) = softmax(θ[x])[y], θ of shape (prompts, completions)."""

    def __init__(self, logits: np.ndarray) -> None:
        self.logits = np.array(logits, dtype=float)

    def __call__(self, x: int, y: int) -> float:
        return float(log_softmax(self.logits[x])[y])


def kto_train_step(
    policy: TabularPolicy,
    reference: LogProb,
    prompts: Sequence[int],
    completions: Sequence[int],
    desirable: np.ndarray,
    lr: float,
    beta: float = 0.1,
    lambda_d: float = 1.0,
    lambda_u: float = 1.0,
) -> float:
    """One gradient-descent step of the KTO loss on the policy's logits; returns the loss before the step."""
    loss, rewards, z0 = kto_batch(policy, reference, prompts, completions, desirable, beta, lambda_d, lambda_u)
    # <paper2code name="kto training step">
    grad_r = kto_reward_gradient(rewards, z0, desirable, beta, lambda_d, lambda_u)
    grad = np.zeros_like(policy.logits)
    for i, (x, y) in enumerate(zip(prompts, completions)):
        probs = np.exp(log_softmax(policy.logits[x]))
        grad[x] += grad_r[i] * (np.eye(len(probs))[y] - probs)
    policy.logits -= lr * grad
    # </paper2code name="kto training step">
    return loss
