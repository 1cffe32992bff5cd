"""The label store at 100,000 events (issue 29): undo, start-up and a bulk import.

- undo: `Session.undo()` (the undo event written and fsynced, states and history updated) on
  a history of 100,000 events, against the same on a history of 100: the median of 200 undos.
- start-up: `workbench annotate`'s path with a queue of 20,000 items and 100,000 earlier
  events in the label file, until the first item is on screen (Textual's Pilot).
- import: `workbench annotate --labels-from` of 100,000 labels into an empty store, as a
  command (a new Python process: imports, reading the queue and the file, one batch written).
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .common import ROOT, summary

ITEMS = 20_000
EVENTS = 100_000
UNDOS = 200
IMPORT = 100_000


def label_file(path: Path, annotator: str, events: int, items: int) -> None:
    """`events` label events over `items` items (each item relabelled in turn), one JSON line
    each as the store writes them."""
    choices = [("valid", "pro"), ("valid", "anti"), ("invalid", None), ("incoherent", None)]
    lines = []
    for n in range(events):
        label, stance = choices[n % 4]
        event = {
            "id": f"e{n:07d}",
            "item": f"item{n % items:06d}",
            "annotator": annotator,
            "type": "label",
            "timestamp": "2025-01-01T00:00:00.000Z",
            "source": "tui",
            "label": label,
        }
        if stance:
            event["stance"] = stance
        lines.append(json.dumps(event, sort_keys=True))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")


def undo_ms(folder: Path, items: list, events: int) -> tuple[float, float]:
    """(median ms of an undo, median ms of the same undos without their fsync)."""
    from workbench import kinds
    from workbench.annotation.session import Session
    from workbench.annotation.store import LabelStore

    label_file(folder / f"u{events}.jsonl", f"u{events}", events, min(events, ITEMS))
    os.sync()  # the file just written is on disk: the undos' fsyncs flush only their own line
    kind = kinds.get("nli")
    store = LabelStore(folder, f"u{events}", scheme=kind.scheme)
    session = Session(items, store, scheme=kind.scheme, words=kind.words)
    fsync, spent = os.fsync, [0.0]

    def timed_fsync(fd: int) -> None:
        t0 = time.perf_counter()
        fsync(fd)
        spent[0] += time.perf_counter() - t0

    times, work = [], []
    os.fsync = timed_fsync
    try:
        for _ in range(UNDOS):
            spent[0] = 0.0
            t0 = time.perf_counter()
            undone = session.undo()
            times.append(time.perf_counter() - t0)
            work.append(times[-1] - spent[0])
            assert undone is not None and undone.event["type"] == "undo"
    finally:
        os.fsync = fsync
    store.close()
    return round(1000 * statistics.median(times), 3), round(1000 * statistics.median(work), 3)


def startup_seconds(folder: Path, ws: Path) -> float:
    from workbench import kinds
    from workbench.annotation.session import Session, load_items
    from workbench.annotation.store import LabelStore
    from workbench.core.workspace import Workspace
    from workbench.tui.app import AnnotateApp

    label_file(folder / "big.jsonl", "big", EVENTS, ITEMS - 1000)  # 1,000 items left to label
    out: dict = {}

    async def go() -> None:
        start = time.perf_counter()
        items = load_items(Workspace(ws))
        kind = kinds.get("nli")
        store = LabelStore(folder, "big", scheme=kind.scheme)
        session = Session(items, store, scheme=kind.scheme, words=kind.words)
        app = AnnotateApp(session, "big", content_note=False)
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            content = app.screen.query_one("#hypothesis").content
            assert getattr(content, "plain", str(content)) == session.current.hypothesis
            out["seconds"] = time.perf_counter() - start
            assert len(store.events) == EVENTS and session.progress()["done"] == ITEMS - 1000
            await pilot.press("q")
        store.close()

    asyncio.run(go())
    return round(out["seconds"], 4)


def import_seconds(folder: Path) -> dict:
    from workbench.kinds.nli.fixtures import synthetic_queue
    from workbench.annotation.store import read_events

    project = folder / "import"
    synthetic_queue(project / ".workbench", IMPORT)
    (project / "workbench.toml").write_text("")
    choices = ["valid-pro", "valid-anti", "invalid", "incoherent"]
    with open(project / "labels.jsonl", "w") as f:
        for n in range(IMPORT):
            f.write(json.dumps({"item_id": f"item{n:06d}", "label": choices[n % 4]}) + "\n")
    code = (
        "import sys; from workbench.cli.main import main; "
        "sys.argv = ['workbench', 'annotate', '-a', 'imp', '--labels-from', 'labels.jsonl']; main()"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code], cwd=project, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    assert done.returncode == 0, done.stderr
    events, report = read_events(project / "annotations" / "imp.jsonl")
    assert len(events) == IMPORT and not report.messages()
    start = time.perf_counter()
    idle = subprocess.run([sys.executable, "-c", "import workbench.cli.main"], cwd=project, env=env)
    assert idle.returncode == 0
    return {
        "import_100k_labels_command_seconds": round(seconds, 2),
        "python_start_and_cli_import_seconds": round(time.perf_counter() - start, 2),
    }


def run(ctx=None) -> dict:
    from workbench.kinds.nli.fixtures import synthetic_queue
    from workbench.annotation.session import load_items
    from workbench.core.workspace import Workspace

    folder = Path(tempfile.mkdtemp(prefix="workbench-bench-labels-"))
    ws = synthetic_queue(folder / "ws", ITEMS)
    items = load_items(Workspace(ws))
    figures: dict = {"items": ITEMS, "events": EVENTS}
    for key, events in (("100_events", 100 + UNDOS), ("100k_events", EVENTS)):
        total, work = undo_ms(folder / "a", items, events)
        figures[f"undo_ms_median_{key}"] = total
        figures[f"undo_ms_median_{key}_without_fsync"] = work
    figures["startup_100k_events_20k_items_seconds"] = startup_seconds(folder / "a", ws)
    figures.update(import_seconds(folder))
    return summary(
        title="labels: the label store at 100,000 events",
        workload=f"{EVENTS:,} events over {ITEMS:,} queue items; {UNDOS} undos; an import of {IMPORT:,} labels",
        figure=(
            f"undo {figures['undo_ms_median_100k_events']:.2f} ms at {EVENTS:,} events (at 100: "
            f"{figures['undo_ms_median_100_events']:.2f} ms); start-up "
            f"{figures['startup_100k_events_20k_items_seconds']:.2f} s; import of {IMPORT:,} labels "
            f"{figures['import_100k_labels_command_seconds']:.2f} s as a command"
        ),
        clock="wall seconds (fsync included)",
        roof=None,
        roof_what="not applicable: no model runs",
        loop=None,
        loop_what="not applicable: the undo at 100 events is the baseline",
        targets=["undo ≤ 5 ms at 100K events, import of 100K labels ≤ 5 s, start-up with 100K events ≤ 1 s"],
        figures=figures,
        notes=[
            f"undo: Session.undo() (event written and fsynced, state and history updated), median of {UNDOS}; the "
            "100-event figure starts from 300 events so that 200 undos are possible; _without_fsync leaves out the "
            "time spent in fsync (the disk's own latency, shared with other users of this machine)",
            "import: the whole command in a new process, queue of 100K items; python_start_and_cli_import_seconds "
            "is what starting Python and importing the CLI alone take",
        ],
    )
