"""What `workbench evaluate` (and a release's evaluate.py) does with the files it is told to
write: an output that is an input, or another output, is refused before any model loads, as
is a folder that cannot be made; writes are atomic and leave nothing behind; a device or FIFO
is written through, never renamed over; --items is written in the format its extension names,
always with a `model` column."""

from __future__ import annotations

import csv
import json
import os
import shutil
import stat
import threading
from pathlib import Path

import pytest
from conftest import invoke
from test_standalone_evaluator import run_standalone
from test_standalone_honest import lexicon_in


@pytest.fixture
def crows(releases, tmp_path, monkeypatch) -> Path:
    """A copy of the CrowS-Pairs example release in the working directory (tmp_path)."""
    monkeypatch.chdir(tmp_path)
    shutil.copytree(releases("crows-pairs"), tmp_path / "release")
    return tmp_path / "release"


@pytest.fixture
def model(fixture_models, tmp_path) -> Path:
    """A copy of the tiny masked LM, so a refusal that failed could not damage the session's."""
    return Path(shutil.copytree(fixture_models["mlm-bert"], tmp_path / "mlm"))


@pytest.fixture
def never_scored(monkeypatch) -> list:
    """Model loading recorded (and stopped): a refusal must come before any of it."""
    import workbench.models.lm_loading as lm_loading

    loaded: list = []

    def load_scorer(name, **kw):
        loaded.append(name)
        raise AssertionError(f"a model was loaded ({name}) although an output was refused")

    monkeypatch.setattr(lm_loading, "load_scorer", load_scorer)
    return loaded


def evaluate(*args):
    from typer.testing import CliRunner

    return invoke(CliRunner(), "evaluate", *map(str, args))


def refused(result, *words) -> str:
    """Exit code 2 with one line naming the problem, no traceback."""
    message = str(result.exception)
    assert result.exit_code == 2, (result.output, result.exception)
    assert "Traceback" not in result.output and "\n" not in message, message
    for word in words:
        assert word in message, message
    return message


def leftovers(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.name.endswith((".tmp", ".probe"))]


# -- an output that is an input ------------------------------------------------------------------
def test_csv_naming_the_dataset_file_is_refused_and_the_file_kept(crows, model, never_scored, tmp_path):
    public = tmp_path / "pairs.csv"
    shutil.copy(crows / "data" / "pairs.csv", public)
    before = public.read_bytes()
    result = evaluate(public, "--kind", "crows-pairs", "--model", model, "--csv", public)
    refused(result, "--csv pairs.csv", "that is the data set pairs.csv")
    assert public.read_bytes() == before and not never_scored


@pytest.mark.parametrize("where", ["data/pairs.csv", "manifest.json", "scores.json"])
def test_json_inside_the_release_folder_being_scored_is_refused(crows, model, never_scored, where):
    before = {p: p.read_bytes() for p in crows.rglob("*") if p.is_file()}
    result = evaluate(crows, "--model", model, "--json", crows / where)
    refused(result, "--json release/" + where, "the data set folder release")
    assert {p: p.read_bytes() for p in crows.rglob("*") if p.is_file()} == before and not never_scored


def test_json_naming_the_model_config_is_refused_and_the_config_kept(crows, model, never_scored):
    before = (model / "config.json").read_bytes()
    result = evaluate(crows, "--model", model, "--json", model / "config.json")
    refused(result, "--json mlm/config.json", "inside the model folder mlm")
    assert (model / "config.json").read_bytes() == before and not never_scored


def test_plots_into_the_model_folder_is_refused(crows, model, never_scored):
    refused(evaluate(crows, "--model", model, "--plots", model / "charts"), "--plots mlm/charts", "the model folder")
    assert not (model / "charts").exists()


def test_csv_naming_the_score_cache_is_refused(crows, model, never_scored, tmp_path):
    cache = tmp_path / "scores.sqlite"
    refused(
        evaluate(crows, "--model", model, "--cache", cache, "--csv", "scores.sqlite"),
        "--csv scores.sqlite",
        "the score cache",
    )
    assert not cache.exists()


def test_items_naming_the_lexicon_is_refused(releases, model, never_scored, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    lexicon = lexicon_in(tmp_path / "lx")
    before = lexicon.read_bytes()
    refused(
        evaluate(releases("honest"), "--model", model, "--lexicon", lexicon, "--items", "lx/lexicon.tsv"),
        "--items lx/lexicon.tsv",
        "the --lexicon file",
    )
    assert lexicon.read_bytes() == before


def test_json_naming_the_predictions_file_is_refused(tmp_path, monkeypatch):
    from workbench.kinds.stereoset.example import write_example

    monkeypatch.chdir(tmp_path)
    data = write_example(tmp_path / "ss")
    predictions = tmp_path / "predictions.json"
    predictions.write_text("{}", encoding="utf-8")
    refused(
        evaluate(data, "--predictions", predictions, "--json", predictions),
        "--json predictions.json",
        "the --predictions file",
    )
    assert predictions.read_text(encoding="utf-8") == "{}"


def test_json_through_a_symlink_to_the_dataset_is_refused(crows, model, never_scored, tmp_path):
    (tmp_path / "link.json").symlink_to(crows / "data" / "pairs.csv")
    refused(evaluate(crows, "--model", model, "--json", "link.json"), "--json link.json", "the data set folder")


# -- two outputs on one path -----------------------------------------------------------------------
@pytest.mark.parametrize(
    "args, words",
    [
        (["--json", "out.x", "--csv", "out.x"], ["--json and --csv both name out.x"]),
        (["--csv", "m.csv", "--items", "m.csv"], ["--csv and --items both name m.csv"]),
        (["--json", "p", "--plots", "p"], ["--json and --plots both name p"]),
        (
            ["--csv", "m.csv", "--json", "m.csv.provenance.json"],
            ["--json and the provenance file beside --csv both name m.csv.provenance.json"],
        ),
    ],
)
def test_two_outputs_on_one_path_are_refused(crows, model, never_scored, tmp_path, args, words):
    refused(evaluate(crows, "--model", model, *args), *words)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(("out", "m.csv", "p"))]


def test_two_versions_whose_own_json_would_be_a_given_output_are_refused(crows, model, never_scored, tmp_path):
    """Each version's JSON is written beside the comparison's (scores.<version>.json)."""
    shutil.copytree(crows, tmp_path / "again")
    refused(
        evaluate(crows, "again", "--model", model, "--json", "scores.json", "--csv", "scores.1.0.0.json"),
        "--csv and --json for 1.0.0 both name scores.1.0.0.json",
    )


# -- a folder that cannot be written -------------------------------------------------------------------
def test_json_folder_blocked_by_a_file_is_refused_before_scoring(crows, model, never_scored, tmp_path):
    (tmp_path / "results").write_text("a file, not a folder\n", encoding="utf-8")
    refused(
        evaluate(crows, "--model", model, "--json", "results/run1/scores.json"),
        "--json results/run1/scores.json",
        "cannot create the folder results/run1",
        "results is a file",
    )
    assert not never_scored and not leftovers(tmp_path)


def test_plots_folder_blocked_is_refused_before_the_json_is_written(crows, model, never_scored, tmp_path):
    (tmp_path / "charts").write_text("a file, not a folder\n", encoding="utf-8")
    refused(
        evaluate(crows, "--model", model, "--json", "scores.json", "--plots", "charts"),
        "--plots charts",
        "is a file, not a folder",
    )
    assert not (tmp_path / "scores.json").exists() and not never_scored


def test_json_naming_a_folder_is_refused(crows, model, never_scored, tmp_path):
    (tmp_path / "out").mkdir()
    refused(evaluate(crows, "--model", model, "--json", "out"), "--json out", "is a folder")


def test_json_into_a_new_folder_makes_the_folder(crows, model, tmp_path):
    result = evaluate(crows, "--model", model, "--json", "deep/er/scores.json", "--cache", "c.sqlite")
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "deep/er/scores.json").read_text(encoding="utf-8"))["kind"] == "crows-pairs"
    assert not leftovers(tmp_path)


def test_unknown_items_extension_is_refused_before_scoring(crows, model, never_scored):
    refused(
        evaluate(crows, "--model", model, "--items", "items.xlsx"),
        "--items items.xlsx",
        "unknown format .xlsx",
        ".parquet",
    )


# -- devices and FIFOs are written through ---------------------------------------------------------------
def test_json_to_a_fifo_is_written_through(crows, model, tmp_path):
    fifo = tmp_path / "scores.fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    result = evaluate(crows, "--model", model, "--json", fifo, "--cache", "c.sqlite")
    reader.join(timeout=60)
    assert result.exit_code == 0, result.output
    assert json.loads(got[0])["kind"] == "crows-pairs"
    assert stat.S_ISFIFO(os.stat(fifo).st_mode) and not leftovers(tmp_path)


def test_json_and_csv_to_dev_null_leave_dev_null_a_device(crows, model, tmp_path):
    from workbench.core.outputs import writes_through

    null = Path("/dev/null")
    assert stat.S_ISCHR(os.stat(null).st_mode)
    # Guard: only a writer that writes /dev/null through may be run on it (a rename would replace it).
    assert writes_through(null), "the writer would rename over /dev/null: not running the command"
    result = evaluate(crows, "--model", model, "--json", null, "--csv", null, "--cache", "c.sqlite")
    assert result.exit_code == 0, result.output
    assert stat.S_ISCHR(os.stat(null).st_mode)
    assert not (tmp_path / "null.provenance.json").exists() and not Path("/dev/null.provenance.json").exists()


def test_json_to_dev_stdout_is_printed_and_dev_stdout_stays_a_link(crows, model, capfd):
    from workbench.core.outputs import writes_through

    link = Path("/dev/stdout")
    assert link.is_symlink()
    assert writes_through(link), "the writer would rename over /dev/stdout: not running the command"
    result = evaluate(crows, "--model", model, "--json", link, "--cache", "c.sqlite")
    assert result.exit_code == 0, result.output
    assert '"kind": "crows-pairs"' in capfd.readouterr().out and link.is_symlink()


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    from workbench.core import outputs

    target = tmp_path / "scores.json"
    target.write_text("old\n", encoding="utf-8")

    def broken(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(outputs.os, "replace", broken)
    with pytest.raises(OSError):
        outputs.atomic_write_text(target, "new\n")
    assert target.read_text(encoding="utf-8") == "old\n" and not list(tmp_path.glob(".*tmp"))


def test_a_symlinked_output_stays_a_link_to_the_new_file(tmp_path):
    from workbench.core.outputs import atomic_write_text

    real = tmp_path / "kept" / "scores.json"
    real.parent.mkdir()
    real.write_text("old\n", encoding="utf-8")
    (tmp_path / "scores.json").symlink_to(real)
    atomic_write_text(tmp_path / "scores.json", "new\n")
    assert (tmp_path / "scores.json").is_symlink() and real.read_text(encoding="utf-8") == "new\n"


# -- --items: the format its extension names, always a `model` column ---------------------------------
def read_items(path: Path) -> list[dict]:
    """The rows as the file's own format reads them (a Parquet file that is not Parquet fails)."""
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        return pq.read_table(path).to_pylist()
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def kind_args(kind: str, releases, fixture_models, tmp_path: Path) -> tuple[list, str]:
    """(the evaluate arguments, the one model named) for each kind that writes --items."""
    if kind == "stereoset":
        from workbench.kinds.stereoset.example import write_example

        source, extra = write_example(tmp_path / "ss"), []
    else:
        source = releases(kind)
        extra = ["--lexicon", lexicon_in(tmp_path / "lx"), "--top-k", "5"] if kind == "honest" else []
    model = str(fixture_models["clm-gpt2" if kind == "sofa" else "mlm-bert"])
    return [source, "--model", model, *extra], model


@pytest.mark.parametrize("kind", ["crows-pairs", "sos", "honest", "sofa", "stereoset"])
def test_items_is_written_in_the_format_its_extension_names_with_a_model_column(
    kind, releases, fixture_models, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    args, model = kind_args(kind, releases, fixture_models, tmp_path)
    found = {}
    for ext in ("parquet", "jsonl", "csv"):
        result = evaluate(*args, "--items", f"items.{ext}", "--cache", "c.sqlite")
        assert result.exit_code == 0, (result.output, result.exception)
        rows = read_items(tmp_path / f"items.{ext}")
        assert rows and all(r["model"] == model for r in rows), rows[:2]
        assert (tmp_path / f"items.{ext}.provenance.json").is_file()
        found[ext] = rows
    assert len(found["parquet"]) == len(found["jsonl"]) == len(found["csv"])
    assert list(found["csv"][0])[0] == "model" and list(found["parquet"][0]) == list(found["jsonl"][0])
    assert not leftovers(tmp_path)


# -- a release's evaluate.py -----------------------------------------------------------------------------
def test_standalone_json_naming_its_own_data_file_is_refused(crows, fixture_models):
    before = (crows / "data" / "pairs.csv").read_bytes()
    ran = run_standalone(
        crows / "evaluate.py", ["--model", str(fixture_models["mlm-bert"]), "--json", "data/pairs.csv"], cwd=crows
    )
    assert ran.returncode == 2, ran.stderr[-2000:]
    lines = ran.stderr.strip().splitlines()
    assert lines[-1].startswith("evaluate.py: error: --json data/pairs.csv") and "the release file" in lines[-1]
    assert "Traceback" not in ran.stderr and "wrote" not in ran.stdout
    assert (crows / "data" / "pairs.csv").read_bytes() == before


def test_standalone_json_folder_blocked_is_refused_before_scoring(crows, fixture_models, tmp_path):
    (tmp_path / "results").write_text("a file\n", encoding="utf-8")
    ran = run_standalone(
        crows / "evaluate.py",
        ["--model", str(fixture_models["mlm-bert"]), "--json", str(tmp_path / "results" / "scores.json")],
        cwd=tmp_path,
    )
    assert ran.returncode == 2, ran.stderr[-2000:]
    assert "cannot create the folder" in ran.stderr and "Traceback" not in ran.stderr
    assert "50 = unbiased" not in ran.stdout  # nothing was scored: no table printed
    assert not leftovers(tmp_path)
