"""The warm-up schedulers f_α and f_β3, against their defining properties."""

import math

import pytest
from ademamix import alpha_scheduler, beta3_scheduler


def half_life_like(beta):
    """ln(1/2) / ln(β): proportional to the half-life of an EMA with rate β."""
    return math.log(0.5) / math.log(beta)


def test_alpha_linear_warmup():
    assert alpha_scheduler(0, 8.0, 100) == pytest.approx(0.0)
    assert alpha_scheduler(1, 8.0, 100) == pytest.approx(0.08)
    assert alpha_scheduler(25, 8.0, 100) == pytest.approx(2.0)
    assert alpha_scheduler(99, 8.0, 100) == pytest.approx(7.92)


def test_alpha_constant_after_warmup():
    assert alpha_scheduler(100, 8.0, 100) == pytest.approx(8.0)
    assert alpha_scheduler(101, 8.0, 100) == pytest.approx(8.0)
    assert alpha_scheduler(10_000, 5.0, 10) == pytest.approx(5.0)


def test_beta3_endpoints():
    assert beta3_scheduler(0, 0.9999, 0.9, 1000) == pytest.approx(0.9, abs=1e-12)
    assert beta3_scheduler(1000, 0.9999, 0.9, 1000) == pytest.approx(0.9999, abs=1e-12)


def test_beta3_constant_after_warmup():
    for t in (1001, 1500, 10_000):
        assert beta3_scheduler(t, 0.9999, 0.9, 1000) == pytest.approx(0.9999, abs=1e-12)


def test_beta3_hand_value():
    # Halfway, 1 / ln β3(t) is the mean of 1 / ln 0.5 and 1 / ln 0.75.
    expected = math.exp(2.0 / (1.0 / math.log(0.5) + 1.0 / math.log(0.75)))
    assert expected == pytest.approx(0.665906, abs=1e-6)
    assert beta3_scheduler(5, 0.75, 0.5, 10) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("t", [1, 10, 100, 250, 500, 900, 999])
def test_beta3_half_life_grows_linearly(t):
    T = 1000
    s = t / T
    beta = beta3_scheduler(t, 0.9999, 0.9, T)
    expected = (1 - s) * half_life_like(0.9) + s * half_life_like(0.9999)
    assert half_life_like(beta) == pytest.approx(expected, rel=1e-9)


def test_beta3_increases_between_the_two_rates():
    values = [beta3_scheduler(t, 0.999, 0.8, 50) for t in range(0, 51)]
    assert all(0.8 - 1e-12 <= v <= 0.999 + 1e-12 for v in values)
    assert all(b > a for a, b in zip(values, values[1:]))
    # the half-life (1 / ln β), not β itself, grows linearly: β moves fast early on
    assert values[25] > 0.5 * (0.8 + 0.999)
