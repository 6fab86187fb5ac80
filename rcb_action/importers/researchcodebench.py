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
(so the tests run from the same folder as before) and a ``task.yaml`` whose
snippets are all decided by ``paper2code_test.py``. The paper is the paper's own
LaTeX as ResearchCodeBench ships it (``paper.tex``, or ``paper.txt`` for the one
given as Markdown): ``paper: {source: imported}``, a text the checkout carries and
rcb never redistributes, whose ``paper_sha`` goes into every record like any paper's.

Environments. The packages a paper needs are those its tests import, followed
through the paper folder's own modules (``import x`` of a module that is not in the
folder nor in Python's standard library), mapped to their distributions (``PIL`` is
``pillow``, ``cv2`` is ``opencv-python-headless``). Each must be pinned, ``name==version``
(see :func:`rcb_action.tasks.pinned_requirement`), by the first of: the paper folder's
own ``requirements.txt`` / ``paper2code_requirements.txt`` / ``environment.y[a]ml``;
``--requirements FILE``, else the checkout's ``requirements.txt``; the checkout's
``environment.yml`` (its pip list, and its conda packages under their pip names:
``pytorch`` is ``torch``; CUDA runtimes and system libraries dropped); the CPU
defaults (``DEFAULT_REQUIREMENTS``, ``EXTRA_PINS``). ``torch`` and ``torchvision`` are
always the CPU builds of those defaults (or of ``--requirements``), never a conda
channel's CUDA build. A needed
package left unpinned (``pandas>=2.0.0``), or named only by a git URL, leaves the
paper out, with the module, the line and the fix. A paper's environment is the base
(``--requirements``, else the checkout's ``requirements.txt``, else the defaults)
plus what it needs and pins itself: ``<env>`` when that adds nothing, else
``<env>-<id>``. Lines that point into a local conda build folder
(``pkg @ file:///...``) are left out, since pip cannot fetch them. A paper whose
``arxiv_abs`` is not an arXiv address (one is on OpenReview) is cited by that
address (``paper_url``); one on arXiv is pinned to the version the address names.
"""

from __future__ import annotations

import ast
import datetime as dt
import re
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from rcb_action.errors import RcbError, TaskError
from rcb_action.tasks import load_task, parse_tags, pinned_requirement

TEST_FILE = "paper2code_test.py"
PAPER_FILES = ("paper2code_paper.md", "paper2code_paper.tex")
ENV_FILES = ("environment.yml", "environment.yaml")
DEFAULT_REQUIREMENTS = "numpy==2.2.6\nscipy==1.15.3\ntorch==2.13.0\npytest==8.4.2\n"
PAPER_REQUIREMENTS = ("requirements.txt", "paper2code_requirements.txt")
_ARXIV = re.compile(r"arxiv\.org/(?:abs|pdf|html)/(\d{4}\.\d{4,5})(?:v(\d+))?")
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
    paper_file: str = "paper.tex",
) -> str:
    source = f"pset/{entry['id']}"
    address = str(entry.get("arxiv_abs") or "").strip()
    arxiv = _ARXIV.search(address)
    if arxiv:
        cited = f'arxiv: "{arxiv[1]}"'
        if arxiv[2]:
            cited += f"\narxiv_version: {int(arxiv[2])}"
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
        f"paper: {{source: imported, file: {paper_file}}}  # the paper as ResearchCodeBench ships it",
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


# --- environments ---------------------------------------------------------------------

# Extra pins, used only for a package a paper needs that nothing else pins: releases
# with wheels for CPython 3.11 on Linux (checked against the index, 2026-12).
EXTRA_PINS = (
    "tqdm==4.67.1",
    "einops==0.8.1",
    "pandas==2.2.3",
    "matplotlib==3.10.3",
    "h5py==3.13.0",
    "jax==0.6.0",
    "jaxlib==0.6.0",
    "flax==0.10.6",
    "ml-collections==1.1.0",
    "pillow==11.2.1",
    "ipython==9.2.0",
    # The torchvision built against the CPU torch of DEFAULT_REQUIREMENTS (torch 2.13).
    "torchvision==0.28.0",
    "pyarrow==20.0.0",
)
# Import names whose distribution is called otherwise.
MODULE_DISTRIBUTIONS = {
    "PIL": "pillow",
    "cv2": "opencv-python-headless",
    "sklearn": "scikit-learn",
    "skimage": "scikit-image",
    "yaml": "pyyaml",
    "hydra": "hydra-core",
    "ml_collections": "ml-collections",
    "meltingpot": "dm-meltingpot",
    "mmgen": "mmgeneration",
    "IPython": "ipython",
    "torch_fidelity": "torch-fidelity",
    "huggingface_hub": "huggingface-hub",
    "pkg_resources": "setuptools",
    "dateutil": "python-dateutil",
    "attr": "attrs",
}
# Conda packages whose pip name differs.
CONDA_NAMES = {"pytorch": "torch", "pytorch-cpu": "torch", "opencv": "opencv-python-headless"}
# Conda packages that are not Python distributions (interpreters, system libraries,
# CUDA runtimes: a CPU build needs none of them).
_NOT_PYTHON = re.compile(
    r"^(python|pip|setuptools|wheel|_.*|lib.*|ld_impl.*|ca-certificates|openssl|ncurses"
    r"|readline|sqlite|tk|tzdata|xz|zlib|bzip2|zstd|lz4-c|cpuonly|pytorch-mutex|cudatoolkit"
    r"|cuda.*|.*-cuda|.*-cuda-.*|nccl|mkl.*|intel-openmp|blas|nvidia-.*|triton)$"
)
# Packages whose CPU build comes from the defaults (or --requirements), never from a
# conda channel's CUDA build; torchvision must match that torch, so it follows too.
CPU_BUILDS = {"torch", "torchvision"}
# What a pinned package brings along (its own dependencies), so importing it is covered.
KNOWN_DEPENDENCIES = {
    "torch": {"typing-extensions", "filelock", "jinja2", "networkx", "sympy", "fsspec"},
    "torchvision": {"pillow", "numpy", "torch"},
    "timm": {"pyyaml", "huggingface-hub", "safetensors", "torch", "torchvision"},
    "scipy": {"numpy"},
    "pandas": {"numpy", "python-dateutil", "pytz"},
    "matplotlib": {"numpy", "pillow", "python-dateutil"},
    "jax": {"numpy", "scipy", "ml-dtypes", "opt-einsum"},
    "flax": {"jax", "numpy", "optax", "msgpack", "pyyaml", "rich", "typing-extensions"},
    "ml-collections": {"pyyaml", "absl-py"},
}
_NAME_AT_START = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
_EGG = re.compile(r"#egg=([A-Za-z0-9._-]+)")


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass(frozen=True)
class Requirement:
    """One package a source names: its pinned line, or why it has none."""

    name: str
    line: str | None
    where: str
    conda: bool = False
    url: bool = False
    # The constraint an unpinned line states (">=2.0.0"), checked against a later pin.
    spec: str = ""


def _pip_line(raw: str, where: str) -> Requirement | None:
    line = re.sub(r"(^|\s+)#(?!egg=).*$", "", raw).strip()
    if not line or _LOCAL_BUILD.search(line):
        return None
    if line.startswith(("-e", "git+", "http://", "https://")) or "://" in line:
        egg = _EGG.search(line)
        name = (
            egg[1] if egg else re.sub(r"\.git$", "", line.rstrip("/").split("/")[-1].split("@")[0])
        )
        return Requirement(
            canonical(name),
            None,
            f"{where}: '{raw.strip()}' (a URL, not an index package)",
            url=True,
        )
    match = _NAME_AT_START.match(line)
    if not match:
        return None
    try:
        pinned = pinned_requirement(line)
    except ValueError:
        pinned = None
    name = canonical(match[1])
    if name.startswith("nvidia-") or name == "triton":
        return None  # CUDA runtimes: a CPU build needs none
    why = f"{where}: '{raw.strip()}' (not pinned)"
    spec = re.sub(r"^\s*[A-Za-z0-9._-]+\s*(\[[^\]]*\])?", "", line.split(";", 1)[0]).strip()
    return Requirement(name, pinned, where if pinned else why, spec=spec)


def _conda_line(raw: str, where: str) -> Requirement | None:
    text = raw.strip()
    match = re.match(r"^([A-Za-z0-9_][A-Za-z0-9._-]*)\s*(.*)$", text)
    if not match:
        return None
    name, rest = match[1].lower(), match[2].strip()
    if _NOT_PYTHON.match(name):
        return None
    pip_name = CONDA_NAMES.get(name, name)
    version = re.fullmatch(r"==?\s*([0-9][A-Za-z0-9.+!_-]*)(?:=\S*)?", rest)
    line = f"{pip_name}=={version[1]}" if version else None
    if line is not None:
        try:
            line = pinned_requirement(line)
        except ValueError:
            line = None
    why = where if line else f"{where}: '{text}' (not pinned)"
    return Requirement(canonical(pip_name), line, why, conda=True)


def requirements_file(path: Path) -> list[Requirement]:
    """The packages a ``requirements.txt`` names."""
    found = []
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        req = _pip_line(raw, f"{path}:{number}")
        if req is not None:
            found.append(req)
    return found


def environment_file(path: Path) -> list[Requirement]:
    """The packages a conda ``environment.yml`` names: its conda dependencies under their
    pip names (system libraries and CUDA runtimes dropped) and its pip list.

    Raises:
        ValueError: not an environment file.
    """
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise ValueError(f"{path}: invalid YAML ({exc})") from None
    deps = data.get("dependencies") if isinstance(data, dict) else None
    if not isinstance(deps, list):
        raise ValueError(f"{path}: no 'dependencies' list")
    found = []
    for entry in deps:
        if isinstance(entry, dict):
            for raw in entry.get("pip") or []:
                req = _pip_line(str(raw), f"{path} (pip)")
                if req is not None:
                    found.append(req)
        elif isinstance(entry, str):
            req = _conda_line(entry, str(path))
            if req is not None:
                found.append(req)
    return found


class _Imports(ast.NodeVisitor):
    """Absolute imports of a module, leaving out those guarded by ``except ImportError``."""

    def __init__(self) -> None:
        self.names: set[str] = set()
        self._optional = 0

    def visit_Try(self, node: ast.Try) -> None:
        guarded = any(
            isinstance(h.type, ast.Name) and h.type.id in ("ImportError", "ModuleNotFoundError")
            for h in node.handlers
        )
        self._optional += guarded
        for statement in node.body:
            self.visit(statement)
        self._optional -= guarded
        rest: list[ast.AST] = [*node.handlers, *node.orelse, *node.finalbody]
        for child in rest:
            self.visit(child)

    def visit_Import(self, node: ast.Import) -> None:
        if not self._optional:
            self.names.update(alias.name for alias in node.names)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if not self._optional and node.level == 0 and node.module:
            self.names.add(node.module)


def needed_modules(folder: Path, start: str = TEST_FILE) -> set[str]:
    """The top-level modules outside ``folder`` and the standard library that its tests
    import, followed through the folder's own modules (its code is read, never run)."""
    seen: set[Path] = set()
    needed: set[str] = set()
    todo = [folder / start]
    while todo:
        path = todo.pop()
        if path in seen or not path.is_file():
            continue
        seen.add(path)
        visitor = _Imports()
        try:
            visitor.visit(ast.parse(path.read_text(encoding="utf-8", errors="replace")))
        except (SyntaxError, ValueError):
            continue
        for module in visitor.names:
            parts = module.split(".")
            local = [
                candidate
                for i in range(len(parts), 0, -1)
                for candidate in (
                    folder.joinpath(*parts[:i]).with_suffix(".py"),
                    folder.joinpath(*parts[:i], "__init__.py"),
                )
                if candidate.is_file()
            ]
            if local:
                todo += local
            elif (folder / parts[0]).is_dir():
                todo += sorted((folder / parts[0]).rglob("*.py"))
            elif parts[0] not in sys.stdlib_module_names:
                needed.add(parts[0])
    return needed


def _satisfies(line: str, specifiers: list[str]) -> bool:
    """The pinned version meets every ``>=``-style constraint named before it."""
    try:
        from packaging.specifiers import InvalidSpecifier, SpecifierSet
        from packaging.version import InvalidVersion, Version
    except ImportError:  # packaging is pip's and pytest's; without it nothing is checked
        return True
    version = line.split("==", 1)[1].split(";", 1)[0].strip()
    try:
        return all(Version(version) in SpecifierSet(spec) for spec in specifiers)
    except (InvalidSpecifier, InvalidVersion):
        return False


def _resolve_pin(dist: str, order: list[list[Requirement]]) -> tuple[str | None, str]:
    """The first pin of ``dist`` in ``order`` that meets the constraints named before it,
    or (None, why). A git URL named before any pin is a specific commit no index release
    replaces. ``torch`` is never taken from a conda channel (its CUDA build)."""
    specifiers: list[str] = []
    first: Requirement | None = None
    for source in order:
        for req in source:
            if req.name != dist or (req.conda and dist in CPU_BUILDS):
                continue
            if req.line is not None:
                if _satisfies(req.line, specifiers):
                    return req.line, req.where
                return (
                    None,
                    f"{req.line} does not meet {', '.join(specifiers)} ({first.where if first else req.where})",
                )
            first = first or req
            if req.url:
                return None, req.where
            if req.spec:
                specifiers.append(req.spec)
    return None, first.where if first is not None else "no requirement names it"


@dataclass
class _Sources:
    """Where pins come from, first match first (see the module docstring)."""

    base: list[Requirement]
    checkout_env: list[Requirement]
    defaults: list[Requirement]
    # Environments written so far, by their requirements: papers that need the same
    # packages share one (it is built once).
    written: dict[str, str] = field(default_factory=dict)


def _paper_env(
    folder: Path, out: Path, env: str, task_id: str, sources: _Sources
) -> tuple[str | None, str | None]:
    """The environment the paper's tests need: (its name, None), or (None, why not).

    Raises:
        ValueError: an environment file that cannot be read.
    """
    own: list[Requirement] = []
    for name in PAPER_REQUIREMENTS:
        if (folder / name).is_file():
            own += requirements_file(folder / name)
    paper_env: list[Requirement] = []
    for name in ENV_FILES:
        if (folder / name).is_file():
            paper_env += environment_file(folder / name)
    order = [own, sources.base, paper_env, sources.checkout_env, sources.defaults]
    lines = [r.line for r in sources.base if r.line]
    names = {r.name for r in sources.base if r.line}
    extra = [r.line for r in own if r.line and r.name not in names]
    names |= {r.name for r in own if r.line}
    problems: list[tuple[str, str]] = []
    needed = needed_modules(folder)
    if "pandas" in needed and any(folder.rglob("*.parquet")):
        needed.add("pyarrow")  # pandas reads Parquet through an engine it imports itself
    for module in sorted(needed):
        dist = canonical(MODULE_DISTRIBUTIONS.get(module, module))
        if dist in names:
            continue
        line, why = _resolve_pin(dist, order)
        if line is not None:
            extra.append(line)
            names.add(dist)
        else:
            problems.append((dist, f"imports {module} ({why})"))
    # A package installed along with a pinned one needs no pin of its own.
    problems = [
        (dist, text)
        for dist, text in problems
        if not any(dist in KNOWN_DEPENDENCIES.get(n, ()) for n in names)
    ]
    if problems:
        return None, (
            "cannot pin what its tests import: "
            + "; ".join(text for _, text in problems)
            + " (pin it with --requirements FILE: name==version)"
        )
    if not extra:
        return env, None
    text = "".join(f"{line}\n" for line in [*lines, *extra])
    if text in sources.written:  # the same packages as an earlier paper: one environment
        return sources.written[text], None
    name = f"{env}-{task_id}"
    env_dir = out / "_envs" / name
    env_dir.mkdir(parents=True, exist_ok=True)
    (env_dir / "requirements.txt").write_text(text, encoding="utf-8")
    sources.written[text] = name
    return name, None


def _import_paper(
    entry: dict[str, Any], pset: Path, out: Path, env: str, sources: _Sources
) -> Imported:
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
    # Before any file is written: a paper whose environment cannot be pinned leaves none.
    task_env, why = _paper_env(folder, out, env, task_id, sources)
    if task_env is None:
        return Imported(paper_id, None, problem=why)
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
    paper_file = "paper.tex" if paper.suffix == ".tex" else "paper.txt"
    # The paper's own text, byte for byte as ResearchCodeBench ships it.
    shutil.copyfile(paper, target / paper_file)
    (target / "task.yaml").write_text(
        _task_yaml(entry, task_id, task_env, annotated, context, names, paper_file),
        encoding="utf-8",
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
        requirements: the base environment's requirements, which also pin what a
            paper needs before the checkout's environment.yml does (default: the
            checkout's ``requirements.txt`` without its local-build lines, else a
            CPU scientific Python stack with torch).

    Returns:
        Per paper, the task folder written or the problem that kept it out (a
        package its tests import that cannot be pinned among them).

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
    checkout_env: list[Requirement] = []
    for name in ENV_FILES:
        path = Path(checkout) / name
        if path.is_file():
            try:
                checkout_env += environment_file(path)
            except ValueError as exc:
                raise RcbError(str(exc)) from None
    base_file = out / "_envs" / env / "requirements.txt"
    sources = _Sources(
        base=[r for r in (_pip_line(line, str(base_file)) for line in reqs.splitlines()) if r],
        checkout_env=checkout_env,
        defaults=[
            r
            for r in (
                _pip_line(line, "rcb's CPU defaults")
                for line in (*DEFAULT_REQUIREMENTS.splitlines(), *EXTRA_PINS)
            )
            if r
        ],
    )
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
            imported = _import_paper(entry, pset, out, env, sources)
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
