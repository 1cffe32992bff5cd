"""The standalone evaluate.py of an `honest` release: run without workbench and offline, with the
user's lexicon, its JSON equals `workbench evaluate`'s for masked and causal LMs and for the
options that change the measures; a cut data file or a bad lexicon is refused, not scored."""

from __future__ import annotations

import hashlib
import re
import shutil

from test_standalone_evaluator import run_standalone, without_tool_fields
from test_standalone_lm_kinds import alone_and_workbench
from support.figures import assert_same_figures

MODELS = ("mlm-bert", "mlm-roberta", "clm-gpt2")
CATEGORIES = ("effort", "pace", "manner")


def lexicon_in(folder):
    """A made-up lexicon in HurtLex's columns, of every other word of the fixture models'
    vocabulary (so their fills hit it, but not always), and as many `inclusive` rows (left out)."""
    from workbench.models.fixtures import vocabulary

    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "lexicon.tsv"
    rows = [
        f"{word}\t{CATEGORIES[i % 3]}\t{'conservative' if i % 2 == 0 else 'inclusive'}\n"
        for i, word in enumerate(w for w in vocabulary() if w.isalpha())
    ]
    path.write_text("lemma\tcategory\tlevel\n" + "".join(rows), encoding="utf-8")
    return path


def test_standalone_json_equals_workbench_evaluate_for_masked_and_causal_lms(
    releases, fixture_models, tmp_path, monkeypatch
):
    release = releases("honest")
    lexicon = lexicon_in(tmp_path / "download" / "lexicon")  # beside the release: both show it relative
    models = [str(fixture_models[name]) for name in MODELS]
    args = [*(a for m in models for a in ("--model", m)), "--lexicon", str(lexicon), "--top-k", "5"]
    alone, workbench_doc, ran = alone_and_workbench(release, args, tmp_path, monkeypatch)

    assert_same_figures(without_tool_fields(alone), without_tool_fields(workbench_doc))
    assert alone["kind"] == "honest" and alone["source"] == "release" and alone["top_k"] == 5
    assert alone["group_by"] == "category" and alone["n_templates"] > 0
    assert alone["lexicon"]["file"] == "lexicon/lexicon.tsv" and alone["lexicon"]["rows_skipped_by_level"] > 100
    assert set(alone["models"]) == set(models)
    entries = alone["models"].values()
    assert {(e["model_kind"], e["score_rule"]) for e in entries} == {("masked", "fill-mask"), ("causal", "next-word")}
    for entry in entries:
        assert list(entry["overall"]["curve"]) == ["1", "2", "3", "4", "5"]
        assert set(entry["by_group"]) == {"female", "male"}
        assert set(entry["by_lexicon_category"]) == set(CATEGORIES)
        assert 0 < entry["overall"]["honest"] < 100  # some fills are in the lexicon, some are not
    provenance = alone["provenance"]
    assert provenance["lexicon"]["sha256"] == hashlib.sha256(lexicon.read_bytes()).hexdigest()
    assert provenance["model_revisions"] == {m: alone["models"][m]["revision"] for m in models}
    assert all(rev.startswith("sha256:") for rev in provenance["model_revisions"].values())
    assert "HONEST@5" in ran.stdout


def test_the_options_that_change_the_measures_are_the_same(releases, fixture_models, tmp_path, monkeypatch):
    lexicon = lexicon_in(tmp_path / "lexicon")
    args = [
        "--model",
        str(fixture_models["clm-gpt2"]),
        "--lexicon",
        str(lexicon),
        "--top-k",
        "3",
        "--score-rule",
        "next-token",
        "--group-by",
        "type",
    ]
    alone, workbench_doc, _ = alone_and_workbench(releases("honest"), args, tmp_path, monkeypatch)

    assert_same_figures(without_tool_fields(alone), without_tool_fields(workbench_doc))
    entry = next(iter(alone["models"].values()))
    assert alone["group_by"] == "type" and entry["score_rule"] == "next-token" and len(entry["overall"]["curve"]) == 3
    assert set(entry["by_group"]) == {"descriptive_adjective", "occupation"}


def test_the_default_top_k_is_workbench_evaluates(releases):
    """Both take it from measure.TOP_K, which the release carries as it is in workbench."""
    from workbench import kinds
    from workbench.kinds.honest import measure

    default = next(o.default for o in kinds.get("honest").evaluator_options if o.dest == "top_k")
    copied = (releases("honest") / "evaluator" / "workbench" / "kinds" / "honest" / "measure.py").read_text(
        encoding="utf-8"
    )
    assert default == measure.TOP_K and re.search(r"^TOP_K = (\d+)", copied, re.M).group(1) == str(default)
    assert "from .measure import TOP_K" in (
        releases("honest") / "evaluator" / "workbench" / "kinds" / "honest" / "options.py"
    ).read_text(encoding="utf-8")


def test_a_cut_data_file_or_a_bad_lexicon_is_refused_not_scored(releases, fixture_models, tmp_path):
    release = releases("honest")
    lexicon = lexicon_in(tmp_path / "lexicon")
    model = str(fixture_models["mlm-bert"])
    copy = tmp_path / "release"
    shutil.copytree(release, copy)
    data = copy / "data" / "templates.tsv"
    data.write_bytes(data.read_bytes()[: data.stat().st_size // 2])
    ran = run_standalone(
        copy / "evaluate.py", ["--model", model, "--lexicon", str(lexicon), "--json", "s.json"], cwd=tmp_path
    )
    assert ran.returncode == 2, ran.stderr[-3000:]
    assert "data/templates.tsv" in ran.stderr and "nothing was scored" in ran.stderr
    assert "Traceback" not in ran.stderr and not (tmp_path / "s.json").exists()

    bad = tmp_path / "bad.tsv"
    bad.write_text("word\tcategory\nlazy\teffort\n", encoding="utf-8")
    ran = run_standalone(
        release / "evaluate.py", ["--model", model, "--lexicon", str(bad), "--json", "s.json"], cwd=tmp_path
    )
    assert ran.returncode == 2 and "bad.tsv:1: the lexicon has no lemma column" in ran.stderr, ran.stderr[-3000:]
    assert "Traceback" not in ran.stderr and not (tmp_path / "s.json").exists()


def test_alone_it_scores_the_pinned_release_from_the_hub(fixture_models, tmp_path):
    """Away from the release files, evaluate.py fetches its pinned tag and names the data set,
    repository and revision as `workbench evaluate ORG/NAME@v1.0.0` does."""
    from test_standalone_lm_kinds import alone_from_the_hub, build_release

    release = build_release("honest", tmp_path / "built", repo="test-org/honest-example")
    lexicon = lexicon_in(tmp_path / "lexicon")  # outside both working directories: shown absolute by both
    model = str(fixture_models["clm-gpt2"])
    args = ["--model", model, "--lexicon", str(lexicon), "--top-k", "4"]
    doc, workbench_doc, tag = alone_from_the_hub(
        release.parents[2], release, "test-org/honest-example@v1.0.0", args, tmp_path
    )
    assert_same_figures(without_tool_fields(doc), without_tool_fields(workbench_doc))
    assert doc["source"] == "test-org/honest-example@v1.0.0" and doc["repo"] == "test-org/honest-example"
    assert doc["revision"] == "v1.0.0" and doc["models"][model]["overall"]["n_templates"] > 0
    assert doc["provenance"]["dataset_folder"] is None and doc["provenance"]["dataset_commit"] == tag


def test_the_fidelity_switches_are_the_same(releases, fixture_models, tmp_path, monkeypatch):
    """--top-k as a list, --repeated-templates once and --lemma-normalisation unidecode (#35)
    run in evaluate.py as in `workbench evaluate`."""
    lexicon = lexicon_in(tmp_path / "lexicon")
    args = [
        "--model",
        str(fixture_models["mlm-bert"]),
        "--lexicon",
        str(lexicon),
        "--top-k",
        "3,1",
        "--repeated-templates",
        "once",
        "--lemma-normalisation",
        "unidecode",
    ]
    alone, workbench_doc, ran = alone_and_workbench(releases("honest"), args, tmp_path, monkeypatch)

    assert_same_figures(without_tool_fields(alone), without_tool_fields(workbench_doc))
    assert alone["top_k"] == 3 and alone["top_ks"] == [1, 3]
    entry = next(iter(alone["models"].values()))
    assert set(entry["overall"]["honest_at"]) == {"1", "3"}
    assert alone["repeated_templates"] == "once" and alone["lemma_normalisation"] == "unidecode"
    assert "HONEST@3" in ran.stdout


def test_fairbelief_analyses_are_the_same(releases, fixture_models, tmp_path, monkeypatch):
    """Table 1, the family curves and the agreement (a tiny sentence-embedding model) from the
    release's evaluate.py equal `workbench evaluate`'s (#52 item 2)."""
    from workbench.models.fixtures import build_embedder

    lexicon = lexicon_in(tmp_path / "lexicon")
    embedder = build_embedder(tmp_path / "embedder", seed=4)
    models = [str(fixture_models[name]) for name in MODELS]
    table = tmp_path / "models.csv"
    table.write_text("name,family,size\n" + "".join(f"{m},{m[-4:]},tiny\n" for m in models), encoding="utf-8")
    args = [*(a for m in models for a in ("--model", m)), "--lexicon", str(lexicon), "--top-k", "3"]
    args += ["--embedding-model", str(embedder), "--models-table", str(table)]
    alone, workbench_doc, _ = alone_and_workbench(releases("honest"), args, tmp_path, monkeypatch)

    assert_same_figures(without_tool_fields(alone), without_tool_fields(workbench_doc))
    across = alone["across_models"]
    assert set(across["table_1"]) == set(models) and across["agreement"]["pairs"]["all"] == 3
    assert across["agreement"]["per_k"] == workbench_doc["across_models"]["agreement"]["per_k"]


def test_predictions_alone_equal_workbench(releases, tmp_path, monkeypatch):
    """--predictions (fills keyed by template) in place of --model: the script's JSON equals
    `workbench evaluate`'s on the same file."""
    import csv
    import json

    release = releases("honest")
    lexicon = lexicon_in(tmp_path / "download" / "lexicon")
    with open(release / "data" / "templates.tsv", encoding="utf-8", newline="") as f:
        templates = sorted({row["template_masked"] for row in csv.DictReader(f, delimiter="\t")})
    words = [line.split("\t")[0] for line in lexicon.read_text(encoding="utf-8").splitlines()[1:9]]
    fills = tmp_path / "fills.jsonl"
    fills.write_text(
        "".join(json.dumps({"template": t, "fills": words[k % 2 :: 2][:3]}) + "\n" for k, t in enumerate(templates)),
        encoding="utf-8",
    )
    args = ["--predictions", f"mine={fills}", "--lexicon", str(lexicon), "--top-k", "3"]
    alone, workbench_doc, _ = alone_and_workbench(release, args, tmp_path, monkeypatch)
    assert without_tool_fields(alone) == without_tool_fields(workbench_doc)
    assert list(alone["models"]) == ["mine"] and alone["models"]["mine"]["predictions"]["layout"] == "keyed"
    assert 0 < alone["models"]["mine"]["overall"]["honest"] < 100  # every other word is a conservative lemma
    assert alone["provenance"]["prediction_files"]["mine"]["sha256"] == hashlib.sha256(fills.read_bytes()).hexdigest()
