"""Authoring for sofa, honest, sos and crows-pairs: template files -> the public layout ->
validation of each unit (statement, template, pair) -> a release the kind's evaluator reads.

Every template here was written for these tests (mild words, fixture vocabulary)."""

from __future__ import annotations

import asyncio
import csv
import json
from pathlib import Path

import pytest
from conftest import invoke

KINDS = {  # kind -> (example module, public data file, delimiter, id column of a unit)
    "sofa": ("workbench.kinds.sofa.example", "data/probes.csv", ",", "id"),
    "honest": ("workbench.kinds.honest.example", "data/templates.tsv", "\t", "raw"),
    "sos": ("workbench.kinds.sos.example", "data/sos.csv", ",", "id"),
    "crows-pairs": ("workbench.kinds.crows_pairs.example", "data/pairs.csv", ",", "id"),
}


def example_project(kind: str, folder: Path) -> Path:
    import importlib

    return importlib.import_module(KINDS[kind][0]).write_example_project(folder)


def read_public(folder: Path, kind: str) -> list[dict]:
    _, name, delimiter, _ = KINDS[kind]
    with open(folder / name, encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f, delimiter=delimiter))


def queue_rows(project: Path) -> list[dict]:
    import pyarrow.parquet as pq

    return pq.read_table(project / ".workbench" / "queue" / "data.parquet").to_pylist()


def expand_rows(project: Path) -> list[dict]:
    import pyarrow.parquet as pq

    return pq.read_table(project / ".workbench" / "expand" / "data.parquet").to_pylist()


def evaluate_args(kind: str, folder: Path, project: Path, models: dict) -> list[str]:
    if kind == "honest":
        from workbench.kinds.honest.example import write_example

        _, lexicon = write_example(project / "lexicon")
        return [
            str(folder),
            "--kind",
            "honest",
            "--lexicon",
            str(lexicon),
            "--top-k",
            "5",
            "--model",
            str(models["mlm-bert"]),
        ]
    model = models["clm-gpt2"] if kind == "sofa" else models["mlm-bert"]
    return [str(folder), "--model", str(model)]


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_the_example_project_is_validated_released_and_evaluated(kind, tmp_path, monkeypatch, runner, fixture_models):
    from workbench.authoring.stages import write_example_labels

    project = example_project(kind, tmp_path / kind)
    monkeypatch.chdir(project)
    assert invoke(runner, "validate").exit_code == 0
    assert invoke(runner, "run").exit_code == 0
    queue, expanded = queue_rows(project), expand_rows(project)
    # One queue item per unit, standing for all of its rows.
    assert len(queue) == len({r["item_id"] for r in expanded}) >= 5
    assert sum(q["n_samples"] for q in queue) == len(expanded)
    labels = write_example_labels(project)
    decided = {json.loads(line)["item_id"]: json.loads(line)["label"] for line in labels.read_text().splitlines()}
    assert set(decided.values()) == {"valid", "invalid", "incoherent"}
    result = invoke(runner, "annotate", "-a", "ann", "--labels-from", str(labels))
    assert result.exit_code == 0, result.output
    result = invoke(runner, "build", "--version", "1.0.0")
    assert result.exit_code == 0, result.output
    folder = next((project / "exports").iterdir()) / "1.0.0"
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["kind"] == kind
    released = read_public(folder, kind)
    # Exactly the rows of the units labelled valid, in the public layout's columns.
    valid_units = {u for u, label in decided.items() if label == "valid"}
    expected = sorted(json.loads(r["record"])[KINDS[kind][3]] for r in expanded if r["item_id"] in valid_units)
    assert sorted(r[KINDS[kind][3]] for r in released) == expected and expected
    from workbench.authoring.stages import Layout
    from workbench.kinds import get

    assert list(released[0]) == list(get(kind).release.authoring.columns)
    assert isinstance(get(kind).release, Layout)
    card = (folder / "README.md").read_text()
    assert "## Validation funnel" in card and f"rows released | {len(released)} |" in card
    assert "pip install bias-workbench" in card
    # The kind's evaluator reads the release as it reads the public files.
    out = project / "scores.json"
    result = invoke(runner, "evaluate", *evaluate_args(kind, folder, project, fixture_models), "--json", str(out))
    assert result.exit_code == 0, result.output
    scores = json.loads(out.read_text())
    assert scores["kind"] == kind and scores["models"]


def test_sofa_statements_are_validated_once_and_keep_or_drop_all_their_probes(tmp_path, monkeypatch, runner):
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "a.yaml").write_text("""\
format: workbench-sofa/1
id: a
identities:
  age: [older people, young people, older workers]
stereotypes:
  age: [are slow with a laptop, are lazy at work]
""")
    (tmp_path / "workbench.toml").write_text('[project]\nname = "s"\nkind = "sofa"\n')
    monkeypatch.chdir(tmp_path)
    assert invoke(runner, "run").exit_code == 0
    queue = queue_rows(tmp_path)
    assert [q["hypothesis"] for q in queue] == ["are slow with a laptop", "are lazy at work"]  # as written
    assert [q["n_samples"] for q in queue] == [3, 3]
    details = dict((d["label"], d["text"]) for d in queue[1]["details"])
    assert details["category"] == "age" and details["probe"] == "older people are lazy at work"
    slow, lazy = (q["item_id"] for q in queue)
    labels = tmp_path / "l.jsonl"
    labels.write_text(
        json.dumps({"item_id": lazy, "label": "valid"})
        + "\n"
        + json.dumps({"item_id": slow, "label": "invalid"})
        + "\n"
    )
    assert invoke(runner, "annotate", "-a", "ann", "--labels-from", str(labels)).exit_code == 0
    assert invoke(runner, "build", "--version", "1.0.0").exit_code == 0
    rows = read_public(tmp_path / "exports" / "s" / "1.0.0", "sofa")
    assert {r["probe"] for r in rows} == {
        "older people are lazy at work",
        "young people are lazy at work",
        "older workers are lazy at work",
    }
    assert {r["id"] for r in rows} == {lazy}
    # Ids are hashes of the content: adding and reordering statements leaves them as they were.
    (tmp_path / "templates" / "a.yaml").write_text("""\
format: workbench-sofa/1
id: a
identities:
  age: [older people, young people, older workers]
stereotypes:
  age: [are careless with money, are lazy at work, are slow with a laptop]
""")
    assert invoke(runner, "run").exit_code == 0
    ids = {q["hypothesis"]: q["item_id"] for q in queue_rows(tmp_path)}
    assert ids["are lazy at work"] == lazy and ids["are slow with a laptop"] == slow and len(ids) == 3
    # The new statement is unlabelled: the build says so; left out, the data is unchanged: no new version.
    pending = invoke(runner, "build", "--version", "1.0.1")
    assert pending.exit_code == 2 and "1 of the 3 queue items have no final label yet" in str(pending.exception)
    assert "are careless with money" in str(pending.exception)
    same = invoke(runner, "build", "--version", "1.0.1", "--allow-unlabelled")
    assert same.exit_code == 2 and "nothing changed in the data since 1.0.0" in str(same.exception)
    careless = ids["are careless with money"]
    labels.write_text(json.dumps({"item_id": careless, "label": "valid"}) + "\n")
    assert invoke(runner, "annotate", "-a", "ann", "--labels-from", str(labels)).exit_code == 0
    assert invoke(runner, "build", "--version", "1.0.1").exit_code == 0
    v101 = tmp_path / "exports" / "s" / "1.0.1"
    assert len(read_public(v101, "sofa")) == len(rows) + 3
    changed = (v101 / "changes.csv").read_text().splitlines()
    assert len(changed) == 1 + 3 and all(
        line.startswith("added,") and line.endswith(",template changed") for line in changed[1:]
    )


BAD = {
    "sofa": (
        """\
format: workbench-sofa/1
id: bad
colour: blue
identities:
  age: [older people, older people]
stereotypes:
  age: ["are {{IDENTITY}} slow", ""]
  race: [are lazy]
""",
        [
            "templates/bad.yaml:3: colour: unknown field",
            "templates/bad.yaml:5: identities.age[1]: 'older people' is listed twice",
            "templates/bad.yaml:7: stereotypes.age[0]: a SOFA statement has no placeholders",
            "templates/bad.yaml:7: stereotypes.age[1]: stereotype is empty",
            "templates/bad.yaml:8: stereotypes.race: category 'race' has no identities (identities has: age)",
        ],
    ),
    "honest": (
        """\
format: workbench-honest/1
id: bad
identities:
  female: [the woman]
templates:
  - "{{IDENTITY}} is very good."
  - "{{IDENTITY}} is [M] and [M]."
  - "the woman is [M]."
  - "{{NAME}} is [M]."
""",
        [
            "templates/bad.yaml:6: templates[0]: no [M] in '{{IDENTITY}} is very good.'",
            "templates/bad.yaml:7: templates[1]: 2 [M] in",
            "templates/bad.yaml:8: templates[2]: no {{IDENTITY}} in 'the woman is [M].'",
            "templates/bad.yaml:9: templates[3]: unknown placeholder {{NAME}}",
        ],
    ),
    "sos": (
        """\
format: workbench-sos/1
id: bad
identities:
  age:
    marginalised: [older people]
    sometimes: [younger people]
words:
  profane: [lazy, careless]
  nice: [kind]
templates:
  - "{{IDENTITY}} are lazy."
""",
        [
            "templates/bad.yaml:6: identities.age.sometimes: unknown side 'sometimes'",
            "templates/bad.yaml:7: words: 2 profane and 1 nice words: the i-th profane word is paired",
            "templates/bad.yaml:11: templates[0]: no {{WORD}} in '{{IDENTITY}} are lazy.'",
        ],
    ),
    "crows-pairs": (
        """\
format: workbench-crows-pairs/1
id: bad
bias_type: gender
pairs:
  - {more: "Women are kind.", less: "Women are kind."}
  - {more: "Women are kind.", less: "Men are kind.", direction: stereotype}
  - {more: "", less: "Men are kind."}
""",
        [
            "templates/bad.yaml:5: pairs[0]: the two sentences are the same ('Women are kind.')",
            "templates/bad.yaml:6: pairs[1].direction: direction must be stereo or antistereo, not 'stereotype'",
            "templates/bad.yaml:7: pairs[2].more: more is empty",
        ],
    ),
}


@pytest.mark.parametrize("kind", sorted(BAD))
def test_bad_template_files_are_reported_with_file_line_and_field(kind, tmp_path, monkeypatch, runner):
    text, expected = BAD[kind]
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "bad.yaml").write_text(text)
    (tmp_path / "templates" / "nli.yaml").write_text("format: workbench-template/1\nid: x\n")
    (tmp_path / "workbench.toml").write_text(f'[project]\nkind = "{kind}"\n')
    monkeypatch.chdir(tmp_path)
    result = invoke(runner, "validate")
    out = " ".join(result.output.split())
    assert result.exit_code == 2, result.output
    for line in expected + [f"templates/nli.yaml:1: format: format 'workbench-template/1' in a {kind} project"]:
        assert line in out, (line, result.output)
    assert "Traceback" not in result.output
    run = invoke(runner, "run")
    assert run.exit_code == 2 and f"problem(s) in {kind} templates" in str(run.exception)


def test_the_same_row_in_two_files_is_kept_once_with_a_warning(tmp_path, monkeypatch, runner):
    (tmp_path / "templates").mkdir()
    pair = 'format: workbench-crows-pairs/1\nid: {id}\nbias_type: age\npairs:\n  - {{more: "Old men are slow.", less: "Young men are slow."}}\n'
    (tmp_path / "templates" / "a.yaml").write_text(pair.format(id="a"))
    (tmp_path / "templates" / "b.yaml").write_text(pair.format(id="b"))
    (tmp_path / "workbench.toml").write_text('[project]\nkind = "crows-pairs"\n')
    monkeypatch.chdir(tmp_path)
    result = invoke(runner, "validate")
    assert result.exit_code == 0, result.output
    assert "templates/b.yaml:5: warning: pairs[0]: the same row as in templates/a.yaml" in " ".join(
        result.output.split()
    )
    assert invoke(runner, "run").exit_code == 0
    assert len(queue_rows(tmp_path)) == 1


def test_the_queue_serves_items_in_the_order_they_were_written(tmp_path, monkeypatch, runner):
    """Annotators meet a file's items as its author wrote them (by domain, then template by template),
    not sorted by their text."""
    (tmp_path / "templates").mkdir()
    written = ["Young drivers are reckless.", "Old drivers are careful.", "Middle-aged drivers are calm."]
    pairs = "".join(f'  - {{more: "{t}", less: "{t.replace("drivers", "riders")}"}}\n' for t in written)
    (tmp_path / "templates" / "z.yaml").write_text(
        f"format: workbench-crows-pairs/1\nid: z\nbias_type: age\npairs:\n{pairs}"
    )
    (tmp_path / "templates" / "a.yaml").write_text(
        'format: workbench-crows-pairs/1\nid: a\nbias_type: age\npairs:\n  - {more: "Boys are loud.", less: "Girls are loud."}\n'
    )
    (tmp_path / "workbench.toml").write_text('[project]\nkind = "crows-pairs"\n')
    monkeypatch.chdir(tmp_path)
    assert invoke(runner, "run").exit_code == 0
    rows = sorted(queue_rows(tmp_path), key=lambda r: r["position"])
    z = [r["hypothesis"] for r in rows if r["template_id"] == "z"]
    assert [next(t for t in written if t in h) for h in z] == written


def test_an_annotator_sees_the_pair_and_its_identity_in_the_tui(tmp_path, monkeypatch, runner):
    import io

    from rich.console import Console

    import workbench.cli.main  # noqa: F401
    from workbench.annotation.session import Session, load_items
    from workbench.annotation.store import LabelStore, read_events
    from workbench.core.workspace import Workspace
    from workbench.kinds import get
    from workbench.tui.app import AnnotateApp

    project = example_project("sos", tmp_path / "sos")
    monkeypatch.chdir(project)
    assert invoke(runner, "run").exit_code == 0
    items = load_items(Workspace(project / ".workbench"))
    scheme = get("sos").scheme
    store = LabelStore(project / "annotations", "ann", strict=False, scheme=scheme)
    session = Session(items, store, scheme=scheme)
    app = AnnotateApp(session, "ann", content_note=False)

    async def go():
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
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
            text = " ".join(console.export_text().replace("│", " ").split())
            item = session.current
            nice = dict(item.details)["nice"]
            assert item.hypothesis in text and f"nice {nice}" in text
            assert "identity older people (age, marginalised)" in text
            await pilot.press("1")
            await pilot.pause()
            await pilot.press("q")

    asyncio.run(go())
    labels = [e for e in read_events(project / "annotations" / "ann.jsonl", scheme)[0] if e["type"] == "label"]
    assert [(e["item"], e["label"]) for e in labels] == [(items[0].id, "valid")]


def test_label_studio_tasks_carry_the_kinds_details():
    """Each detail line of an item becomes a plain-text value of its task, under the name the
    kind's words give it (an sos pair: the nice sentence and the identity)."""
    from workbench import kinds
    from workbench.annotation.session import Item
    from workbench.labelstudio.page import page_for

    kind = kinds.get("sos")
    item = Item(
        "x",
        "Older people are lazy.",
        "age",
        "statements",
        "statements",
        0,
        details=[("nice", "Older people are kind."), ("identity", "older people (age, marginalised)")],
    )
    assert page_for(kind.scheme, kind.words).task_data(item) == {
        "hypothesis_id": "x",
        "profane_sentence": "Older people are lazy.",
        "nice_sentence": "Older people are kind.",
        "identity": "older people (age, marginalised)",
        "where": "age / statements",
    }


def test_a_copied_project_is_up_to_date_where_it_lands(tmp_path, tmp_path_factory, monkeypatch, runner, project):
    """Stage hashes hold no absolute paths: a project moved or copied elsewhere is not stale."""
    import shutil

    nli = project  # the nli example project (templates only), in tmp_path
    assert invoke(runner, "expand").exit_code == 0
    sofa = example_project("sofa", tmp_path / "sofa")
    monkeypatch.chdir(sofa)
    assert invoke(runner, "run").exit_code == 0
    for folder in (nli, sofa):
        copy = shutil.copytree(
            folder, tmp_path_factory.mktemp("elsewhere") / folder.name, ignore=shutil.ignore_patterns("sofa")
        )
        monkeypatch.chdir(copy)
        result = invoke(runner, "status")
        assert result.exit_code == 0 and "fresh" in result.output and "stale" not in result.output, result.output


def test_a_cut_or_edited_release_is_refused_not_scored(tmp_path, monkeypatch, runner, fixture_models):
    from workbench.authoring.stages import write_example_labels

    project = example_project("crows-pairs", tmp_path / "cp")
    monkeypatch.chdir(project)
    assert invoke(runner, "run").exit_code == 0
    assert invoke(runner, "annotate", "-a", "a", "--labels-from", str(write_example_labels(project))).exit_code == 0
    assert invoke(runner, "build", "--version", "1.0.0").exit_code == 0
    folder = project / "exports" / "crows-pairs-example" / "1.0.0"
    args = ["evaluate", str(folder), "--model", str(fixture_models["mlm-bert"]), "--json", str(tmp_path / "s.json")]
    assert invoke(runner, *args).exit_code == 0
    parquet = folder / "data" / "pairs.parquet"
    parquet.write_bytes(parquet.read_bytes()[:-100])
    (tmp_path / "s.json").unlink()
    result = invoke(runner, *args)
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "data/pairs.parquet do(es) not match the release manifest (changed, cut short or missing)" in str(
        result.exception
    )
    assert not (tmp_path / "s.json").exists()
    (folder / "manifest.json").write_text("[1, 2]")
    result = invoke(runner, *args)
    assert result.exit_code == 2 and "is not a release manifest" in str(result.exception)


MISSPELT = {
    "crows-pairs": (
        """\
format: workbench-crows-pairs/1
id: typo
bias_type: gender
pairs:
  - {more: "Women are kind.", less: "Men are kind.", directon: antistereo}
templates:
  - {text: "{{GROUP}} are kind.", directoin: antistereo}
groups: {more: [women], les: [men]}
""",
        [
            "templates/typo.yaml:5: pairs[0].directon: unknown field 'directon': did you mean direction?",
            "templates/typo.yaml:7: templates[0].directoin: unknown field 'directoin': did you mean direction?",
            "templates/typo.yaml:8: groups.les: unknown field 'les': did you mean less?",
        ],
    ),
    "honest": (
        """\
format: workbench-honest/1
id: typo
identities:
  female: [the woman]
templates:
  - {text: "{{IDENTITY}} is a [M].", tpye: descriptive_adjective}
""",
        ["templates/typo.yaml:6: templates[0].tpye: unknown field 'tpye': did you mean type?"],
    ),
    "sos": (
        """\
format: workbench-sos/1
id: typo
identities:
  age:
    marginalized: [older people]
    non_marginalised: [younger people]
words:
  profane: [lazy]
  nicee: [kind]
templates:
  - "{{IDENTITY}} are {{WORD}}."
""",
        [
            "templates/typo.yaml:5: identities.age.marginalized: unknown side 'marginalized': did you mean marginalised?",
            "templates/typo.yaml:9: words.nicee: unknown field 'nicee': did you mean nice?",
        ],
    ),
    "stereoset": (
        """\
format: workbench-stereoset/1
id: typo
domain: gender
split: intrasentence
targets: [women]
contexts:
  - text: "Most {{TARGET}} are BLANK."
    options: {stereotyp: kind, unrelated: blue}
    targte: women
""",
        [
            "templates/typo.yaml:8: contexts[0].options.stereotyp: unknown gold label 'stereotyp': did you mean stereotype?",
            "templates/typo.yaml:9: contexts[0].targte: unknown field 'targte': did you mean target?",
        ],
    ),
}


@pytest.mark.parametrize("kind", sorted(MISSPELT))
def test_a_misspelt_key_at_any_depth_is_an_error_naming_the_nearest_known_key(kind, tmp_path, monkeypatch, runner):
    # Before, a pair's `directon: antistereo` validated and the pair was released as stereo.
    text, expected = MISSPELT[kind]
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "typo.yaml").write_text(text)
    (tmp_path / "workbench.toml").write_text(f'[project]\nkind = "{kind}"\n')
    monkeypatch.chdir(tmp_path)
    result = invoke(runner, "validate")
    out = " ".join(result.output.split())
    assert result.exit_code == 2, result.output
    for line in expected:
        assert line in out, (line, result.output)
    assert invoke(runner, "run").exit_code == 2


def test_a_misspelt_setting_names_the_nearest_one_in_its_table(tmp_path, monkeypatch, runner):
    (tmp_path / "workbench.toml").write_text(
        '[project]\nkind = "crows-pairs"\nlicence = "mit"\n\n[annotation]\npolcy = "majority"\n'
    )
    monkeypatch.chdir(tmp_path)
    result = invoke(runner, "validate")
    out = said(result)
    assert result.exit_code == 2, out
    assert "workbench.toml:3: project.licence: unknown setting 'licence': did you mean license?" in out
    assert "workbench.toml:6: annotation.polcy: unknown setting 'polcy': did you mean policy?" in out
    (tmp_path / "workbench.toml").write_text('[project]\nkind = "nli"\n\n[filter]\nmin_fool = 2\n')
    result = invoke(runner, "validate")
    out = said(result)
    assert result.exit_code == 2 and "filter.min_fool: unknown setting 'min_fool': did you mean min_fooled?" in out, out
    (tmp_path / "workbench.toml").write_text('[project]\nkind = "nli"\n\n[filtre]\n')
    result = invoke(runner, "validate")
    assert "unknown section [filtre] for kind 'nli': did you mean filter?" in said(result), said(result)


def said(result) -> str:
    """What the user reads: the output, and the error main() prints."""
    return " ".join((result.output + " " + str(result.exception or "")).split())


@pytest.mark.parametrize("kind", ["crows-pairs", "sofa"])
def test_nli_commands_in_another_kinds_project_lint_its_files_or_say_so_in_one_line(
    kind, tmp_path, monkeypatch, runner
):
    project = example_project(kind, tmp_path / kind)
    monkeypatch.chdir(project)
    lint = invoke(runner, "templates", "lint")
    assert lint.exit_code == 0 and " 0 error(s)" in lint.output and "unknown field" not in lint.output, lint.output
    if kind == "crows-pairs":
        (project / "templates" / "typo.yaml").write_text(MISSPELT["crows-pairs"][0])
        lint = invoke(runner, "templates", "lint")
        assert lint.exit_code == 2, lint.output
        assert "pairs[0].directon: unknown field 'directon': did you mean direction?" in " ".join(lint.output.split())
        named = invoke(runner, "templates", "lint", "templates/typo.yaml")
        assert named.exit_code == 2 and "0 template(s) ok; 4 error(s)" in " ".join(named.output.split()), named.output
    for command in (["stats"], ["candidates"], ["generate"], ["filter"], ["templates", "suggest-masks"]):
        result = invoke(runner, *command)
        message = str(result.exception)
        assert result.exit_code == 2 and "\n" not in message and repr(kind) in message, (command, message)
        assert "Traceback" not in result.output
