"""Security rules every workflow (and action.yml) must keep, checked by parsing them.

- No secret reaches a job triggered by ``pull_request`` (it runs the pull request's code).
- No ``pull_request_target`` or ``workflow_run`` job checks out pull-request code.
- Every third-party action is pinned to a full commit SHA, with its version in a comment.
- Every job declares its permissions; writes only where listed below, with the reason.
- A job that crawls (fetches and parses arXiv's untrusted data) holds no write scope
  and no token; the jobs that write take only the queue file from it.
- Provider keys (``secrets.*_API_KEY``) reach only jobs in the ``rcb-providers``
  environment, whose deployment branches docs/security.md says to restrict to main.

Each rule is a function returning its violations, tested on the real files and on
small bad examples (so a rule that silently stopped matching would be caught).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import ROOT

WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.y*ml"))
ACTION = ROOT / "action.yml"

# (workflow file, job) -> the write scopes it may hold, and why.
ALLOWED_WRITES: dict[tuple[str, str], dict[str, str]] = {
    ("evaluate.yml", "deploy"): {
        "pages": "actions/deploy-pages publishes the leaderboard",
        "id-token": "Pages checks the deployment's OIDC token",
    },
    ("validate-comment.yml", "comment"): {
        "pull-requests": "posts the validation verdict from trusted code",
    },
    ("crawl.yml", "propose"): {
        "contents": "pushes the branch with the updated candidate queue (that file only)",
        "pull-requests": "opens the candidates pull request",
    },
    ("release.yml", "pypi"): {
        "id-token": "PyPI's trusted publishing exchanges the job's OIDC token",
    },
    ("release.yml", "publish"): {
        "contents": "creates the GitHub release, attaches the built files, moves the vX tag",
    },
    ("crawl.yml", "issues"): {
        "issues": "opens one triage issue per candidate when enabled (from the queue file)",
    },
}
UNTRUSTED_CHECKOUT = re.compile(
    r"github\.event\.pull_request|github\.head_ref|github\.event\.workflow_run\.head"
    r"|refs/pull/|pull/\$\{\{"
)
PROVIDER_ENVIRONMENT = "rcb-providers"
PROVIDER_KEY = re.compile(r"\bsecrets\.[A-Z0-9_]*API_KEY\b")
PINNED = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+(/[^@]*)?@[0-9a-f]{40}$")


@dataclass
class Workflow:
    name: str
    data: dict[str, Any]
    text: str

    @property
    def triggers(self) -> set[str]:
        on = self.data.get("on", self.data.get(True))  # YAML 1.1 reads a bare `on` as True
        if isinstance(on, str):
            return {on}
        if isinstance(on, list):
            return set(on)
        return set(on or {})

    @property
    def jobs(self) -> dict[str, dict[str, Any]]:
        return dict(self.data.get("jobs") or {})


def load(path: Path) -> Workflow:
    text = path.read_text(encoding="utf-8")
    return Workflow(path.name, yaml.safe_load(text), text)


def strings(node: Any) -> Iterator[str]:
    """Every string (keys and values) in a parsed YAML tree."""
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for key, value in node.items():
            yield from strings(key)
            yield from strings(value)
    elif isinstance(node, list):
        for item in node:
            yield from strings(item)


def steps_of(job: dict[str, Any]) -> list[dict[str, Any]]:
    return list(job.get("steps") or [])


def secrets_in_pull_request_jobs(wf: Workflow) -> list[str]:
    if "pull_request" not in wf.triggers:
        return []
    found = []
    for job_id, job in wf.jobs.items():
        if job.get("secrets") is not None:
            found.append(f"{wf.name}: job {job_id} passes secrets to a reusable workflow")
        for text in strings(job):
            if re.search(r"\bsecrets\s*(\.|\[|\))|\bgithub\.token\b", text):
                found.append(f"{wf.name}: job {job_id} uses a secret or token: {text.strip()[:80]}")
        for step in steps_of(job):
            uses = str(step.get("uses", ""))
            if uses.startswith("./") and (step.get("with") or {}).get("github-token") != "":
                found.append(
                    f"{wf.name}: job {job_id} runs the Action with its default github-token; "
                    "set github-token: '' in pull_request jobs"
                )
    return found


def untrusted_checkouts(wf: Workflow) -> list[str]:
    if not wf.triggers & {"pull_request_target", "workflow_run"}:
        return []
    found = []
    for job_id, job in wf.jobs.items():
        for step in steps_of(job):
            uses = str(step.get("uses", ""))
            if uses.startswith("actions/checkout@"):
                options = step.get("with") or {}
                for key in ("ref", "repository"):
                    if UNTRUSTED_CHECKOUT.search(str(options.get(key, ""))):
                        found.append(
                            f"{wf.name}: job {job_id} checks out pull-request code ({key})"
                        )
            run = str(step.get("run", ""))
            if re.search(
                r"\bgit\s+(fetch|checkout|switch|pull)\b", run
            ) and UNTRUSTED_CHECKOUT.search(run):
                found.append(f"{wf.name}: job {job_id} fetches pull-request code in a run step")
            if re.search(r"\bgh\s+pr\s+checkout\b", run):
                found.append(f"{wf.name}: job {job_id} runs gh pr checkout")
    return found


def unpinned_actions(name: str, data: dict[str, Any], text: str) -> list[str]:
    uses: list[str] = []
    for job in (data.get("jobs") or {}).values():
        if "uses" in job:  # a reusable workflow
            uses.append(str(job["uses"]))
        uses += [str(s["uses"]) for s in steps_of(job) if "uses" in s]
    uses += [str(s["uses"]) for s in (data.get("runs") or {}).get("steps", []) if "uses" in s]
    found = []
    lines = text.splitlines()
    for ref in uses:
        if ref.startswith("./"):
            continue
        if ref.startswith("docker://"):
            if "@sha256:" not in ref:
                found.append(f"{name}: {ref} is not pinned by digest")
            continue
        if not PINNED.match(ref):
            found.append(f"{name}: {ref} is not pinned to a full commit SHA")
            continue
        line = next((ln for ln in lines if f"uses: {ref}" in ln), "")
        if not re.search(r"#\s*v\d", line):
            found.append(f"{name}: {ref} has no '# vX.Y.Z' comment naming its version")
    return found


def permission_problems(wf: Workflow) -> list[str]:
    found = []
    top = wf.data.get("permissions")
    if isinstance(top, str) or (isinstance(top, dict) and "write" in top.values()):
        found.append(f"{wf.name}: workflow-level permissions grant more than read ({top})")
    for job_id, job in wf.jobs.items():
        if "permissions" not in job:
            found.append(f"{wf.name}: job {job_id} does not declare its permissions")
            continue
        perms = job["permissions"]
        if isinstance(perms, str):
            found.append(f"{wf.name}: job {job_id} uses '{perms}'; list the scopes it needs")
            continue
        writes = {scope for scope, level in (perms or {}).items() if level == "write"}
        if writes and wf.triggers & {"pull_request", "pull_request_target"}:
            found.append(f"{wf.name}: job {job_id} can write on a pull-request trigger: {writes}")
        allowed = set(ALLOWED_WRITES.get((wf.name, job_id), {}))
        if writes - allowed:
            found.append(f"{wf.name}: job {job_id} writes {sorted(writes - allowed)} unlisted")
    return found


def environment_of(job: dict[str, Any]) -> str:
    env = job.get("environment")
    return str(env.get("name", "")) if isinstance(env, dict) else str(env or "")


def provider_keys_outside_environment(wf: Workflow) -> list[str]:
    found = []
    for job_id, job in wf.jobs.items():
        uses_keys = any(PROVIDER_KEY.search(text) for text in strings(job))
        if uses_keys and environment_of(job) != PROVIDER_ENVIRONMENT:
            found.append(
                f"{wf.name}: job {job_id} reads provider keys outside the "
                f"{PROVIDER_ENVIRONMENT} environment"
            )
    for name in ("secrets", "env"):
        if any(PROVIDER_KEY.search(text) for text in strings(wf.data.get(name) or {})):
            found.append(f"{wf.name}: provider keys at workflow level ({name})")
    return found


def crawls_with_write_access(wf: Workflow) -> list[str]:
    """A job that runs ``rcb crawl`` must hold no write scope and pass no token to it."""
    found = []
    for job_id, job in wf.jobs.items():
        runs = [str(step.get("run", "")) for step in steps_of(job)]
        if not any(re.search(r"\brcb\s+crawl\b", run) for run in runs):
            continue
        perms = job.get("permissions")
        writes = (
            {s for s, level in perms.items() if level == "write"}
            if isinstance(perms, dict)
            else {"(not a read-only list)"}
        )
        if writes:
            found.append(f"{wf.name}: job {job_id} crawls with write access: {sorted(writes)}")
        for text in strings(job):
            if re.search(r"\bgithub\.token\b|\bsecrets\.", text):
                found.append(f"{wf.name}: job {job_id} crawls with a token: {text.strip()[:60]}")
    return found


def test_there_are_workflows_for_each_duty():
    triggers = {wf.name: wf.triggers for wf in map(load, WORKFLOWS)}
    assert {"push", "pull_request"} <= triggers["ci.yml"]
    assert triggers["validate.yml"] == {"pull_request"}
    assert triggers["validate-comment.yml"] == {"workflow_run"}
    assert {"push", "workflow_dispatch"} <= triggers["evaluate.yml"]
    assert "schedule" in triggers["crawl.yml"]
    assert "schedule" in triggers["validate-all.yml"]
    assert triggers["release.yml"] == {"push"}


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_workflow_rules(path):
    wf = load(path)
    problems = (
        secrets_in_pull_request_jobs(wf)
        + untrusted_checkouts(wf)
        + unpinned_actions(wf.name, wf.data, wf.text)
        + permission_problems(wf)
        + provider_keys_outside_environment(wf)
        + crawls_with_write_access(wf)
    )
    assert problems == []


def test_the_provider_keys_live_in_their_environment():
    """The evaluation legs get the keys, from the environment the docs say to restrict."""
    evaluate = load(ROOT / ".github" / "workflows" / "evaluate.yml").jobs["evaluate"]
    assert environment_of(evaluate) == PROVIDER_ENVIRONMENT
    assert any(PROVIDER_KEY.search(text) for text in strings(evaluate))
    docs = (ROOT / "docs" / "security.md").read_text()
    assert PROVIDER_ENVIRONMENT in docs and "main" in docs


def test_the_crawl_parses_read_only_and_the_writers_take_one_file():
    crawl = load(ROOT / ".github" / "workflows" / "crawl.yml")
    assert crawl.jobs["crawl"]["permissions"] == {"contents": "read"}
    for job_id in ("propose", "issues"):
        job = crawl.jobs[job_id]
        assert job["needs"] == "crawl"
        runs = "\n".join(str(step.get("run", "")) for step in steps_of(job))
        assert not re.search(r"\brcb\s+crawl\b", runs)  # nothing fetched from arXiv
        downloads = [s for s in steps_of(job) if "download-artifact" in str(s.get("uses"))]
        assert [s["with"]["name"] for s in downloads] == ["crawl-queue"]
    propose = "\n".join(str(s.get("run", "")) for s in steps_of(crawl.jobs["propose"]))
    assert "git add -- crawler/queue.yaml" in propose
    # It runs nothing (no rcb, no Python) with the crawl's output.
    assert not re.search(r"(?m)^\s*(pip|python3?|rcb)\b", propose)


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_run_steps_keep_pipefail(path):
    """Without ``shell: bash`` GitHub runs steps with ``bash -e`` and no pipefail, so
    ``rcb validate ... | tee log || status=$?`` would record tee's success."""
    data = yaml.safe_load(path.read_text())
    assert data.get("defaults", {}).get("run", {}).get("shell") == "bash"
    for job in data["jobs"].values():
        for step in job.get("steps", []):
            assert step.get("shell", "bash") == "bash", step


def test_action_pins_its_actions():
    text = ACTION.read_text()
    assert unpinned_actions("action.yml", yaml.safe_load(text), text) == []


def test_action_installs_into_its_own_venv_from_the_lock():
    """setup-python leaves the job's environment alone, every pip install is hash-checked
    wheels (or rcb itself, with no dependencies), and no step but Install runs pip."""
    steps = yaml.safe_load(ACTION.read_text())["runs"]["steps"]
    setup = [s for s in steps if str(s.get("uses", "")).startswith("actions/setup-python@")]
    assert [s["with"].get("update-environment") for s in setup] == [False]
    installs = []
    for step in steps:
        script = re.sub(r"\\\n\s*", " ", str(step.get("run", "")))
        for line in script.splitlines():
            line = " ".join(line.split())
            if not line.startswith("#") and re.search(r"\bpip\b.*\binstall\b|\bpip\[@\]", line):
                installs.append((step["name"], line))
    pip_installs = [(name, line) for name, line in installs if " install " in line]
    assert [name for name, _ in pip_installs] == ["Install rcb"] * 2
    for _, line in pip_installs:
        assert "--no-deps" in line, line
        assert "--require-hashes --only-binary=:all:" in line or line.endswith(
            '--no-build-isolation "$GITHUB_ACTION_PATH"'
        ), line


def test_allowed_writes_are_all_used():
    """The allowlist names only jobs that exist and scopes they hold."""
    workflows = {wf.name: wf for wf in map(load, WORKFLOWS)}
    for (name, job_id), scopes in ALLOWED_WRITES.items():
        perms = workflows[name].jobs[job_id]["permissions"]
        assert {s for s, level in perms.items() if level == "write"} == set(scopes)


BAD = {
    "secret in a pull_request job": (
        secrets_in_pull_request_jobs,
        """
on: pull_request
jobs:
  test:
    runs-on: ubuntu-latest
    permissions: {contents: read}
    steps:
      - run: echo hi
        env:
          KEY: ${{ secrets.OPENAI_API_KEY }}
""",
    ),
    "token to the Action in a pull_request job": (
        secrets_in_pull_request_jobs,
        """
on: [pull_request]
jobs:
  test:
    runs-on: ubuntu-latest
    permissions: {contents: read}
    steps:
      - uses: ./
        with:
          models: reference
""",
    ),
    "pull_request_target checks out the head": (
        untrusted_checkouts,
        """
on: pull_request_target
jobs:
  build:
    runs-on: ubuntu-latest
    permissions: {contents: read}
    steps:
      - uses: actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683 # v4.2.2
        with:
          ref: ${{ github.event.pull_request.head.sha }}
""",
    ),
    "workflow_run fetches the pull request": (
        untrusted_checkouts,
        """
on:
  workflow_run:
    workflows: [x]
jobs:
  build:
    runs-on: ubuntu-latest
    permissions: {contents: read}
    steps:
      - run: git fetch origin ${{ github.event.workflow_run.head_sha }} && git checkout FETCH_HEAD
""",
    ),
    "unpinned action": (
        lambda wf: unpinned_actions(wf.name, wf.data, wf.text),
        """
on: push
jobs:
  a:
    runs-on: ubuntu-latest
    permissions: {contents: read}
    steps:
      - uses: actions/checkout@v4
""",
    ),
    "pinned without a version comment": (
        lambda wf: unpinned_actions(wf.name, wf.data, wf.text),
        """
on: push
jobs:
  a:
    runs-on: ubuntu-latest
    permissions: {contents: read}
    steps:
      - uses: actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683
""",
    ),
    "job without permissions": (
        permission_problems,
        """
on: push
jobs:
  a:
    runs-on: ubuntu-latest
    steps:
      - run: echo hi
""",
    ),
    "write on a pull_request trigger": (
        permission_problems,
        """
on: pull_request
jobs:
  a:
    runs-on: ubuntu-latest
    permissions:
      pull-requests: write
    steps:
      - run: echo hi
""",
    ),
    "provider keys outside their environment": (
        provider_keys_outside_environment,
        """
on: workflow_dispatch
jobs:
  a:
    runs-on: ubuntu-latest
    permissions: {contents: read}
    steps:
      - run: rcb evaluate --model gpt-4o
        env:
          OPENAI_API_KEY: ${{ secrets.OPENAI_API_KEY }}
""",
    ),
    "crawl with a write token": (
        crawls_with_write_access,
        """
on: schedule
jobs:
  crawl:
    runs-on: ubuntu-latest
    permissions:
      contents: write
    steps:
      - run: rcb crawl --since 2025-01-01 --issues octo/rcb
        env:
          GITHUB_TOKEN: ${{ github.token }}
""",
    ),
    "write-all": (
        permission_problems,
        """
on: push
permissions: write-all
jobs:
  a:
    runs-on: ubuntu-latest
    permissions: write-all
    steps:
      - run: echo hi
""",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_rules_catch_bad_examples(case):
    rule, text = BAD[case]
    wf = Workflow("bad.yml", yaml.safe_load(text), text)
    assert rule(wf), f"the rule missed: {case}"
