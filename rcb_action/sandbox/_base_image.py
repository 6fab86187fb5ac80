"""Build a Docker base image with no registry: debootstrap a Debian root and import it.

Runners that cannot pull ``python:3.11-slim`` use this, then set
``RCB_BASE_IMAGE`` to the tag it printed.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from rcb_action.errors import RcbError

DEFAULT_TAG = "rcb-base:bookworm"
DEFAULT_MIRROR = "http://deb.debian.org/debian"
PACKAGES = "python3,python3-venv,ca-certificates"


def apt_mirror() -> str:
    """The Debian mirror apt uses on this machine, if it can be read."""
    for path in [Path("/etc/apt/sources.list"), *sorted(Path("/etc/apt/sources.list.d").glob("*"))]:
        try:
            for line in path.read_text().splitlines():
                words = line.split()
                if words[:1] == ["URIs:"] and len(words) > 1:
                    return words[1]
                if words[:1] == ["deb"] and len(words) > 1:
                    return words[1]
        except OSError:
            continue
    return DEFAULT_MIRROR


def build_base_image(
    client: Any, tag: str = DEFAULT_TAG, mirror: str | None = None, suite: str = "bookworm"
) -> str:
    """debootstrap a minimal Debian with python3 and import it as ``tag``; returns the image id.

    Raises:
        RcbError: debootstrap is missing or fails (not root, no mirror).
    """
    if shutil.which("debootstrap") is None:
        raise RcbError(
            "rcb sandbox build-base: debootstrap is not installed (apt-get install debootstrap)"
        )
    mirror = mirror or apt_mirror()
    with tempfile.TemporaryDirectory(prefix="rcb-rootfs-") as root:
        result = subprocess.run(
            ["debootstrap", "--variant=minbase", f"--include={PACKAGES}", suite, root, mirror],
            capture_output=True,
            text=True,
        )
        if result.returncode != 0:
            tail = (result.stderr or result.stdout).strip().splitlines()[-1:] or ["no output"]
            raise RcbError(f"rcb sandbox build-base: debootstrap failed: {tail[0]}")
        tar = subprocess.Popen(["tar", "-C", root, "-c", "."], stdout=subprocess.PIPE)
        repository, _, version = tag.partition(":")
        try:
            client.api.import_image_from_stream(
                tar.stdout, repository=repository, tag=version or "latest"
            )
        finally:
            tar.wait()
    return str(client.images.get(tag).id)
