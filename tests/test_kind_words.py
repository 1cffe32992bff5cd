"""Every screen around an item speaks its kind's words (issue 45, item 4): the help's keys, the
filter and search captions, the opt-out list, `annotations stats`, the content note in the terminal
and in Label Studio, the card's content warning, the counts `run` and `build` print and the
sections `init` writes. The NLI loop keeps today's words (they are the defaults), and a line named
like a standard source without saying so is refused when its kind registers."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest
from conftest import invoke
from test_annotate_tui import flat, screen_text, shown

import workbench.cli.main  # noqa: F401  (the CLI's consoles are made at import: not inside a running app)
from workbench import kinds
from workbench.annotation import display
from workbench.annotation.session import Item, Session
from workbench.annotation.store import LabelStore
from workbench.kinds.base import GROUP, AnnotatorWords, Field, Kind
from workbench.labelstudio.page import page_for
from workbench.labelstudio.sync import instructions
from workbench.tui.app import AnnotateApp
from workbench.tui.content_note import ContentNoteScreen
from workbench.tui.filter_screen import FilterScreen
from workbench.tui.help_screen import HelpScreen
from workbench.tui.optout_screen import OptOutScreen
from workbench.tui.prompt_screen import PromptScreen

BUILT_IN = ("nli", "stereoset", "crows-pairs", "sos", "sofa", "honest")
# What the terminal said before kinds had words of their own; the NLI loop still says exactly this.
NLI_NOTE = (
    "The sentences you are about to read state stereotypes about social groups. They are "
    "offensive by design: the benchmark tests whether language models accept them.\n\n"
    "Validating them can be tiring and upsetting. Take breaks (a reminder will appear), and "
    "opt out of a domain at any time with the opt-out key (default: o; you can opt back in "
    "there), or with [annotation] opt_out_domains in workbench.toml."
)
NLI_LABEL_STUDIO_NOTE = (
    "The sentences you are about to read state stereotypes about social groups. They are offensive by design: "
    "the benchmark tests whether language models accept them. Validating them can be tiring and upsetting: take "
    "breaks, and stop whenever you need to; tell the project lead about any domain you prefer not to label."
)
NLI_CARD_WARNING = (
    "> **Content warning.** The hypotheses state stereotypes about social groups. They are offensive "
    "by design and are published to measure bias in models, not to endorse them."
)


def items(n=6) -> list[Item]:
    """Pairs of our own in two bias types and two template files."""
    kinds_of = ("age", "disability")
    return [
        Item(
            f"p{i}",
            f"Pair sentence number {i} about a group.",
            kinds_of[i % 2],
            f"file{i % 3}",
            f"file{i % 3}",
            i,
            details=[("less stereotyping", f"Pair sentence number {i} about another group."), ("direction", "stereo")],
        )
        for i in range(n)
    ]


def app_for(tmp_path, kind, its_items, content_note=False):
    store = LabelStore(tmp_path / "annotations", "alice", strict=False, scheme=kind.scheme)
    session = Session(its_items, store, scheme=kind.scheme, words=kind.words)
    return AnnotateApp(session, "alice", content_note=content_note), session


def help_rows(app) -> dict[str, str]:
    return {desc: key for key, desc in app.screen.rows}


def test_crows_pairs_help_filter_search_and_opt_out_say_bias_type_and_template_file(tmp_path):
    kind = kinds.get("crows-pairs")
    app, session = app_for(tmp_path, kind, items())

    async def go():
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.press("question_mark")
            assert isinstance(app.screen, HelpScreen)
            rows = help_rows(app)
            assert "filter by bias type, template file, status" in rows
            assert "search first sentences" in rows and "opt out of bias types (or back in)" in rows
            said = " ".join(desc for desc in rows)
            assert "domain" not in said and "hypotheses" not in said
            progress = dict(app.screen.sections)["Progress"]
            assert "opted-out bias types left out" in progress
            await pilot.press("escape", "d")
            assert isinstance(app.screen, FilterScreen)
            text = flat(screen_text(app))
            assert "Bias type" in text and "Template file" in text and "Status" in text
            assert "Domain" not in text and "Subtopic" not in text
            await pilot.press("down", "enter")  # the first bias type: age
            assert "bias type=age" in shown(app, "#filters")
            await pilot.press("slash")
            assert isinstance(app.screen, PromptScreen) and "Search first sentences" in flat(screen_text(app))
            await pilot.press("escape", "o")
            assert isinstance(app.screen, OptOutScreen)
            text = flat(screen_text(app))
            assert "Opt out of bias types" in text and "Ticked bias types are hidden" in text
            await pilot.press("escape", "q")

    asyncio.run(go())


def test_the_nli_loop_keeps_todays_words_everywhere(tmp_path):
    nli = kinds.get("nli")
    assert display.content_note(nli.words) == NLI_NOTE
    assert display.content_note(nli.words, medium="labelstudio") == NLI_LABEL_STUDIO_NOTE
    assert display.key_descriptions(nli.words) == {
        "filter": "filter by domain, subtopic, status",
        "search": "search hypotheses and templates",
        "opt_out": "opt out of domains (or back in)",
    }
    from workbench.kinds.nli.card import _content_warning

    assert _content_warning() == [NLI_CARD_WARNING, ""]
    # a kind that declares no words of its own gets the same (the defaults)
    assert display.content_note(None) == NLI_NOTE
    app, session = app_for(tmp_path, nli, items(), content_note=True)

    async def go():
        async with app.run_test(size=(80, 24)) as pilot:
            assert isinstance(app.screen, ContentNoteScreen)
            assert flat(NLI_NOTE) in flat(screen_text(app))
            await pilot.press("enter", "d")
            text = flat(screen_text(app))
            assert "Domain" in text and "Subtopic" in text
            await pilot.press("escape", "q")

    asyncio.run(go())


@pytest.mark.parametrize("name", BUILT_IN)
def test_each_kind_says_what_its_items_contain_before_the_first_one(name, tmp_path):
    kind = kinds.get(name)
    words = kind.words
    assert words.content_note and words.content_warning
    note = display.content_note(words)
    assert note.startswith(words.content_note) and re.search(f"opt out of an? {words.domain} at any time", note)
    page = instructions(page_for(kind.scheme, words))
    assert "<h3>Content note</h3>" in page and words.content_note in page
    assert f"any {words.domain} you prefer not to label" in page
    app, session = app_for(tmp_path, kind, items(2), content_note=True)

    async def go():
        async with app.run_test(size=(80, 24)) as pilot:
            assert isinstance(app.screen, ContentNoteScreen)
            assert flat(words.content_note) in flat(screen_text(app))
            await pilot.press("escape")

    asyncio.run(go())


def test_the_notes_name_what_each_kind_really_contains():
    """SOS's items are profanity, HONEST's are neutral templates: neither is told it reads stereotypes."""
    said = {name: kinds.get(name).words for name in BUILT_IN}
    assert "profan" in said["sos"].content_note and "profanity" in said["sos"].content_warning
    assert "neutral" in said["honest"].content_note and "hurtful" in said["honest"].content_note
    assert "neutral" in said["honest"].content_warning and "stereotype" not in said["honest"].content_note
    assert "stereotype" in said["sofa"].content_note and "stereotype" in said["crows-pairs"].content_note
    assert len({w.content_note for w in said.values()}) == len(BUILT_IN)  # each in its own words


def test_a_kind_whose_items_need_no_note_starts_at_the_first_item(tmp_path):
    crows = kinds.get("crows-pairs")
    import dataclasses

    quiet = dataclasses.replace(crows, words=dataclasses.replace(crows.words, content_note="", content_warning=""))
    app, session = app_for(tmp_path, quiet, items(2), content_note=True)

    async def go():
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            assert not isinstance(app.screen, ContentNoteScreen)
            assert shown(app, "#hypothesis") == session.current.hypothesis
            await pilot.press("q")

    asyncio.run(go())
    assert "Content note" not in instructions(page_for(quiet.scheme, quiet.words))
    from workbench.release.generic import content_warning

    assert content_warning(quiet.words) == []


def sos_project(root: Path, runner, monkeypatch) -> Path:
    """`workbench init --kind sos` then `run`, in ROOT; cwd is the project."""
    assert invoke(runner, "init", str(root), "--kind", "sos").exit_code == 0
    monkeypatch.chdir(root)
    return root


def test_annotations_stats_heads_an_sos_project_by_attribute_and_profane_sentence(tmp_path, runner, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    sos_project(tmp_path / "sos", runner, monkeypatch)
    ran = invoke(runner, "run")
    assert ran.exit_code == 0, ran.output
    assert "masked_samples" not in ran.output  # no NLI counts for a kind that masks nothing
    assert "samples" not in ran.output
    again = invoke(runner, "expand")
    assert re.search(r"expand: up to date \(\d+ pairs\)", again.output), again.output  # the kind's word for its rows
    from workbench.authoring.stages import write_example_labels

    labels = write_example_labels(tmp_path / "sos")
    assert invoke(runner, "annotate", "--annotator", "ann", "--labels-from", str(labels)).exit_code == 0
    result = invoke(runner, "annotations", "stats")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "Final labels (single) per attribute and template file" in out
    header = next(line for line in out.splitlines() if "items" in line and "valid" in line)
    assert re.search(r"attribute\s+┃\s+template file\s+┃\s+items", header), header
    examples = next(line for line in out.splitlines() if "label" in line and "profane sentence" in line)
    assert "attribute" in examples and "hypothesis" not in out and "domain" not in out
    as_json = invoke(runner, "annotations", "stats", "--json", str(tmp_path / "stats.json"))
    assert as_json.exit_code == 0, as_json.output
    shown = json.loads((tmp_path / "stats.json").read_text(encoding="utf-8"))["examples"]
    assert shown and all(set(e) == {"label", "domain", "text"} for e in shown)  # the item's text, in no kind's word
    built = invoke(runner, "build", "--version", "1.0.0")
    assert built.exit_code == 0, built.output
    assert re.search(r"build: \d+ pairs in 2 attribute\(s\)", built.stdout), built.stdout
    card = (tmp_path / "sos" / "exports" / "sos" / "1.0.0" / "README.md").read_text()
    assert "> **Content warning.** " + kinds.get("sos").words.content_warning in card
    assert "concern stereotypes" not in card
    assert "| attribute | items |" in card and "| attribute | template file | items |" in card  # Size, Validation
    assert "| domain |" not in card and "subtopic" not in card


@pytest.mark.parametrize(
    "name, sections",
    [
        ("sos", {"generate": False, "label_overrides": False}),
        ("crows-pairs", {"generate": False, "label_overrides": False}),
        ("honest", {"generate": False, "label_overrides": False}),
        ("sofa", {"generate": False, "label_overrides": False}),
        ("stereoset", {"generate": True, "label_overrides": False}),  # its masked LM proposes BLANK words
        ("nli", {"generate": True, "label_overrides": True}),
    ],
)
def test_init_writes_only_the_sections_the_kind_reads(name, sections, tmp_path, runner, monkeypatch):
    assert invoke(runner, "init", str(tmp_path / "p"), "--kind", name).exit_code == 0
    text = (tmp_path / "p" / "workbench.toml").read_text()
    assert ("[generate]" in text) == sections["generate"]
    assert ("label_overrides" in text) == sections["label_overrides"]
    assert "[evaluate]" in text and "[annotation]" in text
    monkeypatch.chdir(tmp_path / "p")
    checked = invoke(runner, "validate")
    assert checked.exit_code == 0, checked.output


def test_a_line_named_like_a_standard_source_without_saying_so_is_refused_when_the_kind_registers():
    from workbench.core.labels import VALIDITY_SCHEME

    ambiguous = AnnotatorWords("Fine?", fields=(("sentence", "the text"), ("group", "the group it is about")))
    assert ambiguous.ambiguous() and "group" in ambiguous.ambiguous()[0]
    with pytest.raises(
        ValueError,
        match=r"kind 'toy': line 'group' is named like the standard source 'group'.*"
        r"source=GROUP",
    ):
        Kind(name="toy", description="a toy", scheme=VALIDITY_SCHEME, words=ambiguous)
    said = AnnotatorWords("Fine?", fields=(("sentence", "the text"), Field("group", "the group", GROUP)))
    assert Kind(name="toy", description="a toy", scheme=VALIDITY_SCHEME, words=said).words.ambiguous() == []
    renamed = AnnotatorWords("Fine?", fields=(("sentence", "the text"), ("group named", "the group it is about")))
    assert renamed.ambiguous() == []


def test_a_plugin_with_such_a_line_is_listed_as_broken_and_the_others_still_work(tmp_path, monkeypatch, runner):
    from support.plugins import INIT, plugins_for

    gen = plugins_for(tmp_path, monkeypatch)
    plugins = next(gen)
    try:
        init = (
            INIT.format(kind="grouped", standalone=None)
            .replace("scheme=SCHEME,", "scheme=SCHEME, words=WORDS,")
            .replace(
                "class Layout:",
                "from workbench.kinds.base import AnnotatorWords\n"
                "WORDS = AnnotatorWords('Fine?', fields=(('sentence', 'the text'), "
                "('group', 'the group the sentence is about')))\n\n\nclass Layout:",
            )
        )
        plugins.install("grouped", __init__=init)
        monkeypatch.setenv("COLUMNS", "250")
        result = invoke(runner, "kinds")
        assert result.exit_code == 0, result.output
        assert "grouped" in result.output and "named like the standard source 'group'" in result.output
        assert "sos" in result.output
    finally:
        next(gen, None)


def test_validate_warns_about_a_section_the_kind_never_reads(tmp_path, runner, monkeypatch):
    assert invoke(runner, "init", str(tmp_path / "p"), "--kind", "crows-pairs").exit_code == 0
    monkeypatch.chdir(tmp_path / "p")
    clean = invoke(runner, "validate")
    assert clean.exit_code == 0 and "0 warning(s)" in clean.output, clean.output
    with open("workbench.toml", "a", encoding="utf-8") as f:
        f.write('\n[generate]\nmodel = "bert-base-uncased"\n')
    warned = invoke(runner, "validate")
    assert warned.exit_code == 0 and "1 warning(s)" in warned.output
    assert "[generate] is not read by kind 'crows-pairs'" in warned.output
