"""SimPO (Meng, Xia and Chen, 2024): simple preference optimisation in numpy.

A batch holds B preference pairs (x, y_w, y_l). Each response is scored by a
causal language model that gives logits of shape (B, T, V), one row of V
vocabulary logits per input position, for input ids of shape (B, T). The labels
(B, T) are the input ids with IGNORE_INDEX at the prompt and padding positions,
so that only response tokens count. The logits at position t predict the token
at position t + 1.
"""

from __future__ import annotations

import numpy as np

IGNORE_INDEX = -100


def log_softmax(logits: np.ndarray) -> np.ndarray:
    """Log-probabilities over the last axis, stable for large logits."""
    # <paper2code name="log softmax">
    shifted = logits - logits.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    # </paper2code name="log softmax">


def log_sigmoid(x: np.ndarray) -> np.ndarray:
    """log σ(x), stable for large |x|."""
    # <paper2code name="log sigmoid">
    return -np.logaddexp(0.0, -x)
    # </paper2code name="log sigmoid">


def sigmoid(x: np.ndarray) -> np.ndarray:
    return np.exp(log_sigmoid(x))


def make_labels(input_ids: np.ndarray, prompt_lengths: list[int], lengths: list[int]) -> np.ndarray:
    """Labels for rows of input ids: IGNORE_INDEX on the prompt and after the row's length."""
    labels = np.array(input_ids, dtype=np.int64, copy=True)
    for row, (prompt, length) in enumerate(zip(prompt_lengths, lengths)):
        labels[row, :prompt] = IGNORE_INDEX
        labels[row, length:] = IGNORE_INDEX
    return labels


def token_log_probs(
    logits: np.ndarray, labels: np.ndarray, ignore_index: int = IGNORE_INDEX
) -> tuple[np.ndarray, np.ndarray]:
    """Per-token log π_θ(y_t | x, y_<t) of the labels, and the response mask.

    Returns (token_logps, mask), both of shape (B, T - 1): entry t scores label
    t + 1 with the logits of position t; masked entries of token_logps are 0.
    """
    # <paper2code name="token log-probabilities">
    # <paper2code name="shift logits and labels">
    logits = logits[:, :-1, :]
    labels = labels[:, 1:]
    # </paper2code name="shift logits and labels">
    # <paper2code name="response mask">
    mask = labels != ignore_index
    safe_labels = labels * mask
    # </paper2code name="response mask">
    # <paper2code name="gather label log-probs">
    picked = np.take_along_axis(log_softmax(logits), safe_labels[..., None], axis=-1)[..., 0]
    token_logps = picked * mask
    # </paper2code name="gather label log-probs">
    # </paper2code name="token log-probabilities">
    return token_logps, mask


def average_log_prob(logits: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """(1/|y|) log π_θ(y|x) for every sequence, shape (B,)."""
    token_logps, mask = token_log_probs(logits, labels)
    # <paper2code name="average log-likelihood">
    return token_logps.sum(axis=1) / mask.sum(axis=1)
    # </paper2code name="average log-likelihood">


def simpo_reward(logits: np.ndarray, labels: np.ndarray, beta: float) -> np.ndarray:
    """The length-normalised reward r_SimPO(x, y) = (β/|y|) log π_θ(y|x), shape (B,)."""
    # <paper2code name="length-normalized reward">
    return beta * average_log_prob(logits, labels)
    # </paper2code name="length-normalized reward">


def simpo_loss(chosen_rewards: np.ndarray, rejected_rewards: np.ndarray, gamma: float) -> np.ndarray:
    """Per-pair SimPO losses, with target reward margin γ."""
    # <paper2code name="simpo loss">
    return -log_sigmoid(chosen_rewards - rejected_rewards - gamma)
    # </paper2code name="simpo loss">


def reward_metrics(chosen_rewards: np.ndarray, rejected_rewards: np.ndarray) -> dict[str, float]:
    """Batch means of the rewards, the reward accuracy and the reward margin."""
    # <paper2code name="reward metrics">
    accuracy = float(np.mean(chosen_rewards > rejected_rewards))
    margin = float(np.mean(chosen_rewards - rejected_rewards))
    # </paper2code name="reward metrics">
    return {
        "rewards/chosen": float(np.mean(chosen_rewards)),
        "rewards/rejected": float(np.mean(rejected_rewards)),
        "rewards/accuracies": accuracy,
        "rewards/margins": margin,
    }


def simpo_batch(
    chosen_logits: np.ndarray,
    chosen_labels: np.ndarray,
    rejected_logits: np.ndarray,
    rejected_labels: np.ndarray,
    beta: float = 2.0,
    gamma: float = 1.0,
) -> tuple[float, dict[str, float]]:
    """The SimPO objective of a batch of pairs (mean over pairs) and its metrics."""
    # <paper2code name="simpo batch loss">
    chosen_rewards = simpo_reward(chosen_logits, chosen_labels, beta)
    rejected_rewards = simpo_reward(rejected_logits, rejected_labels, beta)
    loss = float(np.mean(simpo_loss(chosen_rewards, rejected_rewards, gamma)))
    # </paper2code name="simpo batch loss">
    return loss, reward_metrics(chosen_rewards, rejected_rewards)


def average_log_prob_grad(logits: np.ndarray, labels: np.ndarray, ignore_index: int = IGNORE_INDEX) -> np.ndarray:
    """Gradient of each sequence's (1/|y|) log π_θ(y|x) w.r.t. its own logits, shape (B, T, V)."""
    # <paper2code name="average log-likelihood gradient">
    labels = labels[:, 1:]
    mask = labels != ignore_index
    probs = np.exp(log_softmax(logits[:, :-1, :]))
    onehot = np.eye(logits.shape[-1])[labels * mask]
    grad = np.zeros_like(logits)
    grad[:, :-1, :] = (onehot - probs) * (mask / mask.sum(axis=1, keepdims=True))[..., None]
    # </paper2code name="average log-likelihood gradient">
    return grad


def simpo_logit_gradients(
    chosen_logits: np.ndarray,
    chosen_labels: np.ndarray,
    rejected_logits: np.ndarray,
    rejected_labels: np.ndarray,
    beta: float,
    gamma: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Gradient of the batch SimPO objective w.r.t. the chosen and the rejected logits."""
    chosen_rewards = simpo_reward(chosen_logits, chosen_labels, beta)
    rejected_rewards = simpo_reward(rejected_logits, rejected_labels, beta)
    # <paper2code name="simpo gradient">
    # <paper2code name="gradient weight">
    weight = sigmoid(gamma - (chosen_rewards - rejected_rewards))
    # </paper2code name="gradient weight">
    scale = beta * weight / len(weight)
    grad_chosen = -scale[:, None, None] * average_log_prob_grad(chosen_logits, chosen_labels)
    grad_rejected = scale[:, None, None] * average_log_prob_grad(rejected_logits, rejected_labels)
    # </paper2code name="simpo gradient">
    return grad_chosen, grad_rejected


class BigramPolicy:
    """A toy causal language model: the logits at position t are row input_ids[t] of a (V, V) table."""

    def __init__(self, table: np.ndarray) -> None:
        self.table = np.array(table, dtype=float)

    def logits(self, input_ids: np.ndarray) -> np.ndarray:
        return self.table[input_ids]


def simpo_train_step(
    policy: BigramPolicy,
    chosen_ids: np.ndarray,
    chosen_labels: np.ndarray,
    rejected_ids: np.ndarray,
    rejected_labels: np.ndarray,
    lr: float,
    beta: float,
    gamma: float,
) -> None:
    """One gradient-descent step of the SimPO objective on the policy's table (no reference model)."""
    # <paper2code name="simpo training step">
    chosen_logits = policy.logits(chosen_ids)
    rejected_logits = policy.logits(rejected_ids)
    grad_chosen, grad_rejected = simpo_logit_gradients(
        chosen_logits, chosen_labels, rejected_logits, rejected_labels, beta, gamma
    )
    # <paper2code name="table gradient">
    grad_table = np.zeros_like(policy.table)
    np.add.at(grad_table, chosen_ids, grad_chosen)
    np.add.at(grad_table, rejected_ids, grad_rejected)
    # </paper2code name="table gradient">
    policy.table -= lr * grad_table
    # </paper2code name="simpo training step">
