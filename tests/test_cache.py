"""The model-output cache under several processes at once (every rank of a launcher opens it)."""

import multiprocessing
from pathlib import Path

from workbench.core.cache import Cache


def _open_and_read(path: str) -> str:
    try:
        cache = Cache(Path(path))
        cache.put_many("ns", "m", "r", {"k": 1})
        value = cache.get_many("ns", "m", "r", ["k"])
        cache.close()
        return "ok" if value == {"k": 1} else f"read {value}"
    except Exception as e:  # noqa: BLE001 - the failure is what the test reports
        return repr(e)


def test_processes_opening_a_new_cache_together_all_get_it(tmp_path):
    # Before the retrying open, about one fresh file in three failed with "database is locked".
    answers = set()
    with multiprocessing.get_context("spawn").Pool(6) as pool:
        for i in range(20):
            answers |= set(pool.map(_open_and_read, [str(tmp_path / f"c{i}" / "cache.sqlite")] * 6, chunksize=1))
    assert answers == {"ok"}, sorted(answers)


def test_a_cache_keeps_what_was_committed_across_opens(tmp_path):
    path = tmp_path / "cache.sqlite"
    first = Cache(path)
    first.put_many("ns", "m", "r", {"a": [1, 2], "b": {"x": 0.5}})
    first.close()
    again = Cache(path)
    assert again.get_many("ns", "m", "r", ["a", "b", "c"]) == {"a": [1, 2], "b": {"x": 0.5}}
    assert again.count("ns") == 2 and again.count("ns", "other") == 0
