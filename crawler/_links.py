"""Code links in an abstract or an arXiv comment: repositories, model hubs, archives, project pages."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit

LinkKind = Literal["repository", "huggingface", "archive", "project page"]

# Points a candidate earns for its best link: runnable code beats a page about it.
LINK_POINTS: dict[str, int] = {"repository": 3, "huggingface": 2, "archive": 2, "project page": 1}

_REPO_HOSTS = {"github.com", "gitlab.com", "bitbucket.org", "codeberg.org"}
_ARCHIVE_HOSTS = {"zenodo.org", "figshare.com", "archive.softwareheritage.org"}
_PAGE_SUFFIXES = (".github.io", ".gitlab.io", ".readthedocs.io", ".pages.dev")
# Links that never point at a paper's own code, whatever the text around them says.
_NOT_CODE_HOSTS = {
    "arxiv.org",
    "export.arxiv.org",
    "creativecommons.org",
    "www.youtube.com",
    "youtube.com",
    "youtu.be",
    "twitter.com",
    "x.com",
}
# GitHub paths that are site pages, not accounts.
_GITHUB_RESERVED = {
    "about",
    "features",
    "marketplace",
    "orgs",
    "pricing",
    "settings",
    "sponsors",
    "topics",
}
# Words just before a link that say it is the paper's page (for hosts we cannot tell apart).
_PAGE_HINT = re.compile(
    r"(project|code|implementation|website|web ?page|homepage|demo|available|released|github)\W*"
    r"(?:page|site|at|on|in|here|is|are)?\W*$",
    re.IGNORECASE,
)
_URL = re.compile(
    r"(?:https?://|(?<![\w./@-])(?=(?:www\.)?(?:github\.com|gitlab\.com|huggingface\.co|"
    r"bitbucket\.org|codeberg\.org|zenodo\.org)/))[^\s<>\"'`{}|\\^]+",
    re.IGNORECASE,
)
_TRAILING = ".,;:!?'\"*"


@dataclass(frozen=True)
class CodeLink:
    """A link found in a paper's metadata, normalised, with what it points at."""

    kind: LinkKind
    url: str

    @property
    def points(self) -> int:
        return LINK_POINTS[self.kind]


def _trim(raw: str) -> str:
    url = raw
    while url:
        last = url[-1]
        unbalanced = last in ")]" and url.count(last) > url.count("(" if last == ")" else "[")
        if last not in _TRAILING and not unbalanced:
            break
        url = url[:-1]
    return url


def _classify(url: str, before: str) -> CodeLink | None:
    if "://" not in url:
        url = "https://" + url
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    if not host or "." not in host:
        return None
    if host.startswith("www."):
        host = host[4:]
    segments = [s for s in parts.path.split("/") if s]
    if host in _REPO_HOSTS:
        if not segments or segments[0].lower() in _GITHUB_RESERVED:
            return None
        if len(segments) == 1:  # an account or organisation, not a repository
            return CodeLink("project page", f"https://{host}/{segments[0]}")
        if host == "gitlab.com":
            # GitLab groups nest; the repository path ends before GitLab's "/-/" routes.
            if "-" in segments:
                segments = segments[: segments.index("-")]
            repo = "/".join(segments)
        else:
            repo = "/".join(segments[:2])
        repo = repo.removesuffix(".git")
        return CodeLink("repository", f"https://{host}/{repo}")
    if host == "anonymous.4open.science" and len(segments) >= 2 and segments[0] == "r":
        return CodeLink("repository", f"https://{host}/r/{segments[1]}")
    if host in ("huggingface.co", "hf.co"):
        if not segments:
            return None
        keep = 3 if segments[0] in ("spaces", "datasets", "models") else 2
        return CodeLink("huggingface", "https://huggingface.co/" + "/".join(segments[:keep]))
    if host in _ARCHIVE_HOSTS or (host == "doi.org" and "zenodo" in parts.path.lower()):
        return CodeLink("archive", f"https://{host}{parts.path.rstrip('/')}")
    if host.endswith(_PAGE_SUFFIXES) or host == "sites.google.com":
        return CodeLink("project page", f"https://{host}{parts.path.rstrip('/')}")
    if host in _NOT_CODE_HOSTS or host == "doi.org":
        return None
    if _PAGE_HINT.search(before):
        return CodeLink("project page", f"{parts.scheme}://{host}{parts.path.rstrip('/')}")
    return None


def find_code_links(*texts: str | None) -> list[CodeLink]:
    """Code links in ``texts`` (an abstract, a comment), in order of appearance, each once.

    GitHub, GitLab, Bitbucket, Codeberg and anonymous.4open.science repositories;
    Hugging Face models, datasets and spaces; Zenodo, figshare and Software Heritage
    archives; project pages (``*.github.io``, Google Sites, or any link the text
    calls a project page, code or website). Other links (DOIs, arXiv, licences)
    are not code.
    """
    found: list[CodeLink] = []
    seen: set[str] = set()
    for text in texts:
        # Most abstracts hold no link at all: skip the pattern search for them.
        if not text or ("://" not in text and ".co" not in text and ".org/" not in text):
            continue
        for match in _URL.finditer(text):
            url = _trim(match.group(0))
            link = _classify(url, text[max(0, match.start() - 40) : match.start()])
            if link is None:
                continue
            key = link.url.lower()
            if key not in seen:
                seen.add(key)
                found.append(link)
    return found


def best_link(links: list[CodeLink]) -> CodeLink | None:
    """The link worth the most points (the first of equals)."""
    return max(links, key=lambda link: link.points, default=None)
