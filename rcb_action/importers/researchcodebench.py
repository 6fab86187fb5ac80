"""Import a ResearchCodeBench checkout as rcb tasks, so its papers run unchanged under rcb.

ResearchCodeBench's layout: ``pset/papers.yaml`` lists the papers (``id, title,
arxiv_abs, arxiv_date, arxiv_v1_date, github_url, first_commit_date,
last_commit_date, venue, annotated_file_paths, context_file_paths``; paths as a
string or a list), and ``pset/<id>/`` holds a paper's code, its paper as
``paper2code_paper.tex`` or ``paper2code_paper.md``, and a unittest file
``paper2code_test.py`` run from that folder (it often imports ``*_ref.py``
copies of the code, which never reach a prompt: only annotated and context files
are shown).

Each paper becomes ``OUT/<id>/`` with the paper folder's files at the task root
(so the tests run from the same folder as before), ``paper.md`` and a
``task.yaml`` whose snippets are all decided by ``paper2code_test.py``. One
environment, ``OUT/_envs/<env>/requirements.txt``, serves them all, as the
one conda environment does in ResearchCodeBench: the checkout's own
``requirements.txt`` (its lines that point into a local conda build folder,
``pkg @ file:///...``, left out, since pip cannot fetch them), else a CPU
scientific stack. Every other line must be a pinned index package
(``name==version``, see :func:`rcb_action.tasks.pinned_requirement`): an
unpinned name in the shared file stops the import with its ``file:line`` (pin
it, or pass ``--requirements``); one in a paper's own file leaves that paper
out. A paper folder with its own ``requirements.txt`` or
``paper2code_requirements.txt`` gets its own environment, ``<env>-<id>``: the
shared requirements plus its own. A paper whose ``arxiv_abs`` is not an arXiv
address (one is on OpenReview) is cited by that address (``paper_url``).
"""

from __future__ import annotations

import datetime as dt
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from rcb_action.errors import RcbError, TaskError
from rcb_action.tasks import load_task, parse_tags, pinned_requirement

TEST_FILE = "paper2code_test.py"
PAPER_FILES = ("paper2code_paper.md", "paper2code_paper.tex")
DEFAULT_REQUIREMENTS = "numpy==2.2.6\nscipy==1.15.3\ntorch==2.13.0\npytest==8.4.2\n"
PAPER_REQUIREMENTS = ("requirements.txt", "paper2code_requirements.txt")
_ARXIV = re.compile(r"arxiv\.org/(?:abs|pdf|html)/(\d{4}\.\d{4,5})")
_LOCAL_BUILD = re.compile(r"@\s*file:", re.IGNORECASE)


@dataclass
class Imported:
    """One paper's outcome: the task folder written, or why it was left out."""

    paper_id: str
    task_dir: Path | None
    snippets: int = 0
    problem: str | None = None


def _paths(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    raise ValueError(f"expected a path or a list of paths, got {value!r}")


def _date(value: Any) -> dt.date | None:
    if value is None or value == "":
        return None
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    text = str(value).strip()
    for fmt in ("%Y-%m-%d", "%Y/%m/%d", "%m/%d/%Y", "%Y-%m"):
        try:
            return dt.datetime.strptime(text, fmt).date()
        except ValueError:
            continue
    raise ValueError(f"unreadable date {text!r}")


def task_id_for(paper_id: str) -> str:
    slug = re.sub(r"[^a-z0-9_-]+", "-", paper_id.lower()).strip("-_")
    return slug or "paper"


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _task_yaml(
    entry: dict[str, Any],
    task_id: str,
    env: str,
    annotated: list[str],
    context: list[str],
    names: list[str],
) -> str:
    source = f"pset/{entry['id']}"
    address = str(entry.get("arxiv_abs") or "").strip()
    arxiv = _ARXIV.search(address)
    if arxiv:
        cited = f'arxiv: "{arxiv[1]}"'
    elif re.fullmatch(r"https://\S+", address):
        cited = f"paper_url: {_quote(address)}"
    else:
        raise ValueError(f"arxiv_abs {address!r} is neither an arXiv nor an https address")
    published = _date(entry.get("arxiv_v1_date")) or _date(entry.get("arxiv_date"))
    if published is None:
        raise ValueError("no arxiv_v1_date or arxiv_date")
    lines = [
        f"# Imported from ResearchCodeBench ({source}) by `rcb import rcb`.",
        f"id: {task_id}",
        f"title: {_quote(str(entry.get('title') or task_id))}",
        cited,
        f"published: {published.isoformat()}",
    ]
    first_commit = _date(entry.get("first_commit_date"))
    if first_commit:
        lines.append(f"code_first_commit: {first_commit.isoformat()}")
    if entry.get("github_url"):
        lines.append(f"code_url: {entry['github_url']}")
    lines += [
        "domain: ml",
        "kind: snippet",
        f"env: {env}",
        "gpu: none",
        "timeout_s: 300",
        f"annotated: [{', '.join(_quote(p) for p in annotated)}]",
        f"context: [{', '.join(_quote(p) for p in context)}]",
        "paper: {source: local}",
        'tests_dir: "."',
        "snippets:",
    ]
    lines += [f"  {_quote(name)}: {{tests: [{_quote(TEST_FILE)}]}}" for name in names]
    return "\n".join(lines) + "\n"


def pip_requirements(text: str, label: str) -> str:
    """A requirements file without the lines pip cannot fetch (``pkg @ file:///...``).

    Raises:
        TaskError: ``label:line`` holds anything else but a pinned index package.
    """
    kept = []
    for number, line in enumerate(text.splitlines(), 1):
        if _LOCAL_BUILD.search(line):
            continue
        try:
            pinned_requirement(line)
        except ValueError as exc:
            raise TaskError(f"{label}:{number}: {exc}") from None
        kept.append(line)
    return "\n".join(kept).strip() + "\n"


def _paper_env(folder: Path, out: Path, env: str, task_id: str, shared: str) -> str:
    """The paper's own environment when its folder names extra requirements, else ``env``."""
    own = [folder / name for name in PAPER_REQUIREMENTS if (folder / name).is_file()]
    if not own:
        return env
    name = f"{env}-{task_id}"
    extra = "".join(pip_requirements(path.read_text(encoding="utf-8"), str(path)) for path in own)
    env_dir = out / "_envs" / name
    env_dir.mkdir(parents=True, exist_ok=True)
    (env_dir / "requirements.txt").write_text(shared + extra, encoding="utf-8")
    return name


def _import_paper(entry: dict[str, Any], pset: Path, out: Path, env: str, shared: str) -> Imported:
    paper_id = str(entry["id"])
    folder = pset / paper_id
    task_id = task_id_for(paper_id)
    if not folder.is_dir():
        return Imported(paper_id, None, problem=f"{folder}: paper folder not found")
    annotated = _paths(entry.get("annotated_file_paths"))
    context = [p for p in _paths(entry.get("context_file_paths")) if p not in annotated]
    if not annotated:
        return Imported(paper_id, None, problem="no annotated_file_paths")
    for rel in annotated + context:
        if not (folder / rel).is_file():
            return Imported(paper_id, None, problem=f"{folder / rel}: listed file not found")
    if not (folder / TEST_FILE).is_file():
        return Imported(paper_id, None, problem=f"{folder / TEST_FILE}: test file not found")
    paper = next((folder / name for name in PAPER_FILES if (folder / name).is_file()), None)
    if paper is None:
        return Imported(paper_id, None, problem=f"{folder}: no {' or '.join(PAPER_FILES)}")
    names: list[str] = []
    for rel in annotated:
        names += [
            s.name
            for s in parse_tags(
                str(folder / rel), (folder / rel).read_text(encoding="utf-8")
            ).snippets
        ]
    # Before any file is written: a paper whose own requirements are refused leaves none.
    task_env = _paper_env(folder, out, env, task_id, shared)
    target = out / task_id
    if target.exists():
        shutil.rmtree(target)
    # Links are copied as links, so load_task refuses them instead of inlining their targets.
    shutil.copytree(
        folder,
        target,
        symlinks=True,
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", *PAPER_FILES),
    )
    text = paper.read_text(encoding="utf-8")
    if paper.suffix == ".tex":
        text = f"<!-- The paper's LaTeX source, as ResearchCodeBench gives it. -->\n\n{text}"
    (target / "paper.md").write_text(text, encoding="utf-8")
    (target / "task.yaml").write_text(
        _task_yaml(entry, task_id, task_env, annotated, context, names), encoding="utf-8"
    )
    return Imported(paper_id, target, snippets=len(names))


def import_researchcodebench(
    checkout: Path, out: Path, *, env: str = "researchcodebench", requirements: Path | None = None
) -> list[Imported]:
    """Write one rcb task per ResearchCodeBench paper into ``out``.

    Args:
        checkout: a ResearchCodeBench checkout (holding ``pset/papers.yaml``).
        out: the tasks folder to write (created if missing).
        env: the environment name the tasks use.
        requirements: the environment's requirements file (default: the
            checkout's ``requirements.txt`` without its local-build lines, else a
            CPU scientific Python stack with torch).

    Returns:
        Per paper, the task folder written or the problem that kept it out.

    Raises:
        RcbError: the checkout is not in ResearchCodeBench's layout, or its (or the
            given) requirements hold a line that is not a pinned index package.
    """
    pset = Path(checkout) / "pset"
    index = pset / "papers.yaml"
    if not index.is_file():
        raise RcbError(f"{checkout}: not a ResearchCodeBench checkout (no pset/papers.yaml)")
    try:
        papers = yaml.safe_load(index.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise RcbError(f"{index}: invalid YAML ({exc})") from None
    if isinstance(papers, dict):
        papers = papers.get("papers", list(papers.values()))
    if not isinstance(papers, list):
        raise RcbError(f"{index}: expected a list of papers")
    own = Path(checkout) / "requirements.txt"
    if requirements is not None:
        reqs = pip_requirements(requirements.read_text(encoding="utf-8"), str(requirements))
    elif own.is_file():
        try:
            reqs = pip_requirements(own.read_text(encoding="utf-8"), str(own))
        except TaskError as exc:
            raise RcbError(f"{exc} (or pass --requirements FILE)") from None
    else:
        reqs = DEFAULT_REQUIREMENTS
    out.mkdir(parents=True, exist_ok=True)
    env_dir = out / "_envs" / env
    env_dir.mkdir(parents=True, exist_ok=True)
    if not reqs.endswith("\n"):
        reqs += "\n"
    (env_dir / "requirements.txt").write_text(reqs, encoding="utf-8")
    results = []
    for number, entry in enumerate(papers, 1):
        if not isinstance(entry, dict) or "id" not in entry:
            results.append(
                Imported(f"entry {number}", None, problem=f"{index}: entry {number} has no 'id'")
            )
            continue
        try:
            imported = _import_paper(entry, pset, out, env, reqs)
        except (ValueError, OSError, TaskError) as exc:
            imported = Imported(str(entry["id"]), None, problem=str(exc))
        if imported.task_dir is not None:
            try:
                load_task(imported.task_dir)
            except TaskError as exc:
                shutil.rmtree(imported.task_dir, ignore_errors=True)
                imported = Imported(imported.paper_id, None, problem=str(exc))
        results.append(imported)
    return results
