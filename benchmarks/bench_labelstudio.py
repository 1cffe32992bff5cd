"""Label Studio pull speed against a real server: 5,000 tasks, each with one annotation from each
of two users, pulled into an empty label store (10,000 new labels), pulled again (nothing new)
and read by `status`; then every task is deleted in Label Studio and pulled once more (10,000
undos). `server_tasks_seconds` is the requests that read every task and annotation (a page of
`page_size` tasks each, as pull reads them): the share of a pull the server takes.

Targets (issue 29): the first pull's work beyond the server's task requests <= 1 s
(`pull_first_beyond_tasks_seconds`: the task requests are timed inside the pull itself, until
their last byte; the rest is workbench's own work plus the small requests for the user, the
project and the user list, also reported alone); 10,000 undos pulled in <= 5 s. The roof is the
server's own task pages over the whole pull; the plain loop reads the tasks page by page and each
task's annotations with one request per task, as a script on the SDK's task and annotation
endpoints would (timed on a sample of tasks, scaled).

Uses the tests' Label Studio (installed once into ~/.cache/workbench-tests, started on
127.0.0.1 with SQLite). Run it alone: `python -m benchmarks.run labelstudio`.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from .common import summary

TASKS = 5_000
TITLE = "bench-pull"
LOOP_SAMPLE = 200


@contextmanager
def timed_requests(out: dict):
    """Time the requests that read the project's tasks (GET /api/tasks, a page each) and every
    other HTTP request, as they happen."""
    import httpx

    send = httpx.Client.send

    def timed_send(self, request, *args, **kwargs):
        t0 = time.perf_counter()
        try:
            return send(self, request, *args, **kwargs)
        finally:
            key = "tasks" if request.url.path.rstrip("/").endswith("/api/tasks") else "other"
            out[key] = out.get(key, 0.0) + time.perf_counter() - t0

    httpx.Client.send = timed_send
    try:
        yield out
    finally:
        httpx.Client.send = send


def timed_pull(sync, config, kind) -> tuple[float, dict, dict]:
    with timed_requests({}) as requests:
        start = time.perf_counter()
        result = sync.pull(config, TITLE, kind.scheme, words=kind.words)
        seconds = time.perf_counter() - start
    return seconds, requests, result


def run(ctx=None, folder: Path | None = None) -> dict:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    try:
        from support.labelstudio_server import LabelStudioServer
    except ImportError as exc:
        from .run import Unavailable

        raise Unavailable(f"the tests' Label Studio support is missing ({exc})") from None
    from workbench import kinds

    from workbench.kinds.nli.fixtures import synthetic_queue
    from workbench.annotation.session import load_items
    from workbench.annotation.store import load_all
    from workbench.core.config import load_config
    from workbench.core.workspace import Workspace
    from workbench.labelstudio import sync
    from workbench.labelstudio.scheme import result_for
    from workbench.labelstudio.page import page_for

    folder = Path(
        folder or (ctx.work / "labelstudio" if ctx else tempfile.mkdtemp(prefix="workbench-bench-labelstudio-"))
    )
    try:
        server = LabelStudioServer(folder / "label-studio").start()
    except Exception as exc:
        from .run import Unavailable

        raise Unavailable(
            f"Label Studio could not be installed or started here ({type(exc).__name__}: {exc})"
        ) from None
    kind = kinds.get("nli")
    try:
        os.environ["LABEL_STUDIO_API_KEY"] = server.token
        os.environ.pop("LABEL_STUDIO_URL", None)
        (folder / "workbench.toml").write_text(f'[labelstudio]\nurl = "{server.url}"\ntimeout = 120\n')
        config = load_config(folder / "workbench.toml")
        synthetic_queue(folder / ".workbench", TASKS)
        items = load_items(Workspace(folder / ".workbench"))
        sync.push(config, [], TITLE, kind=kind, create=True)  # the project, empty
        page = page_for(kind.scheme, kind.words)
        client = sync.Client(server.url, server.token, timeout=120)
        project = client.find_project(TITLE)
        me = client.sdk.users.whoami()
        other = client.sdk.users.create(username="bench", email="bench@example.com", password="bench-pass-123")
        choices = ["valid-pro", "valid-anti", "invalid", "incoherent"]
        tasks = [
            {
                "data": sync.task_data(item, page),
                "annotations": [
                    {"completed_by": me.id, "result": result_for(choices[k % 4], None)},
                    {"completed_by": other.id, "result": result_for(choices[(k + 1) % 4], None)},
                ],
            }
            for k, item in enumerate(items)
        ]
        start = time.perf_counter()
        for at in range(0, len(tasks), 500):
            client.sdk.projects.import_tasks(id=project.id, request=tasks[at : at + 500])
        figures = {"tasks": TASKS, "annotations": 2 * TASKS, "import_seconds": round(time.perf_counter() - start, 2)}
        seconds, requests, result = timed_pull(sync, config, kind)
        assert result["new_labels"] == 2 * TASKS
        figures.update(
            {
                "pull_first_seconds": round(seconds, 2),
                "pull_first_new_labels": result["new_labels"],
                "pull_first_task_requests_seconds": round(requests["tasks"], 2),
                "pull_first_beyond_tasks_seconds": round(seconds - requests["tasks"], 2),
                "pull_first_other_requests_seconds": round(requests.get("other", 0.0), 2),
                "pull_first_workbench_work_seconds": round(seconds - requests["tasks"] - requests.get("other", 0.0), 2),
            }
        )
        seconds, requests, result = timed_pull(sync, config, kind)
        figures.update({"pull_again_seconds": round(seconds, 2), "pull_again_new_labels": result["new_labels"]})
        start = time.perf_counter()
        sync.status(config, TITLE, kind.scheme, words=kind.words)
        figures["status_seconds"] = round(time.perf_counter() - start, 2)
        start = time.perf_counter()
        client.tasks(client.find_project(TITLE))  # the task pages alone: what the server itself takes
        figures["server_tasks_seconds"] = round(time.perf_counter() - start, 2)
        start = time.perf_counter()
        ids = [t.id for t in client.sdk.tasks.list(project=project.id, page_size=100)]
        listed = time.perf_counter() - start
        start = time.perf_counter()
        for task_id in ids[:LOOP_SAMPLE]:
            list(client.sdk.annotations.list(id=task_id))
        loop = listed + (time.perf_counter() - start) * len(ids) / LOOP_SAMPLE
        figures["plain_loop_seconds_extrapolated"] = round(loop, 1)
        client.sdk.tasks.delete_all_tasks(id=project.id)
        seconds, requests, result = timed_pull(sync, config, kind)
        assert result["undone"] == 2 * TASKS
        states, _ = load_all(config.path("annotations"))
        assert not any(s.label for annotator in states.values() for s in annotator.values())
        figures.update(
            {
                "pull_undos": result["undone"],
                "pull_undos_seconds": round(seconds, 2),
                "pull_undos_task_requests_seconds": round(requests["tasks"], 2),
            }
        )
        pull = figures["pull_first_seconds"]
        return summary(
            title="labelstudio: pulling a team's labels from a real Label Studio server",
            workload=f"{TASKS:,} tasks with {2 * TASKS:,} annotations by two users, pulled into an empty label store",
            figure=(
                f"first pull {pull:.1f} s ({2 * TASKS / pull:,.0f} labels/s), a pull with nothing new "
                f"{figures['pull_again_seconds']:.1f} s, status {figures['status_seconds']:.1f} s"
            ),
            clock="wall seconds (client and server on this machine)",
            roof=round(figures["server_tasks_seconds"] / pull, 2),
            roof_what=(
                "the server's own pages of every task and annotation (100 tasks a request, "
                f"{figures['server_tasks_seconds']:.1f} s) over the whole pull: the part of a pull the server takes"
            ),
            loop=round(loop / pull, 1),
            loop_what=(
                f"tasks listed page by page, then one annotations request per task (timed on {LOOP_SAMPLE} "
                "tasks, scaled), as a script on the SDK's task and annotation endpoints would"
            ),
            targets=["a pull of 5,000 tasks in ≤ 10 s; beyond its task requests ≤ 1 s; 10,000 undos in ≤ 5 s"],
            figures=figures,
            notes=[
                "beyond tasks = the whole pull less its task requests (timed to the last byte); "
                "workbench_work = that less the other (small) requests as well",
                "Label Studio 1.23.2 with SQLite on 127.0.0.1, installed and started as the tests do",
            ],
        )
    finally:
        server.stop()


if __name__ == "__main__":
    print(json.dumps(run(None, Path(sys.argv[1]) if len(sys.argv) > 1 else None), indent=2))
