"""A stand-in for the Label Studio endpoints `labelstudio pull` reads, over real HTTP on
127.0.0.1 (the SDK and httpx run as against a server): who am I, one project (id 1), its users,
and its tasks a page at a time (GET /api/tasks?project=1&page=N&page_size=M, DRF's 404 past the
last page). Each task is made when its page is asked for, from its number, so a million tasks are
never held here either. It counts the task requests and the most tasks one answer held; a test's
`before_page(n)` runs before page n is answered (to look at the label files then, or to fail the
page with a 500). No Label Studio is installed or started: tests and benchmarks/bench_stages_scale.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from workbench.labelstudio.scheme import ID_KEY, result_for

USERS = {1: "admin@example.com", 2: "kim@example.com"}


def annotations(k: int, choices: list[str]) -> list[dict]:
    """Task k's annotations: admin labels every task; kim every third, with a note; admin has a
    second, later annotation of every seventh task (the latest is taken); kim skipped every
    eleventh (cancelled: not a label)."""
    out = [_annotation(10 * k, 1, choices[k % len(choices)], None, 0)]
    if k % 3 == 0:
        out.append(_annotation(10 * k + 1, 2, choices[(k + 1) % len(choices)], f"note {k}", 1))
    if k % 7 == 0:
        out.append(_annotation(10 * k + 2, 1, choices[(k + 2) % len(choices)], None, 2))
    if k % 11 == 0:
        out.append({**_annotation(10 * k + 3, 2, None, None, 3), "was_cancelled": True})
    return out


def _annotation(id_: int, user: int, choice: str | None, note: str | None, second: int) -> dict:
    return {
        "id": id_,
        "completed_by": user,
        "result": result_for(choice, note),
        "was_cancelled": False,
        "updated_at": f"2026-01-01T00:{second // 60:02d}:{second % 60:02d}Z",
    }


class StandIn:
    """`tasks` tasks (items `item(k)`), labelled by `annotations`; `url` to put in workbench.toml."""

    def __init__(self, tasks: int, label_config: str, choices: list[str], item=lambda k: f"item{k:06d}"):
        self.n, self.label_config, self.choices, self.item = tasks, label_config, choices, item
        self.task_requests, self.most_tasks = 0, 0
        self.before_page = lambda page: None
        standin = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def do_GET(self):
                status, body = standin.answer(self.path)
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def task(self, k: int) -> dict:
        return {"id": k + 1, "data": {ID_KEY: self.item(k)}, "annotations": annotations(k, self.choices)}

    def answer(self, raw: str) -> tuple[int, object]:
        path, query = urlsplit(raw).path.rstrip("/"), parse_qs(urlsplit(raw).query)
        if path == "/api/current-user/whoami":
            return 200, {"id": 1, "email": USERS[1], "username": "admin"}
        if path == "/api/users":
            return 200, [{"id": i, "email": e, "username": e.split("@")[0]} for i, e in USERS.items()]
        if path == "/api/projects/1":
            return 200, {"id": 1, "title": "standin", "label_config": self.label_config, "task_number": self.n}
        if path == "/api/tasks":
            page, size = int(query["page"][0]), int(query["page_size"][0])
            self.task_requests += 1
            failed = self.before_page(page)
            if failed:
                return 500, {"detail": failed}
            first = (page - 1) * size
            if page > 1 and first >= self.n:
                return 404, {"detail": "Invalid page."}
            tasks = [self.task(k) for k in range(first, min(first + size, self.n))]
            self.most_tasks = max(self.most_tasks, len(tasks))
            return 200, {"tasks": tasks, "total": self.n, "total_annotations": 0, "total_predictions": 0}
        return 404, {"detail": "Not found."}

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
