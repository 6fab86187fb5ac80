"""Seeded inputs for the deepconf cases and checks.

The cases and the checks both import this file (inputs/ is on the path in both
sandboxes): the checks regenerate every input from the same seeds instead of
reading it back from what the cases returned. RCB_SEED (set alike in both
sandboxes; 0 when grading) varies every random input; rcb validate runs several
seeds.
"""

import os

import numpy as np

SEED = 1000 * int(os.environ.get("RCB_SEED", "0"))
VOCAB = 48  # token ids 0 .. 47 of the scripted model
EOS = 0  # its end-of-sequence token
GROUP = 8  # window (group) size used by the online cases
TOPK = 20  # logprobs per position, as deepconf asks vLLM for


def log_softmax(x):
    z = x - np.max(x)
    return z - np.log(np.sum(np.exp(z)))


def logprob_positions(seed, n=60):
    """Per position: the top-k logprobs vLLM would return (k = 20, or 21 when the sampled
    token is outside the top 20); some positions return nothing."""
    rng = np.random.default_rng(seed)
    positions = []
    for t in range(n):
        if t % 13 == 5:
            positions.append([])
            continue
        lp = log_softmax(rng.normal(0.0, rng.uniform(0.5, 4.0), VOCAB))
        k = TOPK + int(rng.random() < 0.3)
        positions.append(list(np.sort(lp)[::-1][:k]))
    return positions


def conf_sequence(rng, length, level):
    """Token confidences of one trace, rounded to 3 decimals as deepconf stores them:
    a level around which the values move slowly, with a dip for some traces."""
    walk = np.cumsum(rng.normal(0.0, 0.3, length))
    walk -= np.linspace(0.0, walk[-1], length)
    confs = level + walk + rng.normal(0.0, 1.0, length)
    if rng.random() < 0.4:
        dip = min(300, length // 4)
        start = int(rng.integers(0, length - dip))
        confs[start:start + dip] -= rng.uniform(2.0, 6.0)
    return [round(float(c), 3) for c in np.clip(confs, 0.05, None)]


def long_traces(seed, n, answers=("17", "23", "42"), min_len=2100, max_len=2700):
    """n traces with token confidences long enough for deepconf's 2048-token windows."""
    rng = np.random.default_rng(seed)
    traces = []
    for i in range(n):
        length = int(rng.integers(min_len, max_len))
        level = rng.uniform(6.0, 14.0)
        traces.append({
            "id": i,
            "confs": conf_sequence(rng, length, level),
            "extracted_answer": str(rng.choice(answers)),
        })
    return traces


def processor_logits(seed, steps=48):
    """Logit rows whose peakedness rises and falls, so a window's mean confidence crosses
    a threshold more than once."""
    rng = np.random.default_rng(seed)
    phase = rng.uniform(0.0, 2.0 * np.pi)
    rows = []
    for t in range(steps):
        margin = 5.0 + 4.5 * np.sin(phase + t / 4.0) + rng.normal(0.0, 0.5)
        row = rng.normal(0.0, 1.0, VOCAB)
        row[int(rng.integers(1, VOCAB))] += max(margin, 0.0)
        rows.append(row)
    return np.array(rows)


def scripted_traces(seed, n):
    """Scripts of n reasoning traces for the scripted model: logit rows (the argmax is the
    token it emits; the last row ends the trace with EOS) and the final answer. About a
    third of the traces go through a stretch of low confidence and mostly answer wrong."""
    rng = np.random.default_rng(seed)
    scripts = []
    for _ in range(n):
        length = int(rng.integers(40, 70))
        margins = rng.uniform(3.0, 9.0) + rng.uniform(-1.0, 1.0, length)
        unsure = rng.random() < 0.35
        if unsure:
            start = int(rng.integers(5, length - 2 * GROUP))
            margins[start:start + int(rng.integers(GROUP, 2 * GROUP))] = rng.uniform(-2.0, 2.0)
        rows = rng.normal(0.0, 1.0, (length, VOCAB))
        for t in range(length):
            rows[t, int(rng.integers(1, VOCAB))] += margins[t] + 2.0
            rows[t, EOS] = -5.0
        rows[-1, EOS] = rows[-1].max() + 5.0
        answer = str(rng.choice(["17", "23", "42"])) if unsure else str(rng.choice(["42", "42", "42", "41"]))
        scripts.append((rows, answer))
    return scripts
