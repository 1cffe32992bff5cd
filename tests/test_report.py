"""`workbench report`: result files of real runs (NLI predictions, CrowS-Pairs and HONEST scored by
the fixture models, a comparison of two versions) as one static page. Every model's row is
there, nothing is loaded from the network, every string is escaped and no path of this machine
shows; a file that is not a result is refused in one line before anything is written. The page
is opened in headless Chromium (`make test` installs it): its tables sort and it fits a phone."""

from __future__ import annotations

import html
import json
import random
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from conftest import invoke
from support.browser import Browser, chromium
from typer.testing import CliRunner

# A model name as a user may give it: markup, quotes and an ampersand, to be shown as text.
HOSTILE = "<img src=x onerror=alert(1)>&\"quoted\" 'm'"


def evaluate(*args) -> None:
    result = invoke(CliRunner(), "evaluate", *map(str, args))
    assert result.exit_code == 0, result.output


def report(*args):
    return invoke(CliRunner(), "report", *map(str, args))


@pytest.fixture(scope="session")
def results(tmp_path_factory, fixture_models) -> dict[str, Path]:
    """name -> a result JSON of a real run: NLI from a predictions file (three models, one named
    HOSTILE), CrowS-Pairs and HONEST scored by two fixture models each, and CrowS-Pairs compared
    on two versions of its file (the comparison, beside each version's own JSON)."""
    from workbench.kinds.crows_pairs.example import write_example as crows_example
    from workbench.kinds.honest.example import write_example as honest_example

    folder = tmp_path_factory.mktemp("report-results")
    cache = folder / "scores.sqlite"
    rng = random.Random(3)
    rows = [
        {
            "model": model,
            "pair_id": f"p{i}",
            "stance": stance,
            "domain": ("gender", "race")[i % 2],
            "subtopic": f"s{i % 3}",
            "prediction": rng.choice(["entailment", "neutral", "contradiction"]),
        }
        for model in ("nli-one", "nli-two", HOSTILE)
        for i in range(30)
        for stance in ("pro", "anti")
    ]
    predictions = folder / "predictions.jsonl"
    predictions.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    evaluate("--predictions", predictions, "--json", folder / "nli.json")
    bert, roberta, gpt2 = (fixture_models[m] for m in ("mlm-bert", "mlm-roberta", "clm-gpt2"))
    pairs = crows_example(folder / "crows-data")
    evaluate(
        pairs, "--kind", "crows-pairs", "-m", bert, "-m", roberta, "--json", folder / "crows.json", "--cache", cache
    )
    templates, lexicon = honest_example(folder / "honest-data")
    evaluate(
        templates,
        "--kind",
        "honest",
        "--lexicon",
        lexicon,
        "-m",
        bert,
        "-m",
        gpt2,
        "--top-k",
        "3",
        "--json",
        folder / "honest.json",
        "--cache",
        cache,
    )
    lines = pairs.read_text(encoding="utf-8").splitlines(keepends=True)
    shorter = folder / "crows-data" / "pairs_v2.csv"
    shorter.write_text("".join(lines[:-3]), encoding="utf-8")
    evaluate(pairs, shorter, "--kind", "crows-pairs", "-m", bert, "--json", folder / "versions.json", "--cache", cache)
    found = {p.stem: p for p in folder.glob("*.json")}
    assert {"nli", "crows", "honest", "versions"} <= set(found)
    return found


class Page(HTMLParser):
    """The page's tables (each with the heading above it: its column heads and rows of cell
    texts), its figures' captions, and every attribute of every tag."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.tables: list[dict] = []
        self.captions: list[str] = []
        self.attributes: list[tuple[str, str, str]] = []
        self.heading = ""
        self._in: list[str] = []
        self._text = ""
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.attributes += [(tag, k, v or "") for k, v in attrs]
        if tag == "table":
            self.tables.append({"heading": self.heading, "head": [], "rows": []})
        elif tag == "tr" and self.tables:
            self.tables[-1]["rows"].append([])
        if tag in ("h2", "h3", "th", "td", "figcaption"):
            self._in.append(tag)
            self._text = ""

    def handle_endtag(self, tag):
        if tag == "tr" and self.tables and not self.tables[-1]["rows"][-1]:
            self.tables[-1]["rows"].pop()  # the row of column heads
        if not self._in or self._in[-1] != tag:
            return
        self._in.pop()
        text = " ".join(self._text.split())
        if tag in ("h2", "h3"):
            self.heading = text
        elif tag == "th":
            self.tables[-1]["head"].append(text)
        elif tag == "td":
            self.tables[-1]["rows"][-1].append(text)
        elif tag == "figcaption":
            self.captions.append(text)

    def handle_data(self, data):
        if self._in:
            self._text += data

    def table(self, heading: str, after: int = 0) -> dict:
        """The first table under `heading` from the `after`-th table on."""
        return next(t for t in self.tables[after:] if t["heading"] == heading)


def written(result, out: Path) -> str:
    assert result.exit_code == 0, result.output
    assert f"wrote {out.name}/index.html" in result.output.replace(str(out.parent) + "/", "")
    return (out / "index.html").read_text(encoding="utf-8")


def test_every_model_of_every_file_has_its_row_overall_and_per_group(results, tmp_path):
    out = tmp_path / "report"
    page_text = written(report(results["nli"], results["crows"], results["honest"], "--out", out), out)
    page = Page(page_text)
    for name in ("nli", "crows", "honest"):
        doc = json.loads(results[name].read_text(encoding="utf-8"))
        at = page.tables.index(next(t for t in page.tables if t["heading"] == "Overall" and _is(t, doc)))
        overall = page.tables[at]
        shown = [row[0] for row in overall["rows"]]
        assert shown == [Path(m).name if m.startswith("/") else m for m in doc["models"]], name
        for key, about in doc["statistics"].items():  # each statistic a column, each figure with its interval
            if any(key in e["overall"] for e in doc["models"].values()):
                column = overall["head"].index(about["title"])
                for row, entry in zip(overall["rows"], doc["models"].values()):
                    value, found = entry["overall"][key], entry["overall"].get("intervals", {}).get(key)
                    if value is not None and found and found.get("lower") is not None:
                        assert re.fullmatch(r"-?[\d,.]+ \[-?[\d,.]+, -?[\d,.]+\]( !)?", row[column]), row[column]
        for entry_name, entry in doc["models"].items():  # each level's groups (`by_<level>`), each with its row
            levels = {
                k: v
                for k, v in entry.items()
                if k.startswith("by_") and all(isinstance(g, dict) and "n" in g for g in v.values())
            }
            assert levels, name
            for key, groups in levels.items():
                table = page.table(f"Per {key.removeprefix('by_').replace('_', ' ')}", at)
                shown_name = Path(entry_name).name if entry_name.startswith("/") else entry_name
                assert {(g, shown_name) for g in groups} <= {(r[0], r[1]) for r in table["rows"]}, (name, key)
    # HONEST's curves (a figure per k): a chart each, a line per model
    assert {"curve (overall)", "per rank (overall)"} <= set(page.captions)
    assert page_text.count("<polyline") >= 2 * 2 * 3  # curve and per rank, overall and per group (2), 2 models
    assert "Models compared" in [t["heading"] for t in page.tables]


def _is(table: dict, doc: dict) -> bool:
    names = {Path(m).name if m.startswith("/") else m for m in doc["models"]}
    return {row[0] for row in table["rows"]} == names


def test_nothing_is_loaded_from_outside_and_no_path_of_this_machine_shows(results, tmp_path):
    out = tmp_path / "report"
    page_text = written(report(*results.values(), "--out", out), out)
    page = Page(page_text)
    for tag, attribute, value in page.attributes:
        assert attribute not in ("src", "srcset", "action", "data") or value.startswith(("#", "data:")), (tag, value)
        if attribute == "href":
            assert value.startswith("#"), (tag, value)
    assert not re.search(r"<(link|iframe|object|embed|img|image|use)\b", page_text, re.I)
    assert not re.search(r"@import|url\(|fetch\(|XMLHttpRequest|import\(", page_text)
    folder = str(results["nli"].parent)
    assert folder not in page_text and str(tmp_path) not in page_text
    for name in ("crows", "honest"):
        for model in json.loads(results[name].read_text(encoding="utf-8"))["models"]:
            assert model.startswith("/") and model not in page_text and Path(model).parent.as_posix() not in page_text
    assert not re.search(r"/tmp/|/home/|/root/", page_text)


def test_every_string_is_escaped(results, tmp_path):
    out = tmp_path / "report"
    page_text = written(report(results["nli"], "--out", out), out)
    assert HOSTILE not in page_text and "<img" not in page_text
    assert html.escape(HOSTILE, quote=True) in page_text
    page = Page(page_text)
    assert HOSTILE in [row[0] for row in page.table("Overall")["rows"]]  # read back as the text it was
    assert not any(tag == "img" or attribute == "onerror" for tag, attribute, _ in page.attributes)


def test_versions_side_by_side_with_each_versions_own_figures(results, tmp_path):
    out = tmp_path / "report"
    each = sorted(results["versions"].parent.glob("versions.*.json"))
    assert len(each) == 2
    page = Page(written(report(results["versions"], *each, "--out", out), out))
    doc = json.loads(results["versions"].read_text(encoding="utf-8"))
    tags = [v["tag"] for v in doc["versions"]]
    side = page.table("Side by side")
    assert side["head"][:3] == doc["keys"] and f"{doc['measures'][0]} {tags[1]}" in side["head"]
    assert len(side["rows"]) == len(doc["rows"]) and {r[0] for r in side["rows"]} == {"mlm-bert"}
    assert f"{doc['measures'][0]} per version" in page.captions
    overall = page.table("Overall")  # both versions' own files, side by side in one table
    assert sorted((r[0], r[1]) for r in overall["rows"]) == sorted(("mlm-bert", p.stem) for p in each)


@pytest.mark.parametrize(
    "content, says",
    [
        ("model,score\nm,1\n", "not JSON"),
        ('{"kind": "crows-pairs", "models": {}}', 'no "tool": "workbench"'),
        ('{"workbench_version": "0.1.0", "kind": "nli", "datasets": []}', 'no "tool": "workbench"'),
        ('{"tool": "workbench", "kind": "nli", "items": []}', "not an evaluation result"),
        (
            '{"tool": "workbench", "kind": "nli", "statistics": {}, "models": {"m": {"by_domain": {}}}}',
            "models.m: no overall figures",
        ),
    ],
)
def test_a_file_that_is_not_a_result_is_refused_in_one_line_and_nothing_is_written(results, tmp_path, content, says):
    bad = tmp_path / "bad.json"
    bad.write_text(content, encoding="utf-8")
    out = tmp_path / "report"
    out.mkdir()
    (out / "index.html").write_text("the page written before", encoding="utf-8")
    result = report(results["nli"], bad, "--out", out)
    message = str(result.exception)
    assert result.exit_code == 2 and "\n" not in message and "Traceback" not in result.output
    assert message.startswith(f"{bad}") and says in message, message
    assert (out / "index.html").read_text(encoding="utf-8") == "the page written before"


def test_a_missing_file_and_an_output_over_an_input_are_refused(results, tmp_path):
    missing = report(tmp_path / "absent.json", "--out", tmp_path / "r")
    assert missing.exit_code == 2 and "absent.json: file not found" in str(missing.exception)
    assert not (tmp_path / "r").exists()
    copy = tmp_path / "index.html"
    copy.write_text(results["nli"].read_text(encoding="utf-8"), encoding="utf-8")
    before = copy.read_bytes()
    over = report(copy, "--out", tmp_path)
    assert over.exit_code == 2 and "an output must not overwrite an input" in str(over.exception)
    assert copy.read_bytes() == before


@pytest.fixture
def browser():
    if chromium() is None:
        pytest.fail("no Chromium on the PATH: apt-get install chromium (`make test` installs it)")
    opened = Browser(1280, 800)
    yield opened
    opened.close()


def test_the_page_in_chromium_sorts_its_tables_loads_nothing_and_fits_a_phone(results, tmp_path, browser):
    out = tmp_path / "report"
    written(report(results["nli"], results["crows"], results["honest"], "--out", out), out)
    browser.page("Network.enable")
    browser.goto((out / "index.html").as_uri())
    browser.wait_for("document.readyState === 'complete' && document.querySelectorAll('table').length > 0")
    shown = browser.evaluate("document.body.innerText")
    for name in ("nli", "crows", "honest"):
        for model in json.loads(results[name].read_text(encoding="utf-8"))["models"]:
            assert (Path(model).name if model.startswith("/") else model) in shown
    assert HOSTILE in shown
    requests = [e["params"]["request"]["url"] for e in browser.events if e.get("method") == "Network.requestWillBeSent"]
    assert requests and all(url.startswith("file:") for url in requests), requests  # the page itself, nothing else
    # the first table (NLI overall): sorted by a figure's column, up then down; missing values last
    column = """(function (index, clicks) {
        var table = document.querySelector('table.sortable');
        var button = table.tHead.rows[0].cells[index].querySelector('button');
        for (var i = 0; i < clicks; i++) button.click();
        return Array.prototype.map.call(table.tBodies[0].rows, function (r) { return r.cells[index].getAttribute('data-v'); });
    })"""
    heads = browser.evaluate(
        "Array.prototype.map.call(document.querySelector('table').tHead.rows[0].cells, c => c.innerText)"
    )
    at = heads.index("accuracy")
    up = [float(v) for v in browser.evaluate(f"{column}({at}, 1)")]
    assert up == sorted(up) and len(up) == 3 and len(set(up)) > 1
    down = [float(v) for v in browser.evaluate(f"{column}({at}, 1)")]
    assert down == sorted(up, reverse=True)
    names = browser.evaluate(f"{column}(0, 0)")
    assert names == [None, None, None]  # names are text: no sort value of their own
    browser.evaluate("document.querySelector('table.sortable').tHead.rows[0].cells[0].querySelector('button').click()")
    by_name = browser.evaluate(
        "Array.prototype.map.call(document.querySelector('table.sortable').tBodies[0].rows, r => r.cells[0].innerText)"
    )
    assert by_name == sorted(["nli-one", "nli-two", HOSTILE])
    # a phone: the page is no wider than the screen (wide tables scroll inside their frames), charts fit
    browser.resize(390, 844)
    browser.goto((out / "index.html").as_uri())
    browser.wait_for("document.readyState === 'complete' && document.querySelectorAll('table').length > 0")
    assert browser.evaluate("document.documentElement.scrollWidth") <= 390
    widest = browser.evaluate(
        "Math.max.apply(null, Array.prototype.map.call(document.querySelectorAll('svg'), s => s.getBoundingClientRect().right))"
    )
    assert 300 < widest <= 390


def test_names_and_paths_of_this_machine_show_by_their_last_components():
    from workbench.evaluation.html_report import Text, display_names

    names = ["/srv/a/runs/model", "/srv/b/runs/model", "~/models/bert-ft", "org/hub-model", "plain"]
    assert display_names(names) == {
        "/srv/a/runs/model": "a/runs/model",  # two folders named alike: as many components as tell them apart
        "/srv/b/runs/model": "b/runs/model",
        "~/models/bert-ft": "bert-ft",
        "org/hub-model": "org/hub-model",  # a Hub name is no path of this machine: as given
        "plain": "plain",
    }
    text = Text(names)
    assert text("score: /srv/a/runs/model − /srv/b/runs/model = +1") == "score: a/runs/model − b/runs/model = +1"
    assert text("read /home/someone/data/pairs.csv, C:\\Users\\x\\lex.tsv and ~/x/y.json") == (
        "read pairs.csv, lex.tsv and y.json"
    )
    kept = "log10(PPL(probe) / PPL(identity)); 50/50; see https://example.org/a/b; ORG/NAME@v1.0.0"
    assert text(kept) == kept


def test_fields_the_page_does_not_know_are_shown_or_passed_over_never_a_traceback(results, tmp_path):
    doc = json.loads(results["nli"].read_text(encoding="utf-8"))
    first, *others = doc["models"].values()
    for n, entry in enumerate(doc["models"].values()):  # named figures beside a group's (percentiles, a rank)
        entry["overall"]["percentiles"] = {"q1": 1.5 + n, "q50": 2.5 + n}
        entry["overall"]["rank"] = n + 1
    first["overall"]["intervals"] = [1, 2]  # fields of a shape the page does not expect
    first["by_domain"]["gender"]["intervals"]["accuracy"] = "wide"
    doc["uncertainty"]["comparisons"]["accuracy"] = "not a comparison"
    doc["uncertainty"]["warnings"] = "one warning, not a list"
    doc["notes"] = {"a": 1}
    doc["statistics"]["later"] = "a statistic described as text"
    odd = tmp_path / "odd.json"
    odd.write_text(json.dumps(doc), encoding="utf-8")
    out = tmp_path / "report"
    page = Page(written(report(odd, "--out", out), out))
    overall = page.table("Overall")
    for column in ("percentiles q1", "percentiles q50", "rank"):
        assert column in overall["head"]
    at = overall["head"].index("percentiles q50")
    assert [row[at] for row in overall["rows"]] == [f"{2.5 + n:.2f}" for n in range(len(doc["models"]))]
    assert overall["rows"][0][overall["head"].index("accuracy")] == f"{first['overall']['accuracy']:.2f}"


def test_past_the_palette_each_models_line_keeps_a_style_of_its_own(results, tmp_path):
    """FairBelief compares 21 models: the 11th model on must not be drawn as the 1st was."""
    doc = json.loads(results["honest"].read_text(encoding="utf-8"))
    entry = next(iter(doc["models"].values()))
    doc["models"] = {f"model-{n:02d}": entry for n in range(23)}
    many = tmp_path / "many.json"
    many.write_text(json.dumps(doc), encoding="utf-8")
    out = tmp_path / "report"
    page = written(report(many, "--out", out), out)
    chart = page[page.index("<figcaption>curve (overall)") :]
    chart = chart[: chart.index("</figure>")]
    lines = re.findall(
        r'<polyline [^>]*? stroke="([^"]+)" stroke-width="[^"]+"(?: stroke-dasharray="([^"]+)")?><title>([^<]+)', chart
    )
    assert [name for *_, name in lines] == list(doc["models"])
    styles = [(colour, dash) for colour, dash, _ in lines]
    assert len(set(styles)) == len(styles)  # no two models look alike
    assert all(dash == "" for _, dash in styles[:10]) and all(dash for _, dash in styles[10:])
    legend = chart[chart.index('<ul class="legend">') :]
    assert legend.count("<li>") == 23 and legend.count('class="stroke"') == 13
