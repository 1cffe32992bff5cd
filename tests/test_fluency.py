"""The fluency stage's scores against plain loops, and its `[fluency]` settings.

PLL's fast path forwards each distinct masked copy once (fills of one masked hypothesis share
the copy masked at the fill) and picks the targets on the device: its values must equal a
plain loop that forwards every masked copy of every text alone, with the full model head.
"""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import pytest

from workbench.core.config import load_config
from workbench.core.errors import ConfigError, ModelError
from workbench.core.workspace import Workspace
from workbench.kinds import pipeline_for, settings_problems

ROOT = Path(__file__).resolve().parents[1]
# Fills of one masked sentence (the rows masked at the fill are shared), a repeated text,
# sub-word pieces, and a one-word text.
TEXTS = [
    "the workers are kind and calm.",
    "the workers are warm and calm.",
    "the workers are slow and calm.",
    "the workers are kind and calm.",
    "Older people often use a laptop.",
    "they help others",
    "the nursing staff cares",
    "sales",
]
TOL = 1e-5


@pytest.fixture(scope="module")
def mlm(fixture_models):
    from workbench.models.loading import load, resolve
    from workbench.models.mlm import MaskedLM

    ref = resolve(str(fixture_models["mlm-bert"]))
    tok, model, device = load(ref, "mlm", "cpu")
    return MaskedLM(ref, tok, model, device, batch_size=3)


def plain_pll(lm, text: str) -> tuple[float, int]:
    """One masked copy per token, each forwarded alone through the whole model (full head),
    specials banned from the distribution as the fills' are."""
    import torch

    tok = lm.tokenizer
    ids = tok(text)["input_ids"]
    total, n = 0.0, 0
    for p, t in enumerate(ids):
        if t in tok.all_special_ids:
            continue
        masked = list(ids)
        masked[p] = tok.mask_token_id
        with torch.no_grad():
            logits = lm.model(input_ids=torch.tensor([masked])).logits[0, p].float()
        logits[tok.all_special_ids] = -math.inf
        total += float(torch.log_softmax(logits, -1)[t])
        n += 1
    return total, n


def test_pll_equals_a_plain_loop_and_forwards_each_masked_copy_once(mlm):
    from workbench.models import mlm as mlm_module

    want = {t: plain_pll(mlm, t) for t in TEXTS}
    copies = sum(want[t][1] for t in TEXTS)  # every masked copy, the repeated text's too
    unique = sum(n for _, n in want.values())  # those of the distinct texts
    distinct = {
        (tuple(ids[:p] + [mlm.tokenizer.mask_token_id] + ids[p + 1 :]), p)
        for ids in mlm.tokenizer(sorted(set(TEXTS)))["input_ids"]
        for p, t in enumerate(ids)
        if t not in mlm.tokenizer.all_special_ids
    }
    mlm.batch_size = 1
    before = mlm_module.CALLS["forward"]
    ticks: list[int] = []
    got = mlm.pseudo_log_likelihood(TEXTS, progress=ticks.append)
    # The three fills of "the workers are <mask> and calm." share the row masked at the fill.
    assert mlm_module.CALLS["forward"] - before == len(distinct) == unique - 2
    assert sum(ticks) == copies
    for batch in (3, 64):  # batch composition and padding change nothing
        mlm.batch_size = batch
        again = mlm.pseudo_log_likelihood(TEXTS)
        for text in TEXTS:
            assert again[text][1] == got[text][1] == want[text][1]
            assert again[text][0] == pytest.approx(want[text][0], abs=TOL * want[text][1])
            assert got[text][0] == pytest.approx(want[text][0], abs=TOL * want[text][1])


def test_score_order_groups_the_fills_of_one_masked_hypothesis():
    import pyarrow as pa

    from workbench.kinds.nli.stages.fluency import score_order

    table = pa.table(
        {
            "masked_hypothesis": ["b <mask>", "a <mask> x", "b <mask>", "a <mask> x", "b <mask>"],
            "hypothesis": ["b zed", "a one x", "b apple", "a two x", "b zed"],
            "adversarial": [True, True, True, True, False],
        }
    )
    assert score_order(table) == ["a one x", "a two x", "b apple", "b zed"]


def _project(root: Path, fixture_models, fluency: str = "") -> Path:
    shutil.copytree(ROOT / "templates", root / "templates")
    (root / "workbench.toml").write_text(
        f'[generate]\nmodel = "{fixture_models["mlm-bert"]}"\ntop_k = 10\n'
        f'[filter]\nmodels = ["{fixture_models["nli-a"]}"]\n{fluency}'
    )
    return root


def test_causal_scorer_scores_the_queue_with_one_pass_per_text(fixture_models, tmp_path):
    from workbench.models.fixtures import build_clm
    from workbench.models.lm_loading import load_scorer

    clm = build_clm(tmp_path / "clm", seed=5)
    root = _project(tmp_path / "p", fixture_models, f'[fluency]\nscorer = "causal"\nmodel = "{clm}"\nbatch_size = 4\n')
    config = load_config(root / "workbench.toml")
    pipeline = pipeline_for(config)
    pipeline.run("queue")
    ws = Workspace(config.path("workspace"))
    rows = ws.read("fluency").to_pylist()
    queue = {i["item_id"]: i["fluency"] for i in ws.read("queue").to_pylist()}
    assert rows and {r["scorer"] for r in rows} == {"causal"}
    plain = load_scorer(str(clm), batch_size=1)
    want = plain.text_logprobs([r["hypothesis"] for r in rows], "prepend")
    for r, lps in zip(rows, want):
        assert r["n_tokens"] == len(lps) > 0
        assert r["pll"] == pytest.approx(sum(lps), abs=1e-4)
        assert queue[r["hypothesis_id"]] == pytest.approx(sum(lps) / len(lps), abs=1e-4)
    assert pipeline.run("fluency")["skipped"]
    # Back to PLL: the setting stales the stage, and the scores are the masked LM's again.
    (root / "workbench.toml").write_text(
        (root / "workbench.toml")
        .read_text()
        .replace('scorer = "causal"', 'scorer = "pll"')
        .replace(f'model = "{clm}"\n', "")
    )
    config = load_config(root / "workbench.toml")
    done = pipeline_for(config).run("fluency")
    assert not done["skipped"] and done["computed_pll"] == len(rows)
    assert {r["scorer"] for r in Workspace(config.path("workspace")).read("fluency").to_pylist()} == {"pll"}


def test_causal_scorer_needs_a_causal_model(fixture_models, tmp_path):
    root = _project(tmp_path / "p", fixture_models, '[fluency]\nscorer = "causal"\n')
    problems = settings_problems(load_config(root / "workbench.toml"))
    assert [(p.field, p.line) for p in problems] == [("fluency", 6)]
    assert "needs model" in problems[0].message
    with pytest.raises(ConfigError):
        pipeline_for(load_config(root / "workbench.toml")).run("fluency")

    masked = fixture_models["mlm-bert"]
    root = _project(tmp_path / "q", fixture_models, f'[fluency]\nscorer = "causal"\nmodel = "{masked}"\n')
    with pytest.raises(ModelError, match=r"fluency\.model.*masked LM"):
        pipeline_for(load_config(root / "workbench.toml")).run("fluency")
