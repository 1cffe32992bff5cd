"""The shared LM scoring layer against plain loops: one forward pass per masked position or per
text, no batching, no padding, no cache. Tiny seeded models built through real classes."""

from __future__ import annotations

import json
import math

import pytest

TEXTS = [
    "the workers are kind and calm.",
    "Older people often use a laptop.",
    "they help others",
    "a new survey about housing was reviewed by the city council last week.",
    "the workers are kind and calm.",  # a duplicate on purpose
    "sales",
]
TOL = 1e-4


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    from workbench.models.fixtures import (
        NLI_LABEL_ORDERS,
        build_clm,
        build_mlm,
        build_mlm_nsp,
        build_nli,
    )

    out = tmp_path_factory.mktemp("lm")
    return {
        "bert": build_mlm(out / "bert", "bert", seed=3),
        "roberta": build_mlm(out / "roberta", "roberta", seed=4),
        "gpt": build_clm(out / "gpt", seed=5),
        "nsp": build_mlm_nsp(out / "nsp", seed=6),
        "nli": build_nli(out / "nli", NLI_LABEL_ORDERS["nli-a"], seed=7, neutral_share=None),
    }


@pytest.fixture(scope="module")
def scorers(models):
    from workbench.models.lm_loading import load_scorer

    return {name: load_scorer(str(models[name]), batch_size=4) for name in ("bert", "roberta", "gpt", "nsp")}


# -- plain references ---------------------------------------------------------------------------
def plain_masked(scorer, ids, pos, target):
    import torch

    masked = list(ids)
    masked[pos] = scorer.tokenizer.mask_token_id
    with torch.no_grad():
        out = scorer.model(input_ids=torch.tensor([masked]))
    logits = out.logits if getattr(out, "logits", None) is not None else out.prediction_logits
    return float(torch.log_softmax(logits[0, pos].float(), -1)[target])


def plain_causal(scorer, seq):
    import torch

    with torch.no_grad():
        logits = scorer.model(input_ids=torch.tensor([list(seq)])).logits[0].float()
    lp = torch.log_softmax(logits, -1)
    return [float(lp[i - 1, seq[i]]) for i in range(1, len(seq))]


def close(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert abs(x - y) < TOL, (x, y)


# -- masked LMs ---------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["bert", "roberta", "nsp"])
def test_masked_logprobs_and_pll_equal_a_plain_loop(scorers, name):
    scorer = scorers[name]
    queries, expected = [], []
    for text in TEXTS:
        ids = scorer.encode(text)
        for pos in range(1, len(ids) - 1):
            for target in (ids[pos], 7, len(scorer.tokenizer) - 1):
                queries.append((ids, pos, target))
                expected.append(plain_masked(scorer, ids, pos, target))
    close(scorer.masked_logprobs(queries), expected)

    pll = scorer.pseudo_log_likelihood(TEXTS)
    for text, got in zip(TEXTS, pll):
        ids = scorer.encode(text)
        want = [plain_masked(scorer, ids, p, ids[p]) for p in range(1, len(ids) - 1)]  # specials at the ends
        close(got, want)
        assert len(got) == len(scorer.encode(text, add_special_tokens=False))
    ppl = scorer.pseudo_perplexity(TEXTS)
    for got, lps in zip(ppl, pll):
        assert got == pytest.approx(math.exp(-sum(lps) / len(lps)), rel=1e-9)


def test_mask_already_in_place_or_not_gives_the_same(scorers):
    scorer = scorers["bert"]
    ids = scorer.encode("the workers are kind.")
    masked = list(ids)
    masked[3] = scorer.tokenizer.mask_token_id
    a, b = scorer.masked_logprobs([(ids, 3, ids[3]), (masked, 3, ids[3])])
    assert a == pytest.approx(b, abs=1e-6)


@pytest.mark.parametrize("name", ["bert", "roberta"])
def test_top_k_at_mask_equals_a_plain_loop(scorers, name):
    import torch

    scorer = scorers[name]
    seqs, positions = [], []
    for text in TEXTS[:4]:
        ids = scorer.encode(text)
        ids[2] = scorer.tokenizer.mask_token_id
        seqs.append(ids)
        positions.append(2)
    got = scorer.top_k_at_mask(seqs, positions, k=5)
    raw = scorer.top_k_at_mask(seqs, positions, k=5, exclude_special=False)
    special = set(scorer.tokenizer.all_special_ids)
    for ids, pos, row, raw_row in zip(seqs, positions, got, raw):
        with torch.no_grad():
            logits = scorer.model(input_ids=torch.tensor([ids])).logits[0, pos].float()
        unbanned = torch.log_softmax(logits, -1)
        logits[sorted(special)] = -math.inf
        lp = torch.log_softmax(logits, -1)
        top = torch.topk(lp, 5)
        assert [t for t, _ in row] == top.indices.tolist()
        close([v for _, v in row], top.values.tolist())
        assert not special & {t for t, _ in row}
        top_raw = torch.topk(unbanned, 5)
        assert [t for t, _ in raw_row] == top_raw.indices.tolist()
        assert [v for _, v in row] == sorted((v for _, v in row), reverse=True)


def test_next_sentence_logprob_equals_the_head(scorers, models):
    import torch
    from transformers import BertForPreTraining

    scorer = scorers["nsp"]
    assert scorer.has_nsp_head and not scorers["bert"].has_nsp_head
    reference = BertForPreTraining.from_pretrained(models["nsp"]).eval()
    pairs = [
        ("the workers are kind.", "they help others."),
        ("a survey was reviewed.", "Older people use a laptop."),
        ("the workers are kind.", "they help others."),
    ]
    got = scorer.next_sentence_logprob(pairs)
    for (a, b), value in zip(pairs, got):
        with torch.no_grad():
            out = reference(**scorer.tokenizer(a, b, return_tensors="pt"))
        assert value == pytest.approx(float(torch.log_softmax(out.seq_relationship_logits[0].float(), -1)[0]), abs=TOL)
    from workbench.core.errors import ModelError

    with pytest.raises(ModelError, match="next-sentence"):
        scorers["bert"].next_sentence_logprob(pairs)


# -- causal LMs ---------------------------------------------------------------------------------
def test_causal_methods_equal_a_plain_loop(scorers):
    scorer = scorers["gpt"]
    bos = scorer.bos_id
    assert bos == scorer.tokenizer.bos_token_id
    seqs = [[bos, *scorer.encode(t)] for t in TEXTS] + [[bos]]
    got = scorer.token_logprobs(seqs)
    for seq, values in zip(seqs, got):
        close(values, plain_causal(scorer, seq))
    assert got[-1] == []

    prepend = scorer.text_logprobs(TEXTS, bos="prepend")
    separate = scorer.text_logprobs(TEXTS, bos="separate")
    for text, p, s in zip(TEXTS, prepend, separate):
        ids = scorer.encode(text)
        close(p, plain_causal(scorer, [bos, *ids]))
        want = plain_causal(scorer, [bos, ids[0]]) + plain_causal(scorer, ids)
        close(s, want)
        assert len(p) == len(s) == len(ids)
        assert p[0] == pytest.approx(s[0], abs=TOL)  # the first token is scored after BOS both ways
    assert any(abs(a - b) > 1e-3 for p, s in zip(prepend, separate) for a, b in zip(p[1:], s[1:]))

    prefixes = [[bos], [bos, *scorer.encode("the workers")], scorer.encode("they help")]
    tops = scorer.next_token_top_k(prefixes, k=4)
    for prefix, row in zip(prefixes, tops):
        import torch

        with torch.no_grad():
            lp = torch.log_softmax(scorer.model(input_ids=torch.tensor([prefix])).logits[0, -1].float(), -1)
        top = torch.topk(lp, 4)
        assert [t for t, _ in row] == top.indices.tolist()
        close([v for _, v in row], top.values.tolist())


def _shared_prefix_inputs(scorer):
    """Sequences of two identities (enough of each to be scored on the identity's prefix),
    one identity too rare to share, and a sequence without a prefix."""
    bos = scorer.bos_id
    rests = [
        "are kind and calm.",
        "often use a laptop at work",
        "help others",
        "are slow",
        "earn money",
        "are careful with money and time in the office",
    ]
    seqs, cuts = [], []
    for identity, n in (("older workers", 6), ("women", 5), ("the council", 2)):
        head = [bos, *scorer.encode(identity)]
        for rest in rests[:n]:
            ids = scorer.encode(f"{identity} {rest}")
            assert ids[: len(head) - 1] == head[1:]
            seqs.append([bos, *ids])
            cuts.append(len(head))
    seqs.append([bos, *scorer.encode("they help others")])
    cuts.append(0)
    return seqs, cuts


def test_shared_prefix_path_equals_a_plain_loop(models):
    from workbench.models.lm_loading import load_scorer

    scorer = load_scorer(str(models["gpt"]), batch_size=4)  # groups span several batches
    seqs, cuts = _shared_prefix_inputs(scorer)
    by_length: dict[int, int] = {}
    for n in cuts:
        if n:
            by_length[n] = by_length.get(n, 0) + 1
    shared_expected = sum(k for k in by_length.values() if k >= scorer.MIN_SHARED)
    assert shared_expected >= 11  # the two frequent identities at least
    batches = []
    real = scorer._rest_pass
    scorer._rest_pass = lambda ran, rests, n: batches.append((len(ran["row"]), len(rests))) or real(ran, rests, n)
    got = scorer.prefixed_token_logprobs(seqs, cuts)
    assert scorer._prefix_ok is True
    assert batches[0] == (1, 1)  # the check: one sequence on its prefix
    assert sum(k for _, k in batches[1:]) == shared_expected and max(k for _, k in batches) <= 4
    for seq, values in zip(seqs, got):
        close(values, plain_causal(scorer, seq))
    for whole, values in zip(scorer.token_logprobs(seqs), got):  # the plain path, batched, agrees too
        close(values, whole)


def test_shared_prefix_path_falls_back_when_it_disagrees_with_the_plain_one(models):
    from workbench.models.lm_loading import load_scorer

    scorer = load_scorer(str(models["gpt"]), batch_size=4)
    seqs, cuts = _shared_prefix_inputs(scorer)
    real = scorer._rest_pass
    # a model whose cache this code drives wrong: its shared values are off
    scorer._rest_pass = lambda ran, rests, n: [[v + 0.5 for v in row] for row in real(ran, rests, n)]
    got = scorer.prefixed_token_logprobs(seqs, cuts)
    assert scorer._prefix_ok is False
    for seq, values in zip(seqs, got):
        close(values, plain_causal(scorer, seq))


def test_perplexity_follows_evaluates_rule(scorers):
    """Hugging Face evaluate's perplexity, written out: pad the batch, prepend BOS, cross-entropy
    of the shifted labels under the attention mask, exp of the mean per text."""
    import torch

    scorer = scorers["gpt"]
    tok, model = scorer.tokenizer, scorer.model
    enc = tok(TEXTS, add_special_tokens=False, padding=True, return_tensors="pt", return_attention_mask=True)
    bos = torch.tensor([[tok.bos_token_id]] * len(TEXTS))
    ids = torch.cat([bos, enc["input_ids"]], dim=1)
    attn = torch.cat([torch.ones(bos.shape, dtype=torch.long), enc["attention_mask"]], dim=1)
    with torch.no_grad():
        logits = model(ids, attention_mask=attn).logits
    shift_logits, labels, mask = logits[..., :-1, :], ids[..., 1:], attn[..., 1:]
    nll = torch.nn.CrossEntropyLoss(reduction="none")(shift_logits.transpose(1, 2), labels)
    want = torch.exp((nll * mask).sum(1) / mask.sum(1)).tolist()
    got = scorer.perplexity(TEXTS)
    for g, w in zip(got, want):
        assert g == pytest.approx(w, rel=1e-4)


# -- batching, cache, progress ------------------------------------------------------------------
def test_cache_hit_computes_nothing(models, tmp_path):
    from workbench.models import lm_scoring
    from workbench.models.lm_loading import load_scorer

    cache = tmp_path / "cache.sqlite"
    for name in ("roberta", "gpt"):
        first = load_scorer(str(models[name]), cache_path=cache, batch_size=3)
        before = lm_scoring.CALLS["forward"]
        a = first.pseudo_log_likelihood(TEXTS) if name == "roberta" else first.text_logprobs(TEXTS, bos="separate")
        assert lm_scoring.CALLS["forward"] > before
        second = load_scorer(str(models[name]), cache_path=cache, batch_size=3)
        before = lm_scoring.CALLS["forward"]
        b = second.pseudo_log_likelihood(TEXTS) if name == "roberta" else second.text_logprobs(TEXTS, bos="separate")
        assert lm_scoring.CALLS["forward"] == before
        assert a == b
    # a model whose weights change gets a new revision: nothing stale is read
    from workbench.models.fixtures import boost_tokens

    boost_tokens(models["gpt"], {"Ġkind": 3.0})
    third = load_scorer(str(models["gpt"]), cache_path=cache)
    before = lm_scoring.CALLS["forward"]
    third.text_logprobs(TEXTS[:1], bos="separate")
    assert lm_scoring.CALLS["forward"] > before


def test_duplicates_are_computed_once_and_progress_counts_inputs(scorers, monkeypatch):
    scorer = scorers["bert"]
    rows = []
    real = scorer._masked_step

    def counting(sequences, positions, targets):
        rows.extend(zip(sequences, positions))
        return real(sequences, positions, targets)

    monkeypatch.setattr(scorer, "_masked_step", counting)
    ticks = []
    texts = TEXTS + ["", TEXTS[0]]
    out = scorer.pseudo_log_likelihood(texts, progress=ticks.append)
    assert sum(ticks) == len(texts)
    assert out[-2] == [] and out[-1] == out[0]
    assert len(rows) == len(set(rows))  # every (sequence, position) forwarded once
    distinct = {t for t in texts if t}
    assert len(rows) == sum(len(scorer.encode(t, add_special_tokens=False)) for t in distinct)


def test_out_of_memory_halves_the_batch(scorers, monkeypatch):
    masked, causal = scorers["roberta"], scorers["gpt"]
    many = TEXTS + [f"the {w} workers are {v}." for w in ("young", "old", "new") for v in ("kind", "calm")]
    want_m = masked.pseudo_log_likelihood(TEXTS)
    want_c = causal.text_logprobs(many)
    for scorer, step_name in ((masked, "_masked_step"), (causal, "_causal_step")):
        real = getattr(scorer, step_name)
        calls = {"n": 0}
        sizes = []

        def flaky(sequences, *rest, real=real, calls=calls, sizes=sizes):
            calls["n"] += 1
            sizes.append(len(sequences))
            if calls["n"] == 1:
                raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")
            return real(sequences, *rest)

        monkeypatch.setattr(scorer, step_name, flaky)
        scorer.batch_size = 8
        got = scorer.pseudo_log_likelihood(TEXTS) if scorer is masked else scorer.text_logprobs(many)
        assert scorer.batch_size == 4
        assert sizes[0] == 8 and max(sizes[1:]) == 4
        for g, w in zip(got, want_m if scorer is masked else want_c):
            close(g, w)


# -- loading ------------------------------------------------------------------------------------
def test_masked_and_causal_detection(scorers):
    from types import SimpleNamespace

    from workbench.core.errors import ModelError
    from workbench.models.lm_scoring import CausalLMScorer, MaskedLMScorer, lm_kind

    assert isinstance(scorers["bert"], MaskedLMScorer) and scorers["bert"].kind == "masked"
    assert isinstance(scorers["nsp"], MaskedLMScorer)
    assert isinstance(scorers["gpt"], CausalLMScorer) and scorers["gpt"].kind == "causal"
    assert lm_kind(SimpleNamespace(architectures=["LlamaForCausalLM"]), "x") == "causal"
    assert lm_kind(SimpleNamespace(architectures=["BertLMHeadModel"], is_decoder=True), "x") == "causal"
    assert lm_kind(SimpleNamespace(architectures=["AlbertForPreTraining"]), "x") == "masked"
    assert lm_kind(SimpleNamespace(architectures=None, is_decoder=True), "x") == "causal"
    with pytest.raises(ModelError, match="none declared"):
        lm_kind(SimpleNamespace(architectures=None), "x")


def test_non_lm_checkpoint_and_missing_model_are_clear_errors(models, tmp_path):
    from workbench.core.errors import ModelError
    from workbench.models.lm_loading import load_scorer

    with pytest.raises(ModelError, match=r"BertForSequenceClassification.*masked LM"):
        load_scorer(str(models["nli"]))
    with pytest.raises(ModelError, match="does not exist"):
        load_scorer(str(tmp_path / "nowhere"))


def test_case_folding_and_bos_fallback(scorers, models):
    from transformers import AutoTokenizer, BertTokenizer

    from workbench.core.errors import ModelError
    from workbench.models.lm_scoring import _lowercases

    assert not scorers["bert"].uncased and not scorers["roberta"].uncased
    cased = AutoTokenizer.from_pretrained(models["bert"])
    vocab = cased.get_vocab()
    assert _lowercases(BertTokenizer(vocab=vocab, do_lower_case=True))
    gpt = scorers["gpt"]
    tok = gpt.tokenizer
    saved = (tok.bos_token, tok.eos_token)
    try:
        tok.bos_token = None
        assert gpt.bos_id == tok.eos_token_id
        tok.eos_token = None
        with pytest.raises(ModelError, match="neither a BOS nor an EOS"):
            _ = gpt.bos_id
    finally:
        tok.bos_token, tok.eos_token = saved


def test_too_long_input_is_a_model_error(scorers):
    from workbench.core.errors import ModelError

    scorer = scorers["bert"]
    ids = scorer.encode(" ".join(["kind"] * 200))
    with pytest.raises(ModelError, match="longer than the 128 tokens"):
        scorer.masked_logprobs([(ids, 1, ids[1])])


def test_next_sentence_head_is_found_by_its_weights(models, tmp_path):
    """bert-base-* checkpoints declare BertForMaskedLM yet carry the NSP head: it is used; a
    masked LM without those weights falls back to no head, and the scorer's model is always
    the masked-LM class."""
    import shutil

    from workbench.models.lm_loading import load_scorer

    copy = tmp_path / "declared-mlm"
    shutil.copytree(models["nsp"], copy)
    config = json.loads((copy / "config.json").read_text())
    config["architectures"] = ["BertForMaskedLM"]
    (copy / "config.json").write_text(json.dumps(config))
    declared = load_scorer(str(copy))
    original = load_scorer(str(models["nsp"]))
    plain = load_scorer(str(models["bert"]))
    assert declared.has_nsp_head and original.has_nsp_head and not plain.has_nsp_head
    assert {type(s.model).__name__ for s in (declared, original, plain)} == {"BertForMaskedLM"}
    pairs = [("the workers are kind.", "they help others.")]
    assert declared.next_sentence_logprob(pairs) == pytest.approx(original.next_sentence_logprob(pairs), abs=1e-6)
