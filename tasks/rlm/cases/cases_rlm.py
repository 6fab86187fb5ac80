"""Cases for Recursive Language Models: each drives the authors' `RLM` (rlm/core/rlm.py), its
`LocalREPL` (rlm/environments/local_repl.py) and the code-block parser (rlm/utils/parsing.py)
with a scripted LM (cases/_scripted.py, over the authors' tests/mock_lm.py) and returns
plain data: final answers, the messages each LM call was given, the order of the calls,
REPL outputs. Contexts are seeded from RCB_SEED; the scripted responses are fixed code.
"""

import os
import random

from _scripted import Script, child_key, clean, repl, summary

from rlm import RLM
from rlm.environments.local_repl import LocalREPL
from rlm.logger import RLMLogger
from rlm.core.types import QueryMetadata
from rlm.utils.parsing import find_code_blocks

SEED = int(os.environ.get("RCB_SEED", "0"))
CITIES = ["Lisbon", "Nairobi", "Quito", "Osaka", "Tromso", "Hobart", "Tbilisi", "Cusco"]
WORDS = ["alpha", "beta", "gamma", "delta", "omega", "sigma", "kappa", "theta"]


def _rng(offset):
    return random.Random(SEED * 1000 + offset)


def _haystack(rng, n_lines, needle):
    lines = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 7))) for _ in range(n_lines)]
    pos = rng.randrange(n_lines)
    lines[pos] = f"note {pos}: SECRET={needle} (keep quiet)"
    return "\n".join(lines), pos


def _block_view(completion):
    meta = completion.metadata or {}
    out = []
    for it in meta.get("iterations", []):
        out.append(
            {
                "seconds": it["iteration_time"],
                "response": it["response"],
                "final_answer": it["final_answer"],
                "blocks": [
                    {
                        "code": b["code"],
                        "stdout": b["result"]["stdout"],
                        "has_error": bool(b["result"]["stderr"]),
                        "final_answer": b["result"]["final_answer"],
                        "n_sub": len(b["result"]["rlm_calls"]),
                        "sub_responses": [c["response"] for c in b["result"]["rlm_calls"]],
                        "sub_iterations": [
                            len((c.get("metadata") or {}).get("iterations", []))
                            for c in b["result"]["rlm_calls"]
                        ],
                    }
                    for b in it["code_blocks"]
                ],
            }
        )
    return out


# ---------------------------------------------------------------- parsing


def case_find_blocks():
    texts = {
        "single": "Let me look.\n```repl\nprint(len(context))\n```\n",
        "two_and_python": (
            "First:\n```repl\na = 1\n```\nNot this one:\n```python\nb = 2\n```\n"
            "Plain fence:\n```\nc = 3\n```\nSecond:\n```repl\nprint(a)\n```"
        ),
        "trailing_space_tag": "```repl   \nx = 41 + 1\n```",
        "blank_lines": "```repl\n\n\nx = 1\n\ny = 2\n\n\n```",
        "unclosed": "```repl\nq = 1\nprint(q)",
        "uppercase": "```REPL\nprint(1)\n```",
        "nested_fence": (
            "```repl\ns = '''\n```\nprint('inner')\n'''\nprint(s)\n```\n"
            "```repl\nprint('last')\n```"
        ),
        "answer_in_text": 'I will set answer["ready"] = True soon, not yet.\n```repl\nprint(1)\n```',
        "empty": "",
        "seeded": "",
    }
    rng = _rng(1)
    parts, expect = [], []
    for i in range(rng.randint(3, 6)):
        kind = rng.choice(["repl", "python", "text"])
        body = f"v{i} = {rng.randint(0, 99)}\nprint(v{i})"
        if kind == "repl":
            parts.append(f"Step {i}:\n```repl\n{body}\n```")
        elif kind == "python":
            parts.append(f"Aside {i}:\n```python\n{body}\n```")
        else:
            parts.append(f"Thinking about step {i} in prose.")
    texts["seeded"] = "\n".join(parts)
    return {name: find_code_blocks(text) for name, text in texts.items()}


# ---------------------------------------------------------------- metadata


def case_metadata():
    rng = _rng(9)
    words = [rng.choice(WORDS) * rng.randint(1, 4) for _ in range(rng.randint(2, 6))]
    prompts = {
        "str": " ".join(words),
        "list_str": words,
        "messages": [{"role": "user", "content": w} for w in words]
        + [{"role": "assistant", "content": 12345}],
        "records": [{"id": i, "w": w, "note": "café"} for i, w in enumerate(words)],
        "one_str": [words[0]],
        "one_message": [{"role": "user", "content": words[-1]}],
        "dict_str": {f"k{i}": w for i, w in enumerate(words)},
        "dict_mixed": {"text": words[0], "nums": [1, 2, 3], "nested": {"a": words[-1], "b": "naïve"}},
        "empty_list": [],
    }
    out = {}
    for name, prompt in prompts.items():
        meta = QueryMetadata(prompt)
        out[name] = {
            "lengths": list(meta.context_lengths),
            "total": meta.context_total_length,
            "type": meta.context_type,
        }
    out["words"] = words
    return out


# ---------------------------------------------------------------- the REPL


def _exec_view(result):
    return {
        "execution_time": result.execution_time,
        "stdout": result.stdout,
        "stderr": result.stderr,
        "final_answer": result.final_answer,
        "vars": sorted(
            k
            for k, v in result.locals.items()
            if isinstance(v, (str, int, float, bool, list, dict, tuple))
        ),
    }


def case_execute():
    rng = _rng(2)
    ctx = " ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 12)))
    env = LocalREPL(context_payload=ctx)
    codes = [
        "x = 3\nprint(x * 2)",
        "_hidden = 5\ny = x + 1\nprint(y)",
        "print(_hidden)",
        "z = 10\nprint('before')\n1 / 0",
        "print('z' in SHOW_VARS())",
        "def f(n):\n    return n + y\nprint(f(1))",
        "context = 'clobbered'\nllm_query = None\nprint(context)",
        "print(type(llm_query).__name__, context == context_0, len(context))",
        "import math\nprint(math.sqrt(16))",
        "answer['content'] = str(x + y)\nanswer['ready'] = True\nprint('set')",
        "print(answer['ready'], answer['content'])",
        "answer = {'content': 7, 'ready': True}",
        "print(type(answer).__name__, answer['content'])",
        "print(llm_query('hello').startswith('Error'))",
        "raise KeyError('missing')",
    ]
    try:
        return {"ctx": ctx, "steps": [_exec_view(env.execute_code(code)) for code in codes]}
    finally:
        env.cleanup()


def case_context():
    rng = _rng(3)
    text = "\n".join(rng.choice(WORDS) for _ in range(rng.randint(4, 9)))
    record = {"title": rng.choice(CITIES), "values": [rng.randint(0, 9) for _ in range(4)]}
    chunks = [rng.choice(WORDS) * rng.randint(1, 3) for _ in range(3)]
    env = LocalREPL(context_payload=text)
    try:
        out = {"first": env.get_context_count()}
        out["idx_dict"] = env.add_context(record)
        out["idx_list"] = env.add_context(chunks, 4)
        out["idx_next"] = env.add_context("tail text")
        out["count"] = env.get_context_count()
        r = env.execute_code(
            "print(type(context).__name__, context == context_0, len(context_0))\n"
            "print(context_1['title'], sum(context_1['values']))\n"
            "print(context_4)\n"
            "print(context_5)"
        )
        out["stdout"] = r.stdout
        out["stderr"] = r.stderr
        out["text"] = text
        out["record"] = record
        out["chunks"] = chunks
        msgs = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]
        env2 = LocalREPL(context_payload=msgs)
        r2 = env2.execute_code("print(context)\nprint(type(context).__name__)")
        env2.cleanup()
        out["messages_stdout"] = r2.stdout
        return out
    finally:
        env.cleanup()


# ---------------------------------------------------------------- full runs


def case_needle():
    rng = _rng(4)
    city = rng.choice(CITIES)
    haystack, pos = _haystack(rng, rng.randint(20, 40), city)
    question = "Which city is the secret?"
    turns = {
        question: {
            1: "I'll inspect the context first.\n"
            + repl("lines = context.split('\\n')", "print(len(lines))", "print(lines[0][:20])")
            + "\nThis is only an example, do not run it:\n```python\nprint('ignored')\n```",
            2: "Search, then ask a sub-LM. I will set answer['ready'] = True later.\n"
            + repl("hits = [l for l in lines if 'SECRET=' in l]", "print(hits)")
            + "\nand\n"
            + repl("guess = llm_query('extract: ' + hits[0])", "print(guess)"),
            3: "Done.\n"
            + repl("answer['content'] = guess", "answer['ready'] = True")
            + "\n"
            + repl("print('after the answer')", "answer['content'] = 'second'", "answer['ready'] = True"),
            4: repl("answer['content'] = 'too late'", "answer['ready'] = True"),
        }
    }

    def sub(prompt):
        if prompt.startswith("extract: "):
            return prompt.split("SECRET=")[1].split(" ")[0]
        return "?"

    script = Script(turns, sub=sub)
    with script.patch():
        rlm = RLM(
            backend="openai",
            backend_kwargs={"model_name": "root-model"},
            other_backends=["openai"],
            other_backend_kwargs=[{"model_name": "sub-model"}],
            max_iterations=6,
            logger=RLMLogger(),
        )
        result = rlm.completion(haystack, root_prompt=question)
    return {
        "city": city,
        "pos": pos,
        "result": summary(result),
        "log": clean(script.log),
        "blocks": _block_view(result),
    }


def case_subcalls():
    rng = _rng(5)
    chunks = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 8))) for _ in range(4)]
    question = "How many times does omega occur?"
    turns = {
        question: {
            1: repl("print(type(context).__name__, len(context))", "print(undefined_name)"),
            2: repl(
                "counts = llm_query_batched(['count omega: ' + c for c in context])",
                "print(counts)",
            )
            + "\n"
            + repl("context = 'gone'", "print(context)"),
            3: repl(
                "total = sum(int(c) for c in counts)",
                "check = rlm_query('count omega: ' + ' '.join(context))",
                "print(total, check, len(context))",
            ),
            4: repl("answer['content'] = f'{total}/{check}'", "answer['ready'] = True"),
        }
    }

    def sub(prompt):
        if prompt.startswith("count omega: "):
            return str(prompt.split(" ", 2)[2].split().count("omega"))
        return "?"

    script = Script(turns, sub=sub)
    with script.patch():
        rlm = RLM(
            backend="openai",
            backend_kwargs={"model_name": "root-model"},
            other_backends=["openai"],
            other_backend_kwargs=[{"model_name": "sub-model"}],
            max_iterations=5,
            logger=RLMLogger(),
        )
        result = rlm.completion(chunks, root_prompt=question)
    return {
        "chunks": chunks,
        "result": summary(result),
        "log": clean(script.log),
        "blocks": _block_view(result),
    }


def case_recursive():
    rng = _rng(6)
    city = rng.choice(CITIES)
    haystack, pos = _haystack(rng, rng.randint(10, 20), city)
    question = "Find the secret and describe it."
    child_prompt = "Describe the city named in: " + f"SECRET={city} ({len(haystack)})"
    leaf_prompt = "one fact about " + city
    turns = {
        question: {
            1: repl("hits = [l for l in context.splitlines() if 'SECRET' in l]", "print(hits)"),
            2: repl(
                f"desc = rlm_query({child_prompt!r}, model='small-model')",
                "print(desc)",
            ),
            3: repl("answer['content'] = desc.upper()", "answer['ready'] = True"),
        },
        child_key(child_prompt): {
            1: repl("print(context)", "print('SHARED' in SHOW_VARS(), 'ROOT_ONLY' in SHOW_VARS())"),
            2: repl(
                "name = context.split('SECRET=')[1].split(' ')[0]",
                f"fact = rlm_query({leaf_prompt!r})",
                "print(fact)",
            ),
            3: repl("answer['content'] = name + ': ' + fact", "answer['ready'] = True"),
        },
        child_key(leaf_prompt): {
            1: repl("print(context, SHARED)"),
            2: repl("fact = llm_query('leaf: ' + context)", "alt = rlm_query('leaf: ' + context[::-1])"),
            3: repl("answer['content'] = fact + ' / ' + alt", "answer['ready'] = True"),
        },
    }
    events = []
    script = Script(turns, sub=lambda p: f"{p.split()[-1]} is lovely")
    with script.patch():
        rlm = RLM(
            backend="openai",
            backend_kwargs={"model_name": "root-model"},
            max_depth=3,
            max_iterations=5,
            custom_system_prompt="You are a careful RLM. Tools:{custom_tools_section}",
            custom_tools={"ROOT_ONLY": "root data"},
            custom_sub_tools={"SHARED": "shared data"},
            logger=RLMLogger(),
            on_subcall_start=lambda d, m, p: events.append(["start", d, m, p]),
            on_subcall_complete=lambda d, m, t, e: events.append(["complete", d, m, e]),
        )
        result = rlm.completion(haystack, root_prompt=question)
    return {
        "city": city,
        "result": summary(result),
        "log": clean(script.log),
        "blocks": _block_view(result),
        "events": events,
        "clients": script.clients,
    }


def case_default_answer():
    rng = _rng(7)
    ctx = " ".join(rng.choice(WORDS) for _ in range(6))
    question = "Say something."
    turns = {
        question: {
            1: "No code this turn, just thinking.",
            2: repl("print(context.split()[0])"),
            "default": "My best guess is " + ctx.split()[-1],
        }
    }
    script = Script(turns)
    with script.patch():
        rlm = RLM(backend="openai", backend_kwargs={"model_name": "root-model"}, max_iterations=2)
        result = rlm.completion(ctx, root_prompt=question)
    return {"result": summary(result), "log": clean(script.log)}


def case_child_failure():
    rng = _rng(8)
    ctx = " ".join(rng.choice(WORDS) for _ in range(5))
    question = "Delegate and report."
    bad_prompt = "please fail " + ctx
    good_prompt = "please answer " + ctx + "!"
    turns = {
        question: {
            1: repl(
                f"r1 = rlm_query({bad_prompt!r})",
                f"r2 = rlm_query({good_prompt!r})",
                "print(r1.startswith('Error'), r2)",
            ),
            2: repl("answer['content'] = r2", "answer['ready'] = True"),
        },
        child_key(good_prompt): {
            1: repl("print(len(context))"),
            2: repl("answer['content'] = 'child ok ' + str(len(context))", "answer['ready'] = True"),
        },
    }
    events = []
    script = Script(turns, fail={child_key(bad_prompt)})
    with script.patch():
        rlm = RLM(
            backend="openai",
            backend_kwargs={"model_name": "root-model"},
            max_depth=2,
            max_iterations=4,
            on_subcall_complete=lambda d, m, t, e: events.append([d, m, e is None]),
        )
        result = rlm.completion(ctx, root_prompt=question)
    return {"result": summary(result), "log": clean(script.log), "events": events}


def case_child_limits():
    """A child inherits max_iterations and the budget left; a child over budget is an error."""
    question = "Budgeted delegation."
    slow_prompt = "loop forever please"
    costly_prompt = "spend a lot please!!"
    turns = {
        question: {
            1: repl(f"a = rlm_query({slow_prompt!r})", "print(a)"),
            2: repl(f"b = rlm_query({costly_prompt!r})", "print(b.startswith('Error'))"),
            3: repl("answer['content'] = a", "answer['ready'] = True"),
        },
        child_key(slow_prompt): {
            1: repl("print('child turn')"),
            2: repl("print('child turn')"),
            3: repl("print('child turn')"),
            "default": "child gave up",
        },
        child_key(costly_prompt): {1: repl("x = 1"), 2: repl("x = 2"), 3: repl("x = 3")},
    }
    script = Script(turns, cost=60.0)
    spent = []
    with script.patch():
        rlm = RLM(
            backend="openai",
            backend_kwargs={"model_name": "root-model"},
            max_depth=2,
            max_iterations=3,
            max_budget=200.0,
            on_subcall_complete=lambda d, m, t, e: spent.append([rlm._cumulative_cost, e is None]),
        )
        result = rlm.completion("tiny context", root_prompt=question)
    return {"result": summary(result), "log": clean(script.log), "spent": spent}


def case_history():
    """Persistent multi-turn use (the REPL keeps `history`), and compaction's `history` log."""
    first_q, second_q = "First question?", "Second question?"
    turns = {
        first_q: {
            1: repl("kept = len(context)", "print(kept)"),
            2: repl("answer['content'] = 'first ' + str(kept)", "answer['ready'] = True"),
        },
        second_q: {
            1: repl("print(len(history), [m['role'] for m in history])", "print(kept, context_1)"),
            2: repl("answer['content'] = str(len(history))", "answer['ready'] = True"),
        },
    }
    script = Script(turns)
    out = {}
    with script.patch():
        with RLM(
            backend="openai",
            backend_kwargs={"model_name": "root-model"},
            max_iterations=3,
            persistent=True,
        ) as rlm:
            out["first"] = summary(rlm.completion("alpha beta", root_prompt=first_q))
            out["second"] = summary(rlm.completion("gamma delta epsilon", root_prompt=second_q))
    compact_q = "Compacted question?"
    turns[compact_q] = {
        1: repl("print(len(history))"),
        2: repl("print(len(history), [len(seg) for seg in history])"),
        3: repl("answer['content'] = str(len(history))", "answer['ready'] = True"),
    }
    with script.patch():
        rlm = RLM(
            backend="openai",
            backend_kwargs={"model_name": "root-model"},
            max_iterations=4,
            compaction=True,
        )
        out["compacted"] = summary(rlm.completion("zeta eta", root_prompt=compact_q))
    out["log"] = clean(script.log)
    return out


def case_error_threshold():
    """Two erroring turns in a row stop the run; the partial answer is the last response."""
    question = "Break things."
    turns = {
        question: {
            1: "Looking.\n" + repl("print(context[:3])"),
            2: "Trying.\n" + repl("print(1 / 0)"),
            3: "Again.\n" + repl("print(nope)"),
            4: repl("answer['content'] = 'never'", "answer['ready'] = True"),
        }
    }
    script = Script(turns)
    with script.patch():
        rlm = RLM(
            backend="openai",
            backend_kwargs={"model_name": "root-model"},
            max_iterations=5,
            max_errors=2,
        )
        try:
            result = rlm.completion("some context", root_prompt=question)
            raised = None
            partial = summary(result)
        except Exception as e:  # the limit error is the outcome under test
            raised = type(e).__name__
            partial = getattr(e, "partial_answer", None)
    return {"raised": raised, "partial": partial, "log": clean(script.log)}


def case_token_limit():
    """The token limit stops the run; the partial answer skips a blank response."""
    question = "Count tokens."
    turns = {
        question: {
            1: "Looking first.\n" + repl("print(len(context))"),
            2: "   \n  ",
            3: "Still going.\n" + repl("print(context[:2])"),
            4: repl("answer['content'] = 'never'", "answer['ready'] = True"),
        }
    }
    script = Script(turns)
    with script.patch():
        rlm = RLM(
            backend="openai",
            backend_kwargs={"model_name": "root-model"},
            max_iterations=5,
            max_tokens=50,  # the mock LM counts 10 + 10 tokens a call
        )
        try:
            result = rlm.completion("abcdef", root_prompt=question)
            raised, partial = None, summary(result)
        except Exception as e:  # the limit error is the outcome under test
            raised, partial = type(e).__name__, getattr(e, "partial_answer", None)
    return {"raised": raised, "partial": partial, "log": clean(script.log)}
