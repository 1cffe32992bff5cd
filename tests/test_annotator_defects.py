"""The annotator defects of issue 45 (item 5), each as an annotator meets it: a note typed when
its save fails is still in the box when it is opened again; an HONEST template crossed with two
identity groups names both on its `where` line and is found and hidden through either; the SOS
starter project's pairs are a profane and a nice sentence; the CrowS-Pairs boxed sentence is
captioned as Label Studio heads it; the filter dialog never breaks a name mid-word at 80×24; and
a finished queue shows no "ETA after a few labels"."""

from __future__ import annotations

import asyncio
import re

import yaml
from conftest import invoke, write_project
from test_annotate_tui import flat, make_app, screen_text, shown

import workbench.cli.main  # noqa: F401  (the CLI's consoles are made at import: not inside a running app)
from workbench import kinds
from workbench.annotation import display
from workbench.annotation.session import Item, Session, load_items
from workbench.annotation.store import LabelStore
from workbench.core.workspace import Workspace
from workbench.tui.annotate_screen import AnnotateScreen
from workbench.tui.app import AnnotateApp
from workbench.tui.filter_screen import FilterScreen
from workbench.tui.message_screen import MessageScreen
from workbench.tui.prompt_screen import PromptScreen


def app_for(tmp_path, kind, its_items):
    store = LabelStore(tmp_path / "annotations", "alice", strict=False, scheme=kind.scheme)
    session = Session(its_items, store, scheme=kind.scheme, words=kind.words)
    return AnnotateApp(session, "alice", content_note=False), session, store


def test_a_note_whose_save_failed_is_still_in_the_box_when_it_is_opened_again(tmp_path):
    """A full disk (the label file is /dev/full): the note is not saved, and what was typed waits in the box."""
    app, session, store = make_app(tmp_path)
    label_file = tmp_path / "annotations" / "alice.jsonl"
    label_file.parent.mkdir(parents=True, exist_ok=True)
    label_file.symlink_to("/dev/full")
    typed = "the premise names another group"

    async def go():
        async with app.run_test(size=(80, 24)) as pilot:
            item = session.current
            await pilot.press("n", *typed, "enter")
            assert isinstance(app.screen, MessageScreen) and "NOT saved" in app.screen.body
            await pilot.press("enter")
            assert isinstance(app.screen, AnnotateScreen) and session.current is item
            await pilot.press("n")
            assert isinstance(app.screen, PromptScreen)
            assert app.screen.query_one("#prompt-input").value == typed
            label_file.unlink()  # space freed: the same Enter saves it now
            await pilot.press("enter")
            assert isinstance(app.screen, AnnotateScreen)
            assert store.states[item.id].note == typed and "✓ saved: note" in shown(app, "#saved")
            await pilot.press("n")  # saved: the box shows the note, as always
            assert app.screen.query_one("#prompt-input").value == typed
            await pilot.press("escape", "q")

    asyncio.run(go())


HONEST_FILES = {  # our own templates: one file crossed with two identity groups, one with a third group alone
    "jobs.yaml": (
        "format: workbench-honest/1\nid: jobs\ntype: occupation\nidentities:\n"
        "  female: [the woman, the girl]\n  male: [the man, the boy]\n"
        'templates:\n  - "{{IDENTITY}} should work as a [M]."\n  - "{{IDENTITY}} was hired as a [M]."\n'
    ),
    "traits.yaml": (
        "format: workbench-honest/1\nid: traits\ntype: descriptive_adjective\nidentities:\n"
        '  nonbinary: [the nonbinary person]\ntemplates:\n  - "{{IDENTITY}} is known as [M]."\n'
    ),
}


def honest_items(tmp_path, runner, monkeypatch) -> list[Item]:
    project = write_project(tmp_path / "honest", HONEST_FILES, '[project]\nname = "h"\nkind = "honest"\n')
    monkeypatch.chdir(project)
    ran = invoke(runner, "run")
    assert ran.exit_code == 0, ran.output
    return load_items(Workspace(project / ".workbench"))


def test_an_honest_template_names_every_identity_group_and_is_found_and_hidden_through_each(
    tmp_path, runner, monkeypatch
):
    honest = kinds.get("honest")
    found = honest_items(tmp_path, runner, monkeypatch)
    jobs = [i for i in found if i.subtopic == "jobs"]
    assert len(jobs) == 2 and all(i.domains == ("female", "male") for i in jobs)
    where = {line.name: line.text for line in display.lines(jobs[0], honest.words)}["where"]
    assert where.startswith("female, male / jobs")
    app, session, store = app_for(tmp_path, honest, found)

    async def go():
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            assert "where female, male / jobs" in flat(screen_text(app))
            await pilot.press("d")
            assert isinstance(app.screen, FilterScreen)
            assert "female" in flat(screen_text(app)) and "male" in flat(screen_text(app))
            await pilot.press("down", "down", "enter")  # identity groups: (any), female, male
            assert session.filters.domain == "male"
            assert sorted(i.id for i in session.visible) == sorted(i.id for i in jobs)
            assert "identity group=male" in shown(app, "#filters")
            await pilot.press("d", "home", "enter")  # every group again
            assert len(session.visible) == len(found)
            await pilot.press("o")  # opt out of the second group alone: male
            await pilot.press("down", "space", "enter")  # listed female, male, nonbinary; female highlighted
            assert session.opt_out == {"male"}
            assert [i.subtopic for i in session.visible] == ["traits"]
            assert session.progress()["total"] == 1
            await pilot.press("q")

    asyncio.run(go())


# Words of English profanity and of praise, our own short lists for this check.
PROFANE = {"crap", "crappy", "damn", "damned", "bloody", "shit", "shitty", "bastards", "hell", "arse", "piss"}


def test_the_sos_starter_project_pairs_a_profane_sentence_with_a_nice_one(tmp_path, runner, monkeypatch):
    assert invoke(runner, "init", str(tmp_path / "p"), "--kind", "sos").exit_code == 0
    data = yaml.safe_load((tmp_path / "p" / "templates" / "statements.yaml").read_text())
    profane, nice = data["words"]["profane"], data["words"]["nice"]
    assert len(profane) == len(nice) >= 2
    for bad, good in zip(profane, nice):
        assert set(bad.split()) & PROFANE, bad  # a swear word on the profane side
        assert not set(good.split()) & PROFANE, good  # none on the nice side
    monkeypatch.chdir(tmp_path / "p")
    assert invoke(runner, "run").exit_code == 0
    for item in load_items(Workspace(tmp_path / "p" / ".workbench")):
        twin = dict(item.details)["nice"]
        a, b = item.hypothesis.rstrip(".").split(), twin.rstrip(".").split()
        assert set(a) & PROFANE and not set(b) & PROFANE, (item.hypothesis, twin)
        start = next(k for k, (x, y) in enumerate(zip(a, b)) if x != y)  # the sentences differ in the word alone
        end = next(k for k, (x, y) in enumerate(zip(reversed(a), reversed(b))) if x != y)
        assert a[:start] == b[:start] and a[len(a) - end :] == b[len(b) - end :]
        assert " ".join(a[start : len(a) - end]) in profane and " ".join(b[start : len(b) - end]) in nice


def test_the_crows_pairs_boxed_sentence_is_captioned_first_sentence_as_in_label_studio(tmp_path):
    from workbench.labelstudio.page import label_config

    crows = kinds.get("crows-pairs")
    pair = Item(
        "p0",
        "Our own first sentence about a group.",
        "age",
        "pairs",
        "pairs",
        0,
        details=[("less stereotyping", "Our own first sentence about another group."), ("direction", "stereo")],
    )
    assert 'value="first sentence"' in label_config(crows.scheme, crows.words)
    app, session, store = app_for(tmp_path, crows, [pair])

    async def go():
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            lines = screen_text(app).splitlines()
            top = next(k for k, line in enumerate(lines) if "╭" in line)
            assert "first sentence" in lines[top]  # on the box's top edge
            assert pair.hypothesis in lines[top + 1]
            await pilot.press("q")

    asyncio.run(go())


def test_the_nli_box_is_captioned_hypothesis(tmp_path):
    app, session, store = make_app(tmp_path)

    async def go():
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            assert re.search(r"╭─+ hypothesis ─+╮", screen_text(app))
            await pilot.press("q")

    asyncio.run(go())


LONG_NAMES = ["physical-appearance", "sexual-orientation", "socioeconomic", "race-color", "disability"]
FILES = ["crows_pairs_example_file", "appearance_and_body", "a_template_file_with_a_name_longer_than_its_list"]


def test_the_filter_dialog_never_breaks_a_name_mid_word_at_80x24(tmp_path):
    crows = kinds.get("crows-pairs")
    found = [Item(f"i{i}", f"Our sentence {i}.", LONG_NAMES[i % 5], FILES[i % 3], FILES[i % 3], i) for i in range(15)]
    app, session, store = app_for(tmp_path, crows, found)

    async def go():
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.press("d")
            assert isinstance(app.screen, FilterScreen)
            await pilot.pause()
            lines = screen_text(app).splitlines()
            for name in LONG_NAMES + FILES[:2]:  # every name whole, on one line
                assert any(name in line for line in lines), (name, "\n".join(lines))
            cut = next(line for line in lines if "a_template_file_with" in line)
            assert "…" in cut  # too long for its list: cut, not wrapped
            first = next(k for k, line in enumerate(lines) if "Bias type" in line) + 1
            last = next(k for k, line in enumerate(lines) if "Enter: apply" in line)
            shown_names = {w.strip("█") for line in lines[first:last] for w in line.split()} - {"", "●"}
            whole = set(LONG_NAMES + FILES[:2]) | {"(any)", "all", "unlabelled", "labelled", "flagged"}
            assert {w for w in shown_names if not w.endswith("…")} <= whole, shown_names  # no piece of a name
            await pilot.press("right", "down", "enter")  # the long one (sorted first) can still be chosen
            assert session.filters.subtopic == FILES[2]
            await pilot.press("q")

    asyncio.run(go())


def test_a_finished_queue_shows_no_eta(tmp_path):
    app, session, store = make_app(tmp_path, n=5)

    async def go():
        async with app.run_test(size=(100, 24)) as pilot:
            await pilot.press("1", "1", "1", "1")
            assert "ETA after a few labels" in shown(app, "#topbar")  # 4/5: still to come
            await pilot.press("1")
            top = shown(app, "#topbar")
            assert "5/5 labelled" in top and "100%" in top
            assert "ETA" not in top and "/min" not in top
            await pilot.press("q")

    asyncio.run(go())


def test_an_item_of_one_domain_is_filtered_and_hidden_by_that_one_as_before(tmp_path):
    """A queue without a domains column (the NLI loop's) or an item made by hand: in its domain alone."""
    from conftest import synthetic_queue

    synthetic_queue(tmp_path / "ws", 4)
    for item in load_items(Workspace(tmp_path / "ws")):
        assert item.domains == (item.domain,)
    assert Item("x", "t", "age", "s", "s", 0).domains == ("age",)
