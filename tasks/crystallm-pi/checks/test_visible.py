"""The checks agent mode may show a model (task.yaml `agent`): the two conditioning
encoders against their numpy closed forms."""

import numpy as np
from _crystallm import close, pkv_prefix, slider_kv
from _crystallm_inputs import PKV_ENCODERS, SLIDER_ENCODERS


def test_pkv_encoder_visible(outputs):
    for name in PKV_ENCODERS:
        for i, ((k, v), (wk, wv)) in enumerate(zip(outputs["pkv_encoder"][name], pkv_prefix(name), strict=True)):
            close(k, wk, f"{name} layer {i} prefix keys")
            close(v, wv, f"{name} layer {i} prefix values")


def test_slider_encoder_visible(outputs):
    for name in SLIDER_ENCODERS:
        keys, values, mask = slider_kv(name)
        got = outputs["slider_encoder"][name]
        for what, want in (("keys", keys), ("values", values)):
            g = np.asarray(got[what])
            assert g.shape == want.shape, f"{name} {what}: shape {g.shape}"
            present = ~np.isnan(want)
            close(g[present], want[present], f"{name} {what}")
