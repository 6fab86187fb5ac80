"""The arXiv crawler: fresh papers with code, scored, queued for maintainers.

``rcb crawl`` walks arXiv's listing (the ``arxiv`` package: its 3 s delay and
retries) for papers submitted after the models' knowledge cutoffs, keeps those
with a code link, scores them, and merges them into ``crawler/queue.yaml``;
``rcb task new ARXIV_ID --code URL@COMMIT`` lays out a task folder to finish from a
queue entry and the authors' code.
"""

from crawler._candidates import Collector, category_matcher, merge, task_papers
from crawler._crawl import (
    DEFAULT_CATEGORIES,
    POLITE_DELAY_S,
    CrawlOptions,
    CrawlSummary,
    build_query,
    crawl,
    make_client,
    print_warning,
)
from crawler._cursor import Cursor, cursor_key, default_cursor_path, load_cursor
from crawler._issues import ISSUE_LABEL, IssueTracker, issue_body, issue_title
from crawler._links import CodeLink, find_code_links
from crawler._queue import (
    Candidate,
    Queue,
    QueueLink,
    load_queue,
    parse_arxiv_id,
    render_queue,
    resolve_queue_path,
    write_queue,
)
from crawler._scaffold import (
    AuthorsCode,
    Scaffold,
    license_id,
    open_code,
    scaffold_task,
    task_id_for,
)
from crawler._score import Cutoffs, domain_of, score

__all__ = [
    "DEFAULT_CATEGORIES",
    "ISSUE_LABEL",
    "POLITE_DELAY_S",
    "AuthorsCode",
    "Candidate",
    "CodeLink",
    "Collector",
    "CrawlOptions",
    "CrawlSummary",
    "Cursor",
    "Cutoffs",
    "IssueTracker",
    "Queue",
    "QueueLink",
    "Scaffold",
    "build_query",
    "category_matcher",
    "crawl",
    "cursor_key",
    "default_cursor_path",
    "domain_of",
    "find_code_links",
    "issue_body",
    "issue_title",
    "license_id",
    "load_cursor",
    "load_queue",
    "make_client",
    "merge",
    "open_code",
    "parse_arxiv_id",
    "print_warning",
    "render_queue",
    "resolve_queue_path",
    "scaffold_task",
    "score",
    "task_id_for",
    "task_papers",
    "write_queue",
]
