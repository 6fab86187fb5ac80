"""Checks for the EBT task: the System 2 thinking loop (gradient descent on the learned
energy) compared with the reference's outputs on tiny seeded models, and against closed
forms on a convex toy energy 0.5 * ||y - t||^2 (identity vocab-to-embedding map), where
step k of size alpha gives y_k = t + (1 - alpha)^k (y_0 - t).

Tolerances: everything runs in float64, so any order of the arithmetic agrees to about
1e-12; the checks allow 1e-7 relative (1e-9 absolute). Comparisons of runs that draw
random numbers (Langevin noise, random step sizes and step counts, replay sampling) hold
only when a correct implementation draws them in the authors' order, which the visible
code fixes (one draw per call, in the order the paper's algorithm takes them)."""
import numpy as np
from _ebt import close, cross_entropy, descend, same_tree, toy, toy_energy
from ebt_inputs import BATCH, SEQ, VOCAB, token_batch


def _compare(outputs, reference, name):
    same_tree(outputs[name], reference[name], name)


def test_forward_matches_reference(outputs, reference):
    for name in ["forward_default", "forward_log_probs", "forward_clamps", "forward_prob_dist_embed",
                 "forward_unnormalised"]:
        _compare(outputs, reference, name)


def test_forward_shapes_and_log_probs(outputs):
    out = outputs["forward_log_probs"]
    d = np.asarray(out["distributions"])
    assert d.shape == (3, BATCH, SEQ, VOCAB)
    assert np.asarray(out["energies"]).shape == (3, BATCH, SEQ)
    close(np.exp(d).sum(-1), np.ones((3, BATCH, SEQ)), "log-probabilities sum to one")


def test_forward_clamps_bound_the_candidate(outputs):
    d = np.asarray(outputs["forward_clamps"]["distributions"])
    assert np.abs(d).max() <= 0.4 / 0.8 + 1e-12


def test_langevin_matches_reference(outputs, reference):
    _compare(outputs, reference, "forward_langevin")
    noisy = np.asarray(outputs["forward_langevin"]["distributions"])
    assert np.isfinite(noisy).all()


def test_random_steps(outputs, reference):
    out = outputs["forward_random_steps"]
    for name in ["all_eval", "final_eval"]:
        assert np.asarray(out[name]["energies"]).shape[0] == 5, name  # 2 steps + 3 on the final landscape
    assert 3 <= np.asarray(out["all_train"]["energies"]).shape[0] <= 9
    assert 3 <= np.asarray(out["final_train"]["energies"]).shape[0] <= 5
    _compare(outputs, reference, "forward_random_steps")


def test_toy_descent_closed_form(outputs):
    out = outputs["toy_descent"]
    for name, offset, alpha, steps, clamp, absolute in [
            ("small", 0, 0.3, 4, None, None), ("big", 1, 1.5, 3, None, None), ("tiny_alpha", 2, 1e-4, 2, None, None),
            ("clamped", 3, 0.5, 3, 0.2 / 0.5, None), ("abs_clamp", 4, 0.25, 2, None, 1.0)]:
        t, y0 = toy(offset)
        states = descend(y0, t, alpha, steps, clamp, absolute)
        close(out[name]["distributions"], np.stack(states), f"{name}: candidates")
        close(out[name]["energies"], np.stack([toy_energy(y, t) for y in [y0] + states[:-1]]), f"{name}: energies")
        assert list(out[name]["calls"]) == list(range(steps)), name


def test_toy_energy_decreases(outputs):
    e = np.asarray(outputs["toy_descent"]["small"]["energies"])
    assert (np.diff(e, axis=0) < 0).all()
    e = np.asarray(outputs["toy_descent"]["clamped"]["energies"])
    assert (np.diff(e, axis=0) < 0).all()


def test_toy_extra_steps_on_final_landscape(outputs):
    out = outputs["toy_extra_steps"]
    t, y0 = toy(5)
    states = descend(y0, t, 0.2, 5)
    close(out["distributions"], np.stack(states), "candidates")
    assert list(out["calls"]) == [0, 1, 2, 2, 2]


def _trajectory_losses(fwd, smoothing=0.0):
    ids = token_batch(7)
    d = np.asarray(fwd["distributions"])
    k = d.shape[0]
    losses = []
    for i in range(k):
        eps = 0.0 if k <= 1 else (k - 1 - i) / (k - 1) * smoothing
        losses.append(cross_entropy(d[i], ids[:, 1:], eps))
    return np.array(losses)


def test_trajectory_loss_closed_form(outputs):
    out = outputs["loss_and_grads"]
    for name, coeff, smoothing, truncated in [("full", 1.0, 0.0, False), ("truncated", 1.0, 0.0, True),
                                              ("smoothed", 1.0, 0.3, False), ("coeff", 0.5, 0.0, False)]:
        res = out[name]
        losses = _trajectory_losses(res["forward"], smoothing)
        want = losses[-1] if truncated else losses.mean()
        close(res["loss"], coeff * want, f"{name}: loss")
        close(res["final_step_loss"], losses[-1], f"{name}: final step loss")
        close(res["initial_loss"], losses[0], f"{name}: initial loss")
        close(res["perplexity"], np.exp(losses[-1]), f"{name}: perplexity")
        e = np.asarray(res["forward"]["energies"])
        close(res["initial_final_pred_energies_gap"], e[0].mean() - e[-1].mean(), f"{name}: energy gap")


def test_loss_gradients_match_reference(outputs, reference):
    for name in ["full", "truncated", "smoothed", "coeff"]:
        got, want = outputs["loss_and_grads"][name], reference["loss_and_grads"][name]
        same_tree(got["grads"], want["grads"], f"{name}: grads")
        close(got["loss"], want["loss"], f"{name}: loss")
    g = outputs["loss_and_grads"]
    assert np.abs(np.asarray(g["full"]["grads"]["final_layer"])).max() > 0
    assert not np.allclose(np.asarray(g["full"]["grads"]["final_layer"]), np.asarray(g["truncated"]["grads"]["final_layer"]))


def test_inference_is_first_order(outputs, reference):
    out = outputs["inference_grads"]
    assert out["final_layer_grad_is_none"] is True
    close(out["alpha_grad"], reference["inference_grads"]["alpha_grad"], "alpha grad")


def test_toy_inference_closed_form(outputs):
    out = outputs["toy_inference"]
    for name, offset, alpha, steps, final_step, clamp in [
            ("plain", 0, 0.3, 4, 1, None), ("override_scale", 1, 0.3, 3, 2, None),
            ("override_value", 2, 1.5, 2, 1, None), ("accept_converging", 4, 0.4, 2, 1, None),
            ("clamped", 5, 0.5, 3, 2, 0.3 / 0.5)]:
        t, y0 = toy(offset)
        states = [y0] + descend(y0, t, alpha, steps, clamp)
        res = out[name]
        close(res["final"], states[-1], f"{name}: final")
        close(res["states"], np.stack(states), f"{name}: states")
        close(res["energies"], np.stack([toy_energy(y, t) for y in states]), f"{name}: energies")
        calls = [c for c in res["calls"]]
        if name != "accept_converging":
            assert calls == list(range(steps)) + [final_step], name
    t, y0 = toy(3)
    res = out["accept_diverging"]
    close(res["final"], y0, "diverging steps are rejected")
    close(res["energies"], np.stack([toy_energy(y0, t)] * 4), "rejected: energies")


def _pick(final_e, first_e, technique):
    if technique == "min":
        return final_e.argmin(1)
    if technique == "max":
        return final_e.argmax(1)
    return (first_e - final_e).argmax(1)


def test_best_of_samples(outputs, reference):
    g = 3
    for technique in ["min", "max", "max_gap"]:
        res = outputs["best_of_samples"][technique]
        e = np.asarray(res["energies"])  # steps, B * G, S
        states = np.asarray(res["states"])  # steps + 1, B * G, S, V
        final_e = e[-1].reshape(BATCH, g, SEQ)
        first_e = e[0].reshape(BATCH, g, SEQ)
        best = _pick(final_e, first_e, technique)
        last = states[-1].reshape(BATCH, g, SEQ, VOCAB)
        want = np.stack([np.stack([last[b, best[b, s], s] for s in range(SEQ)]) for b in range(BATCH)])
        close(res["final"], want, f"{technique}: chosen samples")
        same_tree(res, reference["best_of_samples"][technique], f"best_of_samples.{technique}")


def test_langevin_inference(outputs, reference):
    _compare(outputs, reference, "langevin_inference")
    a = np.asarray(outputs["langevin_inference"]["every_step"]["final"])
    b = np.asarray(outputs["langevin_inference"]["first_step"]["final"])
    assert not np.allclose(a, b)


def test_replay_buffer(outputs, reference):
    out = outputs["replay_buffer"]
    first = token_batch(20)
    inputs, replay, targets = out["empty"]
    close(inputs, first[:, :-1], "fresh inputs")
    close(targets, first[:, 1:], "fresh targets")
    assert replay is None
    fresh = token_batch(21)
    inputs, replay, targets = out["one_batch"]
    inputs, targets = np.asarray(inputs), np.asarray(targets)
    assert inputs.shape == (4, SEQ) and np.asarray(replay).shape == (2, SEQ, 4)
    close(inputs[:2], fresh[:, :-1], "fresh rows first")
    close(targets[:2], fresh[:, 1:], "fresh targets first")
    assert sorted(map(tuple, inputs[2:])) == sorted(map(tuple, first[:, :-1]))
    assert out["size"] == 3
    close(out["kept"], token_batch(22, batch=3), "the buffer keeps the newest records")
    _compare(outputs, reference, "replay_buffer")


def test_inference_variants_match_reference(outputs, reference):
    _compare(outputs, reference, "inference_variants")

