"""A small fake of the GitHub REST API on 127.0.0.1, a test double for the network.

It keeps repositories, issues, pull requests, issue comments and workflow artifacts
in memory, answers the calls PyGithub makes for them, and records every request so
tests can assert what was called. As GitHub does, it pages every list (``per_page``,
default 30, at most 100; ``page``; a ``Link`` header naming the next, last, first and
previous pages), and it answers an artifact download with a 302 to another host (a
second listener, ``blob_url``, that refuses a request carrying the API token, as blob
storage does). ``compare/BASE...HEAD`` names the merge base a test set with
``set_merge_base`` (default ``DEFAULT_MERGE_BASE``, the base every pull request names).
It also keeps Git data (refs, trees, commits, annotated tags: ``add_tag``) and releases
with their assets, uploaded to an ``upload_url`` on the same host, for the release steps.
The token is a ``GITHUB_TOKEN`` by default: comments are written by
``github-actions[bot]`` and ``GET /user`` is refused; set ``token_login`` for a
personal token. Use it as a context manager::

    with FakeGitHub() as gh:
        gh.add_repo("octo/rcb")
        client = Github(base_url=gh.url, auth=Auth.Token("t"))
        ...
        assert gh.calls[-1].method == "PATCH"
"""

from __future__ import annotations

import io
import json
import re
import threading
import zipfile
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlencode, urlparse


def _sha(*parts: str) -> str:
    """A Git-like object id: the same content gives the same id."""
    import hashlib

    return hashlib.sha1("\0".join(parts).encode()).hexdigest()


@dataclass
class Call:
    method: str
    path: str
    query: dict[str, list[str]]
    body: Any


@dataclass
class _Raw:
    """A response that is not JSON (an artifact's zip) or that redirects."""

    body: bytes
    headers: dict[str, str] = field(default_factory=dict)


# Comments the fake's token may edit: its own (GitHub refuses to edit anyone else's).
BOT_LOGIN = "github-actions[bot]"
DEFAULT_PER_PAGE = 30
MAX_PER_PAGE = 100
DEFAULT_MERGE_BASE = "1" * 40


@dataclass
class _Repo:
    owner: str
    name: str
    issues: dict[int, dict[str, Any]] = field(default_factory=dict)
    comments: dict[int, dict[str, Any]] = field(default_factory=dict)
    heads: dict[int, dict[str, str]] = field(default_factory=dict)
    artifacts: dict[int, dict[str, Any]] = field(default_factory=dict)
    blobs: dict[int, bytes] = field(default_factory=dict)
    # (base, head) -> the merge base's sha; None: no common ancestor (a 404, as on GitHub).
    merge_bases: dict[tuple[str, str], str | None] = field(default_factory=dict)
    # Git data: refs ("tags/v1", "heads/main") -> sha; commits, trees and annotated tags.
    refs: dict[str, str] = field(default_factory=dict)
    objects: dict[str, dict[str, Any]] = field(default_factory=dict)
    releases: dict[int, dict[str, Any]] = field(default_factory=dict)
    # release id -> its assets, each with the uploaded bytes under "data".
    assets: dict[int, list[dict[str, Any]]] = field(default_factory=dict)


class FakeGitHub:
    """The fake server; ``url`` is its API base (``GITHUB_API_URL``)."""

    def __init__(self) -> None:
        self.repos: dict[str, _Repo] = {}
        self.calls: list[Call] = []
        # A read-only token, as a pull request from a fork gets: every write is refused.
        self.refuse_writes = False
        self._next_id = 1000
        self._lock = threading.Lock()
        # None: the token is an Actions GITHUB_TOKEN (GET /user refused, comments written by
        # github-actions[bot]); a login: a personal token of that user.
        self.token_login: str | None = None
        # Requests that reached the blob host, and whether each carried an Authorization.
        self.blob_calls: list[tuple[str, bool]] = []
        self._next_id = 1000
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        # Artifact downloads redirect here: another host (another port) than the API.
        self._blobs = ThreadingHTTPServer(("127.0.0.1", 0), self._blob_handler())
        self.blob_url = f"http://127.0.0.1:{self._blobs.server_address[1]}"
        # A short poll: shutdown() waits for it, and every test that uses the fake stops one.
        self._threads = [
            threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
            for server in (self._server, self._blobs)
        ]

    # lifecycle
    def __enter__(self) -> FakeGitHub:
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        for server in (self._server, self._blobs):
            server.shutdown()
            server.server_close()

    @property
    def login(self) -> str:
        """Who the token writes as."""
        return self.token_login or BOT_LOGIN

    # setup helpers
    def add_repo(self, full_name: str) -> None:
        owner, name = full_name.split("/")
        self.repos[full_name] = _Repo(owner, name)

    def add_pull(
        self,
        full_name: str,
        number: int,
        title: str = "A pull request",
        *,
        head_sha: str = "0" * 40,
        base_ref: str = "main",
    ) -> None:
        """A pull request is an issue with a ``pull_request`` field, as on GitHub."""
        repo = self.repos[full_name]
        self._issue(repo, number, title, "", [], pull=True)
        repo.heads[number] = {"head_sha": head_sha, "base_ref": base_ref}

    def set_merge_base(self, full_name: str, base: str, head: str, sha: str | None) -> None:
        """What ``compare/{base}...{head}`` names as the merge base; None: no common
        ancestor (GitHub answers 404)."""
        self.repos[full_name].merge_bases[(base, head)] = sha

    def add_tag(self, full_name: str, tag: str, sha: str, *, annotated: bool = False) -> None:
        """A tag at commit ``sha``: a lightweight ref, or one naming an annotated tag object."""
        repo = self.repos[full_name]
        if annotated:
            tag_sha = _sha("tag", tag, sha)
            repo.objects[tag_sha] = {
                "sha": tag_sha,
                "tag": tag,
                "object": {"sha": sha, "type": "commit"},
            }
            repo.refs[f"tags/{tag}"] = tag_sha
        else:
            repo.refs[f"tags/{tag}"] = sha

    def tree_of(self, full_name: str, ref: str) -> dict[str, str]:
        """path -> content of the tree of the commit ``ref`` names (e.g. ``heads/main``)."""
        repo = self.repos[full_name]
        commit = repo.objects[repo.refs[ref]]
        return {e["path"]: e["content"] for e in repo.objects[commit["tree"]["sha"]]["tree"]}

    def add_comment(self, full_name: str, number: int, body: str, *, login: str) -> int:
        """A comment written by someone else (``login``): the fake refuses to edit it."""
        comment = self._comment(self.repos[full_name], number, body)
        comment["user"] = {"login": login, "id": 4, "type": "User"}
        return int(comment["id"])

    def add_artifact(
        self,
        full_name: str,
        name: str,
        files: dict[str, bytes | str],
        *,
        head_branch: str = "main",
        head_sha: str = "2" * 40,
        from_fork: bool = False,
        expired: bool = False,
    ) -> int:
        """A workflow run's artifact (a zip of ``files``) made at commit ``head_sha`` of
        ``head_branch``; newer ones list first."""
        repo = self.repos[full_name]
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as archive:
            for path, data in files.items():
                archive.writestr(path, data)
        artifact_id = self._new_id()
        repo_id = self._repo_id(full_name)
        run_id = self._new_id()
        repo.blobs[artifact_id] = buffer.getvalue()
        repo.artifacts[artifact_id] = {
            "id": artifact_id,
            "node_id": f"A_{artifact_id}",
            "name": name,
            "size_in_bytes": len(buffer.getvalue()),
            "url": f"{self.url}/repos/{full_name}/actions/artifacts/{artifact_id}",
            "archive_download_url": f"{self.url}/repos/{full_name}/actions/artifacts/{artifact_id}/zip",
            "expired": expired,
            "created_at": "2025-06-01T00:00:00Z",
            "expires_at": "2025-09-01T00:00:00Z",
            "updated_at": "2025-06-01T00:00:00Z",
            "workflow_run": {
                "id": run_id,
                "repository_id": repo_id,
                "head_repository_id": repo_id + 1 if from_fork else repo_id,
                "head_branch": head_branch,
                "head_sha": head_sha,
            },
        }
        return artifact_id

    def comments_on(self, full_name: str, number: int) -> list[dict[str, Any]]:
        repo = self.repos[full_name]
        return [c for c in repo.comments.values() if c["issue_number"] == number]

    def issues_of(self, full_name: str) -> list[dict[str, Any]]:
        return [i for i in self.repos[full_name].issues.values() if "pull_request" not in i]

    # model
    def _new_id(self) -> int:
        with self._lock:
            self._next_id += 1
            return self._next_id

    @staticmethod
    def _repo_id(full_name: str) -> int:
        return abs(hash(full_name)) % 10**6

    def _repo_json(self, repo: _Repo) -> dict[str, Any]:
        full = f"{repo.owner}/{repo.name}"
        return {
            "id": self._repo_id(full),
            "name": repo.name,
            "full_name": full,
            "owner": {"login": repo.owner, "id": 1, "type": "Organization"},
            "url": f"{self.url}/repos/{full}",
            "html_url": f"https://github.com/{full}",
            "default_branch": "main",
            "private": False,
        }

    def _issue(
        self, repo: _Repo, number: int, title: str, body: str, labels: list[str], pull: bool = False
    ) -> dict[str, Any]:
        full = f"{repo.owner}/{repo.name}"
        issue: dict[str, Any] = {
            "id": self._new_id(),
            "number": number,
            "title": title,
            "body": body,
            "state": "open",
            "labels": [{"name": label, "id": i} for i, label in enumerate(labels)],
            "user": {"login": "rcb-bot", "id": 2},
            "url": f"{self.url}/repos/{full}/issues/{number}",
            "html_url": f"https://github.com/{full}/issues/{number}",
            "comments_url": f"{self.url}/repos/{full}/issues/{number}/comments",
            "repository_url": f"{self.url}/repos/{full}",
        }
        if pull:
            issue["pull_request"] = {"url": f"{self.url}/repos/{full}/pulls/{number}"}
        repo.issues[number] = issue
        return issue

    def _comment(self, repo: _Repo, number: int, body: str) -> dict[str, Any]:
        full = f"{repo.owner}/{repo.name}"
        comment_id = self._new_id()
        comment = {
            "id": comment_id,
            "body": body,
            "user": {
                "login": self.login,
                "id": 3,
                "type": "Bot" if self.token_login is None else "User",
            },
            "url": f"{self.url}/repos/{full}/issues/comments/{comment_id}",
            "html_url": f"https://github.com/{full}/issues/{number}#issuecomment-{comment_id}",
            "issue_url": f"{self.url}/repos/{full}/issues/{number}",
            "issue_number": number,
        }
        repo.comments[comment_id] = comment
        return comment

    @staticmethod
    def _public(comment: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in comment.items() if k != "issue_number"}

    def _paged(
        self, path: str, query: dict[str, list[str]], items: list[Any], key: str | None = None
    ) -> tuple[int, Any]:
        """One page of ``items`` (``per_page``, ``page``) with GitHub's ``Link`` header;
        ``key``: the list sits in an object under that key, next to ``total_count``."""
        try:
            per_page = int(query.get("per_page", [str(DEFAULT_PER_PAGE)])[0])
            page = int(query.get("page", ["1"])[0])
        except ValueError:
            return 400, {"message": "Bad pagination"}
        per_page = min(max(per_page, 1), MAX_PER_PAGE)
        page = max(page, 1)
        last = max(1, -(-len(items) // per_page))
        chunk = items[(page - 1) * per_page : page * per_page]
        payload = chunk if key is None else {"total_count": len(items), key: chunk}
        others = {k: v[0] for k, v in query.items() if k not in ("page", "per_page")}

        def link(number: int, rel: str) -> str:
            params = urlencode({**others, "per_page": per_page, "page": number})
            return f'<{self.url}{path}?{params}>; rel="{rel}"'

        links = []
        if page < last:
            links += [link(page + 1, "next"), link(last, "last")]
        if page > 1:
            links += [link(1, "first"), link(page - 1, "prev")]
        headers = {"Content-Type": "application/json"}
        if links:
            headers["Link"] = ", ".join(links)
        return 200, _Raw(json.dumps(payload).encode(), headers)

    def _route(
        self, method: str, path: str, query: dict[str, list[str]], body: Any
    ) -> tuple[int, Any]:
        m = re.fullmatch(r"/repos/([^/]+)/([^/]+)(/.*)?", path)
        if not m:
            if path == "/user" and method == "GET":
                if self.token_login is None:  # an Actions token has no user
                    return 403, {"message": "Resource not accessible by integration"}
                return 200, {"login": self.token_login, "id": 5, "type": "User"}
            return 404, {"message": "Not Found"}
        repo = self.repos.get(f"{m[1]}/{m[2]}")
        if repo is None:
            return 404, {"message": "Not Found"}
        if self.refuse_writes and method in ("POST", "PATCH", "PUT", "DELETE"):
            return 403, {"message": "Resource not accessible by integration"}
        rest = m[3] or ""
        if rest == "" and method == "GET":
            return 200, self._repo_json(repo)
        if rest.startswith(("/git/", "/releases")):
            return self._git_route(repo, method, rest, query, body)
        if rest == "/actions/artifacts" and method == "GET":
            wanted = query.get("name", [None])[0]
            found = [
                a
                for _, a in sorted(repo.artifacts.items(), reverse=True)
                if wanted is None or a["name"] == wanted
            ]
            return self._paged(path, query, found, "artifacts")
        am = re.fullmatch(r"/actions/artifacts/(\d+)/zip", rest)
        if am and method == "GET":
            if int(am[1]) not in repo.blobs:
                return 404, {"message": "Not Found"}
            location = f"{self.blob_url}/_blobs/{repo.owner}/{repo.name}/{am[1]}?sig=fake"
            return 302, _Raw(b"", {"Location": location})
        if rest == "/issues" and method == "GET":
            state = query.get("state", ["open"])[0]
            wanted = set(query.get("labels", [""])[0].split(",")) - {""}
            found = [
                i
                for i in sorted(repo.issues.values(), key=lambda i: -i["number"])
                if (state == "all" or i["state"] == state)
                and wanted <= {lab["name"] for lab in i["labels"]}
            ]
            return self._paged(path, query, found)
        if rest == "/issues" and method == "POST":
            number = max(repo.issues, default=0) + 1
            return 201, self._issue(
                repo, number, body.get("title", ""), body.get("body", ""), body.get("labels", [])
            )
        comp = re.fullmatch(r"/compare/(.+?)\.\.\.(.+)", rest)
        if comp and method == "GET":
            pair = (unquote(comp[1]), unquote(comp[2]))
            merge_base = repo.merge_bases.get(pair, DEFAULT_MERGE_BASE)
            if merge_base is None:
                return 404, {"message": f"No common ancestor between {pair[0]} and {pair[1]}."}
            full = f"{repo.owner}/{repo.name}"
            return 200, {
                "url": f"{self.url}/repos/{full}/compare/{comp[1]}...{comp[2]}",
                "status": "diverged",
                "merge_base_commit": {
                    "sha": merge_base,
                    "url": f"{self.url}/repos/{full}/commits/{merge_base}",
                },
                "commits": [],
                "files": [],
            }
        im = re.fullmatch(r"/(issues|pulls)/(\d+)", rest)
        if im and method == "GET":
            issue = repo.issues.get(int(im[2]))
            if issue is None or (im[1] == "pulls" and "pull_request" not in issue):
                return 404, {"message": "Not Found"}
            if im[1] == "pulls":
                head = repo.heads.get(int(im[2]), {"head_sha": "0" * 40, "base_ref": "main"})
                return 200, {
                    **issue,
                    "url": issue["pull_request"]["url"],
                    "issue_url": issue["url"],
                    "head": {"sha": head["head_sha"], "ref": "feature"},
                    "base": {"sha": DEFAULT_MERGE_BASE, "ref": head["base_ref"]},
                }
            return 200, issue
        cm = re.fullmatch(r"/issues/(\d+)/comments", rest)
        if cm:
            number = int(cm[1])
            if number not in repo.issues:
                return 404, {"message": "Not Found"}
            if method == "GET":
                found = [
                    self._public(c) for c in repo.comments.values() if c["issue_number"] == number
                ]
                return self._paged(path, query, found)
            if method == "POST":
                return 201, self._public(self._comment(repo, number, body.get("body", "")))
        em = re.fullmatch(r"/issues/comments/(\d+)", rest)
        if em:
            comment = repo.comments.get(int(em[1]))
            if comment is None:
                return 404, {"message": "Not Found"}
            if method == "PATCH":
                if comment["user"]["login"] != self.login:
                    return 403, {"message": "Resource not accessible by integration"}
                comment["body"] = body.get("body", comment["body"])
                return 200, self._public(comment)
            if method == "GET":
                return 200, self._public(comment)
            if method == "DELETE":
                del repo.comments[int(em[1])]
                return 204, None
        return 404, {"message": "Not Found"}

    def _ref_json(self, repo: _Repo, ref: str) -> dict[str, Any]:
        sha = repo.refs[ref]
        kind = "tag" if repo.objects.get(sha, {}).get("tag") else "commit"
        return {
            "ref": f"refs/{ref}",
            "url": f"{self.url}/repos/{repo.owner}/{repo.name}/git/refs/{ref}",
            "object": {"sha": sha, "type": kind},
        }

    def _release_json(self, repo: _Repo, release: dict[str, Any]) -> dict[str, Any]:
        base = f"{self.url}/repos/{repo.owner}/{repo.name}/releases/{release['id']}"
        upload = f"{self.url}/_uploads/repos/{repo.owner}/{repo.name}/releases/{release['id']}"
        return {
            **release,
            "url": base,
            "assets_url": f"{base}/assets",
            "upload_url": f"{upload}/assets{{?name,label}}",
            "assets": [self._asset_json(a) for a in repo.assets.get(release["id"], [])],
        }

    @staticmethod
    def _asset_json(asset: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in asset.items() if k != "data"}

    def _git_route(
        self, repo: _Repo, method: str, rest: str, query: dict[str, list[str]], body: Any
    ) -> tuple[int, Any]:
        """Refs, trees, commits, annotated tags, releases and their assets."""
        full = f"{repo.owner}/{repo.name}"
        ref = re.fullmatch(r"/git/refs?/(.+)", rest)
        if ref and method == "GET":
            name = unquote(ref[1])
            if name not in repo.refs:
                return 404, {"message": "Not Found"}
            return 200, self._ref_json(repo, name)
        if rest == "/git/refs" and method == "POST":
            name = body["ref"].removeprefix("refs/")
            if name in repo.refs:
                return 422, {"message": "Reference already exists"}
            repo.refs[name] = body["sha"]
            return 201, self._ref_json(repo, name)
        if ref and method == "PATCH":
            name = unquote(ref[1])
            if name not in repo.refs:
                return 422, {"message": "Reference does not exist"}
            repo.refs[name] = body["sha"]
            return 200, self._ref_json(repo, name)
        if rest == "/git/trees" and method == "POST":
            entries = sorted(body["tree"], key=lambda e: e["path"])
            sha = _sha("tree", json.dumps(entries, sort_keys=True))
            repo.objects[sha] = {"sha": sha, "tree": entries}
            return 201, {
                "sha": sha,
                "url": f"{self.url}/repos/{full}/git/trees/{sha}",
                "tree": [{k: v for k, v in e.items() if k != "content"} for e in entries],
            }
        if rest == "/git/commits" and method == "POST":
            sha = _sha("commit", body["tree"], *body.get("parents", []), body["message"])
            repo.objects[sha] = {
                "sha": sha,
                "url": f"{self.url}/repos/{full}/git/commits/{sha}",
                "message": body["message"],
                "tree": {
                    "sha": body["tree"],
                    "url": f"{self.url}/repos/{full}/git/trees/{body['tree']}",
                },
                "parents": [{"sha": p} for p in body.get("parents", [])],
            }
            return 201, repo.objects[sha]
        obj = re.fullmatch(r"/git/(commits|tags)/([0-9a-f]{40})", rest)
        if obj and method == "GET":
            found = repo.objects.get(obj[2])
            if found is None or ("tag" in found) != (obj[1] == "tags"):
                return 404, {"message": "Not Found"}
            return 200, found
        tagged = re.fullmatch(r"/releases/tags/(.+)", rest)
        if tagged and method == "GET":
            for release in repo.releases.values():
                if release["tag_name"] == unquote(tagged[1]):
                    return 200, self._release_json(repo, release)
            return 404, {"message": "Not Found"}
        if rest == "/releases" and method == "POST":
            if f"tags/{body['tag_name']}" not in repo.refs:
                return 422, {"message": "tag_name is not a tag of this repository"}
            if any(r["tag_name"] == body["tag_name"] for r in repo.releases.values()):
                return 422, {"message": "Release already exists"}
            release_id = self._new_id()
            repo.releases[release_id] = {
                "id": release_id,
                "tag_name": body["tag_name"],
                "name": body.get("name", ""),
                "body": body.get("body", ""),
                "draft": body.get("draft", False),
                "prerelease": body.get("prerelease", False),
            }
            return 201, self._release_json(repo, repo.releases[release_id])
        one = re.fullmatch(r"/releases/(\d+)(/assets)?", rest)
        if one and int(one[1]) in repo.releases:
            release = repo.releases[int(one[1])]
            if one[2] and method == "GET":
                assets = [self._asset_json(a) for a in repo.assets.get(release["id"], [])]
                return self._paged(f"/repos/{full}{rest}", query, assets)
            if method == "PATCH":
                release.update({k: v for k, v in body.items() if k in ("name", "body", "tag_name")})
                return 200, self._release_json(repo, release)
            if method == "GET":
                return 200, self._release_json(repo, release)
        return 404, {"message": "Not Found"}

    def _upload(self, path: str, query: dict[str, list[str]], data: bytes) -> tuple[int, Any]:
        """A release asset's bytes, posted to the release's ``upload_url``."""
        um = re.fullmatch(r"/_uploads/repos/([^/]+)/([^/]+)/releases/(\d+)/assets", path)
        repo = self.repos.get(f"{um[1]}/{um[2]}") if um else None
        if um is None or repo is None or int(um[3]) not in repo.releases:
            return 404, {"message": "Not Found"}
        if self.refuse_writes:
            return 403, {"message": "Resource not accessible by integration"}
        name = query.get("name", [""])[0]
        assets = repo.assets.setdefault(int(um[3]), [])
        if any(a["name"] == name for a in assets):
            return 422, {"message": "already_exists"}
        asset = {
            "id": self._new_id(),
            "name": name,
            "size": len(data),
            "state": "uploaded",
            "data": data,
        }
        assets.append(asset)
        return 201, self._asset_json(asset)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:  # quiet
                return None

            def _serve(self) -> None:
                parsed = urlparse(self.path)
                path = parsed.path
                if path.startswith("/api/v3"):
                    path = path[len("/api/v3") :]
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                query = parse_qs(parsed.query)
                uploading = path.startswith("/_uploads/")
                body = None if uploading or not raw else json.loads(raw)
                with fake._lock:
                    fake.calls.append(Call(self.command, path, query, body))
                if uploading:
                    status, payload = fake._upload(path, query, raw)
                else:
                    status, payload = fake._route(self.command, path, query, body)
                headers = {"Content-Type": "application/json"}
                if isinstance(payload, _Raw):
                    data = payload.body
                    headers.update(payload.headers)
                else:
                    data = b"" if payload is None else json.dumps(payload).encode()
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PATCH = do_DELETE = do_PUT = _serve

        return Handler

    def _blob_handler(self) -> type[BaseHTTPRequestHandler]:
        """Blob storage: serves an artifact's zip, and refuses a request that carries
        the API's token (it must not leave the API host)."""
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:  # quiet
                return None

            def do_GET(self) -> None:
                path = urlparse(self.path).path
                authorized = self.headers.get("Authorization") is not None
                with fake._lock:
                    fake.blob_calls.append((path, authorized))
                bm = re.fullmatch(r"/_blobs/([^/]+)/([^/]+)/(\d+)", path)
                repo = fake.repos.get(f"{bm[1]}/{bm[2]}") if bm else None
                blob = repo.blobs.get(int(bm[3])) if bm and repo else None
                if authorized:
                    status, data = 400, b"an Authorization header is not allowed here"
                elif blob is None:
                    status, data = 404, b"not found"
                else:
                    status, data = 200, blob
                self.send_response(status)
                self.send_header(
                    "Content-Type", "application/zip" if status == 200 else "text/plain"
                )
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler
