"""Checks for Derf: closed forms of erf(alpha * x + s) * gamma + beta and of its
gradients (float64 numpy against the float32 module), the structure a conversion
leaves (which modules became Derf, with which settings and initial values), and
equality with the reference's outputs.

Tolerances. The module is float32. Against the float64 closed form: rtol 1e-5 plus
1e-6 of the output's scale (float32 erf and the affine map are good to a few ulp,
~1e-7). Against the reference on the same float32 inputs: rtol 1e-6 plus 1e-6 of the
scale, which accepts a legitimate reordering of the element-wise work (gamma * erf + beta
fused or not, alpha * x + s written another way: a few ulp) and nothing else.
Gradients are sums of up to 90 float32 terms: rtol 1e-4 plus 1e-5 of the scale. The
tiny models' outputs (several layers, sums in other orders) use rtol 1e-5 plus 1e-5 of
the scale; nanoGPT's logits and loss rtol 1e-4 plus 1e-5 of the scale.
"""

import numpy as np
import pytest
from _derf import arr, close, derf, derf_grads
from _derf_inputs import GPT_T, gpt_tokens, image_inputs, model_input, tokens_inputs

MOD = {"rtol": 1e-6, "atol_rel": 1e-6}
FORM = {"rtol": 1e-5, "atol_rel": 1e-6}
GRAD = {"rtol": 1e-4, "atol_rel": 1e-5}
NET = {"rtol": 1e-5, "atol_rel": 1e-5}


# --- the module --------------------------------------------------------------------


@pytest.mark.parametrize("case, make, channels_last", [
    ("derf_tokens", tokens_inputs, True), ("derf_image", image_inputs, False)])
def test_derf_closed_form(outputs, case, make, channels_last):
    x, alpha, shift, weight, bias, g = make()
    out = outputs[case]
    assert out["dtype"] == "torch.float32"
    want, _, _ = derf(x, alpha, shift, weight, bias, channels_last)
    close(out["y"], want, **FORM, what=f"{case} output")


@pytest.mark.parametrize("case, make, channels_last", [
    ("derf_tokens", tokens_inputs, True), ("derf_image", image_inputs, False)])
def test_derf_gradients_closed_form(outputs, case, make, channels_last):
    x, alpha, shift, weight, bias, g = make()
    want = derf_grads(x, alpha, shift, weight, bias, g, channels_last)
    for key, value in want.items():
        assert outputs[case][key] is not None, f"{case}: no gradient {key}"
        close(outputs[case][key], value, **GRAD, what=f"{case} {key}")


@pytest.mark.parametrize("case", ["derf_tokens", "derf_image", "derf_defaults"])
def test_derf_matches_reference(outputs, reference, case):
    for key, want in reference[case].items():
        if key == "dtype":
            assert outputs[case][key] == want
        else:
            close(outputs[case][key], want, **(MOD if key in ("y", "y_image") else GRAD), what=f"{case} {key}")


def test_derf_defaults(outputs):
    x = tokens_inputs()[0]
    close(outputs["derf_defaults"]["y"], derf(x, 0.5, 0.0, np.ones(6), np.zeros(6), True)[0], **FORM, what="default Derf")
    ximg = image_inputs()[0]
    close(outputs["derf_defaults"]["y_image"], derf(ximg, 1.25, -0.3, np.ones(4), np.zeros(4), False)[0], **FORM,
          what="Derf(alpha 1.25, shift -0.3), channels first")


# --- the ViT conversion ----------------------------------------------------------

TREE_DERF = {"stem.norm": False, "blocks.0.norm1": True, "blocks.0.norm2": True,
             "blocks.1.norm1": True, "blocks.1.norm2": True, "norm": True}  # name -> channels_last
TREE_OTHER = {"<root>": "TinyViT", "stem": "Stem", "stem.conv": "Conv2d", "blocks": "ModuleList",
              "blocks.0": "Block", "blocks.1": "Block", "head": "Sequential", "head.0": "Linear", "head.1": "Tanh"}
for _b in ("blocks.0", "blocks.1"):
    TREE_OTHER.update({f"{_b}.fc1": "Linear", f"{_b}.act": "GELU", f"{_b}.fc2": "Linear", f"{_b}.proj": "Linear"})


def _check_derfs(summary, expect, alpha, shift, channels):
    """Every expected name is a Dynamic_erf with these settings and initial values."""
    assert set(summary["derfs"]) == set(expect), f"Derf modules {sorted(summary['derfs'])}"
    for name, channels_last in expect.items():
        d = summary["derfs"][name]
        if channels_last is not None:
            assert d["channels_last"] == channels_last, f"{name}: channels_last {d['channels_last']}"
        assert d["normalized_shape"] == channels, f"{name}: normalized_shape {d['normalized_shape']}"
        assert arr(d["alpha"]).size == 1 and arr(d["shift"]).size == 1, f"{name}: alpha and shift are scalars"
        close(d["alpha"], np.full(arr(d["alpha"]).shape, alpha), rtol=0, atol=1e-7, what=f"{name} alpha")
        close(d["shift"], np.full(arr(d["shift"]).shape, shift), rtol=0, atol=1e-7, what=f"{name} shift")
        assert np.all(arr(d["weight"]) == 1.0) and np.all(arr(d["bias"]) == 0.0), f"{name}: weight 1, bias 0"


def test_convert_structure(outputs, reference):
    out = outputs["convert_tree"]
    expect = dict(TREE_OTHER, **{name: "Dynamic_erf" for name in TREE_DERF})
    assert out["classes"] == expect
    _check_derfs(out, TREE_DERF, 0.7, 0.1, [4])
    assert out["params"] == reference["convert_tree"]["params"]


def test_convert_keeps_other_modules(outputs):
    out = outputs["convert_tree"]
    assert out["root_is_same"] is True
    assert out["same_objects"] == {"stem.conv": True, "blocks.0.fc1": True, "blocks.1.proj": True, "head": True}
    assert out["other_params_unchanged"] is True


def test_convert_defaults(outputs):
    out = outputs["convert_defaults"]
    _check_derfs(out["tree"], TREE_DERF, 0.5, 0.0, [4])
    assert out["bare_ln"]["classes"] == {"<root>": "Dynamic_erf"}
    _check_derfs(out["bare_ln"], {"<root>": True}, 0.9, 0.0, [3, 4])
    x = model_input(45, (2, 3, 4))
    close(out["bare_ln_y"], derf(x, 0.9, 0.0, np.ones((3, 4)), np.zeros((3, 4)), True)[0], **FORM, what="bare LayerNorm")
    assert out["bare_ln2d"]["classes"] == {"<root>": "Dynamic_erf"}
    _check_derfs(out["bare_ln2d"], {"<root>": False}, 0.5, -0.2, [5])
    assert out["plain_is_same"] is True


def test_convert_matches_reference(outputs, reference):
    out, ref = outputs["convert_tree"], reference["convert_tree"]
    close(out["y"], ref["y"], **NET, what="converted model output")
    assert set(out["grads"]) == set(ref["grads"])
    for name, grads in ref["grads"].items():
        for key, want in grads.items():
            got = out["grads"][name][key]
            assert got is not None, f"{name}: no gradient for {key}"
            close(got, want, **GRAD, what=f"{name} grad {key}")
            assert np.any(arr(got) != 0), f"{name}: zero gradient for {key}"


# --- the language-model module ----------------------------------------------------


@pytest.mark.parametrize("key", ["bias", "no_bias"])
def test_gpt_derf_module_closed_form(outputs, key):
    x, alpha, shift, weight, bias, g = tokens_inputs()
    if key == "no_bias":
        bias = np.zeros_like(bias)
    out = outputs["gpt_derf_module"][key]
    close(out["y"], derf(x, alpha, shift, weight, bias, True)[0], **FORM, what=f"{key} output")
    want = derf_grads(x, alpha, shift, weight, bias, g, True)
    for name in ("grad_alpha", "grad_shift", "grad_weight", "grad_x"):
        assert out[name] is not None, f"{key}: no {name}"
        close(out[name], want[name], **GRAD, what=f"{key} {name}")


def test_gpt_derf_module_matches_reference(outputs, reference):
    for key, ref in reference["gpt_derf_module"].items():
        close(outputs["gpt_derf_module"][key]["y"], ref["y"], **MOD, what=f"{key} output")
        for name in ("grad_alpha", "grad_shift", "grad_weight", "grad_x"):
            close(outputs["gpt_derf_module"][key][name], ref[name], **GRAD, what=f"{key} {name}")


# --- nanoGPT with Derf ------------------------------------------------------------

@pytest.mark.parametrize("norm_type", ["derf", "dyt", "ln"])
def test_gpt_block_input(outputs, norm_type):
    """The first block reads (token + position embedding) * shared_scale under Derf and
    DyT, and the plain sum under LayerNorm."""
    out = outputs[f"gpt_{norm_type}"]
    idx, _ = gpt_tokens()
    emb = arr(out["wte"])[idx] + arr(out["wpe"])[:GPT_T][None]
    if norm_type != "ln":
        emb = emb * arr(out["shared_scale"])[0]
    close(out["x0"], emb, rtol=1e-6, atol_rel=1e-7, what="first block input")


@pytest.mark.parametrize("norm_type", ["derf", "dyt", "ln"])
def test_gpt_matches_reference(outputs, reference, norm_type):
    out, ref = outputs[f"gpt_{norm_type}"], reference[f"gpt_{norm_type}"]
    close(out["logits"], ref["logits"], rtol=1e-4, atol_rel=1e-5, what="logits")
    close(out["loss"], ref["loss"], rtol=1e-5, what="loss")
    close(out["x0"], ref["x0"], rtol=1e-6, atol_rel=1e-7, what="first block input")
    for name, norm in ref["norms"].items():
        for key in ("grad_alpha", "grad_shift"):
            if norm[key] is None:
                assert out["norms"][name][key] is None, f"{name}: {key} should not exist"
            else:
                close(out["norms"][name][key], norm[key], **GRAD, what=f"{name} {key}")
    if ref["grad_shared_scale"] is None:
        assert out["grad_shared_scale"] is None or np.all(arr(out["grad_shared_scale"]) == 0)
    else:
        close(out["grad_shared_scale"], ref["grad_shared_scale"], **GRAD, what="shared scale gradient")


def test_gpt_gradients_flow(outputs):
    """Under Derf every alpha, every shift and the embedding scale receive a gradient."""
    out = outputs["gpt_derf"]
    for name, norm in out["norms"].items():
        for key in ("grad_alpha", "grad_shift"):
            assert norm[key] is not None and np.any(arr(norm[key]) != 0), f"{name}: {key}"
    assert out["grad_shared_scale"] is not None and np.any(arr(out["grad_shared_scale"]) != 0)
    ln = outputs["gpt_ln"]
    assert ln["grad_shared_scale"] is None or np.all(arr(ln["grad_shared_scale"]) == 0), \
        "LayerNorm: the embeddings are not scaled"
