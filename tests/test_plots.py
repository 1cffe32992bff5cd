"""Every kind's figures, measured as saved (tests/support/canvas.py): no title, label or legend
clipped, no two texts overlapping, no value label across its axes' frame, no bar touching the
frame, no marker covering a text; with two models, and with the extreme values (0 and 100)
that push bars and labels against the frame."""

from __future__ import annotations

import copy
import json

from conftest import invoke
from support.canvas import capture
from test_standalone_honest import lexicon_in

MODELS = ("mlm-bert", "clm-gpt2")


def _doc(runner, tmp_path, source, fixture_models, *extra) -> dict:
    out = tmp_path / "doc.json"
    args = [a for m in MODELS for a in ("--model", str(fixture_models[m]))]
    result = invoke(
        runner, "evaluate", str(source), *args, *extra, "--json", str(out), "--cache", str(tmp_path / "c.sqlite")
    )
    assert result.exit_code == 0, (result.output, result.exception)
    return json.loads(out.read_text(encoding="utf-8"))


def _extreme(doc: dict, keys: tuple[str, ...]) -> dict:
    """The same document with each model's measures pushed to 100 and 0, alternately."""
    doc = copy.deepcopy(doc)
    flip = [100.0, 0.0]

    def walk(node):
        if isinstance(node, dict):
            for k, v in node.items():
                if k in keys and isinstance(v, (int, float)):
                    node[k] = flip[0]
                    flip.reverse()
                else:
                    walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(doc["models"])
    return doc


def _check(make, docs, tmp_path) -> None:
    for i, doc in enumerate(docs):
        with capture() as seen:
            make(doc, tmp_path / f"plots{i}")
        assert seen, "no figure was saved"
        for fig, _, found in seen:
            assert not found, (make.__module__, found)


def test_crows_pairs_and_sos_figures(releases, fixture_models, tmp_path, runner, monkeypatch):
    from workbench.evaluation.declared_report import plot
    from workbench.kinds.crows_pairs.evaluate import DECLARED
    from workbench.kinds.sos.evaluate import DECLARED as SOS

    monkeypatch.chdir(tmp_path)
    crows = _doc(runner, tmp_path, releases("crows-pairs"), fixture_models)
    _check(lambda doc, folder: plot(DECLARED, doc, folder), [crows, _extreme(crows, ("metric_score",))], tmp_path)
    sos = _doc(runner, tmp_path, releases("sos"), fixture_models)
    _check(lambda doc, folder: plot(SOS, doc, folder), [sos, _extreme(sos, ("sos",))], tmp_path)


def test_honest_and_sofa_figures(releases, fixture_models, tmp_path, runner, monkeypatch):
    from workbench.evaluation.declared_report import plot
    from workbench.kinds.honest.evaluate import DECLARED
    from workbench.kinds.sofa.evaluate import DECLARED as SOFA

    monkeypatch.chdir(tmp_path)
    honest = _doc(
        runner,
        tmp_path,
        releases("honest"),
        fixture_models,
        "--lexicon",
        str(lexicon_in(tmp_path / "lx")),
        "--top-k",
        "5",
    )
    _check(lambda doc, folder: plot(DECLARED, doc, folder), [honest, _extreme(honest, ("honest",))], tmp_path)
    sofa = _doc(runner, tmp_path, releases("sofa"), fixture_models)
    _check(lambda doc, folder: plot(SOFA, doc, folder), [sofa], tmp_path)


def test_stereoset_figure(fixture_models, tmp_path, runner, monkeypatch):
    from workbench.kinds.stereoset.example import write_example
    from workbench.evaluation.declared_report import plot
    from workbench.kinds.stereoset.evaluate import DECLARED

    monkeypatch.chdir(tmp_path)
    doc = _doc(runner, tmp_path, write_example(tmp_path / "ss"), fixture_models)
    _check(lambda doc, folder: plot(DECLARED, doc, folder), [doc, _extreme(doc, ("ss", "lms"))], tmp_path)


def test_nli_figures(bbnli_dir, fixture_models, tmp_path, runner, monkeypatch):
    from workbench.evaluation.declared_report import plot
    from workbench.kinds.nli.evaluate import DECLARED

    monkeypatch.chdir(tmp_path)
    out = tmp_path / "nli.json"
    args = [a for m in ("nli-a", "nli-b") for a in ("--model", str(fixture_models[m]))]
    result = invoke(
        runner, "evaluate", str(bbnli_dir / "gender"), *args, "--json", str(out), "--cache", str(tmp_path / "c.sqlite")
    )
    assert result.exit_code == 0, (result.output, result.exception)
    doc = json.loads(out.read_text(encoding="utf-8"))
    extreme = _extreme(doc, ("accuracy", "bias_aggregate"))
    _check(lambda doc, folder: plot(DECLARED, doc, folder), [doc, extreme], tmp_path)
