"""Models in the project's language: tiny seeded fixtures of the XLM-R and CamemBERT classes (a
SentencePiece vocabulary of French words) propose fills for the French example, and a
multilingual (XLM-R-class) NLI classifier filters them, as real checkpoints of those classes would."""

from __future__ import annotations

import shutil

import pyarrow.parquet as pq
import pytest
from conftest import ROOT, invoke

from workbench.models.fixtures import FRENCH_WORDS, NLI_LABEL_ORDERS, build_mlm, build_nli


@pytest.fixture(scope="module")
def french_models(tmp_path_factory):
    root = tmp_path_factory.mktemp("fr-models")
    return {
        "xlmr": build_mlm(root / "mlm-xlmr", "xlmr", seed=41, words=FRENCH_WORDS),
        "camembert": build_mlm(root / "mlm-camembert", "camembert", seed=42, words=FRENCH_WORDS),
        "nli": build_nli(root / "nli-xlmr", NLI_LABEL_ORDERS["nli-b"], style="xlmr", seed=43, words=FRENCH_WORDS),
    }


@pytest.mark.parametrize("style", ["xlmr", "camembert"])
def test_french_fills_from_sentencepiece_models_go_through_the_filters(
    style, french_models, tmp_path, monkeypatch, runner
):
    from transformers import AutoConfig

    assert AutoConfig.from_pretrained(french_models[style]).model_type == {"xlmr": "xlm-roberta"}.get(style, style)
    project = tmp_path / "fr"
    shutil.copytree(ROOT / "examples" / "french", project)
    config = (project / "workbench.toml").read_text(encoding="utf-8")
    config = config.replace('model = "models/mlm-bert-fr"', f'model = "{french_models[style]}"')
    config = config.replace(
        'models = ["models/nli-a", "models/nli-b", "models/nli-c"]', f'models = ["{french_models["nli"]}"]'
    )
    (project / "workbench.toml").write_text(config, encoding="utf-8")
    monkeypatch.chdir(project)
    result = invoke(runner, "run")
    assert result.exit_code == 0, result.output + repr(result.exception)
    candidates = pq.read_table(project / ".workbench" / "generate" / "data.parquet").to_pylist()
    assert candidates and all(c["mlm_name"] == str(french_models[style]) for c in candidates)
    # SentencePiece word starts are read as such: a fill is a whole word, never "▁" text
    assert all(not w.startswith("\u2581") for c in candidates for w in c["fill"])
    starts = {c["reject_reason"] for c in candidates}
    assert None in starts and "pos" in starts
    after_a = [c for c in candidates if " a <mask>" in c["masked_hypothesis"] and c["reject_reason"] != "subword"]
    # "a" is the verb avoir, never "an"; the fill itself may be elided before the next word ("que un" -> "qu'un")
    assert after_a and all(
        f" a {c['fill'][0]}" in c["hypothesis"] or f" a {c['fill'][0][:-1]}'" in c["hypothesis"] for c in after_a
    )
    filtered = pq.read_table(project / ".workbench" / "filter" / "data.parquet").to_pylist()
    assert filtered and all([p["model"] for p in r["predictions"]] == [str(french_models["nli"])] for r in filtered)
