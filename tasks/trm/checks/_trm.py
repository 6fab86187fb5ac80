"""Helpers the TRM checks share: tolerant comparison of nested outputs, and the ACT loss
of the paper recomputed in numpy (float64) from the seeded stub outputs."""
import numpy as np

# float32 throughout; a different but correct order of the same float32 operations moves
# states and logits by ~1e-6 relative over the few recursions here, gradients a bit more
RTOL, ATOL = 2e-4, 2e-5
GRAD_RTOL = 1e-3


def close(got, want, what, rtol=RTOL, atol=ATOL):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, f"{what}: shape {got.shape}, expected {want.shape}"
    if want.dtype == bool or np.issubdtype(want.dtype, np.integer):
        assert np.array_equal(got, want), f"{what}: {got.tolist()} != {want.tolist()}"
        return
    scale = max(float(np.abs(want).max()) if want.size else 0.0, 1.0)
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol,
                               atol=atol * scale, err_msg=what)


def same_tree(got, want, what, rtol=RTOL, atol=ATOL):
    if isinstance(want, dict):
        assert isinstance(got, dict), f"{what}: {type(got).__name__}, expected a dict"
        assert sorted(got) == sorted(want), f"{what}: keys {sorted(got)} != {sorted(want)}"
        for k in want:
            same_tree(got[k], want[k], f"{what}.{k}", rtol, atol)
    elif isinstance(want, list) and (not want or isinstance(want[0], (dict, list))):
        assert isinstance(got, list) and len(got) == len(want), f"{what}: length"
        for i, (g, w) in enumerate(zip(got, want)):
            same_tree(g, w, f"{what}[{i}]", rtol, atol)
    elif want is None:
        assert got is None, f"{what}: expected None (no gradient), got a value"
    elif isinstance(want, (bool, np.bool_)):
        assert bool(got) == bool(want), f"{what}: {got} != {want}"
    else:
        assert got is not None, f"{what}: None, expected a value"
        close(got, want, what, rtol, atol)


def same_grads(got, want, what):
    """Gradients: None (no gradient reached) must match; a zero gradient is taken as None."""
    assert sorted(got) == sorted(want), f"{what}: parameters {sorted(got)} != {sorted(want)}"
    for k, w in want.items():
        g = got[k]
        if w is None or not np.any(w):
            assert g is None or not np.any(g), f"{what}.{k}: a gradient where the reference has none"
        else:
            assert g is not None, f"{what}.{k}: no gradient"
            close(g, w, f"{what}.{k}", rtol=GRAD_RTOL, atol=1e-4)


def log_stablemax(x):
    s = np.where(x < 0, 1.0 / (1.0 - x + 1e-30), x + 1.0)
    return np.log(s / s.sum(-1, keepdims=True))


def bce_with_logits(q, t):
    return np.maximum(q, 0) - q * t + np.log1p(np.exp(-np.abs(q)))


def sigmoid(q):
    return 1.0 / (1.0 + np.exp(-q))


def act_loss(given, with_target):
    """lm loss (per-sequence mean over valid tokens, summed over sequences) + 0.5 (halt BCE
    against 'the whole answer is right' + continue BCE against its target), both summed."""
    logits = given["logits"].astype(np.float64)
    labels = given["labels"]
    valid = labels != -100
    counts = valid.sum(-1)
    logp = log_stablemax(logits)
    picked = np.take_along_axis(logp, np.where(valid, labels, 0)[..., None], -1)[..., 0]
    lm = (np.where(valid, -picked, 0.0).sum(-1) / np.maximum(counts, 1)).sum()
    correct = ((logits.argmax(-1) == labels) & valid).sum(-1) == counts
    q = given["q_halt_logits"].astype(np.float64)
    q_halt = bce_with_logits(q, correct).sum()
    qc = given["q_continue_logits"].astype(np.float64)
    tc = given["target_q_continue"].astype(np.float64)
    q_cont = bce_with_logits(qc, tc).sum() if with_target else 0.0
    grads = {"q_halt_logits": 0.5 * (sigmoid(q) - correct),
             "q_continue_logits": 0.5 * (sigmoid(qc) - tc) if with_target else None}
    return lm + 0.5 * (q_halt + q_cont), correct, grads


def _rms_norm(x, eps=1e-5):
    return x / np.sqrt((x ** 2).mean(-1, keepdims=True) + eps)


def _swiglu(x, weights, prefix):
    gate, up = np.split(x @ weights[prefix + ".gate_up_proj.weight"].T, 2, axis=-1)
    return (gate / (1.0 + np.exp(-gate)) * up) @ weights[prefix + ".down_proj.weight"].T


def mlp_t_block(x, weights, norm_over_sequence):
    """The attention-free block in float64: h = norm(h + MLP_t(h^T)^T), then
    norm(h + MLP(h)); the first norm over the sequence axis (the authors') or over the
    hidden axis."""
    t = x.transpose(0, 2, 1)
    r = t + _swiglu(t, weights, "mlp_t")
    h = _rms_norm(r).transpose(0, 2, 1) if norm_over_sequence else _rms_norm(r.transpose(0, 2, 1))
    return _rms_norm(h + _swiglu(h, weights, "mlp"))
