"""Cases for CAKL's k-mer features: the authors' PH class (src/psrt.py) on the
positions of each k-mer in short DNA strings, returning the Betti, f-, h- and facet
curves per k-mer, the authors' stacked feature matrices for whole strings, and the f-
and h-vector helpers on hand-made inputs.

No assertion here: the checks (another sandbox) compare what these return with counts
recomputed from the positions, the h-vector's defining formula, the Euler
characteristic and the reference's outputs.
"""

import numpy as np
from _cakl_inputs import ALPHABET, PAPER_NUM, kmers, paper_grid, paper_inputs, scan_inputs
from src.psrt import PH, generate_all_kmers, occurrence


def as_lists(curves, dims, n):
    """A dict of curves keyed by dimension as a list over dims (zeros where absent)."""
    return [[int(v) for v in curves.get(d, np.zeros(n))] for d in range(dims)]


def featurize_kmer(points, settings):
    grid = np.array(settings["grid"])
    md = settings["max_dimension"]
    ph = PH(np.array(points)[:, np.newaxis], max_dimension=md,
            max_edge_length=settings["max_edge_length"], specific_filtration=grid)
    alphas, betti = ph.betti_curves()
    f_curves = ph.compute_f_vector_curves()
    h_curves = ph.compute_h_vector_curves()
    facet = ph.facet_curves()
    n = len(grid)
    return {
        "betti": as_lists(betti, md + 1, n),
        "f": as_lists(f_curves, md + 1, n),
        "h": as_lists(h_curves, md + 2, n),
        "facet": as_lists(facet, md + 1, n),
    }


def case_kmer_scans():
    """Every k-mer of each scanned string: its positions and four curves."""
    out = {}
    for label, dna, k, settings in scan_inputs():
        rows = {}
        for kmer in kmers(k):
            points = occurrence(dna, kmer)
            if len(points) == 0:
                continue
            rows[kmer] = featurize_kmer(points, settings)
        out[label] = rows
    return out


def case_paper_features():
    """The authors' featurization loop (example.py / Featurization.ipynb) for whole
    strings: one row per k-mer (zeros for an absent k-mer), stacked per dimension."""
    max_dimension = 2
    num = PAPER_NUM
    out = {}
    for label, dna, k in paper_inputs():
        specific_filtration = np.array(paper_grid(k))
        betti_result = (max_dimension + 1) * [None]
        f_result = (max_dimension + 1) * [None]
        h_result = (max_dimension + 2) * [None]
        facet_result = (max_dimension + 1) * [None]
        for kmer in generate_all_kmers(ALPHABET, k):
            pts = occurrence(dna, kmer)
            if len(pts) == 0:
                zero_curve = np.zeros(num + 1, dtype=float)
                for d in range(max_dimension + 1):
                    betti_result[d] = zero_curve if betti_result[d] is None else np.vstack([betti_result[d], zero_curve])
                    f_result[d] = zero_curve if f_result[d] is None else np.vstack([f_result[d], zero_curve])
                    facet_result[d] = zero_curve if facet_result[d] is None else np.vstack([facet_result[d], zero_curve])
                for d in range(max_dimension + 2):
                    h_result[d] = zero_curve if h_result[d] is None else np.vstack([h_result[d], zero_curve])
                continue
            points = np.array(pts)[:, np.newaxis]
            ph = PH(points, max_dimension=max_dimension, max_edge_length=2.0,
                    specific_filtration=specific_filtration)
            alphas, betti_curves = ph.betti_curves()
            f_curves = ph.compute_f_vector_curves()
            h_curves = ph.compute_h_vector_curves()
            facet_curves = ph.facet_curves()
            z = np.zeros_like(alphas)
            for d in range(max_dimension + 1):
                b = betti_curves.get(d, z)
                f = f_curves.get(d, z)
                fc = facet_curves.get(d, z)
                betti_result[d] = b if betti_result[d] is None else np.vstack([betti_result[d], b])
                f_result[d] = f if f_result[d] is None else np.vstack([f_result[d], f])
                facet_result[d] = fc if facet_result[d] is None else np.vstack([facet_result[d], fc])
            for d in range(max_dimension + 2):
                h = h_curves.get(d, z)
                h_result[d] = h if h_result[d] is None else np.vstack([h_result[d], h])
        feats = {}
        for d in range(max_dimension + 1):
            feats[f"betti{d}"] = np.asarray(betti_result[d], dtype=float)
            feats[f"f{d}"] = np.asarray(f_result[d], dtype=float)
            feats[f"facet{d}"] = np.asarray(facet_result[d], dtype=float)
        for d in range(max_dimension + 2):
            feats[f"h{d}"] = np.asarray(h_result[d], dtype=float)
        out[label] = feats
    return out


HAND_F = {
    1: [[4, 0], [4, 3], [5, 10], [1, 0], [2, 1]],
    2: [[3, 3, 1], [3, 3, 0], [4, 0, 0], [5, 4, 0], [4, 6, 4], [6, 9, 2], [7, 0, 0]],
    3: [[4, 6, 4, 1], [4, 6, 4, 0], [5, 7, 0, 0], [6, 15, 20, 15], [1, 0, 0, 0]],
}


def case_h_vector_hand():
    out = {}
    for md, fs in HAND_F.items():
        ph = PH(np.zeros((1, 1)), max_dimension=md)
        out[f"max_dim{md}"] = [[int(v) for v in ph.compute_h_vector(f)] for f in fs]
    return out
