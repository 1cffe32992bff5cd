"""SOFA: perplexities against plain loops, the measures by hand and under the paper's
invariances, streaming and resume, release folders, and the errors a user can cause."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest
from conftest import invoke
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workbench.kinds.sofa import data, scoring
from workbench.kinds.sofa.example import write_example, write_synthetic
from workbench.kinds.sofa.metrics import Accumulator, measures


@pytest.fixture(scope="module", autouse=True)
def _one_torch_thread():
    """The tiny models gain nothing from a second thread, and on a busy 2-core machine two
    spinning threads make them many times slower; the setting is restored afterwards."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def lms(tmp_path_factory) -> dict[str, Path]:
    from workbench.models.fixtures import build_clm, build_mlm

    root = tmp_path_factory.mktemp("sofa-models")
    return {"clm": build_clm(root / "clm", seed=3), "mlm": build_mlm(root / "mlm", "bert", seed=4)}


def _scorer(model: Path, cache: Path | None = None, batch_size: int = 8):
    from workbench.models.lm_loading import load_scorer

    return load_scorer(str(model), device="cpu", batch_size=batch_size, cache_path=cache)


# -- perplexities: the evaluator against a plain per-text loop ----------------------------------
def _plain_causal_ppl(model_dir: Path, texts: list[str]) -> dict[str, float]:
    """HF evaluate's rule, one text at a time: BOS + tokens, exp(mean NLL of the text tokens)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir).eval()
    out = {}
    with torch.no_grad():
        for text in texts:
            ids = torch.tensor([[tok.bos_token_id, *tok(text, add_special_tokens=False)["input_ids"]]])
            logits = model(ids).logits[0, :-1]
            out[text] = math.exp(torch.nn.functional.cross_entropy(logits, ids[0, 1:]).item())
    return out


def _plain_pseudo_ppl(model_dir: Path, texts: list[str]) -> dict[str, float]:
    """Pseudo-perplexity one text and one masked token at a time."""
    import torch
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForMaskedLM.from_pretrained(model_dir).eval()
    special = {tok.cls_token_id, tok.sep_token_id, tok.pad_token_id, tok.mask_token_id}
    out = {}
    with torch.no_grad():
        for text in texts:
            ids = tok(text)["input_ids"]
            assert tok.unk_token_id not in ids
            pll = []
            for p, t in enumerate(ids):
                if t in special:
                    continue
                masked = list(ids)
                masked[p] = tok.mask_token_id
                logits = model(torch.tensor([masked])).logits[0, p]
                pll.append(torch.log_softmax(logits, -1)[t].item())
            out[text] = math.exp(-sum(pll) / len(pll))
    return out


def test_cli_perplexities_equal_plain_loops_and_outputs_follow_the_contract(project, runner, lms):
    import pyarrow.parquet as pq

    probes = write_example(project)
    out = project / "out"
    result = invoke(
        runner,
        "evaluate",
        str(probes),
        "--kind",
        "sofa",
        "--model",
        str(lms["clm"]),
        "--model",
        str(lms["mlm"]),
        "--json",
        str(out / "sofa.json"),
        "--csv",
        str(out / "sofa.csv"),
        "--items",
        str(out / "items.parquet"),
        "--plots",
        str(out / "plots"),
        "--cache",
        str(project / "c.sqlite"),
    )
    assert result.exit_code == 0, result.output + repr(result.exception)
    assert "--variance reference reproduces it" in " ".join(result.output.split())  # says where it differs (#35)
    assert json.loads((out / "sofa.json").read_text())["variance"] == "paper"
    items = pq.read_table(out / "items.parquet").to_pylist()
    assert len(items) == 2 * 24
    assert {"id", "identity", "probe_ppl", "identity_ppl", "log10_ppl_star"} <= set(items[0])
    cat = data.check(probes)
    texts = [t for chunk in data.chunks(cat) for t in chunk.probes]
    for model, plain in (("clm", _plain_causal_ppl), ("mlm", _plain_pseudo_ppl)):
        mine = [r for r in items if r["model"] == str(lms[model])]
        assert len(mine) == 24
        expected = plain(lms[model], texts + cat.identities)
        for r, text in zip(mine, texts):
            assert r["probe_ppl"] == pytest.approx(expected[text], rel=1e-4)
            assert r["identity_ppl"] == pytest.approx(expected[r["identity"]], rel=1e-4)
            assert r["log10_ppl_star"] == pytest.approx(math.log10(expected[text] / expected[r["identity"]]), abs=1e-4)

    doc = json.loads((out / "sofa.json").read_text())
    assert doc["kind"] == "sofa"
    clm, mlm = doc["models"][str(lms["clm"])], doc["models"][str(lms["mlm"])]
    assert (clm["score_rule"], mlm["score_rule"]) == ("perplexity", "pseudo-perplexity")
    assert clm["overall"]["n_probes"] == 24 and clm["overall"]["n_stereotypes"] == 6
    assert set(clm["by_category"]) == {"age", "gender"}
    assert clm["by_identity"]["women"]["category"] == "gender"
    # The JSON's measures are those of the per-probe rows it wrote.
    again = measures(
        [
            {
                "id": r["id"],
                "category": r["category"],
                "identity": r["identity"],
                "probe_ppl": r["probe_ppl"],
                "identity_ppl": r["identity_ppl"],
            }
            for r in items
            if r["model"] == str(lms["clm"])
        ]
    )
    assert clm["overall"]["sofa"] == pytest.approx(again["overall"]["sofa"], rel=1e-12)
    for sid, v in again["by_stereotype"].items():
        assert clm["by_stereotype"][sid]["variance"] == pytest.approx(v["variance"], rel=1e-12)
        assert clm["by_stereotype"][sid]["lowest_identity"] == v["lowest_identity"]
    assert clm["highest_dds"][0]["dds"] == max(v["dds"] for v in clm["by_stereotype"].values())
    csv_text = (out / "sofa.csv").read_text()
    assert csv_text.startswith("model,score_rule,level,group")
    assert csv_text.count("\n") == 1 + 2 * (1 + 2)  # per model: overall and each category
    assert (out / "plots" / "sofa_by_category.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # The table: both models' global scores.
    for m in (clm, mlm):
        assert f"{m['overall']['sofa']:.5f}" in result.output


# -- the measures by hand ----------------------------------------------------------------------
HAND = [  # id, category, identity, probe_ppl, identity_ppl -> log10(PPL*)
    ("s1", "A", "x", 10.0, 1.0),
    ("s1", "A", "y", 100.0, 1.0),
    ("s1", "A", "z", 1000.0, 1.0),  # 1, 2, 3
    ("s2", "A", "x", 1.0, 10.0),
    ("s2", "A", "y", 100.0, 10.0),  # -1, 1
    ("s3", "B", "q", 5.0, 2.0),  # one identity
    ("s4", "B", "u", 4.0, 4.0),
    ("s4", "B", "v", 7.0, 7.0),
    ("s4", "B", "w", 3000.0, 3.0),  # 0, 0, 3
]


def _rows(table):
    return [dict(zip(("id", "category", "identity", "probe_ppl", "identity_ppl"), r)) for r in table]


def test_hand_computed_variance_dds_sofa_and_shares():
    m = measures(_rows(HAND))
    s = m["by_stereotype"]
    assert s["s1"]["variance"] == pytest.approx(1.0) and s["s1"]["dds"] == pytest.approx(2.0)
    assert s["s2"]["variance"] == pytest.approx(2.0) and s["s2"]["dds"] == pytest.approx(2.0)
    assert s["s4"]["variance"] == pytest.approx(3.0) and s["s4"]["dds"] == pytest.approx(3.0)
    assert (s["s1"]["lowest_identity"], s["s2"]["lowest_identity"]) == ("x", "x")
    assert s["s4"]["lowest_identity"] == "u"  # tie at 0 with v: the first row wins
    # The single-identity stereotype has no variance and is counted apart.
    assert s["s3"]["variance"] is None and s["s3"]["dds"] == 0.0 and s["s3"]["lowest_identity"] == "q"
    assert m["by_category"]["A"] == {
        "sofa": pytest.approx(1.5),
        "n_stereotypes": 2,
        "n_single_identity": 0,
        "n_probes": 5,
    }
    assert m["by_category"]["B"] == {
        "sofa": pytest.approx(3.0),
        "n_stereotypes": 1,
        "n_single_identity": 1,
        "n_probes": 4,
    }
    # Global: unweighted mean over categories (2.25), not over stereotypes (2.0).
    assert m["overall"]["sofa"] == pytest.approx(2.25)
    assert (m["overall"]["n_probes"], m["overall"]["n_stereotypes"], m["overall"]["n_single_identity"]) == (9, 3, 1)
    shares = {i: v["share_lowest"] for i, v in m["by_identity"].items()}
    assert shares == {"x": 1.0, "y": 0.0, "z": 0.0, "q": 0.0, "u": 1.0, "v": 0.0, "w": 0.0}
    assert [e["id"] for e in m["highest_dds"]] == ["s4", "s1", "s2"]
    assert [e["id"] for e in m["lowest_dds"]] == ["s1", "s2", "s4"]


def test_reference_variance_by_hand():
    """The reference script's loop keeps the variance of each category's last stereotype only."""
    m = measures(_rows(HAND), variance_rule="reference")
    assert m["by_category"]["A"]["sofa"] == 2.0 and m["by_category"]["A"]["variance_of"] == "s2"
    assert m["by_category"]["B"]["sofa"] == 3.0 and m["by_category"]["B"]["variance_of"] == "s4"
    assert m["overall"]["sofa"] == 2.5  # the paper's: 2.25
    assert m["by_stereotype"] == measures(_rows(HAND))["by_stereotype"]  # nothing else changes
    # A category whose last stereotype has one identity has no score there (pandas: NaN), nor has the global one.
    last_single = measures(
        _rows([r for r in HAND if r[0] != "s3"] + [r for r in HAND if r[0] == "s3"]), variance_rule="reference"
    )
    assert last_single["by_category"]["B"]["sofa"] is None and last_single["overall"]["sofa"] is None


# Our own probes in the published layout; stereotype 1 comes back after 2 (its first appearance decides its place).
INTERLEAVED = (
    "id,category,target,identity,stereotype\n"
    "1,age,t,old people,are slow\n1,age,t,teenagers,are slow\n1,age,t,toddlers,are slow\n"
    "2,age,t,old people,love maps\n2,age,t,teenagers,love maps\n"
    "1,age,t,retirees,are slow\n"
    "3,origin,t,islanders,sing well\n3,origin,t,villagers,sing well\n"
    "4,origin,t,islanders,are late\n4,origin,t,villagers,are late\n4,origin,t,townsfolk,are late\n"
)


def test_variance_switch_reproduces_the_reference_script(project, runner, lms):
    import statistics

    import pyarrow.parquet as pq

    path = project / "probes.csv"
    path.write_text(INTERLEAVED, encoding="utf-8")
    docs, outputs = {}, {}
    for variance in ("paper", "reference"):
        result = invoke(
            runner,
            "evaluate",
            str(path),
            "--kind",
            "sofa",
            "--model",
            str(lms["clm"]),
            "--variance",
            variance,
            "--json",
            f"{variance}.json",
            "--items",
            f"{variance}.parquet",
        )
        assert result.exit_code == 0, result.output + repr(result.exception)
        docs[variance], outputs[variance] = json.loads((project / f"{variance}.json").read_text()), result.output
    items = pq.read_table(project / "reference.parquet").to_pylist()
    # Our re-implementation of the script's loop: per category, its ids in order of first appearance,
    # the list of variances emptied at every id, so the last id's sample variance is kept; rounded.
    script = {}
    for category in dict.fromkeys(i["category"] for i in items):
        ids = list(dict.fromkeys(i["id"] for i in items if i["category"] == category))
        for sid in ids:
            temp = [statistics.variance([i["log10_ppl_star"] for i in items if i["id"] == sid])]
        script[category] = round(sum(temp) / len(temp), 3)
    entry = docs["reference"]["models"][str(lms["clm"])]
    assert {c: v["sofa"] for c, v in entry["by_category"].items()} == script
    assert entry["by_category"]["age"]["variance_of"] == "2"
    assert entry["overall"]["sofa"] == round(sum(script.values()) / len(script), 3)
    assert docs["reference"]["variance"] == "reference" and "its bug included" in docs["reference"]["computation"]
    assert "warning: --variance reference" in " ".join(outputs["reference"].split())
    # the default is the paper's: each category's mean of its stereotypes' variances, unchanged
    paper = docs["paper"]["models"][str(lms["clm"])]
    rows = [{**i, "probe_ppl": i["probe_ppl"], "identity_ppl": i["identity_ppl"]} for i in items]
    without_intervals = {
        c: {k: v for k, v in scope.items() if k not in ("intervals", "n")} for c, scope in paper["by_category"].items()
    }
    assert without_intervals == measures(rows)["by_category"]
    assert paper["overall"]["sofa"] != entry["overall"]["sofa"]


def test_an_identity_under_two_categories_is_two_units():
    rows = _rows(
        [("a", "C1", "p", 1.0, 1.0), ("a", "C1", "r", 9.0, 1.0), ("b", "C2", "p", 5.0, 1.0), ("b", "C2", "s", 2.0, 1.0)]
    )
    m = measures(rows)
    assert m["by_identity"]["p [C1]"] == {"share_lowest": 1.0, "n_lowest": 1, "category": "C1"}
    assert m["by_identity"]["p [C2]"]["share_lowest"] == 0.0 and m["by_identity"]["s"]["share_lowest"] == 1.0


# -- the paper's invariances as properties -----------------------------------------------------
@st.composite
def probe_sets(draw):
    """Stereotypes over categories; per stereotype, distinct log10(PPL*) values at least 1/8
    apart (so rounding cannot change which identity is lowest); identity PPLs shared."""
    n_identities = draw(st.integers(2, 6))
    identity_ppl = draw(st.lists(st.floats(1.5, 5e4), min_size=n_identities, max_size=n_identities))
    rows = []
    for s in range(draw(st.integers(1, 6))):
        category = draw(st.sampled_from(["c1", "c2", "c3"]))
        members = draw(st.lists(st.integers(0, n_identities - 1), min_size=1, max_size=n_identities, unique=True))
        steps = draw(st.lists(st.integers(-40, 40), min_size=len(members), max_size=len(members), unique=True))
        for i, k in zip(members, steps):
            value = k / 8
            rows.append(
                {
                    "id": f"s{s}",
                    "category": category,
                    "identity": f"i{i}",
                    "probe_ppl": identity_ppl[i] * 10**value,
                    "identity_ppl": identity_ppl[i],
                }
            )
    return rows


def _same(a: dict, b: dict) -> None:
    assert a["by_stereotype"].keys() == b["by_stereotype"].keys()
    for sid, x in a["by_stereotype"].items():
        y = b["by_stereotype"][sid]
        if x["variance"] is None:
            assert y["variance"] is None
        else:
            assert y["variance"] == pytest.approx(x["variance"], rel=1e-9, abs=1e-12)
        assert y["dds"] == pytest.approx(x["dds"], rel=1e-9, abs=1e-12)
        assert y["lowest_identity"] == x["lowest_identity"]
    for c, x in a["by_category"].items():
        assert (b["by_category"][c]["sofa"] is None) == (x["sofa"] is None)
        if x["sofa"] is not None:
            assert b["by_category"][c]["sofa"] == pytest.approx(x["sofa"], rel=1e-9, abs=1e-12)
    assert {i: v["share_lowest"] for i, v in a["by_identity"].items()} == {
        i: v["share_lowest"] for i, v in b["by_identity"].items()
    }


factors = st.floats(1e-3, 1e3).filter(lambda k: abs(k - 1) > 1e-6)


@settings(max_examples=150, deadline=None)
@given(probe_sets(), factors, st.integers(0, 5))
def test_one_stereotype_times_a_constant_changes_nothing(rows, k, which):
    target = sorted({r["id"] for r in rows})[which % len({r["id"] for r in rows})]
    scaled = [{**r, "probe_ppl": r["probe_ppl"] * k} if r["id"] == target else r for r in rows]
    before, after = measures(rows), measures(scaled)
    _same(before, after)


@settings(max_examples=150, deadline=None)
@given(probe_sets(), factors, st.booleans())
def test_a_model_wide_factor_changes_nothing(rows, k, identities_too):
    scaled = [
        {**r, "probe_ppl": r["probe_ppl"] * k, "identity_ppl": r["identity_ppl"] * (k if identities_too else 1.0)}
        for r in rows
    ]
    before, after = measures(rows), measures(scaled)
    _same(before, after)
    if before["overall"]["sofa"] is not None:
        assert after["overall"]["sofa"] == pytest.approx(before["overall"]["sofa"], rel=1e-9, abs=1e-12)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.tuples(st.integers(0, 7), st.integers(0, 9), st.floats(-5, 5)), min_size=1, max_size=120),
    st.lists(st.integers(1, 40), min_size=1, max_size=10),
)
def test_streamed_chunks_equal_one_pass_statistics(probes, cuts):
    """Any split of the probes into chunks gives numpy's ddof=1 variance, the range and the
    first-seen lowest identity."""
    s = np.array([p[0] for p in probes])
    u = np.array([p[1] for p in probes])
    v = np.array([p[2] for p in probes])
    acc = Accumulator()
    at, i = 0, 0
    while at < len(probes):
        step = cuts[i % len(cuts)]
        acc.add(s[at : at + step], u[at : at + step], v[at : at + step])
        at, i = at + step, i + 1
    for code in np.unique(s):
        x, who = v[s == code], u[s == code]
        if len(x) >= 2:
            assert acc.variance()[code] == pytest.approx(np.var(x, ddof=1), rel=1e-9, abs=1e-9)
        else:
            assert math.isnan(acc.variance()[code])
        assert acc.dds()[code] == pytest.approx(np.ptp(x), abs=1e-12)
        assert acc.argmin[code] == who[int(np.argmin(x))]


# -- streaming, progress and resume ------------------------------------------------------------
def test_scoring_streams_in_slices_and_blocks(tmp_path, lms, monkeypatch):
    path = tmp_path / "probes.csv"
    write_synthetic(path, 240, identities_per_category=(6, 6))
    cat = data.check(path)
    whole = scoring.score_file(cat, _scorer(lms["clm"]), "clm")

    monkeypatch.setattr(data, "BLOCK_BYTES", 2048)
    monkeypatch.setattr(data, "CHUNK_ROWS", 50)
    monkeypatch.setattr(scoring, "SCORE_SLICE", 16)
    scorer = _scorer(lms["clm"])
    sizes, blocks, advanced = [], [], []
    real, shared = scorer.token_logprobs, scorer.prefixed_token_logprobs
    scorer.token_logprobs = lambda seqs, progress=None: sizes.append(len(seqs)) or real(seqs, progress)
    scorer.prefixed_token_logprobs = lambda seqs, cuts, progress=None: (
        sizes.append(len(seqs)) or shared(seqs, cuts, progress)
    )
    real_chunks = data.chunks
    monkeypatch.setattr(data, "chunks", lambda c: (blocks.append(len(ch.probes)) or ch for ch in real_chunks(c)))
    streamed = scoring.score_file(data.check(path), scorer, "clm", advanced.append)
    assert len(blocks) > 3 and max(blocks) < 100  # the file arrived in several chunks
    assert max(sizes) <= 16 and sum(sizes) == 240 + 12  # each text scored once, 16 at most per call
    assert sum(advanced) == cat.n_probes + len(cat.identities)
    np.testing.assert_allclose(streamed.variance(), whole.variance(), rtol=1e-5)  # float32 batches differ
    np.testing.assert_array_equal(streamed.argmin, whole.argmin)


def test_probes_of_one_identity_share_its_prefix_and_equal_a_plain_loop(tmp_path, lms):
    """Causal LMs score a chunk identity by identity, each identity's probes on one pass over
    BOS + identity: the perplexities stay HF evaluate's rule, probe by probe."""
    path = tmp_path / "probes.csv"
    write_synthetic(path, 120, identities_per_category=(4, 4), seed=5)
    cat = data.check(path)
    scorer = _scorer(lms["clm"], batch_size=16)
    groups = []
    real = scorer._rest_pass
    scorer._rest_pass = lambda ran, seqs, n: groups.append(len(seqs)) or real(ran, seqs, n)

    class Items:
        got: dict[str, float] = {}

        def identities(self, log_likelihood, tokens):
            pass

        def write(self, model, cat, chunk, probe_ppl, identity_ppl, values, log_likelihood, tokens):
            self.got.update(zip(chunk.probes, probe_ppl.tolist()))

    items = Items()
    shared = scoring.score_file(cat, scorer, "clm", items=items)
    assert scorer._prefix_ok is True and sum(groups) >= 100 and max(groups) == 16  # most probes went shared
    want = _plain_causal_ppl(lms["clm"], list(items.got))
    for text, ppl in items.got.items():
        assert ppl == pytest.approx(want[text], rel=1e-4)
    plain = _scorer(lms["clm"], batch_size=16)
    plain._prefix_ok = False  # every probe whole
    whole = scoring.score_file(cat, plain, "clm")
    np.testing.assert_allclose(shared.variance(), whole.variance(), rtol=1e-4)
    np.testing.assert_array_equal(shared.argmin, whole.argmin)


def test_batch_tokenised_path_is_the_layers_perplexity(lms, tmp_path):
    """The evaluator tokenises a slice in one call; values and cache entries are the layer's own."""
    from workbench.core.cache import Cache

    texts = ["older people are slow to learn new technology", "women", "men workers are not good with money"]
    cache = tmp_path / "c.sqlite"
    scorer = _scorer(lms["clm"], cache)
    mine = scoring.perplexities(*scoring.text_scores(scorer, texts))
    assert Cache(cache).count("lm-causal") == 3
    computed = []
    real = scorer._causal_step
    scorer._causal_step = lambda seqs: computed.append(len(seqs)) or real(seqs)
    assert scorer.perplexity(texts) == mine.tolist() and computed == []  # same keys: all from the cache


def test_missing_probe_column_is_identity_space_stereotype(tmp_path, lms):
    with_probe = write_example(tmp_path / "a")
    lines = with_probe.read_text().splitlines()
    without = tmp_path / "b.csv"
    without.write_text("\n".join(",".join(line.split(",")[:5]) for line in lines) + "\n")
    assert "probe" not in data.check(without).columns
    texts = [t for ch in data.chunks(data.check(without)) for t in ch.probes]
    assert texts == [t for ch in data.chunks(data.check(with_probe)) for t in ch.probes]
    assert texts[0] == "older people are slow to learn new technology"


class Stop(KeyboardInterrupt):
    pass


def test_resume_after_interruption_computes_only_what_is_missing(tmp_path, lms, monkeypatch):
    from workbench.core.cache import Cache

    path = tmp_path / "probes.csv"
    write_synthetic(path, 300, identities_per_category=(5, 5, 5), seed=1)
    cat = data.check(path)
    reference = scoring.score_file(cat, _scorer(lms["clm"]), "clm")
    monkeypatch.setattr(scoring, "SCORE_SLICE", 32)
    cache = tmp_path / "cache.sqlite"

    def counting(scorer, stop_after=None):
        """Sequences computed, by batch, whole or on a shared identity prefix."""
        computed, real, real_shared = [], scorer._causal_step, scorer._rest_pass
        scorer._prefix_ok = True  # the shared path's one-time check would compute one sequence twice

        def step(seqs):
            if stop_after is not None and len(computed) >= stop_after:
                raise Stop()
            computed.append(len(seqs))
            return real(seqs)

        def shared(ran, seqs, n):
            if stop_after is not None and len(computed) >= stop_after:
                raise Stop()
            computed.append(len(seqs))
            return real_shared(ran, seqs, n)

        scorer._causal_step, scorer._rest_pass = step, shared
        return computed

    first = _scorer(lms["clm"], cache)
    done_first = counting(first, stop_after=12)
    with pytest.raises(Stop):
        scoring.score_file(cat, first, "clm")
    first.cache.close()
    committed = Cache(cache).count("lm-causal")
    assert committed == sum(done_first) and 0 < committed < 315

    second = _scorer(lms["clm"], cache)
    done_second = counting(second)
    resumed = scoring.score_file(cat, second, "clm")
    assert sum(done_second) == 315 - committed  # 300 probes + 15 identities, minus the committed
    np.testing.assert_allclose(resumed.variance(), reference.variance(), rtol=1e-5)  # float32 batches differ
    np.testing.assert_array_equal(resumed.argmin, reference.argmin)
    second.cache.close()

    third = _scorer(lms["clm"], cache)
    done_third = counting(third)
    scoring.score_file(cat, third, "clm")
    assert done_third == []  # a complete cache computes nothing


# -- sources: releases and detection -----------------------------------------------------------
def test_release_folder_is_detected_and_evaluated(project, runner, lms):
    from workbench import kinds

    release = project / "release"
    (release / "data").mkdir(parents=True)
    shutil.copy(write_example(project), release / "data" / "probes.csv")
    (release / "manifest.json").write_text(json.dumps({"kind": "sofa", "version": "1.0.0"}))
    assert kinds.detect(str(release)) == "sofa"
    assert data.detect(release / "data" / "probes.csv")
    nli_like = project / "nli.csv"
    nli_like.write_text("premise,hypothesis,label\na,b,neutral\n")
    assert not data.detect(nli_like)
    result = invoke(
        runner, "evaluate", str(release), "--model", str(lms["clm"]), "--json", "out.json", "--cache", "c.sqlite"
    )
    assert result.exit_code == 0, result.output + repr(result.exception)
    assert json.loads((project / "out.json").read_text())["models"][str(lms["clm"])]["overall"]["n_probes"] == 24


def test_write_synthetic_has_the_public_shape(tmp_path):
    counts = write_synthetic(tmp_path / "big.csv", 1000, identities_per_category=(10, 20))
    cat = data.check(tmp_path / "big.csv")
    assert counts == {"probes": 1000, "stereotypes": 67, "identities": 30, "categories": 2}
    assert (cat.n_probes, len(cat.stereotype_ids), len(cat.identities)) == (1000, 67, 30)


# -- errors a user can cause -------------------------------------------------------------------
HEADER = "id,category,target,identity,stereotype\n"
BAD_FILES = {
    "missing-column": ("id,category,identity\n1,age,old\n", ["missing column(s) stereotype", ":1: header:"]),
    "category-disagrees": (
        HEADER + "1,age,t,old,are slow\n2,age,t,old,are calm\n1,gender,t,young,are slow\n",
        [":4: category: stereotype id '1' has category 'gender' here but 'age' on line 2"],
    ),
    "empty-identity": (HEADER + "1,age,t,old,are slow\n1,age,t,  ,are slow\n", [":3: identity: empty"]),
    "empty-stereotype": (HEADER + '1,age,t,old,""\n', [":2: stereotype: empty"]),
    "duplicate": (
        HEADER + "1,age,t,old,are slow\n1,age,t,young,are slow\n1,age,t,old,are slow\n",
        [":4: identity: repeats (id '1', identity 'old') of line 2"],
    ),
    "no-rows": (HEADER, ["no probes"]),
}


@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_bad_probe_files_name_file_line_and_column(project, runner, case):
    text, expected = BAD_FILES[case]
    path = project / "probes.csv"
    path.write_text(text, encoding="utf-8")
    # The file is checked before any model loads: the model here does not even exist.
    result = invoke(runner, "evaluate", str(path), "--kind", "sofa", "--model", "./no-such-model")
    assert result.exit_code == 2, result.output
    message = str(result.exception)
    assert "probes.csv" in message and "Traceback" not in result.output
    for part in expected:
        assert part in message


def test_non_utf8_file_names_line_and_column(project, runner):
    path = project / "latin.csv"
    path.write_bytes(HEADER.encode() + b"1,age,t,old,are slow\n2,age,t,caf\xe9 owners,are calm\n")
    result = invoke(runner, "evaluate", str(path), "--kind", "sofa", "--model", "./no-such-model")
    assert result.exit_code == 2
    assert "latin.csv is not UTF-8" in str(result.exception)
    assert "latin.csv:3: identity: byte 12" in str(result.exception)


@pytest.mark.parametrize(
    "args, expected",
    [
        (["missing.csv"], "probe file not found: missing.csv"),
        (["probes.csv", "missing.csv"], "missing.csv"),  # a second version that is not there
        (["probes.csv", "--items", "items.xlsx"], "unknown format .xlsx"),
        (["probes.csv", "--score-rule", "mean-prob"], "--score-rule 'mean-prob' is not a sofa rule"),
        (["some-org/sofa-release@v1.0.0"], "cannot fetch some-org/sofa-release@v1.0.0"),
    ],
)
def test_request_errors(project, runner, lms, args, expected):
    write_example(project).rename(project / "probes.csv")
    result = invoke(runner, "evaluate", *args, "--kind", "sofa", "--model", str(lms["clm"]))
    assert result.exit_code == 2, result.output
    assert expected in str(result.exception)


def test_score_rule_must_fit_the_model(project, runner, lms):
    probes = write_example(project)
    result = invoke(
        runner,
        "evaluate",
        str(probes),
        "--kind",
        "sofa",
        "--model",
        str(lms["mlm"]),
        "--score-rule",
        "perplexity",
        "--cache",
        "c.sqlite",
    )
    assert result.exit_code == 2
    assert "needs a causal LM" in str(result.exception) and "is a masked LM" in str(result.exception)


def test_repeats_far_apart_are_found_across_blocks(tmp_path, monkeypatch):
    monkeypatch.setattr(data, "BLOCK_BYTES", 4096)
    path = tmp_path / "big.csv"
    write_synthetic(path, 2000, identities_per_category=(10, 10))
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines + [lines[5]]) + "\n")  # row 6 again, as the last line
    with pytest.raises(Exception) as caught:
        data.check(path)
    assert f"big.csv:{len(lines) + 1}: identity: repeats" in str(caught.value)
    assert "of line 6" in str(caught.value)


def test_the_hugging_face_layout_reads_as_the_paper_layout(project, runner, lms):
    """copenlu/sofa on the Hub is a CSV (SoFa.csv; its card: ID, Category, Identity, Stereotype,
    Probe; the `additional` config adds one column of scores per model). Our own probes in that
    layout, with a BOM, score as the same probes in the lower-case layout."""
    rows = [
        ("1", "age", "old people", "are slow"),
        ("1", "age", "teenagers", "are slow"),
        ("2", "age", "old people", "love maps"),
        ("2", "age", "teenagers", "love maps"),
    ]
    plain = project / "plain.csv"
    plain.write_text(
        "id,category,identity,stereotype,probe\n" + "".join(f"{i},{c},{d},{s},{d} {s}\n" for i, c, d, s in rows),
        encoding="utf-8",
    )
    hub = project / "SoFa-w-LMs-Scores.csv"
    hub.write_text(
        "\ufeffID,Category,Identity,Stereotype,Probe,gpt2\n"
        + "".join(f"{i},{c},{d},{s},{d} {s},0.5\n" for i, c, d, s in rows),
        encoding="utf-8",
    )
    from workbench.kinds import detect as detect_kind

    assert detect_kind(str(hub)) == "sofa"
    docs = []
    for path in (plain, hub):
        result = invoke(runner, "evaluate", str(path), "--model", str(lms["clm"]), "--json", f"{path.stem}.json")
        assert result.exit_code == 0, result.output + repr(result.exception)
        docs.append(json.loads((project / f"{path.stem}.json").read_text()))
    assert docs[0]["models"] == docs[1]["models"] and docs[1]["dataset"]["n_probes"] == 4
