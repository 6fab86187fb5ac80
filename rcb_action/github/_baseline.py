"""The base branch's results: from a local file or folder, or from a workflow artifact.

A run on the default branch uploads its ``report.json`` as an artifact (by
default ``rcb-report``); a pull-request run compares with the one made by this
repository (never by a fork) on its base branch at the merge base of the pull
request, else with the newest one there, and says which.
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from rcb_action.errors import RcbError
from rcb_action.github._comment import github_client
from rcb_action.github._context import GitHubContext
from rcb_action.report import Report

if TYPE_CHECKING:
    from github.Artifact import Artifact

REPORT_FILE = "report.json"
DEFAULT_ARTIFACT = "rcb-report"
MAX_ARTIFACT_BYTES = 64 << 20


@dataclass(frozen=True)
class Baseline:
    """A report to compare with, and where it came from (for the reader)."""

    report: Report
    source: str


def load_report(path: Path, registry_files: Iterable[Path] = ()) -> Report:
    """A report from ``rcb report --json``, or built from a results folder.

    Raises:
        RcbError: the path is missing or holds neither, or the report is not of this
            schema version (one line naming the file and the first bad field).
    """
    from rcb_action.results import RESULTS_FILE, read_records

    path = Path(path)
    if path.is_dir():
        if (path / RESULTS_FILE).is_file():
            from rcb_action.models import load_registry
            from rcb_action.report import build_report

            records = read_records(path / RESULTS_FILE)
            return build_report(records, load_registry(registry_files), source=str(path))
        if (path / REPORT_FILE).is_file():
            path = path / REPORT_FILE
        else:
            raise RcbError(f"{path}: neither {RESULTS_FILE} nor {REPORT_FILE} here")
    return Report.load(path)


def report_from_zip(data: bytes, *, source: str) -> Report:
    """The ``report.json`` inside an artifact's zip, read in memory (nothing is extracted).

    Raises:
        RcbError: not a zip, or no report in it.
    """
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        raise RcbError(f"{source}: the artifact is not a zip archive") from None
    names = sorted(
        (n for n in archive.namelist() if PurePosixPath(n).name == REPORT_FILE),
        key=lambda n: (n.count("/"), n),
    )
    if not names:
        raise RcbError(f"{source}: no {REPORT_FILE} in the artifact")
    info = archive.getinfo(names[0])
    if info.file_size > MAX_ARTIFACT_BYTES:
        raise RcbError(f"{source}: {REPORT_FILE} is larger than {MAX_ARTIFACT_BYTES} bytes")
    try:
        report = json.loads(archive.read(info))
    except json.JSONDecodeError as exc:
        raise RcbError(f"{source}: {REPORT_FILE} is not JSON ({exc.msg})") from None
    return Report.from_data(report, source=f"{source}: {REPORT_FILE}")


def _event_head_sha(context: GitHubContext) -> str:
    """The pull request's head commit named by the event (``pull_request.head.sha``), or ""."""
    pull = context.event.get("pull_request")
    head = pull.get("head") if isinstance(pull, dict) else None
    sha = head.get("sha") if isinstance(head, dict) else None
    return sha if isinstance(sha, str) else ""


def fetch_artifact_report(
    context: GitHubContext,
    branch: str,
    *,
    head_sha: str = "",
    pull: int | None = None,
    artifact: str = DEFAULT_ARTIFACT,
) -> Baseline | None:
    """The unexpired ``artifact`` made by this repository's run on ``branch`` at the merge
    base of ``branch`` and the pull request's head (``head_sha``, else pull request
    ``pull``'s, else the one the event names), so that the change shown is the pull
    request's alone.

    When no run made one at the merge base (or the head is unknown), the newest one on
    ``branch`` is used and its ``source`` says so. Artifacts from forks' runs are ignored
    even when their branch has the same name. Returns None when there is none.

    Raises:
        RcbError: no token or repository, the API refused, or the artifact is unreadable.
    """
    import requests
    from github import GithubException

    if not context.repository:
        raise RcbError("GITHUB_REPOSITORY is not set: cannot look for the base branch's results")
    client = github_client(context)
    merge_base, unknown = "", "the pull request's head is unknown"
    try:
        repo = client.get_repo(context.repository)
        if not head_sha:
            head_sha = (
                str(repo.get_pull(pull).head.sha) if pull is not None else _event_head_sha(context)
            )
        if head_sha:
            try:
                merge_base = str(repo.compare(branch, head_sha).merge_base_commit.sha)
            except GithubException as exc:
                # Not fatal: the newest report still shows a change, said to be approximate.
                unknown = f"the merge base could not be read, API {exc.status}"
        newest: Artifact | None = None
        at_merge_base: Artifact | None = None
        for candidate in repo.get_artifacts(name=artifact):
            run = candidate.raw_data.get("workflow_run") or {}
            if candidate.expired or run.get("head_branch") != branch:
                continue
            if run.get("head_repository_id") != repo.id:
                continue
            newest = newest or candidate
            if not merge_base:
                break
            if run.get("head_sha") == merge_base:
                at_merge_base = candidate
                break
    except GithubException as exc:
        raise RcbError(
            f"looking for the base branch's {artifact} artifact in {context.repository} "
            f"failed (API {exc.status}); the job needs 'actions: read' permission"
        ) from None
    chosen = at_merge_base or newest
    if chosen is None:
        return None
    sha = str((chosen.raw_data.get("workflow_run") or {}).get("head_sha") or "")[:7]
    if not merge_base:
        where = f"{branch} at {sha} (newest; {unknown})"
    elif at_merge_base is None:
        where = f"{branch} at {sha} (newest; no report for the merge base {merge_base[:7]})"
    else:
        where = f"{branch} at {sha} (the merge base)"
    source = f"artifact {artifact} of run {(chosen.raw_data.get('workflow_run') or {}).get('id')}"
    # requests drops the Authorization header when the download redirects to another host
    # (the archive lives in blob storage behind a signed address).
    response = requests.get(
        chosen.archive_download_url,
        headers={
            "Authorization": f"Bearer {context.token}",
            "Accept": "application/vnd.github+json",
        },
        timeout=60,
    )
    if response.status_code != 200:
        raise RcbError(f"{source}: download failed ({response.status_code})")
    if len(response.content) > MAX_ARTIFACT_BYTES:
        raise RcbError(f"{source}: larger than {MAX_ARTIFACT_BYTES} bytes")
    return Baseline(report_from_zip(response.content, source=source), source=f"{where}, {source}")
