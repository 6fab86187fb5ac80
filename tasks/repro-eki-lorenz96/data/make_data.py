"""Writes this task's data (run once by the task's author; never shipped to the agent).

The true Lorenz-96 system (N = 40, F = 8, dt = 0.05, RK4), started from x_i = 8 except
x_0 = 8.01, spun up for 200 steps, then cut into windows of 200 steps. Each window is one
file: its 200 states (the states after each of its steps), float64, shape (200, 40).
Windows 0-7 are train/, 8-11 test/; windows 12-15 go to test-swap/ under the names of
8-11: the harness's leakage rerun puts them in place of test/, and a fit that moves with
them has seen the test data.

    python data/make_data.py   (from the task folder)
"""

from pathlib import Path

import numpy as np

N, F, DT, SPINUP, WINDOW = 40, 8.0, 0.05, 200, 200


def tendency(x: np.ndarray) -> np.ndarray:
    return (np.roll(x, -1, axis=-1) - np.roll(x, 2, axis=-1)) * np.roll(x, 1, axis=-1) - x + F


def rk4(x: np.ndarray) -> np.ndarray:
    k1 = tendency(x)
    k2 = tendency(x + 0.5 * DT * k1)
    k3 = tendency(x + 0.5 * DT * k2)
    k4 = tendency(x + DT * k3)
    return x + DT / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)


def main() -> None:
    here = Path(__file__).parent
    x = np.full((1, N), F)
    x[:, 0] += 0.01
    for _ in range(SPINUP):
        x = rk4(x)
    for w in range(16):
        states = np.zeros((WINDOW, N))
        for step in range(WINDOW):
            x = rk4(x)
            states[step] = x[0]
        folder, name = ("train", w) if w < 8 else ("test", w) if w < 12 else ("test-swap", w - 4)
        (here / folder).mkdir(exist_ok=True)
        np.save(here / folder / f"window_{name:02d}.npy", states)


if __name__ == "__main__":
    main()
