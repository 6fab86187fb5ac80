"""Releases: a ``vX.Y.Z`` tag checked against the package version and the changelog,
its notes taken from ``CHANGELOG.md``, the GitHub release with the built files, the
major tag ``vX`` moved, and the thin action repository (``rcb/evaluate``) written and
pushed through the API (PyGithub), pinned to that release.

The thin repository holds ``action.yml``, a README and the licence, and no workflow
(GitHub's Marketplace refuses an action repository with workflow files). Its
``action.yml`` is rcb's own with one step in front: it downloads the release's source
distribution (the package, the tasks, the hash-pinned lock and this very action),
checks it against the sha256 written in at release time, and unpacks it; every step
that used the action's own folder uses that one. So ``uses: rcb/evaluate@v1`` runs
exactly the release it is pinned to, and a changed file on the index fails the job.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import tarfile
from pathlib import Path
from typing import TYPE_CHECKING

from rcb_action.errors import RcbError

if TYPE_CHECKING:
    from github.Repository import Repository

TAG = re.compile(r"^v(\d+)\.(\d+)\.(\d+)$")
CHANGELOG = "CHANGELOG.md"
SOURCE_URL = "https://files.pythonhosted.org/packages/source/r/rcb/rcb-{version}.tar.gz"
_HOME = "steps.rcb-source.outputs.home"


def version_of_tag(tag: str) -> str:
    """``X.Y.Z`` of a ``vX.Y.Z`` tag.

    Raises:
        RcbError: the tag is not of that form.
    """
    if not TAG.match(tag):
        raise RcbError(f"tag '{tag}': a release tag is vX.Y.Z, e.g. v1.2.0")
    return tag[1:]


def major_tag(version: str) -> str:
    """``vX``, the tag that follows every ``X.y.z`` release."""
    return f"v{version.split('.')[0]}"


def changelog_notes(text: str, version: str) -> str:
    """The body of the ``## [X.Y.Z]`` section of a changelog (up to the next ``## ``).

    Raises:
        RcbError: there is no section for that version, or it is empty.
    """
    lines = text.splitlines()
    heading = re.compile(rf"^## \[{re.escape(version)}\]")
    start = next((i for i, line in enumerate(lines) if heading.match(line)), None)
    if start is None:
        raise RcbError(f"{CHANGELOG}: no section '## [{version}] - DATE'; write it before tagging")
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    body = "\n".join(lines[start + 1 : end]).strip()
    if not body:
        raise RcbError(f"{CHANGELOG}: the section of {version} is empty")
    return body + "\n"


def release_notes(root: Path, tag: str) -> str:
    """The ``CHANGELOG.md`` section of the version ``tag`` releases.

    Raises:
        RcbError: the tag is not vX.Y.Z, or the changelog has no such section.
    """
    return changelog_notes((root / CHANGELOG).read_text(encoding="utf-8"), version_of_tag(tag))


def project_version(root: Path) -> str:
    """``[project] version`` of ``root/pyproject.toml``."""
    import tomllib

    return str(tomllib.loads((root / "pyproject.toml").read_text())["project"]["version"])


def check_release(tag: str, root: Path) -> str:
    """The version a tag releases, after checking that ``pyproject.toml``,
    ``rcb_action.__version__`` and the changelog all agree with it.

    Raises:
        RcbError: one line naming what disagrees and where.
    """
    from rcb_action import __version__

    version = version_of_tag(tag)
    declared = project_version(root)
    if declared != version:
        raise RcbError(f"pyproject.toml: version is {declared}, the tag {tag} says {version}")
    if __version__ != version:
        raise RcbError(
            f"rcb_action/__init__.py: __version__ is {__version__}, the tag {tag} says {version}"
        )
    release_notes(root, tag)
    return version


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _fetch_step(version: str, digest: str) -> str:
    return f"""    # This Action runs one rcb release: its source distribution (the package, the
    # tasks, the dependency lock and the full action), checked against its sha256.
    - name: Fetch rcb {version}
      id: rcb-source
      shell: bash
      env:
        SOURCE_URL: ${{{{ inputs.rcb-source }}}}
      run: |
        home="${{RUNNER_TEMP:-/tmp}}/rcb-{version}"
        rm -rf "$home" && mkdir -p "$home"
        curl -fsSL --retry 3 -o "$home.tar.gz" "$SOURCE_URL"
        if ! echo "{digest}  $home.tar.gz" | sha256sum --check --quiet -; then
          echo "::error title=rcb::$SOURCE_URL is not rcb {version}'s source distribution (sha256 mismatch)"
          exit 2
        fi
        tar -xzf "$home.tar.gz" -C "$home" --strip-components=1
        echo "home=$home" >> "$GITHUB_OUTPUT"

"""


def thin_action(action_yml: str, version: str, digest: str) -> str:
    """rcb's ``action.yml`` for the thin repository: an input naming where the source
    distribution is downloaded from, the fetch step first, and each step's
    ``$GITHUB_ACTION_PATH`` replaced by the unpacked release.

    Raises:
        RcbError: ``action_yml`` is not shaped as this function expects (a step that
            uses the action's folder without an ``env:`` block).
    """
    text = action_yml.replace(
        "\ninputs:\n",
        "\ninputs:\n"
        "  rcb-source:\n"
        "    description: >-\n"
        f"      Where to download rcb {version}'s source distribution (a mirror of PyPI); its\n"
        "      sha256 is checked against the one this release pinned.\n"
        "    required: false\n"
        f"    default: {SOURCE_URL.format(version=version)}\n",
        1,
    )
    head, sep, rest = text.partition("\n  steps:\n")
    if not sep:
        raise RcbError("action.yml: no 'runs: steps:' block")
    blocks = re.split(r"(?m)^(?=    - name: |    # )", rest)
    out = []
    for block in blocks:
        if "$GITHUB_ACTION_PATH" in block:
            if "\n      env:\n" not in block:
                name = block.strip().splitlines()[0]
                raise RcbError(f"action.yml: step '{name}' uses $GITHUB_ACTION_PATH without env:")
            block = block.replace("$GITHUB_ACTION_PATH", "$RCB_HOME")
            block = block.replace(
                "\n      env:\n", f"\n      env:\n        RCB_HOME: ${{{{ {_HOME} }}}}\n", 1
            )
        out.append(block)
    return head + sep + _fetch_step(version, digest) + "".join(out)


def write_action_repository(root: Path, sdist: Path, out: Path) -> list[Path]:
    """Write the thin action repository for the release whose source distribution is
    ``sdist`` into ``out`` (emptied first, ``.git`` kept): ``action.yml``, ``README.md``
    and ``LICENSE``, and nothing else.

    Raises:
        RcbError: the sdist is not rcb's, or lacks what the action needs.
    """
    match = re.fullmatch(r"rcb-(\d+\.\d+\.\d+)\.tar\.gz", sdist.name)
    if not match:
        raise RcbError(f"{sdist}: not rcb's source distribution (rcb-X.Y.Z.tar.gz)")
    version = match.group(1)
    with tarfile.open(sdist) as archive:
        names = set(archive.getnames())
    for needed in ("action.yml", "requirements/action.txt", "tasks/README.md", "LICENSE"):
        if f"rcb-{version}/{needed}" not in names:
            raise RcbError(f"{sdist}: lacks {needed} (see MANIFEST.in)")
    out.mkdir(parents=True, exist_ok=True)
    for entry in out.iterdir():
        if entry.name != ".git":
            shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
    action = thin_action(
        (root / "action.yml").read_text(encoding="utf-8"), version, sha256_of(sdist)
    )
    major = major_tag(version)
    readme = f"""# rcb/evaluate

Score language models on turning research papers into working code, in your
repository's CI: this is the GitHub Action of [rcb](https://github.com/rcb/rcb),
pinned to rcb {version}.

```yaml
- uses: rcb/evaluate@{major}
  with:
    models: openai/gpt-4o-mini # any litellm name, reference, or replay:FILE.jsonl
  env:
    OPENAI_API_KEY: ${{{{ secrets.OPENAI_API_KEY }}}}
```

`{major}` moves to each rcb {major[1:]}.x release; pin `v{version}` or its commit SHA to
stay on this one. The Action downloads rcb {version}'s source distribution, checks its
sha256 against the one written in `action.yml`, and runs it in a venv of its own; its
inputs, outputs, permissions and the recipes for shards and forks are documented in
[rcb's README](https://github.com/rcb/rcb/blob/v{version}/README.md#use-rcb-in-your-repositorys-ci).
Changes: [CHANGELOG](https://github.com/rcb/rcb/blob/v{version}/CHANGELOG.md).

This repository is written by rcb's release workflow; open issues and pull requests
at [rcb/rcb](https://github.com/rcb/rcb).
"""
    files = {
        "action.yml": action,
        "README.md": readme,
        "LICENSE": (root / "LICENSE").read_text(encoding="utf-8"),
    }
    written = []
    for name, content in files.items():
        path = out / name
        path.write_text(content, encoding="utf-8")
        written.append(path)
    return written


def _commit_of(repo: Repository, tag: str) -> str:
    """The commit a tag names (through an annotated tag's object when it is one).

    Raises:
        RcbError: the repository has no such tag.
    """
    from github import UnknownObjectException

    try:
        target = repo.get_git_ref(f"tags/{tag}").object
    except UnknownObjectException:
        raise RcbError(f"{repo.full_name}: no tag {tag}") from None
    if target.type == "tag":
        return str(repo.get_git_tag(target.sha).object.sha)
    return str(target.sha)


def _point(repo: Repository, ref: str, sha: str, *, move: bool) -> None:
    """Make ``ref`` (e.g. ``tags/v1``) name ``sha``: create it, or move it when ``move``.

    Raises:
        RcbError: it exists at another commit and may not move (a release tag).
    """
    from github import UnknownObjectException

    try:
        existing = repo.get_git_ref(ref)
        current = existing.object.sha
    except UnknownObjectException:
        repo.create_git_ref(f"refs/{ref}", sha)
        return
    if current == sha:
        return
    if not move:
        raise RcbError(f"{repo.full_name}: {ref} exists at {current[:12]}, not {sha[:12]}")
    existing.edit(sha, force=True)


def publish_release(repo: Repository, tag: str, notes: str, assets: list[Path]) -> str:
    """The GitHub release of ``tag`` with ``notes`` and ``assets`` (created, or brought up
    to date on a rerun: nothing is uploaded twice), and the major tag ``vX`` moved to
    the tag's commit. Returns that commit."""
    from github import UnknownObjectException

    version = version_of_tag(tag)
    sha = _commit_of(repo, tag)
    try:
        release = repo.get_release(tag)
        release.update_release(name=f"rcb {version}", message=notes)
    except UnknownObjectException:
        release = repo.create_git_release(tag, f"rcb {version}", notes)
    attached = {asset.name for asset in release.get_assets()}
    for path in assets:
        if path.name not in attached:
            release.upload_asset(str(path), name=path.name)
    _point(repo, f"tags/{major_tag(version)}", sha, move=True)
    return sha


def publish_action_repository(repo: Repository, tag: str, files: Path) -> str:
    """Commit the thin action repository's files (exactly those: a file left from an
    earlier release is dropped) on the default branch of ``repo``, tag the commit
    ``tag`` and move ``vX`` to it. Returns the commit; a rerun of the same release
    makes the same tree and moves nothing it should not.

    Raises:
        RcbError: ``tag`` exists there at another commit.
    """
    from github import InputGitTreeElement, UnknownObjectException

    version = version_of_tag(tag)
    elements = [
        InputGitTreeElement(path.name, "100644", "blob", content=path.read_text(encoding="utf-8"))
        for path in sorted(files.iterdir())
        if path.is_file()
    ]
    tree = repo.create_git_tree(elements)
    try:
        released = repo.get_git_commit(_commit_of(repo, tag))
    except RcbError:
        released = None  # not tagged yet
    if released is not None and released.tree.sha != tree.sha:
        raise RcbError(
            f"{repo.full_name}: {tag} exists with other files; a release tag never moves "
            "(release a new version)"
        )
    branch = repo.default_branch
    try:
        head = repo.get_git_ref(f"heads/{branch}")
        parent = repo.get_git_commit(head.object.sha)
    except UnknownObjectException:
        head, parent = None, None
    if parent is not None and parent.tree.sha == tree.sha:
        sha = str(parent.sha)  # the same files: a rerun, nothing to commit
    else:
        commit = repo.create_git_commit(f"rcb {version}", tree, [parent] if parent else [])
        sha = str(commit.sha)
        if head is not None:
            head.edit(sha)
        else:
            repo.create_git_ref(f"refs/heads/{branch}", sha)
    _point(repo, f"tags/{tag}", sha, move=False)
    _point(repo, f"tags/{major_tag(version)}", sha, move=True)
    return sha
