"""The declared evaluator's shared machinery (evaluation/declared.py, declared_report.py) on a
made-up kind whose 'model' is a fixed table of answers: figures per group by their formulas,
clusters resampled whole, the gap between groups with its interval, the table, CSV and chart,
and every bad line of a data file reported at once."""

from __future__ import annotations

import dataclasses
import json
from contextlib import contextmanager

import numpy as np
import pytest

from workbench.core.errors import InputError
from workbench.evaluation.declared import Declared, Gap, Statistic, mean, share
from workbench.evaluation.intervals import Settings
from workbench.models.roles import ModelRole


def item(record, bad):
    if record["value"] not in (0, 1):
        bad("value", f"must be 0 or 1, not {record['value']!r}")
    return None if bad.count else dict(record)


def score(models, items, options, progress):
    progress(len(items))
    return [{"hit": it["value"], "weight": 1 + (k % 3)} for k, it in enumerate(items)]


DECL = Declared(
    kind="toy",
    title="toy",
    meaning="m",
    data="data/toy.jsonl",
    required=("group", "unit", "value"),
    item=item,
    score=score,
    group="group",
    cluster="unit",
    statistics=(
        share("rate", "hit rate", "hit", scale=100.0, neutral=50.0),
        mean("weight", "mean weight", "weight"),
        Statistic("odd", "weighted hits", ("hit", "weight"), lambda h, w: h / w - 0.5),
    ),
    gaps=(Gap("gap", "largest gap", of="rate"),),
)


def toy_items(seed=0, n_units=40):
    rng = np.random.default_rng(seed)
    out = []
    for u in range(n_units):
        group = "abc"[u % 3]
        for _ in range(1 + u % 2):  # units of one or two items
            out.append(
                {"group": group, "unit": f"u{u}", "value": int(rng.random() < {"a": 0.3, "b": 0.5, "c": 0.8}[group])}
            )
    return out


def run(items, settings=Settings(0.95, 400, 0)):
    @contextmanager
    def progress(name, total):
        yield lambda n: None

    return DECL.evaluate_items(
        items, "toy.jsonl", {}, settings, lambda role, name: object(), ["m"], {}, progress, lambda line: None
    )


def test_figures_follow_their_formulas_per_group_and_overall():
    items = toy_items()
    doc, rows = run(items)
    entry = doc["models"]["m"]
    results = [{"hit": it["value"], "weight": 1 + (k % 3)} for k, it in enumerate(items)]
    for group in [None, "a", "b", "c"]:
        chosen = [(it, r) for it, r in zip(items, results) if group is None or it["group"] == group]
        node = entry["overall"] if group is None else entry["by_group"][group]
        hits, weights = sum(r["hit"] for _, r in chosen), sum(r["weight"] for _, r in chosen)
        assert node["rate"] == pytest.approx(100 * hits / len(chosen))
        assert node["weight"] == pytest.approx(weights / len(chosen))
        assert node["odd"] == pytest.approx(hits / weights - 0.5)
        assert node["n"] == len(chosen)
    rates = [entry["by_group"][g]["rate"] for g in "abc"]
    assert entry["overall"]["gap"] == pytest.approx(max(rates) - min(rates))
    assert doc["n_units"] == 40 and doc["n_items"] == len(items) and len(rows) == len(items)


def test_intervals_resample_whole_units_and_bracket_each_figure():
    doc, _ = run(toy_items())
    overall = doc["models"]["m"]["overall"]
    for key in ("rate", "weight", "odd", "gap"):
        found = overall["intervals"][key]
        assert found["lower"] < overall[key] < found["upper"], key
        assert found["n_units"] == 40
    # The same seed gives the same bounds; another seed other bounds.
    again, _ = run(toy_items())
    other, _ = run(toy_items(), Settings(0.95, 400, 1))
    assert again["models"] == doc["models"]
    assert other["models"]["m"]["overall"]["intervals"]["rate"] != overall["intervals"]["rate"]


def test_items_whose_clusters_span_groups_still_get_a_gap():
    items = toy_items()
    for it in items:
        it["unit"] = "shared"  # one cluster for everything: no interval can be drawn, the figure stands
    doc, _ = run(items)
    assert doc["models"]["m"]["overall"]["gap"] is not None
    assert doc["n_units"] == 1 and any("1" in w for w in doc["uncertainty"]["warnings"])


def test_bad_lines_are_all_reported_with_line_and_field(tmp_path):
    path = tmp_path / "toy.jsonl"
    path.write_text(
        '{"group": "a", "unit": "u", "value": 1}\n{"group": "a", "unit": "u", "value": 7}\n{"group": "a"}\nnot json\n',
        encoding="utf-8",
    )
    with pytest.raises(InputError) as caught:
        DECL.read(path)
    shown = [str(p) for p in caught.value.problems]
    assert any(":2: value: must be 0 or 1" in p for p in shown)
    assert any(":3: unit: missing" in p for p in shown) and any(":3: value: missing" in p for p in shown)
    assert any(":4:" in p and "not JSON" in p for p in shown)
    assert DECL.detect(path) and not DECL.detect(tmp_path / "nothing.jsonl")


def test_table_csv_and_chart_come_from_the_declaration(tmp_path):
    from rich.console import Console

    from workbench.evaluation.declared_report import csv_rows, plot, table

    doc, _ = run(toy_items())
    rows = csv_rows(DECL, doc)
    assert [r["group"] for r in rows] == ["all", "a", "b", "c"]
    assert rows[0]["rate_lower"] < rows[0]["rate"] < rows[0]["rate_upper"] and "gap" in rows[0]
    console = Console(record=True, width=200)
    console.print(table(DECL, doc))
    text = console.export_text()
    assert "hit rate" in text and "overall" in text and "largest gap" in text
    path = plot(DECL, json.loads(json.dumps(doc)), tmp_path)
    assert path.name == "toy.png" and path.stat().st_size > 10_000


def test_a_role_the_kind_needs_is_asked_for_before_anything_loads():
    judge = ModelRole("judge", "--judge", "scores texts")
    needs = Declared(
        kind="toy",
        title="toy",
        meaning="m",
        data="d.jsonl",
        required=("group",),
        item=item,
        score=score,
        group="group",
        statistics=DECL.statistics,
        roles=(*DECL.roles, judge),
    )
    with pytest.raises(InputError, match="needs --judge MODEL"):
        needs.check_roles(["m"], {"judge": None})
    with pytest.raises(InputError, match="no model"):
        needs.check_roles([], {"judge": "j"})
    with pytest.raises(ValueError):
        ModelRole("x", "-x", "bad flag")


def test_hooks_read_count_note_and_describe_beside_the_statistics(tmp_path):
    """A kind's own loader (its notes printed, its document fields in the head, --strict handed to
    it), its own per-group fields beside the statistics (in the JSON and CSV, none replacing a
    statistic), per-model fields and notes, items without a verdict counted (a group of ties gets a
    warning, no interval), and a progress total that depends on the model."""
    from rich.console import Console

    from workbench.evaluation.declared import Loaded
    from workbench.evaluation.declared_report import csv_rows, table

    seen = {}

    def load(spec, options):
        seen["strict"] = options["strict"]
        return Loaded(toy_items(), f"read {spec}", ["read as toy"], {"skipped": {"items": 2}})

    def work(items, options, models):
        seen["work"] = models.model
        return 2 * len(items)

    hooked = dataclasses.replace(
        DECL,
        load=load,
        recognise=lambda path: path.suffix == ".toy",
        work=work,
        fields=lambda level, items, results: {"rate": -1.0, "ties": sum(1 - r["hit"] for r in results), "nested": {}},
        shown=("ties",),
        compared_fields=("ties",),
        informative=lambda item, result: result["hit"],
        uninformative="it says nothing",
        document_fields=lambda options: {"unit": "percent"},
        about=lambda name, models, items, results, options: ({"score_rule": "mine"}, [f"{name}: noted"]),
        summary=lambda doc: ["a summary line"],
    )
    source = hooked.read_source("spec", {"strict": True}, lambda: pytest.fail("the kind reads its own sources"))
    assert seen["strict"] is True and source.notes == ["read as toy"] and source.label == "read spec"
    assert hooked.detect(tmp_path / "x.toy") and not hooked.detect(tmp_path / "x.jsonl")

    said = []
    for it in source.items:  # group c: nothing but ties
        it["value"] = int(it["group"] != "c")

    @contextmanager
    def progress(name, total):
        seen["total"] = total
        yield lambda n: None

    doc, _ = hooked.evaluate_items(
        source.items,
        source.label,
        {},
        Settings(0.95, 200, 0),
        lambda role, name: "model",
        ["m"],
        {},
        progress,
        said.append,
        source.document,
    )
    entry = doc["models"]["m"]
    assert seen["work"] == "model" and seen["total"] == 2 * len(source.items)
    assert doc["unit"] == "percent" and doc["skipped"] == {"items": 2} and entry["score_rule"] == "mine"
    assert entry["overall"]["rate"] == -1.0 and entry["by_group"]["c"]["ties"] == entry["by_group"]["c"]["n"]
    assert "m: noted" in said and any("c: all" in w and "it says nothing" in w for w in doc["uncertainty"]["warnings"])
    assert "intervals" not in entry["by_group"]["c"] or entry["by_group"]["c"]["intervals"]["rate"]["lower"] is None
    rows = csv_rows(hooked, doc)
    assert rows[0]["ties"] == entry["overall"]["ties"] and "nested" not in rows[0]
    console = Console(record=True, width=250)
    console.print(table(hooked, doc))
    assert "ties" in console.export_text()
    assert hooked.summary(doc) == ["a summary line"]


def test_items_without_a_figure_options_without_intervals_and_several_rows_per_item():
    """`resampled`: items that carry no figure are counted but neither measured nor resampled (a
    group of only such items gets no interval); `no_intervals`: options that allow none say why;
    `items_file`: a model's rows of the items file, several per item."""
    items = toy_items()
    for it in items:
        it["none"] = it["group"] == "c" or it["unit"] in ("u0", "u1")  # group c: nothing but such items
    hooked = dataclasses.replace(
        DECL,
        gaps=(),
        resampled=lambda item, result: not item["none"],
        no_intervals=lambda options: "no intervals: asked so" if options.get("off") else "",
        items_file=lambda items, results: [{"unit": it["unit"], "copy": c} for it in items for c in (1, 2)],
    )

    @contextmanager
    def progress(name, total):
        yield lambda n: None

    def evaluate(chosen, options):
        return hooked.evaluate_items(
            chosen, "toy", options, Settings(0.95, 400, 0), lambda role, name: 0, ["m"], {}, progress, print
        )

    doc, rows = evaluate(items, {})
    entry = doc["models"]["m"]
    kept = [it for it in items if not it["none"]]
    plain, _ = run(kept)  # the same figures and intervals as without those items at all
    assert entry["overall"]["intervals"]["rate"] == plain["models"]["m"]["overall"]["intervals"]["rate"]
    assert entry["by_group"]["a"]["rate"] == plain["models"]["m"]["by_group"]["a"]["rate"]
    assert entry["overall"]["n"] == len(items) and entry["by_group"]["c"]["rate"] is None
    assert "intervals" not in entry["by_group"]["c"] and not any("/ c" in w for w in doc["uncertainty"]["warnings"])
    assert len(rows) == 2 * len(items) and rows[0] == {"model": "m", "unit": "u0", "copy": 1}

    assert hooked.evaluate_items(
        items, "toy", {}, Settings(0.95, 400, 0), lambda role, name: 0, ["m"], {}, progress, print, keep_rows=False
    ) == (doc, [])  # no rows made where nothing writes them
    off, _ = evaluate(items, {"off": True})
    assert off["uncertainty"]["warnings"] == ["no intervals: asked so"] and off["uncertainty"]["resamples"] == 0
    assert "intervals" not in off["models"]["m"]["overall"] and off["models"]["m"]["overall"]["rate"] is not None


def test_version_comparison_names_a_dropped_row_as_the_declaration_does():
    from workbench.evaluation.declared_report import DeclaredEvaluator

    assert DeclaredEvaluator(DECL).COMPARED.unit == DECL.unit
    assert DeclaredEvaluator(dataclasses.replace(DECL, row_name="row")).COMPARED.unit == "row"


def test_kept_variants_and_levels_in_order_of_name():
    """`kept`: the items a model's figures rest on (an unanswered one left out, what remains put in
    other units); `variants`: a figure redrawn one unit per cluster, under uncertainty.variants;
    `Level.by_name`: a level's groups measured (and warned about) in order of name."""
    from workbench.evaluation.declared import Level
    from workbench.evaluation.intervals import measure_of_ratio

    items = toy_items()
    for k, it in enumerate(items):
        it["sub"] = "zyx"[k % 3]

    def kept(items, results):
        pairs = [(it, r) for it, r in zip(items, results) if it["unit"] not in ("u0", "u1")]
        return [{**it, "unit": f"own {it['unit']}"} for it, _ in pairs], [r for _, r in pairs]

    def variants(items, results):
        hits = [r["hit"] for r in results]
        return measure_of_ratio(hits, None, 100.0, 50.0), [it["group"] for it in items], "rate"

    hooked = dataclasses.replace(
        DECL, kept=kept, variants=variants, levels=(Level("sub", "sub", by_name=True),), gaps=()
    )

    @contextmanager
    def progress(name, total):
        yield lambda n: None

    said = []
    doc, rows = hooked.evaluate_items(
        items, "toy", {}, Settings(0.95, 200, 0), lambda role, name: 0, ["m"], {}, progress, said.append
    )
    entry = doc["models"]["m"]
    left = [it for it in items if it["unit"] not in ("u0", "u1")]
    assert entry["overall"]["n"] == len(left) and len(rows) == len(items)  # the items file keeps every item
    assert entry["overall"]["intervals"]["rate"]["n_units"] == len({it["unit"] for it in left})
    found = doc["uncertainty"]["variants"]["m"]
    assert found["clusters"] == 3 and found["variants"] == len(left) and found["lower"] <= found["upper"]
    assert said[-1] == found["sentence"] and found["sentence"].startswith("rate (m): keeping one variant")
    assert list(entry["by_sub"]) == ["x", "y", "z"]
    small = [w for w in doc["uncertainty"]["warnings"] if "by_sub" in w]
    assert [w.split("by_sub / ")[1][0] for w in small] == sorted(w.split("by_sub / ")[1][0] for w in small)


def test_a_kind_opens_its_own_models_answers_some_requests_itself_and_describes_its_script(tmp_path):
    """`open_model` in place of the shared loaders (with how workbench runs it), `own` for requests
    the declaration does not cover (None: the declaration runs), `many_sources` for several
    sources side by side, `script` for what a release's script says and installs."""
    from types import SimpleNamespace

    from rich.console import Console

    from workbench.evaluation.declared_report import DeclaredEvaluator
    from workbench.release.runtime.declared import DeclaredStandalone

    data = tmp_path / "toy.jsonl"
    data.write_text("".join(json.dumps(it) + "\n" for it in toy_items()), encoding="utf-8")
    opened, asked = [], []

    def own(request, console):
        asked.append(len(request.sources))
        return {"own": True} if len(request.sources) > 1 else None

    hooked = dataclasses.replace(
        DECL,
        load=lambda spec, options: dataclasses.replace(
            DECL.read_source(spec, options, lambda: (data, "toy")), label="toy"
        ),
        open_model=lambda role, name, how: opened.append((role.name, name, how["cache_path"], how["config"])) or name,
        own=own,
        many_sources=True,
        script={"REQUIREMENTS": "torch transformers numpy pyarrow"},
    )
    evaluator = DeclaredEvaluator(hooked)
    assert evaluator.MANY_SOURCES is True
    request = SimpleNamespace(
        sources=["a", "b"], predictions=None, predictions_out=None, models=["m"], options={}, score_rule=None
    )
    assert evaluator.evaluate(request, Console()) == {"own": True} and asked == [2]
    request = SimpleNamespace(
        sources=[str(data)],
        predictions=None,
        predictions_out=None,
        models=["m"],
        options={},
        score_rule=None,
        strict=False,
        root=None,
        spec=None,
        runtimes={},
        cache_path=tmp_path / "cache.sqlite",
        config="the project's",
        intervals=Settings(0.95, 0, 0),
        json_out=None,
        csv_out=None,
        plots=None,
        items_out=None,
        annotations=lambda: {},
    )
    doc = evaluator.evaluate(request, Console(record=True, width=200))
    assert asked == [2, 1] and doc["models"]["m"]["overall"]["n"] == len(toy_items())
    assert opened == [("model", "m", tmp_path / "cache.sqlite", "the project's")]
    assert DeclaredStandalone(hooked).REQUIREMENTS == "torch transformers numpy pyarrow"


def test_statistics_from_the_options_a_check_first_a_provenance_and_items_without_a_group():
    """`statistics_for` gives the figures the options and the data call for (one per cut-off asked
    for), `check` refuses a bad value before anything is read (in a release's script too, as one
    line), `provenance` adds to a release's provenance, and an item whose group is None counts
    overall only."""
    from types import SimpleNamespace

    from workbench.core.evaluator_option import EvaluatorOption
    from workbench.release.runtime.declared import DeclaredStandalone

    def cuts(options, items):
        return tuple(
            share(f"at{c}", f"hits at {c}", lambda it, r, c=c: float(r["hit"] and it["value"] <= c))
            for c in options["cuts"]
        )

    def check(options):
        if min(options["cuts"]) < 0:
            raise InputError(f"--cuts must be at least 0 (got {min(options['cuts'])})")

    hooked = dataclasses.replace(
        DECL,
        statistics_for=cuts,
        check=check,
        provenance=lambda options: {"cuts": list(options["cuts"])},
        options=(
            EvaluatorOption(
                "--cuts",
                "cut-offs",
                type=lambda t: [int(c) for c in t.split(",")],
                default=[1],
                required=True,
                metavar="C",
            ),
        ),
        gaps=(),
    )
    items = toy_items()
    items[0]["group"] = None  # in no group: overall only
    given = hooked.given({"cuts": [0, 1]}, items)
    assert [s.key for s in given.statistics] == ["at0", "at1"]
    assert dataclasses.replace(hooked, statistics_for=None).given({"cuts": [0]}, items).statistics == DECL.statistics

    @contextmanager
    def progress(name, total):
        yield lambda n: None

    doc, _ = given.evaluate_items(
        items, "toy", {"cuts": [0, 1]}, Settings(0.95, 200, 0), lambda r, n: object(), ["m"], {}, progress, print
    )
    entry = doc["models"]["m"]
    assert set(entry["overall"]["intervals"]) == {"at0", "at1"} and entry["overall"]["n"] == len(items)
    assert (
        set(entry["by_group"]) == {"a", "b", "c"} and sum(g["n"] for g in entry["by_group"].values()) == len(items) - 1
    )
    assert entry["overall"]["at0"] == 0.0
    assert entry["overall"]["at1"] == pytest.approx(sum(it["value"] for it in items) / len(items))

    alone = DeclaredStandalone(hooked)
    assert alone.check_options(SimpleNamespace(cuts=[2, -1])) == "--cuts must be at least 0 (got -1)"
    assert alone.check_options(SimpleNamespace(cuts=[2])) is None
    assert alone.provenance(SimpleNamespace(cuts=[2])) == {"cuts": [2]}
    assert alone.COMMAND == "python evaluate.py --model MODEL --cuts C --json scores.json"  # a required option
    assert DeclaredStandalone(DECL).provenance(SimpleNamespace()) == {}


def test_places_cell_formulas_version_measures_and_scores_read_from_a_file(tmp_path):
    """`places`/`place_columns`: groups nested in the entry (a part within its section), warned about
    by their path, named by their own CSV columns; a statistic in cells with a formula combines each
    column pair's mean over cells; `versions`/`changed`/`without_removed` reach version comparison;
    `read_scores` takes a `ScoresFile`'s results in place of scoring, `scored` sees each model's."""
    from types import SimpleNamespace

    from rich.console import Console

    from workbench.evaluation.declared import ONE, ScoresFile
    from workbench.evaluation.declared_report import DeclaredEvaluator, csv_rows, scores_path, table

    items = toy_items()
    for k, it in enumerate(items):
        it["part"] = "xy"[k % 2]

    def places(items):
        out = []
        for section in sorted({it["group"] for it in items}):
            keep = [k for k, it in enumerate(items) if it["group"] == section]
            out.append(((section, "overall"), keep))
            for part in sorted({items[k]["part"] for k in keep}):
                out.append(((section, "by_part", part), [k for k in keep if items[k]["part"] == part]))
        return out

    def removed(source, ids, folder):
        return None

    file_results = [{"hit": 1 - it["value"], "weight": 2.0} for it in items]
    hooked = dataclasses.replace(
        DECL,
        gaps=(),
        statistics=(
            *DECL.statistics,
            Statistic("spread", "spread", ("hit", ONE, "weight", ONE), lambda h, w: w - h, cells="part"),
        ),
        places=places,
        place_columns=lambda path: {"section": path[0], "part": path[-1] if len(path) == 3 else "all"},
        versions=("rate", "n"),
        changed=("weight",),
        without_removed=removed,
        read_scores=lambda path, items: [dict(r, path=str(path)) for r in file_results],
    )
    seen = {}

    @contextmanager
    def progress(name, total):
        yield lambda n: None

    doc, rows = hooked.evaluate_items(
        items,
        "toy",
        {},
        Settings(0.95, 200, 0),
        lambda role, name: ScoresFile(tmp_path / name) if name == "file" else 0,
        ["m", "file"],
        {},
        progress,
        lambda line: None,
        scored=lambda name, chosen, results: seen.setdefault(name, results),
    )
    entry = doc["models"]["m"]
    assert list(entry)[-3:] == ["a", "b", "c"] and set(entry["a"]) == {"overall", "by_part"}
    part = [it for it in items if it["group"] == "a" and it["part"] == "x"]
    assert entry["a"]["by_part"]["x"]["n"] == len(part)
    assert entry["a"]["overall"]["n"] == sum(it["group"] == "a" for it in items)
    assert "intervals" in entry["a"]["by_part"]["x"]  # the scope found its node by the path
    assert any("m: c / by_part / x:" in w for w in doc["uncertainty"]["warnings"])  # 9 items: no verdict
    results = [{"hit": it["value"], "weight": 1 + (k % 3)} for k, it in enumerate(items)]
    means = {}
    for key in ("hit", "weight"):
        per = [[r[key] for it, r in zip(items, results) if it["part"] == p] for p in "xy"]
        means[key] = sum(sum(v) / len(v) for v in per) / 2
    assert entry["overall"]["spread"] == pytest.approx(means["weight"] - means["hit"])
    assert seen["file"][0]["path"] == str(tmp_path / "file") and seen["m"][0] == results[0]
    assert doc["models"]["file"]["overall"]["rate"] == pytest.approx(
        100 * sum(r["hit"] for r in file_results) / len(items)
    )

    found = csv_rows(hooked, doc)
    assert [(r["section"], r["part"]) for r in found[:4]] == [("overall", "all"), ("a", "all"), ("a", "x"), ("a", "y")]
    assert "level" not in found[0] and found[2]["n"] == len(part)
    console = Console(record=True, width=250)
    console.print(table(hooked, doc))
    assert "a / x" in console.export_text()
    evaluator = DeclaredEvaluator(hooked)
    assert evaluator.COMPARED.keys == ("model", "section", "part") and evaluator.COMPARED.measures == ("rate", "n")
    assert evaluator.COMPARED.changed == ("weight",) and evaluator.without_removed is removed
    assert scores_path(tmp_path / "s.json", "org/m", ["org/m", "org/n"]).name == "s.m.json"

    request = SimpleNamespace(
        sources=["x"], predictions=tmp_path / "p.json", predictions_out=None, models=["m"], options={}, score_rule=None
    )
    with pytest.raises(InputError, match="either --model or --predictions"):
        evaluator.evaluate(request, Console())
    request.predictions, request.predictions_out = None, tmp_path / "out.json"
    with pytest.raises(InputError, match="not used"):  # a kind that writes no scores refuses the option
        DeclaredEvaluator(DECL).evaluate(request, Console())
