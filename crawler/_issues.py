"""One GitHub issue per queue candidate, for triage; never two for the same paper.

Each issue carries a hidden marker with the paper's arXiv id and the
``rcb-candidate`` label. Before creating anything, the repository's issues with
that label (open and closed) are listed once; a paper that already has one is
left alone, so reruns and resumed crawls create no duplicates, and an issue a
maintainer closed stays closed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from crawler._queue import Candidate
from rcb_action.errors import RcbError

ISSUE_LABEL = "rcb-candidate"
_MARKER = "<!-- rcb-candidate: {} -->"
_MARKER_RE = re.compile(r"<!-- rcb-candidate: (\d{4}\.\d{4,5}) -->")


def issue_title(candidate: Candidate) -> str:
    title = candidate.title if len(candidate.title) <= 180 else candidate.title[:177] + "..."
    return f"Candidate task: {title} (arXiv {candidate.arxiv})"


def issue_body(candidate: Candidate) -> str:
    """The issue text: what the paper is, why it scored, and how to make it a task."""
    links = "\n".join(f"- {link.kind}: {link.url}" for link in candidate.code_links)
    reasons = "\n".join(f"- {reason}" for reason in candidate.reasons)
    abstract = (
        candidate.abstract if len(candidate.abstract) <= 3000 else candidate.abstract[:2997] + "..."
    )
    return (
        f"**{candidate.title}**\n\n"
        f"arXiv [{candidate.arxiv}](https://arxiv.org/abs/{candidate.arxiv}) "
        f"(v{candidate.version}), submitted {candidate.published}, {candidate.primary_category}, "
        f"domain `{candidate.domain}`.\n\n"
        f"### Code\n{links}\n\n"
        f"### Score {candidate.score}\n{reasons}\n\n"
        f"### Abstract\n{abstract}\n\n"
        "### Triage\n"
        f"- Make it a task from the authors' code: `rcb task new {candidate.arxiv} "
        "--code URL@COMMIT --from PATH --files ...`, then open a pull request.\n"
        "- Not a fit: set `status: rejected` and a `note:` on its entry in "
        "`crawler/queue.yaml`, and close this issue.\n\n"
        f"{_MARKER.format(candidate.arxiv)}\n"
    )


class IssueTracker:
    """Creates the triage issues in one repository through PyGithub."""

    def __init__(self, repo: str, client: Any) -> None:
        """Connect to ``repo`` (``owner/name``) through ``client``, a PyGithub ``Github``
        (the command builds it from the runner's token and API address).

        Raises:
            RcbError: the name is not owner/name, or the repository cannot be reached.
        """
        from github import GithubException

        if not re.fullmatch(r"[\w.-]+/[\w.-]+", repo):
            raise RcbError(f"--issues: '{repo}' is not a repository like owner/name")
        self._name = repo
        self._error = GithubException
        try:
            self._repo: Any = client.get_repo(repo)
        except GithubException as exc:
            raise RcbError(self._explain(exc)) from None
        self._known: set[str] | None = None

    def _explain(self, exc: Any) -> str:
        message = (exc.data or {}).get("message", "") if isinstance(exc.data, dict) else ""
        return (
            f"--issues {self._name}: GitHub answered {exc.status} {message}".rstrip()
            + " (check the repository name and that GITHUB_TOKEN may write issues)"
        )

    def known(self) -> set[str]:
        """arXiv ids that already have an issue (open or closed)."""
        if self._known is None:
            found: set[str] = set()
            try:
                for issue in self._repo.get_issues(state="all", labels=[ISSUE_LABEL]):
                    found.update(_MARKER_RE.findall(issue.body or ""))
            except self._error as exc:
                raise RcbError(self._explain(exc)) from None
            self._known = found
        return self._known

    def ensure(self, candidates: Iterable[Candidate]) -> list[tuple[str, int]]:
        """An issue for each candidate without one; the (arXiv id, issue number) pairs created."""
        known = self.known()
        created: list[tuple[str, int]] = []
        for candidate in candidates:
            if candidate.arxiv in known:
                continue
            try:
                issue = self._repo.create_issue(
                    title=issue_title(candidate),
                    body=issue_body(candidate),
                    labels=[ISSUE_LABEL],
                )
            except self._error as exc:
                raise RcbError(self._explain(exc)) from None
            known.add(candidate.arxiv)
            created.append((candidate.arxiv, int(issue.number)))
        return created
