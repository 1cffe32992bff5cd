"""Labelling UI speed on a queue of 20K unique items.

The command as an annotator starts it (`workbench annotate` in a pseudo-terminal, from exec to
the first item drawn: Python's start, imports, the queue read, the label file replayed, the app
laid out), also for an annotator with 10K earlier labels; and, with Textual's Pilot, the
in-process start-up and the time from a label key to the next item."""

from __future__ import annotations

import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path

from .common import summary

ITEMS = 20_000
COMMAND_ITEMS = 20_007  # the size of the queue the start-up was reported slow with
COMMAND_RUNS = 7
PRESSES = 200
EARLIER_LABELS = 10_000


def command_seconds(project: Path, annotator: str, marker: str, size=(80, 24), timeout: float = 60) -> float:
    """Seconds from starting `workbench annotate` in a pseudo-terminal of `size` to `marker`
    (text of the first item's screen) reaching the terminal; the app is then stopped."""
    import fcntl
    import os
    import pty
    import re
    import select
    import signal
    import struct
    import subprocess
    import sys
    import termios

    from .common import ROOT

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", size[1], size[0], 0, 0))
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "TERM": "xterm-256color",
        "COLUMNS": str(size[0]),
        "LINES": str(size[1]),
    }
    # As installed: Python keeps the bytecode of what it imported (an environment that forbids it
    # would time compiling workbench's sources at every start instead).
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "workbench", "annotate", "-a", annotator, "--no-content-note"],
        cwd=project,
        env=env,
        stdin=slave,
        stdout=slave,
        stderr=slave,
        start_new_session=True,
    )
    os.close(slave)
    seen, found = b"", None
    try:
        while time.perf_counter() - start < timeout and found is None:
            ready, _, _ = select.select([master], [], [], 0.02)
            if not ready:
                continue
            try:
                seen += os.read(master, 1 << 16)
            except OSError:
                break
            if marker.encode() in re.sub(rb"\x1b\[[0-9;?<>=]*[A-Za-z~]", b"", seen):
                found = time.perf_counter() - start
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
        os.close(master)
    if found is None:
        raise RuntimeError(f"`workbench annotate` did not show {marker!r} within {timeout} s")
    return found


def command_startup(folder: Path) -> dict:
    """The command's start-up with COMMAND_ITEMS items, fresh and with 10K earlier labels."""
    import os

    from workbench.kinds.nli.fixtures import synthetic_queue

    project = folder / "command"
    synthetic_queue(project / ".workbench", COMMAND_ITEMS)
    (project / "workbench.toml").write_text("")
    lines = [
        json.dumps(
            {
                "id": f"e{n:06d}",
                "item": f"item{n:06d}",
                "annotator": "resume",
                "type": "label",
                "timestamp": "2025-01-01T00:00:00.000Z",
                "source": "tui",
                "label": "invalid",
            },
            sort_keys=True,
        )
        for n in range(EARLIER_LABELS)
    ]
    (project / "annotations").mkdir()
    (project / "annotations" / "resume.jsonl").write_text("\n".join(lines) + "\n")
    figures = {"command_items": COMMAND_ITEMS}
    for name, annotator, marker in (
        ("command_startup_seconds", "bench", f"0/{COMMAND_ITEMS} labelled"),
        ("command_startup_10k_labels_seconds", "resume", f"{EARLIER_LABELS}/{COMMAND_ITEMS} labelled"),
    ):
        command_seconds(project, annotator, marker)  # warm-up: files in the page cache, bytecode compiled
        runs = sorted(command_seconds(project, annotator, marker) for _ in range(COMMAND_RUNS))
        figures[name + "_median"] = round(statistics.median(runs), 3)
        figures[name + "_max"] = round(runs[-1], 3)
    figures["load_average_1min"] = round(os.getloadavg()[0], 2)
    return figures


def run(ctx=None) -> dict:
    from workbench.kinds.nli.fixtures import synthetic_queue
    from workbench.annotation.session import Session, load_items
    from workbench.annotation.store import LabelStore
    from workbench.core.workspace import Workspace
    from workbench.kinds.nli import KIND
    from workbench.tui.app import AnnotateApp

    folder = Path(tempfile.mkdtemp(prefix="workbench-bench-annotate-"))
    synthetic_queue(folder / "ws", ITEMS)
    figures: dict = {"items": ITEMS}

    async def measure() -> None:
        start = time.perf_counter()
        items = load_items(Workspace(folder / "ws"))
        store = LabelStore(folder / "annotations", "bench", scheme=KIND.scheme)
        session = Session(items, store, scheme=KIND.scheme, words=KIND.words)
        app = AnnotateApp(session, "bench", content_note=False)
        loaded = time.perf_counter()
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            shown = app.screen.query_one("#hypothesis").content
            assert getattr(shown, "plain", str(shown)) == session.current.hypothesis
            ready = time.perf_counter()
            figures["startup_data_seconds"] = round(loaded - start, 4)
            figures["startup_total_seconds"] = round(ready - start, 4)
            latencies = []
            drawn: list[float] = []
            screen = app.screen
            decide = screen.action_decide

            def timed_decide(category: str) -> None:
                # Time to the first refresh after the action: the next item is on screen.
                decide(category)
                screen.call_after_refresh(lambda: drawn.append(time.perf_counter()))

            screen.action_decide = timed_decide
            for i in range(PRESSES):
                before = session.current.id
                t0 = time.perf_counter()
                await pilot.press("1234"[i % 4])
                latencies.append(drawn[-1] - t0)
                content = app.screen.query_one("#hypothesis").content
                assert (
                    session.current.id != before
                    and getattr(content, "plain", str(content)) == session.current.hypothesis
                )
            figures["next_item_ms_median"] = round(1000 * statistics.median(latencies), 2)
            figures["next_item_ms_p95"] = round(1000 * sorted(latencies)[int(0.95 * len(latencies))], 2)
            await pilot.press("q")
        store.close()

    async def measure_resume() -> None:
        # Half the queue labelled in earlier sessions, written as the store writes events.
        lines = [
            json.dumps(
                {
                    "id": f"e{n:06d}",
                    "item": f"item{n:06d}",
                    "annotator": "resume",
                    "type": "label",
                    "timestamp": "2025-01-01T00:00:00.000Z",
                    "source": "tui",
                    "label": "invalid",
                },
                sort_keys=True,
            )
            for n in range(EARLIER_LABELS)
        ]
        (folder / "annotations").mkdir(exist_ok=True)
        (folder / "annotations" / "resume.jsonl").write_text("\n".join(lines) + "\n")
        start = time.perf_counter()
        items = load_items(Workspace(folder / "ws"))
        store = LabelStore(folder / "annotations", "resume", scheme=KIND.scheme)
        session = Session(items, store, scheme=KIND.scheme, words=KIND.words)
        app = AnnotateApp(session, "resume", content_note=False)
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            shown = app.screen.query_one("#hypothesis").content
            assert getattr(shown, "plain", str(shown)) == session.current.hypothesis
            assert session.current.position == EARLIER_LABELS and len(session.trail) == EARLIER_LABELS
            figures["startup_resume_10k_labels_seconds"] = round(time.perf_counter() - start, 4)
            await pilot.press("q")
        store.close()

    asyncio.run(measure())
    asyncio.run(measure_resume())
    figures.update(command_startup(folder))
    return summary(
        title="annotate: the labelling TUI on a queue of 20K unique items (Textual, driven by Pilot)",
        workload=f"{ITEMS:,} queue items; {PRESSES} label keys pressed; a resume with {EARLIER_LABELS:,} earlier labels",
        figure=(
            f"`workbench annotate` shows its first item {figures['command_startup_seconds_median']:.2f} s after "
            f"start (median of {COMMAND_RUNS}; with {EARLIER_LABELS:,} earlier labels "
            f"{figures['command_startup_10k_labels_seconds_median']:.2f} s); next item on screen {figures['next_item_ms_median']:.1f} ms after a label key (median; p95 "
            f"{figures['next_item_ms_p95']:.1f} ms); start-up {figures['startup_total_seconds']:.2f} s, with "
            f"{EARLIER_LABELS:,} earlier labels {figures['startup_resume_10k_labels_seconds']:.2f} s"
        ),
        clock="wall seconds (interactive latency; no model)",
        roof=None,
        roof_what="not applicable: no model runs while labelling",
        loop=None,
        loop_what="not applicable: BBNLI-next's annotation has no published tool to compare with",
        targets=["start-up ≤ 1 s (also with 10K earlier labels), next item ≤ 30 ms (median)"],
        figures=figures,
        notes=[
            "command: `python -m workbench annotate` in an 80x24 pseudo-terminal, from exec to the top line "
            "of the first item's screen; median and max of 7 runs after one warm-up; bytecode caches allowed, "
            "as in an installed workbench",
            "each label is written and fsynced before the next item is drawn (included in the latency)",
            "latency: from posting the key to the first screen refresh after the action (Pilot's own idle wait "
            "after a press is not counted)",
        ],
    )
