"""The checks agent mode may show a model (task.yaml `agent`): the value estimator on
g(y) = |y|^2 against its closed form, and the topology of a disc and an annulus."""

import numpy as np

import hjg_inputs as I
from _hjg import N_SD, quad_value, quad_value_sd


def test_value_estimator_quadratic_visible(outputs):
    x = I.query_points(1, I.M_POINTS, 2).astype(float)
    s2 = I.DELTA * (I.T_END - I.T_NOW)
    got = np.asarray(outputs["value_estimator"]["quadratic"], dtype=float)
    for i in range(I.M_POINTS):
        c = float(I.C_VALUES[i])
        assert abs(got[i] - quad_value(x[i], s2, c)) < N_SD * quad_value_sd(x[i], s2, c, I.N_SAMPLES) + 1e-4


def test_topology_visible(outputs):
    out = outputs["topology"]
    assert [int(v) for v in out["one_disc"][:2]] == [1, 0]
    assert [int(v) for v in out["annulus"][:2]] == [1, 1]
