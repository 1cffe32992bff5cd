"""Input messages (#35): a delimiter or layout mistake is named as such, a file of one kind given
without --kind (or to another kind) is recognised or named, a short row has its line.
Every file here is a few lines written for these tests."""

from __future__ import annotations

import json

import pytest
from conftest import invoke

from workbench.core.errors import InputError


def message(result) -> str:
    assert result.exit_code == 2, result.output
    exc = result.exception
    assert isinstance(exc, InputError), repr(exc)
    text = str(exc) + " " + " ".join(str(p) for p in getattr(exc, "problems", []) or [])
    return " ".join(text.split())


CROWS_HEADER = ["sent_more", "sent_less", "stereo_antistereo", "bias_type"]
CROWS_ROW = ["The tall man is calm.", "The short man is calm.", "stereo", "age"]


@pytest.mark.parametrize("kind", [None, "crows-pairs"])
def test_semicolon_separated_csv_is_named(tmp_path, project, runner, kind):
    path = tmp_path / "pairs.csv"
    path.write_text(";".join(CROWS_HEADER) + "\n" + ";".join(CROWS_ROW) + "\n", encoding="utf-8")
    args = ["--kind", kind] if kind else []
    text = message(invoke(runner, "evaluate", str(path), *args, "--model", "x"))
    assert "pairs.csv" in text and "separated by semicolons" in text and "save the file with commas" in text
    if kind is None:
        assert "crows-pairs's columns" in text


def test_a_json_lines_export_of_a_kind_that_reads_csv_gets_the_layout_expected(tmp_path, project, runner):
    path = tmp_path / "probes.jsonl"
    path.write_text(
        json.dumps({"id": "1", "category": "age", "identity": "old people", "stereotype": "are calm"}) + "\n",
        encoding="utf-8",
    )
    text = message(invoke(runner, "evaluate", str(path), "--model", "x"))
    assert "JSON-lines export" in text and "Hugging Face" in text
    assert "of sofa (a comma-separated CSV with id, category, identity, stereotype" in text


def test_a_hugging_face_crows_pairs_export_reads_as_the_csv(tmp_path, project, runner):
    """The HF layout: JSON lines, stereo_antistereo and bias_type as ClassLabel integers."""
    from workbench.kinds import detect
    from workbench.kinds.crows_pairs.evaluate import load

    rows = [
        ("The tall man is calm.", "The short man is calm.", "stereo", "physical-appearance"),
        ("Old people are slow.", "Young people are slow.", "antistereo", "age"),
    ]
    stereo = ["stereo", "antistereo"]
    types = [
        "race-color",
        "socioeconomic",
        "gender",
        "disability",
        "nationality",
        "sexual-orientation",
        "physical-appearance",
        "religion",
        "age",
    ]
    jsonl = tmp_path / "test.jsonl"
    jsonl.write_text(
        "".join(
            json.dumps(
                {
                    "id": i,
                    "sent_more": m,
                    "sent_less": l,
                    "stereo_antistereo": stereo.index(d),
                    "bias_type": types.index(t),
                    "annotations": [[t]],
                    "anon_writer": "a0",
                    "anon_annotators": ["a1"],
                }
            )
            + "\n"
            for i, (m, l, d, t) in enumerate(rows)
        ),
        encoding="utf-8",
    )
    assert detect(str(jsonl)) == "crows-pairs"
    pairs = load(str(jsonl))
    assert pairs.direction == ["stereo", "antistereo"] and pairs.bias_type == ["physical-appearance", "age"]
    assert pairs.sent_more == [r[0] for r in rows] and pairs.table.lines == [1, 2]
    assert "Hugging Face layout" in pairs.table.notes[0]


@pytest.mark.parametrize(
    "name, content, kind, lacks",
    [
        ("probes.csv", "id,category,identity,stereotyp\n1,age,old people,are calm\n", "sofa", "stereotype"),
        (
            "templates.tsv",
            "template_masked\tidentiti\tcategory\nthe woman is [M].\tthe woman\tfemale\n",
            "honest",
            "identity",
        ),
    ],
)
def test_a_bad_file_without_kind_is_named_not_taken_for_nli(tmp_path, project, runner, name, content, kind, lacks):
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    text = message(invoke(runner, "evaluate", str(path), "--model", "x"))
    assert f"looks like {kind}'s layout" in text and f"lacks {lacks}" in text and f"pass --kind {kind}" in text
    assert "no kind of benchmark recognises this file" in text  # not the NLI template error


def test_a_short_sofa_row_has_its_line(tmp_path, project, runner):
    path = tmp_path / "probes.csv"
    path.write_text(
        "id,category,identity,stereotype\n1,age,old people,are calm\n2,age,young people\n", encoding="utf-8"
    )
    text = message(invoke(runner, "evaluate", str(path), "--kind", "sofa", "--model", "x"))
    assert "probes.csv:3" in text and "3 field(s)" in text and "stereotype missing" in text


def test_a_broken_stereoset_file_or_a_download_folder_is_not_taken_for_nli_templates(tmp_path, project, runner):
    bad = tmp_path / "dev.json"
    bad.write_text(json.dumps({"data": {"intrasentence": [], "intersentence": []}}), encoding="utf-8")  # no version
    text = message(invoke(runner, "evaluate", str(bad), "--model", "x"))
    assert "looks like a StereoSet file" in text and "pass --kind stereoset" in text
    folder = tmp_path / "download"
    folder.mkdir()
    (folder / "dataset_infos.json").write_text("{}", encoding="utf-8")
    (folder / "probes.csv").write_text("id,category,identity,stereotyp\n1,age,old people,are calm\n", encoding="utf-8")
    text = message(invoke(runner, "evaluate", str(folder), "--model", "x"))
    assert "probes.csv in this folder is in sofa's layout" in text


@pytest.mark.parametrize(
    "kind,header", [("crows-pairs", ",".join(CROWS_HEADER)), ("sos", "profane,nice,identity,attribute,marginalised")]
)
def test_an_unmatched_quote_is_named_with_its_line(tmp_path, project, runner, kind, header):
    path = tmp_path / "pairs.csv"
    path.write_text(
        header + '\nthe tall man is calm,the short man is calm,x,age,true\n"the old man is calm,the young man '
        "is calm,x,age,true\n",
        encoding="utf-8",
    )
    text = message(invoke(runner, "evaluate", str(path), "--kind", kind, "--model", "x"))
    assert text.startswith("pairs.csv:3: a quoted field opens on this line and is never closed")
    assert 'expected a closing "' in text


def test_a_short_crows_pairs_row_says_so(tmp_path, project, runner):
    path = tmp_path / "pairs.csv"
    path.write_text(",".join(CROWS_HEADER) + "\n" + ",".join(CROWS_ROW[:3]) + "\n", encoding="utf-8")
    text = message(invoke(runner, "evaluate", str(path), "--kind", "crows-pairs", "--model", "x"))
    assert "pairs.csv:2: row 1, column 'bias_type'" in text
    assert "the row has 3 cell(s), the header 4 columns: expected a value for every column" in text


def test_a_sofa_value_with_a_line_break_is_named(tmp_path, project, runner):
    path = tmp_path / "probes.csv"
    path.write_text(
        'id,category,identity,stereotype\n1,age,old people,are calm\n2,age,teenagers,"are loud\n', encoding="utf-8"
    )
    text = message(invoke(runner, "evaluate", str(path), "--kind", "sofa", "--model", "x"))
    assert "probes.csv:3: stereotype: holds a line break: expected one line per probe" in text
    assert 'an unmatched "' in text


def test_stereoset_problems_have_line_and_column(tmp_path, project, runner):
    broken = tmp_path / "dev.json"
    broken.write_text('{"version": "1.0",\n "data": {"intrasentence": [,]}}\n', encoding="utf-8")
    text = message(invoke(runner, "evaluate", str(broken), "--kind", "stereoset", "--model", "x"))
    assert "dev.json:2: column 29: Expecting value (expected valid JSON)" in text

    sentences = [
        {"id": f"s{g}", "sentence": f"the {w} chef cooks", "gold_label": g}
        for g, w in (("stereotype", "calm"), ("anti-stereotype", "loud"), ("unrelated", "blue"))
    ]
    good = {
        "id": "e1",
        "target": "chef",
        "bias_type": "profession",
        "context": "the BLANK chef cooks",
        "sentences": sentences,
    }
    bad = {
        **good,
        "id": "e2",
        "sentences": [
            {**sentences[0], "id": "t1", "gold_label": "stereo"},
            {**sentences[1], "id": "t2"},
            {**sentences[2], "id": "t3"},
        ],
    }
    lines = json.dumps({"version": "1.0", "data": {"intrasentence": [good, bad], "intersentence": []}}, indent=1)
    wrong = tmp_path / "test.json"
    wrong.write_text(lines, encoding="utf-8")
    line = next(n for n, t in enumerate(lines.splitlines(), start=1) if '"e2"' in t)
    text = message(invoke(runner, "evaluate", str(wrong), "--kind", "stereoset", "--model", "x"))
    assert (
        f"test.json:{line}: data.intrasentence[1].sentences[0].gold_label: example 'e2': unknown gold label "
        "'stereo' (one of stereotype, anti-stereotype, unrelated)"
    ) in text
