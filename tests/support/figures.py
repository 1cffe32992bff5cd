"""Comparing evaluation documents made by two processes.

Two processes (a release's evaluate.py in a subprocess, `workbench evaluate` in the test's own)
run a model with other thread counts and batch shapes, and a float32 forward pass then adds in
another order: continuous figures agree to about 3e-8 of their size, not to the last bit. So
documents are compared exactly in everything but floats, and floats within a stated tolerance,
far above that noise and far below any difference that means something. Decisions (a pair's
hit or tie, a count, a percentage of pairs) are exact: the scoring layer settles the items near
a boundary the same way in every process (`crows_pairs.scoring.NEAR_BOUNDARY`).
"""

from __future__ import annotations

import math

REL = 1e-5  # relative tolerance of a continuous figure
ABS = 1e-6  # absolute tolerance, for figures near zero


def differences(a, b, path: str = "$", rel: float = REL, abs_: float = ABS, ordered: bool = False) -> list[str]:
    """Where two JSON-like values differ: every key (in the same order with `ordered`), list
    length, text or integer exactly, floats within `rel` of their size or `abs_`."""
    if isinstance(a, dict) and isinstance(b, dict):
        if (list(a) != list(b)) if ordered else (set(a) != set(b)):
            return [f"{path}: keys {list(a)} != {list(b)}"]
        return [d for k in a for d in differences(a[k], b[k], f"{path}.{k}", rel, abs_, ordered)]
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{path}: {len(a)} items != {len(b)}"]
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in differences(x, y, f"{path}[{i}]", rel, abs_, ordered)]
    if isinstance(a, float) and isinstance(b, float) and not (isinstance(a, bool) or isinstance(b, bool)):
        if math.isnan(a) and math.isnan(b) or math.isclose(a, b, rel_tol=rel, abs_tol=abs_):
            return []
        return [f"{path}: {a!r} != {b!r}"]
    return [] if a == b else [f"{path}: {a!r} != {b!r}"]


def assert_same_figures(a, b, rel: float = REL, abs_: float = ABS, ordered: bool = False) -> None:
    """`a` and `b` are the same document up to float noise (see the module's docstring)."""
    found = differences(a, b, rel=rel, abs_=abs_, ordered=ordered)
    assert not found, "\n".join(found[:20])
