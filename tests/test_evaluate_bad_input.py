"""`workbench evaluate` checks every input before any model scores anything (#47): each mistake
here once gave a traceback, or a wrong number with exit code 0, and is now one line, exit code 2,
with nothing written. Broken models are copies of a fixture model, damaged in tmp_path."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest
from conftest import invoke

from workbench.core.errors import WorkbenchError
from workbench.models import lm_scoring


@pytest.fixture
def pairs(tmp_path) -> Path:
    from workbench.kinds.crows_pairs.example import write_example

    return write_example(tmp_path / "data")


@pytest.fixture
def good(fixture_models) -> str:
    return str(fixture_models["mlm-bert"])


def copy_model(fixture_models, tmp_path, name: str = "mlm-bert") -> Path:
    return Path(shutil.copytree(fixture_models[name], tmp_path / f"broken-{name}"))


def refused(runner, tmp_path, *args: str) -> str:
    """Run `workbench evaluate ARGS --json OUT`; assert it stopped with one line, exit code 2,
    no traceback, no forward pass and no output; return the line."""
    out = tmp_path / "out" / "scores.json"
    before = lm_scoring.CALLS["forward"]
    result = invoke(runner, "evaluate", *args, "--json", str(out))
    assert result.exit_code == 2, result.output + repr(result.exception)
    assert isinstance(result.exception, WorkbenchError), repr(result.exception)
    message = str(result.exception)
    assert "\n" not in message and "Traceback" not in result.output + message, message
    assert lm_scoring.CALLS["forward"] == before, "a model scored before the input was refused"
    assert not out.exists()
    return message


# -- models ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["mlm-bert", "clm-gpt2"])
def test_a_model_folder_without_tokenizer_files_is_refused_before_scoring(
    fixture_models, pairs, good, tmp_path, runner, monkeypatch, name
):
    """transformers 5 builds an empty tokenizer from such a folder (every word unknown, or no
    token at all), which scored 0.0 / 13.3 with exit code 0; a good model named first does not
    score either."""
    broken = copy_model(fixture_models, tmp_path, name)
    for f in broken.glob("tokenizer*"):
        f.unlink()
    monkeypatch.chdir(tmp_path)
    line = refused(runner, tmp_path, str(pairs), "--model", good, "--model", "./" + broken.name)
    assert f"model folder './{broken.name}'" in line and "tokenizer files are missing or broken" in line
    assert "it has none of tokenizer.json" in line


def test_the_standalone_script_refuses_a_model_folder_without_tokenizer_files(releases, fixture_models, tmp_path):
    from test_standalone_evaluator import run_standalone

    broken = copy_model(fixture_models, tmp_path)
    for f in broken.glob("tokenizer*"):
        f.unlink()
    out = tmp_path / "scores.json"
    ran = run_standalone(
        releases("crows-pairs") / "evaluate.py", ["--model", str(broken), "--json", str(out)], cwd=tmp_path
    )
    assert ran.returncode == 2 and "Traceback" not in ran.stderr, ran.stderr[-2000:]
    last = ran.stderr.strip().splitlines()[-1]
    assert last.startswith("evaluate.py: error: model folder") and "tokenizer files are missing or broken" in last
    assert not out.exists()


def test_a_cut_short_model_safetensors_is_refused_naming_the_file(fixture_models, pairs, tmp_path, runner):
    broken = copy_model(fixture_models, tmp_path)
    weights = broken / "model.safetensors"
    with open(weights, "r+b") as f:
        f.truncate(weights.stat().st_size // 2)
    line = refused(runner, tmp_path, str(pairs), "--model", str(broken))
    assert f"{weights} is cut short" in line and "download or copy the checkpoint again" in line


def test_a_config_whose_vocab_size_differs_from_the_weights_is_refused(fixture_models, pairs, tmp_path, runner):
    broken = copy_model(fixture_models, tmp_path)
    config = json.loads((broken / "config.json").read_text(encoding="utf-8"))
    rows = config["vocab_size"]
    config["vocab_size"] = rows + 7
    (broken / "config.json").write_text(json.dumps(config), encoding="utf-8")
    line = refused(runner, tmp_path, str(pairs), "--model", str(broken))
    assert f"config.json says vocab_size {rows + 7}" in line and f"have {rows:,} rows" in line
    assert "model.safetensors" in line and "not of one checkpoint" in line


def test_a_model_path_that_is_a_file_is_refused_as_a_file(fixture_models, pairs, tmp_path, runner):
    named = str(fixture_models["mlm-bert"] / "config.json")
    line = refused(runner, tmp_path, str(pairs), "--model", named)
    assert f"model path {named!r} is a file, not a model folder" in line and "does not exist" not in line


@pytest.mark.parametrize("flag", ["--load-in-8bit", "--load-in-4bit"])
def test_8bit_or_4bit_without_a_cuda_gpu_says_it_needs_one(
    fixture_models, pairs, good, tmp_path, runner, monkeypatch, flag
):
    """Not 'install bitsandbytes': installed, it could not quantize on the CPU either."""
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    line = refused(runner, tmp_path, str(pairs), "--model", good, flag, "--no-cache")
    assert line.startswith(f"{flag} needs a CUDA GPU") and "there is none here" in line and "bitsandbytes" in line
    assert "pip install" not in line


# -- interval options ------------------------------------------------------------------------------
def test_a_negative_seed_is_refused_with_the_valid_range(pairs, good, tmp_path, runner):
    line = refused(runner, tmp_path, str(pairs), "--model", good, "--seed", "-1")
    assert line == "--seed must be a whole number from 0 to 4294967295 (got -1)"


def test_a_bootstrap_count_that_would_not_fit_in_memory_is_refused_with_the_maximum(pairs, good, tmp_path, runner):
    line = refused(runner, tmp_path, str(pairs), "--model", good, "--bootstrap", "2000000000")
    assert line.startswith("--bootstrap 2,000,000,000: at most 100,000 resamples") and "in memory" in line


def test_a_single_bootstrap_resample_is_refused_with_the_minimum_and_why(pairs, good, tmp_path, runner):
    """One resample gave '43.3 [50.0, 50.0]': an interval that does not hold its own estimate."""
    line = refused(runner, tmp_path, str(pairs), "--model", good, "--bootstrap", "1")
    assert "give at least 100" in line and "may not even hold the estimate" in line and "0 turns intervals off" in line


def test_a_ci_level_given_in_percent_is_refused(pairs, good, tmp_path, runner):
    line = refused(runner, tmp_path, str(pairs), "--model", good, "--ci-level", "95")
    assert line == "--ci-level must lie between 0 and 1, e.g. 0.95 (got 95.0)"


def test_every_caller_of_the_interval_settings_gets_the_same_checks():
    from workbench.evaluation.intervals import MAX_RESAMPLES, MIN_RESAMPLES, Settings

    assert Settings().problem() is None and Settings(resamples=0).problem() is None
    assert Settings(resamples=MIN_RESAMPLES).problem() is None and Settings(resamples=MAX_RESAMPLES).problem() is None
    for bad in (
        Settings(resamples=MIN_RESAMPLES - 1),
        Settings(resamples=MAX_RESAMPLES + 1),
        Settings(seed=-1),
        Settings(seed=2**32),
        Settings(level=1.0),
        Settings(level=float("nan")),
    ):
        assert bad.problem(), bad


# -- the score cache ---------------------------------------------------------------------------------
def test_a_cache_that_is_a_folder_is_refused(pairs, good, tmp_path, runner):
    folder = tmp_path / "cachedir"
    folder.mkdir()
    line = refused(runner, tmp_path, str(pairs), "--model", good, "--cache", str(folder))
    assert line.startswith(f"score cache {folder} is a folder; name a file") and list(folder.iterdir()) == []


def test_a_cache_file_that_is_not_sqlite_is_refused_naming_it(pairs, good, tmp_path, runner):
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes, not a cache\n", encoding="utf-8")
    line = refused(runner, tmp_path, str(pairs), "--model", good, "--cache", str(notes))
    assert line.startswith(f"score cache {notes} is not a SQLite file")
    assert notes.read_text(encoding="utf-8") == "my notes, not a cache\n"  # left as it was


def test_every_user_of_the_cache_gets_the_check(tmp_path):
    import sqlite3

    from workbench.core.cache import Cache
    from workbench.core.errors import InputError

    other = tmp_path / "app.db"
    db = sqlite3.connect(other)
    db.execute("CREATE TABLE notes (x)")
    db.commit()
    db.close()
    with pytest.raises(InputError, match=r"is a SQLite database of something else \(its tables: notes\)"):
        Cache(other)
    with pytest.raises(InputError, match="is a folder"):
        Cache(tmp_path)
    Cache(tmp_path / "new" / "models.sqlite").close()  # a new file in a new folder is fine


# -- data files ----------------------------------------------------------------------------------------
def test_a_csv_header_naming_a_column_twice_is_refused_with_both_positions(pairs, good, tmp_path, runner):
    """Another column renamed `sent_more`: the last one won silently and the file scored 100.0."""
    with open(pairs, encoding="utf-8", newline="") as f:
        rows = list(csv.reader(f))
    less = rows[0].index("sent_less")
    rows = [r + [r[less]] for r in rows]
    rows[0][-1] = "sent_more"
    more = rows[0].index("sent_more")
    with open(pairs, "w", encoding="utf-8", newline="") as f:
        csv.writer(f).writerows(rows)
    line = refused(runner, tmp_path, str(pairs), "--model", good)
    assert f"{pairs}:1: the header names column 'sent_more' twice (columns {more + 1} and {len(rows[0])})" in line


def _repeat_second_column(path: Path, delimiter: str) -> str:
    lines = path.read_text(encoding="utf-8").splitlines()
    header = lines[0].split(delimiter)
    name = header[1]
    path.write_text(
        "\n".join([lines[0] + delimiter + name] + [line + delimiter + "x" for line in lines[1:]]) + "\n",
        encoding="utf-8",
    )
    return name


@pytest.mark.parametrize("kind", ["sos", "sofa", "honest templates", "honest lexicon"])
def test_every_kinds_csv_reader_refuses_a_column_named_twice(kind, good, tmp_path, runner):
    if kind == "sos":
        from workbench.kinds.crows_pairs.example import write_example

        data, delimiter, extra = write_example(tmp_path / "data"), ",", ["--kind", "sos"]
        target = data
    elif kind == "sofa":
        from workbench.kinds.sofa.example import write_example

        data, delimiter, extra = write_example(tmp_path / "data"), ",", []
        target = data
    else:
        from workbench.kinds.honest.example import write_example

        data, lexicon = write_example(tmp_path / "data")
        delimiter, extra = "\t", ["--kind", "honest", "--lexicon", str(lexicon)]
        target = data if kind == "honest templates" else lexicon
    name = _repeat_second_column(target, delimiter)
    line = refused(runner, tmp_path, str(data), *extra, "--model", good)
    assert f":1: the header names column {name!r} twice" in line and str(target.name) in line


def test_the_standalone_readers_refuse_a_column_named_twice(tmp_path):
    from workbench.core.errors import InputError
    from workbench.release.runtime.release import read_csv_rows

    path = tmp_path / "pairs.csv"
    path.write_text("sent_more,sent_less,sent_more\na,b,c\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"names column 'sent_more' twice \(columns 1 and 3\)"):
        read_csv_rows(path)


def test_a_stereoset_json_naming_a_key_twice_is_refused_naming_the_key_and_line(good, tmp_path, runner):
    """json.loads keeps the last value of a repeated key without a word."""
    from workbench.kinds.stereoset.example import write_example

    path = write_example(tmp_path / "data")
    lines = path.read_text(encoding="utf-8").splitlines()
    at = next(i for i, line in enumerate(lines) if line.strip().startswith('"target"'))
    lines.insert(at + 1, lines[at].rstrip(",") + ",")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    opens = next(i for i in range(at, -1, -1) if lines[i].rstrip().endswith("{")) + 1
    line = refused(runner, tmp_path, str(path), "--model", good)
    assert f"{path}:{opens}: column" in line and "names key 'target' twice in one object" in line


def test_a_json_key_named_twice_is_found_with_its_object():
    from workbench.core.text import DuplicateKey, loads

    assert loads('{"a": [1, {"b": 2}], "c": {}}') == {"a": [1, {"b": 2}], "c": {}}
    with pytest.raises(DuplicateKey) as found:
        loads('{"a": 1,\n "x": {"b": 2, "b": 3}}')
    assert (found.value.key, found.value.lineno, found.value.colno) == ("b", 2, 7)


def test_a_kind_without_multiple_choice_requests_refuses_the_chat_template(fixture_models, tmp_path, runner):
    """SOFA scores perplexities, not multiple-choice requests: --apply-chat-template would change
    nothing it reads, so it is refused in one line rather than silently ignored."""
    from workbench.kinds.sofa.example import write_example

    line = refused(
        runner,
        tmp_path,
        str(write_example(tmp_path / "data")),
        "--model",
        str(fixture_models["clm-gpt2"]),
        "--apply-chat-template",
    )
    assert line.startswith("--apply-chat-template: kind sofa's models answer no multiple-choice requests"), line
    assert line.endswith("leave it out"), line  # SOFA generates nothing: no --chat-template to point to
