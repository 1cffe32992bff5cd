"""FairBelief's analyses of several models (#52 item 2): Table 1 from the per-rank HONEST, the
curves by group, family and size, and the agreement between models' fills, against numpy by hand
(the agreement with the same tiny embedding model, its vectors pooled here by hand). Every
template, lemma and fill here is this project's own."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from conftest import invoke
from test_honest_published import LEXICON, ROWS, WORDS, fairbelief_file, keyed_file, write_files

from workbench.core.errors import InputError

OTHER = [  # a second masked model's fills and a third model's, each row's four, best first
    ["sleepy", "grumpy", "kind", "tall"],
    ["driver", "cook", "gloomy", "sleepy"],
    ["sleepy", "grumpy", "kind", "tall"],
    ["gloomy", "tall", "sunny", "grumpy"],
    ["this", "gloomy", "sleepy", "that"],
]
THIRD = [
    ["tall", "kind", "sunny", "cook"],
    ["grumpy", "sleepy", "cook", "driver"],
    ["tall", "kind", "sunny", "cook"],
    ["kind", "gloomy", "grumpy", "tall"],
    ["sunny", "that", "this", "gloomy"],
]
FILLS = {"alpha-s": WORDS, "alpha-l": OTHER, "beta": THIRD}
TABLE = "name,family,size\nalpha-s,alpha,small\nalpha-l,alpha,large\nbeta,beta,small\n"


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no workspace cache of the repository's own project


@pytest.fixture(scope="module")
def embedder(tmp_path_factory) -> Path:
    from workbench.models.fixtures import build_embedder

    return build_embedder(tmp_path_factory.mktemp("embedder") / "mini", seed=21)


def run(tmp_path, runner, *extra: str, K: str = "3") -> dict:
    templates, lexicon = write_files(tmp_path)
    masked = lambda t: t.replace("[M]", "[MASK]")  # noqa: E731
    files = [
        f"alpha-s={fairbelief_file(tmp_path / 'a.jsonl', WORDS, masked)}",
        f"alpha-l={fairbelief_file(tmp_path / 'b.jsonl', OTHER, lambda t: t.replace('[M]', '<mask>'))}",
        f"beta={keyed_file(tmp_path / 'c.jsonl', THIRD)}",
    ]
    (tmp_path / "models.csv").write_text(TABLE, encoding="utf-8")
    out = tmp_path / "scores.json"
    args = ["evaluate", str(templates), "--kind", "honest", "--lexicon", str(lexicon), "--top-k", K]
    for f in files:
        args += ["--predictions", f]
    result = invoke(runner, *args, "--json", str(out), "--bootstrap", "0", "--no-cache", *extra)
    assert result.exit_code == 0, (result.output, result.exception)
    return {"doc": json.loads(out.read_text()), "output": result.output}


def per_rank(fills, K: int, rows=None) -> np.ndarray:
    lemmas = {w for w, _ in LEXICON}
    rows = range(len(ROWS)) if rows is None else rows
    return np.array([100.0 * np.mean([fills[n][k] in lemmas for n in rows]) for k in range(K)])


def test_table_one_and_curves_equal_numpy_by_hand(tmp_path, runner):
    found = run(tmp_path, runner, "--models-table", str(tmp_path / "models.csv"), K="4")
    across = found["doc"]["across_models"]
    means = {}
    for name, fills in FILLS.items():
        v = per_rank(fills, 4)
        row = across["table_1"][name]
        assert row["mean"] == pytest.approx(v.mean()) and row["std"] == pytest.approx(v.std())
        for q in (25, 50, 75, 90, 95):
            assert row[f"q{q}"] == pytest.approx(np.percentile(v, q))
        assert across["curves"][name]["overall"]["per_rank"] == pytest.approx(v.tolist())
        assert across["curves"][name]["overall"]["cumulative"] == pytest.approx([v[:k].mean() for k in range(1, 5)])
        male = [n for n, r in enumerate(ROWS) if r[2] == "male"]
        assert across["curves"][name]["by_group"]["male"]["per_rank"] == pytest.approx(
            per_rank(fills, 4, male).tolist()
        )
        means[name] = v.mean()
        assert (row["family"], row["size"]) == {
            "alpha-s": ("alpha", "small"),
            "alpha-l": ("alpha", "large"),
            "beta": ("beta", "small"),
        }[name]
    for name in FILLS:
        assert across["table_1"][name]["rank"] == 1 + sum(m < means[name] for m in means.values())
    assert across["by_family"]["alpha"]["overall"]["per_rank"] == pytest.approx(
        ((per_rank(WORDS, 4) + per_rank(OTHER, 4)) / 2).tolist()
    )
    assert across["by_size"]["small"]["models"] == ["alpha-s", "beta"]
    assert "Table 1 (FairBelief)" in found["output"] and "rank" in found["output"]


def test_identity_mean_group_curves_average_the_identities(tmp_path, runner):
    found = run(tmp_path, runner, "--group-curves", "identity-mean", K="2")
    curves = found["doc"]["across_models"]["curves"]["beta"]["by_group"]["female"]["per_rank"]
    baker = [n for n, r in enumerate(ROWS) if r[1] == "the baker"]  # the only female identity here
    assert curves == pytest.approx(per_rank(THIRD, 2, baker).tolist())
    male = found["doc"]["across_models"]["curves"]["beta"]["by_group"]["male"]["per_rank"]
    tailor = [n for n, r in enumerate(ROWS) if r[1] == "the tailor"]
    assert male == pytest.approx(per_rank(THIRD, 2, tailor).tolist())


def embed_by_hand(folder: Path, texts: list[str]) -> np.ndarray:
    """Each text alone through transformers' AutoModel, its last hidden states averaged."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    tok, model = AutoTokenizer.from_pretrained(folder), AutoModel.from_pretrained(folder).eval()
    out = []
    with torch.inference_mode():
        for text in texts:
            hidden = model(**tok(text, return_tensors="pt")).last_hidden_state[0]
            out.append(hidden.double().mean(dim=0).numpy())
    return np.array(out)


@pytest.mark.parametrize("how", ["appended", "filled"])
def test_agreement_equals_a_direct_computation_with_the_same_embedder(tmp_path, runner, embedder, how):
    found = run(
        tmp_path,
        runner,
        "--models-table",
        str(tmp_path / "models.csv"),
        "--embedding-model",
        str(embedder),
        "--agreement-text",
        how,
    )
    agreed = found["doc"]["across_models"]["agreement"]
    prompts = {"alpha-s": "[MASK]", "alpha-l": "<mask>", "beta": "[M]"}  # beta's file is keyed by template

    def text(name: str, n: int, k: int) -> str:
        template = ROWS[n][0]
        fill = FILLS[name][n][k]
        if how == "filled":
            return template.replace("[M]", fill)
        return template.replace("[M]", prompts[name]).replace(prompts[name], "") + " " + fill

    names = list(FILLS)
    expect = {"all": [], "within alpha": [], "across families": []}
    pairs = {
        "all": [(0, 1), (0, 2), (1, 2)],
        "within alpha": [(0, 1)],
        "across families": [(0, 2), (1, 2)],
    }
    for k in range(3):
        per_set = {s: [] for s in expect}
        for n in range(len(ROWS)):
            v = embed_by_hand(embedder, [text(m, n, k) for m in names])
            cos = lambda a, b: v[a] @ v[b] / (np.linalg.norm(v[a]) * np.linalg.norm(v[b]))  # noqa: E731
            for s, ps in pairs.items():
                per_set[s].append(np.mean([cos(a, b) for a, b in ps]))
        for s in expect:
            expect[s].append(np.mean(per_set[s]))
    assert set(agreed["per_k"]) == set(expect)
    for s in expect:
        assert agreed["per_k"][s] == pytest.approx(expect[s], abs=1e-6), s
    assert agreed["pairs"] == {"all": 3, "within alpha": 1, "across families": 2}
    assert agreed["text"] == how and agreed["embedder"]["model"] == str(embedder)
    assert "agreement (mean pairwise cosine similarity" in found["output"]


def test_a_models_table_without_family_is_refused_in_one_line(tmp_path, runner):
    templates, lexicon = write_files(tmp_path)
    table = tmp_path / "models.csv"
    table.write_text("name,size\nalpha-s,small\n", encoding="utf-8")
    path = fairbelief_file(tmp_path / "a.jsonl", WORDS, lambda t: t.replace("[M]", "[MASK]"))
    result = invoke(
        runner,
        "evaluate",
        str(templates),
        "--kind",
        "honest",
        "--lexicon",
        str(lexicon),
        "--predictions",
        str(path),
        "--models-table",
        str(table),
    )
    assert result.exit_code == 2 and isinstance(result.exception, InputError)
    assert "models.csv:1: the models table has no family column" in str(result.exception)
