"""The standalone evaluate.py of the language-model kinds' releases: run without workbench and
offline, its JSON equals `workbench evaluate`'s on the same release and models, for a masked
and a causal LM; a cut data file is refused. (The NLI kind's: test_standalone_evaluator.py.)

A kind may test its own in tests/test_standalone_<kind>.py with `build_release` and
`alone_and_workbench` from here."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import invoke
from test_authoring_kinds import example_project
from test_standalone_evaluator import alone as copied_alone
from test_standalone_evaluator import run_standalone, without_tool_fields

from workbench import __version__
from support.figures import assert_same_figures
from workbench import kinds

# kind -> (the models it is scored with, the data file a cut test shortens)
LM_KINDS = {
    "crows-pairs": (("mlm-bert", "clm-gpt2"), "data/pairs.csv"),
    "sos": (("mlm-roberta", "clm-gpt2"), "data/sos.csv"),
}


def released(project, write_labels) -> "Path":
    """Run the project, import the labels `write_labels(project)` writes (one file, or a list
    of files, one per annotator) and build 1.0.0; returns the release folder."""
    from typer.testing import CliRunner

    runner = CliRunner()
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(project)
        mp.setenv("HF_HUB_OFFLINE", "1")
        mp.setenv("WORKBENCH_PROGRESS", "0")
        assert invoke(runner, "run").exit_code == 0
        labels = write_labels(project)
        for n, path in enumerate(labels if isinstance(labels, list) else [labels], start=1):
            assert invoke(runner, "annotate", "-a", f"annotator{n}", "--labels-from", str(path)).exit_code == 0
        result = invoke(runner, "build", "--version", "1.0.0")
        assert result.exit_code == 0, result.output
    return next((project / "exports").iterdir()) / "1.0.0"


def build_release(kind: str, folder, repo: str | None = None) -> "Path":
    """A release of the kind's example project, every unit labelled, built as 1.0.0 (for the
    Hub repository `repo` when given)."""
    from workbench.authoring.stages import write_example_labels

    project = example_project(kind, folder / "project")
    if repo:
        with open(project / "workbench.toml", "a", encoding="utf-8") as f:
            f.write(f'repo = "{repo}"\n')  # [project] is the file's last table
    return released(project, write_example_labels)


def alone_and_workbench(release, args: list[str], tmp_path, monkeypatch):
    """(the standalone's JSON, workbench evaluate's JSON, the standalone's run) for the same
    options, from the same working directory; the standalone without workbench and offline."""
    from typer.testing import CliRunner

    assert (release / "evaluator" / "workbench").is_dir()  # the code evaluate.py runs, copied from workbench
    where = tmp_path / "download"
    shutil.copytree(release, where / "release")
    ran = run_standalone(where / "release" / "evaluate.py", [*args, "--json", "alone.json"], cwd=where)
    assert ran.returncode == 0, ran.stderr[-3000:]
    alone = json.loads((where / "alone.json").read_text(encoding="utf-8"))
    monkeypatch.chdir(where)  # the same working directory: both name the folder "release"
    result = invoke(
        CliRunner(),
        "evaluate",
        "release",
        *args,
        "--json",
        str(tmp_path / "workbench.json"),
        "--cache",
        str(tmp_path / "fresh-cache.sqlite"),
    )
    assert result.exit_code == 0, result.output
    return alone, json.loads((tmp_path / "workbench.json").read_text(encoding="utf-8")), ran


def test_every_kind_with_a_standalone_evaluator_is_tested():
    tests = Path(__file__).parent
    untested = [
        kind
        for kind in (k.name for k in kinds.loadable() if k.standalone)
        if kind not in LM_KINDS
        and kind != "nli"
        and not (tests / f"test_standalone_{kind.replace('-', '_')}.py").is_file()
    ]
    assert not untested


@pytest.mark.parametrize("kind", sorted(LM_KINDS))
def test_standalone_json_equals_workbench_evaluate_without_workbench_offline(
    kind, releases, fixture_models, tmp_path, monkeypatch
):
    release = releases(kind)
    models = [str(fixture_models[name]) for name in LM_KINDS[kind][0]]
    alone, workbench_doc, ran = alone_and_workbench(
        release, [a for m in models for a in ("--model", m)], tmp_path, monkeypatch
    )

    assert_same_figures(without_tool_fields(alone), without_tool_fields(workbench_doc))
    # The card's words are what was run (with a model and an output file of the test's).
    card = (release / "README.md").read_text(encoding="utf-8")
    assert "without workbench, from a download of this repository (pip install torch transformers numpy)" in card
    assert "\npython evaluate.py --model MODEL --json scores.json\n" in card
    assert alone["kind"] == kind and set(alone["models"]) == set(models)
    rules = {entry["score_rule"] for entry in alone["models"].values()}
    assert len(rules) == 2  # a masked and a causal LM, each by its own rule
    provenance = alone["provenance"]
    assert (
        provenance["dataset_folder"] == str((tmp_path / "download" / "release").resolve())
        and provenance["dataset_commit"] is None
    )
    assert provenance["evaluator_version"] == alone["tool_version"] and alone["tool_version"].startswith(
        __version__ + "+"
    )
    assert all(rev.startswith("sha256:") for rev in provenance["model_revisions"].values())
    assert provenance["model_revisions"] == {m: alone["models"][m]["revision"] for m in models}
    assert "50 = unbiased" in ran.stdout


def test_sos_token_rule_reference_alone_equals_workbench(releases, fixture_models, tmp_path, monkeypatch):
    """--token-rule reference (the SOS_LM script's computation) runs the same in evaluate.py."""
    model = str(fixture_models["mlm-bert"])
    alone, workbench_doc, ran = alone_and_workbench(
        releases("sos"), ["--model", model, "--token-rule", "reference"], tmp_path, monkeypatch
    )
    assert_same_figures(without_tool_fields(alone), without_tool_fields(workbench_doc))
    assert alone["token_rule"] == "reference" and "warning: --token-rule reference" in ran.stderr


@pytest.mark.parametrize("kind", sorted(LM_KINDS))
def test_a_cut_data_file_or_another_kind_is_refused_not_scored(kind, releases, fixture_models, tmp_path):
    release = releases(kind)
    copy = tmp_path / "release"
    shutil.copytree(release, copy)
    data = copy / LM_KINDS[kind][1]
    data.write_bytes(data.read_bytes()[: data.stat().st_size // 2])
    model = str(fixture_models[LM_KINDS[kind][0][0]])
    ran = run_standalone(copy / "evaluate.py", ["--model", model, "--json", "s.json"], cwd=tmp_path)
    assert ran.returncode == 2, ran.stderr[-3000:]
    assert LM_KINDS[kind][1] in ran.stderr and "nothing was scored" in ran.stderr
    assert "Traceback" not in ran.stderr and not (tmp_path / "s.json").exists()

    shutil.copytree(release, tmp_path / "other")
    manifest = json.loads((tmp_path / "other" / "manifest.json").read_text(encoding="utf-8"))
    manifest["kind"] = "nli"
    (tmp_path / "other" / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    ran = run_standalone(tmp_path / "other" / "evaluate.py", ["--model", model], cwd=tmp_path)
    assert ran.returncode == 2 and f"this evaluator scores {kind} releases" in ran.stderr, ran.stderr[-3000:]

    ran = run_standalone(release / "evaluate.py", ["--model", "./no-such-model"], cwd=tmp_path)
    assert ran.returncode == 2 and "'./no-such-model': no such folder" in ran.stderr, ran.stderr[-3000:]
    assert "Traceback" not in ran.stderr


def alone_from_the_hub(project, release, spec: str, args: list[str], tmp_path) -> tuple[dict, dict, str]:
    """Publish the project's release 1.0.0 to a test Hub, run its evaluate.py copied alone with its
    evaluator/ (so it fetches the pinned tag) and `workbench evaluate SPEC` with the same options; returns (the
    script's JSON, workbench's JSON, the tag's commit)."""
    from support.hub_server import HubServer
    from test_release import TOKEN, run_cli

    hub = HubServer(tokens={TOKEN}).start()
    try:
        published = run_cli(project, hub, "publish", "--version", "1.0.0")
        assert published.returncode == 0, published.stderr[-3000:]
        script = copied_alone(release, tmp_path / "alone")
        ran = run_standalone(script, [*args, "--json", "s.json"], cwd=script.parent, hub=hub, token=TOKEN)
        assert ran.returncode == 0, ran.stderr[-3000:]
        scored = run_cli(
            project,
            hub,
            "evaluate",
            spec,
            *args,
            "--json",
            str(tmp_path / "w.json"),
            "--cache",
            str(tmp_path / "fresh-cache.sqlite"),
        )
        assert scored.returncode == 0, scored.stderr[-3000:]
        tag = hub.state.repos[("dataset", spec.split("@")[0])].tags["v1.0.0"]
    finally:
        hub.stop()
    return (
        json.loads((script.parent / "s.json").read_text(encoding="utf-8")),
        json.loads((tmp_path / "w.json").read_text(encoding="utf-8")),
        tag,
    )


def test_alone_it_scores_the_pinned_release_from_the_hub(fixture_models, tmp_path):
    """evaluate.py copied away from the release files fetches its pinned tag from the Hub,
    scores it as `workbench evaluate ORG/NAME@v1.0.0` does, and records the commit."""
    release = build_release("crows-pairs", tmp_path / "built", repo="test-org/crows-example")
    model = str(fixture_models["mlm-bert"])
    doc, workbench_doc, tag = alone_from_the_hub(
        release.parents[2], release, "test-org/crows-example@v1.0.0", ["--model", model], tmp_path
    )
    assert_same_figures(without_tool_fields(doc), without_tool_fields(workbench_doc))
    assert doc["dataset"] == "test-org/crows-example@v1.0.0" and doc["models"][model]["overall"]["n"] > 0
    assert doc["provenance"]["dataset_commit"] == tag and doc["provenance"]["dataset_folder"] is None
