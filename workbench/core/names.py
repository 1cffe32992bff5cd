"""Models named for people: by the shortest tail of their path that tells them apart (issue 55).

A table, a chart legend, a CSV or a JSON of several models shows each by its last path component
(`bert-base-cased` for `google-bert/bert-base-cased`, `checkpoint-500` for a local folder) unless
two share it: then by as many components as it takes (`runA/checkpoint-500`, `runB/checkpoint-500`).
"""

from __future__ import annotations


def _parts(name: str) -> list[str]:
    return [p for p in name.rstrip("/").split("/") if p] or [name]


def _tail(parts: list[str], n: int) -> str:
    return "/".join(parts[-n:])


def shortest_names(names) -> dict[str, str]:
    """name -> the shortest tail of its path no other of `names` ends with (all of its components
    when another ends with all of them); never with a leading `/`."""
    split = {name: _parts(name) for name in dict.fromkeys(names)}
    shown = {}
    for name, parts in split.items():
        others = [p for other, p in split.items() if other != name]
        n = next(
            (n for n in range(1, len(parts) + 1) if all(_tail(p, n) != _tail(parts, n) for p in others)),
            len(parts),
        )
        shown[name] = _tail(parts, n)
    return shown
