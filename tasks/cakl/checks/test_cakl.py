"""Checks for CAKL's k-mer features over the cases' outputs.

Every feature is an integer count, so everything is compared exactly. For each k-mer
the point cloud is the list of its start positions (recomputed from the same strings
and RCB_SEED in inputs/), and the checks recount from it, independently of the code:
- f-vector curves: f_d(t) is the number of (d+1)-sets of positions of diameter at most
  min(t, max_edge_length) (the Rips complex on a line), d <= max_dimension;
- h-vector curves: h from f by the h-vector's defining identity (the paper's formula),
  with the authors' conventions: d - 1 is the dimension of the complex at t (its
  largest nonempty dimension, not max_dimension), and h is padded with zeros to
  max_dimension + 2 entries; properties h_0 = 1 and sum_k h_k = f_(d-1);
- facet curves: the number of d-simplices alive in facet persistence at t is the
  number of maximal simplices of dimension d of the complex at t (the generators of
  its facet ideal), for the complex truncated at max_dimension;
and the reference's outputs, equal entry by entry.
"""

import numpy as np
import pytest
from _cakl import f_vector, facet_counts, h_vector, rips_simplices
from _cakl_inputs import kmers, paper_grid, paper_inputs, positions, scan_inputs

SCANS = scan_inputs()


def expected_scan(dna, k, settings):
    md, L, grid = settings["max_dimension"], settings["max_edge_length"], settings["grid"]
    out = {}
    for kmer in kmers(k):
        pts = positions(dna, kmer)
        if not pts:
            continue
        cx = rips_simplices(pts, L, md)
        fs = [f_vector(cx, t, md) for t in grid]
        out[kmer] = {
            "f": [[f[d] for f in fs] for d in range(md + 1)],
            "h": [[h_vector(f, md)[d] for f in fs] for d in range(md + 2)],
            "facet": [[c[d] for c in (facet_counts(cx, t, md, len(pts)) for t in grid)] for d in range(md + 1)],
            "n": len(pts),
        }
    return out


@pytest.fixture(scope="module")
def expected():
    return {label: expected_scan(dna, k, s) for label, dna, k, s in SCANS}


def rows(outputs, label):
    return outputs["kmer_scans"][label]


def test_f_curves_count_rips_simplices(outputs, expected):
    for label, _, _, _ in SCANS:
        for kmer, exp in expected[label].items():
            got = rows(outputs, label)[kmer]["f"]
            assert got == exp["f"], f"{label} {kmer}: f-curves {got} != {exp['f']}"
            assert all(v == exp["n"] for v in got[0]), f"{label} {kmer}: f_0 is the k-mer count"


def test_h_curves_from_f(outputs, expected):
    for label, _, _, _ in SCANS:
        for kmer, exp in expected[label].items():
            got = rows(outputs, label)[kmer]["h"]
            assert got == exp["h"], f"{label} {kmer}: h-curves {got} != {exp['h']}"
            assert all(v == 1 for v in got[0])


def test_h_sums_to_top_faces(outputs):
    for label, _, _, _ in SCANS:
        for kmer, row in rows(outputs, label).items():
            f, h = np.array(row["f"]), np.array(row["h"])
            for j in range(f.shape[1]):
                top = max(i for i in range(f.shape[0]) if f[i, j] != 0)
                assert h[:, j].sum() == f[top, j], f"{label} {kmer} t#{j}"


def test_facet_curves_count_maximal_simplices(outputs, expected):
    for label, _, _, _ in SCANS:
        for kmer, exp in expected[label].items():
            got = rows(outputs, label)[kmer]["facet"]
            assert got == exp["facet"], f"{label} {kmer}: facet curves {got} != {exp['facet']}"


def test_scans_match_reference(outputs, reference):
    for label, _, _, _ in SCANS:
        out, ref = rows(outputs, label), rows(reference, label)
        assert sorted(out) == sorted(ref), label
        for kmer in ref:
            for key in ("betti", "f", "h", "facet"):
                assert out[kmer][key] == ref[kmer][key], f"{label} {kmer} {key}"


def test_paper_features(outputs, reference):
    """The authors' settings (max_edge_length 2, filtration i * 4**k): the stacked
    matrices equal the reference's; f, h and facet rows equal the recount."""
    md = 2
    for label, dna, k in paper_inputs():
        out, ref = outputs["paper_features"][label], reference["paper_features"][label]
        assert sorted(out) == sorted(ref)
        for key in ref:
            np.testing.assert_array_equal(np.asarray(out[key]), np.asarray(ref[key]), err_msg=f"{label} {key}")
        exp = expected_scan(dna, k, {"max_dimension": md, "max_edge_length": 2.0, "grid": paper_grid(k)})
        for r, kmer in enumerate(kmers(k)):
            e = exp.get(kmer)
            for d in range(md + 1):
                assert list(np.asarray(out[f"f{d}"])[r]) == (e["f"][d] if e else [0, 0, 0]), f"{label} {kmer} f{d}"
                assert list(np.asarray(out[f"facet{d}"])[r]) == (e["facet"][d] if e else [0, 0, 0]), f"{label} {kmer} facet{d}"
            for d in range(md + 2):
                assert list(np.asarray(out[f"h{d}"])[r]) == (e["h"][d] if e else [0, 0, 0]), f"{label} {kmer} h{d}"


HAND_F = {
    1: [[4, 0], [4, 3], [5, 10], [1, 0], [2, 1]],
    2: [[3, 3, 1], [3, 3, 0], [4, 0, 0], [5, 4, 0], [4, 6, 4], [6, 9, 2], [7, 0, 0]],
    3: [[4, 6, 4, 1], [4, 6, 4, 0], [5, 7, 0, 0], [6, 15, 20, 15], [1, 0, 0, 0]],
}


def strip(h):
    """h without trailing zeros: the authors pad h with zeros to max_dimension + 2
    entries; a helper that returns the d + 1 entries of a (d - 1)-complex is as right."""
    h = list(h)
    while h and h[-1] == 0:
        h.pop()
    return h


def test_h_vector_hand(outputs, reference):
    for md, fs in HAND_F.items():
        got = [strip(h) for h in outputs["h_vector_hand"][f"max_dim{md}"]]
        assert got == [strip(h_vector(f, md)) for f in fs], f"max_dimension {md}"
        assert got == [strip(h) for h in reference["h_vector_hand"][f"max_dim{md}"]]
    # by hand: a filled triangle has h = (1, 0, 0), its boundary (1, 1, 1), four points (1, 3)
    got = [strip(h) for h in outputs["h_vector_hand"]["max_dim2"][:3]]
    assert got == [[1], [1, 1, 1], [1, 3]]
    assert strip(outputs["h_vector_hand"]["max_dim3"][1]) == [1, 1, 1, 1]
