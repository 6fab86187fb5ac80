"""Checks for the eqm task (run without the code: closed forms, properties, the reference's outputs)."""
import numpy as np

from _eqm import c_gamma, c_over_one_minus, close_to_one_of, gd_numpy, nag_numpy
from eqm_inputs import (
    MODES, decay_levels, energy_input, gmm_score, quadratic_field, quadratic_problem, training_data,
    training_model_np,
)

F32 = dict(rtol=1e-5, atol=1e-5)      # float32 arithmetic, a few roundings apart
F64 = dict(rtol=1e-9, atol=1e-11)     # float64, summation order may differ


# ---------------------------------------------------------------- truncated decay c(gamma)

def test_truncated_decay_closed_form(outputs):
    ct = np.asarray(outputs["truncated_decay"]["ct"], dtype=np.float64)
    t = decay_levels().astype(np.float64)
    assert ct.shape == t.shape
    np.testing.assert_allclose(ct, c_gamma(t), **F32)
    assert np.all(np.abs(ct[t == 1.0]) < 1e-5)      # gamma = 1 (clean data): zero gradient
    np.testing.assert_allclose(ct[t <= 0.8], 4.0, **F32)  # flat at lambda up to a


def test_truncated_decay_matches_reference(outputs, reference):
    np.testing.assert_allclose(outputs["truncated_decay"]["ct"], reference["truncated_decay"]["ct"], **F32)


# ---------------------------------------------------------------- training target

def _training():
    return training_data().astype(np.float64)


def test_training_target_loss_formula(outputs):
    out = outputs["training_target"]
    x1 = _training()
    xt = np.asarray(out["xt"], dtype=np.float64)
    t = np.asarray(out["t"], dtype=np.float64)
    pred = np.asarray(out["pred"], dtype=np.float64)
    loss = np.asarray(out["loss"], dtype=np.float64)
    assert out["calls"] == 1
    assert xt.shape == x1.shape and t.shape == (x1.shape[0],) and loss.shape == (x1.shape[0],)
    assert np.all(t >= 0.0) and np.all(t <= 1.0)
    # the network is evaluated on x_gamma
    np.testing.assert_allclose(pred, training_model_np(xt), **F32)
    # target (x - eps) c(gamma) with x_gamma = gamma x + (1 - gamma) eps, i.e. (x - x_gamma) c / (1 - gamma)
    tb = t[:, None, None, None]
    target = (x1 - xt) * c_over_one_minus(tb)
    expect = np.mean((pred - target) ** 2, axis=(1, 2, 3))
    np.testing.assert_allclose(loss, expect, rtol=1e-4, atol=1e-5)


def test_training_target_noise_and_levels(outputs):
    out = outputs["training_target"]
    x1 = _training()
    xt = np.asarray(out["xt"], dtype=np.float64)
    t = np.asarray(out["t"], dtype=np.float64)
    keep = t < 0.98
    tb = t[keep][:, None, None, None]
    eps = (xt[keep] - tb * x1[keep]) / (1.0 - tb)       # the noise implied by x_gamma
    n = eps.size
    assert n > 4000
    # eps ~ N(0, I), independent of the data (5-sigma bounds)
    assert abs(eps.mean()) < 5 / np.sqrt(n)
    assert abs(eps.std() - 1.0) < 5 * np.sqrt(0.5 / n)
    corr = np.corrcoef(eps.ravel(), x1[keep].ravel())[0, 1]
    assert abs(corr) < 5 / np.sqrt(n)
    # gamma ~ U[0, 1], one per sample
    m = t.size
    assert abs(t.mean() - 0.5) < 5 * np.sqrt(1 / 12 / m)
    assert abs(t.std() - np.sqrt(1 / 12)) < 0.06
    assert abs(np.mean(t > 0.8) - 0.2) < 5 * np.sqrt(0.16 / m)


def test_noise_and_level_sampling(outputs):
    out = outputs["noise_and_level_sampling"]
    x1 = training_data()
    t = np.asarray(out["t"], dtype=np.float64)
    x0 = np.asarray(out["x0"], dtype=np.float64)
    np.testing.assert_array_equal(np.asarray(out["x1"]), x1)
    assert t.shape == (x1.shape[0],) and x0.shape == x1.shape
    assert np.all(t >= 0.0) and np.all(t <= 1.0)
    n, m = x0.size, t.size
    assert abs(x0.mean()) < 5 / np.sqrt(n)
    assert abs(x0.std() - 1.0) < 5 * np.sqrt(0.5 / n)
    assert abs(np.corrcoef(x0.ravel(), x1.ravel())[0, 1]) < 5 / np.sqrt(n)
    assert abs(t.mean() - 0.5) < 5 * np.sqrt(1 / 12 / m)
    assert abs(t.std() - np.sqrt(1 / 12)) < 0.06
    # with the transport's training interval [train_eps, 1 - train_eps] = [0.2, 0.8]
    te = np.asarray(out["t_eps"], dtype=np.float64)
    assert te.shape == (x1.shape[0],)
    assert te.min() >= 0.2 - 1e-6 and te.max() <= 0.8 + 1e-6
    assert te.min() < 0.26 and te.max() > 0.74
    assert abs(te.mean() - 0.5) < 5 * 0.6 * np.sqrt(1 / 12 / m)
    assert abs(te.std() - 0.6 * np.sqrt(1 / 12)) < 0.04


# ---------------------------------------------------------------- explicit energy (EqM-E)

def test_explicit_energy_closed_forms(outputs):
    out = outputs["explicit_energy"]
    x, _ = energy_input()
    raw = np.asarray(out["raw"], dtype=np.float64)
    # dot-product energy: E = -x . f(x); squared-L2 energy: E = ||f(x)||^2 / 2
    np.testing.assert_allclose(out["dot"]["energy"], -np.sum(raw * x, axis=(1, 2, 3)), **F64)
    np.testing.assert_allclose(out["l2"]["energy"], 0.5 * np.sum(raw ** 2, axis=(1, 2, 3)), **F64)
    for ebm in ("l2", "dot", "mean"):
        # the model's output is its gradient, with or without get_energy
        np.testing.assert_allclose(out[ebm]["plain"], out[ebm]["grad"], **F64)
        assert np.asarray(out[ebm]["grad"]).shape == x.shape
        assert not np.allclose(out[ebm]["grad"], raw, rtol=1e-3, atol=1e-6)


def test_explicit_energy_output_is_minus_energy_gradient(outputs):
    out = outputs["explicit_energy"]
    for ebm in ("l2", "dot", "mean"):
        fd = np.asarray(out[ebm]["fd"], dtype=np.float64)          # d E(x + h v) / dh by central differences
        gv = np.asarray(out[ebm]["grad_dot_v"], dtype=np.float64)  # <output, v>
        np.testing.assert_allclose(-gv, fd, rtol=1e-5, atol=1e-7)


def test_explicit_energy_matches_reference(outputs, reference):
    out, ref = outputs["explicit_energy"], reference["explicit_energy"]
    np.testing.assert_allclose(out["raw"], ref["raw"], **F64)
    for ebm in ("l2", "dot"):
        np.testing.assert_allclose(out[ebm]["grad"], ref[ebm]["grad"], **F64)
        np.testing.assert_allclose(out[ebm]["energy"], ref[ebm]["energy"], **F64)


def test_explicit_energy_trains_through_the_gradient(outputs, reference):
    out, ref = outputs["explicit_energy_train"], reference["explicit_energy_train"]
    for ebm in ("l2", "dot"):
        np.testing.assert_allclose(out[ebm]["loss"], ref[ebm]["loss"], **F64)
        np.testing.assert_allclose(out[ebm]["wgrad"], ref[ebm]["wgrad"], rtol=1e-7, atol=1e-10)
        assert np.abs(np.asarray(out[ebm]["wgrad"])).max() > 0


# ---------------------------------------------------------------- gradient-descent sampling

STEPS_Q, ETA_Q, MU_Q = 7, 0.1, 0.3


def _updates_ok(calls, steps):
    # the authors' loop takes num_sampling_steps - 1 steps; a loop of num_sampling_steps is accepted too
    return calls in (steps - 1, steps)


def test_sampler_gd_quadratic_closed_form(outputs):
    c, k, z = quadratic_problem()
    for key in ("gd", "gd_tuple"):
        out = outputs["sampler_quadratic"][key]
        assert _updates_ok(out["calls"], STEPS_Q)
        x = np.asarray(out["x"], dtype=np.float64)
        # x_m = c + (1 - eta k)^m (z - c) after m gradient-descent steps
        cands = [c + (1 - ETA_Q * k) ** m * (z - c) for m in (STEPS_Q - 1, STEPS_Q)]
        assert close_to_one_of(x, cands, **F64), key


def test_sampler_nag_quadratic_recurrence(outputs):
    c, k, z = quadratic_problem()
    field = lambda x: quadratic_field(x, c, k)
    for key in ("ngd", "ngd_tuple"):
        out = outputs["sampler_quadratic"][key]
        assert _updates_ok(out["calls"], STEPS_Q)
        x = np.asarray(out["x"], dtype=np.float64)
        cands = [nag_numpy(field, z, ETA_Q, MU_Q, m) for m in (STEPS_Q - 1, STEPS_Q)]
        assert close_to_one_of(x, cands, **F64), key
    gd = np.asarray(outputs["sampler_quadratic"]["gd"]["x"])
    ngd = np.asarray(outputs["sampler_quadratic"]["ngd"]["x"])
    assert np.abs(gd - ngd).max() > 1e-3   # the look-ahead changes the path


def test_sampler_reaches_mixture_modes(outputs):
    for key in ("gd", "ngd"):
        out = outputs["sampler_gmm"][key]
        assert _updates_ok(out["calls"], 150)
        x = np.asarray(out["x"], dtype=np.float64)
        d = np.linalg.norm(x[:, None, :] - MODES[None], axis=-1).min(axis=1)
        assert d.max() < 1e-3, key
        assert np.abs(gmm_score(x)).max() < 1e-2  # a stationary point of the landscape


def test_sampler_eqm_model_matches_reference(outputs, reference):
    out, ref = outputs["sampler_eqm_model"], reference["sampler_eqm_model"]
    tol = dict(rtol=1e-4, atol=1e-5)
    for name in ("gd_cfg1.0", "ngd_cfg1.0", "ngd_cfg1.5"):
        x = np.asarray(out[f"{name}_steps5"])
        assert x.shape == (3, 4, 4, 4), name
        cands = [np.asarray(ref[f"{name}_steps5"]), np.asarray(ref[f"{name}_steps6"])]
        assert close_to_one_of(x, cands, **tol), name
    assert not np.allclose(out["ngd_cfg1.0_steps5"], out["ngd_cfg1.5_steps5"], rtol=1e-3, atol=1e-4)
