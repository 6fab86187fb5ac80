"""The checks agent mode may show a model (task.yaml `agent`): plain gradient descent on
the convex toy energy against its closed form, and the replay buffer on an empty buffer."""
import numpy as np
from _ebt import close, descend, toy, toy_energy
from ebt_inputs import token_batch


def test_toy_descent_visible(outputs):
    out = outputs["toy_descent"]["small"]
    t, y0 = toy(0)
    states = descend(y0, t, 0.3, 4)
    close(out["distributions"], np.stack(states), "candidates")
    close(out["energies"], np.stack([toy_energy(y, t) for y in [y0] + states[:-1]]), "energies")


def test_replay_buffer_empty_visible(outputs):
    inputs, replay, targets = outputs["replay_buffer"]["empty"]
    first = token_batch(20)
    close(inputs, first[:, :-1], "fresh inputs")
    close(targets, first[:, 1:], "fresh targets")
    assert replay is None
