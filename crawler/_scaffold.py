"""``rcb task new``: a task folder laid out from a queue entry and the authors' code.

With ``--code URL@COMMIT --from PATH`` the task is built from the authors' repository,
read from a local copy (a working tree, or a bare git directory such as a mirror):
the commit is resolved to its full sha, the repository's licence file at that commit
is copied into the task (anything but MIT, Apache-2.0, BSD-2-Clause or BSD-3-Clause is
refused), the files the maintainer names are copied into ``src/``, and ``task.yaml``
pins ``code_url``, ``code_commit``, ``code_license`` and ``arxiv_version``. The paper's
title, date and domain come from the crawler's queue entry when there is one, else
they are placeholders that ``rcb validate`` rejects until filled.

Without ``--code`` the queue entry is needed, and ``src/`` gets a skeleton whose one
marked snippet raises ``NotImplementedError``.

Either way ``cases/`` and ``checks/`` hold skeletons that fail until written, and
``notes.md`` a checklist, so the folder is never a valid task by accident.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from crawler._candidates import task_papers
from crawler._queue import Candidate
from rcb_action.errors import RcbError
from rcb_action.tasks import LICENSE_FILES

SNIPPET_NAME = "method"
_STOP_WORDS = {"a", "an", "and", "for", "in", "of", "on", "the", "to", "via", "with", "fixture"}
ACCEPTED_LICENSES = ("MIT", "Apache-2.0", "BSD-2-Clause", "BSD-3-Clause")
# A repository's licence file; copied under its own name when the task loader accepts
# that name (LICENSE_FILES), else as LICENSE.
_LICENSE_FILE = re.compile(r"^(?:licen[cs]e|copying)(?:\.(?:md|txt|rst))?$", re.IGNORECASE)
_LICENSE_FILE_LOOSE = re.compile(r"^(?:licen[cs]e|copying)[-_.].+$", re.IGNORECASE)
_CODE_SPEC = re.compile(r"^(?P<url>\S+)@(?P<commit>[0-9a-fA-F]{4,40})$")
_HEX40 = re.compile(r"^[0-9a-f]{40}$")


# --- the paper's metadata -----------------------------------------------------------


def task_id_for(candidate: Candidate) -> str:
    """A folder name from the title's first meaningful words (``muon``, ``gated-deltanet``...)."""
    words = [w for w in re.findall(r"[a-z0-9]+", candidate.title.lower()) if w not in _STOP_WORDS]
    slug = "-".join(words[:4])[:40].strip("-")
    return slug or "arxiv-" + candidate.arxiv.replace(".", "-")


def _repository_slug(url: str) -> str:
    """``https://github.com/owner/Deep-Conf.git`` to ``deep-conf``."""
    name = url.rstrip("/").rsplit("/", 1)[-1].removesuffix(".git")
    return "-".join(re.findall(r"[a-z0-9]+", name.lower()))[:40]


def _module_name(task_id: str) -> str:
    name = re.sub(r"[^a-z0-9_]", "_", task_id)
    return name if name[:1].isalpha() else f"task_{name}"


# --- the authors' code ----------------------------------------------------------------


def parse_code_spec(spec: str) -> tuple[str, str]:
    """``URL@COMMIT`` to ``(URL, COMMIT)``; the commit is a hex prefix of 4 to 40 digits.

    Raises:
        RcbError: ``spec`` is not of that form.
    """
    match = _CODE_SPEC.match(spec.strip())
    if match is None or "://" not in match["url"]:
        raise RcbError(
            f"--code: '{spec}' is not URL@COMMIT (e.g. https://github.com/owner/repo@1a2b3c4)"
        )
    return match["url"].rstrip("/").removesuffix(".git"), match["commit"].lower()


def license_id(text: str) -> str | None:
    """The SPDX id of a licence text when it is MIT, Apache-2.0, BSD-2-Clause or
    BSD-3-Clause and nothing else; None otherwise (another licence, extra terms, or
    two licences in one file)."""
    plain = " ".join(text.lower().replace("“", '"').replace("”", '"').split())
    if foreign_terms(text) is not None:
        return None
    found = []
    if (
        "permission is hereby granted, free of charge, to any person obtaining a copy" in plain
        and "the above copyright notice and this permission notice shall be included" in plain
    ):
        found.append("MIT")
    if "apache license" in plain and "version 2.0" in plain and "www.apache.org/licenses" in plain:
        found.append("Apache-2.0")
    if (
        "redistribution and use in source and binary forms, with or without modification, "
        "are permitted provided that the following conditions are met"
        in plain
        and "redistributions of source code must retain the above copyright notice" in plain
        and "redistributions in binary form must reproduce the above copyright notice" in plain
        and "advertising materials" not in plain
        and "patent rights are granted" not in plain
    ):
        three = "neither the name of" in plain or "may be used to endorse or promote" in plain
        found.append("BSD-3-Clause" if three else "BSD-2-Clause")
    return found[0] if len(found) == 1 else None


_FOREIGN = {
    "gnu general public license": "the GNU General Public License",
    "gnu lesser general public license": "the GNU Lesser General Public License",
    "gnu library general public license": "the GNU Library General Public License",
    "gnu affero general public license": "the GNU Affero General Public License",
    "mozilla public license": "the Mozilla Public License",
    "eclipse public license": "the Eclipse Public License",
    "creative commons": "a Creative Commons licence",
    "non-commercial": "non-commercial terms",
    "noncommercial": "non-commercial terms",
    "commons clause": "the Commons Clause",
    "research purposes only": "research-only terms",
}


def foreign_terms(text: str) -> str | None:
    """What a licence text names that rcb cannot accept, if anything."""
    plain = " ".join(text.lower().split())
    return next((what for key, what in _FOREIGN.items() if key in plain), None)


@dataclass(frozen=True)
class AuthorsCode:
    """The authors' repository at one commit, read from a local git copy (no network)."""

    url: str
    commit: str
    source: Path
    git: tuple[str, ...]

    @property
    def short(self) -> str:
        return self.commit[:12]

    def _run(self, *args: str) -> bytes:
        """Run a read-only git command on the local copy.

        Raises:
            RcbError: git fails (its first line of error).
        """
        env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_CONFIG_NOSYSTEM": "1"}
        run = subprocess.run([*self.git, *args], capture_output=True, env=env, check=False)
        if run.returncode != 0:
            why = run.stderr.decode(errors="replace").strip().splitlines()
            raise RcbError(f"--from {self.source}: git {args[0]}: {why[0] if why else 'failed'}")
        return run.stdout

    def _entries(self, path: str = "", *, recursive: bool = False) -> list[tuple[str, str]]:
        """(mode, path) of the tree entries at ``path`` (the root by default)."""
        args = ["ls-tree", "-z", *(["-r"] if recursive else []), self.commit]
        out = self._run(*args, *(["--", path] if path else []))
        entries = []
        for item in out.decode("utf-8", errors="surrogateescape").split("\0"):
            if item:
                meta, name = item.split("\t", 1)
                entries.append((meta.split()[0], name))
        return entries

    def _blob(self, path: str) -> bytes:
        return self._run("cat-file", "blob", f"{self.commit}:{path}")

    def license(self) -> tuple[str, bytes, str]:
        """The licence file at the commit: (its name in the repository, its bytes, SPDX id).

        Raises:
            RcbError: no licence file, several candidates, or a licence rcb cannot accept.
        """
        files = [name for mode, name in self._entries() if mode in ("100644", "100755")]
        exact = [n for n in files if _LICENSE_FILE.match(n)]
        loose = [n for n in files if _LICENSE_FILE_LOOSE.match(n)]
        candidates = exact or loose
        where = f"{self.url}@{self.short}"
        if not candidates:
            raise RcbError(
                f"{where}: no licence file (LICENSE, COPYING) at the repository's root; "
                "without one its code cannot be redistributed in a task"
            )
        if len(candidates) > 1 and not exact:
            raise RcbError(
                f"{where}: several licence files ({', '.join(candidates)}); rcb task new "
                "copies one: lay the task out by hand, or ask the authors which applies"
            )
        name = sorted(candidates, key=lambda n: (n.upper() != "LICENSE", n))[0]
        data = self._blob(name)
        text = data.decode("utf-8", errors="replace")
        spdx = license_id(text)
        if spdx is None:
            other = foreign_terms(text)
            what = f" (it names {other})" if other else ""
            raise RcbError(
                f"{where}: {name} is not {', '.join(ACCEPTED_LICENSES[:-1])} or "
                f"{ACCEPTED_LICENSES[-1]}{what}; a task carries the authors' code, so only "
                "these permissive licences are accepted"
            )
        return name, data, spdx

    def files(self, paths: list[str]) -> dict[str, bytes]:
        """The files at ``paths`` (a folder brings every file under it), by repository path.

        Raises:
            RcbError: a path is outside the repository, absent at the commit, or a link
                or submodule (a task holds plain files only).
        """
        found: dict[str, bytes] = {}
        for raw in paths:
            path = raw.strip().strip("/")
            parts = PurePosixPath(path).parts
            if not path or raw.startswith("/") or ".." in parts:
                raise RcbError(f"--files: '{raw}' is not a path inside the repository")
            entries = self._entries(path, recursive=True)
            entries = [(m, n) for m, n in entries if n == path or n.startswith(path + "/")]
            if not entries:
                raise RcbError(f"--files: '{raw}' is not in {self.url} at {self.short}")
            for mode, name in entries:
                if mode not in ("100644", "100755"):
                    kind = "a symbolic link" if mode == "120000" else "a submodule"
                    raise RcbError(
                        f"--files: '{name}' is {kind} at {self.short}; a task holds plain "
                        "files only (copy what it points to by hand)"
                    )
                found[name] = self._blob(name)
        return found


def open_code(spec: str, local: Path) -> AuthorsCode:
    """The repository ``spec`` (``URL@COMMIT``) read from the git copy at ``local``.

    ``local`` is a working tree (with ``.git``) or a bare git directory; nothing is
    fetched from the network.

    Raises:
        RcbError: ``spec`` is malformed, ``local`` is not a git copy, or the commit is
            not in it.
    """
    url, prefix = parse_code_spec(spec)
    local = Path(local)
    if (local / ".git").exists():
        git: tuple[str, ...] = ("git", "-C", str(local))
    elif (local / "HEAD").is_file() and (local / "objects").is_dir():
        git = ("git", f"--git-dir={local}")
    else:
        raise RcbError(
            f"--from: {local} is not a git working tree nor a bare git directory "
            f"(git clone {url} {local})"
        )
    code = AuthorsCode(url=url, commit=prefix, source=local, git=git)
    try:
        full = code._run("rev-parse", "--verify", "--end-of-options", f"{prefix}^{{commit}}")
    except RcbError as exc:
        raise RcbError(
            f"--code: commit {prefix} is not in {local} (git fetch there first): {exc}"
        ) from None
    commit = full.decode().strip()
    if not _HEX40.match(commit):
        raise RcbError(f"--code: {prefix} did not resolve to one commit in {local}")
    return AuthorsCode(url=url, commit=commit, source=local, git=git)


# --- the files of the task -----------------------------------------------------------


@dataclass(frozen=True)
class Scaffold:
    """What ``rcb task new`` wrote.

    Attributes:
        placeholders: task.yaml keys left for the maintainer to fill (no queue entry).
        sources: the authors' files copied, as task paths (``src/...``).
    """

    root: Path
    files: list[str]
    module: str
    code: AuthorsCode | None = None
    license: str | None = None
    placeholders: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)


def _task_yaml(
    *,
    arxiv_id: str,
    candidate: Candidate | None,
    task_id: str,
    env: str,
    module: str,
    code: AuthorsCode | None,
    license: str | None,
    annotated: list[str],
) -> str:
    if code is not None:
        command = f"rcb task new {arxiv_id} --code {code.url}@{code.short}"
        made = f"# Laid out by `{command}`."
    else:
        made = f"# Scaffolded by `rcb task new {arxiv_id}` from crawler/queue.yaml."
    lines = [
        made,
        f"# Fill in the TODOs, then: rcb validate tasks/{task_id} --mutants",
        f"id: {task_id}",
    ]
    if candidate is not None:
        lines += [
            f"title: {json.dumps(candidate.title, ensure_ascii=False)}",
            f'arxiv: "{arxiv_id}"',
            f"arxiv_version: 1  # the version whose LaTeX the model reads (rcb paper show {task_id})",
            f"published: {candidate.published.isoformat()}  # arXiv v1 date: the contamination clock",
        ]
    else:
        lines += [
            'title: "TODO: the exact title of arXiv v1"',
            f'arxiv: "{arxiv_id}"',
            f"arxiv_version: 1  # the version whose LaTeX the model reads (rcb paper show {task_id})",
            "published: TODO  # the arXiv v1 date, YYYY-MM-DD: the contamination clock",
        ]
    code_url = code.url if code is not None else None
    if code_url is None and candidate is not None:
        repo = next((k.url for k in candidate.code_links if k.kind == "repository"), None)
        code_url = repo or (candidate.code_links[0].url if candidate.code_links else None)
    if code_url:
        lines.append(f"code_url: {json.dumps(code_url)}")
    if code is not None:
        lines += [
            f"code_commit: {code.commit}  # the authors' code this task is built from",
            f"code_license: {license}  # the LICENSE file is the repository's, as is",
        ]
    if candidate is not None:
        lines.append(f"domain: {candidate.domain}  # from the arXiv primary category")
    else:
        lines.append("domain: TODO  # from the arXiv primary category: ml, quantum, finance, ...")
    lines += [
        "kind: snippet",
        f"env: {env}  # tasks/_envs/<env>/requirements.txt",
        "gpu: none",
        "timeout_s: 60",
    ]
    if code is not None:
        shown = ", ".join(annotated)
        lines += [
            f"annotated: [{shown}]  # TODO: the files with snippets; move those shown in full to",
            "context: []  # context:, and leave files the model need not read out of both",
            "paper: {source: arxiv}  # the paper's own LaTeX, fetched once and cached",
            "snippets: {}  # TODO: one entry per snippet: NAME: {checks: "
            f'["checks/test_{module}.py::test_..."]}}',
        ]
    else:
        lines += [
            f"annotated: [src/{module}.py]",
            "context: []  # other files shown to the model in full",
            "paper: {source: arxiv}  # the paper's own LaTeX, fetched once and cached",
            "snippets:  # TODO: one entry per snippet, naming the checks that decide it",
            f"  {SNIPPET_NAME}:",
            f'    checks: ["checks/test_{module}.py::test_{SNIPPET_NAME}"]',
        ]
    return "\n".join(lines) + "\n"


def _notes_md(
    *, arxiv_id: str, task_id: str, candidate: Candidate | None, code: AuthorsCode | None
) -> str:
    title = candidate.title if candidate is not None else f"arXiv {arxiv_id}"
    dated = f" (v1 {candidate.published})" if candidate is not None else ""
    origin = (
        f"Built from {code.url} at commit {code.commit}.\n\n"
        if code is not None
        else "Not yet built from the authors' code: find their repository and run "
        "`rcb task new ... --code URL@COMMIT --from PATH`.\n\n"
    )
    checklist = (
        "## Checklist (delete when done)\n\n"
        "- [ ] `task.yaml`: `title`, `published` (the arXiv v1 date) and `domain` (from the "
        "primary category) checked against arXiv; `arxiv_version` is the version read "
        f"(`rcb paper show {task_id}`).\n"
        "- [ ] `src/`: only the files the cases need, at the pinned commit, in the authors' "
        "framework and style; anything replaced (a CUDA kernel by a pure-Python shim) sits in "
        "a file of its own and is said below.\n"
        "- [ ] What to mask: what the paper contributes (at least 80% of the weight), not "
        "generic numerics or prior work; a mean of at least 6 weighted lines a snippet and at "
        "most 25% of one- or two-line snippets (nesting allowed); 4-10 snippets.\n"
        "- [ ] Nothing visible gives a snippet away: no masked line elsewhere in the files "
        "shown, no docstring or comment beside a snippet that restates it (`rcb validate` "
        "flags both; say below why a flagged docstring is acceptable).\n"
        "- [ ] `cases/`: seeded from `RCB_SEED`; every random case passes for the reference "
        f"under 10 seeds (`rcb validate tasks/{task_id} --seeds 10`).\n"
        "- [ ] `checks/`: tolerances stated and chosen for legitimate reorderings of "
        "floating-point work; closed forms and properties the paper gives.\n"
        f"- [ ] `rcb validate tasks/{task_id} --mutants`: reference passes, null fails, at "
        "least 90% of mutants killed and every snippet kills one; commit mutants.json.\n"
        f'- [ ] `rcb prompt {task_id} "<snippet>"`: read what a model sees.\n\n'
    )
    sections = (
        "## Snippets and the paper\n\n"
        "| snippet | section / equation | what it computes |\n"
        "| --- | --- | --- |\n\n"
        "## Seeds and tolerances\n\n"
        "## What the trimmed code differs in\n\n"
    )
    abstract = ""
    if candidate is not None:
        links = "\n".join(f"- {link.kind}: {link.url}" for link in candidate.code_links)
        abstract = f"## Abstract\n\n{candidate.abstract}\n\n## Code links\n\n{links}\n"
    return (
        f"# Notes on {title}\n\n"
        f"arXiv {arxiv_id}{dated}. {origin}"
        "<!-- Maintainers' notes on the method: where each snippet is in the paper, what\n"
        "the code does differently. Never shown as the paper: models read the paper's own\n"
        "LaTeX (task.yaml 'paper'); these notes are given only with --paper notes. -->\n\n"
        f"{checklist}{sections}{abstract}"
    )


def _source(candidate: Candidate) -> str:
    return (
        f'"""{candidate.title} (arXiv {candidate.arxiv}).\n\n'
        "TODO(rcb task new): replace this skeleton with the authors' code\n"
        "(rcb task new --code URL@COMMIT --from PATH --files ...) and mark each part a model\n"
        "should write with paper2code tags.\n"
        '"""\n\n\n'
        f"def {SNIPPET_NAME}(x):\n"
        '    """TODO: what this computes, in the paper\'s notation."""\n'
        f'    # <paper2code name="{SNIPPET_NAME}">\n'
        '    raise NotImplementedError("rcb task new: write the paper\'s method here")\n'
        f'    # </paper2code name="{SNIPPET_NAME}">\n'
    )


def _cases(title: str, module: str, *, skeleton: bool) -> str:
    target = "the code under test" if skeleton else "the authors' code"
    imports = f"\nfrom {module} import {SNIPPET_NAME}\n" if skeleton else ""
    call = f"{SNIPPET_NAME}(rng.normal())" if skeleton else "the authors' code"
    return (
        f'"""Cases for {title}: they run WITH {target}, in the run sandbox.\n\n'
        "Each case_<name>() drives the code on fixed or seeded inputs and returns plain data\n"
        "(numbers, strings, lists, dicts, numpy arrays; tensors become arrays). No assertion\n"
        "and no expected value here: the checks decide, in a sandbox of their own.\n"
        '"""\n\n'
        "import os\n"
        "import random\n"
        f"{imports}\n"
        "# rcb validate runs the reference under RCB_SEED 0..9; a model is graded under 0.\n"
        'SEED = int(os.environ.get("RCB_SEED", "0"))\n\n\n'
        f"def case_{SNIPPET_NAME}():\n"
        "    rng = random.Random(SEED)  # or numpy.random.default_rng(SEED), torch.manual_seed(SEED)\n"
        f"    # TODO(rcb task new): return {call} on inputs drawn from rng.\n"
        '    raise NotImplementedError("rcb task new: this case is not written yet")\n'
    )


def _checks(title: str) -> str:
    return (
        f'"""Checks for {title}: they run WITHOUT the code under test, in the check sandbox.\n\n'
        "`outputs` and `reference` map each case's name to what it returned for this attempt\n"
        "and for the reference code. Compare under stated tolerances that accept every\n"
        "correct implementation, and with closed forms and properties the paper gives; a\n"
        "check that needs the inputs regenerates them from RCB_SEED.\n"
        '"""\n\n'
        "import pytest\n\n\n"
        f"def test_{SNIPPET_NAME}(outputs, reference):\n"
        "    # TODO(rcb task new): e.g. np.testing.assert_allclose(outputs[NAME], reference[NAME],\n"
        "    # rtol=1e-10)  # and say why that tolerance; then delete the line below.\n"
        '    pytest.fail("rcb task new: this check is not written yet")\n'
    )


def choose_env(tasks_dir: Path, env: str | None) -> str:
    """The shared environment: ``env`` when given (it must exist), else ``numpy``, else the first.

    Raises:
        RcbError: the environment is not under ``tasks/_envs``.
    """
    envs_dir = tasks_dir / "_envs"
    available = sorted(p.parent.name for p in envs_dir.glob("*/requirements.txt"))
    if env is not None:
        if env not in available:
            raise RcbError(
                f"--env: no {envs_dir / env / 'requirements.txt'} "
                f"(available: {', '.join(available) or 'none'})"
            )
        return env
    if not available:
        raise RcbError(f"{envs_dir}: no environments (add <env>/requirements.txt, then --env)")
    return "numpy" if "numpy" in available else available[0]


def scaffold_task(
    candidate: Candidate | None,
    tasks_dir: Path,
    *,
    arxiv_id: str | None = None,
    task_id: str | None = None,
    env: str | None = None,
    code: AuthorsCode | None = None,
    files: list[str] | None = None,
) -> Scaffold:
    """Write ``tasks_dir/<task_id>/`` for a paper.

    With ``code``, the task is laid out from the authors' repository at its commit:
    its licence file, the ``files`` named (into ``src/``), and task.yaml pinning the
    code; title, date and domain come from ``candidate`` or are placeholders. Without
    ``code``, ``candidate`` is needed and ``src/`` gets a skeleton; the folder then
    loads (checked here) but does not validate.

    Raises:
        RcbError: the id is malformed or taken, the paper is already a task, the
            environment does not exist, there is neither a candidate nor code, or the
            code's licence or files cannot be used.
    """
    from rcb_action.tasks import load_task

    if not tasks_dir.is_dir():
        raise RcbError(f"{tasks_dir}: no such tasks folder (pass --tasks-dir)")
    arxiv = arxiv_id or (candidate.arxiv if candidate is not None else None)
    if arxiv is None or (candidate is None and code is None):
        raise RcbError("rcb task new: needs a queue entry for the paper, or --code URL@COMMIT")
    if task_id is None and candidate is not None:
        task_id = task_id_for(candidate)
    elif task_id is None and code is not None:
        task_id = _repository_slug(code.url) or "arxiv-" + arxiv.replace(".", "-")
    task_id = task_id or ""
    if not re.fullmatch(r"[a-z0-9][a-z0-9_-]*", task_id):
        raise RcbError(f"--id: '{task_id}' must be lowercase letters, digits, '-' or '_'")
    existing = task_papers(tasks_dir).get(arxiv)
    if existing is not None:
        raise RcbError(f"{tasks_dir / existing / 'task.yaml'}: arXiv {arxiv} is already this task")
    root = tasks_dir / task_id
    if root.exists():
        raise RcbError(f"{root}: already exists (choose another --id)")
    env = choose_env(tasks_dir, env)
    module = _module_name(task_id)
    title = candidate.title if candidate is not None else f"arXiv {arxiv}"
    written: dict[str, bytes] = {}
    license_spdx: str | None = None
    sources: list[str] = []
    if code is not None:
        name, text, license_spdx = code.license()
        written[name if name in LICENSE_FILES else "LICENSE"] = text
        for repo_path, data in code.files(files or []).items():
            sources.append(f"src/{repo_path}")
            written[f"src/{repo_path}"] = data
    elif files:
        raise RcbError("--files: copies the authors' files, so it needs --code and --from")
    annotated = [rel for rel in sources if rel.endswith(".py")]
    texts = {
        "task.yaml": _task_yaml(
            arxiv_id=arxiv,
            candidate=candidate,
            task_id=task_id,
            env=env,
            module=module,
            code=code,
            license=license_spdx,
            annotated=annotated,
        ),
        "notes.md": _notes_md(arxiv_id=arxiv, task_id=task_id, candidate=candidate, code=code),
        f"cases/cases_{module}.py": _cases(title, module, skeleton=code is None),
        f"checks/test_{module}.py": _checks(title),
    }
    if code is None and candidate is not None:
        texts[f"src/{module}.py"] = _source(candidate)
    written.update({rel: text.encode("utf-8") for rel, text in texts.items()})
    try:
        for rel, data in written.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        if code is None:
            load_task(root)
    except BaseException:
        shutil.rmtree(root, ignore_errors=True)
        raise
    placeholders = [] if candidate is not None else ["title", "published", "domain"]
    return Scaffold(
        root=root,
        files=sorted(written),
        module=module,
        code=code,
        license=license_spdx,
        placeholders=placeholders,
        sources=sources,
    )
