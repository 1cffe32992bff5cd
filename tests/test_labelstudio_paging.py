"""`labelstudio pull` reads a project's tasks a page at a time (issue 54): the labels are those
of one request, no answer holds more than a page of tasks, each page's labels are on disk before
the next page is asked for, and a pull cut short keeps the pages it wrote. Against the stand-in
of tests/support/labelstudio_standin.py (real HTTP, no Label Studio)."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.labelstudio_standin import StandIn

from workbench.annotation.store import load_all, read_events

TASKS = 23


def _project(folder: Path, url: str, page_size: int, monkeypatch):
    from workbench import kinds
    from workbench.core.config import load_config

    folder.mkdir()
    (folder / "workbench.toml").write_text(f'[labelstudio]\nurl = "{url}"\npage_size = {page_size}\n')
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", "0a1b2c3d4e5f60718293")
    monkeypatch.delenv("LABEL_STUDIO_URL", raising=False)
    config = load_config(folder / "workbench.toml")
    return config, kinds.of_config(config)


def _pull(config, kind):
    from workbench.labelstudio import sync

    return sync.pull(config, None, kind.scheme, words=kind.words, project_id=1)


def _on_disk(folder: Path) -> dict:
    """annotator -> item -> (label, stance, note)."""
    states, warnings = load_all(folder)
    assert warnings == []
    return {a: {i: (s.label, s.stance, s.note) for i, s in items.items()} for a, items in states.items()}


@pytest.fixture
def standin():
    from workbench import kinds
    from workbench.labelstudio.page import page_for

    kind = kinds.get("nli")
    server = StandIn(TASKS, page_for(kind.scheme, kind.words).config(), list(kind.scheme.ids))
    yield server
    server.close()


def test_paged_pull_takes_the_labels_of_one_request_a_page_at_a_time(standin, tmp_path, monkeypatch):
    config, kind = _project(tmp_path / "whole", standin.url, 1000, monkeypatch)
    whole = _pull(config, kind)
    assert standin.task_requests == 1 and standin.most_tasks == TASKS
    expected = _on_disk(config.path("annotations"))
    assert set(expected) == {"admin@example.com", "kim@example.com"} and len(expected["admin@example.com"]) == TASKS

    standin.task_requests, standin.most_tasks = 0, 0
    on_disk_before: list[int] = []

    def look(page):  # what the pull has written when it asks for this page
        states, _ = load_all(paged.path("annotations")) if paged.path("annotations").is_dir() else ({}, [])
        on_disk_before.append(len(states.get("admin@example.com", {})))

    standin.before_page = look
    paged, kind = _project(tmp_path / "paged", standin.url, 5, monkeypatch)
    result = _pull(paged, kind)
    assert standin.task_requests == 5 and standin.most_tasks == 5  # 23 tasks, 5 a page: no answer held more
    assert on_disk_before == [0, 5, 10, 15, 20]  # each page's labels written before the next was asked for
    assert _on_disk(paged.path("annotations")) == expected
    assert result == whole  # the same counts, duplicates and skips
    assert result["annotations"] == TASKS + len(range(0, TASKS, 3)) and len(result["duplicates"]) == 4

    again = _pull(paged, kind)
    assert again["new_labels"] == 0 and again["undone"] == 0


def test_a_pull_cut_short_keeps_the_pages_it_wrote_and_a_rerun_completes_it(standin, tmp_path, monkeypatch):
    from workbench.labelstudio.sync import LabelStudioError

    config, kind = _project(tmp_path / "whole", standin.url, 1000, monkeypatch)
    _pull(config, kind)
    expected = _on_disk(config.path("annotations"))

    cut, kind = _project(tmp_path / "cut", standin.url, 5, monkeypatch)
    standin.before_page = lambda page: "server error" if page == 3 else None
    with pytest.raises(LabelStudioError, match="answered 500 while trying to read tasks"):
        _pull(cut, kind)
    kept = _on_disk(cut.path("annotations"))
    assert sorted(kept["admin@example.com"]) == [f"item{k:06d}" for k in range(10)]  # pages 1 and 2
    assert all(expected["admin@example.com"][i] == v for i, v in kept["admin@example.com"].items())

    standin.before_page = lambda page: None
    rerun = _pull(cut, kind)
    assert _on_disk(cut.path("annotations")) == expected
    assert rerun["new_labels"] == sum(len(v) for v in expected.values()) - sum(len(v) for v in kept.values())
    for path in cut.path("annotations").glob("*.jsonl"):
        ids = [e["id"] for e in read_events(path)[0]]
        assert len(ids) == len(set(ids))
