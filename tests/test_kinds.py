"""Benchmark kinds plug in without touching the NLI code: a toy kind, defined entirely in this
file, is registered, expanded, labelled, built and evaluated through the ordinary commands."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from conftest import invoke
from workbench import kinds
from workbench.core.ids import file_sha256, hypothesis_id
from workbench.core.labels import Choice, LabelScheme
from workbench.core.stage import Output, Stage
from workbench.authoring.validated import Validated
from workbench.release import generic

TOY_SCHEME = LabelScheme(
    "toy",
    (
        Choice("fine", "fine", None, "1", "a fine sentence", kept=True),
        Choice("odd", "odd", None, "2", "an odd sentence"),
    ),
    question="Is the sentence fine?",
)


class ToyItems(Stage):
    """One item per line `domain | sentence` of templates/*.txt."""

    name = "items"

    def settings(self, ctx):
        return {"templates": ctx.config.project.templates}

    def external_inputs(self, ctx):
        return {p.name: file_sha256(p) for p in sorted(ctx.config.path("templates").glob("*.txt"))}

    def compute(self, ctx, inputs, reused):
        import pyarrow as pa

        rows = []
        for path in sorted(ctx.config.path("templates").glob("*.txt")):
            for line in path.read_text().splitlines():
                domain, sentence = (x.strip() for x in line.split("|"))
                rows.append(
                    {
                        "item_id": hypothesis_id(sentence),
                        "hypothesis": sentence,
                        "domain": domain,
                        "subtopic": domain,
                        "template_id": path.stem,
                        "position": len(rows),
                    }
                )
        return Output(pa.Table.from_pylist(rows))


class ToyLayout:
    @staticmethod
    def write_release(rows, staging: Path) -> list[str]:
        (staging / "data").mkdir(parents=True)
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, ["id", "sentence", "domain"], lineterminator="\n")
        writer.writeheader()
        for r in sorted(rows, key=lambda r: r["item_id"]):
            writer.writerow({"id": r["item_id"], "sentence": r["hypothesis"], "domain": r["domain"]})
        (staging / "data" / "items.csv").write_text(buffer.getvalue())
        return sorted({r["domain"] for r in rows})

    @staticmethod
    def read_release(folder: Path) -> list[dict]:
        return list(csv.DictReader((folder / "data" / "items.csv").open()))

    @staticmethod
    def card(release) -> str:
        return generic.card(
            release,
            kind_name="toy",
            about="Toy sentences.",
            fields="`id`, `sentence`, `domain`",
            data_files={"all": "data/items.csv"},
        )

    @staticmethod
    def identity(r) -> tuple[str, str, str, str]:
        return r["id"], r["sentence"], r["domain"], r["domain"]


# The toy kind's evaluator is this module: detect() and evaluate(request, console).
def detect(path: Path) -> bool:
    return (Path(path) / "data" / "items.csv").is_file()


def evaluate(request, console) -> dict:
    rows = ToyLayout.read_release(Path(request.sources[0]))
    doc = {
        "kind": "toy",
        "models": {
            m: {"n": len(rows), "mean_words": sum(len(r["sentence"].split()) for r in rows) / len(rows)}
            for m in request.models
        },
    }
    request.json_out.write_text(json.dumps(doc))
    console.print(f"toy: {len(rows)} items")
    return doc


TOY = kinds.Kind(
    name="toy",
    description="a toy kind for tests",
    stages=lambda: [ToyItems(), Validated(TOY_SCHEME, "items")],
    scheme=TOY_SCHEME,
    queue_stage="items",
    release_stage="validated",
    run_to="items",
    release=ToyLayout,
    evaluator=__name__,
)


@pytest.fixture
def toy_project(tmp_path, monkeypatch):
    kinds.register(TOY)
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "a.txt").write_text(
        "work | People work hard.\nwork | Work people hard the.\nhome | People cook at home.\n"
    )
    (tmp_path / "workbench.toml").write_text(
        '[project]\nname = "toy-bench"\nkind = "toy"\n[annotation]\nkeys = {fine = "f"}\n'
    )
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_a_kind_defined_outside_the_package_runs_the_whole_loop(toy_project, runner):
    assert invoke(runner, "validate").exit_code == 0  # its scheme's key binding id is known
    result = invoke(runner, "run")
    assert result.exit_code == 0, result.output
    assert "items: done" in result.output
    status = invoke(runner, "status")
    assert "items" in status.output and "validated" in status.output and "expand" not in status.output

    ids = {s: hypothesis_id(s) for s in ("People work hard.", "Work people hard the.", "People cook at home.")}
    labels = [
        {"item_id": ids["People work hard."], "label": "fine"},
        {"item_id": ids["Work people hard the."], "label": "odd"},
        {"item_id": ids["People cook at home."], "label": "fine"},
    ]
    (toy_project / "l.jsonl").write_text("".join(json.dumps(r) + "\n" for r in labels))
    result = invoke(runner, "annotate", "-a", "ann", "--labels-from", "l.jsonl")
    assert result.exit_code == 0, result.output
    # A label outside the toy scheme is refused with the scheme's choices.
    (toy_project / "bad.jsonl").write_text(json.dumps({"item_id": ids["People work hard."], "label": "valid"}) + "\n")
    bad = invoke(runner, "annotate", "-a", "ann", "--labels-from", "bad.jsonl")
    assert bad.exit_code == 2 and "label must be one of ['fine', 'odd']" in str(bad.exception)

    stats = invoke(runner, "annotations", "stats")
    assert stats.exit_code == 0 and "fine" in stats.output and "odd" in stats.output

    result = invoke(runner, "build", "--version", "1.0.0")
    assert result.exit_code == 0, result.output
    folder = toy_project / "exports" / "toy-bench" / "1.0.0"
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["kind"] == "toy" and manifest["samples"] == 2
    released = ToyLayout.read_release(folder)
    assert sorted(r["sentence"] for r in released) == ["People cook at home.", "People work hard."]
    assert "config_name: all" in (folder / "README.md").read_text()

    out = toy_project / "scores.json"
    result = invoke(runner, "evaluate", str(folder), "--model", "m1", "--json", str(out))  # kind from the manifest
    assert result.exit_code == 0, result.output
    assert json.loads(out.read_text())["models"]["m1"] == {"n": 2, "mean_words": 3.5}


def test_unknown_kind_in_the_config_is_a_clear_error(tmp_path, monkeypatch, runner):
    (tmp_path / "workbench.toml").write_text('[project]\nkind = "nope"\n')
    monkeypatch.chdir(tmp_path)
    result = invoke(runner, "status")
    assert result.exit_code == 2 and "unknown benchmark kind 'nope'" in str(result.exception)


def test_label_schemes_spell_each_decision_once():
    from workbench.kinds.nli.scheme import NLI_SCHEME

    assert NLI_SCHEME.decode("valid-anti") == ("valid", "anti")
    assert NLI_SCHEME.category("valid", "pro") == "valid-pro" and NLI_SCHEME.category("invalid") == "invalid"
    assert NLI_SCHEME.problem("valid", None) == "a valid label needs stance pro or anti"
    assert NLI_SCHEME.kept_ids() == ("valid-pro", "valid-anti")
    assert TOY_SCHEME.category("fine") == "fine" and TOY_SCHEME.problem("valid", None) == "unknown label 'valid'"


def test_a_changed_template_stales_everything_downstream_and_build_catches_up(toy_project, runner):
    assert invoke(runner, "run").exit_code == 0
    ids = [hypothesis_id(s) for s in ("People work hard.", "People cook at home.", "Work people hard the.")]
    (toy_project / "l.jsonl").write_text("".join(json.dumps({"item_id": i, "label": "fine"}) + "\n" for i in ids))
    assert invoke(runner, "annotate", "-a", "ann", "--labels-from", "l.jsonl").exit_code == 0
    assert invoke(runner, "build", "--version", "1.0.0").exit_code == 0
    with open(toy_project / "templates" / "a.txt", "a") as f:
        f.write("home | People rest at home.\n")
    pipeline = kinds.pipeline_for(__import__("workbench.core.config", fromlist=["load_config"]).load_config())
    assert dict(pipeline.states()) == {"items": "stale", "validated": "stale"}  # validated's own inputs look unchanged
    new_id = hypothesis_id("People rest at home.")
    (toy_project / "m.jsonl").write_text(json.dumps({"item_id": new_id, "label": "fine"}) + "\n")
    assert invoke(runner, "run").exit_code == 0
    assert invoke(runner, "annotate", "-a", "ann", "--labels-from", "m.jsonl").exit_code == 0
    assert invoke(runner, "build", "--version", "1.1.0").exit_code == 0
    released = ToyLayout.read_release(toy_project / "exports" / "toy-bench" / "1.1.0")
    assert "People rest at home." in {r["sentence"] for r in released} and len(released) == 4
