"""The paper a prompt carries: the paper's own LaTeX, pinned to an arXiv version and
cached, or a full text the task vendors under an open licence; and the task's notes.

Data flows ``tasks -> papers -> prompts``: a prompt never reads the network itself
unless it is asked for a paper that is not cached, and never substitutes another text.
"""

from rcb_action.papers._arxiv import ARXIV_URL, EprintClient, FetchError, base_url, user_agent
from rcb_action.papers._latex import (
    CLEANER_VERSION,
    EprintError,
    NoSource,
    clean_latex,
    eprint_text,
    find_main,
    flatten_files,
    strip_comments,
    unpack_eprint,
)
from rcb_action.papers._resolve import (
    NOTES_FILE,
    NoLatexSource,
    Paper,
    PaperUnavailable,
    cached_paper,
    fetch_paper,
    notes_for,
    paper_for,
    papers_dir,
    pinned_name,
    vendored_paper,
)

__all__ = [
    "ARXIV_URL",
    "CLEANER_VERSION",
    "NOTES_FILE",
    "EprintClient",
    "EprintError",
    "FetchError",
    "NoLatexSource",
    "NoSource",
    "Paper",
    "PaperUnavailable",
    "base_url",
    "cached_paper",
    "clean_latex",
    "eprint_text",
    "fetch_paper",
    "find_main",
    "flatten_files",
    "notes_for",
    "paper_for",
    "papers_dir",
    "pinned_name",
    "strip_comments",
    "unpack_eprint",
    "user_agent",
    "vendored_paper",
]
