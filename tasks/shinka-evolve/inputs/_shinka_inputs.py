"""Seeded inputs shared by the cases and the checks (never shown to a model).

A program archive is a small in-memory SQLite database with the two tables the
parent samplers query (`programs`, `archive`); programs come back from it as plain
attribute objects. Bandit runs are fixed sequences of (arm, reward, parent score)
updates drawn from RCB_SEED.
"""

import os
import sqlite3
from types import SimpleNamespace

import numpy as np

SEED = int(os.environ.get("RCB_SEED", "0"))


def archive_spec(seed_offset, n_programs=9, n_islands=2, archive_share=0.7):
    """Rows (id, island, correct, score, generation, children, archived) for one archive."""
    rng = np.random.default_rng(SEED + seed_offset)
    rows = []
    for i in range(n_programs):
        score = float(np.round(rng.normal(1.0, 0.6), 6))
        rows.append(
            {
                "id": f"p{i:02d}",
                "island_idx": int(i % n_islands),
                "correct": 1,
                "combined_score": score,
                "generation": int(i),
                "children_count": int(rng.integers(0, 5)),
                "archived": bool(rng.random() < archive_share) or i < 2 * n_islands,
            }
        )
    return rows


HAND_ROWS = [
    # id, island, correct, score, generation, children, archived
    ("a", 0, 1, 0.2, 0, 0, True),
    ("b", 0, 1, 0.9, 1, 3, True),
    ("c", 0, 1, 0.5, 2, 1, True),
    ("d", 0, 1, None, 3, 0, True),
    ("e", 0, 1, 0.7, 4, 0, True),
    ("f", 1, 1, 2.0, 5, 0, True),
    ("g", 0, 0, 5.0, 6, 0, True),
    ("h", 0, 1, 3.0, 7, 0, False),
]


def hand_spec():
    keys = ["id", "island_idx", "correct", "combined_score", "generation", "children_count", "archived"]
    return [dict(zip(keys, row)) for row in HAND_ROWS]


def build_db(rows):
    """An in-memory database holding `rows`; returns (conn, cursor, get_program)."""
    conn = sqlite3.connect(":memory:")
    conn.row_factory = sqlite3.Row
    cur = conn.cursor()
    cur.execute(
        "CREATE TABLE programs (id TEXT PRIMARY KEY, island_idx INTEGER, correct INTEGER, "
        "combined_score REAL, generation INTEGER, children_count INTEGER, parent_id TEXT)"
    )
    cur.execute("CREATE TABLE archive (program_id TEXT PRIMARY KEY)")
    for r in rows:
        cur.execute(
            "INSERT INTO programs VALUES (?, ?, ?, ?, ?, ?, ?)",
            (r["id"], r["island_idx"], r["correct"], r["combined_score"], r["generation"], r["children_count"], None),
        )
        if r["archived"]:
            cur.execute("INSERT INTO archive VALUES (?)", (r["id"],))
    conn.commit()

    def get_program(pid):
        c = conn.cursor()
        c.execute("SELECT * FROM programs WHERE id = ?", (pid,))
        row = c.fetchone()
        return SimpleNamespace(**dict(row)) if row else None

    return conn, cur, get_program


def eligible_ids(rows, island):
    """Archived correct programs of an island (None: all), in insertion order."""
    return [
        r["id"]
        for r in rows
        if r["archived"] and r["correct"] == 1 and (island is None or r["island_idx"] == island)
    ]


# Bandit runs: each config is AsymmetricUCB keyword arguments; each run is a list of
# (arm, reward or None, parent score or None) updates, with a baseline score set first.
BANDIT_CONFIGS = {
    "default": {},
    "no_decay": {"auto_decay": None},
    "linear": {"exponential_base": None},
    "linear_sym": {"exponential_base": None, "asymmetric_scaling": False},
    "exp_sym": {"exponential_base": 2.0, "asymmetric_scaling": False, "auto_decay": 0.9},
    "base_only": {"shift_by_parent": False, "exponential_base": 3.0},
    "parent_only": {"shift_by_baseline": False, "auto_decay": None},
    "no_adapt": {"adaptive_scale": False, "exploration_coef": 0.5, "epsilon": 0.1},
    "linear_no_shift": {"exponential_base": None, "asymmetric_scaling": False,
                        "shift_by_baseline": False, "shift_by_parent": False},
}


def bandit_run(seed_offset, n_arms=4, n_updates=14, with_none=True, all_arms=False):
    rng = np.random.default_rng(SEED + seed_offset)
    quality = rng.normal(0.0, 0.5, size=n_arms)
    baseline = float(np.round(rng.uniform(0.2, 0.6), 6))
    steps = []
    for t in range(n_updates):
        arm = int(rng.integers(0, n_arms if all_arms else n_arms - 1))  # else the last arm is never pulled
        if with_none and rng.random() < 0.15:
            reward = None
        else:
            reward = float(np.round(baseline + quality[arm] + rng.normal(0.0, 0.4), 6))
        parent = float(np.round(baseline + rng.normal(0.0, 0.3), 6)) if rng.random() < 0.6 else None
        steps.append((arm, reward, parent))
    return baseline, steps
