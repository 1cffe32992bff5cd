"""Notes of an unsure parse describe the sentence written (#44): a counterfactual's (and the
anti stance's) notes name the groups of that sentence, not those of the rendering the parser
read, and a counterfactual whose fills were chosen for another group than the one it writes
reports the parse's doubts even when the template's own groups are the ones written.
Sentences written for these tests."""

from __future__ import annotations

import pytest

from workbench import languages
from workbench.kinds.nli.templates.counterfactual import counterfactual_with_notes

EN = languages.require("en", "test")
FR = languages.require("fr", "test")

# (language, template, the groups it is written for, a fill for GROUP1 as written, one for the other group)
CASES = [
    (EN, "{{GROUP1}} read the news and <mask:VERB> coffee.", ("engineers", "a nurse"), "drinks", "drinks"),
    (
        FR,
        "{{GROUP1}} travaillent beaucoup et <mask:VERB> peu.",
        ("les infirmières", "un ingénieur"),
        "dorment",
        "dorment",
    ),
]


def groups(pair):
    return {"GROUP1": pair[0], "GROUP2": pair[1]}


@pytest.mark.parametrize("language, template, written, fill, _", CASES)
def test_the_note_of_a_counterfactual_names_its_own_group(language, template, written, fill, _):
    text, notes = counterfactual_with_notes(template, {}, groups(written), [fill], language)
    (note,) = notes
    assert text.lower().startswith(written[1])  # the counterfactual writes the other group
    assert f"may be a verb of {written[1]!r}" in note, note  # and the note names it
    assert repr(written[0]) not in note


@pytest.mark.parametrize("language, template, written, _, fill", CASES)
def test_a_counterfactual_back_to_the_written_groups_reports_the_doubts_about_its_fills(
    language, template, written, _, fill
):
    # The sample is of the anti stance: its fills were chosen for the other group; its
    # counterfactual writes the template's own groups again. The author's words agree with
    # them, but the fills do not have to: the parse's doubt is reported (it was not).
    sample_groups = groups(written[::-1])
    text, notes = counterfactual_with_notes(template, {}, sample_groups, [fill], language, written=groups(written))
    assert text.lower().startswith(written[0])
    (note,) = notes
    assert f"may be a verb of {written[0]!r}" in note, note


def test_no_fill_no_doubt_where_the_groups_written_are_the_templates():
    text, notes = counterfactual_with_notes(
        "{{GROUP1}} read the news and drinks coffee.",
        {},
        groups(("a nurse", "engineers")),
        [],
        EN,
        written=groups(("engineers", "a nurse")),
    )
    assert (text, notes) == ("Engineers read the news and drinks coffee.", [])
