"""The checks agent mode may show a model (task.yaml `agent`): the default query
statistics and the default scores against the numpy closed forms."""

import numpy as np
from _ea import close, expected_scores, inputs, statistics

TOL = {"rtol": 1e-5, "atol_rel": 1e-6}


def test_query_statistics_visible(outputs):
    wq, h, _, _ = inputs(1, 2, 30)
    mu, cov = statistics(wq, h, 4, 512)
    close(outputs["query_statistics"]["default"]["mu"], mu, **TOL, what="mean")
    close(outputs["query_statistics"]["default"]["cov"], cov, **TOL, what="covariance")


def test_scores_visible(outputs):
    wq, h, keys, values = inputs(10, 2, 28)
    got = np.asarray(outputs["scores"]["default"])
    close(got[..., 4:], expected_scores(wq, h, keys, values, 4, 512), **TOL, what="scores")
