"""Masked-LM fills as the sentence writes them (#44): a fill that agrees with a group takes the
form the group needs ("Older workers Takes change" from a random model -> "take"), and a fill
has a capital only at a sentence start, or where it is an acronym or a name by the masked LM's
own tokenizer. Templates written for these tests; fills forced on the tiny fixture models."""

from __future__ import annotations

import pytest

from conftest import write_project
from test_generate import boosted
from workbench import languages
from workbench.core.config import load_config
from workbench.core.workspace import Workspace
from workbench.kinds import pipeline_for
from workbench.kinds.nli.stages.generate import written_fills

EN = languages.find("en")


def template(groups: tuple[str, str], *hypotheses: str, premise: str = "{{GROUP1}} and {{GROUP2}} met.") -> str:
    hyps = "\n".join(f'  - text: "{h}"\n    true_label: neutral\n    bias_label: entailment' for h in hypotheses)
    return (
        f"format: workbench-template/1\nid: t1\ndomain: age\n"
        f'groups: {{GROUP1: "{groups[0]}", GROUP2: "{groups[1]}"}}\n'
        f'premises:\n  - text: "{premise}"\nhypotheses:\n{hyps}\n'
    )


def generate(root, model, text: str, language: str = "en", stages=("expand", "generate")) -> dict:
    extra = f'[project]\nlanguage = "{language}"\n' if language != "en" else ""
    write_project(root, {"t1.yaml": text}, f'{extra}[generate]\nmodel = "{model}"\ntop_k = 1\n')
    config = load_config(root / "workbench.toml")
    for stage in stages:
        pipeline_for(config).run(stage)
    ws = Workspace(config.path("workspace"))
    return {stage: ws.read(stage).to_pylist() for stage in stages}


def by_stance(rows) -> dict[str, dict]:
    return {r["stance"]: r for r in rows}


def test_a_verb_filled_after_a_group_agrees_and_loses_its_capital(fixture_models, tmp_path):
    model = boosted(fixture_models, tmp_path, "bert", {"Takes": 60.0})
    rows = by_stance(
        generate(tmp_path / "p", model, template(("Older workers", "a young nurse"), "{{GROUP1}} <mask:VERB> change."))[
            "generate"
        ]
    )
    assert rows["pro"]["fill_tokens"] == ["Takes"]  # what the masked LM said
    assert rows["pro"]["hypothesis"] == "Older workers take change."
    assert rows["pro"]["fill"] == ["take"]  # the fill as the sentence writes it
    assert rows["anti"]["hypothesis"] == "a young nurse takes change."
    start, end = rows["pro"]["fill_spans"][0]
    assert rows["pro"]["hypothesis"][start:end] == "take"


def test_an_auxiliary_filled_after_a_group_agrees(fixture_models, tmp_path):
    model = boosted(fixture_models, tmp_path, "bert", {"is": 60.0})
    rows = by_stance(
        generate(
            tmp_path / "p",
            model,
            template(("Older workers", "a young nurse"), "They say {{GROUP1}} <mask> often careless."),
        )["generate"]
    )
    assert rows["pro"]["hypothesis"] == "They say Older workers are often careless."
    assert rows["anti"]["hypothesis"] == "They say a young nurse is often careless."


def test_a_word_of_another_subject_is_not_agreed(fixture_models, tmp_path):
    model = boosted(fixture_models, tmp_path, "bert", {"is": 60.0})
    rows = by_stance(
        generate(
            tmp_path / "p",
            model,
            template(("older workers", "a young nurse"), "The office of {{GROUP1}} <mask> empty."),
        )["generate"]
    )
    assert rows["pro"]["hypothesis"] == "The office of older workers is empty."


def test_a_fill_opening_the_sentence_is_capitalised(fixture_models, tmp_path):
    model = boosted(fixture_models, tmp_path, "bert", {"older": 60.0})
    rows = by_stance(
        generate(
            tmp_path / "p",
            model,
            template(
                ("women", "men"), "<mask:ADJ> {{GROUP1}} are calm.", premise="Some {{GROUP1}} and {{GROUP2}} met."
            ),
        )["generate"]
    )
    assert rows["pro"]["hypothesis"] == "Older women are calm."
    assert rows["pro"]["fill"] == ["Older"]


def test_a_capitalised_fill_inside_a_sentence_is_lower_cased(fixture_models, tmp_path):
    model = boosted(fixture_models, tmp_path, "bert", {"Lazy": 60.0})
    rows = by_stance(
        generate(tmp_path / "p", model, template(("women", "men"), "{{GROUP1}} are <mask> at work."))["generate"]
    )
    assert rows["pro"]["hypothesis"] == "women are lazy at work."  # no POS: the tokenizer knows "lazy"


class _Names:
    """A stand-in for the tokenizer's verdict: "Paris" is a name, every other word a common word."""

    def common(self, word: str) -> bool:
        return word != "Paris"


@pytest.mark.parametrize(
    "masked, mask_pos, fill, expected",
    [
        ("women visit <mask> often.", None, "Paris", "Paris"),  # a name by the tokenizer
        ("women visit <mask> often.", [["PROPN", "NOUN"]], "Paris", "Paris"),
        ("women visit <mask> often.", [["NOUN"]], "Paris", "paris"),  # a common noun by the mask's POS
        ("women use <mask> tools.", None, "NASA", "NASA"),  # an acronym
        ("women use <mask> tools.", None, "iPhone", "iPhone"),  # mixed case
        ("women and <mask> agree.", None, "I", "I"),  # written so anywhere
        ("women <mask> change.", [["VERB"]], "Takes", "takes"),
        ("<mask> women agree.", None, "older", "Older"),  # a sentence start
        ("Women agree. <mask> men agree too.", None, "older", "Older"),
        ('"<mask> women agree."', None, "older", "Older"),
    ],
)
def test_casing_of_one_fill(masked, mask_pos, fill, expected):
    sample = {"hypothesis": masked, "mask_pos": mask_pos}
    assert written_fills(sample, [fill], EN, _Names()) == [expected]


def test_french_verb_fill_agrees_with_a_plural_group(fixture_models, tmp_path):
    model = boosted(fixture_models, tmp_path, "bert-fr", {"prépare": 60.0})
    out = generate(
        tmp_path / "p",
        model,
        template(("les infirmières", "un ingénieur"), "{{GROUP1}} <mask:VERB> le dîner."),
        language="fr",
    )
    rows = by_stance(out["generate"])
    assert rows["pro"]["hypothesis"] == "les infirmières préparent le dîner."
    assert rows["anti"]["hypothesis"] == "un ingénieur prépare le dîner."
    assert rows["pro"]["candidate_id"] != rows["anti"]["candidate_id"]
