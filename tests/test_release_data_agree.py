"""A release that holds its table twice (the CSV or TSV its kind's evaluator reads, and a Parquet
of the same name for the Hub's viewer) is scored only when both copies are sound and agree
(issue 47): `workbench evaluate` and the release's own evaluate.py refuse a corrupt or emptied
Parquet, and a CSV that no longer says what the Parquet says, before any model loads, in one
line naming the files (and the first differing row and column).

Each bad release is a copy of a real build with one file changed and its manifest hash updated
to match, so the manifest check alone would let it through."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from test_release_paths import one_line_refusal, workbench
from test_standalone_evaluator import run_standalone

MODEL = "mlm-bert"
# kind -> (its public copy, its Parquet copy)
COPIES = {"crows-pairs": ("data/pairs.csv", "data/pairs.parquet"), "sofa": ("data/probes.csv", "data/probes.parquet")}


def copied(releases, kind: str, tmp_path: Path) -> Path:
    release = tmp_path / "release"
    shutil.copytree(releases(kind), release)
    return release


def rehash(release: Path, name: str) -> None:
    """The manifest made to list `name` as it now is (what someone hiding a change would do)."""
    manifest = json.loads((release / "manifest.json").read_text(encoding="utf-8"))
    manifest["files"][name] = hashlib.sha256((release / name).read_bytes()).hexdigest()
    (release / "manifest.json").write_text(json.dumps(manifest, indent=2), encoding="utf-8")


def evaluate(how: str, release: Path, models: dict, tmp_path: Path, *more: str):
    """Score `release` with `workbench evaluate` or with its own evaluate.py, writing scores.json in tmp_path."""
    model = str(models[MODEL])
    if how == "workbench":
        return workbench(
            "evaluate",
            release.name,
            "--model",
            model,
            "--json",
            "scores.json",
            "--cache",
            str(tmp_path / "cache.sqlite"),
            *more,
            cwd=tmp_path,
        )
    return run_standalone(release / "evaluate.py", ["--model", model, "--json", "scores.json", *more], cwd=tmp_path)


def refused(ran, tmp_path: Path, *named: str) -> str:
    """The one error line of a refused run (after --unverified's warning, where there is one); nothing written."""
    assert ran.returncode == 2, ran.stdout[-2000:] + ran.stderr[-2000:]
    line = one_line_refusal("\n".join(x for x in ran.stderr.splitlines() if not x.startswith("warning: ")), *named)
    assert "Traceback" not in ran.stderr
    assert not (tmp_path / "scores.json").exists() and not (tmp_path / "cache.sqlite").exists()
    return line


def edit_cell(path: Path, row: int, column: str, value: str) -> None:
    """Change one cell of a CSV written as the build writes it (data row `row`, from 1)."""
    rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"), newline="")))
    rows[row][rows[0].index(column)] = value
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    path.write_text(out.getvalue(), encoding="utf-8")


RUNNERS = ["workbench", "evaluate.py"]


@pytest.mark.parametrize("how", RUNNERS)
def test_a_release_whose_parquet_is_corrupt_is_refused_naming_it(how, releases, fixture_models, tmp_path):
    release = copied(releases, "crows-pairs", tmp_path)
    parquet = release / "data/pairs.parquet"
    data = parquet.read_bytes()
    parquet.write_bytes(data[: len(data) // 2] + bytes(len(data) - len(data) // 2))  # the second half zeroed
    rehash(release, "data/pairs.parquet")
    line = refused(evaluate(how, release, fixture_models, tmp_path), tmp_path, "release/data/pairs.parquet")
    assert "not a readable Parquet file" in line


@pytest.mark.parametrize("how", RUNNERS)
def test_a_release_whose_parquet_was_emptied_is_refused(how, releases, fixture_models, tmp_path):
    release = copied(releases, "crows-pairs", tmp_path)
    parquet = release / "data/pairs.parquet"
    pq.write_table(pq.read_table(parquet).slice(0, 0), parquet)  # a valid Parquet file, 0 rows
    rehash(release, "data/pairs.parquet")
    rows = len(pq.read_table(releases("crows-pairs") / "data/pairs.parquet"))
    line = refused(
        evaluate(how, release, fixture_models, tmp_path),
        tmp_path,
        "release/data/pairs.csv",
        "release/data/pairs.parquet",
    )
    assert f"holds {rows} rows but release/data/pairs.parquet holds 0" in line and "row 1" in line


@pytest.mark.parametrize("how", RUNNERS)
@pytest.mark.parametrize("kind, row, column", [("crows-pairs", 2, "sent_more"), ("sofa", 3, "identity")])
def test_a_csv_edited_in_one_cell_so_it_disagrees_with_the_parquet_is_refused(
    how, kind, row, column, releases, fixture_models, tmp_path
):
    release = copied(releases, kind, tmp_path)
    public, parquet = COPIES[kind]
    before = pq.read_table(release / parquet).to_pylist()[row - 1][column]
    edit_cell(release / public, row, column, before + " (edited)")
    rehash(release, public)
    line = refused(
        evaluate(how, release, fixture_models, tmp_path), tmp_path, f"release/{public}", f"release/{parquet}"
    )
    assert f"disagree at row {row} (line {row + 1} of the CSV), column {column!r}" in line
    assert repr(before + " (edited)") in line and repr(before) in line


@pytest.mark.parametrize("how", RUNNERS)
def test_a_folder_scored_unverified_is_checked_as_data_too(how, releases, fixture_models, tmp_path):
    """Without manifest.json (--unverified) the files cannot be checked against a release, but
    the two copies can still be checked against each other."""
    release = copied(releases, "crows-pairs", tmp_path)
    (release / "manifest.json").unlink()
    edit_cell(release / "data/pairs.csv", 1, "bias_type", "edited")
    line = refused(
        evaluate(how, release, fixture_models, tmp_path, "--unverified"),
        tmp_path,
        "release/data/pairs.csv",
        "release/data/pairs.parquet",
    )
    assert "disagree at row 1 (line 2 of the CSV), column 'bias_type'" in line


@pytest.mark.parametrize("how", RUNNERS)
def test_an_untouched_release_still_scores(how, releases, fixture_models, tmp_path):
    release = copied(releases, "crows-pairs", tmp_path)
    ran = evaluate(how, release, fixture_models, tmp_path)
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert json.loads((tmp_path / "scores.json").read_text(encoding="utf-8"))["kind"] == "crows-pairs"


def test_without_pyarrow_a_releases_evaluate_py_scores_the_csv_and_leaves_the_parquet_unchecked(
    releases, fixture_models, tmp_path
):
    """Its card installs torch, transformers and numpy: without pyarrow it cannot open the
    Parquet, so it scores the CSV it reads (hashed against the manifest) as before."""
    release = copied(releases, "crows-pairs", tmp_path)
    (release / "data/pairs.parquet").write_bytes(b"not parquet")
    rehash(release, "data/pairs.parquet")
    ran = run_standalone(
        release / "evaluate.py",
        ["--model", str(fixture_models[MODEL]), "--json", "scores.json"],
        cwd=tmp_path,
        blocked=("pyarrow",),
    )
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert (tmp_path / "scores.json").is_file()


def test_values_are_compared_as_the_build_writes_them_into_the_csv():
    """The check renders a Parquet value as authoring/stages writes it into the public file."""
    from workbench.authoring.stages import _cell
    from workbench.sources.copies import as_text

    for value in ("text", "", True, False, 0, -12, 3.5, 1e-07):
        assert as_text(value) == _cell(value)
    assert as_text(None) == ""  # the build writes a missing value as an empty cell
