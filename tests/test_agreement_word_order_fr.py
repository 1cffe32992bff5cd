"""French words the small parser gives a group that is not their subject (#56): a group in a
relative clause, after a preposition, before the verb of a second subject or in a coordinated
clause was read as the subject of another clause's verb, which expand and counterfactuals then
changed ("Le chef des infirmières travaillent", "Le patron qui embauche les infirmières sont
exigeant"). Word order now overrules the parse: such a word is left as written with a note for
annotators, never changed silently, and the verbs that do agree still change. Sentences written
for these tests."""

from __future__ import annotations

import pytest

from test_spelling import templates_of
from workbench import languages
from workbench.kinds.nli.templates.counterfactual import counterfactual_with_notes
from workbench.kinds.nli.templates.expand import expand_all

FR = languages.require("fr", "test")
GROUPS = ("un ingénieur", "les infirmières")  # GROUP1 singular as written; the anti stance puts in the plural
PREMISE = "{{GROUP1}} et {{GROUP2}} travaillent."

# (class, template, anti stance as written out, a word every note about it names)
LEFT_AS_WRITTEN = [
    ("relative", "Le livre que {{GROUP1}} lit est cher.", "Le livre que les infirmières lit est cher.", "'lit'"),
    (
        "relative",
        "L'outil que {{GROUP1}} utilise coûte cher.",
        "L'outil que les infirmières utilise coûte cher.",
        "'utilise'",
    ),
    (
        "relative",
        "Le patron qui embauche {{GROUP1}} est exigeant.",
        "Le patron qui embauche les infirmières est exigeant.",
        "'embauche'",
    ),
    ("preposition", "Le chef de {{GROUP1}} travaille beaucoup.", "Le chef des infirmières travaille beaucoup.", "'de'"),
    ("preposition", "Le salaire de {{GROUP1}} reste bas.", "Le salaire des infirmières reste bas.", "'de'"),
    (
        "second subject",
        "Le projet dont {{GROUP1}} parle avance vite.",
        "Le projet dont les infirmières parle avance vite.",
        "'parle'",
    ),
    (
        "second subject",
        "{{GROUP1}} cuisine mais l'enfant mange peu.",
        "les infirmières cuisine mais l'enfant mange peu.",
        "'cuisine'",
    ),
    (
        "coordinated",
        "Le patron dort et {{GROUP1}} travaille.",
        "Le patron dort et les infirmières travaille.",
        "'travaille'",
    ),
    (
        "coordinated",
        "Le patron dort, {{GROUP1}} travaille.",
        "Le patron dort, les infirmières travaille.",
        "'travaille'",
    ),
]

# the same classes where the parse is right: the group's own verb agrees, the other subject's does not
AGREED = [
    (
        "relative",
        "Le chef pour qui {{GROUP1}} travaille part demain.",
        "Le chef pour qui les infirmières travaillent part demain.",
    ),
    ("preposition", "Le bureau de {{GROUP1}} est vide.", "Le bureau des infirmières est vide."),
    ("preposition", "Selon {{GROUP1}}, le travail est difficile.", "Selon les infirmières, le travail est difficile."),
    (
        "second subject",
        "{{GROUP1}} pense que le directeur travaille trop.",
        "les infirmières pensent que le directeur travaille trop.",
    ),
    (
        "second subject",
        "Le directeur pense que {{GROUP1}} travaille trop.",
        "Le directeur pense que les infirmières travaillent trop.",
    ),
    ("coordinated", "{{GROUP1}} travaille et le patron dort.", "les infirmières travaillent et le patron dort."),
    ("coordinated", "{{GROUP1}} parle, le client écoute.", "les infirmières parlent, le client écoute."),
]


def _anti(tmp_path, written: str) -> dict:
    rows = expand_all(templates_of(tmp_path, GROUPS, PREMISE, [written]), FR)
    (row,) = [r for r in rows if r["stance"] == "anti"]
    return row


@pytest.mark.parametrize("kind, written, anti, word", LEFT_AS_WRITTEN)
def test_expand_leaves_a_word_of_another_subject_as_written_and_notes_it(tmp_path, kind, written, anti, word):
    row = _anti(tmp_path, written)
    assert row["hypothesis"] == anti
    notes = [n for n in row["grammar"] if n.startswith("hypothesis: ")]
    assert any(word in n and "'les infirmières'" in n for n in notes), notes
    assert not [n for n in notes if "does not agree" in n], notes  # no note asks to change another subject's word


@pytest.mark.parametrize("kind, written, anti", AGREED)
def test_expand_still_agrees_the_group_s_own_verb(tmp_path, kind, written, anti):
    row = _anti(tmp_path, written)
    assert row["hypothesis"] == anti
    assert not [n for n in row["grammar"] if n.startswith("hypothesis: ")], row["grammar"]


@pytest.mark.parametrize("kind, written, anti, word", LEFT_AS_WRITTEN)
def test_counterfactuals_leave_a_word_of_another_subject_as_written_and_note_it(kind, written, anti, word):
    text, notes = counterfactual_with_notes(written, {}, {"GROUP1": GROUPS[0], "GROUP2": GROUPS[1]}, [], FR)
    assert text == anti[0].upper() + anti[1:]
    assert any(word in n and "'les infirmières'" in n for n in notes), notes


@pytest.mark.parametrize("kind, written, anti", AGREED)
def test_counterfactuals_still_agree_the_group_s_own_verb(kind, written, anti):
    text, notes = counterfactual_with_notes(written, {}, {"GROUP1": GROUPS[0], "GROUP2": GROUPS[1]}, [], FR)
    assert (text, notes) == (anti[0].upper() + anti[1:], [])
