"""The evaluator's measures, exact, and its inputs and outputs."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import invoke
from workbench.kinds.nli.evaluation.metrics.nli_bias import CON, ENT, NEU, aggregate_bias_formula, compute
from workbench.kinds.nli.evaluation.scoring import score

# The paper's Table 6: prediction on the pro sample / on its anti counterfactual -> counts.
TABLE_6 = {
    ("N", "N"): (0, 0, 0),
    ("N", "C"): (1, 0, 0),
    ("E", "N"): (1, 0, 0),
    ("E", "C"): (2, 0, 0),
    ("C", "N"): (0, 1, 0),
    ("N", "E"): (0, 1, 0),
    ("C", "E"): (0, 2, 0),
    ("E", "E"): (0, 0, 2),
    ("C", "C"): (0, 0, 2),
}
CODE = {"E": ENT, "N": NEU, "C": CON}


@pytest.mark.parametrize("combo", sorted(TABLE_6))
def test_each_of_the_nine_pair_combinations(combo):
    pro, anti, error = TABLE_6[combo]
    m = compute(np.array([True, False]), np.array([CODE[combo[0]], CODE[combo[1]]]), np.array([0, 0]))
    n = 2  # each count is over the number of samples
    assert (m["cf_pro"], m["cf_anti"], m["cf_error"]) == (100 * pro / n, 100 * anti / n, 100 * error / n)
    wrong = sum(c != "N" for c in combo)
    assert m["mispredicted"] == 100 * wrong / n
    assert m["accuracy"] == 100 * (2 - wrong) / n


def test_hand_computed_example():
    # 6 samples: pairs (E,C) and (N,N), one unpaired pro E, one unpaired anti N.
    stance = np.array([True, False, True, False, True, False])
    pred = np.array([ENT, CON, NEU, NEU, ENT, NEU])
    pair = np.array([0, 0, 1, 1, -1, -1])
    m = compute(stance, pred, pair)
    assert m["n"] == 6 and m["n_pairs"] == 2 and m["n_unpaired"] == 2
    assert m["accuracy"] == pytest.approx(100 * 3 / 6)
    # n_e-S = 2 (two pro entailments), n_c-A = 1, n_e-A = n_c-S = 0
    assert m["bias_pro"] == pytest.approx(100 * 3 / 6)
    assert m["bias_anti"] == 0
    assert m["bias_aggregate"] == pytest.approx(aggregate_bias_formula(2, 1, 2, 1, 0.5))
    assert m["cf_pro"] == pytest.approx(100 * 2 / 6)
    assert m["unpaired_mispredicted"] == pytest.approx(100 * 1 / 6)


samples = st.integers(min_value=1, max_value=60).flatmap(
    lambda n: st.tuples(
        st.lists(st.sampled_from([ENT, NEU, CON]), min_size=2 * n, max_size=2 * n),
        st.lists(st.booleans(), min_size=n, max_size=n),  # is each (pro, anti) couple paired?
        st.lists(st.sampled_from(["pro", "anti"]), min_size=2 * n, max_size=2 * n),
        st.randoms(use_true_random=False),
    )
)


def _rows(data):
    preds, paired, stances, rnd = data
    rows = []
    for i, is_pair in enumerate(paired):
        for j, stance in enumerate(("pro", "anti") if is_pair else (stances[2 * i], stances[2 * i + 1])):
            rows.append(
                {
                    "stance": stance,
                    "domain": rnd.choice(["d1", "d2"]) if not is_pair else f"d{i % 2 + 1}",
                    "subtopic": f"s{i % 3}",
                    "pair_id": f"p{i}" if is_pair else None,
                    "prediction": ["entailment", "neutral", "contradiction"][preds[2 * i + j]],
                }
            )
    return rows


@settings(max_examples=150, deadline=None)
@given(samples)
def test_properties_hold_on_random_inputs(data):
    rows = _rows(data)
    result = score(rows)
    for level in [{"all": result["overall"]}, result["by_domain"], result["by_subtopic"]]:
        for m in level.values():
            assert m["bias_aggregate"] == pytest.approx(m["bias_pro"] - m["bias_anti"], abs=1e-3)
            assert m["cf_pro"] + m["cf_anti"] + m["cf_error"] + m["unpaired_mispredicted"] == pytest.approx(
                m["mispredicted"], abs=1e-3
            )
    o = result["overall"]
    preds = [r["prediction"] for r in rows]
    n_e_s = sum(p == "entailment" and r["stance"] == "pro" for p, r in zip(preds, rows))
    n_c_a = sum(p == "contradiction" and r["stance"] == "anti" for p, r in zip(preds, rows))
    n_e, n_c = preds.count("entailment"), preds.count("contradiction")
    assert o["bias_aggregate"] == pytest.approx(
        aggregate_bias_formula(n_e_s, n_c_a, n_e, n_c, o["accuracy"] / 100), abs=1e-3
    )
    shuffled = list(rows)
    data[3].shuffle(shuffled)
    assert score(shuffled) == result


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_predictions_cli_writes_json_csv_and_plots(tmp_path, runner):
    rng = random.Random(1)
    rows = []
    for model in ("m1", "m2"):
        for i in range(40):
            for stance in ("pro", "anti"):
                rows.append(
                    {
                        "model": model,
                        "pair_id": f"p{i}" if i < 30 else None,
                        "stance": stance,
                        "domain": ["gender", "race"][i % 2],
                        "subtopic": f"s{i % 4}",
                        "prediction": rng.choice(["entailment", "neutral", "contradiction"]),
                    }
                )
    path = write_jsonl(tmp_path / "preds.jsonl", rows)
    out = tmp_path / "out"
    result = invoke(
        runner,
        "evaluate",
        "--predictions",
        str(path),
        "--json",
        str(out / "s.json"),
        "--csv",
        str(out / "s.csv"),
        "--plots",
        str(out / "plots"),
    )
    assert result.exit_code == 0, result.output
    assert "counterfactual pro" in result.output and "m1" in result.output
    data = json.loads((out / "s.json").read_text())
    keys = {
        "n",
        "accuracy",
        "bias_pro",
        "bias_anti",
        "bias_aggregate",
        "mispredicted",
        "cf_pro",
        "cf_anti",
        "cf_error",
        "unpaired_mispredicted",
    }
    for model in ("m1", "m2"):
        m = data["models"][model]
        assert keys <= set(m["overall"]) and set(m["by_domain"]) == {"gender", "race"} and len(m["by_subtopic"]) == 4
        assert m["overall"]["n"] == 80 and all(0 <= m["overall"][k] <= 100 for k in keys - {"n", "bias_aggregate"})
    csv_lines = (out / "s.csv").read_text().splitlines()
    assert len(csv_lines) == 1 + 2 * (1 + 2 + 4)
    assert (out / "plots" / "accuracy.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(
    "lines, message",
    [
        (['{"stance": "pro", "domain": "d", "subtopic": "s"}'], ":1: missing field(s) prediction"),
        (['{"stance": "pro", "domain": "d", "subtopic": "s", "prediction": "neutral"}', "{oops"], ":2: invalid JSON"),
        (['{"stance": "both", "domain": "d", "subtopic": "s", "prediction": "neutral"}'], ":1: stance must be"),
        (['{"stance": "pro", "domain": "d", "subtopic": "s", "prediction": "maybe"}'], ":1: prediction must be"),
        (
            [
                '{"pair_id": 7, "stance": "pro", "domain": "d", "subtopic": "s", "prediction": "neutral"}',
                '{"pair_id": 7, "stance": "pro", "domain": "d", "subtopic": "s", "prediction": "neutral"}',
            ],
            "pair_id '7' has 2 sample(s) with stances ['pro', 'pro'] (line(s) 1, 2)",
        ),
        (
            ['{"pair_id": "x", "stance": "pro", "domain": "d", "subtopic": "s", "prediction": "neutral"}'],
            "pair_id 'x' has 1 sample(s)",
        ),
    ],
)
def test_bad_predictions_name_the_line(tmp_path, runner, lines, message):
    path = tmp_path / "p.jsonl"
    path.write_text("\n".join(lines) + "\n")
    result = invoke(runner, "evaluate", "--predictions", str(path))
    assert result.exit_code == 2
    assert message in str(result.exception)


def test_predictions_in_other_encodings_get_a_message_and_a_bom_is_read(tmp_path, runner):
    good = [
        '{"pair_id": "a", "stance": "pro", "domain": "gender", "subtopic": "s", "prediction": "neutral"}',
        '{"pair_id": "a", "stance": "anti", "domain": "gender", "subtopic": "s", "prediction": "entailment"}',
    ]
    bom = tmp_path / "bom.jsonl"
    bom.write_bytes(b"\xef\xbb\xbf" + ("\r\n".join(good) + "\r\n").encode())
    result = invoke(runner, "evaluate", "--predictions", str(bom), "--json", str(tmp_path / "s.json"))
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "s.json").read_text())["models"]["predictions"]["overall"]["n"] == 2
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes((good[0] + "\n" + good[1].replace('"s"', '"caf\u00e9"') + "\n").encode("latin-1"))
    utf16 = tmp_path / "utf16.jsonl"
    utf16.write_bytes(("\n".join(good) + "\n").encode("utf-16"))
    column = good[1].replace('"s"', '"caf\u00e9"').index("\u00e9") + 1
    for path, where in ((latin, f"latin.jsonl:2: column {column}"), (utf16, "utf16.jsonl:1: column 1")):
        result = invoke(runner, "evaluate", "--predictions", str(path))
        assert result.exit_code == 2 and "Traceback" not in result.output
        assert where in str(result.exception) and "predictions file is not UTF-8" in str(result.exception)


def test_models_on_bbnli_templates_use_the_cache(bbnli_dir, fixture_models, tmp_path, runner, monkeypatch):
    from workbench.kinds.nli import classifier as nli

    monkeypatch.chdir(tmp_path)
    out = tmp_path / "s.json"
    args = ["evaluate", str(bbnli_dir), "--model", str(fixture_models["nli-a"]), "--json", str(out)]
    first = invoke(runner, *args)
    assert first.exit_code == 0, first.output
    data = json.loads(out.read_text())
    m = data["models"][str(fixture_models["nli-a"])]
    assert m["overall"]["n"] == 2290 and set(m["by_domain"]) == {"gender", "race", "religion"}
    assert len(m["by_subtopic"]) == 16
    assert m["overall"]["n_pairs"] * 2 + m["overall"]["n_unpaired"] == 2290
    calls = nli.CALLS["forward"]
    assert invoke(runner, *args).exit_code == 0
    assert nli.CALLS["forward"] == calls
    again = json.loads(out.read_text())
    read, computed = again["provenance"].pop("cache"), data["provenance"].pop("cache")
    assert again == data
    assert read["values_computed"] == 0 and read["values_read"] >= computed["values_computed"]


def test_two_datasets_side_by_side(bbnli_dir, fixture_models, tmp_path, runner, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "s.json"
    result = invoke(
        runner,
        "evaluate",
        str(bbnli_dir / "gender"),
        str(bbnli_dir / "race"),
        "--model",
        str(fixture_models["nli-b"]),
        "--json",
        str(out),
    )
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    # each version evaluated alone (its own JSON beside the comparison's), then side by side
    assert [v["source"] for v in data["versions"]] == [str(bbnli_dir / "gender"), str(bbnli_dir / "race")]
    assert "models" not in data  # only the rows side by side when several are compared
    for v in data["versions"]:
        alone = json.loads(Path(v["json"]).read_text())  # written where the comparison's is (the cwd)
        assert alone["dataset"]["dataset"] == v["source"]
    assert {r["model"] for r in data["rows"]} == {str(fixture_models["nli-b"])}
    assert "nli: gender vs race" in result.output  # the table side by side, the versions by their tags


def test_evaluate_errors(tmp_path, runner, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert "name the nli release or file to evaluate" in str(invoke(runner, "evaluate").exception)
    r = invoke(runner, "evaluate", "no/such@v1.0.0", "--model", "x")
    assert r.exit_code == 2 and "cannot fetch no/such@v1.0.0" in str(r.exception)
    r = invoke(runner, "evaluate", "not a spec", "--model", "x")
    assert r.exit_code == 2 and "neither a local folder" in str(r.exception)
