"""Charts say what they show: the data set and models in the title, counts and ties on the
bars, and a note when an earlier chart is replaced."""

import json

import pytest

from conftest import invoke


def _titles(fig) -> str:
    parts = [fig._suptitle.get_text() if fig._suptitle else ""]
    for ax in fig.axes:
        parts += [ax.get_title(), *(t.get_text() for t in ax.texts), *(t.get_text() for t in ax.get_xticklabels())]
    return " ".join(" ".join(parts).split())


@pytest.mark.parametrize(
    "kind, example", [("crows-pairs", "workbench.kinds.crows_pairs.example"), ("sofa", "workbench.kinds.sofa.example")]
)
def test_a_chart_names_its_data_set_and_model_and_a_replaced_file_is_said(
    kind, example, fixture_models, tmp_path, monkeypatch, runner
):
    import importlib

    from workbench.evaluation import output

    seen = []
    real = output.save_chart

    def capture(fig, path, **kwargs):
        seen.append(_titles(fig))
        return real(fig, path, **kwargs)

    monkeypatch.setattr(output, "save_chart", capture)
    monkeypatch.setattr(
        importlib.import_module("workbench.evaluation.declared_report"),
        "save_chart",
        capture,
    )
    monkeypatch.chdir(tmp_path)
    data = importlib.import_module(example).write_example(tmp_path / "data")
    model = str(fixture_models["mlm-bert"])
    args = [
        "evaluate",
        str(data),
        "--kind",
        kind,
        "--model",
        model,
        "--plots",
        "plots",
        "--json",
        "out.json",
        "--cache",
        "c.sqlite",
    ]
    assert invoke(runner, *args).exit_code == 0
    assert seen and all("data/" in t and "mlm-bert" in t for t in seen), seen
    if kind == "crows-pairs":
        doc = json.loads((tmp_path / "out.json").read_text())
        overall = next(iter(doc["models"].values()))["overall"]
        assert f"(n={overall['n']})" in seen[0]
        assert (f"{overall['neutral']} tied" in seen[0]) == bool(overall["neutral"])
    again = invoke(runner, *args)
    assert again.exit_code == 0
    said = again.output  # stdout and stderr, as the user sees them
    assert said.count("note: replacing plots/") == len(seen) // 2, said


def test_chart_caption_reads_each_kind_s_way_of_naming_its_data():
    from workbench.evaluation.output import chart_caption

    assert chart_caption({"dataset": "pairs.csv", "models": {"org/m1": {}, "m2": {}}}) == "pairs.csv · m1, m2"
    assert chart_caption({"dataset": {"source": "probes.csv"}, "models": {"m": {}}}) == "probes.csv · m"
    assert chart_caption({"source": "org/x", "version": "1.1.0", "models": {}}) == "org/x (version 1.1.0)"
    assert chart_caption({"source": "org/x@v1.1.0", "version": "1.1.0", "models": {}}) == "org/x@v1.1.0"
