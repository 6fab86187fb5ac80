"""Helpers shared by the EBT checks: comparisons and numpy closed forms."""
import numpy as np
from ebt_inputs import BATCH, DIM, SEQ, toy_start, toy_target

RTOL = 1e-7  # float64 throughout; any order of the arithmetic agrees to ~1e-12
ATOL = 1e-9


def close(got, want, what, rtol=RTOL, atol=ATOL):
    assert got is not None, f"{what}: missing"
    got = np.asarray(got, dtype=float)
    want = np.asarray(want, dtype=float)
    assert got.shape == want.shape, f"{what}: shape {got.shape}, expected {want.shape}"
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=what)


def same_tree(got, want, what):
    """Compare two case outputs (dicts, lists, arrays, numbers) entry by entry."""
    if isinstance(want, dict):
        assert isinstance(got, dict) and set(got) == set(want), f"{what}: keys {sorted(got) if isinstance(got, dict) else got}"
        for k in want:
            same_tree(got[k], want[k], f"{what}.{k}")
    elif want is None or isinstance(want, (bool, str)):
        assert got == want, f"{what}: {got!r}, expected {want!r}"
    elif isinstance(want, list) and want and not isinstance(want[0], (int, float)):
        assert isinstance(got, list) and len(got) == len(want), f"{what}: length"
        for i, (g, w) in enumerate(zip(got, want)):
            same_tree(g, w, f"{what}[{i}]")
    else:
        close(got, want, what)


def toy(offset):
    return toy_target(DIM, offset), toy_start(DIM, offset)


def toy_energy(y, t):
    return 0.5 * ((y - t) ** 2).sum(-1)


def descend(y, t, alpha, steps, clamp=None, absolute=None):
    """Gradient descent on 0.5 * ||y - t||^2: the states after each step."""
    states = []
    for _ in range(steps):
        g = y - t
        if clamp is not None:
            g = np.clip(g, -clamp, clamp)
        y = y - alpha * g
        if absolute is not None:
            y = np.clip(y, -absolute, absolute)
        states.append(y)
    return states


def log_softmax(x):
    x = x - x.max(-1, keepdims=True)
    return x - np.log(np.exp(x).sum(-1, keepdims=True))


def cross_entropy(logits, targets, smoothing=0.0, pad=0):
    """torch.nn.functional.cross_entropy(..., ignore_index=pad, label_smoothing=smoothing)."""
    logp = log_softmax(logits.reshape(-1, logits.shape[-1]))
    targets = targets.reshape(-1)
    keep = targets != pad
    nll = -logp[np.arange(len(targets)), targets]
    smooth = -logp.mean(-1)
    per = (1 - smoothing) * nll + smoothing * smooth
    return per[keep].mean()
