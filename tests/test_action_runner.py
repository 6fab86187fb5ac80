"""A local runner for action.yml's composite steps, and its own tests.

It does what the Actions runner does for a composite action, for the subset of
syntax action.yml uses: inputs with defaults, ``${{ inputs.x }}``,
``${{ steps.id.outputs.y }}`` and ``${{ github.token | action_path }}`` in ``env:``
values and outputs, each ``run:`` step written to a file and run with
``bash --noprofile --norc -eo pipefail``, a fresh ``GITHUB_OUTPUT`` file per
step, and a stop at the first failing step. ``uses:`` steps (actions/setup-python,
actions/cache) are skipped: the test's Python is already set up, and a cache is a
miss (its outputs are empty), unless the test gives a cache folder: then the cache
steps restore and save there. ``if:`` is evaluated for conditions joined by ``&&``
of ``!cancelled()`` (true: a run stops at its first failure) and
``steps.<id>.outputs.<name> == | != '<text>'``. A test may give a ``uses:`` step's
outputs. Anything else in action.yml (other
conditions, other expressions) fails loudly, so the Action stays runnable this way.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


@dataclass
class StepRun:
    name: str
    returncode: int | None
    stdout: str = ""
    stderr: str = ""
    outputs: dict[str, str] = field(default_factory=dict)

    @property
    def ran(self) -> bool:
        return self.returncode is not None


@dataclass
class ActionRun:
    exit_code: int
    steps: list[StepRun]
    outputs: dict[str, str]

    @property
    def stdout(self) -> str:
        return "".join(s.stdout for s in self.steps)

    @property
    def log(self) -> str:
        return "".join(s.stdout + s.stderr for s in self.steps)

    def step(self, name: str) -> StepRun:
        return next(s for s in self.steps if s.name == name)


def parse_output_file(path: Path) -> dict[str, str]:
    """``GITHUB_OUTPUT``'s two forms: ``name=value`` and ``name<<DELIMITER`` blocks."""
    outputs: dict[str, str] = {}
    if not path.is_file():
        return outputs
    lines = path.read_text(encoding="utf-8").split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            end = lines.index(delimiter, i + 1)
            outputs[name] = "\n".join(lines[i + 1 : end])
            i = end + 1
            continue
        if "=" in line:
            name, value = line.split("=", 1)
            outputs[name] = value
        i += 1
    return outputs


def render(text: str, context: dict[str, dict[str, Any]]) -> str:
    def value(match: re.Match[str]) -> str:
        expression = match.group(1)
        parts = expression.split(".")
        if parts[0] == "inputs" and len(parts) == 2:
            return str(context["inputs"][parts[1]])
        if parts[0] == "steps" and len(parts) == 4 and parts[2] == "outputs":
            return str(context["steps"].get(parts[1], {}).get(parts[3], ""))
        if parts[0] == "github" and len(parts) == 2 and parts[1] in context["github"]:
            return str(context["github"][parts[1]])
        raise AssertionError(f"expression not supported by the local runner: {expression}")

    return EXPRESSION.sub(value, text)


CONDITION = re.compile(r"^steps\.([\w-]+)\.outputs\.([\w-]+)\s*(==|!=)\s*'([^']*)'$")


def condition(text: str, context: dict[str, dict[str, Any]]) -> bool:
    """An ``if:`` of the subset the module docstring names."""
    match = EXPRESSION.fullmatch(text.strip())
    expression = match.group(1) if match else text.strip()
    result = True
    for term in (t.strip() for t in expression.split("&&")):
        if term == "!cancelled()":
            continue
        found = CONDITION.match(term)
        if not found:
            raise AssertionError(f"condition not supported by the local runner: {term}")
        step, name, op, literal = found.groups()
        value = str(context["steps"].get(step, {}).get(name, ""))
        result = result and ((value == literal) == (op == "=="))
    return result


def run_action(
    action_dir: Path,
    inputs: dict[str, str],
    env: dict[str, str],
    cwd: Path,
    *,
    token: str = "",
    uses_outputs: dict[str, dict[str, str]] | None = None,
    cache: Path | None = None,
) -> ActionRun:
    """Run ``action_dir/action.yml``'s steps as the runner would; ``token`` is ``github.token``.
    ``uses_outputs`` gives a skipped ``uses:`` step's outputs by its id (e.g. the
    interpreter setup-python would have installed). With ``cache``, a folder that
    outlives the run, actions/cache's restore and save steps work (see
    :func:`cache_step`)."""
    spec = yaml.safe_load((action_dir / "action.yml").read_text(encoding="utf-8"))
    declared = spec["inputs"]
    unknown = set(inputs) - set(declared)
    assert not unknown, f"inputs not declared in action.yml: {sorted(unknown)}"
    context: dict[str, dict[str, Any]] = {
        "inputs": {},
        "steps": {},
        "github": {"token": token, "action_path": str(action_dir)},
    }
    for name, meta in declared.items():
        default = render(str(meta.get("default", "")), context)
        context["inputs"][name] = inputs.get(name, default)
    assert spec["runs"]["using"] == "composite"
    runs: list[StepRun] = []
    exit_code = 0
    scratch = cwd / ".runner"
    scratch.mkdir(exist_ok=True)
    for index, step in enumerate(spec["runs"]["steps"]):
        name = step.get("name", f"step {index}")
        if "if" in step and not condition(str(step["if"]), context):
            runs.append(StepRun(name, None))
            continue
        if "uses" in step and cache is not None and str(step["uses"]).startswith("actions/cache/"):
            given = {k: render(str(v), context) for k, v in (step.get("with") or {}).items()}
            outputs = cache_step(str(step["uses"]), given, cache, cwd)
            runs.append(StepRun(name, 0, outputs=outputs))
            if step.get("id"):
                context["steps"][step["id"]] = outputs
            continue
        if "uses" in step:
            runs.append(StepRun(name, None))
            if step.get("id"):
                context["steps"][step["id"]] = dict((uses_outputs or {}).get(step["id"], {}))
            continue
        script = step["run"]
        assert "${{" not in script, f"{name}: template text inside shell code"
        assert step.get("shell") == "bash", f"{name}: composite run steps need shell: bash"
        step_env = {k: render(str(v), context) for k, v in (step.get("env") or {}).items()}
        output_file = scratch / f"output-{index}"
        output_file.write_text("")
        script_file = scratch / f"step-{index}.sh"
        script_file.write_text(script)
        proc = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script_file)],
            env={
                **env,
                **step_env,
                "GITHUB_OUTPUT": str(output_file),
                "GITHUB_ACTION_PATH": str(action_dir),
            },
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=600,
        )
        outputs = parse_output_file(output_file)
        runs.append(StepRun(name, proc.returncode, proc.stdout, proc.stderr, outputs))
        if step.get("id"):
            context["steps"][step["id"]] = outputs
        if proc.returncode != 0:
            exit_code = proc.returncode
            break
    outputs = {name: render(str(meta["value"]), context) for name, meta in spec["outputs"].items()}
    return ActionRun(exit_code, runs, outputs)


def cache_step(uses: str, given: dict[str, str], cache: Path, cwd: Path) -> dict[str, str]:
    """actions/cache/restore and save on a local folder, as GitHub's cache behaves: an
    entry is written once per key and never changed; a restore takes the exact key, else
    the newest entry whose key starts with one of ``restore-keys`` (in their order), and
    says ``cache-hit`` only for the exact key."""
    path = cwd / given["path"]
    key = given["key"]
    if uses.startswith("actions/cache/save@"):
        entry = cache / key
        if not entry.exists() and path.exists():
            shutil.copytree(path, entry / "data")
        return {}
    assert uses.startswith("actions/cache/restore@"), uses
    found = key if (cache / key).exists() else ""
    for prefix in [] if found else given.get("restore-keys", "").split():
        matches = sorted(
            (e for e in cache.iterdir() if e.name.startswith(prefix)),
            key=lambda e: e.stat().st_mtime_ns,
        )
        if matches:
            found = matches[-1].name
            break
    if not found:
        return {}
    shutil.copytree(cache / found / "data", path, dirs_exist_ok=True)
    return {"cache-hit": "true" if found == key else "false", "cache-matched-key": found}


def test_output_file_forms(tmp_path):
    path = tmp_path / "out"
    path.write_text("a=1\nnotes<<EOF_x\nline one\nline=two\nEOF_x\nb=x=y\n")
    assert parse_output_file(path) == {"a": "1", "notes": "line one\nline=two", "b": "x=y"}


def test_render_refuses_what_it_does_not_know():
    context: dict[str, dict[str, Any]] = {"inputs": {"x": "1"}, "steps": {}, "github": {}}
    assert render("${{ inputs.x }}-${{ steps.s.outputs.o }}", context) == "1-"
    with pytest.raises(AssertionError, match="not supported"):
        render("${{ github.event.pull_request.title }}", context)


def test_conditions_of_the_subset():
    context: dict[str, dict[str, Any]] = {
        "inputs": {},
        "steps": {"a": {"hit": "true"}},
        "github": {},
    }
    assert condition("${{ !cancelled() && steps.a.outputs.hit == 'true' }}", context)
    assert not condition("steps.a.outputs.hit != 'true'", context)
    assert condition("${{ steps.b.outputs.hit != 'true' }}", context)  # a skipped step: empty
    with pytest.raises(AssertionError, match="not supported"):
        condition("${{ always() }}", context)


def test_runner_runs_steps_in_order_and_stops_at_a_failure(tmp_path):
    action = tmp_path / "action"
    action.mkdir()
    (action / "action.yml").write_text(
        yaml.safe_dump(
            {
                "name": "t",
                "description": "t",
                "inputs": {"word": {"description": "w", "default": "hi"}},
                "outputs": {"said": {"description": "s", "value": "${{ steps.a.outputs.said }}"}},
                "runs": {
                    "using": "composite",
                    "steps": [
                        {"uses": "actions/setup-python@" + "0" * 40},
                        {
                            "id": "a",
                            "shell": "bash",
                            "env": {"WORD": "${{ inputs.word }}"},
                            "run": 'echo "said=$WORD" >> "$GITHUB_OUTPUT"',
                        },
                        {"shell": "bash", "run": "exit 3"},
                        {"shell": "bash", "run": "echo never"},
                    ],
                },
            }
        )
    )
    run = run_action(action, {"word": "hello"}, {"PATH": "/usr/bin:/bin"}, tmp_path)
    assert run.exit_code == 3
    assert run.outputs == {"said": "hello"}
    assert [s.ran for s in run.steps] == [False, True, True]
