"""The checks agent mode may show a model (task.yaml `agent`): hand-worked dominance
removal, qualifying common ancestors and a merge.

Self-contained: the visible check sandbox holds only this file of checks/ (and the helpers).
"""


def test_remove_dominated_hand_visible(outputs, reference):
    out = outputs["remove_dominated_hand"]
    assert {k: set(v) for k, v in out["by_score"].items()} == {"0": {1}, "1": {1, 2}, "2": {2}, "3": {1}}
    assert out == reference["remove_dominated_hand"]


def test_filter_ancestors_hand_visible(outputs, reference):
    out = outputs["filter_ancestors_hand"]
    assert out["3_5"] == [0, 1]
    assert out == reference["filter_ancestors_hand"]


def test_merge_hand_visible(outputs, reference):
    out = outputs["merge_hand"]
    assert out["3_4"]["program"] == {"system": "s1", "extract": "e2", "answer": "a3"}
    assert out["3_4"]["program"] == reference["merge_hand"]["3_4"]["program"]
