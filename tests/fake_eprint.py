"""A fake of arXiv's e-print endpoint on 127.0.0.1, serving ``tests/fixtures/eprints``.

``GET /e-print/<id>v<n>`` answers as arXiv does: a folder holding one file is sent as
that file gzipped, a folder of several as a gzipped tarball, a ``.pdf`` as is (a
PDF-only submission); anything else is a 404. Archives are built once with fixed
timestamps and member order, so their bytes never change. Scripted trouble can be
queued per id: ``slow`` (the answer waits), ``status`` (e.g. 503 with Retry-After).
Point rcb at it with ``RCB_ARXIV_URL=fake.url``.
"""

from __future__ import annotations

import gzip
import io
import tarfile
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

EPRINTS = Path(__file__).parent / "fixtures" / "eprints"


def _gzip(data: bytes) -> bytes:
    return gzip.compress(data, mtime=0)


def _tarball(folder: Path) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.USTAR_FORMAT) as archive:
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            data = path.read_bytes()
            info = tarfile.TarInfo(path.relative_to(folder).as_posix())
            info.size, info.mtime, info.mode = len(data), 0, 0o644
            archive.addfile(info, io.BytesIO(data))
    return _gzip(buffer.getvalue())


def build_eprints(root: Path = EPRINTS) -> dict[str, tuple[bytes, str]]:
    """``<id>v<n>`` -> (the bytes arXiv would send, their content type)."""
    served: dict[str, tuple[bytes, str]] = {}
    for entry in sorted(root.iterdir()):
        if entry.is_dir():
            files = [p for p in entry.rglob("*") if p.is_file()]
            if len(files) == 1:
                served[entry.name] = (_gzip(files[0].read_bytes()), "application/x-eprint")
            else:
                served[entry.name] = (_tarball(entry), "application/x-eprint-tar")
        elif entry.suffix == ".pdf":
            served[entry.stem] = (entry.read_bytes(), "application/pdf")
    return served


@dataclass
class Seen:
    path: str
    user_agent: str
    at: float


class FakeEprints:
    """The server. ``requests`` lists what was asked, in order."""

    def __init__(self, extra: dict[str, tuple[bytes, str]] | None = None) -> None:
        self.served = {**build_eprints(), **(extra or {})}
        self.requests: list[Seen] = []
        self._slow: dict[str, list[float]] = {}
        self._status: dict[str, list[tuple[int, dict[str, str]]]] = {}
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def slow(self, name: str, seconds: float, times: int = 1) -> None:
        """The next ``times`` answers for ``name`` wait ``seconds`` first."""
        self._slow.setdefault(name, []).extend([seconds] * times)

    def status(self, name: str, code: int, times: int = 1, **headers: str) -> None:
        """The next ``times`` answers for ``name`` are HTTP ``code`` (headers given)."""
        self._status.setdefault(name, []).extend([(code, headers)] * times)

    def asked(self, name: str) -> int:
        return sum(1 for seen in self.requests if seen.path == f"/e-print/{name}")

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                with fake._lock:
                    fake.requests.append(
                        Seen(self.path, self.headers.get("User-Agent", ""), time.monotonic())
                    )
                    name = self.path.removeprefix("/e-print/")
                    delay = fake._slow.get(name, [])
                    wait = delay.pop(0) if delay else 0.0
                    queued = fake._status.get(name, [])
                    scripted = queued.pop(0) if queued else None
                if wait:
                    time.sleep(wait)
                try:
                    if scripted is not None:
                        code, headers = scripted
                        self.send_response(code)
                        for key, value in headers.items():
                            self.send_header(key.replace("_", "-"), value)
                        self.end_headers()
                        return
                    if not self.path.startswith("/e-print/") or name not in fake.served:
                        self.send_error(404)
                        return
                    body, kind = fake.served[name]
                    self.send_response(200)
                    self.send_header("Content-Type", kind)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout under test)

        return Handler

    def __enter__(self) -> FakeEprints:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
