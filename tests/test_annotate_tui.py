"""The labelling app driven with Textual's Pilot, as an annotator would use it: keys only,
at 80×24 and 60×20 where the size matters, and what the screen shows read back as text."""

from __future__ import annotations

import asyncio
import io
import json

import pytest
from conftest import invoke, synthetic_queue
from rich.console import Console

import workbench.cli.main  # noqa: F401  (the CLI's consoles are made at import: not inside a running app)
from workbench.annotation.session import Item, Session, load_items
from workbench.annotation.store import LabelStore, read_events
from workbench.core.workspace import Workspace
from workbench.tui.annotate_screen import AnnotateScreen
from workbench.tui.app import AnnotateApp
from workbench.tui.break_screen import BreakScreen
from workbench.tui.content_note import ContentNoteScreen
from workbench.tui.filter_screen import FilterScreen
from workbench.tui.help_screen import HelpScreen
from workbench.tui.message_screen import MessageScreen
from workbench.tui.optout_screen import OptOutScreen
from workbench.tui.prompt_screen import PromptScreen
from workbench.kinds.nli import WORDS as NLI_WORDS
from workbench.kinds.nli.scheme import NLI_SCHEME

SIZES = [(80, 24), (60, 20)]


def make_app(tmp_path, n=30, annotator="alice", keys=None, content_note=False, items=None, **session_kw):
    ws_root = tmp_path / "ws"
    if items is None:
        if not (ws_root / "queue").exists():
            synthetic_queue(ws_root, n)
        items = load_items(Workspace(ws_root))
    store = LabelStore(tmp_path / "annotations", annotator, strict=False, scheme=NLI_SCHEME)
    session = Session(items, store, **{"scheme": NLI_SCHEME, "words": NLI_WORDS, **session_kw})
    return (
        AnnotateApp(session, annotator, keys=keys, content_note=content_note, startup_messages=store.warnings()),
        session,
        store,
    )


def long_items(n=6, premises=2) -> list[Item]:
    """Items as long as real BBNLI-next ones: a long hypothesis, long premises."""
    out = []
    for i in range(n):
        hyp = (
            f"Older people from the northern districts are rarely trusted with a company laptop in item {i} "
            "because managers assume they cannot learn."
        )
        out.append(
            Item(
                f"long{i:03d}",
                hyp,
                ("gender", "age", "race")[i % 3],
                "work",
                "age_work",
                i,
                [(38, 45)],
                "{{GROUP2}} from the northern districts are rarely trusted with a company <mask>.",
                "older people",
                "younger people",
                "pro",
                [
                    f"Premise {chr(65 + k)}: the regional office hired younger people and older people for the new "
                    f"support desk last spring, and the company gave each of them a laptop ({k})."
                    for k in range(premises)
                ],
                [{"model": "nli-a", "fooled": 2, "of": 3, "labels": {"contradiction": 2}, "max_prob": 0.81}],
                3,
                -2.5,
            )
        )
    return out


def run(coro):
    return asyncio.run(coro)


def shown(app, widget_id: str) -> str:
    """The text a Static on the current screen shows."""
    content = app.screen.query_one(widget_id).content
    return getattr(content, "plain", str(content))


def screen_text(app) -> str:
    """What the terminal shows right now, as plain text (all layers, dialogs included)."""
    width, height = app.size
    console = Console(
        width=width,
        height=height,
        file=io.StringIO(),
        force_terminal=True,
        color_system=None,
        record=True,
        legacy_windows=False,
    )
    console.print(app.screen._compositor.render_update(full=True, screen_stack=app._background_screens))
    return console.export_text()


def flat(text: str) -> str:
    """Screen text with line breaks and box edges folded, to find wrapped sentences."""
    for ch in "│╭╮╰╯─█▀▄▊▎▔▁":
        text = text.replace(ch, " ")
    return " ".join(text.split())


def toasts(app) -> list[str]:
    return [str(n.message) for n in app._notifications]


def label_events(tmp_path, annotator="alice"):
    path = tmp_path / "annotations" / f"{annotator}.jsonl"
    return [e for e in read_events(path)[0] if e["type"] == "label"] if path.exists() else []


# -- the whole loop ---------------------------------------------------------------------------
def test_label_twenty_undo_note_flag_filter_quit_and_resume(tmp_path):
    app, session, store = make_app(tmp_path, content_note=True)

    async def first_session():
        async with app.run_test() as pilot:
            assert isinstance(app.screen, ContentNoteScreen)
            await pilot.press("enter")
            for i in range(20):
                expected = session.current.id
                assert shown(app, "#hypothesis") == session.current.hypothesis
                await pilot.press("1234"[i % 4])
                assert store.states[expected].label is not None
            assert session.progress()["done"] == 20
            await pilot.press("u")  # undo the 20th label
            assert session.progress()["done"] == 19
            undone = session.current.id
            assert store.states[undone].label is None
            await pilot.press("n")
            await pilot.press(*"needs context", "enter")
            assert store.states[undone].note == "needs context"
            await pilot.press("f")
            assert store.states[undone].flag is True
            await pilot.press("2")  # relabel it
            assert store.states[undone].label == "valid" and store.states[undone].stance == "anti"
            await pilot.press("d", "tab", "tab", "down", "down", "down", "enter")  # status: flagged
            assert [i.id for i in session.visible] == [undone]
            await pilot.press("q")
        return undone

    undone = run(first_session())
    events, report = read_events(tmp_path / "annotations" / "alice.jsonl")
    assert report.torn is None and len(events) == 20 + 1 + 1 + 1 + 1
    labelled = {e["item"] for e in events if e["type"] == "label"}
    final = LabelStore(tmp_path / "annotations", "alice").states[undone]
    assert (final.label, final.stance, final.note, final.flag) == ("valid", "anti", "needs context", True)

    app2, session2, store2 = make_app(tmp_path)

    async def second_session():
        async with app2.run_test() as pilot:
            # Resumes at the first item alice has not labelled, never one she did.
            assert session2.current.id not in labelled
            assert session2.current.position == 20
            assert session2.progress()["done"] == 20
            await pilot.press("3")
            await pilot.press("q")

    run(second_session())
    assert len(LabelStore(tmp_path / "annotations", "alice").labelled()) == 21


# -- 1. the filter dialog from the keyboard ---------------------------------------------------
@pytest.mark.parametrize("size", SIZES)
def test_filter_dialog_works_from_the_keyboard_alone(tmp_path, size):
    app, session, store = make_app(tmp_path)

    async def go():
        async with app.run_test(size=size) as pilot:
            await pilot.press("1", "3", "s", "2")  # items 0, 1, 3 labelled; 2 skipped
            await pilot.press("d")
            assert isinstance(app.screen, FilterScreen)
            text = flat(screen_text(app))
            for needed in ("Domain", "Subtopic", "Status", "gender", "flagged", "Enter: apply", "Escape: cancel"):
                assert needed in text, needed
            await pilot.press("tab", "tab", "down", "down", "enter")  # status: labelled
            assert session.filters.status == "labelled"
            assert sorted(i.id for i in session.visible) == ["item000000", "item000001", "item000003"]
            assert session.current.id == "item000000" and "filtered view 1/3" in shown(app, "#state")
            await pilot.press("4")  # relabel: on to the next labelled item
            assert store.states["item000000"].label == "incoherent" and session.current.id == "item000001"
            await pilot.press("d", "right", "right", "up", "up", "left", "left", "down", "enter")
            assert (session.filters.domain, session.filters.status) == ("age", "all")  # domains: (any), age, ...
            assert {i.domain for i in session.visible} == {"age"}
            await pilot.press("d", "right", "down", "down", "space", "down", "escape")  # Escape changes nothing
            assert (session.filters.domain, session.filters.subtopic) == ("age", None)
            await pilot.press("d", "right", "down", "down", "enter")  # subtopics of age only
            assert session.filters.subtopic == "age_s1"
            assert {i.subtopic for i in session.visible} == {"age_s1"}
            await pilot.press("d", "up", "right", "home", "enter")  # back to everything
            assert (session.filters.domain, session.filters.subtopic, len(session.visible)) == (None, None, 30)
            await pilot.press("q")

    run(go())


# -- 2. small terminals ----------------------------------------------------------------------
@pytest.mark.parametrize("size", SIZES)
def test_hypothesis_premises_group_and_label_are_on_screen(tmp_path, size):
    """At 80x24 a two-premise item fits whole; at 60x20 it does not, so the label keys wait
    until it has been scrolled to its end, and every premise was on screen by then."""
    app, session, store = make_app(tmp_path, items=long_items())

    async def go():
        async with app.run_test(size=size) as pilot:
            item = session.current
            text = flat(screen_text(app))
            assert flat(item.hypothesis) in text and "group older people → counterfactual younger people" in text
            assert "yours: unlabelled" in text
            seen = text
            if size == (80, 24):
                assert app.screen.item_cut() is False
            else:
                assert app.screen.item_cut() is True and "more line(s) below" in text
                await pilot.press("2")  # not read to its end: no label
                assert label_events(tmp_path) == [] and session.current is item
                assert "Not labelled yet" in flat(screen_text(app))
                while app.screen.item_cut():
                    await pilot.press("down")
                    seen += " " + flat(screen_text(app))
            for premise in item.premises:
                assert flat(premise) in seen
            await pilot.press("2", "left")
            text = flat(screen_text(app))
            assert session.current.id == item.id and "yours: valid-anti" in text and flat(item.hypothesis) in text
            await pilot.press("q")

    run(go())


def test_below_the_minimum_size_it_says_so_and_labels_nothing(tmp_path):
    app, session, store = make_app(tmp_path)

    async def go():
        async with app.run_test(size=(44, 12)) as pilot:
            text = flat(screen_text(app))
            assert "labelling needs at least 50×15" in text and session.current.hypothesis not in text
            await pilot.press("1", "2", "s")
            assert label_events(tmp_path) == [] and session.current.position == 0
            await pilot.resize_terminal(80, 24)
            await pilot.pause()
            assert session.current.hypothesis in flat(screen_text(app))
            await pilot.press("1")
            assert len(label_events(tmp_path)) == 1
            await pilot.press("q")

    run(go())


@pytest.mark.parametrize("size", SIZES)
def test_every_new_item_starts_scrolled_to_the_top(tmp_path, size):
    app, session, store = make_app(tmp_path, items=long_items(premises=8))

    async def go():
        async with app.run_test(size=size) as pilot:
            scroll = app.screen.query_one("#item")
            await pilot.press("pagedown", "pagedown")
            assert scroll.scroll_y > 0  # the long item scrolls by keys
            await pilot.press("3")
            await pilot.pause()
            assert scroll.scroll_y == 0
            assert flat(session.current.hypothesis) in flat(screen_text(app))
            await pilot.press("q")

    run(go())


@pytest.mark.parametrize("size", SIZES)
def test_help_scrolls_and_closes_only_on_purpose(tmp_path, size):
    app, session, store = make_app(tmp_path)

    async def go():
        async with app.run_test(size=size) as pilot:
            await pilot.press("question_mark")
            assert isinstance(app.screen, HelpScreen)
            last = "Remap keys in workbench.toml"
            assert last not in flat(screen_text(app))  # longer than the terminal
            await pilot.press("1")  # a stray key: no label, help stays
            assert isinstance(app.screen, HelpScreen) and label_events(tmp_path) == []
            for _ in range(12):
                await pilot.press("pagedown")
            assert isinstance(app.screen, HelpScreen) and last in flat(screen_text(app))
            await pilot.press("escape")
            assert isinstance(app.screen, AnnotateScreen)
            await pilot.press("q")

    run(go())


# -- 3. the key bar --------------------------------------------------------------------------
@pytest.mark.parametrize("size", SIZES)
def test_key_bar_shows_the_decisions_undo_help_and_quit(tmp_path, size):
    app, session, store = make_app(tmp_path)

    async def go():
        async with app.run_test(size=size) as pilot:
            bottom = screen_text(app).splitlines()[-2:]
            text = " ".join(bottom)
            for entry in ("1 valid-pro", "2 valid-anti", "3 invalid", "4 incoherent", "u undo", "? help", "q quit"):
                assert entry in text, (entry, bottom)
            assert all(len(line.rstrip()) <= size[0] for line in bottom)
            await pilot.press("q")

    run(go())


# -- 4. one session per annotator --------------------------------------------------------------
def test_a_second_session_of_the_same_annotator_is_refused(tmp_path, monkeypatch, runner):
    project = tmp_path / "project"
    synthetic_queue(project / ".workbench", 30)
    (project / "workbench.toml").write_text("")
    (project / "labels.jsonl").write_text('{"item_id": "item000005", "label": "invalid"}\n')
    monkeypatch.chdir(project)
    items = load_items(Workspace(project / ".workbench"))
    store = LabelStore(project / "annotations", "alice")
    store.lock_session()
    session = Session(items, store, scheme=NLI_SCHEME)
    app = AnnotateApp(session, "alice", content_note=False)

    async def go():
        async with app.run_test() as pilot:
            await pilot.press("1")
            second = invoke(runner, "annotate", "-a", "alice", "--labels-from", "labels.jsonl")
            assert second.exit_code == 2
            assert "alice already has a labelling session open" in str(second.exception)
            other = invoke(runner, "annotate", "-a", "bob", "--labels-from", "missing.jsonl")
            assert other.exit_code == 2  # an error on the way out releases bob's lock...
            other = invoke(runner, "annotate", "-a", "bob", "--labels-from", "labels.jsonl")
            assert other.exit_code == 0, other.output  # ...and alice's session does not block bob
            await pilot.press("2")
            await pilot.press("q")

    run(go())
    assert [e["item"] for e in label_events(project, "alice")] == ["item000000", "item000001"]
    store.close()  # the session ended: alice may start again
    again = invoke(runner, "annotate", "-a", "alice", "--labels-from", "labels.jsonl")
    assert again.exit_code == 0, again.output
    assert len(label_events(project, "alice")) == 3


# -- 5. the content note comes first -------------------------------------------------------------
def test_nothing_of_an_item_is_drawn_before_the_content_note_is_accepted(tmp_path):
    app, session, store = make_app(tmp_path, content_note=True)

    async def go():
        async with app.run_test() as pilot:
            text = flat(screen_text(app))
            assert "Content note" in text
            assert not any(isinstance(s, AnnotateScreen) for s in app.screen_stack)
            for item in session.all_items[:3]:
                assert item.hypothesis not in text and item.premises[0] not in text
            await pilot.press("1")  # no label before the note is accepted
            assert label_events(tmp_path) == []
            await pilot.press("enter")
            assert session.current.hypothesis in flat(screen_text(app))
            await pilot.press("q")

    run(go())
    declined, _, _ = make_app(tmp_path, content_note=True)

    async def decline():
        async with declined.run_test() as pilot:
            await pilot.press("escape")
        assert not any(isinstance(s, AnnotateScreen) for s in declined.screen_stack)

    run(decline())


# -- 6. history and undo across restarts ----------------------------------------------------------
def test_history_and_undo_reach_labels_of_an_earlier_session(tmp_path):
    app, session, store = make_app(tmp_path)

    async def first():
        async with app.run_test() as pilot:
            await pilot.press("1", "2", "3")
            await pilot.press("q")

    run(first())
    store.close()
    app, session, store = make_app(tmp_path)

    async def second():
        async with app.run_test(notifications=True) as pilot:
            assert session.current.position == 3
            await pilot.press("left")
            assert session.current.position == 2
            assert "yours: invalid" in shown(app, "#state") and "REVIEWING HISTORY 3/3" in shown(app, "#state")
            await pilot.press("left", "left")
            assert session.current.position == 0 and "yours: valid-pro" in shown(app, "#state")
            await pilot.press("u")  # the latest label, from the first session
            assert store.states["item000002"].label is None
            assert session.current.position == 2 and "● newest item" in shown(app, "#state")
            assert shown(app, "#saved").startswith("↶ undone: invalid on")
            await pilot.press("u")
            assert store.states["item000001"].label is None and session.current.position == 1
            await pilot.press("4")
            assert store.states["item000001"].label == "incoherent" and session.current.position == 2
            await pilot.press("q")

    run(second())


# -- 7. opting out of a domain --------------------------------------------------------------------
def test_opt_out_is_confirmed_saved_reversible_and_counts_stay_right(tmp_path):
    app, session, store = make_app(tmp_path)

    def expected_counts(opted: set[str]) -> tuple[int, int]:
        states = LabelStore(tmp_path / "annotations", "alice", strict=False).states
        kept = [i for i in session.all_items if i.domain not in opted]
        return sum(1 for i in kept if states.get(i.id) and states[i.id].label), len(kept)

    async def go():
        async with app.run_test() as pilot:
            await pilot.press(*"123412")  # items 0-5: two of each domain
            assert session.current.domain == "gender"
            await pilot.press("o")
            assert isinstance(app.screen, OptOutScreen)
            await pilot.press("escape")  # cancelled: nothing changes
            assert session.opt_out == set() and not session.settings_path.exists()
            await pilot.press("o", "space")  # tick the current item's domain...
            assert "[x] gender: 10 items, 2 labelled by you hidden" in flat(screen_text(app))
            assert session.opt_out == set()
            await pilot.press("enter")  # ...and confirm
            assert session.opt_out == {"gender"}
            p = session.progress()
            assert (p["done"], p["total"]) == expected_counts({"gender"}) == (4, 20)
            assert session.current.domain != "gender" and all(i.domain != "gender" for i in session.visible)
            await pilot.press("1")
            assert session.progress()["done"] == 5
            await pilot.press("q")

    run(go())
    assert json.loads(session.settings_path.read_text())["opt_out_domains"] == ["gender"]
    store.close()
    app, session, store = make_app(tmp_path)  # a new session remembers it

    async def again():
        async with app.run_test() as pilot:
            assert session.opt_out == {"gender"}
            p = session.progress()
            assert (p["done"], p["total"]) == expected_counts({"gender"}) == (5, 20)
            await pilot.press("o")
            domains = list(session.domain_counts())
            here, target = domains.index(session.current.domain), domains.index("gender")
            await pilot.press(*(["down"] * (target - here) if target > here else ["up"] * (here - target)))
            await pilot.press("space", "enter")  # opt back in
            assert session.opt_out == set()
            p = session.progress()
            assert (p["done"], p["total"]) == expected_counts(set()) == (7, 30)
            await pilot.press("q")

    run(again())
    assert json.loads(session.settings_path.read_text())["opt_out_domains"] == []


def test_opt_outs_from_the_config_stay_and_are_not_saved(tmp_path):
    app, session, store = make_app(tmp_path, opt_out=["race"])

    async def go():
        async with app.run_test() as pilot:
            await pilot.press("o", "space", "enter")  # current: gender
            assert session.opt_out == {"race", "gender"}
            assert session.progress()["total"] == 10
            await pilot.press("q")

    run(go())
    assert json.loads(session.settings_path.read_text())["opt_out_domains"] == ["gender"]


# -- 8. back and forward ----------------------------------------------------------------------
def test_back_and_forward_never_repeat_and_show_where_you_are(tmp_path):
    app, session, store = make_app(tmp_path)

    async def go():
        async with app.run_test() as pilot:
            await pilot.press(*"12341")  # items 0-4
            await pilot.press("u")  # item 4 is unlabelled again, the newest
            assert session.current.position == 4 and "● newest item" in shown(app, "#state")
            seen = []
            for _ in range(6):
                await pilot.press("left")
                seen.append(session.current.position)
            assert seen == [3, 2, 1, 0, 0, 0]
            assert "REVIEWING HISTORY 1/4" in shown(app, "#state")
            seen = []
            for _ in range(5):
                await pilot.press("right")
                seen.append(session.current.position)
            assert seen == [1, 2, 3, 4, 4] and "● newest item" in shown(app, "#state")
            await pilot.press("left", "left", "4")  # relabel item 2: on to item 3, not elsewhere
            assert store.states["item000002"].label == "incoherent"
            assert session.current.position == 3 and "REVIEWING HISTORY 4/4" in shown(app, "#state")
            await pilot.press("end")
            assert session.current.position == 4 and not session.reviewing
            await pilot.press("s", "left")  # a skipped item is in the history too
            assert session.current.position == 4
            await pilot.press("q")

    run(go())


# -- 9. every premise --------------------------------------------------------------------------
def test_all_premises_of_an_item_are_shown_and_help_says_why(tmp_path):
    app, session, store = make_app(tmp_path, items=long_items(premises=3))

    async def go():
        async with app.run_test(size=(100, 30)) as pilot:
            text = flat(screen_text(app))
            for n, premise in enumerate(session.current.premises, start=1):
                assert f"premise {n} {flat(premise)}" in text
            await pilot.press("question_mark")
            help_text = " ".join(str(w.content) for w in app.screen.query(".help-text"))
            assert "All premises of the item are shown" in help_text and "covers every pair" in help_text
            await pilot.press("escape", "q")

    run(go())


# -- 10. priming ------------------------------------------------------------------------------
@pytest.mark.parametrize("show", [False, True])
def test_written_stance_and_model_results_only_when_switched_on(tmp_path, show):
    app, session, store = make_app(tmp_path, items=long_items(), show_model_results=show)

    async def go():
        async with app.run_test(size=(100, 30)) as pilot:
            text = flat(screen_text(app))
            for priming in ("stance pro", "fooled 2/3", "fluency -2.50"):
                assert (priming in text) == show, priming
            await pilot.press("question_mark")
            help_text = " ".join(str(w.content) for w in app.screen.query(".help-text"))
            assert "show_model_results = true" in help_text
            assert ("fooled k/n = it mispredicted k" in help_text) == show
            await pilot.press("escape", "q")

    run(go())


def test_the_config_switch_exists_and_is_off_by_default():
    from workbench.core.config import AnnotationSection

    assert AnnotationSection().show_model_results is False
    assert AnnotationSection(show_model_results=True).show_model_results is True


# -- 11. the small ones ---------------------------------------------------------------------------
def test_break_reminder_does_not_swallow_a_label_key(tmp_path):
    app, session, store = make_app(tmp_path, break_every_items=3)

    async def go():
        async with app.run_test() as pilot:
            await pilot.press("3", "3", "3")
            assert isinstance(app.screen, BreakScreen)
            await pilot.press("1")  # typed on: not lost silently
            assert isinstance(app.screen, BreakScreen) and "'1' was not used" in shown(app, "#break-hint")
            assert len(label_events(tmp_path)) == 3
            await pilot.press("enter")
            assert isinstance(app.screen, AnnotateScreen)
            await pilot.press("1")
            assert len(label_events(tmp_path)) == 4
            await pilot.press("q")

    run(go())


def test_search_box_starts_empty_and_says_search(tmp_path):
    app, session, store = make_app(tmp_path)

    async def go():
        async with app.run_test() as pilot:
            await pilot.press("slash", *"w17 ", "enter")
            assert [i.id for i in session.visible] == ["item000017"]
            assert shown(app, "#hypothesis") == "group3 are w17 people."
            await pilot.press("slash")
            assert isinstance(app.screen, PromptScreen)
            assert app.screen.query_one("#prompt-input").value == ""
            assert "Enter: search" in flat(screen_text(app)) and "Enter: save" not in flat(screen_text(app))
            await pilot.press("enter")  # empty: show everything again
            assert len(session.visible) == 30
            await pilot.press("q")

    run(go())


def test_rate_and_eta_wait_for_enough_labels(tmp_path):
    now = [0.0]
    app, session, store = make_app(tmp_path, clock=lambda: now[0])

    async def go():
        async with app.run_test(size=(100, 24)) as pilot:
            now[0] = 12.0
            await pilot.press("1")
            assert "/min" not in shown(app, "#topbar") and "ETA after a few labels" in shown(app, "#topbar")
            for _ in range(9):
                now[0] += 12.0
                await pilot.press("3")
            assert session.progress()["rate_per_min"] == pytest.approx(5.0)
            assert "5.0/min · ETA 4 min" in shown(app, "#topbar")  # 20 items left at 5 a minute
            await pilot.press("q")

    run(go())


def test_ctrl_c_quits_cleanly(tmp_path):
    app, session, store = make_app(tmp_path)

    async def go():
        async with app.run_test() as pilot:
            await pilot.press("1")
            await pilot.press("ctrl+c")
            await pilot.pause()
            assert app._exit
        assert app.return_code == 0

    run(go())
    assert len(label_events(tmp_path)) == 1


def test_after_a_restart_skipped_items_come_after_the_rest_and_it_is_said(tmp_path):
    app, session, store = make_app(tmp_path)

    async def first():
        async with app.run_test() as pilot:
            await pilot.press("1", "1", "s", "1", "1", "q")

    run(first())
    store.close()
    app, session, store = make_app(tmp_path)

    async def second():
        async with app.run_test(notifications=True) as pilot:
            assert session.current.position == 5
            assert any("1 earlier item(s) you skipped" in t for t in toasts(app))
            await pilot.press("q")

    run(second())


def test_undo_toast_names_the_label(tmp_path):
    app, session, store = make_app(tmp_path)

    async def go():
        async with app.run_test(notifications=True) as pilot:
            await pilot.press("2", "u")
            assert shown(app, "#saved") == "↶ undone: valid-anti on “group0 are w0 people.”"
            await pilot.press("u")
            assert any(t.startswith("Nothing to undo") for t in toasts(app))
            await pilot.press("q")

    run(go())


# -- errors, remapping, adjudication -----------------------------------------------------------------
def test_unreadable_label_file_shows_a_message_and_the_app_stays_usable(tmp_path):
    (tmp_path / "annotations" / "alice.jsonl").mkdir(parents=True)  # a folder where the file should be
    app, session, store = make_app(tmp_path)

    async def go():
        async with app.run_test() as pilot:
            assert isinstance(app.screen, MessageScreen) and "cannot read label file" in app.screen.body
            await pilot.press("space")  # only Enter or Escape closes a message
            assert isinstance(app.screen, MessageScreen)
            await pilot.press("enter")  # dismiss
            await pilot.press("1")  # writing fails too: a message, no crash
            assert isinstance(app.screen, MessageScreen) and "this label was NOT saved" in app.screen.body
            await pilot.press("escape")
            before = session.current.id
            await pilot.press("s")  # still responsive
            assert session.current.id != before
            await pilot.press("q")
        assert app.return_code in (None, 0)

    run(go())


def test_disk_full_says_the_label_was_not_saved_keeps_the_item_and_waits_for_enter(tmp_path):
    """A real ENOSPC: the label file is /dev/full, which fails every write as a full disk does."""
    app, session, store = make_app(tmp_path)
    label_file = tmp_path / "annotations" / "alice.jsonl"
    label_file.parent.mkdir(parents=True, exist_ok=True)
    label_file.symlink_to("/dev/full")
    said = "Disk full — this label was NOT saved. Free space, then press the key again."

    async def go():
        async with app.run_test(size=(80, 24)) as pilot:
            item = session.current
            await pilot.press("1")
            assert isinstance(app.screen, MessageScreen) and app.screen.body.startswith(said)
            assert said in dialog_text(app)  # readable at 80x24
            assert session.current is item and store.events == [] and session.progress()["done"] == 0
            await pilot.press("2", "3", "space")  # keys meant as labels neither close it nor label
            assert isinstance(app.screen, MessageScreen) and store.events == []
            await pilot.press("enter")
            assert isinstance(app.screen, AnnotateScreen) and shown(app, "#hypothesis") == item.hypothesis
            label_file.unlink()  # space freed
            await pilot.press("1")
            assert isinstance(app.screen, AnnotateScreen) and session.current is not item
            await pilot.press("q")

    run(go())
    assert [(e["item"], e["label"]) for e in label_events(tmp_path)] == [(item_id(session, 0), "valid")]


def dialog_text(app) -> str:
    """The text inside a dialog's frame, lines folded (what is drawn around it left out)."""
    inside = [
        line[line.index("█") + 1 : line.rindex("█")] for line in screen_text(app).splitlines() if line.count("█") >= 2
    ]
    return " ".join(" ".join(inside).split())


def item_id(session, position: int) -> str:
    return next(i.id for i in session.all_items if i.position == position)


def test_unreadable_settings_file_is_reported_and_ignored(tmp_path):
    (tmp_path / "annotations").mkdir()
    (tmp_path / "annotations" / "alice.settings.json").write_text("{not json")
    app, session, store = make_app(tmp_path)

    async def go():
        async with app.run_test() as pilot:
            assert isinstance(app.screen, MessageScreen) and "alice.settings.json is unreadable" in app.screen.body
            await pilot.press("enter", "1")
            assert len(label_events(tmp_path)) == 1
            await pilot.press("q")

    run(go())


def test_unknown_key_binding_is_reported_and_known_remaps_work(tmp_path):
    app, session, store = make_app(tmp_path, keys={"valid_pro": "a", "sparkle": "z"})

    async def go():
        async with app.run_test() as pilot:
            assert isinstance(app.screen, MessageScreen) and "sparkle" in app.screen.body
            await pilot.press("enter")
            assert "a valid-pro" in screen_text(app)  # the key bar shows the remapped key
            item = session.current.id
            await pilot.press("a")
            assert store.states[item].label == "valid" and store.states[item].stance == "pro"
            await pilot.press("question_mark")
            assert "a" in app.screen.rows[0][0]
            await pilot.press("escape")
            await pilot.press("q")

    run(go())


def test_break_reminder_and_stats(tmp_path):
    app, session, store = make_app(tmp_path, break_every_items=3)

    async def go():
        async with app.run_test() as pilot:
            await pilot.press("3", "3", "3")
            assert isinstance(app.screen, BreakScreen)
            await pilot.press("space")
            await pilot.press("t")
            await pilot.press("space")
            assert isinstance(app.screen, AnnotateScreen)
            await pilot.press("q")

    run(go())


def test_adjudication_serves_only_disagreements(tmp_path):
    from workbench.annotation.session import disagreements

    synthetic_queue(tmp_path / "ws", 10)
    folder = tmp_path / "annotations"
    a, b = LabelStore(folder, "a"), LabelStore(folder, "b")
    for i in range(10):
        a.label(f"item{i:06d}", "invalid")
        b.label(f"item{i:06d}", "invalid" if i % 3 else "incoherent")
    items = load_items(Workspace(tmp_path / "ws"))
    votes = disagreements(folder, items, "adjudicator", 2, "judge", NLI_SCHEME)
    assert sorted(votes) == ["item000000", "item000003", "item000006", "item000009"]
    app, session, store = make_app(tmp_path, annotator="judge", adjudicate_with=votes)

    async def go():
        async with app.run_test() as pilot:
            assert [i.id for i in session.visible] == sorted(votes)
            assert "others a: invalid, b: incoherent" in flat(screen_text(app))
            await pilot.press("3")
            await pilot.press("q")

    run(go())


def test_undo_of_a_relabel_says_on_the_saved_line_and_which_label_is_back(tmp_path):
    app, session, store = make_app(tmp_path)

    async def go():
        async with app.run_test(notifications=True) as pilot:
            await pilot.press("1", "left", "3")  # item 0: valid-pro, then invalid
            assert shown(app, "#saved") == "✓ saved: invalid on “group0 are w0 people.”"
            await pilot.press("u")
            assert shown(app, "#saved") == "↶ undone: invalid on “group0 are w0 people.”"
            assert any(t == "Undone: invalid; your earlier label valid-pro is back" for t in toasts(app))
            assert store.states["item000000"].label == "valid" and store.states["item000000"].stance == "pro"
            await pilot.press("q")

    run(go())


def test_the_state_line_fits_80_columns_with_a_flag_and_history_review(tmp_path):
    """Reviewing a flagged item deep in a long history: the state line keeps the label, the flag
    and where you are within 78 cells, dropping the key hints first."""
    app, session, store = make_app(tmp_path, n=120)

    async def go():
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.press(*("2" * 105))  # 105 items labelled valid-anti
            await pilot.press("left", "left")
            await pilot.press("f")  # flag the item under review
            line = shown(app, "#state")
            assert session.reviewing and "⚑" in line and "yours: valid-anti" in line, line
            assert "HISTORY 104/105" in line and len(line) <= 78, line
            await pilot.resize_terminal(60, 24)  # a narrower window: both lines fitted again
            await pilot.pause()
            assert len(shown(app, "#state")) <= 58 and "⚑" in shown(app, "#state"), shown(app, "#state")
            assert len(shown(app, "#topbar")) <= 58, shown(app, "#topbar")
            await pilot.press("q")

    run(go())
    store.close()


def test_fit_line_drops_hints_then_shortens_then_cuts():
    from workbench.tui.annotate_screen import fit_line

    parts = [("yours: ", "", 0), ("valid-anti", "", 0), ("  ⚑ flagged", "", 0), ("  ·  ", "", 0)]
    parts += [("◀ REVIEWING HISTORY 104/105", "", 0), (" → newer · End: newest", "", 1)]
    whole = "".join(t for t, _, _ in parts)
    assert fit_line(parts, 200).plain == whole  # it fits: kept whole
    assert fit_line(parts, 70).plain == "yours: valid-anti  ⚑ flagged  ·  ◀ REVIEWING HISTORY 104/105"
    assert fit_line(parts, 50).plain == "yours: valid-anti ⚑ · ◀ HISTORY 104/105"
    cut = fit_line(parts, 20).plain
    assert len(cut) == 20 and cut.endswith("…") and cut.startswith("yours: valid-anti")
