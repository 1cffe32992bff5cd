"""The model-output cache under several processes at once (every rank of a launcher opens it)."""

import multiprocessing
from pathlib import Path

import pytest

from workbench.core.cache import Cache, verify
from workbench.core.errors import InputError


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


FULL_DISK = """
import resource, signal, sys
from pathlib import Path
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (1000, 1000))  # as a full disk: no write past 1,000 bytes
from workbench.core.cache import verify
from workbench.core.errors import InputError
try:
    verify(Path(sys.argv[1]))
except InputError as exc:
    print(exc)
"""


def test_a_sound_cache_that_cannot_be_opened_on_a_full_disk_is_not_called_damaged(tmp_path):
    """SQLite cannot open a WAL database when nothing more can be written; the message says what may
    be wrong here (it said 'damaged ... delete this one' of a sound file), and the file stays whole."""
    import subprocess
    import sys

    path = tmp_path / "c.sqlite"
    cache = Cache(path)
    cache.put_many("nli", "m", "r", {str(i): {"x": "y" * 100} for i in range(500)})
    cache.close()
    before = path.read_bytes()
    out = subprocess.run([sys.executable, "-c", FULL_DISK, str(path)], capture_output=True, text=True, timeout=120)
    assert "could not be opened" in out.stdout and "full disk" in out.stdout, out.stdout + out.stderr
    assert "damaged" not in out.stdout and "delete" not in out.stdout
    assert path.read_bytes() == before
    assert len(Cache(path).get_many("nli", "m", "r", [str(i) for i in range(500)])) == 500
    broken = bytearray(before)
    broken[16:4096] = b"\xff" * (4096 - 16)  # the header page overwritten: the file itself is bad
    (tmp_path / "bad.sqlite").write_bytes(bytes(broken))
    with pytest.raises(InputError, match="is a damaged SQLite file"):
        verify(tmp_path / "bad.sqlite")
