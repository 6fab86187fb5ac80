"""The checks agent mode shows: one Canon layer on its own (whole sequences), and the
tiny model with all four placements against the reference's logits (tolerances as in
test_canon.py)."""

from _canon import canon_layer, close
from _canon_inputs import LAYERS, layer_w, layer_x


def test_canon_layer(outputs):
    for spec, (kernel, act, res) in LAYERS.items():
        close(outputs["canon_layer"][spec], canon_layer(layer_x(spec), layer_w(spec, kernel), act, res))


def test_model_forward(outputs, reference):
    for name in ("none", "abcd"):
        close(outputs["model_forward"][name]["logits"], reference["model_forward"][name]["logits"])
