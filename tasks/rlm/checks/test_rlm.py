"""Checks for the RLM task. Every full run is compared with the reference: the final answer,
the LM calls in order (root turns, child RLM turns, plain sub-LM prompts) and the messages
each call was given. REPL error text is normalised (the error's class is kept, its
formatting is not: see _rlm_checks.norm_text). Values worked out by hand from the scripted
responses come first in each check.
"""

import re

from _rlm_checks import calls, norm_blocks, norm_text, same_run

# ---------------------------------------------------------------- parsing


def test_find_blocks(outputs, reference):
    # a block's surrounding whitespace is not part of its code
    out = {k: [b.strip() for b in v] for k, v in outputs["find_blocks"].items()}
    ref = {k: [b.strip() for b in v] for k, v in reference["find_blocks"].items()}
    assert out["single"] == ["print(len(context))"]
    assert out["two_and_python"] == ["a = 1", "print(a)"]  # ```python and bare ``` are not run
    assert out["trailing_space_tag"] == ["x = 41 + 1"]
    assert out["blank_lines"] == ["x = 1\n\ny = 2"]
    assert out["unclosed"] == []
    assert out["uppercase"] == []
    assert out["answer_in_text"] == ["print(1)"]
    assert out["empty"] == []
    for name in ("nested_fence", "seeded"):
        assert out[name] == ref[name], name
    assert out["nested_fence"][-1] == "print('last')"


# ---------------------------------------------------------------- metadata


def test_metadata(outputs, reference):
    out, ref = outputs["metadata"], reference["metadata"]
    words = out["words"]
    lens = [len(w) for w in words]
    text_len = len(" ".join(words))
    assert out["str"] == {"lengths": [text_len], "total": text_len, "type": "str"}
    assert out["list_str"] == {"lengths": lens, "total": sum(lens), "type": "list"}
    assert out["messages"] == {"lengths": lens + [5], "total": sum(lens) + 5, "type": "list"}
    assert out["dict_str"] == {"lengths": lens, "total": sum(lens), "type": "dict"}
    assert out["empty_list"]["total"] == 0 and out["empty_list"]["type"] == "list"
    assert out["one_str"] == {"lengths": lens[:1], "total": lens[0], "type": "list"}
    assert out["one_message"] == {"lengths": lens[-1:], "total": lens[-1], "type": "list"}
    for name in ("records", "dict_mixed"):
        assert out[name]["type"] == ref[name]["type"]
        assert out[name]["total"] == sum(out[name]["lengths"])
    assert out["records"]["type"] == "list" and out["dict_mixed"]["type"] == "dict"
    assert out == ref


# ---------------------------------------------------------------- the REPL


def test_execute(outputs, reference):
    out, ref = outputs["execute"], reference["execute"]
    steps = out["steps"]
    assert [s["stdout"] for s in steps[:2]] == ["6\n", "4\n"]
    assert steps[2]["stderr"] and "NameError" in steps[2]["stderr"]  # _names do not persist
    assert steps[3]["stdout"] == "before\n" and "ZeroDivisionError" in steps[3]["stderr"]
    assert steps[4]["stdout"] == "False\n"  # a failed cell's assignments are not kept
    assert steps[5]["stdout"] == "5\n"  # functions see the REPL's variables
    assert steps[7]["stdout"] == f"method True {len(out['ctx'])}\n"  # scaffold restored
    assert steps[9]["final_answer"] == "7" and steps[10]["final_answer"] is None
    assert steps[11]["final_answer"] == "7" and steps[12]["stdout"] == "_AnswerDict 7\n"
    assert "KeyError" in steps[14]["stderr"]
    assert all(0 <= s["execution_time"] < 30 for s in steps)  # seconds one cell took
    assert len(steps) == len(ref["steps"])
    for i, (got, want) in enumerate(zip(steps, ref["steps"])):
        assert got["stdout"] == want["stdout"], i
        assert got["final_answer"] == want["final_answer"], i
        assert got["vars"] == want["vars"], i
        assert bool(got["stderr"]) == bool(want["stderr"]), i
        assert norm_text(got["stderr"]) == norm_text(want["stderr"]), i


def test_context(outputs, reference):
    out = outputs["context"]
    assert (out["first"], out["idx_dict"], out["idx_list"], out["idx_next"], out["count"]) == (1, 1, 4, 5, 6)
    rec = out["record"]
    assert out["stdout"] == (
        f"str True {len(out['text'])}\n{rec['title']} {sum(rec['values'])}\n{out['chunks']!r}\ntail text\n"
    )
    assert out["stderr"] == ""
    assert out["messages_stdout"] == (
        "[{'role': 'user', 'content': 'hi'}, {'role': 'assistant', 'content': 'yo'}]\nlist\n"
    )
    assert out == reference["context"]


# ---------------------------------------------------------------- full runs


def test_needle(outputs, reference):
    out, ref = outputs["needle"], reference["needle"]
    assert all(0 <= it["seconds"] < 30 for it in out["blocks"])  # seconds one turn took
    assert out["result"]["response"] == out["city"]
    assert out["result"]["calls"] == {"root-model": 3, "sub-model": 1}
    q = "Which city is the secret?"
    assert calls(out["log"])[:2] == [("rlm", "root-model", q, "1"), ("rlm", "root-model", q, "2")]
    assert [b["final_answer"] for b in out["blocks"][-1]["blocks"]] == [out["city"], "second"]
    assert out["blocks"][-1]["final_answer"] == out["city"]  # the first block that answers
    assert [len(it["blocks"]) for it in out["blocks"]] == [1, 2, 2]
    # the REPL sits at depth 1: its plain sub-LM calls go to the other backend
    assert [c[1] for c in calls(out["log"]) if c[0] == "sub"] == ["sub-model"]
    assert out["result"] == ref["result"]
    same_run(out, ref)
    assert norm_blocks(out["blocks"]) == norm_blocks(ref["blocks"])


def test_subcalls(outputs, reference):
    out, ref = outputs["subcalls"], reference["subcalls"]
    n = sum(c.split().count("omega") for c in out["chunks"])
    assert out["result"]["response"] == f"{n}/{n}"
    subs = [c[2] for c in calls(out["log"]) if c[0] == "sub"]
    assert subs == ["count omega: " + c for c in out["chunks"]] + ["count omega: " + " ".join(out["chunks"])]
    assert {c[1] for c in calls(out["log"]) if c[0] == "sub"} == {"sub-model"}
    assert out["blocks"][0]["blocks"][0]["has_error"]
    assert out["blocks"][2]["blocks"][0]["stdout"] == f"{n} {n} {len(out['chunks'])}\n"
    assert out["result"] == ref["result"]
    same_run(out, ref)
    assert norm_blocks(out["blocks"]) == norm_blocks(ref["blocks"])


def test_recursive(outputs, reference):
    out, ref = outputs["recursive"], reference["recursive"]
    city = out["city"]
    fact = f"{city} is lovely"
    assert out["result"]["response"] == f"{city}: {fact} / eno is lovely".upper()
    starts = [e for e in out["events"] if e[0] == "start"]
    assert [e[1:3] for e in starts] == [[1, "small-model"], [2, "small-model"]]
    assert [e[1:] for e in out["events"] if e[0] == "complete"] == [[2, "small-model", None], [1, "small-model", None]]
    assert out["clients"][0] == "root-model" and set(out["clients"][1:]) == {"small-model"}
    seq = calls(out["log"])
    assert [c[1] for c in seq if c[0] == "rlm"][:2] == ["root-model", "root-model"]
    assert all(c[1] == "small-model" for c in seq[2:-1])
    # every RLM, root and children, runs under the custom system prompt
    systems = {e["messages"][0]["content"] for e in out["log"] if e["kind"] == "rlm"}
    assert systems == {e["messages"][0]["content"] for e in ref["log"] if e["kind"] == "rlm"}
    assert out["events"] == ref["events"]
    assert out["result"] == ref["result"]
    same_run(out, ref)
    assert norm_blocks(out["blocks"]) == norm_blocks(ref["blocks"])


def test_default_answer(outputs, reference):
    out, ref = outputs["default_answer"], reference["default_answer"]
    assert out["result"]["response"].startswith("My best guess is ")
    assert [c[3] for c in calls(out["log"])] == ["1", "2", "default"]
    assert out["result"] == ref["result"]
    same_run(out, ref)


def test_child_failure(outputs, reference):
    out, ref = outputs["child_failure"], reference["child_failure"]
    assert re.fullmatch(r"child ok \d+", out["result"]["response"])
    assert out["events"] == [[1, "root-model", False], [1, "root-model", True]]
    assert out["result"] == ref["result"]
    same_run(out, ref)


def test_child_limits(outputs, reference):
    out, ref = outputs["child_limits"], reference["child_limits"]
    assert out["result"]["response"] == "child gave up"  # the child ran out of its 3 turns
    # 60 USD a call: the first child spent 4 calls; the second was stopped over its
    # 200 - 60 left after 3 calls (180), added to the root's 60
    assert out["spent"] == [[240.0, True], [240.0, False]]
    turns = [c[3] for c in calls(out["log"]) if c[2] == "len19"]
    assert turns == ["1", "2", "3", "default"]
    assert out["result"] == ref["result"]
    same_run(out, ref)


def test_history(outputs, reference):
    out, ref = outputs["history"], reference["history"]
    assert out["first"]["response"] == "first 10"
    assert out["second"]["response"] == "6"  # system, metadata, user, assistant, REPL, user
    assert out["compacted"]["response"] == "2"
    assert {k: out[k] for k in ("first", "second", "compacted")} == {
        k: ref[k] for k in ("first", "second", "compacted")
    }
    same_run(out, ref)


def test_error_threshold(outputs, reference):
    out, ref = outputs["error_threshold"], reference["error_threshold"]
    assert out["raised"] == "ErrorThresholdExceededError"
    # the best partial answer is the last response kept before the limit stopped the run:
    # the reference stops before keeping the failing turn's own response; either is accepted
    assert out["partial"] in ("Trying.\n```repl\nprint(1 / 0)\n```", "Again.\n```repl\nprint(nope)\n```")
    same_run(out, ref)


def test_token_limit(outputs, reference):
    out, ref = outputs["token_limit"], reference["token_limit"]
    assert out["raised"] == "TokenLimitExceededError"  # 60 tokens after turn 3, over 50
    # the blank turn-2 response is never the partial answer; turn 3's may be, if kept first
    assert out["partial"] in ("Looking first.\n```repl\nprint(len(context))\n```", "Still going.\n```repl\nprint(context[:2])\n```")
    same_run(out, ref)
