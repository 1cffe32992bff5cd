"""Crash safety: a labelling session killed with SIGKILL at random moments, many times; a bulk
import killed while it writes.

After every kill, every event the app acknowledged (on screen: it moved on) is on disk, no
event is there twice, and at most the one event in flight at the kill is on disk without
having been acknowledged. Each driver holds the annotator's session lock, as `workbench
annotate` does: the next round starting at all shows that a killed session leaves no lock behind.
"""

from __future__ import annotations

import os
import random
import select
import signal
import subprocess
import sys
import time

from conftest import ROOT, synthetic_queue
from workbench.annotation.store import read_events

KILLS = 30

DRIVER = r"""
import asyncio, random, sys
from pathlib import Path
from workbench.annotation.session import Session, load_items
from workbench.annotation.store import LabelStore
from workbench.core.workspace import Workspace
from workbench.kinds.nli.scheme import NLI_SCHEME
from workbench.tui.app import AnnotateApp

ws, folder, seed = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
store = LabelStore(folder, "crash", strict=False, scheme=NLI_SCHEME)
try:
    store.lock_session()
except Exception as exc:
    print("locked", exc, flush=True)
    raise SystemExit(2)
session = Session(load_items(Workspace(ws)), store)
app = AnnotateApp(session, "crash", content_note=False, on_ack=lambda e: print("ack", e["id"], flush=True))

async def main():
    rng = random.Random(seed)
    async with app.run_test() as pilot:
        print("ready", flush=True)
        while True:
            await pilot.press(rng.choice("11223344u"))

asyncio.run(main())
"""


def test_sigkill_at_random_moments_loses_and_duplicates_nothing(tmp_path):
    ws = synthetic_queue(tmp_path / "ws", 3000)
    folder = tmp_path / "annotations"
    rng = random.Random(7)
    acked: list[str] = []
    unacked_on_disk = 0
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    for round_ in range(KILLS):
        proc = subprocess.Popen(
            [sys.executable, "-c", DRIVER, str(ws), str(folder), str(round_)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            text=True,
        )
        line = proc.stdout.readline()
        assert not line.startswith("locked"), f"round {round_}: the killed session left its lock behind: {line!r}"
        assert line.strip() == "ready", f"driver did not start: {line!r}"
        deadline = time.monotonic() + rng.uniform(0.05, 0.6)
        round_acks = []
        while time.monotonic() < deadline:
            ready, _, _ = select.select([proc.stdout], [], [], max(0.0, deadline - time.monotonic()))
            if ready:
                line = proc.stdout.readline()
                if line.startswith("ack "):
                    round_acks.append(line.split()[1])
        proc.send_signal(signal.SIGKILL)
        rest = proc.stdout.read()
        proc.wait(timeout=30)
        round_acks += [l.split()[1] for l in rest.splitlines() if l.startswith("ack ")]
        acked += round_acks
        path = folder / "crash.jsonl"
        # Killed before its first key under a loaded machine: nothing acknowledged, no file yet.
        events = read_events(path)[0] if path.exists() else []
        ids = [e["id"] for e in events]
        assert len(ids) == len(set(ids)), "an event is on disk twice"
        missing = set(acked) - set(ids)
        assert not missing, f"round {round_}: {len(missing)} acknowledged event(s) lost"
        extra = len(ids) - len(acked) - unacked_on_disk
        assert 0 <= extra <= 1, f"round {round_}: {extra} unacknowledged events on disk"
        unacked_on_disk += extra
    assert len(acked) > KILLS  # the sessions really labelled


HOLDER = r"""
import sys, time
from workbench.annotation.store import LabelStore
store = LabelStore(sys.argv[1], "alice")
store.lock_session()
print("locked", flush=True)
time.sleep(60)
"""


def test_a_session_killed_with_sigkill_leaves_no_lock_behind(tmp_path):
    import pytest

    from workbench.annotation.store import LabelStore
    from workbench.core.errors import InputError

    folder = tmp_path / "annotations"
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(folder)], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "locked"
        with pytest.raises(InputError, match=rf"alice already has a labelling session open .*process {proc.pid}"):
            LabelStore(folder, "alice").lock_session()
        bob = LabelStore(folder, "bob")
        bob.lock_session()  # other annotators are free
        bob.close()
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    store = LabelStore(folder, "alice")
    store.lock_session()  # no stale lock, no cleanup needed
    store.close()


IMPORT = r"""
import os, sys, time
write = os.write
def slow_disk(fd, data):  # a slow disk: 4 KiB per call, 1 ms apart, so that a kill lands mid-write
    time.sleep(0.001)
    return write(fd, bytes(data[:4096]))
if sys.argv[2] == "slow":
    os.write = slow_disk
from workbench.cli.main import main
sys.argv = ["workbench", "annotate", "-a", sys.argv[1], "--labels-from", "labels.jsonl"]
main()
"""


def _import_project(tmp_path, n: int):
    import json

    project = tmp_path / "project"
    synthetic_queue(project / ".workbench", n)
    (project / "workbench.toml").write_text("")
    choices = ["valid-pro", "valid-anti", "invalid", "incoherent"]
    (project / "labels.jsonl").write_text(
        "".join(json.dumps({"item_id": f"item{k:06d}", "label": choices[k % 4]}) + "\n" for k in range(n))
    )
    return project


def _labels(path) -> int:
    return sum(1 for e in read_events(path)[0] if e["type"] == "label") if path.exists() else 0


def test_sigkill_during_a_bulk_import_leaves_all_of_it_or_none_and_a_rerun_completes_it(tmp_path):
    """Killed the moment the label file starts to grow (mid-write: the disk is made slow for
    those rounds), and at random moments: every reader then sees all of the import or none of
    it; the next run moves the remains aside and writes it whole."""
    n = 20_000
    project = _import_project(tmp_path, n)
    path = project / "annotations" / "bulk.jsonl"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    rng = random.Random(29)
    torn_batches = 0
    for round_ in range(8):
        slow = round_ % 2 == 0
        proc = subprocess.Popen(
            [sys.executable, "-c", IMPORT, "bulk", "slow" if slow else "fast"],
            cwd=project,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        before = path.stat().st_size if path.exists() else 0
        if slow:  # the moment its batch starts to reach the file
            while proc.poll() is None and (path.stat().st_size if path.exists() else 0) <= before:
                time.sleep(0.0002)
        else:
            time.sleep(rng.uniform(0.5, 4.0))
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        got = _labels(path)
        assert got in (0, n), f"round {round_}: a reader sees {got} of the import's {n} labels"
        if got == 0 and path.exists() and path.stat().st_size > 0:
            torn_batches += 1
            assert any("interrupted" in w for w in read_events(path)[1].messages())
        if got == n:
            break
    assert torn_batches >= 1, "no kill landed while the batch was being written"
    done = subprocess.run(
        [sys.executable, "-c", IMPORT, "bulk", "fast"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    events, report = read_events(path)
    assert _labels(path) == n and len({e["id"] for e in events}) == n and report.messages() == []
