"""`workbench import` streams (issue 54 item 1): a CrowS-Pairs-layout file becomes one Parquet table
of its items under templates/, read a chunk at a time, instead of one YAML record per item. The
items are those the YAML import made (same ids, same fields, same rows after `run`); an
interrupted import leaves nothing; memory does not grow with the file; a problem names file, field
and line, in the published file or in the table; hand-written YAML is read beside the table.
Sentences are generated here; none is from the dataset."""

from __future__ import annotations

import csv
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from support.renewal import CROWS_HEADER

from workbench.core.errors import InputError, TemplateError

BIAS = ["age", "gender", "religion", "disability"]
GROUPS = [("tall people", "short people"), ("night workers", "day workers"), ("painters", "plumbers")]
VERBS = ["forget", "enjoy", "avoid", "repair", "collect"]
THINGS = ["old maps", "blue kettles", "paper kites", "spare keys"]


def synthetic_rows(n: int, seed: int = 0) -> list[list[str]]:
    """n CrowS-Pairs-layout rows of our own (index, two sentences, direction, bias type, annotations,
    writer, annotators), each pair's sentences differing in the group only."""
    import random

    rng = random.Random(seed)
    rows = []
    for i in range(n):
        a, b = rng.choice(GROUPS)
        rest = f"{rng.choice(VERBS)} {rng.choice(THINGS)} number {i} ."
        t = BIAS[i % len(BIAS)]
        votes = [[t] if rng.random() < 0.8 else [] for _ in range(3)]
        rows.append(
            [
                str(i),
                f"{a.capitalize()} {rest}",
                f"{b.capitalize()} {rest}",
                "stereo" if rng.random() < 0.8 else "antistereo",
                t,
                str(votes),
                f"a{rng.randrange(50)}",
                str([f"a{rng.randrange(50)}" for _ in range(3)]),
            ]
        )
    return rows


def write_csv(path: Path, rows: list[list[str]], delimiter: str = ",") -> Path:
    with open(path, "w", encoding="utf-8", newline="") as f:
        csv.writer(f, delimiter=delimiter).writerows([CROWS_HEADER, *rows])
    return path


def quirky_rows(short: bool = True) -> list[list[str]]:
    """Synthetic rows with the published file's quirks: ids out of order and one padded with
    spaces, a direction written ' Stereo', a double space, empty cells, a row one cell short
    (`short`: which pyarrow's reader refuses, so the import reads the file row by row)."""
    rows = synthetic_rows(12, seed=3)
    rows[0][0] = "11 "
    rows[1][3] = " Stereo"
    rows[2][1] = rows[2][1].replace(" ", "  ", 1)
    rows[3][5] = ""
    rows[4][6] = ""
    if short:
        rows[5] = rows[5][:-1]
    rows[6][0], rows[7][0] = rows[7][0], rows[6][0]
    return rows


def old_import(path: Path) -> dict[str, str]:
    """The import as it was before tables (main f70768c): one YAML template file per bias type."""
    from workbench.authoring.renew import csv_layout, published_entry, published_files
    from workbench.kinds.crows_pairs.data import find_column
    from workbench.kinds.crows_pairs.evaluate import REQUIRED, load

    pairs = load(str(path), strict=True)
    table = pairs.table
    id_col = find_column(table.columns, "id", "pair_id", "")
    read = {find_column(table.columns, n) for n in REQUIRED}
    direction_col, type_col = find_column(table.columns, "stereo_antistereo"), find_column(table.columns, "bias_type")
    layout = csv_layout(path, id_col)
    groups: dict[str, list] = {}
    for i in range(len(table.rows)):
        entry = published_entry(
            table,
            i,
            id_col,
            read,
            {"more": pairs.sent_more[i], "less": pairs.sent_less[i], "direction": pairs.direction[i]},
        )
        if layout is not None:
            row = table.rows[i]
            raw = {
                c: row[c]
                for c, value in (
                    (direction_col, pairs.direction[i]),
                    (type_col, pairs.bias_type[i]),
                    (id_col, entry["id"]),
                )
                if c is not None and row[c] != value
            }
            entry = {**entry, "position": i, **({"source": {**entry.get("source", {}), **raw}} if raw else {})}
        groups.setdefault(pairs.bias_type[i], []).append(entry)
    return published_files(
        "workbench-crows-pairs/1", path, groups, lambda g: {"bias_type": g, **({"layout": layout} if layout else {})}
    )


def _import(source: Path, out: Path) -> dict:
    from workbench import kinds
    from workbench.authoring.renew import import_project

    return import_project(kinds.get("crows-pairs"), source, out, name="renewed", origin={"name": "synthetic"})


def _stages(project: Path, *names: str) -> dict[str, list[dict]]:
    from workbench.core.config import load_config
    from workbench.kinds import pipeline_for

    pipeline = pipeline_for(load_config(project / "workbench.toml"))
    pipeline.run(names[-1])
    return {n: pipeline.workspace.read(n).to_pylist() for n in names}


@pytest.mark.parametrize("delimiter", [",", "\t"])
@pytest.mark.parametrize("short", [False, True], ids=["quick", "row-by-row"])
def test_the_table_gives_the_items_the_yaml_import_gave(tmp_path, delimiter, short):
    source = write_csv(tmp_path / "pairs.csv", quirky_rows(short), delimiter)
    done = _import(source, tmp_path / "new")
    assert done["files"] == ["pairs.parquet"] and done["rows"] == 12
    assert sorted(p.name for p in (tmp_path / "new" / "templates").iterdir()) == ["pairs.parquet"]
    old = tmp_path / "old"
    (old / "templates").mkdir(parents=True)
    for name, text in old_import(source).items():
        (old / "templates" / name).write_text(text, encoding="utf-8")
    (old / "workbench.toml").write_text((tmp_path / "new" / "workbench.toml").read_text(encoding="utf-8"))

    from workbench.authoring.stages import template_sources

    def files(project: Path) -> dict:
        return {raw.data["id"]: raw.data for raw, _ in template_sources([project / "templates"])[1]}

    assert files(tmp_path / "new") == files(old)  # every field of every entry, every file's own fields
    new, before = _stages(tmp_path / "new", "expand", "queue"), _stages(old, "expand", "queue")
    assert new == before  # the same rows after `run`: ids, texts, details, records, entries, queue order
    assert {r["item_id"] for r in new["queue"]} == {r[0].strip() for r in quirky_rows(short)}


def test_run_reads_hand_written_yaml_beside_the_table_and_refuses_a_template_id_twice(tmp_path):
    project = tmp_path / "p"
    _import(write_csv(tmp_path / "pairs.csv", synthetic_rows(8)), project)
    extra = project / "templates" / "mine.yaml"
    extra.write_text(
        "format: workbench-crows-pairs/1\nid: hand-written\nbias_type: age\n"
        "pairs:\n  - {more: Old cooks burn the rice ., less: Young cooks burn the rice .}\n",
        encoding="utf-8",
    )
    rows = _stages(project, "expand")["expand"]
    assert len(rows) == 9 and {r["template_id"] for r in rows} == {*BIAS, "hand-written"}
    extra.write_text(extra.read_text(encoding="utf-8").replace("id: hand-written", "id: age"), encoding="utf-8")
    with pytest.raises(TemplateError) as caught:
        _stages(project, "expand")
    (problem,) = [p for p in caught.value.problems if "also used" in p.message]
    assert problem.file.endswith("templates/pairs.parquet") and problem.message.endswith("templates/mine.yaml")


def test_a_problem_in_the_table_names_the_table_its_row_and_the_field(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    project = tmp_path / "p"
    _import(write_csv(tmp_path / "pairs.csv", synthetic_rows(8)), project)
    path = project / "templates" / "pairs.parquet"
    table = pq.read_table(path)
    more = table["more"].to_pylist()
    more[5] = " "
    table = table.set_column(table.schema.get_field_index("more"), "more", pa.array(more))
    pq.write_table(table, path)  # as someone might edit it by hand (the metadata kept)
    with pytest.raises(TemplateError) as caught:
        _stages(project, "expand")
    (problem,) = caught.value.problems
    assert (problem.file, problem.line, problem.field) == (str(path), 6, "pairs[1].more")
    assert problem.message == "more is empty"


def test_a_problem_in_the_file_names_its_line_and_nothing_is_written(tmp_path):
    rows = synthetic_rows(50)
    rows[41][3] = "sterio"
    rows[47][1] = ""
    source = write_csv(tmp_path / "pairs.csv", rows)
    from workbench.kinds.crows_pairs import data

    data.CHUNK_ROWS, chunk = 10, data.CHUNK_ROWS  # the problems are in the last chunks, read after others were written
    try:
        with pytest.raises(InputError) as caught:
            _import(source, tmp_path / "out")
    finally:
        data.CHUNK_ROWS = chunk
    assert str(caught.value).startswith(f"2 problem(s) in {source}")
    lines = [str(p) for p in caught.value.problems]
    assert lines == [
        f"{source}:43: row 42, column 'stereo_antistereo': 'sterio' is not one of: stereo, antistereo",
        f"{source}:49: row 48, column 'sent_more': empty sentence",
    ]
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("where", [1, 30])
def test_an_unclosed_quote_is_named_by_its_line_as_read_csv_names_it(tmp_path, where):
    from workbench.kinds.crows_pairs import data

    rows = [[*r[:5], "none", r[6], "none"] for r in synthetic_rows(40)]  # no quoted cell: the quote runs to the end
    rows[where - 1][1] = '"' + rows[where - 1][1]
    source = tmp_path / "pairs.csv"
    source.write_text("\n".join(",".join(r) for r in [CROWS_HEADER, *rows]) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as whole:
        data.read_csv(source)
    data.CHUNK_ROWS, chunk = 7, data.CHUNK_ROWS
    try:
        with pytest.raises(InputError) as caught:
            _import(source, tmp_path / "out")
    finally:
        data.CHUNK_ROWS = chunk
    assert str(caught.value) == str(whole.value) and f"{source}:{where + 1}: a quoted field opens" in str(whole.value)
    assert not (tmp_path / "out").exists()


STOP_AFTER_FIRST_CHUNK = """
import os, sys
import pyarrow.parquet as pq
from workbench.cli.main import main
from workbench.kinds.crows_pairs import authoring, data

data.CHUNK_ROWS, authoring.QUICK_BLOCK = 100, 1 << 14
how, source, out = int(sys.argv[1]), sys.argv[2], sys.argv[3]
write = pq.ParquetWriter.write_table

def write_then_stop(self, *args, **kw):
    write(self, *args, **kw)
    os.kill(os.getpid(), how)  # Ctrl-C (or a kill) once the first row group is written

pq.ParquetWriter.write_table = write_then_stop
sys.argv = ["workbench", "import", source, "--kind", "crows-pairs", "--out", out]
main()
"""


@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGKILL], ids=["ctrl-c", "kill"])
def test_an_interrupted_import_leaves_nothing(tmp_path, how):
    from workbench.authoring.files import find_tables

    source = write_csv(tmp_path / "pairs.csv", synthetic_rows(1000))
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-c", STOP_AFTER_FIRST_CHUNK, str(int(how)), str(source), str(out)],
        cwd=tmp_path,
        text=True,
        capture_output=True,
        env={**os.environ, "WORKBENCH_PROGRESS": "0"},
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        timeout=600,
    )
    assert not (out / "workbench.toml").exists()
    if how == signal.SIGINT:  # the table being written is removed, and the folders import made
        assert proc.returncode == 130 and "Traceback" not in proc.stderr, proc.stderr
        assert not out.exists()
    else:  # killed outright: only the hidden partial file is left, which no reader takes for a table
        assert proc.returncode == -signal.SIGKILL
        assert [p.name for p in (out / "templates").iterdir()] == [".pairs.parquet.partial"]
        assert find_tables([out / "templates"]) == []
        done = _import(source, out)  # the import run again takes the folder, the partial file gone
        assert done["rows"] == 1000
        assert sorted(p.name for p in (out / "templates").iterdir()) == ["pairs.parquet"]


def test_memory_does_not_grow_with_the_file(tmp_path):
    import tracemalloc

    from workbench.kinds.crows_pairs import authoring, data

    peaks = {}
    data.CHUNK_ROWS, chunk = 1000, data.CHUNK_ROWS
    authoring.QUICK_BLOCK, block = 1 << 16, authoring.QUICK_BLOCK  # 64 KiB read at a time: about 250 rows
    try:
        for n in (100, 5000, 20000):  # 100 first: the modules an import loads are not counted in the others
            source = write_csv(tmp_path / f"pairs{n}.csv", synthetic_rows(n))
            tracemalloc.start()
            _import(source, tmp_path / f"out{n}")
            peaks[n] = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
    finally:
        data.CHUNK_ROWS, authoring.QUICK_BLOCK = chunk, block
    # four times the rows, about the same peak (2.2 MB both); read whole, as before, 26 MB and 99 MB
    assert peaks[20000] < 1.3 * peaks[5000], peaks
