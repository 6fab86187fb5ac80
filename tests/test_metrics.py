import pytest

from rcb_action.scoring import (
    Outcome,
    bootstrap_ci,
    macro_task_mean,
    paired_bootstrap,
    pass_at_k,
    pass_rate,
    scaled_pass_at_1,
    unbiased_pass_at_k,
)


def test_scaled_pass_at_1_hand_worked_with_nested_snippets(fixture_tasks):
    from rcb_action.tasks import load_task

    task = load_task(fixture_tasks / "toy")
    weights = {n: task.weight(n) for n in task.snippet_names()}
    # affine encloses scale and shift: its 2 lines are theirs, counted again in affine.
    assert weights == {"affine": 2, "scale": 1, "shift": 1, "norm": 4, "slow sum": 3}
    passed = {"scale", "norm"}
    outcomes = [Outcome("toy", n, 0, w, n in passed) for n, w in weights.items()]
    assert scaled_pass_at_1(outcomes) == pytest.approx(100 * (1 + 4) / 11)
    assert pass_rate(outcomes) == pytest.approx(40.0)


def test_samples_are_scored_then_averaged():
    outcomes = [
        Outcome("t", "a", 0, 3, True),
        Outcome("t", "b", 0, 1, False),
        Outcome("t", "a", 1, 3, False),
        Outcome("t", "b", 1, 1, True),
    ]
    assert scaled_pass_at_1(outcomes) == pytest.approx((75.0 + 25.0) / 2)
    assert pass_rate(outcomes) == pytest.approx(50.0)


def test_macro_mean_weights_tasks_equally():
    outcomes = [Outcome("big", "a", 0, 100, True), Outcome("small", "b", 0, 1, False)]
    assert scaled_pass_at_1(outcomes) == pytest.approx(100 * 100 / 101)
    assert macro_task_mean(outcomes) == pytest.approx(50.0)


def test_unbiased_pass_at_k():
    assert unbiased_pass_at_k(5, 0, 1) == 0.0
    assert unbiased_pass_at_k(5, 5, 3) == 1.0
    assert unbiased_pass_at_k(4, 1, 1) == pytest.approx(0.25)
    assert unbiased_pass_at_k(4, 1, 2) == pytest.approx(1 - 3 / 6)
    outcomes = [Outcome("t", "a", s, 2, s == 0) for s in range(4)] + [
        Outcome("t", "b", s, 1, True) for s in range(4)
    ]
    assert pass_at_k(outcomes, 2) == pytest.approx(100 * (2 * 0.5 + 1 * 1.0) / 3)
    assert pass_at_k(outcomes, 5) is None


def test_bootstrap_is_deterministic_and_brackets_the_estimate():
    outcomes = [Outcome("t", f"s{i}", 0, 1 + i % 3, i % 2 == 0) for i in range(60)]
    ci = bootstrap_ci(outcomes)
    assert ci == bootstrap_ci(outcomes)
    point = scaled_pass_at_1(outcomes)
    assert ci[0] < point < ci[1]
    assert bootstrap_ci([Outcome("t", "a", 0, 1, True)]) == (100.0, 100.0)


def test_paired_bootstrap_on_common_snippets():
    a = [Outcome("t", f"s{i}", 0, 1, True) for i in range(20)]
    b = [Outcome("t", f"s{i}", 0, 1, i < 10) for i in range(25)]
    result = paired_bootstrap(a, b)
    assert result["snippets"] == 20
    assert result["difference"] == pytest.approx(50.0)
    assert result["ci95_low"] <= 50.0 <= result["ci95_high"]
