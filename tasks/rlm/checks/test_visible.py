"""The checks agent mode may show a model (task.yaml `agent`): the code-block parser on
hand-made responses, and one full run (a needle in a seeded context, found with a sub-LM
call) compared with the reference.

Self-contained apart from the helpers in checks/_rlm_checks.py.
"""

from _rlm_checks import same_run


def test_find_blocks_visible(outputs):
    out = outputs["find_blocks"]
    assert out["single"] == ["print(len(context))"]
    assert out["two_and_python"] == ["a = 1", "print(a)"]
    assert out["unclosed"] == []


def test_needle_visible(outputs, reference):
    out, ref = outputs["needle"], reference["needle"]
    assert out["result"]["response"] == out["city"]
    same_run(out, ref)
