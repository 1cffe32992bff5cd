"""The sofa release's standalone evaluate.py: run without workbench and offline, its JSON is
`workbench evaluate`'s to the last bit, keys in the same order, for masked and causal LMs, also
when the probes arrive in many blocks and chunks; a cut data file is refused."""

from __future__ import annotations

import hashlib
import json
import math
import shutil

from test_standalone_evaluator import run_standalone, without_tool_fields
from test_standalone_lm_kinds import alone_and_workbench

from support.figures import assert_same_figures

from workbench.kinds.sofa import data

MODELS = ("mlm-bert", "mlm-roberta", "clm-gpt2")


def _same(alone: dict, workbench_doc: dict) -> None:
    # keys in the same order (the pasted code builds both documents), floats within float noise
    assert_same_figures(without_tool_fields(alone), without_tool_fields(workbench_doc), ordered=True)


def test_standalone_json_equals_workbench_evaluate_without_workbench_offline(
    releases, fixture_models, tmp_path, monkeypatch
):
    models = [str(fixture_models[name]) for name in MODELS]
    alone, workbench_doc, ran = alone_and_workbench(
        releases("sofa"), [a for m in models for a in ("--model", m)], tmp_path, monkeypatch
    )
    _same(alone, workbench_doc)
    assert alone["kind"] == "sofa" and list(alone["models"]) == models
    rules = {m: alone["models"][m]["score_rule"] for m in models}
    assert rules == dict(zip(models, ("pseudo-perplexity", "pseudo-perplexity", "perplexity")))
    assert alone["dataset"]["file"] == "release/data/probes.csv"
    n = alone["dataset"]["n_probes"]
    assert n >= 10 and alone["dataset"]["n_identities"] >= 2
    for model in models:
        entry = alone["models"][model]
        assert entry["overall"]["n_probes"] == n and entry["overall"]["n_stereotypes"] >= 2
        assert entry["overall"]["sofa"] > 0 and math.isfinite(entry["overall"]["sofa"])
        variances = [s["variance"] for s in entry["by_stereotype"].values() if s["variance"] is not None]
        assert len(variances) >= 2 and len(set(variances)) == len(variances)  # real, distinct scores
        assert entry["highest_dds"] and entry["highest_dds"][0]["dds"] > 0
        assert sum(i["n_lowest"] for i in entry["by_identity"].values()) == entry["overall"]["n_stereotypes"]
    assert alone["models"][models[0]]["overall"]["sofa"] != alone["models"][models[2]]["overall"]["sofa"]
    assert alone["provenance"]["model_revisions"] == {m: alone["models"][m]["model_revision"] for m in models}
    assert "global SOFA" in ran.stdout and "Traceback" not in ran.stderr
    assert ", SOFA" not in ran.stdout  # the per-category statistic is not shown as an overall figure


def test_equal_when_the_probes_come_in_many_blocks_and_chunks(releases, fixture_models, tmp_path, monkeypatch):
    """Small blocks and chunks in both: the script cuts the file where data.py does."""
    release = tmp_path / "small-chunks" / "release"
    shutil.copytree(releases("sofa"), release)
    copied = "evaluator/workbench/kinds/sofa/scoring.py"  # where the release's evaluate.py reads them
    code = (release / copied).read_text(encoding="utf-8")
    for line, small in (("BLOCK_BYTES = 1 << 18", "BLOCK_BYTES = 400"), ("CHUNK_ROWS = 8192", "CHUNK_ROWS = 5")):
        assert code.count(f"\n{line}") == 1
        code = code.replace(f"\n{line}", f"\n{small}")
    (release / copied).write_text(code, encoding="utf-8")
    manifest = json.loads((release / "manifest.json").read_text(encoding="utf-8"))
    manifest["files"][copied] = hashlib.sha256(code.encode()).hexdigest()  # workbench checks it too
    (release / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    monkeypatch.setattr(data, "BLOCK_BYTES", 400)
    monkeypatch.setattr(data, "CHUNK_ROWS", 5)
    sizes, real_chunks = [], data.chunks
    monkeypatch.setattr(data, "chunks", lambda cat: (sizes.append(len(c.probes)) or c for c in real_chunks(cat)))

    models = [str(fixture_models[name]) for name in ("mlm-bert", "clm-gpt2")]
    alone, workbench_doc, _ = alone_and_workbench(
        release, [a for m in models for a in ("--model", m)], tmp_path, monkeypatch
    )
    _same(alone, workbench_doc)
    assert len(sizes) >= 2 * 3 and max(sizes) < alone["dataset"]["n_probes"]  # several chunks per model


def test_a_cut_data_file_is_refused_not_scored(releases, fixture_models, tmp_path):
    copy = tmp_path / "release"
    shutil.copytree(releases("sofa"), copy)
    probes = copy / "data" / "probes.csv"
    probes.write_bytes(probes.read_bytes()[: probes.stat().st_size // 2])
    ran = run_standalone(
        copy / "evaluate.py", ["--model", str(fixture_models["clm-gpt2"]), "--json", "s.json"], cwd=tmp_path
    )
    assert ran.returncode == 2, ran.stderr[-3000:]
    assert "data/probes.csv" in ran.stderr and "nothing was scored" in ran.stderr
    assert "Traceback" not in ran.stderr and not (tmp_path / "s.json").exists()


def test_variance_reference_alone_equals_workbench(releases, fixture_models, tmp_path, monkeypatch):
    """--variance reference (the reference script's loop) runs the same in evaluate.py."""
    model = str(fixture_models["clm-gpt2"])
    alone, workbench_doc, ran = alone_and_workbench(
        releases("sofa"), ["--model", model, "--variance", "reference"], tmp_path, monkeypatch
    )
    _same(alone, workbench_doc)
    assert alone["variance"] == "reference" and "warning: --variance reference" in ran.stderr
    assert all("variance_of" in c for c in alone["models"][model]["by_category"].values())
