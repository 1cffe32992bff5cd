"""The French example benchmark (examples/french) through the whole construction loop: templates
-> expand -> generate (French POS filter, no a/an, French group words) -> filter -> label ->
counterfactuals -> build -> evaluate, on tiny fixture models (a masked LM with a French vocabulary)."""

from __future__ import annotations

import json
import shutil

import pyarrow.parquet as pq
from conftest import ROOT, invoke

from workbench import languages
from workbench.kinds.nli.demo import write_demo_labels
from workbench.kinds.nli.templates.fills import group_words


def test_the_french_example_goes_through_the_loop(fixture_models, tmp_path, monkeypatch, runner):
    project = tmp_path / "fr"
    shutil.copytree(ROOT / "examples" / "french", project)
    for name in ("mlm-bert-fr", "nli-a", "nli-b", "nli-c", "nli-heldout"):
        shutil.copytree(fixture_models[name], project / "models" / name)
    monkeypatch.chdir(project)

    for args in (("validate",), ("run",)):
        result = invoke(runner, *args)
        assert result.exit_code == 0, (args, result.output, repr(result.exception))
    candidates = pq.read_table(project / ".workbench" / "generate" / "data.parquet").to_pylist()
    french = languages.require("fr", "test")
    # The French verb "a" before a fill is never turned into "an", whatever the fill.
    after_a = [c for c in candidates if " a <mask>" in c["masked_hypothesis"]]
    assert after_a and all(f" a {c['fill'][0]} " in c["hypothesis"] for c in after_a)
    assert not any(c["article_fixed"] for c in candidates)
    # The POS filter reads French tags: it keeps verbs in a VERB slot and rejects other words there.
    verb_slots = [c for c in candidates if c["mask_pos"] == [["VERB"]] and c["reject_reason"] in (None, "pos")]
    assert {c["reject_reason"] for c in verb_slots} == {None, "pos"}
    assert all(c["pos_found"] != "VERB" for c in verb_slots if c["reject_reason"] == "pos")
    # No kept fill is a form of its group's words (French plurals and genders, articles left out).
    for c in candidates:
        if c["kept"]:
            assert c["fill"][0].lower() not in group_words(c["group"], c["counterfactual_group"], language=french)

    write_demo_labels(project, project / "labels.jsonl")
    for args in (
        ("annotate", "--annotator", "ana", "--labels-from", "labels.jsonl"),
        ("counterfactuals",),
        ("build", "--version", "1.0.0"),
    ):
        result = invoke(runner, *args)
        assert result.exit_code == 0, (args, result.output, repr(result.exception))
    release = project / "exports" / "exemple-fr" / "1.0.0"
    assert "language:\n- fr\n" in (release / "README.md").read_text(encoding="utf-8")
    rows = pq.read_table(release / "data" / "all.parquet").to_pylist()
    pairs: dict[str, list] = {}
    for r in rows:
        if r["pair_id"]:
            pairs.setdefault(r["pair_id"], []).append(r)
    assert pairs and all(len(p) == 2 for p in pairs.values())
    for a, b in pairs.values():
        texts = {a["hypothesis"].lower(), b["hypothesis"].lower()}
        # the two sides of a pair differ by the group (femmes/hommes, jeune employé/employé âgé) only
        assert (
            any("femmes" in t for t in texts)
            and any("hommes" in t for t in texts)
            or any("jeune employé" in t for t in texts)
            and any("employé âgé" in t for t in texts)
        ), texts
        assert not any(" an " in t for t in texts)

    result = invoke(runner, "evaluate", str(release), "--json", "scores.json")
    assert result.exit_code == 0, result.output + repr(result.exception)
    scores = json.loads((project / "scores.json").read_text())
    (model,) = scores["models"].values()
    assert model["overall"]["n"] == len(rows) and set(model["by_domain"]) == {"age", "genre"}


# Every sentence the example's templates give, both stances, with one fill per mask (the ones
# below, as the masked LM might propose them) and the counterfactual of each bias sample.
FRENCH_FILLS = {"age_outils": {"VERB": "adopté", "ADJ": "perdu"}, "genre_cuisine": {"VERB": "brûlé", "ADV": "mal"}}
FRENCH_SENTENCES = [
    (
        "age_outils",
        "pro",
        "Un jeune employé et un employé âgé ont reçu un nouveau logiciel au bureau.",
        "un employé âgé a adopté un nouveau logiciel.",
        "Un jeune employé a adopté un nouveau logiciel.",
    ),
    (
        "age_outils",
        "pro",
        "Un jeune employé et un employé âgé ont reçu un nouveau logiciel au bureau.",
        "un employé âgé est perdu avec un nouveau logiciel.",
        "Un jeune employé est perdu avec un nouveau logiciel.",
    ),
    (
        "age_outils",
        "anti",
        "Un employé âgé et un jeune employé ont reçu un nouveau logiciel au bureau.",
        "un jeune employé a adopté un nouveau logiciel.",
        "Un employé âgé a adopté un nouveau logiciel.",
    ),
    (
        "age_outils",
        "anti",
        "Un employé âgé et un jeune employé ont reçu un nouveau logiciel au bureau.",
        "un jeune employé est perdu avec un nouveau logiciel.",
        "Un employé âgé est perdu avec un nouveau logiciel.",
    ),
    (
        "age_outils",
        "pro",
        "Un jeune employé et un employé âgé ont reçu un nouvel ordinateur au bureau.",
        "un employé âgé a adopté un nouvel ordinateur.",
        "Un jeune employé a adopté un nouvel ordinateur.",
    ),
    (
        "age_outils",
        "pro",
        "Un jeune employé et un employé âgé ont reçu un nouvel ordinateur au bureau.",
        "un employé âgé est perdu avec un nouvel ordinateur.",
        "Un jeune employé est perdu avec un nouvel ordinateur.",
    ),
    (
        "age_outils",
        "anti",
        "Un employé âgé et un jeune employé ont reçu un nouvel ordinateur au bureau.",
        "un jeune employé a adopté un nouvel ordinateur.",
        "Un employé âgé a adopté un nouvel ordinateur.",
    ),
    (
        "age_outils",
        "anti",
        "Un employé âgé et un jeune employé ont reçu un nouvel ordinateur au bureau.",
        "un jeune employé est perdu avec un nouvel ordinateur.",
        "Un employé âgé est perdu avec un nouvel ordinateur.",
    ),
    (
        "genre_cuisine",
        "pro",
        "Les femmes et les hommes ont préparé le dîner au centre social.",
        "Quelqu'un a préparé le dîner au centre social.",
        None,
    ),
    (
        "genre_cuisine",
        "pro",
        "Les femmes et les hommes ont préparé le dîner au centre social.",
        "les hommes ont brûlé le dîner.",
        "Les femmes ont brûlé le dîner.",
    ),
    (
        "genre_cuisine",
        "pro",
        "Les femmes et les hommes ont préparé le dîner au centre social.",
        "les hommes cuisinent mal.",
        "Les femmes cuisinent mal.",
    ),
    (
        "genre_cuisine",
        "anti",
        "Les hommes et les femmes ont préparé le dîner au centre social.",
        "Quelqu'un a préparé le dîner au centre social.",
        None,
    ),
    (
        "genre_cuisine",
        "anti",
        "Les hommes et les femmes ont préparé le dîner au centre social.",
        "les femmes ont brûlé le dîner.",
        "Les hommes ont brûlé le dîner.",
    ),
    (
        "genre_cuisine",
        "anti",
        "Les hommes et les femmes ont préparé le dîner au centre social.",
        "les femmes cuisinent mal.",
        "Les hommes cuisinent mal.",
    ),
    (
        "genre_cuisine",
        "pro",
        "Les femmes et les hommes ont préparé le déjeuner au centre social.",
        "Quelqu'un a préparé le déjeuner au centre social.",
        None,
    ),
    (
        "genre_cuisine",
        "pro",
        "Les femmes et les hommes ont préparé le déjeuner au centre social.",
        "les hommes ont brûlé le déjeuner.",
        "Les femmes ont brûlé le déjeuner.",
    ),
    (
        "genre_cuisine",
        "pro",
        "Les femmes et les hommes ont préparé le déjeuner au centre social.",
        "les hommes cuisinent mal.",
        "Les femmes cuisinent mal.",
    ),
    (
        "genre_cuisine",
        "anti",
        "Les hommes et les femmes ont préparé le déjeuner au centre social.",
        "Quelqu'un a préparé le déjeuner au centre social.",
        None,
    ),
    (
        "genre_cuisine",
        "anti",
        "Les hommes et les femmes ont préparé le déjeuner au centre social.",
        "les femmes ont brûlé le déjeuner.",
        "Les hommes ont brûlé le déjeuner.",
    ),
    (
        "genre_cuisine",
        "anti",
        "Les hommes et les femmes ont préparé le déjeuner au centre social.",
        "les femmes cuisinent mal.",
        "Les hommes cuisinent mal.",
    ),
]


def test_the_french_example_renders_every_sentence_as_expected():
    """examples/french in full: premises and hypotheses in both stances (expand), each filled,
    and the counterfactual the release would add for each bias sample; no note for annotators."""
    from workbench.kinds.nli.templates.counterfactual import counterfactual_with_notes, written_groups
    from workbench.kinds.nli.templates.expand import expand_all
    from workbench.kinds.nli.templates.fills import apply_fills
    from workbench.kinds.nli.templates.loader import load_templates

    french = languages.require("fr", "test")
    templates, problems = load_templates([ROOT / "examples" / "french" / "templates"])
    assert templates and not [p for p in problems if p.severity == "error"]
    got = []
    for r in expand_all(templates, french):
        assert not r["grammar"], r["grammar"]
        fills = [FRENCH_FILLS[r["template_id"]][pos[0]] for pos in r["mask_pos"]]
        filled = apply_fills(r["hypothesis"], fills, language=french).text if fills else r["hypothesis"]
        cf = None
        if r["kind"] == "bias":
            cf, notes = counterfactual_with_notes(
                r["hypothesis_template"], dict(r["bindings"]), r["groups"], fills, french, written_groups(r)
            )
            assert not notes, notes
        got.append((r["template_id"], r["stance"], r["premise"], filled, cf))
    assert got == FRENCH_SENTENCES
