"""Checks for JSINDy: the method's defining identities, rebuilt from values the cases
return, and agreement with the reference (the authors' code).

Tolerances: the identities are exact in exact arithmetic; they are checked to 1e-7
relative (1e-6 for the ridge normal equations, whose matrix has condition number up to
~1e4 at lambda = 1e-2), far above float64 rounding of any reordering of the same sums and
far below what a wrong weight, sign or derivative order gives (order one). The
reference comparisons use rtol 1e-6: the cases are deterministic and a correct
implementation differs from the authors' only by rounding (e.g. a Cholesky solve in place
of an SVD, a different summation order), which the damped Gauss-Newton iterations of the
solver do not amplify past ~1e-9 over the few steps the case runs.
"""

import numpy as np
from _jsindy_inputs import STATE_FIT_LAM, problem, random_params, row_block_diag, second_order_theta


def close(a, b, rtol=1e-6, atol=1e-9):
    np.testing.assert_allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float), rtol=rtol, atol=atol)


def rel_err(a, b):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-300)


# ---- the Cholesky-whitened state fit ---------------------------------------------------


def test_state_fit_normal_equations(outputs):
    out = outputs["state_fit"]
    _, _, x, v = problem()
    w = np.asarray(out["whitened"])
    z = np.asarray(out["z_full"])
    lhs = (w.T @ w + STATE_FIT_LAM * np.eye(w.shape[1])) @ z
    assert rel_err(lhs, w.T @ x.flatten()) < 1e-6
    wp = row_block_diag(v) @ w
    y = np.sum(x * v, axis=1)
    zp = np.asarray(out["z_part"])
    lhs = (wp.T @ wp + STATE_FIT_LAM * np.eye(wp.shape[1])) @ zp
    assert rel_err(lhs, wp.T @ y) < 1e-6


def test_state_fit_reference(outputs, reference):
    for key in ("z_full", "z_part"):
        close(outputs["state_fit"][key], reference["state_fit"][key], atol=1e-8)


# ---- evaluating the trajectory and its derivatives -----------------------------------------


def test_operator_evaluation_identities(outputs):
    out = outputs["operator_evaluation"]
    # x(t) at the observations is the whitened kernel matrix times the parameters
    assert rel_err(np.asarray(out["at_obs"]).flatten(), out["whitened_at_obs"]) < 1e-7
    # the first derivative is the derivative of the values (central differences, h = 1e-4)
    fd = (np.asarray(out["value_plus"]) - np.asarray(out["value_minus"])) / 2e-4
    assert rel_err(out["d1"], fd) < 1e-5


def test_operator_evaluation_reference(outputs, reference):
    for key in ("value", "d1", "d2", "at_obs"):
        close(outputs["operator_evaluation"][key], reference["operator_evaluation"][key])


# ---- residuals -----------------------------------------------------------------------------


def test_partial_observation_residual(outputs, reference):
    out = outputs["residuals"]
    _, _, x, v = problem()
    want = np.sum(x * v, axis=1) - np.sum(np.asarray(out["pred_obs"]) * v, axis=1)
    assert rel_err(out["partial"], want) < 1e-7
    close(out["partial"], reference["residuals"]["partial"])


def test_collocation_residual(outputs, reference):
    out = outputs["residuals"]
    _, theta = random_params()
    sw = np.sqrt(np.asarray(out["w_colloc"]))[:, None]
    want = sw * (np.asarray(out["dx_c"]) - np.asarray(out["features"]) @ theta)
    assert rel_err(out["colloc"], want) < 1e-7
    assert rel_err(out["colloc_flat"], want.flatten()) < 1e-7
    want2 = sw * (np.asarray(out["ddx_c"]) - np.asarray(out["features_second_order"]) @ second_order_theta())
    assert rel_err(out["colloc_second_order"], want2) < 1e-7
    for key in ("colloc", "colloc_second_order"):
        close(out[key], reference["residuals"][key])


def test_joint_residual(outputs, reference):
    out = outputs["residuals"]
    _, _, x, _ = problem()
    data = (x - np.asarray(out["pred_obs"])).flatten()
    assert rel_err(out["data"], data) < 1e-7
    want = np.concatenate([np.sqrt(0.5) * data, np.sqrt(200.0) * np.asarray(out["colloc_flat"])])
    assert rel_err(out["joint"], want) < 1e-7
    close(out["joint"], reference["residuals"]["joint"])


# ---- the alternating active-set Levenberg-Marquardt solve ------------------------------------


def test_alternating_objective_decreases(outputs):
    out = outputs["alternating_solve"]
    assert len(out["objval"]) >= 2
    for objvals, gnorms in zip(out["objval"], out["gnorms"], strict=True):
        assert len(objvals) == len(gnorms)
        # a damped step is taken only when it decreases the objective
        assert all(b < a for a, b in zip(objvals, objvals[1:]))
    # the last recorded objective is that of the returned iterate
    assert abs(out["final_loss"] - out["objval"][-1][-1]) <= 1e-8 * abs(out["final_loss"])
    # one elapsed time per outer pass, in seconds since the solve started
    timings = out["timings"]
    assert len(timings) == len(out["objval"])
    assert all(0.0 <= a <= b < 3600.0 for a, b in zip(timings, timings[1:] + [timings[-1]]))


def test_alternating_matches_reference(outputs, reference):
    out, ref = outputs["alternating_solve"], reference["alternating_solve"]
    assert out["tag"] in ("stable-active-set", "maximum-iterations")
    assert len(out["timings"]) == len(ref["timings"])
    assert [len(f) for f in out["objval"]] == [len(f) for f in ref["objval"]]
    for a, b in zip(out["objval"], ref["objval"], strict=True):
        close(a, b)
    for a, b in zip(out["gnorms"], ref["gnorms"], strict=True):
        close(a, b, rtol=1e-4, atol=1e-6)
    theta, theta_ref = np.asarray(out["theta"]), np.asarray(ref["theta"])
    np.testing.assert_array_equal(np.abs(theta) > 1e-7, np.abs(theta_ref) > 1e-7)
    close(theta, theta_ref, atol=1e-7)
    close(out["z"], ref["z"], atol=1e-6)
