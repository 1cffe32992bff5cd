"""The same model on the same data decides every pair the same way whatever the batch size and
thread count: a float32 forward pass adds in another order when either changes (the scores move
by about 1e-6 nats), so pairs whose decision lies within float noise of its boundary are scored
again one sentence at a time on one thread and decided on those scores, and outputs count them."""

from __future__ import annotations

import json
import random

import pytest
import torch
from conftest import invoke

from workbench.kinds.crows_pairs import scoring
from workbench.kinds.crows_pairs.scoring import PairScore, near_boundary
from workbench.models import lm_scoring
from workbench.models.lm_loading import load_scorer

WORDS = (
    "the men women people workers are is often never good bad very lazy honest careful slow fast children old young"
).split()


def _pairs(n: int = 60, seed: int = 0) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    sents = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 14))) + "." for _ in range(2 * n)]
    return list(zip(sents[::2], sents[1::2]))


@pytest.fixture
def threads():
    """Set torch's thread count for a test, and put it back after."""
    before = torch.get_num_threads()
    yield torch.set_num_threads
    torch.set_num_threads(before)


def _scores(model, pairs, n_threads: int, batch: int, set_threads) -> list[tuple[float, float, bool]]:
    set_threads(n_threads)
    scorer = load_scorer(str(model), batch_size=batch)
    return [(s.score1, s.score2, s.near_boundary) for s in scoring.score_pairs(scorer, pairs)]


@pytest.mark.parametrize("name", ["mlm-bert", "clm-gpt2"])
def test_batch_size_and_threads_move_plain_scores_but_not_canonical_ones(name, fixture_models, threads):
    pairs = _pairs()
    texts = [t for pair in pairs for t in pair]

    def both(n_threads: int, batch: int):
        threads(n_threads)
        scorer = load_scorer(str(fixture_models[name]), batch_size=batch)
        read = scorer.pseudo_log_likelihood if scorer.kind == "masked" else scorer.text_logprobs
        plain = read(texts)
        with scorer.canonical():
            canonical = read(texts)
        assert scorer.batch_size == batch and torch.get_num_threads() == n_threads  # put back after
        return plain, canonical

    # Plain scores differ between these two (on the 2-core CI machine 75 of 200 sentence scores of
    # mlm-bert moved, by up to 1.4e-6 nats); canonical ones must agree to the last bit.
    _, canonical_a = both(2, 64)
    _, canonical_b = both(1, 7)
    assert canonical_a == canonical_b


@pytest.mark.parametrize("name", ["mlm-bert", "clm-gpt2"])
def test_pairs_near_a_boundary_get_the_same_scores_and_decisions_in_every_configuration(
    name, fixture_models, threads, monkeypatch
):
    """With a noise margin that puts every pair near its boundary, every pair is settled by
    canonical scores: the two configurations agree bit for bit, where plain scores do not."""
    monkeypatch.setitem(lm_scoring.RELATIVE_NOISE, "float32", 1.0)
    pairs = _pairs()
    a = _scores(fixture_models[name], pairs, 2, 64, threads)
    b = _scores(fixture_models[name], pairs, 1, 7, threads)
    assert all(near for _, _, near in a) and a == b


def test_a_pair_is_near_its_boundary_only_within_float_noise(fixture_models):
    masked = load_scorer(str(fixture_models["mlm-bert"]))
    causal = load_scorer(str(fixture_models["clm-gpt2"]))
    # float32 noise of a score of about -12 nats: 3.7e-6 (RELATIVE_NOISE)
    assert near_boundary(masked, PairScore(-12.3455, -20.0, 5, False))  # at a 3-decimal rounding point
    assert near_boundary(masked, PairScore(-20.0, -12.345502, 5, False))  # either sentence, 2e-6 from it
    assert not near_boundary(masked, PairScore(-12.34553, -20.0, 5, False))  # 3e-5 from it
    assert not near_boundary(masked, PairScore(-12.3455, -12.3455, 5, True))  # the same tokens always tie
    assert near_boundary(causal, PairScore(-12.0, -12.000005, 0, False))  # a near-tie of raw sums
    assert not near_boundary(causal, PairScore(-12.0, -12.0001, 0, False))
    assert not near_boundary(causal, PairScore(-12.3455, -20.0, 0, False))  # rounding is not a causal rule's


def test_evaluate_counts_and_shows_the_pairs_it_settled_near_a_boundary(
    releases, fixture_models, tmp_path, runner, monkeypatch
):
    release = releases("crows-pairs")
    model = str(fixture_models["mlm-bert"])
    monkeypatch.chdir(tmp_path)

    def run(out: str) -> dict:
        result = invoke(runner, "evaluate", str(release), "--model", model, "--no-cache", "--json", out)
        assert result.exit_code == 0, result.output
        return result.output, json.loads((tmp_path / out).read_text(encoding="utf-8"))["models"][model]

    monkeypatch.setitem(lm_scoring.RELATIVE_NOISE, "float32", 0.0)  # no pair near a boundary
    output, entry = run("none-near.json")
    assert entry["near_boundary"]["n"] == 0 and "float noise" in entry["near_boundary"]["definition"]
    assert "within float noise" not in output
    monkeypatch.setitem(lm_scoring.RELATIVE_NOISE, "float32", 1.0)  # every pair near one
    output, entry = run("all-near.json")
    settled = entry["near_boundary"]["n"]
    assert settled == entry["overall"]["n"] - same_token_pairs(release, model)
    assert f"{settled} pair(s) lay within float noise" in " ".join(output.split())


def same_token_pairs(release, model: str) -> int:
    """How many of the release's pairs encode to the same tokens (they always tie, never settled)."""
    import csv

    scorer = load_scorer(model)
    with open(release / "data" / "pairs.csv", encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    return sum(
        scorer.encode(r["sent_more"].lower() if scorer.uncased else r["sent_more"])
        == scorer.encode(r["sent_less"].lower() if scorer.uncased else r["sent_less"])
        for r in rows
    )
