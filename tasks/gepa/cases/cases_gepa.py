"""Cases for GEPA's Pareto-based candidate selection and system-aware merge: each drives
the authors' code (gepa/gepa_utils.py, gepa/proposer/merge.py, the candidate selectors
over a real GEPAState) on fixed or seeded inputs and returns what it computed. No
language model is involved: candidates are dicts of component texts with given scores.

Sets are returned as sorted lists and integer keys as strings (plain data). Random
choices are returned as counts over many draws: the checks compare them with the
probabilities the method prescribes, never draw by draw.
"""

import os
import random
import sys

from _gepa_inputs import (  # noqa: E402
    HAND_CANDIDATES,
    HAND_PARENTS,
    HAND_SCORES,
    SEED,
    distinct_scores,
    fronts_of,
    genealogy,
    score_matrix,
)

from gepa.core.state import GEPAState, ValsetEvaluation  # noqa: E402
from gepa.gepa_utils import (  # noqa: E402
    find_dominator_programs,
    is_dominated,
    remove_dominated_programs,
    select_program_candidate_from_pareto_front,
)
from gepa.proposer.merge import (  # noqa: E402
    filter_ancestors,
    find_common_ancestor_pair,
    sample_and_attempt_merge_programs_by_common_predictors,
)
from gepa.strategies.candidate_selector import ParetoCandidateSelector, TopKParetoCandidateSelector  # noqa: E402

DRAWS = 4000


def plain_fronts(fronts):
    return {str(key): sorted(front) for key, front in fronts.items()}


def counts(values):
    out = {}
    for value in values:
        key = str(value)
        out[key] = out.get(key, 0) + 1
    return out


# ---- dominance among the programs on the instance fronts ------------------------------------------------

HAND_FRONTS = {0: {1, 2}, 1: {2}, 2: {1, 3}, 3: {4}, 4: {1, 2, 3}}


def case_dominated_hand():
    return {
        "covered_everywhere": is_dominated(1, {2, 3, 4}, HAND_FRONTS),
        "alone_on_a_front": is_dominated(2, {1, 3, 4}, HAND_FRONTS),
        "single_front": is_dominated(4, {1, 2, 3}, HAND_FRONTS),
        "on_no_front": is_dominated(5, {1, 2}, HAND_FRONTS),
        "partly_covered": is_dominated(1, {3}, HAND_FRONTS),
        "nobody_left": is_dominated(3, set(), HAND_FRONTS),
    }


def case_dominated_random():
    rng = random.Random(SEED + 1)
    fronts = fronts_of(score_matrix(SEED + 1, 8, 12))
    out = []
    for _ in range(60):
        y = rng.randrange(8)
        others = {p for p in range(8) if p != y and rng.random() < 0.6}
        out.append(is_dominated(y, others, fronts))
    return out


def case_remove_dominated_hand():
    fronts = {0: {0, 1}, 1: {1, 2}, 2: {2}, 3: {0, 1, 3}}
    return {
        # 0 is on fronts 0 and 3, both also held by 1: 0 goes; 3 is covered by 0 and 1 on front 3 only
        "by_score": plain_fronts(remove_dominated_programs(fronts, scores={0: 0.1, 1: 0.5, 2: 0.9, 3: 0.2})),
        # the lowest-scoring of two programs with the same fronts goes, the other stays
        "twins": plain_fronts(remove_dominated_programs({0: {5, 7}, 1: {5, 7}, 2: {9}}, scores={5: 0.3, 7: 0.2, 9: 0.1})),
        "twins_swapped": plain_fronts(remove_dominated_programs({0: {5, 7}, 1: {5, 7}, 2: {9}}, scores={5: 0.2, 7: 0.3, 9: 0.1})),
        "nothing_dominated": plain_fronts(remove_dominated_programs({0: {0}, 1: {1}, 2: {2}}, scores=[0.3, 0.2, 0.1])),
    }


def case_remove_dominated_random():
    out = []
    for r in range(6):
        programs = 6 + 2 * r
        fronts = fronts_of(score_matrix(SEED + 10 + r, programs, 10 + r))
        out.append(plain_fronts(remove_dominated_programs(fronts, scores=distinct_scores(SEED + 20 + r, programs))))
    return out


def case_remove_dominated_unscored():
    out = []
    for r in range(4):
        fronts = fronts_of(score_matrix(SEED + 30 + r, 8, 12))
        out.append(plain_fronts(remove_dominated_programs(fronts)))
    return out


def case_dominators_random():
    fronts = fronts_of(score_matrix(SEED + 40, 10, 15))
    return sorted(find_dominator_programs(fronts, distinct_scores(SEED + 41, 10)))


# ---- frequency-weighted sampling from the pruned fronts ----------------------------------------------------


def case_sampling_hand():
    rng = random.Random(SEED + 50)
    # 1 survives on fronts 0, 1 and 3; 2 on fronts 1 and 2; 0 is dominated by 1
    fronts = {0: {0, 1}, 1: {1, 2}, 2: {2}, 3: {0, 1}}
    draws = [select_program_candidate_from_pareto_front(fronts, [0.1, 0.5, 0.9], rng) for _ in range(DRAWS)]
    single = [select_program_candidate_from_pareto_front({7: {3}}, [0.0, 0.1, 0.2, 0.3], rng) for _ in range(20)]
    return {"draws": counts(draws), "single": single}


def case_sampling_random():
    rng = random.Random(SEED + 51)
    fronts = fronts_of(score_matrix(SEED + 52, 9, 14))
    scores = distinct_scores(SEED + 53, 9)
    return counts(select_program_candidate_from_pareto_front(fronts, scores, rng) for _ in range(DRAWS))


def state_from_scores(matrix):
    """A GEPAState holding one program per row of per-instance validation scores."""
    first = ValsetEvaluation(outputs_by_val_id={}, scores_by_val_id=dict(enumerate(matrix[0])))
    state = GEPAState({"instruction": "p0"}, first)
    for k, row in enumerate(matrix[1:], start=1):
        evaluation = ValsetEvaluation(outputs_by_val_id={}, scores_by_val_id=dict(enumerate(row)))
        state.update_state_with_new_program([k - 1], {"instruction": f"p{k}"}, evaluation, None, 0, iteration_id=f"it{k}")
    return state


def selector_matrix(seed):
    """Scores on 12 instances from {0, 0.5, 1}, and one instance with a distinct score per
    program, so that aggregate scores never tie."""
    matrix = score_matrix(seed, 10, 12)
    for k, row in enumerate(matrix):
        row.append(0.001 * ((7 * k + seed) % 10))
    return matrix


def case_pareto_selector():
    state = state_from_scores(selector_matrix(SEED + 60))
    selector = ParetoCandidateSelector(random.Random(SEED + 61))
    return {
        "fronts": plain_fronts(state.get_pareto_front_mapping()),
        "draws": counts(selector.select_candidate_idx(state) for _ in range(DRAWS)),
    }


def case_topk_selector():
    state = state_from_scores(selector_matrix(SEED + 62))
    selector = TopKParetoCandidateSelector(4, random.Random(SEED + 63))
    return counts(selector.select_candidate_idx(state) for _ in range(DRAWS))


# ---- system-aware merge: ancestors, pairs, and the merged candidate ----------------------------------------


def case_filter_ancestors_hand():
    done = ([(3, 4, 0)], [])
    return {
        "3_4": sorted(filter_ancestors(3, 4, {0}, ([], []), HAND_SCORES, HAND_CANDIDATES)),
        "3_4_done": sorted(filter_ancestors(3, 4, {0}, done, HAND_SCORES, HAND_CANDIDATES)),
        "5_6": sorted(filter_ancestors(5, 6, {0, 1, 2}, ([], []), HAND_SCORES, HAND_CANDIDATES)),
        "4_6": sorted(filter_ancestors(4, 6, {0, 2}, ([], []), HAND_SCORES, HAND_CANDIDATES)),
        "1_3": sorted(filter_ancestors(1, 3, {0}, ([], []), HAND_SCORES, HAND_CANDIDATES)),
        "3_5": sorted(filter_ancestors(3, 5, {0, 1}, ([], []), HAND_SCORES, HAND_CANDIDATES)),
        "same_texts": sorted(filter_ancestors(1, 1, {0}, ([], []), HAND_SCORES, HAND_CANDIDATES)),
    }


def case_filter_ancestors_random():
    candidates, parents, scores = genealogy(SEED + 70, n=18)
    rng = random.Random(SEED + 71)
    done = ([], [])
    out = []
    for _ in range(40):
        i, j = sorted(rng.sample(range(18), 2))
        common = set(rng.sample(range(min(i, j) + 1), rng.randint(0, min(i, j) + 1)))
        if rng.random() < 0.3 and common:
            done[0].append((i, j, min(common)))
        out.append(sorted(filter_ancestors(i, j, common, done, scores, candidates)))
    return out


def pair_draws(indexes, candidates, parents, scores, done=None, seed_offset=0, draws=1500):
    found = []
    for d in range(draws):
        rng = random.Random(SEED + seed_offset + 7919 * d)
        triple = find_common_ancestor_pair(rng, parents, indexes, done or ([], []), scores, candidates)
        found.append(None if triple is None else list(triple))
    return found


def case_pair_hand_fixed():
    # a fixed pair: 3 and 4 have the single common ancestor 0
    return counts(map(tuple, pair_draws([3, 4], HAND_CANDIDATES, HAND_PARENTS, HAND_SCORES, draws=50)))


def case_pair_hand():
    # pairs among 3, 4, 5, 6: 3 and 4 are ancestors of 5; the other pairs share ancestor 0 only
    found = pair_draws([3, 4, 5, 6], HAND_CANDIDATES, HAND_PARENTS, HAND_SCORES, seed_offset=1, draws=1200)
    return counts(None if t is None else tuple(t) for t in found)


def case_pair_no_pair():
    # 0, 1, 3 lie on one line of descent; 4 alone; (3, 4) via 0 was merged already
    return {
        "ancestors_only": pair_draws([0, 1, 3], HAND_CANDIDATES, HAND_PARENTS, HAND_SCORES, draws=30),
        "one_program": pair_draws([4], HAND_CANDIDATES, HAND_PARENTS, HAND_SCORES, draws=5),
        "already_merged": pair_draws([3, 4], HAND_CANDIDATES, HAND_PARENTS, HAND_SCORES, done=([(3, 4, 0)], []), draws=30),
    }


def ancestor_weights_family():
    """Two programs with three common ancestors of different scores."""
    candidates = [
        {"system": "s0", "extract": "e0", "answer": "a0"},
        {"system": "s1", "extract": "e0", "answer": "a0"},
        {"system": "s1", "extract": "e2", "answer": "a0"},
        {"system": "s1", "extract": "e2", "answer": "a3"},
        {"system": "s4", "extract": "e2", "answer": "a3"},
        {"system": "s1", "extract": "e5", "answer": "a3"},
    ]
    parents = [[None], [0], [1], [2], [3], [3]]
    scores = [0.1, 0.3, 0.6, 0.7, 0.8, 0.9]
    return candidates, parents, scores


def case_pair_ancestor_weights():
    candidates, parents, scores = ancestor_weights_family()
    found = pair_draws([4, 5], candidates, parents, scores, seed_offset=2, draws=3000)
    return counts(None if t is None else t[2] for t in found)


def case_pair_random():
    candidates, parents, scores = genealogy(SEED + 80, n=16)
    rng = random.Random(SEED + 81)
    indexes = sorted(rng.sample(range(4, 16), 6))
    found = pair_draws(indexes, candidates, parents, scores, seed_offset=3, draws=1500)
    return {"indexes": indexes, "found": counts(None if t is None else tuple(t) for t in found)}


def merge_once(merge_candidates, candidates, parents, scores, seed):
    done = ([], [])
    result = sample_and_attempt_merge_programs_by_common_predictors(
        scores, random.Random(seed), merge_candidates, done, candidates, parents
    )
    if result is None:
        return None
    new_program, id1, id2, ancestor = result
    return {
        "program": new_program,
        "ids": [id1, id2, ancestor],
        "logged": [[a, b, sorted(desc)] for a, b, desc in done[1]],
    }


def case_merge_hand():
    return {
        "3_4": merge_once([3, 4], HAND_CANDIDATES, HAND_PARENTS, HAND_SCORES, SEED),
        "1_2": merge_once([1, 2], HAND_CANDIDATES, HAND_PARENTS, HAND_SCORES, SEED),
        "4_6": merge_once([4, 6], HAND_CANDIDATES, HAND_PARENTS, HAND_SCORES, SEED),
        "5_6": merge_once([5, 6], HAND_CANDIDATES, HAND_PARENTS, HAND_SCORES, SEED),
    }


def case_merge_tied_scores():
    scores = list(HAND_SCORES)
    scores[4] = scores[3]
    return [merge_once([3, 4], HAND_CANDIDATES, HAND_PARENTS, scores, SEED + s)["program"] for s in range(400)]


def case_merge_random():
    out = []
    for r in range(8):
        candidates, parents, scores = genealogy(SEED + 90 + r, n=16)
        rng = random.Random(SEED + 100 + r)
        merge_candidates = sorted(rng.sample(range(3, 16), 6))
        out.append(merge_once(merge_candidates, candidates, parents, scores, SEED + 110 + r))
    return out
