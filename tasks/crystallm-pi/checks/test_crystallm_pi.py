"""Checks for CrystaLLM-pi's property conditioning (see checks/_crystallm.py for the
closed forms and the tolerance)."""

import numpy as np
from _crystallm import close, differ, pkv_prefix, slider_contribution, slider_kv
from _crystallm_inputs import PKV_ENCODERS, PKV_MODEL, SLIDER_ENCODERS, pkv_model_conditions, pkv_model_tokens

# ---- prefix attention (PKV) -------------------------------------------------------------


def test_pkv_encoder_closed_form(outputs):
    for name, c in PKV_ENCODERS.items():
        got = outputs["pkv_encoder"][name]
        assert len(got) == c["n_layer"], f"{name}: {len(got)} layers of prefixes, expected {c['n_layer']}"
        for i, ((k, v), (wk, wv)) in enumerate(zip(got, pkv_prefix(name))):
            close(k, wk, f"{name} layer {i} prefix keys")
            close(v, wv, f"{name} layer {i} prefix values")


def test_pkv_encoder_matches_reference(outputs, reference):
    for name in PKV_ENCODERS:
        for i, (kv, rkv) in enumerate(zip(outputs["pkv_encoder"][name], reference["pkv_encoder"][name], strict=True)):
            close(kv[0], rkv[0], f"{name} layer {i} keys")
            close(kv[1], rkv[1], f"{name} layer {i} values")


def test_pkv_shared_prefix_is_the_same_in_every_layer(outputs):
    layers = outputs["pkv_encoder"]["shared"]
    for i, (k, v) in enumerate(layers[1:], 1):
        close(k, layers[0][0], f"shared keys, layer {i} vs 0", rtol=0, atol_rel=0)
        close(v, layers[0][1], f"shared values, layer {i} vs 0", rtol=0, atol_rel=0)
    differ(outputs["pkv_encoder"]["per_layer"][1][0], outputs["pkv_encoder"]["per_layer"][0][0],
           "per-layer prefixes (layer 1 vs 0)")


def test_pkv_model_matches_reference(outputs, reference):
    got, ref = outputs["pkv_model"], reference["pkv_model"]
    for key in ("ones", "no_mask", "padded", "row0_alone", "step"):
        close(got[key], ref[key], f"PKV logits ({key})")
    for i, (kv, rkv) in enumerate(zip(got["cache"], ref["cache"], strict=True)):
        close(kv[0], rkv[0], f"cached keys, layer {i}")
        close(kv[1], rkv[1], f"cached values, layer {i}")


def test_pkv_model_cache_starts_with_the_prefix(outputs):
    """The cache holds n_prefix_tokens + seq positions per layer, the prefix first."""
    c = PKV_ENCODERS["per_layer"]
    P, T = c["n_prefix_tokens"], PKV_MODEL["seq"]
    cache = outputs["pkv_model"]["cache"]
    assert len(cache) == c["n_layer"]
    for i, ((k, v), (wk, wv)) in enumerate(zip(cache, pkv_prefix("per_layer", pkv_model_conditions()))):
        k, v = np.asarray(k), np.asarray(v)
        assert k.shape == (c["batch"], c["n_head"], P + T, c["n_embd"] // c["n_head"]), k.shape
        close(k[:, :, :P], wk, f"layer {i}: cached prefix keys")
        close(v[:, :, :P], wv, f"layer {i}: cached prefix values")


def test_pkv_model_prefix_always_visible(outputs):
    """An all-ones mask extended over the prefix is the same as no mask at all; padding
    after a token does not change its logits; a row does not depend on the others."""
    got = outputs["pkv_model"]
    ones = np.asarray(got["ones"])
    close(got["no_mask"], ones, "all-ones mask vs no mask")
    close(np.asarray(got["row0_alone"])[0], ones[0], "row 0 alone vs in the batch")
    padded = np.asarray(got["padded"])
    close(padded[:3], ones[:3], "unpadded rows with the padded mask")
    close(padded[4, :-2], ones[4, :-2], "right-padded row, tokens before the padding")
    differ(padded[3], ones[3], "left padding")


def test_pkv_model_conditioning(outputs):
    """Rows 0, 1 and 2 hold the same tokens; rows 0 and 2 also the same properties."""
    ones = np.asarray(outputs["pkv_model"]["ones"])
    ids, _ = pkv_model_tokens()
    assert (ids[0] == ids[1]).all() and (ids[0] == ids[2]).all()
    close(ones[2], ones[0], "same tokens and properties")
    differ(ones[1], ones[0], "other properties, same tokens", at_least=1e-2)


def test_pkv_model_incremental_step(outputs):
    """The last token fed with the cache of the others (prefix included) gives the same
    logits as the whole sequence at once."""
    close(np.asarray(outputs["pkv_model"]["step"])[:, 0], np.asarray(outputs["pkv_model"]["no_mask"])[:, -1],
          "incremental step vs full sequence")


# ---- residual attention (Slider) --------------------------------------------------------


def test_slider_encoder_closed_form(outputs):
    for name, c in SLIDER_ENCODERS.items():
        got = outputs["slider_encoder"][name]
        keys, values, mask = slider_kv(name)
        assert np.array_equal(np.asarray(got["mask"], dtype=bool), mask), f"{name}: presence mask"
        for what, want in (("keys", keys), ("values", values)):
            g = np.asarray(got[what])
            assert g.shape == want.shape, f"{name} {what}: shape {g.shape}, expected {want.shape}"
            present = ~np.isnan(want)
            close(g[present], want[present], f"{name} {what} of the present variables")
        close(got["factor"], 0.75, f"{name} factor")


def test_slider_encoder_matches_reference(outputs, reference):
    for name in SLIDER_ENCODERS:
        got, ref = outputs["slider_encoder"][name], reference["slider_encoder"][name]
        present = np.asarray(ref["mask"], dtype=bool)[:, None, :, None]
        for what in ("keys", "values"):
            g, r = np.asarray(got[what]), np.asarray(ref[what])
            assert g.shape == r.shape, f"{name} {what}: shape {g.shape}, expected {r.shape}"
            sel = np.broadcast_to(present, r.shape)
            close(g[sel], r[sel], f"{name} {what}")
        assert np.array_equal(np.asarray(got["mask"], dtype=bool), np.asarray(ref["mask"], dtype=bool))


def test_slider_attention_closed_form(outputs):
    got = outputs["slider_attention"]
    base = np.asarray(got["none"])
    close(got["f0"], base, "factor 0 vs no slider input")
    for key, f in (("f07", 0.7), ("fm13", -1.3)):
        close(np.asarray(got[key]) - base, slider_contribution(f), f"slider contribution at factor {f}",
              atol_rel=2e-5)
        close(np.asarray(got[key])[2], base[2], f"factor {f}, row with every variable missing")


def test_slider_attention_matches_reference(outputs, reference):
    for key in ("f07", "fm13", "f0", "none"):
        close(outputs["slider_attention"][key], reference["slider_attention"][key], f"attention output ({key})")


def test_slider_model_matches_reference(outputs, reference):
    for key in ("cond", "all_missing", "none", "gpt2", "dropped", "step", "zero_factor"):
        close(outputs["slider_model"][key], reference["slider_model"][key], f"Slider logits ({key})")


def test_slider_model_without_conditions_is_gpt2(outputs):
    """Every variable missing, no condition given, or the factors at zero: the model is
    GPT-2 with the same weights."""
    got = outputs["slider_model"]
    gpt2 = np.asarray(got["gpt2"])
    close(got["all_missing"], gpt2, "every variable missing vs GPT-2")
    close(got["none"], gpt2, "no condition values vs GPT-2")
    close(got["zero_factor"], gpt2, "zero slider factors vs GPT-2")
    close(np.asarray(got["cond"])[2], gpt2[2], "row with every variable missing vs GPT-2")
    differ(np.asarray(got["cond"])[0], gpt2[0], "conditioning (row 0)", at_least=1e-2)
    differ(np.asarray(got["cond"])[1], gpt2[1], "conditioning (row 1)", at_least=1e-2)


def test_slider_model_missing_variable_is_absent(outputs):
    """A missing variable counts as if the model did not have it at all."""
    got = outputs["slider_model"]
    close(np.asarray(got["dropped"])[1], np.asarray(got["cond"])[1], "variable 1 missing vs removed")
    differ(np.asarray(got["dropped"])[0], np.asarray(got["cond"])[0], "removing a present variable",
           at_least=1e-3)


def test_slider_model_incremental_step(outputs):
    close(np.asarray(outputs["slider_model"]["step"])[:, 0], np.asarray(outputs["slider_model"]["cond"])[:, -1],
          "incremental step vs full sequence")
