"""A scripted language model for the cases (no network, no API key).

`Script` holds, per RLM instance, the responses of each turn, and a rule for plain sub-LM
prompts. Which RLM is asking is read from the metadata message the visible
`build_rlm_system_prompt` writes ("Answer the following: <root prompt>" for the root, the
context length for a child), the turn from the visible `build_user_prompt` ("Turn k/N"),
so the responses depend on what is asked, never on the order of the calls. Every call is
logged: which model, which RLM, which turn, and the messages it was given.
"""

import hashlib
import re
import sys
import threading
from unittest import mock

import rlm_shims  # noqa: F401  (installs the dotenv/rich stand-ins before rlm is imported)

import rlm.core.rlm as rlm_module
from rlm.core.types import ModelUsageSummary, UsageSummary
from tests.mock_lm import MockLM

_PATH = re.compile(r"/\S*repl_env_[^\s'\"]*")


def clean(value):
    """Plain data, without times and temporary paths."""
    if isinstance(value, dict):
        return {
            str(k): clean(v)
            for k, v in value.items()
            if k not in ("execution_time", "iteration_time", "timestamp")
        }
    if isinstance(value, (list, tuple)):
        return [clean(v) for v in value]
    if isinstance(value, str):
        return _PATH.sub("<tmp>", value)
    if value is None or isinstance(value, (bool, int, float)):
        return value
    return f"<{type(value).__name__}>"


def agent_of(messages):
    meta = messages[1]["content"] if len(messages) > 1 else ""
    m = re.match(r"Answer the following: (.*?)\n\n", meta, re.S)
    if m:
        return m.group(1)
    m = re.search(r"of (\d+) total characters", meta)
    return f"len{m.group(1)}" if m else "?"


def turn_of(messages):
    last = messages[-1]
    if last["role"] == "assistant":
        return "default"
    m = re.search(r"Turn (\d+)/", last["content"])
    return int(m.group(1)) if m else "?"


def child_key(prompt):
    return f"len{len(prompt)}"


def short_messages(messages):
    out = []
    for msg in messages:
        content = msg["content"]
        if msg["role"] == "system":
            content = "<system " + hashlib.sha1(content.encode()).hexdigest()[:10] + ">"
        out.append({"role": msg["role"], "content": clean(content)})
    return out


class Script:
    def __init__(self, turns, sub=None, fail=(), cost=None):
        self.turns = turns  # {agent: {turn: response}}
        self.sub = sub or (lambda p: f"sub-answer to: {p[:40]}")
        self.fail = set(fail)  # agents whose calls raise
        self.cost = cost  # USD per call, reported in the usage summary
        self.log = []
        self.clients = []
        self._lock = threading.Lock()

    def respond(self, model_name, prompt):
        if isinstance(prompt, str):
            with self._lock:
                self.log.append({"model": model_name, "kind": "sub", "prompt": prompt})
            return self.sub(prompt)
        agent, turn = agent_of(prompt), turn_of(prompt)
        with self._lock:
            self.log.append(
                {
                    "model": model_name,
                    "kind": "rlm",
                    "agent": agent,
                    "turn": turn,
                    "messages": short_messages(prompt),
                }
            )
        if agent in self.fail:
            raise RuntimeError(f"scripted failure for {agent}")
        return self.turns.get(agent, {}).get(turn, f"No plan for {agent} turn {turn}.")

    def client(self, backend, backend_kwargs):
        name = (backend_kwargs or {}).get("model_name", "mock-model")
        lm = ScriptedLM(self, model_name=name)
        self.clients.append(name)
        return lm

    def patch(self):
        return mock.patch.object(rlm_module, "get_client", side_effect=self.client)


class ScriptedLM(MockLM):
    def __init__(self, script, model_name):
        super().__init__(model_name=model_name, response_fn=lambda p: script.respond(model_name, p))
        self._script = script

    def get_usage_summary(self):
        summary = super().get_usage_summary()
        if self._script.cost is not None:
            for usage in summary.model_usage_summaries.values():
                usage.total_cost = self._script.cost * usage.total_calls
        return summary

    def get_last_usage(self):
        usage = super().get_last_usage()
        if self._script.cost is not None:
            usage.total_cost = self._script.cost
        return usage


def repl(*lines):
    return "```repl\n" + "\n".join(lines) + "\n```"


def summary(completion):
    return {
        "response": clean(completion.response),
        "root_model": completion.root_model,
        "calls": {
            k: v.total_calls for k, v in completion.usage_summary.model_usage_summaries.items()
        }
        if isinstance(completion.usage_summary, UsageSummary)
        else None,
    }


__all__ = ["Script", "repl", "clean", "summary", "child_key", "ModelUsageSummary", "sys"]


# The handler's server thread polls for shutdown every 0.5 s by default, which would make
# every completion() last half a second; poll faster (the cases only, not the authors' code).
from functools import partialmethod  # noqa: E402

from rlm.core.lm_handler import ThreadingLMServer  # noqa: E402

ThreadingLMServer.serve_forever = partialmethod(ThreadingLMServer.serve_forever, poll_interval=0.01)
