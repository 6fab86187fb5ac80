"""Seeded inputs for the archercoder cases and checks.

The cases and the checks both import this file (inputs/ is on the path in both
sandboxes): the checks regenerate every input from the same seeds instead of
reading it back from what the cases returned. RCB_SEED (set alike in both
sandboxes; 0 when grading) varies every random input; rcb validate runs several
seeds.

The policy is a tiny bigram language model: the logits for the token after position p
are W[input_ids[p]] + P[p] (vocabulary V). Response lengths are multiples of 5, so
that "the tokens above the 80th entropy percentile of their response" is exactly the
top 20% of its tokens under every usual percentile convention.
"""

import os

import numpy as np

SEED = 1000 * int(os.environ.get("RCB_SEED", "0"))
V = 8  # vocabulary
LP = 3  # prompt length (no padding in the prompt)
LR = 15  # response length (right-padded)


def log_softmax(x):
    z = x - x.max(axis=-1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


def forward(W, P, input_ids, temperature=1.0):
    """Per response token: its log-probability and the entropy of its distribution (float64)."""
    T = input_ids.shape[1]
    logits = (W[input_ids] + P[np.arange(T)][None]) / temperature  # (B, T, V)
    logits = logits[:, LP - 1 : T - 1]  # the distributions of the response tokens
    logp = log_softmax(logits)
    resp = input_ids[:, LP:]
    token_logp = np.take_along_axis(logp, resp[..., None], axis=-1)[..., 0]
    entropy = -(np.exp(logp) * logp).sum(-1)
    return token_logp, entropy


def batch_arrays(input_ids, lengths):
    B, T = input_ids.shape
    attention_mask = np.zeros((B, T), dtype=np.int64)
    for b, n in enumerate(lengths):
        attention_mask[b, : LP + n] = 1
    position_ids = np.broadcast_to(np.arange(T), (B, T)).copy()
    return attention_mask, position_ids


def random_batch(seed, B=4, lengths=None, log_ratio_sd=0.35, kl_sd=0.3):
    """A random batch: model weights, tokens, right padding, old/ref log-probs around the
    model's own, and a GRPO-like advantage per response."""
    rng = np.random.default_rng(seed)
    if lengths is None:
        lengths = [int(x) for x in rng.choice([5, 10, 15], size=B)]
        lengths[int(rng.integers(B))] = LR
    W = rng.normal(0.0, 1.5, (V, V)).astype(np.float32)
    P = rng.normal(0.0, 1.0, (LP + LR, V)).astype(np.float32)
    input_ids = rng.integers(0, V, (B, LP + LR))
    attention_mask, position_ids = batch_arrays(input_ids, lengths)
    logp, _ = forward(W.astype(np.float64), P.astype(np.float64), input_ids)
    old = (logp - rng.normal(0.0, log_ratio_sd, logp.shape)).astype(np.float32)
    ref = (logp + rng.normal(0.0, kl_sd, logp.shape)).astype(np.float32)
    adv_seq = rng.normal(0.0, 1.0, B)
    response_mask = attention_mask[:, LP:]
    advantages = (adv_seq[:, None] * response_mask).astype(np.float32)
    return dict(W=W, P=P, input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids,
                old_log_probs=old, ref_log_prob=ref, advantages=advantages, lengths=lengths)


# ---- the hand-worked batch ----------------------------------------------------------------------
# W = 0 except: the row of a token v >= 1 is v * e_1 (peaked: the higher v, the lower the
# entropy); the row of token 0 is all zeros (uniform over 8 tokens: entropy ln 8, the most
# possible). P = 0. So a response token has the highest entropy of its response exactly
# when the token before it is 0. Each response has one such token per 5 valid tokens.
HAND_TOKENS = [
    # prompt   | response (15, right-padded)
    [5, 6, 7, 3, 0, 4, 5, 6, 2, 0, 3, 4, 7, 1, 1, 1, 1, 1],  # 10 valid: after-0 tokens at response 2, 7
    [2, 3, 4, 5, 6, 0, 3, 7, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2],  # 5 valid: after-0 token at response 3
    [1, 2, 0, 6, 5, 3, 0, 7, 2, 4, 5, 6, 0, 1, 7, 3, 2, 6],  # 15 valid: after-0 at response 0, 4, 10
]
HAND_LENGTHS = [10, 5, 15]
HAND_HIGH = [[2, 7], [3], [0, 4, 10]]  # response positions of the high-entropy tokens
HAND_RATIO = [1.4, 0.6, 1.4]  # pi / pi_old for every token of the response
HAND_ADV = [1.0, -1.0, 1.0]


def hand_batch():
    input_ids = np.array(HAND_TOKENS)
    W = np.zeros((V, V), dtype=np.float32)
    for v in range(1, V):
        W[v, 1] = float(v)
    P = np.zeros((LP + LR, V), dtype=np.float32)
    attention_mask, position_ids = batch_arrays(input_ids, HAND_LENGTHS)
    logp, _ = forward(W.astype(np.float64), P.astype(np.float64), input_ids)
    old = logp - np.log(np.array(HAND_RATIO))[:, None]
    # reference log-probs: log pi_ref - log pi = +ln 2 on low-entropy tokens, -ln 2 on high-entropy ones
    shift = np.full(logp.shape, np.log(2.0))
    for b, high in enumerate(HAND_HIGH):
        shift[b, high] = -np.log(2.0)
    ref = logp + shift
    response_mask = attention_mask[:, LP:]
    advantages = np.array(HAND_ADV)[:, None] * response_mask
    return dict(W=W, P=P, input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids,
                old_log_probs=old.astype(np.float32), ref_log_prob=ref.astype(np.float32),
                advantages=advantages.astype(np.float32), lengths=HAND_LENGTHS)


def random_policy_inputs(seed, B=4, L=15):
    """Inputs for compute_policy_loss alone: log-probs, advantages, a response mask and
    a mask of the low-entropy tokens (what update_policy passes as high_entropy_mask)."""
    rng = np.random.default_rng(seed)
    log_prob = rng.normal(-2.0, 1.0, (B, L))
    old_log_prob = log_prob - rng.normal(0.0, 0.4, (B, L))
    advantages = np.repeat(rng.normal(0.0, 1.0, (B, 1)), L, axis=1)
    advantages[0] = -np.abs(advantages[0]) - 0.1
    advantages[1] = np.abs(advantages[1]) + 0.1
    lengths = rng.integers(5, L + 1, B)
    response_mask = (np.arange(L)[None] < lengths[:, None]).astype(np.int64)
    low_entropy = (rng.random((B, L)) < 0.8).astype(np.int64) * response_mask
    return dict(log_prob=log_prob.astype(np.float32), old_log_prob=old_log_prob.astype(np.float32),
                advantages=(advantages * response_mask).astype(np.float32), response_mask=response_mask,
                low_entropy=low_entropy)
