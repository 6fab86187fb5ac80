"""Checks for the Canon layers (arXiv 2512.17351). They run without the code under
test: they rebuild the seeded inputs (inputs/_canon_inputs.py), recompute a Canon layer
in float64 numpy (checks/_canon.py), check properties the paper states (a Canon layer
is causal, a residual Canon layer with zero weights is the identity, cached decoding
equals the full forward) and compare with the reference code's outputs.

Tolerances. Everything runs in float64. A Canon layer computed by a Conv1d, by an
explicit sum over the kernel taps, or channel by channel differs from another in the
last few ulps (about 1e-16 relative); through two decoder layers and the LM head the
logits of two correct implementations differ by less than 1e-13. Comparisons therefore
use rtol 1e-9, atol 1e-10. The left-padding case runs in float32 (the authors' eager
attention takes its softmax in float32, where a padded row's float64 mask overflows):
logits of order 1 agree with the reference to 1e-5 (float32 rounding in another order
is about 1e-6 here), and a padded row's real tokens agree with the same tokens alone to
1e-4 (their positions, hence their rotary angles in float32, are shifted by the padding).
Cached decoding is compared with the full forward of the same code to 1e-5 too: the
authors' rotary embedding takes cos and sin in float32, and a vectorised cos over a
9-position row rounds some angles one ulp away from the scalar loop over a 5-position
prefill, depending on the CPU's vector width (up to 7e-7 in the logits on an AMD EPYC
without AVX-512; the task was first validated on a machine where the two agreed).
Anything wrong in a Canon layer (a tap, the residual, the placement, the channel order
of the concatenated q/k/v or gate/up) moves logits by 1e-3 or more.
"""

import numpy as np
import pytest

from _canon import arr, canon_layer, causal_conv, close, silu
from _canon_inputs import (
    LAYER_MASK, LAYERS, MODELS, PAD, PREFILLS, T0, layer_b, layer_w, layer_x,
)

# ---------------------------------------------------------------- one Canon layer


@pytest.mark.parametrize("spec", list(LAYERS))
def test_canon_layer_closed_form(outputs, spec):
    kernel, act, res = LAYERS[spec]
    expected = canon_layer(layer_x(spec), layer_w(spec, kernel), act, res)
    close(outputs["canon_layer"][spec], expected)


def test_canon_layer_matches_reference(outputs, reference):
    for spec in LAYERS:
        close(outputs["canon_layer"][spec], reference["canon_layer"][spec])


def test_canon_layer_masked(outputs, reference):
    """Padded positions (mask 0) enter the convolution as zeros; only the outputs at
    real positions are compared (what a padded position holds is not used)."""
    real = LAYER_MASK.astype(bool)
    for spec in ("k4_res", "k3_act_res"):
        kernel, act, res = LAYERS[spec]
        x = layer_x("masked_" + spec) * LAYER_MASK[:, :, None]
        expected = canon_layer(x, layer_w("masked_" + spec, kernel), act, res)
        out = arr(outputs["canon_layer_masked"][spec])
        assert out.shape == expected.shape
        close(out[real], expected[real])
        close(out[real], arr(reference["canon_layer_masked"][spec])[real])


STREAMS = (("canonA", 0, "k4_res"), ("canonA", 1, "k3_act_res"), ("canonB", 0, "k2_plain"))


@pytest.mark.parametrize("prefill", PREFILLS)
def test_canon_layer_decode(outputs, reference, prefill):
    """Prefill then one token at a time, three layers sharing one cache: each stream
    equals its layer on the whole sequence."""
    got = outputs["canon_layer_decode"][f"prefill{prefill}"]
    assert len(got) == len(STREAMS)
    for i, (_, _, spec) in enumerate(STREAMS):
        kernel, act, res = LAYERS[spec]
        expected = canon_layer(layer_x(f"stream{i}"), layer_w(f"stream{i}", kernel), act, res)
        close(got[i], expected)
        close(got[i], reference["canon_layer_decode"][f"prefill{prefill}"][i])


@pytest.mark.parametrize("act", [None, "silu"])
def test_canon_step_bias(outputs, reference, act):
    """Decoding with a biased short convolution equals conv + bias (then SiLU) on the
    whole sequence."""
    tag = f"bias_{act}"
    y = causal_conv(layer_x(tag), layer_w(tag, 4)) + layer_b(tag)
    close(outputs["canon_step_bias"][tag], y if act is None else silu(y))
    close(outputs["canon_step_bias"][tag], reference["canon_step_bias"][tag])


def test_causal_conv_taps():
    """The helper's own orientation: the last tap multiplies the current token."""
    x = np.arange(1.0, 6.0).reshape(1, 5, 1)
    np.testing.assert_array_equal(causal_conv(x, np.array([[0.0, 0.0, 1.0]])), x)
    np.testing.assert_array_equal(causal_conv(x, np.array([[0.0, 1.0, 0.0]]))[0, :, 0], [0, 1, 2, 3, 4])


# ---------------------------------------------------------------- the model


@pytest.mark.parametrize("name", list(MODELS))
def test_model_forward_matches_reference(outputs, reference, name):
    out, ref = outputs["model_forward"][name], reference["model_forward"][name]
    assert len(out["hidden"]) == len(ref["hidden"])
    for h, h_ref in zip(out["hidden"], ref["hidden"]):
        close(h, h_ref)
    close(out["logits"], ref["logits"])


def test_canon_layers_change_the_model(outputs):
    """Each placement, with drawn weights, changes the logits of the model without them."""
    fwd = outputs["model_forward"]
    base = arr(fwd["none"]["logits"])
    for name in MODELS:
        if name != "none":
            assert np.abs(arr(fwd[name]["logits"]) - base).max() > 1e-4, name


def test_neutral_canon_weights(outputs):
    """Zero Canon weights with the residual, or only the current-token tap without it,
    leave every placement an identity: the model without Canon layers."""
    out = outputs["model_neutral_canon"]
    close(out["abcd_zero"], out["none_qk_norm"], rtol=1e-12, atol=1e-12)  # abcd has Q/K norm
    for key in ("c_zero", "abcd_plain_k2_identity"):
        close(out[key], out["none"], rtol=1e-12, atol=1e-12)


def test_neutral_canon_matches_reference(outputs, reference):
    for key, ref in reference["model_neutral_canon"].items():
        close(outputs["model_neutral_canon"][key], ref)


@pytest.mark.parametrize("name", ["abcd", "abcd_act_k3"])
def test_model_is_causal(outputs, reference, name):
    """Changing the tokens from T0 on changes nothing before T0, and changes position T0."""
    out = outputs["model_causal"][name]
    a, b = arr(out["original"]), arr(out["changed"])
    np.testing.assert_allclose(b[:, :T0], a[:, :T0], rtol=0, atol=1e-12)
    assert np.abs(b[:, T0] - a[:, T0]).max(axis=-1).min() > 1e-6
    for key in ("original", "changed"):
        close(out[key], reference["model_causal"][name][key])


@pytest.mark.parametrize("name", ["abcd", "abcd_act_k3", "b", "d"])
def test_cached_decoding_equals_full_forward(outputs, reference, name):
    out = outputs["model_decode"][name]
    close(out["full"], reference["model_decode"][name]["full"])
    for prefill in PREFILLS:  # float32 rotary angles: see the module docstring
        close(out[f"prefill{prefill}"], out["full"], rtol=1e-5, atol=1e-5)


def test_left_padding(outputs, reference):
    """The real tokens of a left-padded row give the logits they give alone; the fully
    unpadded row is compared with the reference."""
    out = outputs["model_padding"]
    padded, alone = arr(out["padded"]), arr(out["alone"])
    close(padded[0, PAD:], alone[0], rtol=1e-4, atol=1e-4)
    close(padded[1], arr(reference["model_padding"]["padded"])[1], rtol=1e-5, atol=1e-5)
    close(padded[0, PAD:], arr(reference["model_padding"]["padded"])[0, PAD:], rtol=1e-5, atol=1e-5)
    close(alone, reference["model_padding"]["alone"], rtol=1e-5, atol=1e-5)
