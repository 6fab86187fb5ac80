"""The checks agent mode may show a model (task.yaml `agent`): the Derf module on
channels-last tokens against its closed form, and the conversion of bare norm layers."""

import numpy as np
from _derf import close, derf
from _derf_inputs import model_input, tokens_inputs


def test_derf_tokens_visible(outputs):
    x, alpha, shift, weight, bias, _ = tokens_inputs()
    close(outputs["derf_tokens"]["y"], derf(x, alpha, shift, weight, bias, True)[0], rtol=1e-5, atol_rel=1e-6,
          what="Derf output")


def test_convert_bare_layernorm_visible(outputs):
    out = outputs["convert_defaults"]
    assert out["bare_ln"]["classes"] == {"<root>": "Dynamic_erf"}
    x = model_input(45, (2, 3, 4))
    close(out["bare_ln_y"], derf(x, 0.9, 0.0, np.ones((3, 4)), np.zeros((3, 4)), True)[0], rtol=1e-5,
          atol_rel=1e-6, what="bare LayerNorm converted")
