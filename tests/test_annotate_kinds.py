"""What annotators of every kind see in the terminal, driven with Textual's Pilot at 80x24: the
question and the lines their kind declares (AnnotatorWords), per-item questions, hidden lines,
long items that must be read to their end before a label, the confirmation of a saved label,
and a progress figure that never rounds up to 100%."""

from __future__ import annotations

import asyncio

import pytest
from conftest import synthetic_queue
from support.kind_projects import KINDS, queue_items
from test_annotate_tui import flat, label_events, screen_text, shown

import workbench.cli.main  # noqa: F401  (the CLI's consoles are made at import: not inside a running app)
from workbench.annotation import display
from workbench.annotation.session import Session, load_items
from workbench.annotation.store import LabelStore
from workbench.core.workspace import Workspace
from workbench.tui.app import AnnotateApp
from workbench.tui.help_screen import HelpScreen
from workbench.tui.stats_screen import StatsScreen


@pytest.fixture(scope="module")
def projects(tmp_path_factory, queued_project):
    root = tmp_path_factory.mktemp("kinds")
    return {k: queued_project(k, root / k) for k in KINDS}


def app_for(tmp_path, kind, items, annotator="alice"):
    store = LabelStore(tmp_path / "annotations", annotator, strict=False, scheme=kind.scheme)
    session = Session(items, store, scheme=kind.scheme, words=kind.words)
    return AnnotateApp(session, annotator, content_note=False), session


async def read_to_the_end(app, pilot) -> str:
    """Everything the item shows, scrolled through to its end (flattened screen text)."""
    await pilot.pause()
    seen = flat(screen_text(app))
    while app.screen.item_cut():
        await pilot.press("pagedown")
        seen += " " + flat(screen_text(app))
    return seen


@pytest.mark.parametrize("name", KINDS)
def test_each_kind_shows_its_own_question_lines_and_captions(name, projects, tmp_path):
    kind, items = queue_items(projects[name])
    words = kind.words
    assert words is not None and words.problems(kind.scheme) == []
    assert all(display.undeclared(i, words) == [] for i in items)  # every line a kind shows has a caption
    app, session = app_for(tmp_path, kind, items)

    async def go():
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()  # laid out: whether the item fits is known
            for _ in range(min(3, len(items))):
                item = session.current
                seen = await read_to_the_end(app, pilot)
                assert flat(display.question(item, words, kind.scheme)) in seen
                assert shown(app, "#hypothesis") == item.hypothesis
                lines = display.lines(item, words)
                assert lines and all(not line.model for line in lines)
                for line in lines:  # each declared line under its own name, with the item's value
                    first = line.values[0].split()[0]
                    assert f"{line.name} {first}" in seen or f"{line.name} 1 {first}" in seen, (line.name, seen)
                for hidden in words.hidden:  # e.g. a pair's direction: never a line of its own
                    assert f" {hidden} " not in f" {seen} "
                bar = " ".join(screen_text(app).splitlines()[-2:])
                for choice in kind.scheme.choices:
                    assert f"{choice.key} {choice.id}" in bar
                await pilot.press(kind.scheme.choices[0].key)
                assert "✓ saved:" in shown(app, "#saved") and kind.scheme.choices[0].id in shown(app, "#saved")
            await pilot.press("question_mark")
            assert isinstance(app.screen, HelpScreen)
            help_text = " ".join(" ".join(str(w.content).split()) for w in app.screen.query(".help-text"))
            for field in words.fields:
                if field.sources != (display.FILL,):
                    assert f"{field.line}: {' '.join(field.caption.split())}" in help_text, field.line
            for choice in kind.scheme.choices:
                assert " ".join(words.caption(choice).split()) in help_text
            await pilot.press("escape", "t")
            assert isinstance(app.screen, StatsScreen)
            columns = [str(c.label) for c in app.screen.query_one("#stats-table").columns.values()]
            assert columns[0] == words.template and "kept" in columns
            await pilot.press("escape", "q")

    asyncio.run(go())


def test_a_crows_pairs_anti_stereotype_pair_is_asked_as_one(projects, tmp_path):
    """The boxed sentence of an anti-stereotype pair goes against a stereotype: its question says
    so, a stereo pair's says the opposite, and the direction itself is never shown."""
    from workbench.kinds.crows_pairs.words import ANTI, STEREO

    kind, items = queue_items(projects["crows-pairs"])
    direction = {i.id: dict(i.details)["direction"] for i in items}
    anti = [i for i in items if direction[i.id] == "antistereo"]
    stereo = [i for i in items if direction[i.id] == "stereo"]
    assert anti and stereo
    app, session = app_for(tmp_path, kind, [anti[0], stereo[0]])

    async def go():
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()  # laid out: whether the item fits is known
            text = flat(screen_text(app))
            assert flat(ANTI) in text and flat(STEREO) not in text
            assert "anti-stereotype" in shown(app, "#question")
            assert "antistereo" not in text and "direction" not in text
            assert "paired with" in text and "less stereotyping" not in text and "more stereotyping" not in text
            await pilot.press("question_mark")
            help_text = " ".join(str(w.content) for w in app.screen.query(".help-text"))
            assert flat(ANTI) in flat(help_text) and flat(STEREO) in flat(help_text)  # the other kind of pair too
            await pilot.press("escape", "1")
            assert label_events(tmp_path) and session.current.id == stereo[0].id
            text = flat(screen_text(app))
            assert flat(STEREO) in text and flat(ANTI) not in text
            await pilot.press("q")

    asyncio.run(go())


def test_an_item_cut_by_the_screen_is_labelled_only_once_read_to_its_end(projects, tmp_path):
    kind, items = queue_items(projects["nli"])
    long = next(i for i in items if len(i.premises) == 5)
    app, session = app_for(tmp_path, kind, [long] + [i for i in items if i is not long])

    async def go():
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()  # laid out: whether the item fits is known
            assert app.screen.item_cut()
            text = flat(screen_text(app))
            assert "more line(s) below" in text and flat(long.premises[-1]) not in text
            for key in ("1", "2", "3", "4"):
                await pilot.press(key)
            assert label_events(tmp_path) == [] and session.current is long
            assert "Not labelled yet" in shown(app, "#more")
            seen = await read_to_the_end(app, pilot)
            assert flat(long.premises[-1]) in seen and not app.screen.item_cut()
            await pilot.press("3")
            assert [e["item"] for e in label_events(tmp_path)] == [long.id]
            assert shown(app, "#saved") == f"✓ saved: invalid on “{long.hypothesis}”"
            await pilot.press("u")
            assert shown(app, "#saved").startswith("↶ undone: invalid on “Older people")
            await pilot.press("q")

    asyncio.run(go())


def test_a_taller_terminal_that_fits_the_item_needs_no_scrolling(projects, tmp_path):
    kind, items = queue_items(projects["nli"])
    long = next(i for i in items if len(i.premises) == 5)
    app, session = app_for(tmp_path, kind, [long])

    async def go():
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()  # laid out: whether the item fits is known
            assert app.screen.item_cut()
            await pilot.resize_terminal(160, 40)
            await pilot.pause()
            assert not app.screen.item_cut()
            await pilot.press("1")
            assert len(label_events(tmp_path)) == 1
            await pilot.press("q")

    asyncio.run(go())


def test_progress_reads_100_only_once_the_last_item_is_labelled(tmp_path):
    synthetic_queue(tmp_path / "ws", 30)
    from workbench.kinds.nli import KIND

    app, session = app_for(tmp_path, KIND, load_items(Workspace(tmp_path / "ws")))

    async def go():
        async with app.run_test(size=(100, 24)) as pilot:
            screen = app.screen
            session._done, session._total = 19_990, 20_007  # the figures of the report: 99.9%
            screen._draw_topbar()
            top = shown(app, "#topbar")
            assert "19990/20007 labelled" in top and "99%" in top and "100%" not in top and "━━━━━━━━━─" in top
            session._done = 20_007
            screen._draw_topbar()
            assert "100%" in shown(app, "#topbar") and "━━━━━━━━━━" in shown(app, "#topbar")
            session._done, session._total = 0, 20_007
            screen._draw_topbar()
            assert " 0%" in shown(app, "#topbar")
            await pilot.press("q")

    asyncio.run(go())


def test_the_docs_show_each_kinds_words_as_declared_with_both_screenshots():
    import importlib.util

    from conftest import ROOT

    spec = importlib.util.spec_from_file_location("docs_screenshots", ROOT / "docs" / "screenshots.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    text = (ROOT / "docs" / "annotating.md").read_text(encoding="utf-8")
    assert module.words_markdown() in text, (
        "docs/annotating.md is stale: run PYTHONPATH=. python docs/screenshots.py --words"
    )
    for name in KINDS:
        for shot in (f"{name}-terminal-80x24.png", f"{name}-labelstudio.png"):
            path = ROOT / "docs" / "images" / "annotating" / shot
            assert path.is_file() and path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", shot
