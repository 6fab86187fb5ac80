"""The check agent mode may show a model (task.yaml `agent`): h-vectors of small
complexes, worked out by hand."""


def strip(h):
    """h without the authors' zero padding (to max_dimension + 2 entries)."""
    h = list(h)
    while h and h[-1] == 0:
        h.pop()
    return h


def test_h_vector_visible(outputs, reference):
    # a filled triangle (1, 0, 0), its boundary (1, 1, 1), four points (1, 3)
    got = [strip(h) for h in outputs["h_vector_hand"]["max_dim2"][:3]]
    assert got == [[1], [1, 1, 1], [1, 3]]
    ref = reference["h_vector_hand"]
    assert {k: [strip(h) for h in v] for k, v in outputs["h_vector_hand"].items()} == {k: [strip(h) for h in v] for k, v in ref.items()}
