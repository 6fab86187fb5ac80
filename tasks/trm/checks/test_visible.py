"""The checks agent mode may show a model (task.yaml `agent`): the ACT loss against its
closed form on given outputs, and the deep recursion against the same number of single
cycles chained."""
import numpy as np

import trm_inputs as I
from _trm import act_loss, close


def test_loss_closed_form_visible(outputs):
    total, _, grads = act_loss(I.stub_outputs(0), False)
    close(outputs["loss"]["loss"], total, "total loss", rtol=1e-5)
    close(outputs["loss"]["grads"]["q_halt_logits"], grads["q_halt_logits"], "d loss / d q_halt", rtol=1e-5, atol=1e-6)


def test_inner_chained_visible(outputs):
    out = outputs["inner_rope"]
    for k in ["z_H", "z_L", "logits"]:
        close(out["chained"][k], out[k], f"T cycles vs T passes of one cycle, {k}")
    assert out["grad_z_H"] is None or not np.any(out["grad_z_H"])
