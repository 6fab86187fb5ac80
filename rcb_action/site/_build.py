"""Render the static site: jinja2 templates from ``site/`` into a folder of plain files."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape
from markupsafe import Markup

from rcb_action import __version__
from rcb_action.errors import RcbError
from rcb_action.models import load_registry
from rcb_action.site._inputs import SiteInputs, load_results
from rcb_action.site._pages import SiteData, build_site_data
from rcb_action.site._paths import site_dir
from rcb_action.site._reproduction import DIMENSIONS, STAGES
from rcb_action.tasks import load_tasks, resolve_tasks_dir

BUILD_FILE = "build.json"
_GENERATOR = "rcb site build"


@dataclass(frozen=True)
class SiteBuild:
    """What a build wrote."""

    out: Path
    files: list[str]
    bytes: int
    fingerprint: str
    built_at: dt.datetime | None
    records: int


def fmt_number(value: float | None, digits: int = 1) -> str:
    """``value`` to ``digits`` decimals, halves rounded up as the browser's ``toFixed``
    does (so server-rendered and browser-rendered numbers read the same); "—" for None."""
    if value is None:
        return "—"
    quantum = Decimal(1).scaleb(-digits)
    return str(Decimal(value).quantize(quantum, rounding=ROUND_HALF_UP))


def fmt_money(value: float) -> str:
    if value == 0:
        return "$0"
    if value < 0.01:
        return "<$0.01"
    return f"${fmt_number(value, 2)}"


def fmt_count(value: int) -> str:
    return f"{value:,}"


def plural(count: int, word: str) -> str:
    """``1 snippet``, ``2 snippets`` (the same rule as ``site.js``)."""
    return f"{count:,} {word}{'' if count == 1 else 's'}"


def web_url(url: str | None) -> str | None:
    """``url`` when it is an http(s) address, else None (never a ``javascript:`` link)."""
    return url if url and url.startswith(("https://", "http://")) else None


def json_script(data: Any) -> Markup:
    """JSON safe inside a ``<script type="application/json">`` element."""
    text = json.dumps(data, ensure_ascii=True, separators=(",", ":"), sort_keys=False)
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return Markup(text)


def _environment(templates: Path) -> Environment:
    env = Environment(
        loader=FileSystemLoader(templates),
        autoescape=select_autoescape(["html"]),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(
        num=fmt_number,
        money=fmt_money,
        count=fmt_count,
        json_script=json_script,
        web_url=web_url,
        plural=plural,
    )
    return env


def _prepare_out(out: Path) -> Path:
    """A fresh staging folder beside ``out``; ``out`` itself must be absent, empty or an
    earlier site build (never some other folder that a typo would wipe)."""
    if out.exists():
        if not out.is_dir():
            raise RcbError(f"--out {out}: is a file (give a folder for the site)")
        if any(out.iterdir()) and not _is_site(out):
            raise RcbError(
                f"--out {out}: folder is not empty and holds no earlier site build "
                "(choose a new or empty folder)"
            )
    staging = out.parent / f".{out.name}.building"
    try:
        if staging.exists():
            shutil.rmtree(staging)
        staging.mkdir(parents=True)
    except OSError as exc:
        raise RcbError(f"--out {out}: cannot write here ({exc.strerror})") from None
    return staging


def _is_site(folder: Path) -> bool:
    try:
        return json.loads((folder / BUILD_FILE).read_text())["generator"] == _GENERATOR
    except (OSError, ValueError, KeyError, TypeError):
        return False


def render_site(data: SiteData, inputs: SiteInputs, out: Path) -> list[str]:
    """Write every page and asset of ``data`` into the folder ``out``; returns the
    files written (relative, sorted). The same inputs give the same bytes."""
    root = site_dir()
    env = _environment(root / "templates")
    built_at = inputs.built_at
    build = {
        "generator": _GENERATOR,
        "rcb_version": __version__,
        "fingerprint": inputs.fingerprint,
        "built_at": built_at.strftime("%Y-%m-%dT%H:%M:%SZ") if built_at else None,
        "built_at_text": built_at.strftime("%Y-%m-%d %H:%M UTC") if built_at else "unknown time",
        "records": len(inputs.records),
        "reproduction_runs": len(inputs.reproduction),
        "models": len(data.models),
        "tasks": len(data.tasks),
    }
    common = {
        "site": data,
        "build": build,
        "dimensions": DIMENSIONS,
        "stages": STAGES,
    }
    pages: list[tuple[str, str, dict[str, Any]]] = [
        ("index.html", "index.html", {"page": "leaderboard"}),
        ("tasks.html", "tasks.html", {"page": "tasks"}),
        ("ablation.html", "ablation.html", {"page": "ablation"}),
        ("reproduction.html", "reproduction.html", {"page": "reproduction"}),
        ("methodology.html", "methodology.html", {"page": "methodology"}),
    ]
    pages += [
        (f"tasks/{t.slug}.html", "task.html", {"page": "tasks", "task": t}) for t in data.tasks
    ]
    pages += [
        (f"models/{m.slug}.html", "model.html", {"page": "leaderboard", "model": m})
        for m in data.models
    ]
    written: list[str] = []
    for rel, template, context in pages:
        html = env.get_template(template).render(
            **common, **context, root="../" * rel.count("/"), path=rel
        )
        target = out / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(html, encoding="utf-8", newline="\n")
        written.append(rel)
    for asset in sorted((root / "static").iterdir()):
        if asset.is_file():
            (out / "assets").mkdir(exist_ok=True)
            shutil.copyfile(asset, out / "assets" / asset.name)
            written.append(f"assets/{asset.name}")
    (out / ".nojekyll").write_bytes(b"")  # GitHub Pages: serve the files as they are
    meta = {k: v for k, v in build.items() if k != "built_at_text"}
    (out / BUILD_FILE).write_text(
        json.dumps(meta, indent=2, sort_keys=True) + "\n", encoding="utf-8"
    )
    written += [".nojekyll", BUILD_FILE]
    return sorted(written)


def build_site(
    result_dirs: Sequence[Path],
    out: Path,
    *,
    tasks_dir: Path | None = None,
    registry_files: Sequence[Path] = (),
) -> SiteBuild:
    """Build the leaderboard site from results folders into ``out``.

    Task metadata comes from ``tasks_dir`` (default: as ``rcb evaluate`` finds it);
    tasks known only from the results get what the records say. The folder is built
    beside ``out`` and then replaces it.

    Raises:
        RcbError: a results folder, the tasks folder, a registry or the site templates
            are missing or malformed, or ``out`` is a folder that is not a site build.
    """
    out = Path(out).absolute()  # so that the staging folder lands beside it, even for "."
    inputs = load_results(result_dirs)
    folder = resolve_tasks_dir(tasks_dir)
    tasks = load_tasks(folder) if tasks_dir is not None or folder.is_dir() else []
    registry = load_registry(registry_files)
    data = build_site_data(inputs.records, tasks, registry, inputs.reproduction, inputs.gold)
    site_dir()  # fail before touching --out when the templates are missing
    staging = _prepare_out(out)
    try:
        files = render_site(data, inputs, staging)
        if out.exists():
            shutil.rmtree(out)
        os.replace(staging, out)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    size = sum((out / f).stat().st_size for f in files)
    return SiteBuild(out, files, size, inputs.fingerprint, inputs.built_at, len(inputs.records))
