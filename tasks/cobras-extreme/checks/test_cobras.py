"""Checks for cobras-extreme over the cases' outputs: closed forms written out with numpy
from the regenerated inputs (balanced modes' singular values and biorthogonality, POD as
the special case Y = X, translations, the RBF decision function and its gradient, the
Gaussian window and the localized quantity of interest), the statistics of the random
gradient sketch, and the outputs compared with the reference's.

Tolerances: everything is float64. Closed forms and the reference allow 1e-9 relative
(+ a small absolute floor): the same sums in another order, an SVD by another route.

Conventions a correct implementation may choose differently, and what is compared then:
- the balanced modes are defined up to the sign of each pair and a reciprocal scaling
  of Phi_i and Psi_i (the authors scale X by 1/sqrt(n_grad) and Y by 1/sqrt(n_snap),
  the paper the other way round; the product Y^T X, hence S, is the same): the checks
  compare S, Psi^T Phi = I and the rank-one projectors Phi_i Psi_i^T;
- the random gradient sketch draws its Gaussian weights from the key in an order of the
  implementation's choosing: the checks recover the weights from the output and test
  that they are independent standard normals, never compare draws with the reference's.
"""

import numpy as np
from _cobras_inputs import (
    control_inputs,
    factorization_inputs,
    frame_inputs,
    modes_inputs,
    qoi_inputs,
    quantile_inputs,
    recon_inputs,
    snapshots_and_gradients,
    svm_inputs,
)

CLOSE = {"rtol": 1e-9, "atol": 1e-12}


def close(actual, desired, err_msg="", **tol):
    np.testing.assert_allclose(np.asarray(actual), np.asarray(desired), err_msg=err_msg, **{**CLOSE, **tol})


# ---- the balanced modes ------------------------------------------------------------------


def projectors(modes, r):
    return [np.outer(modes["Phi"][:, i], modes["Psi"][:, i]) for i in range(r)]


def test_balanced_modes_closed_form(outputs):
    x, grads = snapshots_and_gradients()
    out = outputs["balanced_modes"]
    # Y^T X with X = [x_i]/sqrt(n_x), Y = [g_j]/sqrt(n_g): the singular values of g x^T / sqrt(n_x n_g)
    want = np.linalg.svd(grads @ x.T / np.sqrt(len(x) * len(grads)), compute_uv=False)
    close(out["S"], want, "S", atol=1e-10)
    assert np.shape(out["Phi"]) == (12, 4) and np.shape(out["Psi"]) == (12, 4)
    # biorthogonal: Psi^T Phi = I
    close(np.asarray(out["Psi"]).T @ np.asarray(out["Phi"]), np.eye(4), "Psi^T Phi", atol=1e-8)
    # Phi spans snapshots, Psi spans gradients
    for name, data in (("Phi", x), ("Psi", grads)):
        basis, *_ = np.linalg.svd(data.T, full_matrices=False)
        modes = np.asarray(out[name])
        residual = modes - basis @ (basis.T @ modes)
        assert np.abs(residual).max() <= 1e-8 * np.abs(modes).max(), f"{name} leaves the data's span"


def test_balanced_modes_match_reference(outputs, reference):
    out, ref = outputs["balanced_modes"], reference["balanced_modes"]
    close(out["S"], ref["S"], "S", atol=1e-10)
    for i, (a, b) in enumerate(zip(projectors(out, 4), projectors(ref, 4), strict=True)):
        close(a, b, f"Phi_{i} Psi_{i}^T", rtol=1e-8, atol=1e-10)


def test_pod_is_the_special_case(outputs, reference):
    x, _ = snapshots_and_gradients()
    out = outputs["pod_modes"]
    # Y = X: S are the eigenvalues of the snapshot correlation x x^T / n, and Phi = Psi
    want = np.sort(np.linalg.eigvalsh(x @ x.T / len(x)))[::-1]
    close(out["S"], want, "S", atol=1e-10)
    close(out["Phi"], out["Psi"], "Phi = Psi", rtol=1e-8, atol=1e-10)
    for i, (a, b) in enumerate(zip(projectors(out, 4), projectors(reference["pod_modes"], 4), strict=True)):
        close(a, b, f"POD projector {i}", rtol=1e-8, atol=1e-10)


# ---- the random gradient sketch -------------------------------------------------------------


def sketch_weights(YT, grads):
    """The weights xi with YT[:, j] = sum_n xi[j, n] g[j, n] / sqrt(N), and the residual."""
    n_samples = len(grads)
    flat = grads.reshape(n_samples, grads.shape[1], -1)
    weights, worst = [], 0.0
    for j in range(n_samples):
        column = np.asarray(YT)[:, j] * np.sqrt(n_samples)
        coef, *_ = np.linalg.lstsq(flat[j].T, column, rcond=None)
        worst = max(worst, np.abs(flat[j].T @ coef - column).max())
        weights.append(coef)
    return np.array(weights), worst


def test_randomized_factorization_structure(outputs):
    grads, snaps = factorization_inputs(600)
    out = outputs["randomized_factorization"]
    close(out["XT"], snaps.reshape(7, 9).T / np.sqrt(7), "X^T")
    assert np.shape(out["YT"]) == (9, 600)
    _, residual = sketch_weights(out["YT"], grads)
    assert residual <= 1e-9, f"a column of Y^T is not a combination of its sample's gradients ({residual})"
    key, key_in = np.asarray(out["key"]), np.asarray(out["key_in"])
    assert key.shape == key_in.shape and key.dtype == key_in.dtype, "the returned key is not a PRNG key"
    assert not np.array_equal(key, key_in), "the returned key is the key that was consumed"


def test_randomized_factorization_statistics(outputs):
    grads, _ = factorization_inputs(600)
    out = outputs["randomized_factorization"]
    xi, residual = sketch_weights(out["YT"], grads)
    assert residual <= 1e-9
    # 1800 weights: independent standard normals (bounds at about 4.5 standard errors)
    assert abs(xi.mean()) < 0.11, f"weights have mean {xi.mean()}"
    assert abs(xi.var() - 1.0) < 0.15, f"weights have variance {xi.var()} (the 1/sqrt(N) scaling?)"
    corr = np.corrcoef(xi.T)
    assert np.abs(corr - np.eye(3)).max() < 0.19, f"weights of one sample are correlated: {corr}"
    assert len(np.unique(np.round(xi, 12))) == xi.size, "weights repeat"


# ---- the local variant ------------------------------------------------------------------------


def test_partition_of_unity(outputs, reference):
    out, ref = outputs["partition_of_unity"], reference["partition_of_unity"]
    for w_key, c_key, (a, b, K, n) in (("w8", "c8", (0.0, 2 * np.pi, 8, 64)), ("w4", "c4", (-1.0, 3.0, 4, 64))):
        w = np.asarray(out[w_key])
        assert w.shape == (K, n)
        close(out[c_key], np.linspace(a, b, K, endpoint=False), f"{c_key}: tent centres")
        close(w.sum(axis=0), np.ones(n), f"{w_key}: the tents do not sum to one", atol=1e-10)
        assert np.all(w >= 0)
        x = np.linspace(a, b, n, endpoint=False)
        for k, centre in enumerate(np.asarray(out[c_key])):
            assert np.isclose(x[np.argmax(w[k])], centre), f"{w_key}: tent {k} does not peak at its centre"
        close(w, ref[w_key], w_key)


def test_local_reconstruction(outputs, reference):
    tens, z, phi = recon_inputs()
    for key, n_modes in (("r4", 4), ("r6", 6)):
        want = np.einsum("cx,tcr,cxr->tx", tens, z[..., :n_modes], phi[..., :n_modes])
        close(outputs["local_reconstruction"][key], want, key)
        close(outputs["local_reconstruction"][key], reference["local_reconstruction"][key], key)


def translate(snap, x_shift, dx):
    """snap(x - x_shift) on the periodic grid, by the Fourier shift theorem."""
    k = np.fft.fftfreq(len(snap), d=dx)
    return np.fft.ifft(np.fft.fft(snap) * np.exp(-2j * np.pi * k * x_shift))


def test_group_velocity_frame(outputs, reference):
    x, dx, snaps = frame_inputs()
    out = outputs["group_velocity_frame"]
    for key, (g_speed, dt, offset) in (("default", (0.5, 1, 0)), ("other", (0.25 * dx, 2.0, 3 * dx)), ("fraction", (0.3, 1.0, 0.1))):
        for t, snap in enumerate(snaps):
            x_shift = -g_speed * t * dt + offset
            close(np.asarray(out[key])[t], translate(snap, x_shift, dx), f"{key}, t={t}", atol=1e-10)
        close(out[key], reference["group_velocity_frame"][key], key, atol=1e-10)
    # "other" moves by half a cell per snapshot: at even times, a plain roll of the grid
    for t in range(0, len(snaps), 2):
        cells = 3 - t // 2
        close(np.asarray(out["other"])[t], np.roll(snaps[t], cells), f"roll by {cells} cells", atol=1e-10)


def rolled_modes(modes, center, dx):
    n = modes.shape[0] // 2
    shift = n // 2 - int(center / dx)
    return np.concatenate([np.roll(modes[:n], -shift, axis=0), np.roll(modes[n:], -shift, axis=0)])


def test_shifted_modes(outputs, reference):
    modes, u, centers, dx, batch = modes_inputs()
    out = outputs["shifted_modes"]
    close(out["one"], rolled_modes(modes, centers[2], dx), "one centre")
    for i, center in enumerate(centers):
        close(np.asarray(out["all"])[i], rolled_modes(modes, center, dx), f"centre {center}")
    # the reference centre (the middle of the domain) leaves the modes where they are
    close(np.asarray(out["all"])[0], modes, "middle of the domain")
    close(out["all"], reference["shifted_modes"]["all"], "reference")


def test_local_projections(outputs, reference):
    modes, u, centers, dx, batch = modes_inputs()
    u_2n = np.concatenate([u.real, u.imag])
    out = outputs["local_projections"]
    close(out["one"], u_2n @ rolled_modes(modes, centers[3], dx), "one centre")
    for i, center in enumerate(centers):
        close(np.asarray(out["all"])[i], u_2n @ rolled_modes(modes, center, dx), f"centre {center}")
    # states in a batch: real and imaginary parts stacked along the last (spatial) axis
    batch_2n = np.concatenate([batch.real, batch.imag], axis=-1)
    close(out["batch"], batch_2n @ rolled_modes(modes, centers[4], dx), "a batch of states")
    close(out["all"], reference["local_projections"]["all"], "reference")


# ---- control -----------------------------------------------------------------------------------


def rbf_decision(points, sv, s_mean, s_scale, gamma, dual, b):
    scaled = (points - s_mean) / s_scale
    sq = ((scaled[:, None, :] - sv[None, :, :]) ** 2).sum(axis=-1)
    return (np.exp(-gamma * sq) * dual).sum(axis=1) + b


def rbf_gradient(points, sv, s_mean, s_scale, gamma, dual, b):
    scaled = (points - s_mean) / s_scale
    diff = scaled[:, None, :] - sv[None, :, :]
    weights = np.exp(-gamma * (diff**2).sum(axis=-1)) * dual
    return (-2 * gamma * weights[..., None] * diff).sum(axis=1) / s_scale


def test_svm_decision_function(outputs, reference):
    sv, s_mean, s_scale, gamma, dual, b, points = svm_inputs()
    out = outputs["svm_functions"]
    close(out["decision"], rbf_decision(points, sv, s_mean, s_scale, gamma, dual, b), "decision", atol=1e-10)
    close(out["decision"], reference["svm_functions"]["decision"], "reference", atol=1e-10)


def test_svm_gradient(outputs, reference):
    sv, s_mean, s_scale, gamma, dual, b, points = svm_inputs()
    grad = np.asarray(outputs["svm_functions"]["gradient"])
    close(grad, rbf_gradient(points, sv, s_mean, s_scale, gamma, dual, b), "closed form", atol=1e-10)
    # and by central differences of the decision function
    h = 1e-6
    for d in range(points.shape[1]):
        step = np.zeros(points.shape[1])
        step[d] = h
        fd = (rbf_decision(points + step, sv, s_mean, s_scale, gamma, dual, b) - rbf_decision(points - step, sv, s_mean, s_scale, gamma, dual, b)) / (2 * h)
        close(grad[:, d], fd, f"finite differences, feature {d}", rtol=1e-6, atol=1e-8)
    close(grad, reference["svm_functions"]["gradient"], "reference", atol=1e-10)


def local_features(state, psi):
    """z[n, r] = sum_j sum_y u_j(y) psi_{r,j}((n - y - 1) mod N): what the authors' FFT
    correlation (unity_utils.periodic_channelwise_correlation_fft_batched) computes."""
    u = np.stack([state.real, state.imag], axis=-1)
    n = len(state)
    idx = (np.arange(n)[:, None] - np.arange(n)[None, :] - 1) % n  # [position, y]
    return np.einsum("yj,nyrj->nr", u, psi[idx])


def test_suppression_control(outputs, reference):
    state, psi, phi0, params = control_inputs()
    z = local_features(state, psi)
    event = rbf_decision(z, *params) >= 0
    assert 0 < event.sum() < len(event), "the case should predict events at some positions only"
    grad = rbf_gradient(z, *params)
    u_z = event[:, None] * grad / np.linalg.norm(grad, axis=-1, keepdims=True)
    want = phi0 @ u_z.T
    got = np.asarray(outputs["suppression_control"])
    close(got, want, "control", atol=1e-10)
    assert np.all(got[~event] == 0), "control acts where no event is predicted"
    close(got, reference["suppression_control"], "reference", atol=1e-10)


def test_quantile_bins(outputs, reference):
    edges, n_quantiles, x = quantile_inputs()
    got = np.asarray(outputs["quantile_bins"])
    # bin i holds edges[i] <= x < edges[i + 1]; no value lies on an edge or outside them
    want = np.array([np.flatnonzero(edges <= value)[-1] for value in x])
    assert got.shape == x.shape
    np.testing.assert_array_equal(got, want)
    assert got.min() >= 0 and got.max() <= n_quantiles - 1
    np.testing.assert_array_equal(got, reference["quantile_bins"])


# ---- the localized quantity of interest ---------------------------------------------------------


def gaussian(x, t, vg, length, x0):
    return np.exp(-((x - x0 - vg * t) ** 2) / (2 * length**2)) / np.sqrt(2 * np.pi * length**2)


def test_gaussian_window(outputs, reference):
    x = np.linspace(-20.0, 40.0, 601)
    out = outputs["gaussian_window"]
    close(out["single"], gaussian(x, 3.0, 0.5, 1.5, 2.0), "single", atol=1e-14)
    for t in range(5):
        row = np.asarray(out["moving"])[t]
        close(row, gaussian(x, float(t), 0.75, 2.5, -1.0), f"t={t}", atol=1e-14)
        # a unit-mass window centred at x0 + vg t
        assert abs(np.trapezoid(row, x) - 1.0) < 1e-6
        assert abs(x[np.argmax(row)] - (-1.0 + 0.75 * t)) < 0.1 + 1e-9
    close(out["moving"], reference["gaussian_window"]["moving"], "reference", atol=1e-14)


def test_localized_qoi(outputs, reference):
    traj, x, t, vg, length, x0, dx = qoi_inputs()
    want = np.array([dx * np.sum(np.abs(traj[i]) ** 2 * gaussian(x, t[i], vg, length, x0)) for i in range(len(t))])
    close(outputs["localized_qoi"], want, "q(t)")
    close(outputs["localized_qoi"], reference["localized_qoi"], "reference")
