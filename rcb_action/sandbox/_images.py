"""Environment images for the Docker backend: ``rcb-env:<name>-<hash>``.

An image holds a venv at ``/opt/rcb-venv`` with the environment's requirements,
built on ``$RCB_BASE_IMAGE`` (default ``python:3.11-slim``). The hash covers the
requirements and the base image's id, so a changed base or requirement builds a
new image and an unchanged one is reused.

pip settings reach the build so proxied and air-gapped runners work: the index
URL and extra index URLs (http and https ones), a CA bundle (copied in and given
to pip), and wheel folders (``find-links``; the wheels the requirements name are
copied into the build context). They come from ``RCB_PIP_INDEX_URL``,
``RCB_PIP_EXTRA_INDEX_URL``, ``RCB_PIP_CERT`` and ``RCB_PIP_FIND_LINKS`` when
set, else from pip's own configuration on this machine.

A task's requirements come from a pull request, so the build runs no package
code: the requirements are pinned index names, checked and written in canonical
form (see :func:`rcb_action.sandbox._envs.requirements_of`), and pip installs
wheels only (``--only-binary=:all:``; a package with only a source distribution
fails the build, since building one runs its code). The build has the network
for pip alone; it gets no build argument and no variable of this machine (the
Dockerfile holds the pip settings above and nothing else), and it writes
nothing of this machine but the image.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import tarfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rcb_action.errors import RcbError
from rcb_action.paths import cache_dir
from rcb_action.sandbox._envs import WHEELS_ONLY, EnvironmentBuildError, env_key, requirements_of

if TYPE_CHECKING:
    from rcb_action.tasks import Task

DEFAULT_BASE_IMAGE = "python:3.11-slim"
VENV = "/opt/rcb-venv"


def base_image() -> str:
    return os.environ.get("RCB_BASE_IMAGE") or DEFAULT_BASE_IMAGE


@dataclass
class PipSettings:
    """What pip needs to reach packages from inside a build."""

    index_url: str | None = None
    extra_index_urls: list[str] = field(default_factory=list)
    cert: Path | None = None
    find_links: list[Path] = field(default_factory=list)


def _pip_config() -> dict[str, str]:
    try:
        out = subprocess.run(
            [sys.executable, "-m", "pip", "config", "list"],
            capture_output=True,
            text=True,
            timeout=60,
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        return {}
    values: dict[str, str] = {}
    for line in out.splitlines():
        key, _, value = line.partition("=")
        values[key.split(".")[-1].strip()] = value.strip().strip("'\"")
    return values


def pip_settings() -> PipSettings:
    """pip settings from ``RCB_PIP_*``, then ``PIP_*``, then pip's configuration."""
    config = _pip_config()

    def pick(name: str) -> str | None:
        return (
            os.environ.get(f"RCB_PIP_{name.upper().replace('-', '_')}")
            or os.environ.get(f"PIP_{name.upper().replace('-', '_')}")
            or config.get(name)
        )

    index = pick("index-url")
    extras = [
        u for u in (pick("extra-index-url") or "").split() if u.startswith(("http://", "https://"))
    ]
    cert = pick("cert")
    links = [
        Path(p)
        for p in (pick("find-links") or "").split()
        if p and not p.startswith(("http://", "https://"))
    ]
    return PipSettings(
        index_url=index if index and index.startswith(("http://", "https://")) else None,
        extra_index_urls=extras,
        cert=Path(cert) if cert and Path(cert).is_file() else None,
        find_links=[p for p in links if p.is_dir()],
    )


def _wanted_wheels(requirements: str, folders: list[Path]) -> list[Path]:
    names = set()
    for line in requirements.splitlines():
        match = re.match(r"\s*([A-Za-z0-9_.-]+)", line)
        if match and not line.strip().startswith("#"):
            names.add(re.sub(r"[-_.]+", "_", match[1]).lower())
    wheels = []
    for folder in folders:
        for wheel in sorted(folder.glob("*.whl")):
            if re.sub(r"[-_.]+", "_", wheel.name.split("-")[0]).lower() in names:
                wheels.append(wheel)
    return wheels


def _context(requirements: str, base: str, settings: PipSettings) -> tuple[bytes, dict[str, str]]:
    """A tar build context and the build args (none: nothing of this machine's
    environment enters a build)."""
    files: dict[str, bytes] = {"requirements.txt": requirements.encode()}
    pip_args = [
        "--no-input",
        "--disable-pip-version-check",
        "--only-binary=:all:",
        "--no-cache-dir",
    ]
    if settings.cert:
        files["rcb-ca.crt"] = settings.cert.read_bytes()
        pip_args += ["--cert", "/tmp/rcb-build/rcb-ca.crt"]
    if settings.index_url:
        pip_args += ["--index-url", settings.index_url]
    for url in settings.extra_index_urls:
        pip_args += ["--extra-index-url", url]
    wheels = _wanted_wheels(requirements, settings.find_links)
    for wheel in wheels:
        files[f"wheels/{wheel.name}"] = wheel.read_bytes()
    if wheels:
        pip_args += ["--find-links", "/tmp/rcb-build/wheels"]
    dockerfile = f"""\
FROM {base}
COPY . /tmp/rcb-build
RUN python3 -m venv {VENV} \\
 && {VENV}/bin/pip install {" ".join(pip_args)} -r /tmp/rcb-build/requirements.txt \\
 && rm -rf /tmp/rcb-build /root/.cache
ENV PATH={VENV}/bin:$PATH PYTHONDONTWRITEBYTECODE=1
"""
    files["Dockerfile"] = dockerfile.encode()
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, data in sorted(files.items()):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue(), {}


def base_image_id(client: Any) -> str:
    """The id of ``$RCB_BASE_IMAGE`` (default ``python:3.11-slim``), pulled if missing.

    Raises:
        RcbError: the base image is not here and cannot be pulled.
    """
    import docker.errors

    base = base_image()
    try:
        return str(client.images.get(base).id)
    except docker.errors.ImageNotFound:
        try:
            return str(client.images.pull(base).id)
        except docker.errors.APIError:
            raise RcbError(
                f"base image {base} is not here and cannot be pulled; build one with "
                "`rcb sandbox build-base` and set RCB_BASE_IMAGE=rcb-base:bookworm"
            ) from None


def image_tag(env_dir: Path, base_id: str) -> str:
    return f"rcb-env:{env_key(env_dir, salt=base_id)}"


def ensure_image(client: Any, env_dir: Path) -> str:
    """The environment's image tag, built if it does not exist yet.

    Raises:
        RcbError: the base image is missing.
        TaskError: the requirements are not pinned index packages (``file:line``).
        EnvironmentBuildError: the build failed (the message names the log).
    """
    import docker.errors

    base = base_image()
    base_id = base_image_id(client)
    tag = image_tag(env_dir, base_id)
    try:
        client.images.get(tag)
        return tag
    except docker.errors.ImageNotFound:
        pass
    log = cache_dir("images") / f"{tag.replace(':', '_')}.log"
    context, _ = _context(requirements_of(env_dir), base, pip_settings())
    ok = True
    with open(log, "w", encoding="utf-8") as out:
        try:
            stream = client.api.build(
                fileobj=io.BytesIO(context),
                custom_context=True,
                tag=tag,
                rm=True,
                forcerm=True,
                network_mode="host",
                decode=True,
                labels={"rcb.env": env_dir.name},
            )
            for chunk in stream:
                if "stream" in chunk:
                    out.write(chunk["stream"])
                if "error" in chunk:
                    out.write(json.dumps(chunk) + "\n")
                    ok = False
        except docker.errors.APIError as exc:
            out.write(f"{exc}\n")
            ok = False
    if not ok:
        raise EnvironmentBuildError(
            f"environment '{env_dir.name}' failed to build as {tag} on {base} "
            f"({env_dir / 'requirements.txt'}): {WHEELS_ONLY}; see {log}"
        )
    return tag


def env_images(client: Any, tasks: list[Task]) -> list[str]:
    """The image tags the Docker backend runs ``tasks`` in, sorted (the base image is
    pulled when missing: its id is part of each tag).

    Raises:
        RcbError: the base image is missing and cannot be pulled.
    """
    base_id = base_image_id(client)
    return sorted({image_tag(task.env_dir, base_id) for task in tasks})


def _archive_name(tag: str) -> str:
    return tag.replace(":", "_").replace("/", "_") + ".tar"


def save_images(client: Any, tags: list[str], folder: Path) -> list[str]:
    """``docker save`` each of ``tags`` present here into ``folder`` (one archive per
    image, written whole or not at all); the tags saved."""
    import docker.errors

    folder.mkdir(parents=True, exist_ok=True)
    saved = []
    for tag in tags:
        try:
            image = client.images.get(tag)
        except docker.errors.ImageNotFound:
            continue
        target = folder / _archive_name(tag)
        partial = target.with_suffix(".part")
        with open(partial, "wb") as out:
            for chunk in image.save(named=True):
                out.write(chunk)
        partial.replace(target)
        saved.append(tag)
    return saved


def load_images(client: Any, folder: Path) -> list[str]:
    """``docker load`` every archive in ``folder``; the tags loaded."""
    loaded: list[str] = []
    for archive in sorted(folder.glob("*.tar")):
        with open(archive, "rb") as data:
            for image in client.images.load(data):
                loaded += image.tags
    return loaded
