"""Per-sentence log-likelihoods in place of a model (evaluation/likelihoods.py), for CrowS-Pairs and
SOS: a real model's --predictions-out read back with --predictions gives the same figures, a file
that does not fit its data is refused in one line naming the file, line and what, and the file's
sha256 is recorded."""

from __future__ import annotations

import json
import math

import pytest
from conftest import invoke

from workbench.core.ids import file_sha256

# kind -> (the data file of its release, the level its groups are under, a masked and a causal LM)
KINDS = {
    "crows-pairs": ("data/pairs.csv", "by_bias_type", ("mlm-bert", "clm-gpt2")),
    "sos": ("data/sos.csv", "by_attribute", ("mlm-roberta", "clm-gpt2")),
    "sofa": ("data/probes.csv", "by_category", ("mlm-bert", "clm-gpt2")),
}
# where an entry's figures are (SOFA's per stereotype and identity too)
FIGURES = ("overall", "by_bias_type", "by_attribute", "by_identity", "by_category", "by_stereotype", "highest_dds")


def _evaluate(runner, *args):
    return invoke(runner, "evaluate", *args)


def _figures(entry: dict) -> dict:
    return {k: v for k, v in entry.items() if k in FIGURES}


@pytest.fixture(scope="module")
def written(releases, fixture_models, tmp_path_factory):
    """kind -> (release, {model name: its --predictions-out file}, the run's JSON), both LMs run once."""
    from typer.testing import CliRunner

    out = {}
    for kind, (_, _, names) in KINDS.items():
        release, folder = releases(kind), tmp_path_factory.mktemp(kind.replace("-", "_") + "_ll")
        models = [str(fixture_models[n]) for n in names]
        with pytest.MonkeyPatch.context() as mp:
            mp.chdir(folder)
            result = _evaluate(
                CliRunner(),
                str(release),
                *(a for m in models for a in ("--model", m)),
                "--predictions-out",
                "ll.jsonl",
                "--json",
                "run.json",
                "--cache",
                "cache.sqlite",
            )
            assert result.exit_code == 0, result.output
        doc = json.loads((folder / "run.json").read_text(encoding="utf-8"))
        files = sorted(folder.glob("ll.*.jsonl"))
        assert len(files) == 2, files  # one file per model
        out[kind] = (
            release,
            folder,
            doc,
            {m: next(f for f in files if f.stem.endswith(n)) for m, n in zip(models, names)},
        )
    return out


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_predictions_out_read_back_gives_the_same_figures(kind, written, runner, tmp_path, monkeypatch):
    release, folder, run, files = written[kind]
    monkeypatch.chdir(tmp_path)
    given = [a for model, path in files.items() for a in ("--predictions", f"{model}={path}")]
    result = _evaluate(runner, str(release), *given, "--json", "read.json")
    assert result.exit_code == 0, result.output
    read = json.loads((tmp_path / "read.json").read_text(encoding="utf-8"))
    level = KINDS[kind][1]
    assert list(read["models"]) == list(run["models"]) and "no model ran" in result.output
    for model, path in files.items():
        mine, again = run["models"][model], read["models"][model]
        assert _figures(again) == _figures(mine)  # to the last bit, every group's figures and counts
        assert again[level] and again["overall"]["n"] == mine["overall"]["n"] > 0
        assert again["predictions"]["sha256"] == file_sha256(path) and again["predictions"]["file"] == path.name
        assert read["provenance"]["prediction_files"][model]["sha256"] == file_sha256(path)
    # intervals (in each group's figures) and the paired comparison of the two models: the same resamples
    assert read["uncertainty"]["comparisons"] == run["uncertainty"]["comparisons"]
    assert mine["overall"]["intervals"] and read["uncertainty"]["comparisons"]
    # one record per sentence (two per pair; SOFA: each identity's own text, then each probe, with
    # its token count), each a finite log-likelihood at most 0
    records = [json.loads(line) for line in next(iter(files.values())).read_text(encoding="utf-8").splitlines()]
    assert all(math.isfinite(r["log_likelihood"]) and r["log_likelihood"] <= 0 for r in records)
    if kind == "sofa":
        identities = run["dataset"]["n_identities"]
        assert len(records) == run["dataset"]["n_probes"] + identities
        assert all(r["id"] is None for r in records[:identities]) and None not in [
            r["id"] for r in records[identities:]
        ]
        assert all(isinstance(r["tokens"], int) and r["tokens"] >= 1 for r in records)
    else:
        assert len(records) == 2 * run["n_pairs"] and set(records[0]) == {"id", "sentence", "log_likelihood"}


def _records(written, kind) -> list[dict]:
    path = next(iter(written[kind][3].values()))
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _bad(records: list[dict], change) -> str:
    records = [dict(r) for r in records]
    change(records)
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records)


CASES = {  # what is wrong -> (how the file is changed, the line named, what the message says)
    "unknown id": (lambda r: r[2].update(id=10_000), 3, "id 10000 is no pair of the data"),
    "another text": (lambda r: r[1].update(sentence=r[1]["sentence"] + " "), 2, "is not one of pair"),
    "NaN": (lambda r: r.__setitem__(0, json.dumps(r[0]).replace(str(r[0]["log_likelihood"]), "NaN")), 1, "finite"),
    "positive": (lambda r: r[3].update(log_likelihood=0.5), 4, "0.5 is positive"),
    "a string": (lambda r: r[3].update(log_likelihood="-3.2"), 4, "must be a finite number"),
    "duplicate": (lambda r: r.append(dict(r[0])), None, "a second log_likelihood for pair"),
    "duplicate later": (lambda r: r.append(dict(r[2])), None, "(the first on line 3)"),
    "not UTF-8": (lambda r: r.__setitem__(3, json.dumps(r[3]).replace('"id"', '"\udcff"')), 4, "not UTF-8 text"),
    "missing": (lambda r: r.pop(5), None, "no log_likelihood for pair"),
    "no field": (lambda r: r[0].pop("sentence"), 1, "missing sentence"),
    "not JSON": (lambda r: r.__setitem__(1, "{not json"), 2, "not JSON"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_file_that_does_not_fit_is_refused_in_one_line(case, written, runner, tmp_path, monkeypatch):
    change, line, says = CASES[case]
    records = _records(written, "crows-pairs")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.jsonl").write_text(_bad(records, change), encoding="utf-8", errors="surrogateescape")
    result = _evaluate(runner, str(written["crows-pairs"][0]), "--predictions", "m.jsonl", "--json", "s.json")
    assert result.exit_code == 2, result.output
    message = str(result.exception)
    assert "\n" not in message and says in message and "Traceback" not in result.output
    if case.startswith("duplicate"):
        line = len(records) + 1
    assert message.startswith(f"m.jsonl:{line}: " if line else "m.jsonl"), message
    if case == "missing":
        assert repr(records[5]["sentence"]) in message
    assert not (tmp_path / "s.json").exists()


def test_sos_reads_its_own_sentences_not_a_crows_file(written, runner, tmp_path, monkeypatch):
    """The id is a row of the kind's data and the text must be that row's: CrowS-Pairs' file does not fit SOS."""
    monkeypatch.chdir(tmp_path)
    crows = next(iter(written["crows-pairs"][3].values()))
    result = _evaluate(runner, str(written["sos"][0]), "--predictions", str(crows))
    assert result.exit_code == 2 and "is not one of pair 1's" in str(result.exception), result.output


SOFA_CASES = {  # what is wrong in a SOFA file -> (how it is changed, the line named, what the message says)
    "no tokens": (lambda r: r[0].pop("tokens"), 1, "missing tokens"),
    "zero tokens": (lambda r: r[-1].update(tokens=0), -1, "tokens must be a whole number of at least 1"),
    "unknown identity": (lambda r: r[0].update(sentence="nobody"), 1, "'nobody' is no identity of the data"),
    "unknown id": (lambda r: r[-1].update(id="no-such-id"), -1, 'id "no-such-id" is no stereotype of the data'),
    "another text": (lambda r: r[-1].update(sentence=r[-1]["sentence"] + "!"), -1, "is not a probe of stereotype"),
    "duplicate": (lambda r: r.append(dict(r[-1])), -1, "a second log_likelihood for stereotype"),
    "missing probe": (lambda r: r.pop(), None, "'s probe"),
    "missing identity": (lambda r: r.pop(0), None, "no log_likelihood for identity"),
}


@pytest.mark.parametrize("case", sorted(SOFA_CASES))
def test_a_sofa_file_that_does_not_fit_is_refused_in_one_line(case, written, runner, tmp_path, monkeypatch):
    change, line, says = SOFA_CASES[case]
    records = _records(written, "sofa")
    text = _bad(records, change)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.jsonl").write_text(text, encoding="utf-8")
    result = _evaluate(runner, str(written["sofa"][0]), "--predictions", "m.jsonl", "--json", "s.json")
    assert result.exit_code == 2, result.output
    message = str(result.exception)
    assert "\n" not in message and says in message and "Traceback" not in result.output, message
    if line is not None:
        assert message.startswith(f"m.jsonl:{len(text.splitlines()) if line == -1 else line}: "), message
    else:
        assert message.startswith("m.jsonl: no log_likelihood for "), message
    assert not (tmp_path / "s.json").exists()


def test_predictions_with_a_model_or_without_data_are_refused(written, fixture_models, runner, tmp_path, monkeypatch):
    release, _, _, files = written["crows-pairs"]
    path = next(iter(files.values()))
    monkeypatch.chdir(tmp_path)
    both = _evaluate(runner, str(release), "--predictions", str(path), "--model", str(fixture_models["clm-gpt2"]))
    assert both.exit_code == 2 and "either --model or --predictions" in str(both.exception)
    alone = _evaluate(runner, "--kind", "crows-pairs", "--predictions", str(path))
    assert alone.exit_code == 2 and "name it too" in str(alone.exception), alone.output


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_standalone_reads_the_file_as_workbench_evaluate_does(kind, written, tmp_path, monkeypatch):
    """A release's evaluate.py takes --predictions in place of --model; its JSON equals workbench's."""
    from test_standalone_evaluator import without_tool_fields
    from test_standalone_lm_kinds import alone_and_workbench

    release, _, run, files = written[kind]
    given = [a for model, path in files.items() for a in ("--predictions", f"{model}={path}")]
    alone, workbench_doc, ran = alone_and_workbench(release, given, tmp_path, monkeypatch)
    assert without_tool_fields(alone) == without_tool_fields(workbench_doc)  # exactly: no model ran in either
    for model, path in files.items():
        assert _figures(alone["models"][model]) == _figures(run["models"][model])
        assert alone["provenance"]["prediction_files"][model]["sha256"] == file_sha256(path)
    assert "no model ran" in ran.stdout and "Traceback" not in ran.stderr


def test_standalone_needs_a_model_or_predictions_and_refuses_a_bad_file(written, tmp_path):
    from test_standalone_evaluator import run_standalone

    release, _, _, files = written["crows-pairs"]
    script = release / "evaluate.py"
    ran = run_standalone(script, ["--json", "s.json"], cwd=tmp_path)
    assert ran.returncode == 2 and "one of --model or --predictions is required" in ran.stderr, ran.stderr
    (tmp_path / "m.jsonl").write_text(_bad(_records(written, "crows-pairs"), CASES["positive"][0]), encoding="utf-8")
    ran = run_standalone(script, ["--predictions", "m.jsonl", "--json", "s.json"], cwd=tmp_path)
    assert ran.returncode == 2 and "Traceback" not in ran.stderr, ran.stderr[-3000:]
    assert "evaluate.py: error: m.jsonl:4: log_likelihood 0.5 is positive" in ran.stderr
    assert not (tmp_path / "s.json").exists()
