"""A small fake of OpenAI's chat completions, Files and Batch API on 127.0.0.1, a test
double for the network: the calls litellm's ``completion``, ``create_file``,
``create_batch``, ``retrieve_batch`` and ``file_content`` make for ``openai/`` models.
A chat completion is answered at once, and the requests of a batch when the test
completes the batch, each by a function of the prompt text. Use it as a context
manager; point litellm at it with ``OPENAI_BASE_URL=fake.url`` (and any API key)::

    with FakeOpenAI(answer=lambda text: "...") as fake:
        ...
        fake.complete_all()
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class FakeOpenAI:
    """The fake server; ``url`` is its API base (``.../v1``).

    Args:
        answer: the completion text for a prompt's text.
        auto_complete: complete a batch on its first retrieval (else the test calls
            :meth:`complete_all`).
    """

    def __init__(self, answer: Callable[[str], str], *, auto_complete: bool = False) -> None:
        self.answer = answer
        self.auto_complete = auto_complete
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self.calls: list[tuple[str, str]] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def batches_created(self) -> int:
        return sum(1 for method, path in self.calls if method == "POST" and path == "/v1/batches")

    def complete_all(self) -> None:
        with self._lock:
            for batch in self.batches.values():
                if batch["status"] == "in_progress":
                    self._complete(batch)

    @property
    def chat_calls(self) -> int:
        """Chat completions asked for one at a time (not through a batch)."""
        return sum(1 for call in self.calls if call == ("POST", "/v1/chat/completions"))

    def completion(self, request: dict[str, Any], completion_id: str) -> dict[str, Any]:
        """A chat completion answering ``request`` (a chat completions request body)."""
        text = "".join(str(m["content"]) for m in request["messages"])
        answer = self.answer(text)
        return {
            "id": completion_id,
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request["model"],
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": answer},
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": len(text) // 4 + 1,
                "completion_tokens": len(answer) // 4 + 1,
                "total_tokens": len(text) // 4 + len(answer) // 4 + 2,
            },
        }

    def _complete(self, batch: dict[str, Any]) -> None:
        lines = []
        for line in self.files[batch["input_file_id"]].decode().splitlines():
            request = json.loads(line)
            body = self.completion(request["body"], f"chatcmpl-{request['custom_id'][:8]}")
            lines.append(
                json.dumps(
                    {
                        "id": f"req-{request['custom_id'][:8]}",
                        "custom_id": request["custom_id"],
                        "response": {"status_code": 200, "request_id": "r", "body": body},
                        "error": None,
                    }
                )
            )
        output = f"file-out-{len(self.files)}"
        self.files[output] = ("\n".join(lines) + "\n").encode()
        total = len(lines)
        batch.update(
            status="completed",
            output_file_id=output,
            completed_at=int(time.time()),
            request_counts={"total": total, "completed": total, "failed": 0},
        )

    def _batch_object(self, batch_id: str, input_file_id: str, total: int) -> dict[str, Any]:
        return {
            "id": batch_id,
            "object": "batch",
            "endpoint": "/v1/chat/completions",
            "errors": None,
            "input_file_id": input_file_id,
            "completion_window": "24h",
            "status": "in_progress",
            "output_file_id": None,
            "error_file_id": None,
            "created_at": int(time.time()),
            "request_counts": {"total": total, "completed": 0, "failed": 0},
            "metadata": None,
        }

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def _send(self, status: int, body: Any, *, raw: bool = False) -> None:
                data = body if raw else json.dumps(body).encode()
                self.send_response(status)
                self.send_header(
                    "Content-Type", "application/octet-stream" if raw else "application/json"
                )
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _body(self) -> bytes:
                return self.rfile.read(int(self.headers.get("Content-Length") or 0))

            def do_POST(self) -> None:
                path = self.path.split("?")[0]
                data = self._body()
                with fake._lock:
                    fake.calls.append(("POST", path))
                    if path == "/v1/files":
                        head = f"Content-Type: {self.headers['Content-Type']}\r\n\r\n".encode()
                        message = BytesParser(policy=HTTP).parsebytes(head + data)
                        content = b""
                        for part in message.iter_parts():
                            if part.get_param("name", header="content-disposition") == "file":
                                content = part.get_payload(decode=True) or b""
                        file_id = f"file-{len(fake.files)}"
                        fake.files[file_id] = content
                        self._send(
                            200,
                            {
                                "id": file_id,
                                "object": "file",
                                "bytes": len(content),
                                "created_at": int(time.time()),
                                "filename": "batch.jsonl",
                                "purpose": "batch",
                                "status": "processed",
                            },
                        )
                        return
                    if path == "/v1/chat/completions":
                        request = json.loads(data)
                        self._send(200, fake.completion(request, f"chatcmpl-{len(fake.calls)}"))
                        return
                    if path == "/v1/batches":
                        request = json.loads(data)
                        file_id = request["input_file_id"]
                        total = len(fake.files[file_id].decode().splitlines())
                        batch_id = f"batch_{len(fake.batches)}"
                        fake.batches[batch_id] = fake._batch_object(batch_id, file_id, total)
                        self._send(200, fake.batches[batch_id])
                        return
                self._send(404, {"error": {"message": f"no route {path}"}})

            def do_GET(self) -> None:
                path = self.path.split("?")[0]
                with fake._lock:
                    fake.calls.append(("GET", path))
                    parts = path.strip("/").split("/")
                    if len(parts) == 3 and parts[1] == "batches" and parts[2] in fake.batches:
                        batch = fake.batches[parts[2]]
                        if fake.auto_complete and batch["status"] == "in_progress":
                            fake._complete(batch)
                        self._send(200, batch)
                        return
                    content = len(parts) == 4 and parts[1] == "files" and parts[3] == "content"
                    if content and parts[2] in fake.files:
                        self._send(200, fake.files[parts[2]], raw=True)
                        return
                self._send(404, {"error": {"message": f"no route {path}"}})

        return Handler
