"""What a workflow run knows about itself, read from the runner's environment variables."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rcb_action.errors import RcbError

DEFAULT_API_URL = "https://api.github.com"


@dataclass(frozen=True)
class GitHubContext:
    """The run's event, repository, API address and token.

    Attributes:
        event_name: ``GITHUB_EVENT_NAME`` (``pull_request``, ``push``, ...); empty off Actions.
        event: the webhook payload from ``GITHUB_EVENT_PATH`` (empty when absent).
        repository: ``owner/name`` from ``GITHUB_REPOSITORY``.
        api_url: ``GITHUB_API_URL`` (GitHub Enterprise, or a local fake in tests).
        token: the token given to rcb (``GITHUB_TOKEN``), if any.
    """

    event_name: str = ""
    event: dict[str, Any] = field(default_factory=dict)
    repository: str = ""
    api_url: str = DEFAULT_API_URL
    server_url: str = "https://github.com"
    token: str | None = None
    run_id: str = ""
    workflow: str = ""
    job: str = ""
    base_ref: str = ""

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> GitHubContext:
        """Read the context from ``env`` (default: the process environment).

        Raises:
            RcbError: ``GITHUB_EVENT_PATH`` names a file that is not JSON.
        """
        env = os.environ if env is None else env
        event: dict[str, Any] = {}
        event_path = env.get("GITHUB_EVENT_PATH")
        if event_path and Path(event_path).is_file():
            try:
                loaded = json.loads(Path(event_path).read_text(encoding="utf-8"))
            except json.JSONDecodeError as exc:
                raise RcbError(f"{event_path}: GITHUB_EVENT_PATH is not JSON ({exc.msg})") from None
            event = loaded if isinstance(loaded, dict) else {}
        return cls(
            event_name=env.get("GITHUB_EVENT_NAME", ""),
            event=event,
            repository=env.get("GITHUB_REPOSITORY", ""),
            api_url=(env.get("GITHUB_API_URL") or DEFAULT_API_URL).rstrip("/"),
            server_url=(env.get("GITHUB_SERVER_URL") or "https://github.com").rstrip("/"),
            token=env.get("GITHUB_TOKEN") or None,
            run_id=env.get("GITHUB_RUN_ID", ""),
            workflow=env.get("GITHUB_WORKFLOW", ""),
            job=env.get("GITHUB_JOB", ""),
            base_ref=env.get("GITHUB_BASE_REF", ""),
        )

    @property
    def pull_number(self) -> int | None:
        """The pull request this run is about, or None (a push, a schedule, ...)."""
        pull = self.event.get("pull_request")
        if isinstance(pull, dict) and isinstance(pull.get("number"), int):
            return int(pull["number"])
        issue = self.event.get("issue")
        if (
            isinstance(issue, dict)
            and "pull_request" in issue
            and isinstance(issue.get("number"), int)
        ):
            return int(issue["number"])
        return None

    @property
    def pull_base_branch(self) -> str:
        """The branch a pull request merges into (``GITHUB_BASE_REF``, else the payload's)."""
        if self.base_ref:
            return self.base_ref
        pull = self.event.get("pull_request")
        if isinstance(pull, dict):
            base = pull.get("base")
            if isinstance(base, dict) and isinstance(base.get("ref"), str):
                return str(base["ref"])
        return ""

    @property
    def run_url(self) -> str:
        """The run's page, or empty off Actions."""
        if not (self.repository and self.run_id):
            return ""
        return f"{self.server_url}/{self.repository}/actions/runs/{self.run_id}"
