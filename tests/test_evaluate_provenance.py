"""Every result says exactly what it scored: the data set as given and resolved with its files'
hashes and the release's name, version and manifest hash; the kind and its options; each model
as given, as resolved and its revision; seed and resamples; the cache and how many values came
from it; workbench's version: in the JSON, in every provenance file beside a CSV, and in a
release's own evaluate.py."""

from __future__ import annotations

import hashlib
import json
import shutil

from conftest import invoke
from test_standalone_evaluator import run_standalone

from workbench import __version__


def _sha(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_evaluate_records_the_release_models_options_and_cache_it_used(
    releases, fixture_models, tmp_path, runner, monkeypatch
):
    release = tmp_path / "here" / "release"
    shutil.copytree(releases("crows-pairs"), release)
    model = fixture_models["mlm-bert"]
    monkeypatch.chdir(tmp_path / "here")

    def run(tag: str) -> dict:
        result = invoke(
            runner,
            "evaluate",
            "release",
            "--model",
            str(model),
            "--cache",
            "c.sqlite",
            "--seed",
            "7",
            "--bootstrap",
            "200",
            "--json",
            f"{tag}.json",
            "--csv",
            f"{tag}.csv",
            "--items",
            f"{tag}.items.parquet",
        )
        assert result.exit_code == 0, result.output
        return json.loads((tmp_path / "here" / f"{tag}.json").read_text(encoding="utf-8"))["provenance"]

    first = run("first")
    manifest = json.loads((release / "manifest.json").read_text(encoding="utf-8"))
    (dataset,) = first["datasets"]
    assert dataset["given"] == "release" and dataset["path"] == str(release.resolve())
    assert dataset["release"] == {
        "name": manifest["name"],
        "version": "1.0.0",
        "manifest_sha256": _sha(release / "manifest.json"),
    }
    assert dataset["files"]["data/pairs.csv"] == _sha(release / "data" / "pairs.csv")
    assert first["kind"] == "crows-pairs" and first["workbench_version"] == __version__
    assert first["intervals"] == {"level": 0.95, "resamples": 200, "seed": 7}
    assert "score_rule" in first["options"]
    entry = first["models"][str(model)]
    assert entry["resolved"] == str(model.resolve()) and entry["revision"].startswith("sha256:")
    assert first["cache"]["path"] == str((tmp_path / "here" / "c.sqlite").resolve())
    assert first["cache"]["values_read"] == 0 and first["cache"]["values_computed"] > 0
    # every sidecar holds the same record
    for sidecar in ("first.csv.provenance.json", "first.items.parquet.provenance.json"):
        assert json.loads((tmp_path / "here" / sidecar).read_text(encoding="utf-8"))["provenance"] == first
    # a second run reads every value from the cache and says so
    again = run("again")
    assert again["cache"]["values_read"] == first["cache"]["values_computed"]
    assert again["cache"]["values_computed"] == 0


def test_a_plain_data_file_is_recorded_by_its_path_and_hash(fixture_models, tmp_path, runner, monkeypatch):
    from workbench.kinds.crows_pairs.example import write_example

    monkeypatch.chdir(tmp_path)
    data = write_example(tmp_path / "public")
    result = invoke(
        runner,
        "evaluate",
        str(data),
        "--kind",
        "crows-pairs",
        "--model",
        str(fixture_models["clm-gpt2"]),
        "--no-cache",
        "--json",
        "s.json",
    )
    assert result.exit_code == 0, result.output
    record = json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))["provenance"]
    # which published copy it is (sources/known_copies.toml): the workbench's own example file is one it knows
    assert record["datasets"] == [
        {
            "given": str(data),
            "path": str(data.resolve()),
            "sha256": _sha(data),
            "source_copy": "Example pairs workbench example",
        }
    ]
    assert record["cache"] is None


def test_a_releases_own_evaluate_py_records_the_release_it_scored(releases, fixture_models, tmp_path):
    release = tmp_path / "release"
    shutil.copytree(releases("crows-pairs"), release)
    model = fixture_models["clm-gpt2"]
    ran = run_standalone(
        release / "evaluate.py", ["--model", str(model), "--json", str(tmp_path / "s.json")], cwd=tmp_path
    )
    assert ran.returncode == 0, ran.stderr[-3000:]
    record = json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))["provenance"]
    manifest = json.loads((release / "manifest.json").read_text(encoding="utf-8"))
    assert (record["release_name"], record["release_version"]) == (manifest["name"], "1.0.0")
    assert record["manifest_sha256"] == _sha(release / "manifest.json")
    assert record["files"]["data/pairs.csv"] == _sha(release / "data" / "pairs.csv")
    assert record["models"][str(model)]["resolved"] == str(model.resolve())
    assert record["intervals"]["seed"] is not None and record["intervals"]["resamples"] > 0
