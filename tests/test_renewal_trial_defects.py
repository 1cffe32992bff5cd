"""The small defects a maintainer met renewing published benchmarks (issue 43, "Smaller, from the
same trial"): the StereoSet CAT editor at 80×24, the order of an adjudicator's "their fix", the
item id on screen, a session lock left by kill -9, `annotations stats` in a pair audit's words,
and a renewal's manifest carrying only the settings its kind reads.

Our own files (the CrowS-Pairs layout with our sentences, kinds/stereoset/example.py's CATs)."""

from __future__ import annotations

import asyncio
import csv
import json

import pytest
from conftest import invoke
from support.renewal import audit_app
from support.renewal import labels_file as _labels
from test_annotate_tui import flat, screen_text
from textual.geometry import Region
from textual.widgets import Input

import workbench.cli.main  # noqa: F401  (the CLI's consoles are made at import: not inside a running app)
from workbench import kinds
from workbench.core.config import load_config
from support.renewal import CROWS_HEADER

HEADER = CROWS_HEADER
PAIRS = [
    [
        "0",
        "Older people are slow with new technology .",
        "Younger people are slow with new technology .",
        "stereo",
        "age",
        "[['age'], ['age']]",
        "a0",
        "['a1', 'a2']",
    ],
    [
        "1",
        "Women are naturally caring with children .",
        "Men are naturally caring with children .",
        "stereo",
        "gender",
        "[['gender']]",
        "a3",
        "['a1']",
    ],
    [
        "2",
        "Retail workers is careless with money .",
        "Office workers is careless with money .",
        "stereo",
        "socioeconomic",
        "[]",
        "a7",
        "[]",
    ],
]


@pytest.fixture
def pairs(tmp_path, monkeypatch, runner):
    """A CrowS-Pairs renewal project (imported and run), as the current folder."""
    original = tmp_path / "pairs_anonymized.csv"
    with open(original, "w", encoding="utf-8", newline="") as f:
        csv.writer(f).writerows([HEADER, *PAIRS])
    r = invoke(
        runner,
        "import",
        str(original),
        "--kind",
        "crows-pairs",
        "--out",
        str(tmp_path / "renewed"),
        "--origin-name",
        "CrowS-Pairs",
        "--origin-license",
        "cc-by-sa-4.0",
    )
    assert r.exit_code == 0, r.output + str(r.exception)
    monkeypatch.chdir(tmp_path / "renewed")
    assert invoke(runner, "run").exit_code == 0
    return tmp_path / "renewed"


@pytest.fixture
def cats(tmp_path, monkeypatch, runner):
    """A StereoSet renewal project (our CATs imported and run), as the current folder."""
    from workbench.kinds.stereoset.example import document

    original = tmp_path / "dev.json"
    original.write_text(json.dumps(document(), indent=2), encoding="utf-8")
    r = invoke(runner, "import", str(original), "--kind", "stereoset", "--out", str(tmp_path / "ss"))
    assert r.exit_code == 0, r.output + str(r.exception)
    monkeypatch.chdir(tmp_path / "ss")
    assert invoke(runner, "run").exit_code == 0
    return tmp_path / "ss"


def _app(project, annotator="alice"):
    config = load_config(project / "workbench.toml")
    return audit_app(config, kinds.of_config(config), annotator)


# -- 1. the CAT editor at 80×24 ---------------------------------------------------------------------------
def test_every_line_of_the_cat_editor_is_on_screen_at_80x24(cats):
    """A CAT's editor has four lines (the context and three sentences): at 80×24 all four are on
    screen at once, inside the dialog, and what is typed in the fourth is seen."""
    store, session, app = _app(cats)
    first = session.current
    sentences = dict(first.details)

    async def go():
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            await pilot.press("e")
            await pilot.pause()
            screen, dialog = Region(0, 0, 80, 24), app.screen.query_one(".dialog")
            fields = [app.screen.query_one(f"#fix-{k}", Input) for k in range(4)]
            for field in fields:
                assert field.region.height >= 1 and field.region.width >= 40, field.region
                assert screen.contains_region(field.region), field.region
                assert dialog.content_region.contains_region(field.region), (field.region, dialog.content_region)
            assert dialog.scroll_y == 0 and dialog.max_scroll_y == 0  # all four at once, nothing to scroll to
            shown = flat(screen_text(app))
            assert all(
                text in shown
                for text in (
                    first.hypothesis,
                    sentences["stereotype"],
                    sentences["anti-stereotype"],
                    sentences["unrelated"],
                )
            )
            for _ in range(3):  # Enter moves down to the fourth line
                await pilot.press("enter")
            assert app.screen.focused is fields[3]
            fields[3].value = ""
            await pilot.press(*"The printer is out of paper.")
            await pilot.pause()
            assert "The printer is out of paper." in flat(screen_text(app))
            assert screen.contains_region(fields[3].region)
            await pilot.press("enter")
            await pilot.pause()
            await pilot.press("q")

    asyncio.run(go())
    assert store.states[first.id].fix == {"unrelated": "The printer is out of paper."}
    store.close()


# -- 2. the adjudicator's "their fix" in the item's order -------------------------------------------------
MORE, LESS = "Retail workers are careless with money .", "Office workers are careless with money ."


def _adjudicator_app(project, annotator="carol"):
    from workbench.annotation.session import Session, items_from_table
    from workbench.annotation.store import LabelStore
    from workbench.cli.annotate import _disputes
    from workbench.tui.app import AnnotateApp

    config = load_config(project / "workbench.toml")
    kind = kinds.of_config(config)

    items = items_from_table(kind.pipeline(config).table(kind.queue_stage))
    disputes, _ = _disputes(config, items, annotator, kind.scheme)
    store = LabelStore(config.path("annotations"), annotator, scheme=kind.scheme)
    session = Session(
        items, store, adjudicate_with=disputes, scheme=kind.scheme, words=kind.words, fix_fields=kind.audit.fix_fields
    )
    return store, session, AnnotateApp(session, annotator, content_note=False)


async def _whole_item(app, pilot) -> str:
    """Everything the item shows, scrolled through to its end, as flat text."""
    await pilot.pause()
    seen = flat(screen_text(app))
    while app.screen.item_cut():
        await pilot.press("pagedown")
        await pilot.pause()
        seen += " " + flat(screen_text(app))
    return seen


def test_their_fix_shows_a_pairs_sentences_in_the_order_the_pair_shows_them(pairs, tmp_path, runner):
    """A label event keeps a fix by column name (sent_less sorts before sent_more): the adjudicator
    reads each proposal as the pair reads, first sentence first; a fix of one sentence names it."""
    keep = [{"item_id": r[0], "label": "keep"} for r in PAIRS[:2]]
    for name, fix in (("alice", {"sent_more": MORE, "sent_less": LESS}), ("bob", {"sent_less": LESS})):
        r = invoke(
            runner,
            "annotate",
            "--annotator",
            name,
            "--labels-from",
            _labels(tmp_path / f"{name}.jsonl", [*keep, {"item_id": "2", "label": "fix", "fix": fix}]),
        )
        assert r.exit_code == 0, r.output
    events = [json.loads(line) for line in (pairs / "annotations" / "alice.jsonl").read_text().splitlines()]
    assert list(events[-1]["fix"]) == ["sent_less", "sent_more"]  # as stored: not the pair's order
    store, session, app = _adjudicator_app(pairs)

    async def go():
        async with app.run_test(size=(80, 24)) as pilot:
            seen = await _whole_item(app, pilot)
            assert f"their fix alice: {MORE} / {LESS}" in seen, seen
            assert f"their fix bob: sent_less: {LESS}" in seen, seen
            await pilot.press("q")

    asyncio.run(go())
    store.close()
    # alice's own fix, back on her screen, reads the same way
    store, session, app = _app(pairs, "alice")

    async def back():
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            await pilot.press("left")  # her last label: the fixed pair
            seen = await _whole_item(app, pilot)
            assert f"your fix {MORE} / {LESS}" in seen, seen
            await pilot.press("q")

    asyncio.run(back())
    store.close()


# -- 3. the item's id on its screen ------------------------------------------------------------------------
@pytest.mark.parametrize("size", [(80, 24), (50, 15)])
def test_the_items_id_is_on_its_screen_in_one_line(size, tmp_path, monkeypatch, runner):
    """A published StereoSet CAT id is 32 hex digits: the audit shows it whole on the judged text's
    box (its lower edge: no line of the item for it), on one line, at 80×24 and at the smallest size."""
    import hashlib

    from workbench.kinds.stereoset.example import document

    doc = document()
    for split in doc["data"].values():
        for cat in split:
            cat["id"] = hashlib.md5(cat["id"].encode()).hexdigest()
    original = tmp_path / "dev.json"
    original.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    assert invoke(runner, "import", str(original), "--kind", "stereoset", "--out", str(tmp_path / "ss")).exit_code == 0
    monkeypatch.chdir(tmp_path / "ss")
    assert invoke(runner, "run").exit_code == 0
    store, session, app = _app(tmp_path / "ss")
    ids = [c["id"] for split in doc["data"].values() for c in split]

    async def go():
        async with app.run_test(size=size) as pilot:
            for _ in range(2):
                await pilot.pause()
                item = session.current
                assert item.id in ids and len(item.id) == 32
                lines = screen_text(app).splitlines()
                edge = [line for line in lines if f"id {item.id}" in line]
                assert len(edge) == 1 and "╰" in edge[0] and edge[0].rstrip().endswith("╯"), "\n".join(lines)
                await pilot.press("s")  # the next item shows its own
            await pilot.press("q")

    asyncio.run(go())
    store.close()


def test_a_pairs_published_id_is_on_its_screen(pairs, tmp_path, runner):
    store, session, app = _app(pairs)

    async def go():
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            assert session.current.id == "0"
            assert any("╰" in line and "id 0 ─╯" in line for line in screen_text(app).splitlines())
            await pilot.press("1")
            await pilot.pause()
            assert any("id 1 ─╯" in line for line in screen_text(app).splitlines())
            await pilot.press("q")

    asyncio.run(go())
    store.close()


# -- 4. a session lock whose process is gone -----------------------------------------------------------
FORKING_HOLDER = r"""
import os, sys, time
from workbench.annotation.store import LabelStore
store = LabelStore(sys.argv[1], "alice")
store.lock_session()
child = os.fork()            # as a multiprocessing worker would be: it shares the lock's open file
if child == 0:
    time.sleep(120)
    os._exit(0)
print("locked", child, flush=True)
time.sleep(120)
"""


def _dead_pid() -> int:
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait(timeout=30)
    return proc.pid


def test_a_lock_file_naming_a_dead_process_is_taken_over_and_a_closed_session_leaves_none(tmp_path):
    import os
    import socket

    from workbench.annotation.store import LabelStore

    folder = tmp_path / "annotations"
    folder.mkdir()
    lock = folder / ".alice.lock"
    lock.write_text(json.dumps({"pid": _dead_pid(), "host": socket.gethostname(), "since": "2026-01-01T00:00:00Z"}))
    store = LabelStore(folder, "alice")
    store.lock_session()  # silently: nothing to clean up by hand
    assert json.loads(lock.read_text())["pid"] == os.getpid()
    store.label("x", "keep")
    store.close()
    assert not lock.exists()  # a session that ends leaves no file behind
    again = LabelStore(folder, "alice")
    again.lock_session()
    again.close()
    assert not lock.exists() and [p.name for p in folder.iterdir()] == ["alice.jsonl"]


def test_a_lock_still_held_by_a_child_of_a_session_killed_with_sigkill_is_taken_over(tmp_path):
    """kill -9 ends the session, but a process it forked still holds its flock: the lock names a
    process that is gone, so the next session takes it over; a live session is still refused."""
    import os
    import signal
    import subprocess
    import sys

    from conftest import ROOT

    from workbench.annotation.store import LabelStore
    from workbench.core.errors import InputError

    folder = tmp_path / "annotations"
    proc = subprocess.Popen(
        [sys.executable, "-c", FORKING_HOLDER, str(folder)], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    child = None
    try:
        said, child = proc.stdout.readline().split()
        child = int(child)
        assert said == "locked"
        with pytest.raises(InputError, match=rf"alice already has a labelling session open .*process {proc.pid}"):
            LabelStore(folder, "alice").lock_session()
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        os.kill(child, 0)  # the child lives on, holding the flock
        store = LabelStore(folder, "alice")
        store.lock_session()  # taken over: its session's process is gone
        assert json.loads((folder / ".alice.lock").read_text())["pid"] == os.getpid()
        [said] = [w for w in store.warnings() if "took it over" in w]  # and the annotator is told, once
        assert f"process {proc.pid} on " in said and "has ended" in said
        with pytest.raises(InputError, match=rf"process {os.getpid()}"):
            LabelStore(folder, "alice").lock_session()  # and it is a real lock again
        store.close()
        assert not (folder / ".alice.lock").exists()
        fresh = LabelStore(folder, "alice")
        fresh.lock_session()  # a free lock: nothing to say
        assert not [w for w in fresh.warnings() if "took it over" in w]
        fresh.close()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
        if child:
            try:
                os.kill(child, signal.SIGKILL)
            except ProcessLookupError:
                pass


def test_what_makes_a_recorded_session_gone():
    import os
    import socket

    from workbench.annotation.store import _pid_namespace, _process_start, _session_gone

    me = {
        "pid": os.getpid(),
        "started": _process_start(os.getpid()),
        "pidns": _pid_namespace(),
        "host": socket.gethostname(),
    }
    assert not _session_gone(me)
    assert _session_gone({**me, "started": me["started"] + 1})  # the id reused by another process
    assert _session_gone({**me, "pid": _dead_pid()})
    assert not _session_gone({**me, "pid": _dead_pid(), "host": "elsewhere"})  # cannot tell: kept
    assert not _session_gone({}) and not _session_gone({"pid": "12"})


# -- 5. annotations stats in a pair audit's words ----------------------------------------------------------
def test_annotations_stats_of_a_crows_pairs_audit_never_says_hypothesis(pairs, tmp_path, runner):
    """Its examples, disputes and notes are a pair's: headed by the kind's words (bias type, the
    first sentence), never by the NLI loop's ("hypothesis", which the NLI kind keeps)."""
    rows = [
        {"item_id": "0", "label": "keep", "note": "fine as it is"},
        {"item_id": "1", "label": "not-stereotype"},
        {"item_id": "2", "label": "fix", "fix": {"sent_more": MORE, "sent_less": LESS}},
    ]
    for name, mine in (("alice", rows), ("bob", [*rows[:1], {"item_id": "1", "label": "keep"}, rows[2]])):
        r = invoke(runner, "annotate", "--annotator", name, "--labels-from", _labels(tmp_path / f"{name}.jsonl", mine))
        assert r.exit_code == 0, r.output
    r = invoke(runner, "annotations", "stats", "--json", str(tmp_path / "stats.json"))
    assert r.exit_code == 0, r.output + str(r.exception)
    said = " ".join(r.output.split())
    assert "hypothes" not in said.lower(), r.output
    assert "per bias type and template file" in said and "first sentence" in said, r.output
    assert "Disputed items: 1" in said and "fine as it is" in said
    words = kinds.of_config(load_config(pairs / "workbench.toml")).words
    assert words.fields[0].line == "first sentence" and words.domain == "bias type"


# -- 6. a renewal's manifest carries the settings its kind reads -------------------------------------------
def test_a_crows_pairs_renewals_manifest_carries_no_settings_of_the_nli_loop(pairs, tmp_path, runner):
    kind = kinds.of_config(load_config(pairs / "workbench.toml"))
    assert {"generate", "evaluate.label_overrides"} <= set(kind.unused_settings)
    keep = _labels(tmp_path / "keep.jsonl", [{"item_id": r[0], "label": "keep"} for r in PAIRS])
    assert invoke(runner, "annotate", "--annotator", "alice", "--labels-from", keep).exit_code == 0
    for version, extra in (("1.0.0", ()), ("0.9.0", ("--original",))):
        r = invoke(runner, "build", "--version", version, *extra)
        assert r.exit_code == 0, r.output + str(r.exception)
        manifest = json.loads((pairs / "exports" / "renewed" / version / "manifest.json").read_text())
        settings = manifest["config"]
        assert "generate" not in settings and "label_overrides" not in settings.get("evaluate", {}), settings
        assert not any(
            s in settings or "." in s and s.split(".")[1] in settings.get(s.split(".")[0], {})
            for s in kind.unused_settings
        )
        # what it reads is all there: the project, the audit's annotation settings, the original it renews
        assert settings["project"]["kind"] == "crows-pairs" and settings["origin"]["name"] == "CrowS-Pairs"
        assert settings["annotation"]["validators"] == 2


def test_no_renewal_records_the_generation_settings_it_never_reads():
    from workbench import kinds

    for name in ("stereoset", "nli", "honest", "sofa", "crows-pairs", "sos"):
        kind = kinds.get(name)
        if kind.audit is None:
            continue
        assert "generate" in kind.renewal().unused_settings, name
    assert "generate" not in kinds.get("stereoset").unused_settings  # its own loop proposes BLANK words with it
