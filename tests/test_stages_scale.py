"""The stages after `workbench import` at scale (issue 54): the queue is grouped in Arrow rather than
one dict per row, expand reads one template file at a time, build --original writes the published
layout a chunk of rows at a time, a release's rows are not copied to take machine paths out of
them. Outputs are those of the row-by-row code; sizes here are small (benchmarks/bench_stages_scale.py
measures 10K to 1M rows). Sentences are generated here; none is from the dataset."""

from __future__ import annotations

import pyarrow as pa
from test_import_stream import _import, synthetic_rows, write_csv


def _expand_table(rows: list[tuple[str, str, str]]):
    """An expand table of (item_id, domain, template_id) rows, the other columns made from them."""
    from workbench.authoring.stages import expand_schema

    return pa.Table.from_pylist(
        [
            {
                "row_id": f"r{k}",
                "item_id": item,
                "hypothesis": f"text of {item}",
                "template_id": template,
                "domain": domain,
                "subtopic": template,
                "details": [{"label": "row", "text": str(k)}],
                "record": "{}",
                "entry": f"pairs[{k}]#0 in {template}",
                "order": k,
            }
            for k, (item, domain, template) in enumerate(rows)
        ],
        schema=expand_schema(),
    )


def test_the_queue_keeps_each_items_first_row_its_row_count_and_its_domains_in_the_order_met():
    from workbench.authoring.stages import Queue, queue_schema

    expand = _expand_table(
        [
            ("b", "zebra", "t1"),  # b's first row: its domains start with zebra, though apple sorts first
            ("a", "zebra", "t1"),
            ("b", "apple", "t2"),
            ("c", "apple", "t2"),
            ("b", "zebra", "t3"),  # zebra again: not listed twice
            ("a", "zebra", "t3"),
        ]
    )
    queue = Queue()
    out = queue.compute(None, {"expand": expand}, set()).table
    assert out.schema == queue_schema()
    got = out.to_pylist()
    assert [r["item_id"] for r in got] == ["b", "a", "c"]
    assert [r["position"] for r in got] == [0, 1, 2]
    assert [r["n_samples"] for r in got] == [3, 2, 1]
    assert [r["domains"] for r in got] == [["zebra", "apple"], ["zebra"], ["apple"]]
    assert [(r["domain"], r["template_id"], r["details"]) for r in got] == [
        ("zebra", "t1", [{"label": "row", "text": "0"}]),
        ("zebra", "t1", [{"label": "row", "text": "1"}]),
        ("apple", "t2", [{"label": "row", "text": "3"}]),
    ]
    assert queue.counts(None, out, {}, {}) == {"items": 3, "rows": 6}
    empty = queue.compute(None, {"expand": expand.slice(0, 0)}, set()).table
    assert empty.num_rows == 0 and queue.counts(None, empty, {}, {}) == {"items": 0, "rows": 0}


def _files(folder) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_build_original_written_a_few_rows_at_a_time_is_the_same_release(tmp_path, monkeypatch):
    """The published layout written 3 rows at a time (WRITE_CHUNK) gives the files written in one go."""
    from workbench import kinds
    from workbench.authoring import stages
    from workbench.core.config import load_config
    from workbench.release.build import build

    project = tmp_path / "p"
    _import(write_csv(tmp_path / "pairs.csv", synthetic_rows(17)), project)
    config = load_config(project / "workbench.toml")
    kind = kinds.of_config(config)
    whole = build(config, kind, "1.0.0", original=True)["path"]
    monkeypatch.setattr(stages, "WRITE_CHUNK", 3)
    chunked = build(config, kind, "1.0.1", original=True, force=True)["path"]
    a, b = _files(whole), _files(chunked)
    assert a.keys() == b.keys()
    assert a["data/pairs.csv"] == b["data/pairs.csv"] and a["data/pairs.parquet"] == b["data/pairs.parquet"]
    lines = a["data/pairs.csv"].decode().splitlines()
    assert len(lines) == 18 and lines[1].startswith("0,")  # the header, then the rows in the published order


def test_a_release_without_machine_paths_is_not_copied_where_none_is_named():
    from workbench.release.local_paths import without

    rows = [{"a": "x", "b": [{"c": "y"}], "n": 1}, {"a": "/home/me/model", "b": ("z",)}]
    out = without({"/home/me/model": "model"}, rows)
    assert out == [{"a": "x", "b": [{"c": "y"}], "n": 1}, {"a": "model", "b": ("z",)}]
    assert out[0] is rows[0] and out[1] is not rows[1] and out[1]["b"] is rows[1]["b"]
    assert rows[1]["a"] == "/home/me/model"  # what was given is not changed
    assert without({"/elsewhere": "e"}, rows) is rows


def test_labelstudio_push_sends_the_new_items_500_at_a_time(tmp_path, monkeypatch):
    """push against a stand-in client (no server): the items not in the project yet, in queue order,
    in requests of IMPORT_BATCH tasks, each made as it is sent."""
    from types import SimpleNamespace

    from workbench import kinds
    from workbench.annotation.session import items_from_table
    from workbench.authoring.stages import Queue
    from workbench.core.config import load_config
    from workbench.labelstudio import sync
    from workbench.labelstudio.page import ID_KEY

    project = tmp_path / "p"
    _import(write_csv(tmp_path / "pairs.csv", synthetic_rows(3)), project)
    config = load_config(project / "workbench.toml")
    expand = _expand_table([(f"i{k:04d}", "age", "t") for k in range(1203)])
    items = items_from_table(Queue().compute(None, {"expand": expand}, set()).table)
    sent: list[list[str]] = []
    made: list[int] = []  # tasks made so far, at each request
    task_data = sync.task_data
    monkeypatch.setattr(sync, "task_data", lambda item, page: made.append(1) or task_data(item, page))

    def import_tasks(id, request):
        sent.append([t["data"][ID_KEY] for t in request])
        made.append(len(made))

    class Client:
        def __init__(self, *args):
            self.sdk = SimpleNamespace(projects=SimpleNamespace(import_tasks=import_tasks))

        def check(self):
            pass

        def find_project(self, title, project_id=None):
            return SimpleNamespace(id=7, title=title, maximum_annotations=1)

        def tasks(self, project, progress=None):
            return [{"id": k, "data": {ID_KEY: f"i{k:04d}"}} for k in (0, 5, 1202)]

        def call(self, what, fn, *args, **kwargs):
            return fn(*args, **kwargs)

    monkeypatch.setattr(sync, "Client", Client)
    monkeypatch.setattr(sync, "connection", lambda config: ("http://127.0.0.1:1", "key"))
    monkeypatch.setattr(sync, "check_config", lambda *args: None)
    monkeypatch.setattr(sync, "overlap", lambda config, kind: (1, "one"))
    got = sync.push(config, items, "bench", kind=kinds.of_config(config))
    assert [len(batch) for batch in sent] == [500, 500, 200]
    assert [i for batch in sent for i in batch] == [f"i{k:04d}" for k in range(1203) if k not in (0, 5, 1202)]
    assert (got["imported"], got["already_there"], got["items"]) == (1200, 3, 1203)
    assert [n for n in made if n != 1] == [500, 1001, 1202]  # a batch's tasks made just before it is sent


def test_queue_items_read_a_row_at_a_time_then_whole_give_the_tables_values(monkeypatch):
    """A million-item queue opens with only its ids read: each other field is read a row at a
    time, and its column converted whole once read often (here after 2 reads)."""
    from workbench.annotation import session
    from workbench.authoring.stages import Queue

    monkeypatch.setattr(session._Columns, "WHOLE_AFTER", 2)
    expand = _expand_table(
        [(f"i{k}", ["age", "gender"][k % 2], f"t{k % 3}") for k in range(7)] + [("i0", "race", "t0")]
    )
    table = Queue().compute(None, {"expand": expand}, set()).table
    items = session.items_from_table(table)
    columns = items[0]._columns
    assert columns.done == {}  # nothing but the ids read yet
    want = table.to_pylist()
    fields = ("hypothesis", "domain", "template_id", "position", "n_samples", "stance", "fluency")
    for item, row in zip(items, want):  # every field read 7 times: row by row twice, then whole
        assert item.id == row["item_id"]
        assert [getattr(item, f) for f in fields] == [
            row["hypothesis"],
            row["domain"],
            row["template_id"],
            row["position"],
            row["n_samples"],
            "",
            None,
        ]
        assert item.domains == tuple(row["domains"]) and item.details == [("row", d["text"]) for d in row["details"]]
    assert {"hypothesis", "domain", "domains", "n_samples"} <= set(columns.done)
    assert items[0].domains == ("age", "race") and items[0].n_samples == 2
    items[1].hypothesis = "edited"  # a field set on an item is its own
    assert (items[1].hypothesis, items[2].hypothesis) == ("edited", want[2]["hypothesis"])
