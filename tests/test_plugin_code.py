"""A plugin kind's own code at run time (issue 55): an exception raised in its declared
evaluator's `item` or `score` ends in one line naming the kind and the item, exit code 2, in
`workbench evaluate` and in the release's evaluate.py, with nothing half-written (no --plots
folder, no JSON); and which code made a figure is recorded: the kind's package, version and
code hash are in the release's manifest, in every result JSON and in the release script's JSON,
a release evaluated with another version of the kind says so, and a release whose only change
is its evaluator is built (not refused as "nothing changed") with the change in its changelog.

The plugin is the toy kind of tests/support/plugins.py with a declared evaluator whose model is
its name (no model is loaded): its score raises on a sentence holding "boom", its item on a row
whose domain is "explode".
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import invoke
from support.plugins import plugins_for

EVALUATOR = """\
from workbench.evaluation.declared import Declared, share


def item(record, bad):
    if record["domain"] == "explode":
        raise KeyError("no such domain")  # the kind's bug
    return dict(record)


def score(models, items, options, progress):
    out = []
    for it in items:
        if "boom" in it["sentence"]:
            raise ValueError("boom in the sentence")
        out.append({"hit": float(len(it["sentence"]) % 2)})
    progress(len(items))
    return out


DECLARED = Declared(
    kind="crashy",
    title="toy sentences",
    meaning="the share of sentences of odd length",
    data="data/items.csv",
    required=("id", "sentence", "domain"),
    item=item,
    score=score,
    group="domain",
    statistics=(share("odd", "odd share", "hit", scale=100.0),),
    open_model=lambda role, name, how: name,
)
"""
STANDALONE = "from .evaluate import DECLARED  # noqa: F401\n"
SENTENCES = ["People work hard.", "People cook at home.", "A boom shook the town.", "They walk to work."]


@pytest.fixture
def plugins(tmp_path, monkeypatch):
    yield from plugins_for(tmp_path, monkeypatch)


def build_release(plugins, tmp_path: Path, runner, monkeypatch, sentences=SENTENCES, version="1.0.0") -> Path:
    """The crashy plugin's project, every sentence labelled fine, built as `version`."""
    from workbench.core.ids import hypothesis_id

    project = tmp_path / "project"
    (project / "templates").mkdir(parents=True, exist_ok=True)
    (project / "templates" / "a.txt").write_text("".join(f"work | {s}\n" for s in sentences))
    (project / "workbench.toml").write_text('[project]\nname = "crashy"\nkind = "crashy"\nlicense = "mit"\n')
    monkeypatch.chdir(project)
    assert invoke(runner, "run").exit_code == 0
    labels = [{"item_id": hypothesis_id(s), "label": "fine"} for s in sentences]
    (project / "l.jsonl").write_text("".join(json.dumps(r) + "\n" for r in labels))
    assert invoke(runner, "annotate", "-a", "ann", "--labels-from", "l.jsonl").exit_code == 0
    built = invoke(runner, "build", "--version", version)
    assert built.exit_code == 0, built.output
    return project / "exports" / "crashy" / version


def script(release: Path, *args: str) -> subprocess.CompletedProcess:
    """The release's evaluate.py in a fresh process, without workbench or the plugin on its path."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"HF_HUB_OFFLINE": "1"}
    return subprocess.run(
        [sys.executable, "evaluate.py", *args], cwd=release, env=env, capture_output=True, text=True, timeout=300
    )


def one_line(result) -> str:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    message = str(result.exception)
    assert "\n" not in message, message
    return message


def test_an_exception_in_a_kinds_score_or_item_is_one_line_naming_the_item_and_nothing_is_written(
    plugins, tmp_path, runner, monkeypatch
):
    from workbench.core.ids import hypothesis_id

    plugins.install("crashy", evaluate=EVALUATOR, standalone=STANDALONE)
    release = build_release(plugins, tmp_path, runner, monkeypatch)
    boom = hypothesis_id("A boom shook the town.")
    rows = [line.split(",")[0] for line in (release / "data" / "items.csv").read_text().splitlines()[1:]]
    at = rows.index(boom) + 1  # the release's rows are in order of id
    out = tmp_path / "out"
    result = invoke(
        runner, "evaluate", str(release), "--model", "m1", "--json", str(out / "s.json"), "--plots", str(out / "plots")
    )
    assert one_line(result) == (
        f"kind 'crashy' failed scoring item {at} of 4 (id {boom}) with m1 (its score()): "
        "ValueError: boom in the sentence"
    )
    assert not out.exists()  # no empty --plots folder, no JSON

    ran = script(release, "--model", "m1", "--json", str(out / "s.json"))
    assert ran.returncode == 2 and "Traceback" not in ran.stderr, ran.stderr
    assert ran.stderr.strip().splitlines()[-1] == (
        f"evaluate.py: error: kind 'crashy' failed scoring item {at} of 4 (id {boom}) with m1 (its score()): "
        "ValueError: boom in the sentence"
    )
    assert not out.exists()

    # item(): the row it was reading, by file and line.
    bad = tmp_path / "bad.csv"
    bad.write_text("id,sentence,domain\na,One.,work\nb,Two.,explode\n")
    result = invoke(runner, "evaluate", str(bad), "--kind", "crashy", "--model", "m1")
    assert one_line(result) == (
        f"{bad}:3: kind 'crashy' failed reading this item (its item()): KeyError: 'no such domain'"
    )


def test_a_score_that_fails_only_on_several_items_together_says_so(plugins, tmp_path, runner, monkeypatch):
    together = EVALUATOR.replace('if "boom" in it["sentence"]:', "if len(items) > 2:")
    plugins.install("crashy", evaluate=together, standalone=STANDALONE)
    release = build_release(plugins, tmp_path, runner, monkeypatch)
    result = invoke(runner, "evaluate", str(release), "--model", "m1")
    assert one_line(result) == (
        "kind 'crashy' failed scoring the 4 items together (on none alone) with m1 (its score()): "
        "ValueError: boom in the sentence"
    )


def test_an_exception_in_any_other_hook_of_a_plugins_evaluator_is_one_line_naming_the_kind(
    plugins, tmp_path, runner, monkeypatch
):
    failing = EVALUATOR.replace("    open_model=", "    select=lambda items, options: 1 / 0,\n    open_model=")
    plugins.install("crashy", evaluate=failing, standalone=STANDALONE)
    release = build_release(plugins, tmp_path, runner, monkeypatch)
    result = invoke(runner, "evaluate", str(release), "--model", "m1", "--plots", str(tmp_path / "plots"))
    assert one_line(result) == (
        "kind 'crashy' (crashy-plugin 0.1.0): its evaluator failed: ZeroDivisionError: division by zero"
    )
    assert not (tmp_path / "plots").exists()
    ran = script(release, "--model", "m1")
    assert ran.returncode == 2 and "Traceback" not in ran.stderr, ran.stderr
    assert ran.stderr.strip().splitlines()[-1] == (
        "evaluate.py: error: kind 'crashy': its evaluator failed: ZeroDivisionError: division by zero"
    )


def test_the_kinds_code_is_recorded_and_a_release_whose_evaluator_changed_is_named_and_built(
    plugins, tmp_path, runner, monkeypatch
):
    from workbench import kinds
    from workbench.contract.code import identity

    calm = [s for s in SENTENCES if "boom" not in s]
    plugins.install("crashy", evaluate=EVALUATOR, standalone=STANDALONE)
    release = build_release(plugins, tmp_path, runner, monkeypatch, calm)
    first = json.loads((release / "manifest.json").read_text())["kind_code"]
    assert first == {"package": "crashy-plugin", "version": "0.1.0", "code": identity(kinds.get("crashy"))["code"]}
    assert len(first["code"]) == 64

    result = invoke(runner, "evaluate", str(release), "--model", "m1", "--json", str(tmp_path / "a.json"))
    assert result.exit_code == 0 and "warning" not in result.stderr, result.output
    record = json.loads((tmp_path / "a.json").read_text())["provenance"]
    assert record["kind_code"] == first and record["datasets"][0]["kind_code"] == first
    ran = script(release, "--model", "m1", "--json", str(tmp_path / "b.json"))
    assert ran.returncode == 0, ran.stderr
    assert json.loads((tmp_path / "b.json").read_text())["provenance"]["kind_code"] == first

    # The plugin upgraded: its score counts other sentences.
    plugins.upgrade("crashy", "0.2.0", evaluate=EVALUATOR.replace("% 2", "% 3"), standalone=STANDALONE)
    second = {"package": "crashy-plugin", "version": "0.2.0", "code": identity(kinds.get("crashy"))["code"]}
    assert second["code"] != first["code"]
    result = invoke(runner, "evaluate", str(release), "--model", "m1", "--json", str(tmp_path / "c.json"))
    assert result.exit_code == 0, result.output
    warned = [line for line in result.stderr.splitlines() if line.startswith("warning")]
    assert warned == [
        f"warning: {release} was built with kind crashy from crashy-plugin 0.1.0 (code {first['code'][:12]}); "
        f"the installed kind is crashy-plugin 0.2.0 (code {second['code'][:12]}): these figures may differ "
        "from those of the release's evaluate.py"
    ]
    record = json.loads((tmp_path / "c.json").read_text())["provenance"]
    assert record["kind_code"] == second and record["datasets"][0]["kind_code"] == first

    # Only the evaluator changed: a new version is built, and its changelog and card say so.
    built = invoke(runner, "build", "--version", "1.1.0")
    assert built.exit_code == 0, built.output
    newer = release.parent / "1.1.0"
    assert json.loads((newer / "manifest.json").read_text())["kind_code"] == second
    line = (
        f"The evaluator changed: crashy-plugin 0.1.0 (code {first['code'][:12]}) → "
        f"crashy-plugin 0.2.0 (code {second['code'][:12]})."
    )
    assert line in (newer / "CHANGELOG.md").read_text().splitlines()
    assert line in (newer / "README.md").read_text().splitlines()
    # Nothing changed since: refused as ever.
    again = invoke(runner, "build", "--version", "1.2.0")
    assert (
        again.exit_code == 2
        and "nothing changed in the data since 1.1.0 (crashy v1.1.0, not published to the Hub), nor in its evaluator"
        in str(again.exception)
    )


def test_a_score_that_exits_is_one_line_not_a_silent_exit(plugins, tmp_path, runner, monkeypatch):
    exiting = EVALUATOR.replace("    out = []", "    raise SystemExit(5)")
    plugins.install("crashy", evaluate=exiting, standalone=STANDALONE)
    release = build_release(plugins, tmp_path, runner, monkeypatch, SENTENCES[:1])
    said = "kind 'crashy' failed scoring item 1 of 1 (id {}) with m1 (its score()): SystemExit: 5"
    from workbench.core.ids import hypothesis_id

    said = said.format(hypothesis_id(SENTENCES[0]))
    assert one_line(invoke(runner, "evaluate", str(release), "--model", "m1")) == said
    ran = script(release, "--model", "m1")
    assert ran.returncode == 2 and ran.stderr.strip().splitlines()[-1] == f"evaluate.py: error: {said}"
