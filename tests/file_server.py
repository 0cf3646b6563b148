"""A loopback HTTP server for the download tests: serves files from memory, honours
``Range`` requests, records every request, and misbehaves on purpose when told (500 answers,
ignored ranges, connections dropped mid-body)."""

from __future__ import annotations

import contextlib
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class FileServer:
    """Serves ``files`` (path -> bytes); records every request; can misbehave on purpose."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        self.requests: list[tuple[str, dict[str, str]]] = []
        self.fail: dict[str, int] = {}  # path -> number of 500 answers still to give
        self.ignore_range: set[str] = set()
        self.drop_after: dict[str, int] = {}  # path -> bytes sent before hanging up (once)
        self.base = ""

    def url(self, path: str) -> str:
        return self.base + path

    def hits(self, path: str) -> list[dict[str, str]]:
        return [headers for seen, headers in self.requests if seen == path]


def handler_for(state: FileServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:  # keep test output clean
            pass

        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            path = self.path
            state.requests.append((path, dict(self.headers.items())))
            if state.fail.get(path, 0) > 0:
                state.fail[path] -= 1
                self.send_error(500, "planned failure")
                return
            if path not in state.files:
                self.send_error(404, "no such file")
                return
            data = state.files[path]
            start = 0
            match = re.fullmatch(r"bytes=(\d+)-", self.headers.get("Range", ""))
            if match and path not in state.ignore_range:
                start = int(match.group(1))
                if start >= len(data):
                    self.send_response(416)
                    self.send_header("Content-Range", f"bytes */{len(data)}")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                self.send_response(206)
                self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
            else:
                self.send_response(200)
            body = data[start:]
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if path in state.drop_after:
                self.wfile.write(body[: state.drop_after.pop(path)])
                self.wfile.flush()
                self.close_connection = True
                return
            self.wfile.write(body)

    return Handler


@contextlib.contextmanager
def serving() -> Iterator[FileServer]:
    """A started server on 127.0.0.1 (a free port); stopped on exit."""
    state = FileServer()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler_for(state))
    httpd.daemon_threads = True
    state.base = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05},
                              daemon=True)
    thread.start()
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)
