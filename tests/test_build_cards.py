"""What a build says about itself (issue 34, points 4-6): it refuses queue items without a final
label unless told to leave them out (and the card says so); the card's licence, description and
notes come from the maintainer; the changelog shows an edited row as one change, before and after,
with the reason; and nothing in a release names a path of the maintainer's machine."""

from __future__ import annotations

import csv
import importlib
import io
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml
from conftest import invoke
from test_release import labelled_project, write_labels  # noqa: F401 (the NLI project fixture)


def example(kind: str, folder: Path) -> Path:
    return importlib.import_module(f"workbench.kinds.{kind.replace('-', '_')}.example").write_example_project(folder)


def queue(project: Path) -> list[dict]:
    return pq.read_table(project / ".workbench" / "queue" / "data.parquet").to_pylist()


def label_all_but(project: Path, runner, skip: int) -> list[dict]:
    """The example annotator labels every queue item but the first `skip`; returns those left."""
    from workbench.authoring.stages import write_example_labels

    lines = write_example_labels(project).read_text().splitlines()
    path = project / "some.jsonl"
    path.write_text("".join(line + "\n" for line in lines[skip:]))
    assert invoke(runner, "annotate", "-a", "ann", "--labels-from", str(path)).exit_code == 0
    left = {json.loads(line)["item_id"] for line in lines[:skip]}
    return [q for q in queue(project) if q["item_id"] in left]


def card_of(folder: Path) -> tuple[dict, str]:
    text = (folder / "README.md").read_text()
    _, header, body = text.split("---", 2)
    return yaml.safe_load(header), body


def changes(folder: Path) -> list[dict]:
    return list(csv.DictReader(io.StringIO((folder / "changes.csv").read_text())))


def no_local_paths(folder: Path, *paths: Path) -> None:
    """No file of the release names the project's folder (or the other paths given), nor exports/."""
    for f in folder.rglob("*"):
        if f.is_file() and f.suffix != ".parquet":
            text = f.read_text(encoding="utf-8")
            for path in paths:
                assert str(path) not in text, f"{f.relative_to(folder)} names {path}"
            assert "exports/" not in text, f"{f.relative_to(folder)} names exports/"


@pytest.mark.parametrize("kind", ["crows-pairs", "sofa"])
def test_build_refuses_undecided_items_and_leaves_them_out_only_when_told(kind, tmp_path, monkeypatch, runner):
    project = example(kind, tmp_path / kind)
    monkeypatch.chdir(project)
    assert invoke(runner, "run").exit_code == 0
    left = label_all_but(project, runner, 2)
    total = len(queue(project))
    refused = invoke(runner, "build", "--version", "1.0.0")
    message = str(refused.exception)
    assert refused.exit_code == 2 and f"2 of the {total} queue items have no final label yet (2 unlabelled)" in message
    for item in left:  # which ones, by id and text
        assert f"{item['item_id']}  {item['hypothesis']}" in message
    assert "--allow-unlabelled" in message and not (project / "exports").exists()

    built = invoke(runner, "build", "--version", "1.0.0", "--allow-unlabelled")
    assert built.exit_code == 0, built.output
    assert f"note: left out of this build (the card says how many): 2 of the {total} queue items" in built.output
    assert all(f"{item['item_id']}  {item['hypothesis']}" in built.output for item in left)
    folder = next((project / "exports").iterdir()) / "1.0.0"
    _, body = card_of(folder)
    assert "## Items left out" in body and "2 item(s) of the annotation queue had no final label" in body
    released = {r["unit_id"] for r in pq.read_table(next((folder / "data").glob("*.parquet"))).to_pylist()}
    assert released and not released & {i["item_id"] for i in left}

    # Once they are labelled, the next version needs no flag, and says why rows came.
    labels = project / "rest.jsonl"
    labels.write_text("".join(json.dumps({"item_id": i["item_id"], "label": "valid"}) + "\n" for i in left))
    assert invoke(runner, "annotate", "-a", "ann", "--labels-from", str(labels)).exit_code == 0
    again = invoke(runner, "build", "--version", "1.1.0")
    assert again.exit_code == 0, again.output
    v11 = folder.parent / "1.1.0"
    assert "## Items left out" not in card_of(v11)[1]
    added = changes(v11)
    assert added and {c["change"] for c in added} == {"added"} and {c["reason"] for c in added} == {"labels changed"}


def test_nli_build_refuses_disagreements_then_shows_a_new_stance_as_an_edit(
    labelled_project,  # noqa: F811
    runner,
    fixture_models,
):
    project = labelled_project
    toml = project / "workbench.toml"
    toml.write_text(
        toml.read_text().replace(
            "[project]\n", '[project]\ndescription = "Our own sentences about age, gender and disability at work."\n'
        )
    )
    items = queue(project)
    valid = [i for k, i in enumerate(items) if k % 4 == 0]  # the fixture's alice: valid-pro
    # bob disagrees with alice on two items: under the single policy nobody has decided them
    write_labels(project / "bob.jsonl", valid[:2], lambda k: "invalid")
    assert invoke(runner, "annotate", "-a", "bob", "--labels-from", str(project / "bob.jsonl")).exit_code == 0
    refused = invoke(runner, "build", "--version", "1.0.0")
    assert refused.exit_code == 2, refused.output
    assert f"2 of the {len(items)} queue items have no final label yet (2 disagreement)" in str(refused.exception)
    assert all(i["item_id"] in str(refused.exception) for i in valid[:2])
    built = invoke(runner, "build", "--version", "1.0.0", "--allow-unlabelled")
    assert built.exit_code == 0, built.output
    folder = project / "exports" / "demo-bias" / "1.0.0"
    _, body = card_of(folder)
    assert "2 item(s) of the annotation queue had no final label" in body
    assert body.index("Our own sentences about age") < body.index("## Load")  # the maintainer's words on top

    # bob withdraws; alice now says the third valid item states the opposite of the stereotype
    write_labels(project / "bob.jsonl", valid[:2], lambda k: "valid-pro")
    assert invoke(runner, "annotate", "-a", "bob", "--labels-from", str(project / "bob.jsonl")).exit_code == 0
    write_labels(project / "alice.jsonl", valid[2:3], lambda k: "valid-anti")
    assert invoke(runner, "annotate", "-a", "alice", "--labels-from", str(project / "alice.jsonl")).exit_code == 0
    assert invoke(runner, "build", "--version", "1.1.0").exit_code == 0
    v11 = project / "exports" / "demo-bias" / "1.1.0"
    edited = [c for c in changes(v11) if c["change"] == "edited"]
    flipped = valid[2]["hypothesis"]
    mine = [c for c in edited if c["previous_text"].lower().startswith(flipped.lower())]
    assert mine and all(c["reason"] == "labels changed" for c in mine)
    assert all(c["previous_text"].endswith("(pro)") and c["text"].endswith("(anti)") for c in mine)
    assert not [c for c in changes(v11) if c["change"] == "removed" and c["text"].lower().startswith(flipped.lower())]
    log = (v11 / "CHANGELOG.md").read_text()
    assert "edited (labels changed)" in log and f"(was `{mine[0]['previous_id']}`), labels changed:" in log
    # the fixture models are local folders: a release names them by their folder's name only
    no_local_paths(v11, project, Path(fixture_models["mlm-bert"]).parent)
    assert "mlm-bert (a local folder)" in (v11 / "README.md").read_text()


CROWS_FILE = """\
format: workbench-crows-pairs/1
id: work
description: Pairs about people at work, written for this test.
bias_type: age
groups:
  more: [Older workers]
  less: [Younger workers]
templates:
  - "{{GROUP}} are slow at the office."
pairs:
  - {more: "The old clerk is slow with the laptop.", less: "The young clerk is slow with the laptop."}
  - {more: "Older people forget names.", less: "Younger people forget names."}
"""


def test_crows_pairs_licence_description_notes_and_edits(tmp_path, monkeypatch, runner):
    project = tmp_path / "cp"
    (project / "templates").mkdir(parents=True)
    (project / "templates" / "work.yaml").write_text(CROWS_FILE)
    toml = project / "workbench.toml"
    toml.write_text('[project]\nname = "cp"\nkind = "crows-pairs"\n')
    monkeypatch.chdir(project)

    def label_everything_valid():
        assert invoke(runner, "run").exit_code == 0
        path = project / "l.jsonl"
        path.write_text("".join(json.dumps({"item_id": q["item_id"], "label": "valid"}) + "\n" for q in queue(project)))
        assert invoke(runner, "annotate", "-a", "ann", "--labels-from", str(path)).exit_code == 0

    label_everything_valid()
    # No licence chosen: the card claims none, build warns, publish refuses.
    built = invoke(runner, "build", "--version", "1.0.0")
    assert built.exit_code == 0 and "warning: no licence" in built.output and "[project] license" in built.output
    v10 = project / "exports" / "cp" / "1.0.0"
    meta, body = card_of(v10)
    assert "license" not in meta and "Not stated: the maintainer has not chosen a licence" in body
    assert "Template files:" in body and "- `work`: Pairs about people at work, written for this test." in body
    refused = invoke(runner, "publish", "--repo", "org/cp", "--version", "1.0.0", "--dry-run")
    assert refused.exit_code == 2 and "states no licence" in str(refused.exception)
    assert "[project] license" in str(refused.exception)

    # The maintainer's choices reach the card: licence, title, description, release notes.
    toml.write_text(
        '[project]\nname = "cp"\nkind = "crows-pairs"\nlicense = "cc-by-4.0"\npretty_name = "Work pairs"\n'
        'description = "Sentence pairs about age at work, by our team."\n'
    )
    (project / "templates" / "work.yaml").write_text(
        CROWS_FILE.replace("forget names", "forget faces").replace("slow at the office", "slow in the office")
    )
    label_everything_valid()
    missing = invoke(runner, "build", "--version", "1.1.0", "--notes", "no-such-notes.md")
    assert missing.exit_code == 2 and "cannot read the release notes no-such-notes.md" in str(missing.exception)
    (project / "notes.md").write_text("Two sentences reworded after review.\n")
    built = invoke(runner, "build", "--version", "1.1.0", "--notes", "notes.md")
    assert built.exit_code == 0 and "warning" not in built.output, built.output
    assert "(0 added, 2 edited, 0 removed since 1.0.0" in built.output
    v11 = project / "exports" / "cp" / "1.1.0"
    meta, body = card_of(v11)
    assert meta["license"] == "cc-by-4.0" and meta["pretty_name"] == "Work pairs"
    assert body.lstrip().startswith("# Work pairs v1.1.0\n\nSentence pairs about age at work, by our team.")
    assert "## Release notes\n\nTwo sentences reworded after review." in body and "`cc-by-4.0`" in body
    assert json.loads((v11 / "manifest.json").read_text())["license"] == "cc-by-4.0"

    # An edited pair is one change, both sentences before and after; an edited template too.
    rows = {c["reason"]: c for c in changes(v11)}
    assert {c["change"] for c in changes(v11)} == {"edited"} and set(rows) == {"pair edited", "template changed"}
    pair = rows["pair edited"]
    assert pair["previous_text"] == "Older people forget names. / Younger people forget names."
    assert pair["text"] == "Older people forget faces. / Younger people forget faces."
    assert pair["previous_id"] != pair["id"]
    log = (v11 / "CHANGELOG.md").read_text()
    assert log.index("Two sentences reworded after review.") < log.index("## 1.0.0")
    assert (
        "  - before: Older people forget names. / Younger people forget names.\n"
        "  - after: Older people forget faces. / Younger people forget faces."
    ) in log
    assert "  - before: Older workers are slow at the office. / Younger workers are slow at the office." in log
    assert "1 edited (pair edited); 1 edited (template changed)" in log and "| **total** | 0 | 2 | 0 |" in log
    assert "Edited:" in body and "forget faces" in body
    no_local_paths(v11, project)


def test_a_licence_that_is_not_an_identifier_is_a_config_error(tmp_path, monkeypatch, runner):
    (tmp_path / "workbench.toml").write_text('[project]\nlicense = "CC BY 4.0"\n')
    monkeypatch.chdir(tmp_path)
    r = invoke(runner, "validate")
    assert r.exit_code == 2 and "project.license" in str(r.exception) and "Traceback" not in r.output


def test_under_majority_a_disagreement_of_every_expected_validator_is_settled_not_pending():
    from types import SimpleNamespace

    from workbench.annotation.policy import Final, final_labels
    from workbench.core.config import Config
    from workbench.core.labels import VALIDITY_SCHEME
    from workbench.release.build import undecided

    votes = {"a": "valid", "b": "invalid", "c": "incoherent"}
    states = {
        name: {"split": SimpleNamespace(label=label, stance=None, adjudicated=False)} for name, label in votes.items()
    }
    states["a"]["waiting"] = SimpleNamespace(label="valid", stance=None, adjudicated=False)
    states["a"]["two"], states["b"]["two"] = (
        SimpleNamespace(label=x, stance=None, adjudicated=False) for x in ("valid", "invalid")
    )
    items = [SimpleNamespace(id=i) for i in ("split", "waiting", "two", "none")]

    def pending(annotation: dict, default_validators=None) -> dict:
        config = Config.model_validate({"annotation": annotation})
        finals = final_labels(
            states, [i.id for i in items], config.annotation.policy, config.annotation.min_votes, scheme=VALIDITY_SCHEME
        )
        assert all(isinstance(f, Final) for f in finals.values())
        return {item.id: status for item, status in undecided(config, items, finals, default_validators)}

    # three validators expected: the three-way split is settled (no majority); two votes still wait for a third
    assert pending({"policy": "majority", "validators": 3}) == {
        "waiting": "not-enough-votes",
        "two": "disagreement",
        "none": "unlabelled",
    }
    assert pending({"policy": "majority"}, default_validators=3) == pending({"policy": "majority", "validators": 3})
    # five expected: nothing is settled yet; under `single` nobody settles a disagreement but a person
    assert "split" in pending({"policy": "majority", "validators": 5}) and "split" in pending({"policy": "single"})


def test_rows_a_new_policy_drops_are_removed_because_the_policy_changed(tmp_path, monkeypatch, runner):
    project = example("crows-pairs", tmp_path / "cp")
    toml = project / "workbench.toml"
    toml.write_text(toml.read_text() + '\n[annotation]\npolicy = "adjudicator"\nadjudicator = "ann"\n')
    monkeypatch.chdir(project)
    assert invoke(runner, "run").exit_code == 0
    items = queue(project)
    for name, doubted in (("ann", None), ("rev", items[0]["item_id"])):
        path = project / f"{name}.jsonl"
        path.write_text(
            "".join(
                json.dumps({"item_id": q["item_id"], "label": "invalid" if q["item_id"] == doubted else "valid"}) + "\n"
                for q in items
            )
        )
        assert invoke(runner, "annotate", "-a", name, "--labels-from", str(path)).exit_code == 0
    assert invoke(runner, "build", "--version", "1.0.0").exit_code == 0
    # The same labels under a majority of both validators: the pair they disagree on has no majority.
    toml.write_text(
        toml.read_text().replace(
            'policy = "adjudicator"\nadjudicator = "ann"\n', 'policy = "majority"\nvalidators = 2\nmin_votes = 2\n'
        )
    )
    built = invoke(runner, "build", "--version", "1.1.0")
    assert built.exit_code == 0, built.output
    gone = changes(project / "exports" / "crows-pairs-example" / "1.1.0")
    assert [(c["change"], c["id"], c["reason"]) for c in gone] == [
        ("removed", items[0]["item_id"], "annotation policy changed")
    ]


def test_stereoset_a_reworded_sentence_is_one_edited_row(tmp_path, monkeypatch, runner, fixture_models):
    from workbench.kinds.stereoset.example import (
        write_example_labels,
        write_example_project,
    )

    project = write_example_project(tmp_path / "ss", fixture_models["mlm-bert"])
    monkeypatch.chdir(project)

    def label_and_build(version: str) -> Path:
        assert invoke(runner, "run").exit_code == 0
        for n, path in enumerate(write_example_labels(project), start=1):
            assert invoke(runner, "annotate", "-a", f"validator{n}", "--labels-from", str(path)).exit_code == 0
        built = invoke(runner, "build", "--version", version)
        assert built.exit_code == 0, built.output
        return project / "exports" / "stereoset-example" / version

    v10 = label_and_build("1.0.0")
    sentences = {r["sentence"] for r in pq.read_table(v10 / "data" / "stereoset.parquet").to_pylist()}
    assert "Men who lead the team are often survey." in sentences  # the CAT's unrelated sentence
    template = project / "templates" / "gender-work.yaml"
    template.write_text(template.read_text().replace("unrelated: survey", "unrelated: housing"))
    v11 = label_and_build("1.1.0")
    edited = changes(v11)
    assert [(c["change"], c["reason"]) for c in edited] == [("edited", "sentence edited")]
    assert edited[0]["previous_text"] == "Men who lead the team are often survey."
    assert edited[0]["text"] == "Men who lead the team are often housing."


class _PluginLayout:
    """A layout as a plugin kind writes one: its rows' identity and one more released field."""

    released_fields = ("context",)

    def identity(self, r: dict) -> tuple[str, str, str, str]:
        return r["id"], r["text"], r["group"], r["template"]


def test_a_change_of_any_released_field_is_an_edit_for_every_kind():
    """Shared code compares every field a layout releases (issue 56): a row whose text stays and
    whose context changes is edited, with the field before and after; a field the layout does not
    release (here the votes) is no change of the data. The shared authoring layout releases its
    public columns."""
    from workbench.authoring.stages import Layout
    from workbench.kinds.crows_pairs.authoring import AUTHORING
    from workbench.release import changes as C

    before = [
        {"id": k, "text": f"sentence {k}", "group": "g", "template": "t", "context": "The BLANK one.", "votes": [1]}
        for k in ("a", "b")
    ]
    after = [dict(before[0], context="The BLANK one here."), dict(before[1], votes=[1, 2])]
    previous = C.Previous("1.0.0", before, {}, "", "P 1.0.0")
    assert not C.same_data(previous, after, _PluginLayout())
    assert C.same_data(previous, [dict(r, votes=[3]) for r in before], _PluginLayout())
    diff = C.compare(previous, after, _PluginLayout(), {})
    assert [(c.change, c.key, c.text, c.previous_text, c.fields) for c in diff] == [
        ("edited", "a", "sentence a", "sentence a", {"context": ["The BLANK one.", "The BLANK one here."]})
    ]
    table = list(csv.DictReader(io.StringIO(C.changes_csv(diff))))
    assert json.loads(table[0]["fields"]) == {"context": ["The BLANK one.", "The BLANK one here."]}
    assert "  - context before: The BLANK one." in C.edits(diff, 5)
    assert Layout(AUTHORING).released_fields == ("id", "stereo_antistereo", "bias_type", "template")
