"""Masked-LM generation: filters with reasons, both mask conventions, provenance, cache."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import ROOT, invoke, write_project
from workbench.core.config import load_config
from workbench.core.workspace import Workspace
from workbench.models import mlm
from workbench.models.fixtures import bias_output
from workbench.kinds import pipeline_for


def template(*hypotheses: str) -> str:
    hyps = "\n".join(f'  - text: "{h}"\n    true_label: neutral\n    bias_label: entailment' for h in hypotheses)
    return (
        "format: workbench-template/1\nid: t1\ndomain: gender\n"
        "groups: {GROUP1: women, GROUP2: men}\n"
        "premises:\n  - text: A survey asked {{GROUP1}} and {{GROUP2}} about work.\n"
        f"hypotheses:\n{hyps}\n"
    )


def boosted(fixture_models, tmp_path, style: str, boosts: dict[str, float]) -> Path:
    folder = tmp_path / f"boosted-{style}"
    shutil.copytree(fixture_models[f"mlm-{style}"], folder)
    bias_output(folder, boosts)
    return folder


def run_generate(root: Path, model: Path, *hypotheses: str, top_k: int = 1, extra: str = "") -> list[dict]:
    write_project(root, {"t1.yaml": template(*hypotheses)}, f'[generate]\nmodel = "{model}"\ntop_k = {top_k}\n{extra}')
    config = load_config(root / "workbench.toml")
    ws = Workspace(config.path("workspace"))
    pipeline_for(config).run("expand")
    pipeline_for(config).run("generate")
    return ws.read("generate").to_pylist()


def pro(rows):
    return [r for r in rows if r["stance"] == "pro"]


def test_an_enabled_context_filter_applies_when_a_word_filter_is_disabled(fixture_models, tmp_path):
    """A sub-word fill that repeats its neighbour: with `subword` disabled and
    `repeated_neighbour` enabled, the neighbour check must still reject it (it used to be
    skipped whenever any word-level reason applied, enabled or not)."""
    model = boosted(fixture_models, tmp_path, "roberta", {"are": 60.0})  # "are" without a word-start marker
    rows = run_generate(
        tmp_path / "p", model, "{{GROUP1}} are <mask> at work.", extra='filters = ["repeated_neighbour"]\n'
    )
    top = pro(rows)[0]
    assert top["fill_tokens"] == ["are"] and top["fill"] == ["are"]
    assert top["reject_reason"] == "repeated_neighbour" and top["kept"] is False


@pytest.mark.parametrize(
    "token, hypothesis, reason",
    [
        ("##ing", "{{GROUP1}} are <mask> at work.", "subword"),
        ("women", "{{GROUP1}} like <mask> at work.", "group_word"),
        ("men", "{{GROUP1}} like <mask> at work.", "group_word"),  # the counterfactual group too
        ("woman", "{{GROUP1}} like <mask> at work.", "group_word"),  # and its singular
        ("?", "{{GROUP1}} are <mask> at work.", "punctuation"),
        ("42", "{{GROUP1}} are <mask> at work.", "number"),
        ("are", "{{GROUP1}} are <mask> at work.", "repeated_neighbour"),
        ("happy", "{{GROUP1}} <mask:VERB> at work.", "pos"),
    ],
)
def test_each_filter_rejects_with_its_reason(fixture_models, tmp_path, token, hypothesis, reason):
    model = boosted(fixture_models, tmp_path, "bert", {token: 60.0})
    rows = run_generate(tmp_path / "p", model, hypothesis)
    top = pro(rows)[0]
    assert top["fill_rank"] == 1
    assert top["fill_tokens"] == [token]
    assert top["reject_reason"] == reason and top["kept"] is False


def test_disabled_filter_keeps_the_candidate(fixture_models, tmp_path):
    model = boosted(fixture_models, tmp_path, "bert", {"42": 60.0})
    rows = run_generate(tmp_path / "p", model, "{{GROUP1}} are <mask> at work.", extra='filters = ["subword"]\n')
    assert pro(rows)[0]["fill"] == ["42"] and pro(rows)[0]["kept"] is True


@pytest.mark.parametrize("style, token", [("bert", "honest"), ("roberta", "Ġhonest")])
def test_article_fixed_before_vowel_sound_for_both_mask_conventions(fixture_models, tmp_path, style, token):
    model = boosted(fixture_models, tmp_path, style, {token: 60.0})
    rows = run_generate(tmp_path / "p", model, "{{GROUP1}} are a <mask> group.")
    top = pro(rows)[0]
    assert top["hypothesis"] == "women are an honest group."
    assert top["article_fixed"] is True and top["kept"] is True


def test_roberta_subword_piece_is_rejected(fixture_models, tmp_path):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(fixture_models["mlm-roberta"])
    piece = next(t for t in sorted(tok.get_vocab()) if t.isalpha() and len(t) > 2 and not t.startswith("Ġ"))
    model = boosted(fixture_models, tmp_path, "roberta", {piece: 60.0})
    top = pro(run_generate(tmp_path / "p", model, "{{GROUP1}} are <mask> at work."))[0]
    assert top["fill_tokens"] == [piece] and top["reject_reason"] == "subword"


def test_duplicate_hypotheses_are_rejected(fixture_models, tmp_path):
    model = boosted(fixture_models, tmp_path, "bert", {"very": 60.0, "calm": 59.0})
    rows = pro(
        run_generate(tmp_path / "p", model, "{{GROUP1}} are <mask> calm.", "{{GROUP1}} are very <mask>.", top_k=2)
    )
    by_text = {}
    for r in rows:
        by_text.setdefault(r["hypothesis"], []).append(r["reject_reason"])
    assert by_text["women are very calm."] == [None, "duplicate"]
    assert by_text["women are calm calm."] == ["repeated_neighbour"]


def test_provenance_and_ids(fixture_models, tmp_path):
    rows = run_generate(tmp_path / "p", fixture_models["mlm-bert"], "{{GROUP1}} are <mask> at work.", top_k=5)
    assert len(rows) == 2 * 5  # pro and anti samples, 5 fills each
    for r in rows:
        assert r["mlm_name"] == str(fixture_models["mlm-bert"])
        assert r["mlm_revision"].startswith("sha256:")
        assert 1 <= r["fill_rank"] <= 5 and 0 < r["fill_score"] <= 1
        assert r["hypothesis_id"] and "<mask>" not in r["hypothesis"]
        assert "pll" not in r  # fluency is scored later, for the queue's hypotheses only
    ranks = [r["fill_score"] for r in pro(rows)]
    assert ranks == sorted(ranks, reverse=True)
    same = [r for r in rows if r["fill"] == rows[0]["fill"] and r["stance"] == rows[0]["stance"]]
    assert len({r["hypothesis_id"] for r in same}) == 1


def test_multi_mask_beam_fills_every_mask(fixture_models, tmp_path):
    rows = pro(
        run_generate(tmp_path / "p", fixture_models["mlm-bert"], "{{GROUP1}} <mask> the <mask> at work.", top_k=4)
    )
    assert len(rows) == 4
    for r in rows:
        assert "<mask>" not in r["hypothesis"] and len(r["fill"]) == 2
    logprobs = [r["fill_logprob"] for r in rows]
    assert logprobs == sorted(logprobs, reverse=True)
    assert len({tuple(r["fill"]) for r in rows}) == 4


def test_rerun_makes_no_model_call_and_new_template_computes_only_new(fixture_models, tmp_path):
    root = tmp_path / "p"
    run_generate(root, fixture_models["mlm-bert"], "{{GROUP1}} are <mask> at work.", top_k=3)
    config = load_config(root / "workbench.toml")
    before = mlm.CALLS["forward"]
    result = pipeline_for(config).run("generate", force=True)
    assert mlm.CALLS["forward"] == before and result["model_loaded"] is False
    (root / "templates" / "t2.yaml").write_text(template("{{GROUP2}} like <mask> a lot.").replace("id: t1", "id: t2"))
    pipeline_for(config).run("expand")
    result = pipeline_for(config).run("generate")
    assert result["computed_fills"] == 2  # the new hypothesis, pro and anti renderings
    assert mlm.CALLS["forward"] > before


def test_errors_are_clear(fixture_models, tmp_path, runner, monkeypatch):
    root = write_project(
        tmp_path / "p",
        {"t1.yaml": template("{{GROUP1}} are calm.")},
        f'[generate]\nmodel = "{fixture_models["mlm-bert"]}"\n',
    )
    monkeypatch.chdir(root)
    assert invoke(runner, "expand").exit_code == 0
    no_masks = invoke(runner, "generate")
    assert no_masks.exit_code == 2 and "no masked hypotheses" in str(no_masks.exception)
    (root / "templates" / "t1.yaml").write_text(template("{{GROUP1}} are <mask>."))
    invoke(runner, "expand")
    bad_k = invoke(runner, "generate", "--top-k", "0")
    assert bad_k.exit_code == 2 and "top_k must be at least 1" in str(bad_k.exception)
    bad_model = invoke(runner, "generate", "--model", "no-such-org/no-such-model")
    assert bad_model.exit_code == 2
    message = str(bad_model.exception)
    assert "no-such-org/no-such-model" in message and "workbench models fixtures" in message
    missing_path = invoke(runner, "generate", "--model", "./not-here")
    assert missing_path.exit_code == 2 and "does not exist" in str(missing_path.exception)
    # A folder of checkpoints named in the config instead of one of them: say where, and which.
    shutil.copytree(fixture_models["mlm-bert"], root / "zoo" / "mlm-bert")
    (root / "workbench.toml").write_text('[generate]\nmodel = "zoo"\n')
    zoo = invoke(runner, "generate")
    assert zoo.exit_code == 2
    assert "workbench.toml: generate.model: model folder 'zoo' has no config.json" in str(zoo.exception)
    assert "the folders in it that are: zoo/mlm-bert" in str(zoo.exception)


@pytest.mark.parametrize("style", ["bert", "roberta"])
def test_head_only_at_masks_equals_full_forward(fixture_models, style):
    import torch

    from workbench.models.loading import load, resolve
    from workbench.models.mlm import MaskedLM

    ref = resolve(str(fixture_models[f"mlm-{style}"]))
    tok, model, device = load(ref, "mlm", "cpu")
    lm = MaskedLM(ref, tok, model, device)
    assert lm.split is not None
    texts = ["women are <mask> at work.", "older people cannot <mask> a laptop without help ."]
    seqs = lm.encode(texts)
    positions = [s.index(tok.mask_token_id) for s in seqs]
    fast = lm._logprobs_at(seqs, positions)
    lm.split = None
    full = lm._logprobs_at(seqs, positions)
    assert torch.allclose(fast, full, atol=1e-5)


def test_incremental_rerun_equals_a_full_rebuild(fixture_models, tmp_path):
    root = tmp_path / "p"
    run_generate(
        root, fixture_models["mlm-bert"], "{{GROUP1}} are <mask> at work.", "{{GROUP2}} like <mask> a lot.", top_k=4
    )
    config = load_config(root / "workbench.toml")
    ws = Workspace(config.path("workspace"))
    (root / "templates" / "t2.yaml").write_text(template("{{GROUP2}} are a <mask> team.").replace("id: t1", "id: t2"))
    pipeline_for(config).run("expand")
    incremental = pipeline_for(config).run("generate")
    assert incremental["templates_reused"] == 1 and incremental["templates_computed"] == 1
    rows = ws.read("generate").to_pylist()
    full = pipeline_for(config).run("generate", force=True)
    assert full["templates_reused"] == 0
    assert ws.read("generate").to_pylist() == rows


class _Memory:  # a POS cache that remembers nothing
    def get_many(self, *a):
        return {}

    def put_many(self, *a):
        pass


def _fill_rows(texts_and_spans, allowed=("VERB",)):
    return [
        {"reject_reason": None, "mask_pos": [list(allowed)], "hypothesis": t, "fill_spans": [[a, b]]}
        for t, (a, b) in texts_and_spans
    ]


def _full_pipeline_pos(nlp, text, a, b):
    """The filter's spec, computed the plain way: the full pipeline, the span's root."""
    span = nlp(text).char_span(a, b, alignment_mode="expand")
    return span.root.pos_ if span is not None and len(span) else None


def _english_pipelines():
    from workbench.kinds.nli.templates.masks import installed_pipelines

    found = sorted(installed_pipelines())
    assert found, "no English spaCy pipeline is installed (pyproject.toml installs one)"
    return found


@pytest.mark.parametrize("pipeline", _english_pipelines())
def test_pos_filter_keeps_main_verb_have_and_do_as_the_full_pipeline_does(pipeline):
    """Without the parser every "have"/"do" is AUX; the full pipeline (the filter's spec) says
    VERB where it is the main verb. The filter's decision equals the full pipeline's on each."""
    from workbench.kinds.nli.stages.generate import _pos_filter
    from workbench.kinds.nli.templates.masks import load_spacy

    sentences = [
        ("Nurses have a long shift.", "have"),
        ("He has three sisters.", "has"),
        ("Farmers do the harvest.", "do"),
        ("We did the laundry.", "did"),
        ("Drivers who did that were fined.", "did"),
        ("Old people have been waiting.", "have"),
        ("The boys got injured at practice.", "got"),
        ("Teachers earn less than lawyers.", "earn"),
        ("She does her homework at night.", "does"),
        ("They had a quiet evening.", "had"),
    ]
    spans = [(text, (text.index(word), text.index(word) + len(word))) for text, word in sentences]
    rows = _fill_rows(spans)
    _pos_filter(rows, _Memory(), pipeline)
    full = load_spacy(pipeline)
    expected = [_full_pipeline_pos(full, text, a, b) for text, (a, b) in spans]
    assert expected[:5] == ["VERB"] * 5 and expected[5] == "AUX"  # the table, in other words
    assert [r["pos_found"] if r["reject_reason"] else "VERB" for r in rows] == expected
    light = load_spacy(pipeline, tagger_only=True)
    assert "parser" not in light.pipe_names and light("Nurses have a long shift.")[1].pos_ == "AUX"


def test_pos_filter_decisions_equal_the_full_pipeline_on_the_example_benchmark():
    """Fast path against plain path: the example benchmark's masked hypotheses filled with
    words of its own hypotheses and with auxiliary-prone words, for several slot kinds; every
    decision equals the full pipeline's, while most texts skip the parser. Also checks the one
    measured assumption: the parser attaches aux/auxpass only to listed auxiliaries."""
    import random
    import re

    from workbench.core.ids import split_key
    from workbench.kinds.nli.stages.generate import _pos_filter
    from workbench.kinds.nli.templates.expand import expand_all
    from workbench.kinds.nli.templates.loader import load_templates
    from workbench.kinds.nli.templates.masks import AUXILIARY_FORMS, load_spacy

    templates, _ = load_templates([ROOT / "templates"])
    hyps = sorted({r["hypothesis"] for r in expand_all(templates) if r["n_masks"] == 1})
    vocab = sorted({w.lower() for h in hyps for w in re.findall(r"[A-Za-z-]+", h)})
    prone = "have has had do does did get got is are was been keep used need dare that which but because than".split()
    rng = random.Random(7)
    spans = set()
    for h in hyps:
        for word in rng.sample(vocab, min(6, len(vocab))) + rng.sample(prone, 4):
            a = h.index("<mask>")
            spans.add((h.replace("<mask>", word, 1), (a, a + len(word))))
    spans = sorted(spans)
    full = load_spacy()
    expected = [_full_pipeline_pos(full, t, a, b) for t, (a, b) in spans]

    class Counting(_Memory):
        tagger_only: set = set()

        def put_many(self, namespace, pipeline, version, values):
            self.tagger_only |= {split_key(k)[1] for k in values}

    for allowed in (("VERB",), ("ADJ",), ("NOUN", "PROPN"), ("ADP", "SCONJ")):
        rows = _fill_rows(spans, allowed)
        _pos_filter(rows, Counting())
        got = [r["pos_found"] if r["reject_reason"] else None for r in rows]
        assert got == [None if pos in allowed else pos for pos in expected], allowed
    for doc in full.pipe(sorted({t for t, _ in spans})):
        outside = [
            t.text for t in doc if t.dep_ in ("aux", "auxpass") and t.tag_ != "MD" and t.lower_ not in AUXILIARY_FORMS
        ]
        assert not outside, (doc.text, outside)
    assert len(spans) > 500


def test_pos_filter_takes_a_split_fills_root_from_the_full_pipeline():
    from workbench.kinds.nli.stages.generate import _pos_filter
    from workbench.kinds.nli.templates.masks import load_spacy

    text = "Women are self-reliant at work."
    start = text.index("self-reliant")
    rows = _fill_rows([(text, (start, start + 12))])
    _pos_filter(rows, _Memory())
    assert rows[0]["reject_reason"] == "pos"
    assert rows[0]["pos_found"] == _full_pipeline_pos(load_spacy(), text, start, start + 12)


def test_a_generate_dtype_in_workbench_toml_loads_the_masked_lm_so_and_never_reads_float32_fills(
    fixture_models, tmp_path, monkeypatch
):
    """[generate] takes the evaluators' runtime options: a bfloat16 run after a float32 one computes
    its own fills (cached apart) with the model loaded in bfloat16; a bad value names the key."""
    from workbench.core.errors import ConfigError

    root = tmp_path / "p"
    run_generate(root, fixture_models["mlm-bert"], "{{GROUP1}} are <mask> at work.", top_k=3)
    toml = root / "workbench.toml"
    toml.write_text(toml.read_text(encoding="utf-8") + 'dtype = "bfloat16"\n', encoding="utf-8")
    config = load_config(toml)
    loaded = []
    real = mlm.MaskedLM.__init__
    monkeypatch.setattr(
        mlm.MaskedLM,
        "__init__",
        lambda self, ref, tok, model, *a, **k: loaded.append(str(model.dtype)) or real(self, ref, tok, model, *a, **k),
    )
    result = pipeline_for(config).run("generate")
    assert result["computed_fills"] == 2 and loaded == ["torch.bfloat16"]
    toml.write_text(toml.read_text(encoding="utf-8") + 'device_map = "nowhere"\n', encoding="utf-8")
    with pytest.raises(ConfigError) as refused:
        load_config(toml).generate
    assert "device_map" in str(refused.value)
