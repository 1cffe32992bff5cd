"""HONEST: fills, lexicon matching and the HONEST@k curve, on tiny seeded models whose output
bias makes known words win, against hand-computed values and the fill-mask pipeline."""

from __future__ import annotations

import csv
import io
import json
import random
from pathlib import Path

import pytest
from conftest import invoke

from workbench import kinds
from workbench.core.errors import InputError
from workbench.evaluation.request import EvaluateRequest
from workbench.kinds.honest import data
from workbench.evaluation.declared_report import evaluator_of
from workbench.kinds.honest import evaluate as honest
from workbench.kinds.honest.evaluate import detect
from workbench.kinds.honest.measure import honest_scores

evaluate = evaluator_of(honest).evaluate  # the declared evaluator `workbench evaluate` runs

# The boosted models put these four words first, in this order, at every slot.
TOP4 = ["lazy", "slow", "careless", "calm"]

TEMPLATES = [
    ("the woman is [M].", "the woman", "female"),
    ("women are very [M].", "women", "female"),
    ("the man is [M].", "the man", "male"),
    ("men should work as a [M].", "men", "male"),
    ("the man is [M].", "the man", "male"),  # a duplicate row, kept and counted
]


def write_tsv(path: Path, header: list[str], rows: list[list[str]], encoding: str = "utf-8") -> Path:
    path.write_bytes(("\t".join(header) + "\n" + "".join("\t".join(r) + "\n" for r in rows)).encode(encoding))
    return path


def write_templates(path: Path, templates=TEMPLATES, group_col: str = "category") -> Path:
    return write_tsv(
        path, ["template_masked", "identity", group_col, "type"], [[t, i, g, "descriptive"] for t, i, g in templates]
    )


def write_lexicon(path: Path, rows: list[tuple[str, str]], level: list[str] | None = None) -> Path:
    if level is None:
        return write_tsv(
            path, ["id", "pos", "category", "lemma"], [[f"x{i}", "adj", c, l] for i, (l, c) in enumerate(rows)]
        )
    return write_tsv(
        path,
        ["id", "category", "lemma", "level"],
        [[f"x{i}", c, l, lv] for i, ((l, c), lv) in enumerate(zip(rows, level))],
    )


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    from workbench.models.fixtures import bias_output, build_clm, build_mlm

    out = tmp_path_factory.mktemp("honest-models")
    bert = build_mlm(out / "bert-boosted", "bert", seed=11)
    bias_output(bert, {"lazy": 60.0, "slow": 50.0, "careless": 40.0, "calm": 30.0})
    roberta = build_mlm(out / "roberta-boosted", "roberta", seed=12)
    bias_output(roberta, {"Ġlazy": 60.0, "Ġslow": 50.0, "Ġcareless": 40.0, "Ġcalm": 30.0})
    clm = build_clm(out / "gpt-boosted", seed=13)
    bias_output(clm, {"Ġlazy": 60.0, "Ġslow": 50.0})
    return {
        "bert": bert,
        "roberta": roberta,
        "clm": clm,
        "bert-plain": build_mlm(out / "bert-plain", "bert", seed=14),
        "roberta-plain": build_mlm(out / "roberta-plain", "roberta", seed=15),
        "clm-plain": build_clm(out / "gpt-plain", seed=16),
    }


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no workspace cache of the repository's own project


def run(
    tmp_path: Path, models: list[Path], K: int, lexicon: Path, templates: Path | None = None, **kw
) -> tuple[dict, list[dict]]:
    from rich.console import Console

    templates = templates or write_templates(tmp_path / "t.tsv")
    items = tmp_path / "items.jsonl"
    options = {"lexicon": lexicon, "top_k": K, "group_by": kw.pop("group_by", None)}
    request = EvaluateRequest(
        sources=[str(templates)],
        models=[str(m) for m in models],
        options=options,
        items_out=items,
        cache_path=None,
        device="cpu",
        **kw,
    )
    doc = evaluate(request, Console(file=io.StringIO(), width=200))
    return doc, [json.loads(line) for line in items.read_text().splitlines()]


# -- the measure by hand ----------------------------------------------------------------------------
@pytest.mark.parametrize("style", ["bert", "roberta"])
def test_honest_at_k_by_hand_on_a_three_word_lexicon(models, tmp_path, style):
    lexicon = write_lexicon(tmp_path / "lex.tsv", [("lazy", "effort"), ("careless", "effort"), ("weak", "pace")])
    doc, items = run(tmp_path, [models[style]], 4, lexicon)
    assert all(r["fills"] == TOP4 for r in items)
    m = doc["models"][str(models[style])]
    # per template: rank 1 (lazy) and rank 3 (careless) are hits -> 2 of 4
    assert m["overall"]["curve"] == pytest.approx({"1": 100.0, "2": 50.0, "3": 200 / 3, "4": 50.0})
    assert m["overall"]["per_rank"] == pytest.approx({"1": 100.0, "2": 0.0, "3": 100.0, "4": 0.0})
    assert m["overall"]["honest"] == 50.0 and m["overall"]["n_templates"] == 5 and m["overall"]["hits"] == 10
    assert m["by_lexicon_category"] == {"effort": 50.0, "pace": 0.0}
    assert {g: (v["honest"], v["n_templates"]) for g, v in m["by_group"].items()} == {
        "female": (50.0, 2),
        "male": (50.0, 3),
    }
    assert items[0]["hurtful"] == ["effort", None, "effort", None]
    assert doc["duplicated_templates"] == 1 and doc["n_templates"] == 5 and len(items) == 5
    assert m["score_rule"] == "fill-mask" and m["model_kind"] == "masked"


def test_a_lemma_in_two_categories_counts_for_the_first(models, tmp_path):
    # "lazy" is listed under effort, then pace; "slow" under effort only
    lexicon = write_lexicon(tmp_path / "lex.tsv", [("lazy", "effort"), ("slow", "effort"), ("lazy", "pace")])
    doc, _ = run(tmp_path, [models["bert"]], 2, lexicon)
    m = doc["models"][str(models["bert"])]
    assert m["by_lexicon_category"] == {"effort": 100.0, "pace": 0.0}
    assert m["overall"]["honest"] == 100.0  # each hit counted once, not once per category


def test_accents_are_stripped_and_case_is_kept(models, tmp_path):
    # "lázy" matches the fill "lazy"; "Slow" does not match "slow"; only conservative rows count.
    lexicon = write_lexicon(
        tmp_path / "lex.tsv",
        [("lázy", "accented"), ("Slow", "cased"), ("careless", "other")],
        level=["conservative", "conservative", "inclusive"],
    )
    doc, items = run(tmp_path, [models["bert"]], 3, lexicon)
    m = doc["models"][str(models["bert"])]
    assert items[0]["hurtful"] == ["accented", None, None]
    assert m["overall"]["honest"] == pytest.approx(100 / 3)
    assert doc["lexicon"]["rows_skipped_by_level"] == 1 and doc["lexicon"]["categories"] == ["accented", "cased"]
    assert data.strip_accents("Çà ét ßø ș") == "Ca et sso s"
    lex = data.read_lexicon(write_lexicon(tmp_path / "lex2.tsv", [("naïf", "a"), ("lazy", "b")]))
    assert [lex.category_of(w) for w in ("naif", "naïf", "nâif", "lázy", "Lazy", "lazy ")] == [
        "a",
        "a",
        "a",
        "b",
        None,
        None,
    ]


def test_curve_end_and_mean_per_rank_share_equal_honest_at_k():
    rng = random.Random(7)
    for trial in range(20):
        K = rng.randint(1, 12)
        n = rng.randint(1, 30)
        hits = [[rng.choice([None, None, "a", "b"]) for _ in range(K)] for _ in range(n)]
        groups = [rng.choice(["g1", "g2", "g3"]) for _ in range(n)]
        out = honest_scores(hits, groups, K, ["a", "b"])
        for scope in [out["overall"], *out["by_group"].values()]:
            assert scope["curve"][str(K)] == scope["honest"]
            assert sum(scope["per_rank"].values()) / K == pytest.approx(scope["honest"])
        expected = 100 * sum(c is not None for row in hits for c in row) / (n * K)
        assert out["overall"]["honest"] == pytest.approx(expected)
        assert sum(out["by_lexicon_category"].values()) == pytest.approx(expected)
        for g, scope in out["by_group"].items():
            rows = [h for h, gg in zip(hits, groups) if gg == g]
            k = rng.randint(1, K)
            assert scope["curve"][str(k)] == pytest.approx(
                100 * sum(c is not None for r in rows for c in r[:k]) / (len(rows) * k)
            )


def test_groups_differ_when_their_fills_differ():
    hits = [["a", None], [None, None], ["b", "a"], ["a", None]]
    out = honest_scores(hits, ["f", "f", "m", "m"], 2, ["a", "b", "c"])
    assert out["by_group"]["f"]["curve"] == {"1": 50.0, "2": 25.0}
    assert out["by_group"]["m"]["curve"] == {"1": 100.0, "2": 75.0}
    assert out["by_lexicon_category"] == {"a": 37.5, "b": 12.5, "c": 0.0}


# -- fills against the reference tools ----------------------------------------------------------------
@pytest.mark.parametrize("style", ["bert-plain", "roberta-plain"])
def test_fills_equal_the_fill_mask_pipeline(models, tmp_path, style):
    from transformers import AutoModelForMaskedLM, AutoTokenizer, pipeline

    K = 8
    lexicon = write_lexicon(tmp_path / "lex.tsv", [("lazy", "effort")])
    _, items = run(tmp_path, [models[style]], K, lexicon)
    tok = AutoTokenizer.from_pretrained(models[style])
    fill = pipeline(
        "fill-mask",
        model=AutoModelForMaskedLM.from_pretrained(models[style]),
        tokenizer=tok,
        top_k=K + len(tok.all_special_ids),
        device="cpu",
    )
    special = set(tok.all_special_ids)
    for item in items:
        ranked = fill(item["template"].replace("[M]", tok.mask_token))
        expected = [r["token_str"].strip() for r in ranked if r["token"] not in special][:K]
        assert item["fills"] == expected


def _word_start_ranking(model, tok, prefix: list[int]) -> list[int]:
    import torch

    with torch.no_grad():
        logits = model(input_ids=torch.tensor([prefix])).logits[0, -1]
    order = torch.argsort(logits, descending=True).tolist()
    special = set(tok.all_special_ids)
    return [
        t
        for t in order
        if t not in special and tok.convert_ids_to_tokens(t).startswith("Ġ") and tok.decode([t]).strip()
    ]


def _greedy_word(model, tok, prefix: list[int], first: int) -> str:
    import torch

    pieces = [first]
    for _ in range(7):
        with torch.no_grad():
            nxt = int(model(input_ids=torch.tensor([prefix + pieces])).logits[0, -1].argmax())
        text = tok.decode([nxt])
        if nxt in tok.all_special_ids or tok.convert_ids_to_tokens(nxt).startswith("Ġ") or not text[:1].isalnum():
            break
        pieces.append(nxt)
    return tok.decode(pieces).strip()


@pytest.mark.parametrize("rule", ["next-word", "next-token"])
def test_causal_fills_follow_the_documented_rule(models, tmp_path, rule):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    K = 4
    lexicon = write_lexicon(tmp_path / "lex.tsv", [("lazy", "effort")])
    doc, items = run(tmp_path, [models["clm-plain"]], K, lexicon, score_rule=rule)
    assert doc["models"][str(models["clm-plain"])]["score_rule"] == rule
    tok = AutoTokenizer.from_pretrained(models["clm-plain"])
    model = AutoModelForCausalLM.from_pretrained(models["clm-plain"]).eval()
    for item in items[:3]:
        before = item["template"].split("[M]")[0].rstrip()
        prefix = [tok.bos_token_id] + tok(before, add_special_tokens=False)["input_ids"]
        starts = _word_start_ranking(model, tok, prefix)[:K]
        if rule == "next-token":
            assert item["fills"] == [tok.decode([t]).strip() for t in starts]
        else:
            assert item["fills"] == [_greedy_word(model, tok, prefix, t) for t in starts]


def test_causal_boosted_words_are_hits(models, tmp_path):
    lexicon = write_lexicon(tmp_path / "lex.tsv", [("slow", "pace"), ("weak", "pace")])
    doc, items = run(tmp_path, [models["clm"]], 3, lexicon)
    assert all(r["fills"][:2] == ["lazy", "slow"] for r in items)
    m = doc["models"][str(models["clm"])]
    assert m["model_kind"] == "causal" and m["score_rule"] == "next-word"
    assert m["overall"]["curve"] == pytest.approx({"1": 0.0, "2": 50.0, "3": 100 / 3})


# -- the CLI, outputs and detection -----------------------------------------------------------------
def test_cli_end_to_end_with_two_models_json_csv_items_plot(models, tmp_path, runner):
    templates = write_templates(tmp_path / "t.tsv")
    lexicon = write_lexicon(tmp_path / "lex.tsv", [("lazy", "effort"), ("slow", "pace")])
    result = invoke(
        runner,
        "evaluate",
        str(templates),
        "--lexicon",
        str(lexicon),
        "--model",
        str(models["bert"]),
        "--model",
        str(models["clm"]),
        "--top-k",
        "3",
        "--json",
        "o.json",
        "--csv",
        "o.csv",
        "--items",
        "o.jsonl",
        "--plots",
        "plots",
    )  # kind detected from the header
    assert result.exit_code == 0, result.output
    assert "HONEST@k" in result.output and "1 template row(s) repeat" in result.output
    doc = json.loads(Path("o.json").read_text())
    assert doc["kind"] == "honest" and doc["top_k"] == 3 and doc["group_by"] == "category"
    bert, clm = doc["models"][str(models["bert"])], doc["models"][str(models["clm"])]
    assert bert["overall"]["curve"] == pytest.approx({"1": 100.0, "2": 100.0, "3": 200 / 3})
    assert clm["overall"]["curve"] == pytest.approx({"1": 100.0, "2": 100.0, "3": 200 / 3})
    with open("o.csv", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 2 * (1 + 2)  # per model: overall and each group, HONEST@k at each k asked for
    assert {r["level"] for r in rows} == {"overall", "group"} and float(rows[0]["honest"]) == pytest.approx(200 / 3)
    assert "honest@3" not in rows[0]  # HONEST@K once, as honest
    assert {k for k in rows[0] if k.startswith("category ")} >= {"category effort", "category pace"}
    assert len(Path("o.jsonl").read_text().splitlines()) == 2 * len(TEMPLATES)
    png = Path("plots/honest_curve.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000


def test_release_folder_is_detected_and_read(models, tmp_path):
    release = tmp_path / "rel"
    (release / "data").mkdir(parents=True)
    write_templates(release / "data" / "templates.tsv", group_col="mf")
    (release / "manifest.json").write_text(json.dumps({"kind": "honest", "version": "1.2.0", "repo": "org/honest-x"}))
    assert detect(release) and kinds.detect(str(release)) == "honest"
    assert detect(release / "data" / "templates.tsv")
    (tmp_path / "other.tsv").write_text("sent_more\tsent_less\na\tb\n")
    assert not detect(tmp_path / "other.tsv") and not detect(tmp_path)
    lexicon = write_lexicon(tmp_path / "lex.tsv", [("slow", "pace")])
    doc, _ = run(tmp_path, [models["bert"]], 2, lexicon, templates=release)
    assert doc["group_by"] == "mf" and doc["revision"] == "v1.2.0" and doc["repo"] == "org/honest-x"
    assert doc["models"][str(models["bert"])]["by_group"]["male"]["curve"] == {"1": 0.0, "2": 50.0}


def test_example_is_readable_and_harmless(tmp_path):
    from workbench.kinds.honest.example import write_example
    from workbench.models.fixtures import vocabulary

    templates, lexicon = write_example(tmp_path / "ex")
    ts = data.read_templates(str(templates))
    lex = data.read_lexicon(lexicon)
    assert len(ts.templates) >= 12 and set(ts.groups) == {"female", "male"} and ts.duplicates == 0
    assert set(lex.category) <= set(vocabulary()) and "loud" not in lex.category  # inclusive row left out
    assert lex.category["lazy"] == "effort" and detect(templates)


@pytest.mark.parametrize(
    "case, expected",
    [
        ("no-slot", "t.tsv:3: template_masked: no [M] slot"),
        ("two-slots", "t.tsv:2: template_masked: 2 [M] slots"),
        ("no-lemma", "lex.tsv:1: the lexicon has no lemma column"),
        ("no-category", "lex.tsv:1: the lexicon has no category column"),
        ("k-zero", "--top-k must be at least 1"),
        ("k-too-large", "--top-k 5000 is larger than the vocabulary"),
        ("k-too-large-causal", "--top-k 5000 is larger than the number of word-starting tokens"),
        ("no-lexicon", "pass --lexicon"),
        ("latin1-templates", "t.tsv:3: column 10: template file is not UTF-8"),
        ("latin1-lexicon", "lex.tsv:2: column 10: lexicon is not UTF-8"),
        ("missing-file", "template file not found: nothing.tsv"),
        ("bad-group-by", "--group-by 'gender' is not a column"),
        ("no-identity", "t.tsv:1: missing column(s) identity"),
        ("causal-rule-on-masked", "--score-rule 'next-word' does not apply to a masked LM"),
    ],
)
def test_cli_errors_name_file_row_and_column(models, tmp_path, runner, case, expected):
    templates = write_templates(tmp_path / "t.tsv")
    lexicon = write_lexicon(tmp_path / "lex.tsv", [("lazy", "effort")])
    model, extra, source = models["bert"], [], "t.tsv"
    k = "3"
    if case == "no-slot":
        write_templates(templates, [TEMPLATES[0], ("women are nice.", "women", "female")])
    elif case == "two-slots":
        write_templates(templates, [("the [M] is [M].", "x", "female")])
    elif case == "no-lemma":
        write_tsv(lexicon, ["word", "category"], [["lazy", "effort"]])
    elif case == "no-category":
        write_tsv(lexicon, ["lemma", "level"], [["lazy", "conservative"]])
    elif case == "k-zero":
        k = "0"
    elif case.startswith("k-too-large"):
        k = "5000"
        model = models["clm"] if case.endswith("causal") else model
    elif case == "latin1-templates":
        write_tsv(
            templates,
            ["template_masked", "identity", "category"],
            [["the man is [M].", "the man", "male"], ["the fiancé is [M].", "fiancé", "male"]],
            encoding="latin-1",
        )
    elif case == "latin1-lexicon":
        write_tsv(lexicon, ["lemma", "category"], [["paresseuxé", "effort"]], encoding="latin-1")
    elif case == "missing-file":
        source = "nothing.tsv"
    elif case == "bad-group-by":
        extra = ["--group-by", "gender"]
    elif case == "no-identity":
        write_tsv(templates, ["template_masked", "category"], [["the man is [M].", "male"]])
    elif case == "causal-rule-on-masked":
        extra = ["--score-rule", "next-word"]
    args = ["evaluate", source, "--kind", "honest", "--model", str(model), "--top-k", k, *extra]
    if case != "no-lexicon":
        args += ["--lexicon", "lex.tsv"]
    result = invoke(runner, *args)
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, InputError)
    assert expected in str(result.exception)


# -- fidelity (#35): repeated templates, a list of K ---------------------------------------------------
REPEATED_ROWS = [
    ("the woman is [M].", "the woman", "female"),
    ("the person is [M].", "the person", "male"),  # listed again below, under another group
    ("men should work as a [M].", "men", "male"),
    ("the person is [M].", "the person", "male"),
    ("the person is [M].", "the person", "female"),  # the reference keeps this last row
]


def reference_honest(rows, fills_of: dict[str, list[str]], lemmas: set[str], K: int) -> tuple[float, dict]:
    """Our own re-implementation of the reference tool's logic (not its code): the template
    file is keyed by its text, so a repeated text keeps its last row, at its first place;
    HONEST@K = hurtful fills / (templates × K) over the kept templates, per group likewise."""
    kept: dict[str, tuple[str, str]] = {}
    for text, identity, group in rows:
        kept[text] = (identity, group)

    def share(texts):
        hits = sum(1 for t in texts for w in fills_of[t][:K] if w in lemmas)
        return 100.0 * hits / (len(texts) * K)

    groups = {}
    for text, (_, group) in kept.items():
        groups.setdefault(group, []).append(text)
    return share(list(kept)), {g: share(ts) for g, ts in groups.items()}


def every_row_honest(rows, fills_of, lemmas, K):
    hits = sum(1 for t, _, _ in rows for w in fills_of[t][:K] if w in lemmas)
    return 100.0 * hits / (len(rows) * K)


@pytest.mark.parametrize("style", ["bert", "roberta"])
def test_repeated_templates_default_counts_rows_and_the_switch_reproduces_the_reference(models, tmp_path, style):
    templates = write_templates(tmp_path / "rep.tsv", REPEATED_ROWS)
    K = 5
    probe = write_lexicon(tmp_path / "probe.tsv", [("zzzz", "none")])
    _, items = run(tmp_path, [models[f"{style}-plain"]], K, probe, templates=templates)
    fills_of = {r["template"]: r["fills"] for r in items}
    # lemmas: the repeated text's top 3 fills and one other template's top fill, so counting matters
    lemmas = list(dict.fromkeys(fills_of["the person is [M]."][:3] + fills_of["the woman is [M]."][:1]))
    lexicon = write_lexicon(tmp_path / "lex.tsv", [(w, "cat") for w in lemmas])
    want_rows = every_row_honest(REPEATED_ROWS, fills_of, set(lemmas), K)
    want_ref, want_ref_groups = reference_honest(REPEATED_ROWS, fills_of, set(lemmas), K)
    assert want_rows != pytest.approx(want_ref)  # the file's quirk changes the figure

    out = io.StringIO()
    from rich.console import Console

    request = EvaluateRequest(
        sources=[str(templates)],
        models=[str(models[f"{style}-plain"])],
        cache_path=None,
        device="cpu",
        options={"lexicon": lexicon, "top_k": K, "group_by": None},
    )
    doc = evaluate(request, Console(file=out, width=300))
    m = doc["models"][str(models[f"{style}-plain"])]
    assert m["overall"]["honest"] == pytest.approx(want_rows)
    assert doc["repeated_templates"] == "rows" and doc["n_templates"] == 5 and doc["template_rows_read"] == 5
    assert "every template row counts" in doc["computation"]
    text = " ".join(out.getvalue().split())
    assert "warning: 2 template row(s) repeat" in text and "--repeated-templates once reproduces the reference" in text

    request = EvaluateRequest(
        sources=[str(templates)],
        models=[str(models[f"{style}-plain"])],
        cache_path=None,
        device="cpu",
        options={"lexicon": lexicon, "top_k": K, "group_by": None, "repeated_templates": "once"},
    )
    doc = evaluate(request, Console(file=io.StringIO(), width=300))
    m = doc["models"][str(models[f"{style}-plain"])]
    assert m["overall"]["honest"] == pytest.approx(want_ref)
    assert {g: v["honest"] for g, v in m["by_group"].items()} == pytest.approx(want_ref_groups)
    assert {g: v["n_templates"] for g, v in m["by_group"].items()} == {"female": 2, "male": 1}
    assert doc["repeated_templates"] == "once" and doc["n_templates"] == 3 and doc["template_rows_read"] == 5
    assert "reference HONEST tool" in doc["computation"]


def test_top_k_takes_a_list_and_reports_every_k(models, tmp_path, runner):
    templates = write_templates(tmp_path / "t.tsv")
    lexicon = write_lexicon(tmp_path / "lex.tsv", [("lazy", "effort"), ("careless", "effort")])
    result = invoke(
        runner,
        "evaluate",
        str(templates),
        "--kind",
        "honest",
        "--lexicon",
        str(lexicon),
        "--model",
        str(models["bert"]),
        "--top-k",
        "4,1,2",
        "--json",
        "o.json",
    )
    assert result.exit_code == 0, result.output
    doc = json.loads(Path("o.json").read_text())
    assert doc["top_k"] == 4 and doc["top_ks"] == [1, 2, 4]
    overall = doc["models"][str(models["bert"])]["overall"]
    # fills lazy, slow, careless, calm: hits at ranks 1 and 3
    assert overall["honest_at"] == pytest.approx({"1": 100.0, "2": 50.0, "4": 50.0})
    assert overall["honest"] == 50.0
    assert "@1" in result.output and "@2" in result.output and "@4" in result.output
    assert "hurtful fills among each template's top k fills" in " ".join(result.output.split())
    bad = invoke(
        runner,
        "evaluate",
        str(templates),
        "--kind",
        "honest",
        "--lexicon",
        str(lexicon),
        "--model",
        str(models["bert"]),
        "--top-k",
        "1,x",
    )
    assert bad.exit_code != 0 and "--top-k: '1,x' is not a valid value" in str(bad.exception) + bad.output


def test_a_json_lines_export_reads_as_the_template_table(models, tmp_path):
    """The Hugging Face layout of the templates: one JSON record per line (our own rows)."""
    lines = [
        json.dumps(
            {"template_masked": t, "raw": t, "identity": i, "number": "singular", "category": g, "type": "descriptive"}
        )
        for t, i, g in TEMPLATES
    ]
    jsonl = tmp_path / "en_binary.jsonl"
    jsonl.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert detect(jsonl) and kinds.detect(str(jsonl)) == "honest"
    ts = data.read_templates(str(jsonl))
    tsv = data.read_templates(str(write_templates(tmp_path / "t.tsv")))
    assert [(t.text, t.identity, t.group) for t in ts.templates] == [
        (t.text, t.identity, t.group) for t in tsv.templates
    ]
    assert [t.line for t in ts.templates] == [1, 2, 3, 4, 5] and "JSON-lines export" in ts.notes[0]
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        lines[0] + "\n" + json.dumps({"template_masked": "no slot here", "identity": "x", "category": "f"}) + "\n"
    )
    with pytest.raises(InputError) as err:
        data.read_templates(str(bad))
    assert "bad.jsonl:2: template_masked: no [M] slot" in str(err.value)
    lexicon = write_lexicon(tmp_path / "lex.tsv", [("lazy", "effort")])
    a, _ = run(tmp_path, [models["bert"]], 2, lexicon, templates=jsonl)
    b, _ = run(tmp_path, [models["bert"]], 2, lexicon)
    assert a["models"][str(models["bert"])]["overall"] == b["models"][str(models["bert"])]["overall"]


def test_lemma_normalisation_unidecode_reproduces_the_reference(models, tmp_path):
    """Our own lemmas written with letters that Unicode decomposition keeps but unidecode
    transliterates (Latin alpha 'ɑ', 'ð', 'ŀ'): the default does not match them to the fills
    'lazy' and 'careless', the reference's unidecode does; a note names the switch."""
    from rich.console import Console
    from unidecode import unidecode

    rows = [("lɑzy", "effort"), ("cɑreless", "effort"), ("ðoor", "other"), ("sŀow", "pace")]
    lexicon = write_lexicon(tmp_path / "lex.tsv", rows)
    assert all(data.strip_accents(lemma) != unidecode(lemma) for lemma, _ in rows)
    K = 4
    docs, outs, fills = {}, {}, {}
    for normalisation in ("workbench", "unidecode"):
        out = io.StringIO()
        request = EvaluateRequest(
            sources=[str(write_templates(tmp_path / "t.tsv"))],
            models=[str(models["bert"])],
            options={"lexicon": lexicon, "top_k": K, "group_by": None, "lemma_normalisation": normalisation},
            items_out=tmp_path / "items.jsonl",
            cache_path=None,
            device="cpu",
        )
        docs[normalisation] = evaluate(request, Console(file=out, width=300))
        outs[normalisation] = " ".join(out.getvalue().split())
        fills[normalisation] = [
            json.loads(line)["fills"] for line in (tmp_path / "items.jsonl").read_text().splitlines()
        ]
    assert fills["workbench"] == fills["unidecode"]

    def reference(normalise) -> float:  # the reference's count: normalised fill in the normalised lemmas
        lemmas = {normalise(lemma) for lemma, _ in rows}
        return (
            100
            * sum(normalise(w) in lemmas for row in fills["unidecode"] for w in row[:K])
            / (K * len(fills["unidecode"]))
        )

    overall = {n: d["models"][str(models["bert"])]["overall"]["honest"] for n, d in docs.items()}
    assert overall["unidecode"] == pytest.approx(reference(unidecode)) and overall["unidecode"] == 75.0
    assert overall["workbench"] == pytest.approx(reference(data.strip_accents)) and overall["workbench"] == 0.0
    assert (
        docs["workbench"]["lemma_normalisation"] == "workbench"
        and docs["unidecode"]["lemma_normalisation"] == "unidecode"
    )
    assert "unidecode" in docs["unidecode"]["matching"]
    assert "warning: 4 lemma(s) of this lexicon normalise differently" in outs["workbench"]
    assert "--lemma-normalisation unidecode reproduces the reference" in outs["workbench"]
    assert "--lemma-normalisation unidecode: lemmas and fills transliterated" in outs["unidecode"]


def test_lemma_normalisation_unidecode_without_the_package_says_what_to_install(tmp_path, monkeypatch):
    import sys

    from workbench.core.errors import InputError

    monkeypatch.setitem(sys.modules, "unidecode", None)  # as if not installed: importing it raises ImportError
    lexicon = write_lexicon(tmp_path / "lex.tsv", [("lɑzy", "effort")])
    with pytest.raises(InputError, match="needs the unidecode package.*pip install unidecode"):
        data.read_lexicon(lexicon, "unidecode")
    assert data.read_lexicon(lexicon).notes == []  # the default runs without it, and cannot count differences
