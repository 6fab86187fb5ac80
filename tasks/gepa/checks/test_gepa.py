"""Checks for GEPA's candidate selection and system-aware merge over the cases' outputs:
hand-worked fronts and merges, the paper's rules recomputed from the same seeds
(instance-wise Pareto fronts, removal of dominated candidates, sampling in proportion
to how many fronts a candidate is on, common-ancestor merges), and the reference.

What is compared how. Sets are compared as sets. Random choices (a candidate from
the fronts, a pair of candidates, a common ancestor, a tie between two descendants)
are compared by their frequencies over thousands of draws against the probabilities
the method prescribes, at 5 binomial standard deviations: a correct implementation may
consume the random generator differently, so draws are never compared one by one.
The removal of dominated candidates visits candidates from the lowest aggregate score
up (the authors' order, which decides which of two candidates covering the same fronts
stays); with distinct scores that order is unique and the result is compared exactly.
Without scores, any order is accepted and the result is checked for its properties.
"""

import math

from _gepa_inputs import (
    HAND_CANDIDATES,
    HAND_PARENTS,
    HAND_SCORES,
    SEED,
    ancestors,
    distinct_scores,
    fronts_of,
    genealogy,
    score_matrix,
)

DRAWS = 4000


def as_fronts(plain):
    return {key: set(front) for key, front in plain.items()}


def keyed(fronts):
    return {str(key): set(front) for key, front in fronts.items()}


def dominated(y, others, fronts):
    return all(any(p in others for p in front) for front in fronts.values() if y in front)


def prune(fronts, scores=None):
    """Remove dominated candidates, lowest aggregate score first (ties: any order)."""
    programs = sorted({p for front in fronts.values() for p in front}, key=lambda p: 1 if scores is None else scores[p])
    alive = list(programs)
    for y in programs:
        if dominated(y, set(alive) - {y}, fronts):
            alive.remove(y)
    return {key: {p for p in front if p in alive} for key, front in fronts.items()}


def frequencies(fronts):
    freq = {}
    for front in fronts.values():
        for p in front:
            freq[p] = freq.get(p, 0) + 1
    return freq


def assert_frequencies(observed, expected_probabilities, total, what):
    """Counts within 5 binomial standard deviations (+1) of total · p, nothing outside the support."""
    observed = {str(k): v for k, v in observed.items()}
    support = {str(k) for k, p in expected_probabilities.items() if p > 0}
    assert set(observed) <= support, f"{what}: drawn outside the support: {sorted(set(observed) - support)}"
    assert sum(observed.values()) == total, f"{what}: {sum(observed.values())} draws, expected {total}"
    for key, p in expected_probabilities.items():
        count = observed.get(str(key), 0)
        sd = math.sqrt(total * p * (1 - p))
        assert abs(count - total * p) <= 5 * sd + 1, f"{what}: {key} drawn {count} times, expected {total * p:.1f} ± {5 * sd:.1f}"


def assert_pruned_properties(pruned, fronts, what):
    survivors = {p for front in pruned.values() for p in front}
    for key, front in fronts.items():
        new = pruned[str(key)]
        assert new <= front, f"{what}: front {key} gained a candidate"
        assert new == front & survivors, f"{what}: front {key} lost a surviving candidate"
        if front:
            assert new, f"{what}: front {key} emptied"
    for y in survivors:
        assert not dominated(y, survivors - {y}, keyed(pruned)), f"{what}: {y} is still dominated"


# ---- dominance -----------------------------------------------------------------------------------------


def test_dominated_hand(outputs, reference):
    out = outputs["dominated_hand"]
    assert out == {
        "covered_everywhere": True,  # fronts {1, 2} and {1, 3}: 2 and 3 remain
        "alone_on_a_front": False,  # front {2}
        "single_front": False,
        "on_no_front": True,  # vacuously
        "partly_covered": False,  # front {1, 2} has none of {3}
        "nobody_left": False,
    }
    assert out == reference["dominated_hand"]


def test_dominated_random(outputs, reference):
    import random

    rng = random.Random(SEED + 1)
    fronts = fronts_of(score_matrix(SEED + 1, 8, 12))
    expected = []
    for _ in range(60):
        y = rng.randrange(8)
        others = {p for p in range(8) if p != y and rng.random() < 0.6}
        expected.append(dominated(y, others, fronts))
    assert outputs["dominated_random"] == expected
    assert outputs["dominated_random"] == reference["dominated_random"]


# ---- removing dominated candidates from the fronts -----------------------------------------------------------


def test_remove_dominated_hand(outputs, reference):
    out = {k: as_fronts(v) for k, v in outputs["remove_dominated_hand"].items()}
    # 0 (lowest) is covered by 1 on both its fronts; then 3 is on front 3 only, with 1 there
    assert out["by_score"] == {"0": {1}, "1": {1, 2}, "2": {2}, "3": {1}}
    assert out["twins"] == {"0": {5}, "1": {5}, "2": {9}}  # 7 scores lower: it goes
    assert out["twins_swapped"] == {"0": {7}, "1": {7}, "2": {9}}
    assert out["nothing_dominated"] == {"0": {0}, "1": {1}, "2": {2}}
    assert out == {k: as_fronts(v) for k, v in reference["remove_dominated_hand"].items()}


def test_remove_dominated_random(outputs, reference):
    out = outputs["remove_dominated_random"]
    assert len(out) == 6
    for r, (got, want) in enumerate(zip(out, reference["remove_dominated_random"])):
        programs = 6 + 2 * r
        fronts = fronts_of(score_matrix(SEED + 10 + r, programs, 10 + r))
        scores = distinct_scores(SEED + 20 + r, programs)
        got = as_fronts(got)
        assert_pruned_properties(got, fronts, f"case {r}")
        assert got == keyed(prune(fronts, scores)), f"case {r}: lowest-scoring dominated candidates go first"
        assert got == as_fronts(want), f"case {r}"


def test_remove_dominated_unscored(outputs, reference):
    out = outputs["remove_dominated_unscored"]
    assert len(out) == 4
    for r, got in enumerate(out):
        fronts = fronts_of(score_matrix(SEED + 30 + r, 8, 12))
        assert_pruned_properties(as_fronts(got), fronts, f"case {r}")
    assert len(reference["remove_dominated_unscored"]) == 4


def test_dominators_random(outputs, reference):
    fronts = fronts_of(score_matrix(SEED + 40, 10, 15))
    pruned = prune(fronts, distinct_scores(SEED + 41, 10))
    expected = sorted({p for front in pruned.values() for p in front})
    assert outputs["dominators_random"] == expected
    assert outputs["dominators_random"] == reference["dominators_random"]


# ---- sampling in proportion to the number of fronts ------------------------------------------------------------


def sampling_probabilities(fronts, scores):
    freq = frequencies(prune(fronts, scores))
    total = sum(freq.values())
    return {p: f / total for p, f in freq.items()}


def test_sampling_hand(outputs, reference):
    # pruned fronts {1}, {1, 2}, {2}, {1}: 1 on three fronts, 2 on two
    fronts = {0: {0, 1}, 1: {1, 2}, 2: {2}, 3: {0, 1}}
    assert sampling_probabilities(fronts, [0.1, 0.5, 0.9]) == {1: 0.6, 2: 0.4}
    assert_frequencies(outputs["sampling_hand"]["draws"], {1: 0.6, 2: 0.4}, DRAWS, "hand fronts")
    assert_frequencies(reference["sampling_hand"]["draws"], {1: 0.6, 2: 0.4}, DRAWS, "reference")
    assert outputs["sampling_hand"]["single"] == [3] * 20  # one front holding one candidate


def test_sampling_random(outputs, reference):
    fronts = fronts_of(score_matrix(SEED + 52, 9, 14))
    probabilities = sampling_probabilities(fronts, distinct_scores(SEED + 53, 9))
    assert_frequencies(outputs["sampling_random"], probabilities, DRAWS, "random fronts")
    assert set(outputs["sampling_random"]) == set(reference["sampling_random"]) or len(probabilities) > len(reference["sampling_random"])


def selector_matrix(seed):
    matrix = score_matrix(seed, 10, 12)
    for k, row in enumerate(matrix):
        row.append(0.001 * ((7 * k + seed) % 10))
    return matrix


def test_pareto_selector(outputs, reference):
    matrix = selector_matrix(SEED + 60)
    fronts = fronts_of(matrix)
    out = outputs["pareto_selector"]
    assert as_fronts(out["fronts"]) == keyed(fronts)  # the state keeps instance-wise fronts
    aggregates = [sum(row) / len(row) for row in matrix]
    assert_frequencies(out["draws"], sampling_probabilities(fronts, aggregates), DRAWS, "ParetoCandidateSelector")
    assert as_fronts(reference["pareto_selector"]["fronts"]) == keyed(fronts)


def test_topk_selector(outputs, reference):
    matrix = selector_matrix(SEED + 62)
    aggregates = [sum(row) / len(row) for row in matrix]
    top = set(sorted(range(10), key=lambda k: aggregates[k], reverse=True)[:4])
    fronts = {key: front & top for key, front in fronts_of(matrix).items() if front & top}
    assert_frequencies(outputs["topk_selector"], sampling_probabilities(fronts, aggregates), DRAWS, "TopKParetoCandidateSelector")


# ---- system-aware merge: which common ancestors qualify -------------------------------------------------------


def desirable(candidates, ancestor, i, j):
    return any(
        (candidates[ancestor][c] == candidates[i][c] or candidates[ancestor][c] == candidates[j][c])
        and candidates[i][c] != candidates[j][c]
        for c in candidates[ancestor]
    )


def qualifying(i, j, common, done, scores, candidates):
    return sorted(
        a
        for a in common
        if (i, j, a) not in done
        and scores[a] <= scores[i]
        and scores[a] <= scores[j]
        and desirable(candidates, a, i, j)
    )


def test_filter_ancestors_hand(outputs, reference):
    out = outputs["filter_ancestors_hand"]
    assert out["3_4"] == [0]  # system: 0 and 4 have s0, 3 has s1
    assert out["3_4_done"] == []  # (3, 4, 0) was merged before
    assert out["5_6"] == [0]  # 1 (0.40) and 2 (0.45) score above 6 (0.35)
    assert out["4_6"] == [0]
    assert out["1_3"] == [0]  # answer: 0 and 1 have a0, 3 has a3
    assert out["3_5"] == [0, 1]  # extract: 0, 1 and 3 have e0, 5 has e2
    assert out["same_texts"] == []  # a candidate and itself differ nowhere
    assert out == reference["filter_ancestors_hand"]


def test_filter_ancestors_random(outputs, reference):
    import random

    candidates, parents, scores = genealogy(SEED + 70, n=18)
    rng = random.Random(SEED + 71)
    done = []
    expected = []
    for _ in range(40):
        i, j = sorted(rng.sample(range(18), 2))
        common = set(rng.sample(range(min(i, j) + 1), rng.randint(0, min(i, j) + 1)))
        if rng.random() < 0.3 and common:
            done.append((i, j, min(common)))
        expected.append(qualifying(i, j, common, done, scores, candidates))
    assert outputs["filter_ancestors_random"] == expected
    assert outputs["filter_ancestors_random"] == reference["filter_ancestors_random"]


# ---- system-aware merge: a pair of candidates and their common ancestor --------------------------------------------


def pair_probabilities(indexes, candidates, parents, scores, done=()):
    """P(i, j, a | a pair is found): a uniform valid pair (neither an ancestor of the other,
    some qualifying common ancestor), then a qualifying ancestor in proportion to its score."""
    valid = {}
    for x in range(len(indexes)):
        for y in range(x + 1, len(indexes)):
            i, j = sorted((indexes[x], indexes[y]))
            anc_i, anc_j = ancestors(parents, i), ancestors(parents, j)
            if i in anc_j or j in anc_i:
                continue
            common = qualifying(i, j, anc_i & anc_j, list(done), scores, candidates)
            if common:
                valid[(i, j)] = common
    out = {}
    for (i, j), common in valid.items():
        weight = sum(scores[a] for a in common)
        for a in common:
            out[str((i, j, a))] = scores[a] / weight / len(valid)
    return out


def assert_found(found, probabilities, what):
    found = dict(found)
    misses = found.pop("None", 0)
    assert found, f"{what}: no pair found"
    assert_frequencies(found, probabilities, sum(found.values()), what)
    return misses


def test_pair_hand_fixed(outputs, reference):
    assert outputs["pair_hand_fixed"] == {"(3, 4, 0)": 50}
    assert outputs["pair_hand_fixed"] == reference["pair_hand_fixed"]


def test_pair_hand(outputs, reference):
    probabilities = pair_probabilities([3, 4, 5, 6], HAND_CANDIDATES, HAND_PARENTS, HAND_SCORES)
    assert probabilities == {str((i, j, 0)): 0.25 for i, j in ((3, 4), (3, 6), (4, 6), (5, 6))}
    assert_found(outputs["pair_hand"], probabilities, "hand family")


def test_pair_no_pair(outputs, reference):
    out = outputs["pair_no_pair"]
    assert out["ancestors_only"] == [None] * 30
    assert out["one_program"] == [None] * 5
    assert out["already_merged"] == [None] * 30
    assert out == reference["pair_no_pair"]


def test_pair_ancestor_weights(outputs, reference):
    # ancestors 1, 2, 3 qualify (0 differs from both everywhere it matters), scores 0.3, 0.6, 0.7
    expected = {"1": 0.3 / 1.6, "2": 0.6 / 1.6, "3": 0.7 / 1.6}
    out = dict(outputs["pair_ancestor_weights"])
    assert "None" not in out
    assert_frequencies(out, expected, 3000, "ancestor chosen in proportion to its score")


def test_pair_random(outputs, reference):
    import random

    candidates, parents, scores = genealogy(SEED + 80, n=16)
    indexes = sorted(random.Random(SEED + 81).sample(range(4, 16), 6))
    out = outputs["pair_random"]
    assert out["indexes"] == indexes
    probabilities = pair_probabilities(indexes, candidates, parents, scores)
    if probabilities:
        assert_found(out["found"], probabilities, "random family")
    else:
        assert out["found"] == {"None": 1500}


# ---- system-aware merge: the merged candidate ---------------------------------------------------------------------


def merged(candidates, scores, id1, id2, ancestor):
    """Per component: the descendant's text where only one descendant changed it; the
    higher-scoring descendant's where both changed it; the common text otherwise.
    None marks a tie between two different texts (either is right)."""
    out = {}
    for c, anc in candidates[ancestor].items():
        t1, t2 = candidates[id1][c], candidates[id2][c]
        if t1 == t2:
            out[c] = t1
        elif anc == t1:
            out[c] = t2
        elif anc == t2:
            out[c] = t1
        elif scores[id1] != scores[id2]:
            out[c] = t1 if scores[id1] > scores[id2] else t2
        else:
            out[c] = None
    return out


def assert_merge(result, candidates, parents, scores, merge_candidates, what):
    assert result is not None, f"{what}: no merge"
    id1, id2, ancestor = result["ids"]
    assert id1 < id2 and id1 in merge_candidates and id2 in merge_candidates, what
    assert ancestor in ancestors(parents, id1) & ancestors(parents, id2), what
    assert result["program"] == merged(candidates, scores, id1, id2, ancestor), what
    (logged,) = result["logged"]
    assert logged[:2] == [id1, id2], what
    # the log names the descendant each component came from (either one where their texts agree)
    rest = list(logged[2])
    assert len(rest) == len(candidates[ancestor]), what
    for c in candidates[ancestor]:
        t1, t2 = candidates[id1][c], candidates[id2][c]
        if t1 != t2:
            source = id1 if result["program"][c] == t1 else id2
            assert source in rest, f"{what}: component {c} taken from {source} but not logged so"
            rest.remove(source)
    assert set(rest) <= {id1, id2}, what


def test_merge_hand(outputs, reference):
    out = outputs["merge_hand"]
    # (3, 4) via 0: system from 3 (s1), extract from 4 (e2), answer changed by both: 3 scores higher (a3)
    assert out["3_4"]["program"] == {"system": "s1", "extract": "e2", "answer": "a3"}
    assert out["1_2"]["program"] == {"system": "s1", "extract": "e2", "answer": "a0"}
    assert out["4_6"]["program"] == {"system": "s0", "extract": "e2", "answer": "a4"}  # 4: 0.50 > 6: 0.35
    assert out["5_6"]["program"] == {"system": "s1", "extract": "e2", "answer": "a3"}
    for key, pair in (("3_4", [3, 4]), ("1_2", [1, 2]), ("4_6", [4, 6]), ("5_6", [5, 6])):
        assert_merge(out[key], HAND_CANDIDATES, HAND_PARENTS, HAND_SCORES, pair, key)
        assert out[key]["ids"] == reference["merge_hand"][key]["ids"]
    assert out["3_4"]["logged"] == [[3, 4, [3, 3, 4]]]


def test_merge_tied_scores(outputs, reference):
    programs = outputs["merge_tied_scores"]
    assert len(programs) == 400
    answers = {p["answer"] for p in programs}
    assert answers <= {"a3", "a4"}, "the answer comes from one of the two descendants"
    for p in programs:
        assert (p["system"], p["extract"]) == ("s1", "e2")


def test_merge_random(outputs, reference):
    import random

    out = outputs["merge_random"]
    assert len(out) == 8
    for r, result in enumerate(out):
        candidates, parents, scores = genealogy(SEED + 90 + r, n=16)
        merge_candidates = sorted(random.Random(SEED + 100 + r).sample(range(3, 16), 6))
        if reference["merge_random"][r] is None:
            continue
        assert_merge(result, candidates, parents, scores, merge_candidates, f"family {r}")
