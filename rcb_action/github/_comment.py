"""One pull-request comment per key, created once and then edited in place.

The comment carries a hidden HTML marker naming its key as its first line; a later
run finds the comment whose first line is exactly that marker *and* whose author is
the token's own user (``github-actions[bot]`` for an Actions token) and edits it
instead of adding another: a comment anyone else posts with the marker is never
edited, nor taken for rcb's. Every other marker is removed from a body, again and
again until none is left, so that no text (a model name, a verdict made by a pull
request's run) can make a comment pass for another of rcb's comments. Every page of
the comments is read (PyGithub's ``PaginatedList`` follows the ``Link`` header).
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


# Who writes with an Actions token (GITHUB_TOKEN), which has no user of its own.
ACTIONS_BOT = "github-actions[bot]"

# Any of rcb's markers, whatever its key, spacing or case.
MARKER_PATTERN = re.compile(r"<!--\s*rcb-comment:.*?-->", re.DOTALL | re.IGNORECASE)


def strip_markers(text: str) -> str:
    """``text`` without any of rcb's markers, removed until none is left: removing one
    can join the pieces around it into another
    (``<!-- rcb-comme<!-- rcb-comment:x-->nt: rcb -->``)."""
    while True:
        cleaned = MARKER_PATTERN.sub("", text)
        if cleaned == text:
            return cleaned
        text = cleaned


def carries_marker(body: str | None, marker: str) -> bool:
    """Whether a comment's first line is exactly ``marker`` (as :func:`upsert_comment`
    writes it); the marker anywhere else in a comment does not count."""
    first = (body or "").split("\n", 1)[0]
    return first.rstrip("\r") == marker


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


def pull_base_branch(context: GitHubContext, number: int) -> str:
    """The branch pull request ``number`` of the context's repository merges into: what a
    job that names the pull request itself (``pr-number``, on a ``workflow_run`` event)
    compares with.

    Raises:
        RcbError: there is no token, or the API does not give the pull request.
    """
    from github import GithubException

    try:
        pull = github_client(context).get_repo(context.repository).get_pull(number)
    except GithubException as exc:
        raise RcbError(f"pull request #{number}: not readable (API {exc.status})") from None
    return str(pull.base.ref)


def token_author(client: Github) -> str:
    """The login the client's token writes comments as: the authenticated user's (a
    personal token), else ``github-actions[bot]`` (an Actions token, for which GitHub
    refuses ``GET /user``)."""
    from github import GithubException

    try:
        return str(client.get_user().login)
    except GithubException:
        return ACTIONS_BOT


def upsert_comment(
    issue: Issue, key: str, body: str, *, author: str = ACTIONS_BOT
) -> CommentResult:
    """Edit the comment on ``issue`` that carries ``key``'s marker and was written by
    ``author`` (the token's user, :func:`token_author`), or create it.

    The marker is the body's first line, and every other marker is removed from the
    body (:func:`strip_markers`). A comment counts as ``key``'s when its first line is
    exactly the marker and its author is ``author`` (compared without case); any other
    comment is left alone, and one that still cannot be edited (the token is refused)
    is passed over.

    Raises:
        github.GithubException: the API refused to list or create comments.
    """
    from github import GithubException

    marker = comment_marker(key)
    text = clip_markdown(f"{marker}\n{strip_markers(body).lstrip()}")
    for comment in issue.get_comments():
        if not carries_marker(comment.body, marker):
            continue
        login = comment.user.login if comment.user is not None else ""
        if str(login).lower() != author.lower():
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
