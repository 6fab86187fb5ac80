"""Backends by name."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rcb_action.errors import RcbError
from rcb_action.sandbox._base import Limits, SandboxBackend


def _local(limits: Limits, **options: Any) -> SandboxBackend:
    from rcb_action.sandbox._local import LocalBackend

    return LocalBackend(limits, **options)


def _docker(limits: Limits, **options: Any) -> SandboxBackend:
    from rcb_action.sandbox._docker import DockerBackend

    return DockerBackend(limits, **options)


BACKENDS: dict[str, Callable[..., SandboxBackend]] = {"local": _local, "docker": _docker}


def get_backend(name: str, limits: Limits | None = None, **options: Any) -> SandboxBackend:
    """Make the backend called ``name``.

    Raises:
        RcbError: unknown backend, or the backend cannot start (e.g. no Docker daemon).
    """
    if name not in BACKENDS:
        raise RcbError(
            f"--sandbox {name}: unknown backend; choose one of {', '.join(sorted(BACKENDS))}"
        )
    return BACKENDS[name](limits or Limits(), **options)
