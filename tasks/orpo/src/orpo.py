"""ORPO (Hong, Lee and Thorne, 2024): monolithic preference optimisation in numpy.

A batch holds B preference pairs (x, y_w, y_l). Each response is scored by a
causal language model that gives logits of shape (B, T, V), one row of V
vocabulary logits per input position, for input ids of shape (B, T). The labels
(B, T) are the input ids with IGNORE_INDEX at the prompt and padding positions,
so that only response tokens count. The logits at position t predict the token
at position t + 1. There is no reference model.
"""

from __future__ import annotations

import numpy as np

IGNORE_INDEX = -100


def log_softmax(logits: np.ndarray) -> np.ndarray:
    """Log-probabilities over the last axis, stable for large logits."""
    shifted = logits - logits.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


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
    """Per-token log P_θ(y_t | x, y_<t) of the labels, and the response mask.

    Returns (token_logps, mask), both of shape (B, T - 1): entry t scores label
    t + 1 with the logits of position t; masked entries of token_logps are 0.
    """
    # <paper2code name="token log-probabilities">
    logits = logits[:, :-1, :]
    labels = labels[:, 1:]
    mask = labels != ignore_index
    picked = np.take_along_axis(log_softmax(logits), (labels * mask)[..., None], axis=-1)[..., 0]
    token_logps = picked * mask
    # </paper2code name="token log-probabilities">
    return token_logps, mask


def token_log_probs_grad(logits: np.ndarray, labels: np.ndarray, ignore_index: int = IGNORE_INDEX) -> np.ndarray:
    """mask_t · (onehot(y_t) − softmax(z_t)) placed at the logits that predict each label, shape (B, T, V).

    Summed over t this is the gradient of a sequence's total log-likelihood w.r.t. its logits.
    """
    labels = labels[:, 1:]
    mask = labels != ignore_index
    probs = np.exp(log_softmax(logits[:, :-1, :]))
    onehot = np.eye(logits.shape[-1])[labels * mask]
    grad = np.zeros_like(logits)
    grad[:, :-1, :] = (onehot - probs) * mask[..., None]
    return grad


def average_log_prob(logits: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """log P_θ(y|x) = (1/m) Σ_t log P_θ(y_t | x, y_<t) for every sequence, shape (B,)."""
    token_logps, mask = token_log_probs(logits, labels)
    # <paper2code name="average log-likelihood">
    return token_logps.sum(axis=1) / mask.sum(axis=1)
    # </paper2code name="average log-likelihood">


def log_odds(logp: np.ndarray) -> np.ndarray:
    """log odds_θ(y|x) = log(P / (1 − P)) from log P (< 0), computed stably."""
    # <paper2code name="log odds">
    return logp - np.log1p(-np.exp(logp))
    # </paper2code name="log odds">


def log_odds_ratio(logp_chosen: np.ndarray, logp_rejected: np.ndarray) -> np.ndarray:
    """log OR_θ(y_w, y_l) = log(odds_θ(y_w|x) / odds_θ(y_l|x))."""
    # <paper2code name="log odds ratio">
    return log_odds(logp_chosen) - log_odds(logp_rejected)
    # </paper2code name="log odds ratio">


def odds_ratio_loss(logp_chosen: np.ndarray, logp_rejected: np.ndarray) -> np.ndarray:
    """Per-pair L_OR = −log σ(log OR_θ(y_w, y_l))."""
    # <paper2code name="odds ratio loss">
    return -log_sigmoid(log_odds_ratio(logp_chosen, logp_rejected))
    # </paper2code name="odds ratio loss">


def sft_loss(chosen_logits: np.ndarray, chosen_labels: np.ndarray) -> float:
    """L_SFT: the negative log-likelihood of the chosen responses, averaged over their tokens."""
    token_logps, mask = token_log_probs(chosen_logits, chosen_labels)
    # <paper2code name="sft loss">
    return float(-token_logps.sum() / mask.sum())
    # </paper2code name="sft loss">


def orpo_metrics(logp_chosen: np.ndarray, logp_rejected: np.ndarray) -> dict[str, float]:
    """Batch means of the log-likelihoods and of the log odds ratio, and the odds-ratio accuracy."""
    # <paper2code name="orpo metrics">
    ratio = log_odds_ratio(logp_chosen, logp_rejected)
    return {
        "logps/chosen": float(np.mean(logp_chosen)),
        "logps/rejected": float(np.mean(logp_rejected)),
        "log_odds_ratio": float(np.mean(ratio)),
        "accuracy": float(np.mean(ratio > 0)),
    }
    # </paper2code name="orpo metrics">


def orpo_loss(
    chosen_logits: np.ndarray,
    chosen_labels: np.ndarray,
    rejected_logits: np.ndarray,
    rejected_labels: np.ndarray,
    lam: float = 0.1,
) -> tuple[float, dict[str, float]]:
    """L_ORPO = L_SFT + λ · L_OR over a batch of pairs, and its metrics."""
    # <paper2code name="orpo objective">
    logp_chosen = average_log_prob(chosen_logits, chosen_labels)
    logp_rejected = average_log_prob(rejected_logits, rejected_labels)
    l_sft = sft_loss(chosen_logits, chosen_labels)
    l_or = float(np.mean(odds_ratio_loss(logp_chosen, logp_rejected)))
    loss = l_sft + lam * l_or
    # </paper2code name="orpo objective">
    metrics = orpo_metrics(logp_chosen, logp_rejected)
    return loss, metrics | {"sft_loss": l_sft, "or_loss": l_or}


def odds_ratio_gradient(logp_chosen: np.ndarray, logp_rejected: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per pair, ∂L_OR/∂ log P_θ(y_w|x) and ∂L_OR/∂ log P_θ(y_l|x)."""
    # <paper2code name="odds ratio gradient">
    # <paper2code name="gradient scale delta">
    delta = sigmoid(-log_odds_ratio(logp_chosen, logp_rejected))
    # </paper2code name="gradient scale delta">
    # <paper2code name="gradient direction h">
    h_chosen = 1.0 / (1.0 - np.exp(logp_chosen))
    h_rejected = -1.0 / (1.0 - np.exp(logp_rejected))
    # </paper2code name="gradient direction h">
    return -delta * h_chosen, -delta * h_rejected
    # </paper2code name="odds ratio gradient">


def orpo_logit_gradients(
    chosen_logits: np.ndarray,
    chosen_labels: np.ndarray,
    rejected_logits: np.ndarray,
    rejected_labels: np.ndarray,
    lam: float = 0.1,
) -> tuple[np.ndarray, np.ndarray]:
    """Gradient of :func:`orpo_loss` w.r.t. the chosen and the rejected logits."""
    chosen_tokens = token_log_probs_grad(chosen_logits, chosen_labels)
    rejected_tokens = token_log_probs_grad(rejected_logits, rejected_labels)
    chosen_lengths = (chosen_labels[:, 1:] != IGNORE_INDEX).sum(axis=1)
    rejected_lengths = (rejected_labels[:, 1:] != IGNORE_INDEX).sum(axis=1)
    logp_chosen = average_log_prob(chosen_logits, chosen_labels)
    logp_rejected = average_log_prob(rejected_logits, rejected_labels)
    # <paper2code name="orpo logit gradients">
    # <paper2code name="sft loss gradient">
    grad_sft = -chosen_tokens / chosen_lengths.sum()
    # </paper2code name="sft loss gradient">
    d_chosen, d_rejected = odds_ratio_gradient(logp_chosen, logp_rejected)
    scale_chosen = lam * d_chosen / (len(d_chosen) * chosen_lengths)
    scale_rejected = lam * d_rejected / (len(d_rejected) * rejected_lengths)
    grad_chosen = grad_sft + scale_chosen[:, None, None] * chosen_tokens
    grad_rejected = scale_rejected[:, None, None] * rejected_tokens
    # </paper2code name="orpo logit gradients">
    return grad_chosen, grad_rejected


class BigramPolicy:
    """A toy causal language model: the logits at position t are row input_ids[t] of a (V, V) table."""

    def __init__(self, table: np.ndarray) -> None:
        self.table = np.array(table, dtype=float)

    def logits(self, input_ids: np.ndarray) -> np.ndarray:
        return self.table[input_ids]


def orpo_train_step(
    policy: BigramPolicy,
    chosen_ids: np.ndarray,
    chosen_labels: np.ndarray,
    rejected_ids: np.ndarray,
    rejected_labels: np.ndarray,
    lr: float,
    lam: float,
) -> None:
    """One gradient-descent step of L_ORPO on the policy's table: a single stage, no reference model."""
    # <paper2code name="orpo training step">
    grad_chosen, grad_rejected = orpo_logit_gradients(
        policy.logits(chosen_ids), chosen_labels, policy.logits(rejected_ids), rejected_labels, lam
    )
    grad_table = np.zeros_like(policy.table)
    np.add.at(grad_table, chosen_ids, grad_chosen)
    np.add.at(grad_table, rejected_ids, grad_rejected)
    policy.table -= lr * grad_table
    # </paper2code name="orpo training step">
