"""crawl.yml's writing jobs, run locally: the issues job opens one triage issue per new
candidate from the queue file the read-only crawl handed on (through the fake GitHub),
fetching nothing from arXiv; a second run opens none."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml
from conftest import ROOT
from fake_github import FakeGitHub

from crawler import Candidate, QueueLink, render_queue

WORKFLOW = ROOT / ".github" / "workflows" / "crawl.yml"
REPO = "octo/rcb"


def step(job: str, name: str) -> dict[str, Any]:
    spec = yaml.safe_load(WORKFLOW.read_text())
    return next(s for s in spec["jobs"][job]["steps"] if s.get("name") == name)


def candidate(arxiv: str, status: str = "new") -> Candidate:
    return Candidate(
        arxiv=arxiv,
        version=1,
        title=f"Paper {arxiv}",
        published=dt.date(2025, 7, 1),
        updated=dt.date(2025, 7, 1),
        primary_category="cs.LG",
        categories=["cs.LG"],
        domain="ml",
        score=5,
        reasons=["code: repository https://github.com/a/b (+3)"],
        code_links=[QueueLink(kind="repository", url="https://github.com/a/b")],
        status=status,  # type: ignore[arg-type]
    )


def test_the_issues_job_opens_issues_from_the_queue_file_only(tmp_path):
    queue = tmp_path / "crawl-queue" / "queue.yaml"
    queue.parent.mkdir()
    queue.write_text(
        render_queue([candidate("2507.99901"), candidate("2507.99902", status="rejected")])
    )
    spec = step("issues", "Open the triage issues")
    assert set(spec["env"]) == {"GITHUB_TOKEN", "QUEUE"}
    with FakeGitHub() as gh:
        gh.add_repo(REPO)
        env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
        env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
        env.update(
            QUEUE=str(queue),
            GITHUB_TOKEN="t",
            GITHUB_REPOSITORY=REPO,
            GITHUB_API_URL=gh.url,
            # Nothing may reach arXiv from here: any attempt fails fast.
            HTTPS_PROXY="http://127.0.0.1:9",
            HTTP_PROXY="http://127.0.0.1:9",
            NO_PROXY="127.0.0.1",
        )
        for expected in (1, 0):
            proc = subprocess.run(
                ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", spec["run"]],
                env=env,
                cwd=tmp_path,
                capture_output=True,
                text=True,
                timeout=120,
            )
            assert proc.returncode == 0, proc.stdout + proc.stderr
            assert f"rcb: {expected} issue(s) opened" in proc.stdout
        titles = [issue["title"] for issue in gh.issues_of(REPO)]
    assert titles == ["Candidate task: Paper 2507.99901 (arXiv 2507.99901)"]
