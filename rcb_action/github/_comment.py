"""One pull-request comment per key, created once and then edited in place.

The comment carries a hidden HTML marker naming its key; a later run finds the
comment by that marker and edits it instead of adding another.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from rcb_action.errors import RcbError
from rcb_action.github._context import GitHubContext
from rcb_action.github._workflow import clip_markdown

if TYPE_CHECKING:
    from github import Github
    from github.Issue import Issue


@dataclass(frozen=True)
class CommentResult:
    """What :func:`upsert_comment` did."""

    action: Literal["created", "updated"]
    id: int
    url: str


# Any of rcb's markers, whatever its key.
MARKER_PATTERN = re.compile(r"<!--\s*rcb-comment:.*?-->", re.DOTALL)


def comment_marker(key: str) -> str:
    """The hidden marker of the comment for ``key``: ``<!-- rcb-comment: KEY -->``."""
    safe = re.sub(r"-{2,}", "-", re.sub(r"[^A-Za-z0-9_.:/@+-]+", "-", key.strip())) or "rcb"
    return f"<!-- rcb-comment: {safe} -->"


def github_client(context: GitHubContext) -> Github:
    """A PyGithub client for the context's API address and token.

    Raises:
        RcbError: there is no token.
    """
    from github import Auth, Github

    if not context.token:
        raise RcbError(
            "no GitHub token: pass the Action's github-token input (or set GITHUB_TOKEN)"
        )
    return Github(base_url=context.api_url, auth=Auth.Token(context.token))


def upsert_comment(issue: Issue, key: str, body: str) -> CommentResult:
    """Edit the comment on ``issue`` that carries ``key``'s marker, or create it.

    The marker is put first in the body. A marked comment that cannot be edited
    (someone else wrote it, so the token is refused) is passed over.

    Raises:
        github.GithubException: the API refused to list or create comments.
    """
    from github import GithubException

    marker = comment_marker(key)
    text = clip_markdown(body if body.startswith(marker) else f"{marker}\n{body}")
    for comment in issue.get_comments():
        if marker not in (comment.body or ""):
            continue
        try:
            comment.edit(text)
        except GithubException as exc:
            if exc.status in (403, 404):
                continue
            raise
        return CommentResult("updated", comment.id, comment.html_url)
    created = issue.create_comment(text)
    return CommentResult("created", created.id, created.html_url)
