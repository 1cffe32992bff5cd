"""Uncertainty of every measure: bootstrap intervals over a kind's independent units, paired
comparisons, permutation p-values and how stable a verdict is under resampling.

Pure numpy (standard library otherwise), so a release's standalone evaluator carries the same
code. Every measure the kinds report is a ratio of sums over units — a share of pairs, a mean
over templates or stereotypes, a mean of per-term scores — so a statistic is given as the
per-unit numerators and denominators, and a resample is a vector of counts (how often each unit
was drawn). The resamples are drawn as a (B × units) count matrix, a chunk of rows at a time,
and every statistic is one matrix product per chunk: B = 1,000 resamples cost milliseconds, and
memory grows with the number of *units* (pairs, CATs, templates, stereotypes, clusters), never
with the items they hold; the intervals of a scope (`attach`) hold one chunk, not all B rows.

Where items share a template or a pair (a cluster), the caller sums them into one unit per
cluster first (`by_cluster`): resampling whole clusters is what keeps intervals true to the data when
items are not independent.

How a kind uses it: it describes each group of its figures as a `Scope` (where the group sits in
a model's JSON entry, and each figure as a `Measure`: per-unit sums and how they combine, e.g. a
mean over target terms re-averaged in every resample); `Uncertainty` attaches the intervals to the
entry, warns about groups that cannot carry a verdict, and compares the models of one run.
docs/statistics.md says what each kind resamples and how to read the results.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

DEFAULT_RESAMPLES = 1000
DEFAULT_LEVEL = 0.95
DEFAULT_SEED = 0
MIN_UNITS = 10  # fewer independent units than this: the figure is shown with a warning, no verdict
MIN_RESAMPLES = 100  # fewer: a percentile interval's ends rest on one or two resamples
MAX_RESAMPLES = 100_000  # more: the (resamples × units) counts are held at once (GiBs for a large set)
MAX_SEED = 2**32 - 1  # numpy takes any seed from 0; a 32-bit range is what other tools take too
CHUNK = 250  # resamples evaluated at a time: temporaries stay (CHUNK × units), whatever B is
CELLS = 4_000_000  # ... and at most this many counts (CHUNK × 16,000 units): fewer resamples at a time for more units
INTERVAL_HELP = {  # the options' help, the same in `workbench evaluate` and a release's evaluate.py
    "ci_level": "Confidence level of the intervals beside every measure, between 0 and 1",
    "bootstrap": "Bootstrap resamples of the kind's independent units (pairs, examples, templates, "
    f"stereotypes), from {MIN_RESAMPLES} to {MAX_RESAMPLES:,}; 0 turns intervals and model comparisons off",
    "seed": "Random seed of the resamples, from 0 to 4294967295: the same seed gives the same intervals",
}


@dataclass(frozen=True)
class Settings:
    """How intervals are computed (`--ci-level`, `--bootstrap`, `--seed`); resamples = 0: none."""

    level: float = DEFAULT_LEVEL
    resamples: int = DEFAULT_RESAMPLES
    seed: int = DEFAULT_SEED

    def problem(self) -> str | None:
        """What is wrong with the values, in one line (None: nothing). Checked before anything
        is scored, so a bad value never costs a run: a negative seed fails only in numpy, after
        scoring; 2e9 resamples would allocate hundreds of GiB; one resample gives an 'interval'
        that may not even hold its own estimate."""
        if not 0 < self.level < 1:  # NaN fails this too
            return f"--ci-level must lie between 0 and 1, e.g. 0.95 (got {self.level})"
        if self.resamples < 0:
            return f"--bootstrap must be 0 (no intervals) or from {MIN_RESAMPLES} to {MAX_RESAMPLES:,} (got {self.resamples})"
        if 0 < self.resamples < MIN_RESAMPLES:
            return (
                f"--bootstrap {self.resamples}: too few resamples for an interval; give at least {MIN_RESAMPLES} (the "
                f"default is {DEFAULT_RESAMPLES:,}): with fewer, a percentile interval's ends rest on one or two "
                "resamples and may not even hold the estimate; 0 turns intervals off"
            )
        if self.resamples > MAX_RESAMPLES:
            return (
                f"--bootstrap {self.resamples:,}: at most {MAX_RESAMPLES:,} resamples (all are held in memory at "
                f"once, resamples × units; {DEFAULT_RESAMPLES:,} to 10,000 is plenty for a 95% interval)"
            )
        if not 0 <= self.seed <= MAX_SEED:
            return f"--seed must be a whole number from 0 to {MAX_SEED} (got {self.seed})"
        return None


@dataclass(frozen=True)
class Interval:
    """A point estimate with its bootstrap interval. `lower`/`upper` are None when no
    resampling was done (B = 0) or there is nothing to resample."""

    estimate: float | None
    lower: float | None
    upper: float | None
    se: float | None
    n_units: int
    level: float
    resamples: int

    def as_dict(self) -> dict:
        return {
            "estimate": self.estimate,
            "lower": self.lower,
            "upper": self.upper,
            "se": self.se,
            "n_units": self.n_units,
            "level": self.level,
            "resamples": self.resamples,
        }


def by_cluster(values, clusters) -> tuple[np.ndarray, list]:
    """Sum per-item values into one row per cluster (in first-seen order of the clusters).
    `values`: (items,) or (items, k). Returns (clusters, k?) sums and the cluster keys."""
    values = np.asarray(values, dtype=float)
    keys = list(dict.fromkeys(clusters))
    index = {k: i for i, k in enumerate(keys)}
    rows = np.fromiter((index[c] for c in clusters), dtype=np.int64, count=len(clusters))
    out = np.zeros((len(keys),) + values.shape[1:])
    np.add.at(out, rows, values)
    return out, keys


def resample_counts(n_units: int, resamples: int, seed: int = DEFAULT_SEED) -> np.ndarray:
    """(resamples × n_units) counts: row b says how often each unit is drawn in resample b
    (n_units draws with replacement, counted: the ordinary bootstrap)."""
    if n_units == 0 or resamples <= 0:
        return np.zeros((0, n_units), dtype=np.int32)
    out = np.empty((resamples, n_units), dtype=np.int32)
    start = 0
    for rows in count_chunks(n_units, resamples, seed):
        out[start : start + len(rows)] = rows
        start += len(rows)
    return out


def chunk_rows(n_units: int) -> int:
    """Resamples drawn and evaluated at a time: CHUNK, fewer where CHUNK × units would pass
    CELLS (a million units: 4 at a time, not a 250 × 1,000,000 block of 2 GB)."""
    return max(1, min(CHUNK, CELLS // max(n_units, 1)))


def _row_chunks(resamples: int, n_units: int) -> Iterator[int]:
    """How many of `resamples` rows each chunk holds (`chunk_rows`)."""
    step = chunk_rows(n_units)
    for start in range(0, resamples, step):
        yield min(step, resamples - start)


def count_chunks(n_units: int, resamples: int, seed: int = DEFAULT_SEED) -> Iterator[np.ndarray]:
    """`resample_counts`'s rows, a few at a time (`chunk_rows`), so a statistic over a million
    units never holds all B × units counts. The draws are the same whatever the chunks (numpy's
    generator fills the draws in order; tests/test_intervals checks it). Up to CELLS / CHUNK units
    the chunks are CHUNK rows, as they always were; above, a product over fewer rows may round a
    real-valued figure's last bits otherwise."""
    if n_units == 0 or resamples <= 0:
        return
    rng = np.random.default_rng(seed)
    for rows in _row_chunks(resamples, n_units):
        drawn = rng.integers(0, n_units, size=(rows, n_units)) + np.arange(rows)[:, None] * n_units
        yield np.bincount(drawn.ravel(), minlength=rows * n_units).reshape(rows, n_units).astype(np.int32)


def resampled_stat(stat, n_units: int, resamples: int, seed: int = DEFAULT_SEED) -> np.ndarray:
    """`stat` (counts -> figures) of every resample, computed a chunk of resamples at a time
    (`count_chunks`): the values `stat(resample_counts(...))` gives, without all the counts at once."""
    parts = [stat(chunk) for chunk in count_chunks(n_units, resamples, seed)]
    return np.concatenate(parts) if parts else np.zeros(0)


def ratio(numerators, denominators=None, scale: float = 1.0):
    """The statistic scale·Σ w·num / Σ w·den over units weighted by their counts w (den = 1
    each when not given: a mean). Returns f(counts) -> (B,) and the point estimate."""
    num = np.asarray(numerators, dtype=float)
    den = np.ones_like(num) if denominators is None else np.asarray(denominators, dtype=float)

    def stat(counts: np.ndarray) -> np.ndarray:
        top, bottom = counts @ num, counts @ den
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(bottom > 0, scale * top / np.where(bottom > 0, bottom, 1), np.nan)

    total = den.sum()
    point = float(scale * num.sum() / total) if total > 0 else None
    return stat, point


def interval(
    stat,
    point: float | None,
    n_units: int,
    resamples: int = DEFAULT_RESAMPLES,
    level: float = DEFAULT_LEVEL,
    seed: int = DEFAULT_SEED,
    counts: np.ndarray | None = None,
) -> Interval:
    """Percentile interval and standard error of `stat` (counts -> (B,)) over `n_units` units.
    Without `counts`, the resamples are drawn from `seed` a chunk at a time (`resampled_stat`)."""
    if point is None or resamples <= 0 or n_units == 0:
        return Interval(point, None, None, None, n_units, level, 0)
    values = resampled_stat(stat, n_units, resamples, seed) if counts is None else stat(counts)
    return spread(values, point, n_units, level)


def spread(values: np.ndarray, point: float | None, n_units: int, level: float) -> Interval:
    """The percentile interval and standard error of B resampled figures (NaN, ±inf: no figure)."""
    resamples = int(values.shape[0])
    values = values[np.isfinite(values)]
    if point is None or values.size == 0:
        return Interval(point, None, None, None, n_units, level, resamples)
    alpha = (1.0 - level) / 2
    lower, upper = np.quantile(values, [alpha, 1.0 - alpha])
    return Interval(
        point,
        float(lower),
        float(upper),
        float(values.std(ddof=1)) if values.size > 1 else 0.0,
        n_units,
        level,
        resamples,
    )


def _signed(x: float) -> str:
    """+1.25 for figures in percent, three significant digits for small ones (+0.000312). A figure
    that two decimals write as ±0.10 is written so (three digits would give -0.1 beside +0.10)."""
    return f"{x:+.2f}" if x == 0 or round(abs(x), 2) >= 0.1 else f"{x:+.3g}"


def counted(n: int, units: str, one: str = "") -> str:
    """'1 template', '2 templates': `one` is the unit's singular (the plural stands where none is given)."""
    return f"{n} {one if n == 1 and one else units}"


@dataclass(frozen=True)
class Difference:
    """A − B on the same units: the difference, its paired bootstrap interval, and a
    permutation p-value (A and B swapped unit by unit at random)."""

    difference: float | None
    interval: Interval
    p_value: float | None
    permutations: int

    @property
    def within_noise(self) -> bool:
        """True when the interval holds 0 (or there is no interval)."""
        i = self.interval
        return i.lower is None or i.lower <= 0 <= i.upper

    def sentence(self, what: str, a: str, b: str, unit: str = "units") -> str:
        """One plain line for reports."""
        if self.difference is None:
            return f"{what}: {a} vs {b}: nothing to compare"
        i = self.interval
        head = f"{what}: {a} − {b} = {_signed(self.difference)}"
        if i.lower is None:
            return head + " (no interval: resampling is off)"
        head += f" [{_signed(i.lower)}, {_signed(i.upper)}] ({int(round(i.level * 100))}% interval, {i.n_units} {unit}"
        head += f", permutation {p_text(self.p_value, self.permutations)})" if self.p_value is not None else ")"
        return head + (": within noise" if self.within_noise else ": beyond noise")


def p_text(p_value: float, permutations: int) -> str:
    """'p = 0.042', or at the floor of a permutation test (no permutation as extreme as the
    observed difference: p = 1 / (N + 1)) 'p < 0.001' for N = 1000: the test can say no more."""
    if permutations > 0 and p_value <= 1.0 / (permutations + 1) + 1e-15:
        return f"p < {1.0 / permutations:.2g}"
    return f"p = {p_value:.3f}" if p_value >= 0.001 else f"p = {p_value:.2g}"


def paired_difference(
    num_a,
    num_b,
    den_a=None,
    den_b=None,
    scale: float = 1.0,
    resamples: int = DEFAULT_RESAMPLES,
    permutations: int = DEFAULT_RESAMPLES,
    level: float = DEFAULT_LEVEL,
    seed: int = DEFAULT_SEED,
) -> Difference:
    """Difference of two ratio statistics measured on the same units (two models on one
    release, or one model on the units two versions share)."""
    num_a, num_b = np.asarray(num_a, dtype=float), np.asarray(num_b, dtype=float)
    den_a = np.ones_like(num_a) if den_a is None else np.asarray(den_a, dtype=float)
    den_b = np.ones_like(num_b) if den_b is None else np.asarray(den_b, dtype=float)
    stat_a, point_a = ratio(num_a, den_a, scale)
    stat_b, point_b = ratio(num_b, den_b, scale)
    if point_a is None or point_b is None:
        return Difference(None, Interval(None, None, None, None, len(num_a), level, 0), None, 0)
    observed = point_a - point_b
    n = len(num_a)
    spread = interval(lambda c: stat_a(c) - stat_b(c), observed, n, resamples, level, seed)
    p_value = None
    if permutations > 0 and n:
        rng, parts = np.random.default_rng(seed + 1), []
        for rows in _row_chunks(permutations, n):  # the same draws as one (permutations × n) block
            swap = rng.random((rows, n)) < 0.5  # True: unit's A and B trade places
            keep = ~swap
            top_a = keep @ num_a + swap @ num_b
            top_b = keep @ num_b + swap @ num_a
            bottom_a = keep @ den_a + swap @ den_b
            bottom_b = keep @ den_b + swap @ den_a
            with np.errstate(invalid="ignore", divide="ignore"):
                parts.append(scale * (top_a / bottom_a - top_b / bottom_b))
        permuted = np.concatenate(parts)
        permuted = permuted[~np.isnan(permuted)]
        p_value = float((1 + np.sum(np.abs(permuted) >= abs(observed) - 1e-12)) / (1 + permuted.size))
    return Difference(observed, spread, p_value, permutations)


def ranking_stability(
    stats: list,
    points: list[float],
    n_units: int,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    higher_is_more: bool = True,
) -> float | None:
    """Share of resamples (of the shared units) that keep the reported order of several models."""
    if len(stats) < 2 or resamples <= 0 or n_units == 0 or any(p is None for p in points):
        return None
    table = resampled_stat(lambda c: np.stack([s(c) for s in stats], axis=1), n_units, resamples, seed)  # (B, models)
    sign = -1 if higher_is_more else 1
    reported = np.argsort(sign * np.asarray(points), kind="stable")
    kept = np.all(np.argsort(sign * table, axis=1, kind="stable") == reported, axis=1)
    return float(kept.mean())


def sign_stability(
    stat,
    point: float | None,
    neutral: float,
    n_units: int,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> float | None:
    """Share of resamples on the same side of `neutral` (e.g. 50 for a preference share, 0 for a
    bias score) as the reported figure: how stable the sign of the bias is."""
    if point is None or resamples <= 0 or n_units == 0 or point == neutral:
        return None
    values = resampled_stat(stat, n_units, resamples, seed)
    values = values[~np.isnan(values)]
    if values.size == 0:
        return None
    return float(np.mean(np.sign(values - neutral) == np.sign(point - neutral)))


def degenerate(
    n_units: int,
    n_informative: int,
    what: str,
    unit: str,
    value_meaning: str = "",
    minimum: int = MIN_UNITS,
    one: str = "",
) -> str | None:
    """A warning when a figure says nothing: no informative unit (all tied or failed), or fewer
    units than `minimum`. None when the figure can carry a verdict."""
    if n_units == 0:
        return f"{what}: no {unit} to score"
    if n_informative == 0:
        every = f"the only {one or unit}" if n_units == 1 else f"all {n_units} {unit}"
        return f"{what}: {every} tied or failed to score" + (f": {value_meaning}" if value_meaning else "")
    if n_units < minimum:
        return f"{what}: only {counted(n_units, unit, one)} (fewer than {minimum}): no verdict"
    return None


# --- Measures as functions of per-unit sums: what the kinds hand over -------------------------


def share(scale: float = 1.0):
    """combine for Σ num / Σ den over all units (columns 0 and 1): a share or a mean."""

    def combine(sums: np.ndarray) -> np.ndarray:
        top, bottom = sums[:, :, 0].sum(axis=1), sums[:, :, 1].sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(bottom > 0, scale * top / np.where(bottom > 0, bottom, 1), np.nan)

    return combine


def mean_of_cells(scale: float = 1.0):
    """combine for the unweighted mean over cells (target terms, categories) of each cell's
    Σ num / Σ den; a cell no unit of a resample falls in is left out, as a group without it would be."""

    def combine(sums: np.ndarray) -> np.ndarray:
        top, bottom = sums[:, :, 0], sums[:, :, 1]
        present = bottom > 0
        with np.errstate(invalid="ignore", divide="ignore"):
            per_cell = np.where(present, top / np.where(present, bottom, 1), 0.0)
            return scale * per_cell.sum(axis=1) / np.where(present.any(axis=1), present.sum(axis=1), np.nan)

    return combine


@dataclass(frozen=True)
class Measure:
    """A reported figure as a function of per-unit sums: `values` (units × k) holds each unit's
    contributions, `cells` (units,) puts each unit in a cell (a target term, a category; None:
    one cell), and `combine` turns the (B × cells × k) weighted sums into B figures. `neutral` is
    the no-bias value (50, 0) that sign stability compares with; None where there is none."""

    values: np.ndarray
    combine: Callable[[np.ndarray], np.ndarray]
    cells: np.ndarray | None = None
    neutral: float | None = None

    @property
    def n_units(self) -> int:
        return int(self.values.shape[0])

    @property
    def support(self) -> int:
        """How many units the figure rests on: for Σ num / Σ den (two columns, in cells or not) the
        units with a denominator (an anti-stereotype score rests on the anti-stereotype pairs
        alone); otherwise every unit. The small-group rule (MIN_UNITS) reads it per figure."""
        values = np.asarray(self.values, dtype=float)
        if values.ndim == 2 and values.shape[1] == 2:
            return int(np.count_nonzero(values[:, 1]))
        return self.n_units

    @cached_property
    def _by_cell(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The units in cell order, the values in that order, and where each cell starts."""
        order = np.argsort(np.asarray(self.cells), kind="stable")
        cells = np.asarray(self.cells)[order]
        starts = np.flatnonzero(np.r_[True, cells[1:] != cells[:-1]]) if cells.size else np.zeros(0, dtype=np.int64)
        return order, np.asarray(self.values, dtype=float)[order], starts

    def sums(self, counts: np.ndarray) -> np.ndarray:
        """(B × cells × k) sums of the units' values weighted by counts (B × units): one product
        without cells; with cells, each column's weighted values summed cell by cell (a unit is in
        one cell, so this costs B × units × k whatever the number of cells)."""
        counts = np.asarray(counts, dtype=float)
        if self.cells is None:
            return (counts @ np.asarray(self.values, dtype=float))[:, None, :]
        order, values, starts = self._by_cell
        if not starts.size:
            return np.zeros((len(counts), 0, values.shape[1]))
        weighted = counts[:, order]
        return np.stack(
            [np.add.reduceat(weighted * values[:, j], starts, axis=1) for j in range(values.shape[1])], axis=2
        )

    def stat(self, counts: np.ndarray) -> np.ndarray:
        """B figures, CHUNK resamples at a time."""
        if counts.shape[0] == 0:
            return np.zeros(0)
        return np.concatenate(
            [self.combine(self.sums(counts[i : i + CHUNK])) for i in range(0, counts.shape[0], CHUNK)]
        )

    def subset(self, rows) -> Measure:
        """The same figure over some of the units (those two versions share)."""
        rows = np.asarray(rows, dtype=np.int64)
        cells = None if self.cells is None else np.asarray(self.cells)[rows]
        return Measure(np.asarray(self.values)[rows], self.combine, cells, self.neutral)

    @property
    def point(self) -> float | None:
        if self.n_units == 0:
            return None
        value = float(self.stat(np.ones((1, self.n_units)))[0])
        return None if not np.isfinite(value) else value  # 0 / 0 or x / 0: no figure


def measure_of_ratio(numerators, denominators=None, scale: float = 1.0, neutral: float | None = None) -> Measure:
    """scale · Σ num / Σ den over units (den = 1 each when not given: a mean)."""
    num = np.asarray(numerators, dtype=float)
    den = np.ones_like(num) if denominators is None else np.asarray(denominators, dtype=float)
    return Measure(np.stack([num, den], axis=1).reshape(len(num), 2), share(scale), neutral=neutral)


def measure_interval(measure: Measure, settings: Settings, counts: np.ndarray | None = None) -> Interval:
    return interval(
        measure.stat, measure.point, measure.n_units, settings.resamples, settings.level, settings.seed, counts
    )


def paired(a: Measure, b: Measure, settings: Settings, permutations: int | None = None) -> Difference:
    """A − B for two measures on the same units and cells (two models on one release): the
    paired bootstrap resamples units once for both; the permutation test swaps A's and B's
    contributions unit by unit at random."""
    permutations = settings.resamples if permutations is None else permutations
    point_a, point_b = a.point, b.point
    n = a.n_units
    if point_a is None or point_b is None:
        return Difference(None, Interval(None, None, None, None, n, settings.level, 0), None, 0)
    observed = point_a - point_b
    spread = interval(lambda c: a.stat(c) - b.stat(c), observed, n, settings.resamples, settings.level, settings.seed)
    p_value = None
    if permutations > 0 and n:
        rng, parts = np.random.default_rng(settings.seed + 1), []
        for rows in _row_chunks(permutations, n):  # the same draws as one (permutations × n) block
            swap = (rng.random((rows, n)) < 0.5).astype(float)
            keep = 1.0 - swap
            parts.append(a.combine(a.sums(keep) + b.sums(swap)) - b.combine(b.sums(keep) + a.sums(swap)))
        permuted = np.concatenate(parts)
        permuted = permuted[~np.isnan(permuted)]
        p_value = float((1 + np.sum(np.abs(permuted) >= abs(observed) - 1e-12)) / (1 + permuted.size))
    return Difference(observed, spread, p_value, permutations)


# --- Attaching intervals to a kind's JSON, and comparing models ------------------------------


@dataclass
class Scope:
    """One group of a model's figures (overall, a bias type, a domain) and how to resample it.
    `path` finds its dict in the model's JSON entry; `measures` (all on the same units) name
    the figures there; `informative` counts the units that carry information (not tied, scored;
    None: all); `meaning` says what a degenerate figure would wrongly suggest; `keys` name the
    units where two versions of a release can share them."""

    path: tuple[str, ...]
    measures: dict[str, Measure]
    unit: str
    informative: int | None = None
    meaning: str = ""
    keys: list | None = None  # each unit's identity, stable across versions (to pair versions' units)
    one: str = ""  # the unit's singular, where `unit` is a plural ("template" for "templates")
    n_units: int = field(init=False, default=0)

    def __post_init__(self):
        self.n_units = max((m.n_units for m in self.measures.values()), default=0)


def resampled(measures: dict[str, Measure], counts: np.ndarray | Iterable[np.ndarray]) -> dict[str, np.ndarray]:
    """Each measure's B figures on the same resamples (`counts`: the B × units counts, or their
    rows a chunk at a time, as `count_chunks` yields them); the measures without cells share one
    product per chunk of resamples (a group's shares are one matrix of per-unit columns)."""
    plain = [name for name, m in measures.items() if m.cells is None]
    out: dict[str, list] = {name: [] for name in measures}
    if isinstance(counts, np.ndarray):
        counts = (counts[i : i + CHUNK] for i in range(0, counts.shape[0], CHUNK))
    if plain:
        stacked = np.concatenate([np.asarray(measures[name].values, dtype=float) for name in plain], axis=1)
        edges = np.cumsum([0] + [np.shape(measures[name].values)[1] for name in plain])
    for chunk in counts:
        if plain:
            sums = np.asarray(chunk, dtype=float) @ stacked
            for name, a, b in zip(plain, edges[:-1], edges[1:]):
                out[name].append(measures[name].combine(sums[:, None, a:b]))
        for name, m in measures.items():
            if m.cells is not None:
                out[name].append(m.stat(chunk))
    return {name: np.concatenate(parts) if parts else np.zeros(0) for name, parts in out.items()}


def _node(entry: dict, path: tuple[str, ...]) -> dict:
    for key in path:
        entry = entry[key]
    return entry


def attach(entry: dict, scopes: list[Scope], settings: Settings, label: str) -> list[str]:
    """Put `intervals` {measure: Interval.as_dict()} beside the figures of each scope of one
    model's entry. A degenerate scope (see `degenerate`) gets its warning there and no bounds.
    Returns the warnings (also when resampling is off, which adds nothing to the entry)."""
    warnings = []
    for scope in scopes:
        informative = scope.n_units if scope.informative is None else scope.informative
        warning = degenerate(
            scope.n_units, informative, " / ".join(scope.path), scope.unit, scope.meaning, one=scope.one
        )
        if warning:
            warnings.append(f"{label}: {warning}")
        if settings.resamples <= 0:
            continue  # intervals off: the JSON stays as without them
        figures = (
            {} if warning else resampled(scope.measures, count_chunks(scope.n_units, settings.resamples, settings.seed))
        )
        out = {}
        for name, measure in scope.measures.items():
            own = warning or small_figure(measure, " / ".join((*scope.path, name)), scope.unit, scope.one)
            if own and not warning:
                warnings.append(f"{label}: {own}")
            if own:
                found = Interval(measure.point, None, None, None, scope.n_units, settings.level, 0).as_dict()
            else:
                found = spread(figures[name], measure.point, scope.n_units, settings.level).as_dict()
            out[name] = {**found, **({"warning": own} if own else {})}
        _node(entry, scope.path)["intervals"] = out
    return warnings


def small_figure(measure: Measure, what: str, unit: str, one: str = "") -> str | None:
    """The small-group rule of `degenerate` for one figure of a scope that has enough units:
    a figure resting on fewer than MIN_UNITS of them (see Measure.support) gets no verdict
    either, as a group of that size would not."""
    support = measure.support
    if 0 < support < MIN_UNITS:
        return f"{what}: only {counted(support, unit, one)} (fewer than {MIN_UNITS}): no verdict"
    return None


def compare(
    scopes_by_model: dict[str, Scope], names: tuple[str, ...], settings: Settings, unit: str, one: str = ""
) -> dict:
    """Paired comparisons of several models on one scope (the same units): for each measure in
    `names`, every pair's difference with its paired interval and permutation p-value, the share
    of resamples that keep the reported ranking, and per model the share that keep the sign of its
    bias (where the measure has a neutral value), each with its sentence for the terminal."""
    models = list(scopes_by_model)
    out: dict = {}
    if len(models) < 2 or settings.resamples <= 0:
        return out
    for name in names:
        measures = [scopes_by_model[m].measures[name] for m in models]
        n = measures[0].n_units
        if any(m.n_units != n for m in measures):
            continue  # not the same units: nothing to pair
        if n < MIN_UNITS:
            out[name] = {
                "pairs": [],
                "ranking_stability": None,
                "sign_stability": {},
                "sentence": f"{name}: models not compared: only {counted(n, unit, one)} (fewer than {MIN_UNITS})",
            }
            continue
        pairs = []
        for i in range(len(models)):
            for j in range(i + 1, len(models)):
                d = paired(measures[i], measures[j], settings)
                line = d.sentence(name, models[i], models[j], unit)
                pairs.append(
                    {
                        "a": models[i],
                        "b": models[j],
                        "difference": d.difference,
                        "interval": d.interval.as_dict(),
                        "p_value": d.p_value,
                        "within_noise": d.within_noise,
                        "sentence": line,
                    }
                )
        points = [m.point for m in measures]
        ranking = ranking_stability([m.stat for m in measures], points, n, settings.resamples, settings.seed)
        neutral = measures[0].neutral
        signs = (
            {
                model: sign_stability(m.stat, m.point, neutral, n, settings.resamples, settings.seed)
                for model, m in zip(models, measures)
            }
            if neutral is not None
            else {}
        )
        line = f"{name}: no ranking (a model has no figure)"
        if ranking is not None and len(set(points)) < len(points):
            ranking, line = None, f"{name}: no ranking: models tie at the same figure"
        elif ranking is not None:
            order = " > ".join(m for _, m in sorted(zip(points, models), key=lambda t: -t[0]))
            line = f"{name}: the ranking {order} holds in {100 * ranking:.0f}% of {settings.resamples} resamples"
            if signs:
                line += (
                    "; side of "
                    + f"{neutral:g} kept: "
                    + ", ".join(f"{m} {'-' if s is None else f'{100 * s:.0f}%'}" for m, s in signs.items())
                )
        out[name] = {"pairs": pairs, "ranking_stability": ranking, "sign_stability": signs, "sentence": line}
    return out


def one_per_cluster(clusters: list, resamples: int, seed: int = DEFAULT_SEED) -> np.ndarray:
    """(resamples × units) weights: each resample keeps one unit of every cluster, drawn at
    random (one lexical variant of every template), and drops the others."""
    keys = {key: i for i, key in enumerate(dict.fromkeys(clusters))}
    codes = np.fromiter((keys[c] for c in clusters), dtype=np.int64, count=len(clusters))
    out = np.zeros((max(resamples, 0), len(codes)), dtype=np.int32)
    if not len(codes) or resamples <= 0:
        return out
    order = np.argsort(codes, kind="stable")
    sizes = np.bincount(codes)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    picked = starts + (np.random.default_rng(seed).random((resamples, len(sizes))) * sizes).astype(np.int64)
    out[np.arange(resamples)[:, None], order[picked]] = 1
    return out


def variant_stability(measure: Measure, clusters: list, settings: Settings, what: str) -> dict | None:
    """Does a verdict depend on which variant of each cluster was kept? The figure recomputed
    with one unit per cluster drawn at random, `settings.resamples` times: the range of the
    middle `settings.level` of those figures and the share on the reported side of the no-bias
    value. None when there is nothing to draw or no cluster has two variants."""
    point = measure.point
    if point is None or settings.resamples <= 0 or len(set(clusters)) == len(clusters):
        return None
    values = measure.stat(one_per_cluster(clusters, settings.resamples, settings.seed))
    values = values[~np.isnan(values)]
    if not values.size:
        return None
    alpha = (1.0 - settings.level) / 2
    lower, upper = (float(v) for v in np.quantile(values, [alpha, 1.0 - alpha]))
    kept = None
    if measure.neutral is not None and point != measure.neutral:
        kept = float(np.mean(np.sign(values - measure.neutral) == np.sign(point - measure.neutral)))
    line = (
        f"{what}: keeping one variant per template, the figure lies in [{_signed(lower)}, {_signed(upper)}] "
        f"({int(round(settings.level * 100))}% of {settings.resamples} draws)"
    )
    if kept is not None:
        line += f" and stays on its side of {measure.neutral:g} in {100 * kept:.0f}% of them"
    return {
        "lower": lower,
        "upper": upper,
        "sign_kept": kept,
        "clusters": len(set(clusters)),
        "variants": len(clusters),
        "sentence": line,
    }


def compare_versions(
    before: Scope, after: Scope, names: tuple[str, ...], settings: Settings, model: str, labels: tuple[str, str]
) -> dict:
    """One model on two versions of a release: each figure's change (after − before) over the
    units present in both (matched by `Scope.keys`), with its paired interval and permutation
    p-value; the units only one version has are counted apart, not compared."""
    position = {key: i for i, key in enumerate(after.keys or [])}
    shared = [(i, position[key]) for i, key in enumerate(before.keys or []) if key in position]
    dropped, added = before.n_units - len(shared), after.n_units - len(shared)
    out = {"model": model, "shared": len(shared), "added": added, "dropped": dropped, "measures": {}}
    apart = f"; {added} added and {dropped} dropped {before.unit} not compared"
    for name in names:
        if len(shared) < MIN_UNITS:
            out["measures"][name] = {
                "sentence": f"{name} ({model}): versions not compared: only {len(shared)} "
                f"{before.unit} in both (fewer than {MIN_UNITS})"
            }
            continue
        rows_before, rows_after = zip(*shared)
        d = paired(after.measures[name].subset(rows_after), before.measures[name].subset(rows_before), settings)
        line = d.sentence(f"{name} ({model})", labels[1], labels[0], f"{before.unit} in both") + apart
        out["measures"][name] = {
            "difference": d.difference,
            "interval": d.interval.as_dict(),
            "p_value": d.p_value,
            "within_noise": d.within_noise,
            "sentence": line,
        }
    return out


def with_interval(value: float | None, found: dict | None, digits: int = 1) -> str:
    """A figure as tables show it: "52.3 [49.8, 54.9]" (the bounds only when there are some)."""
    if value is None:
        return "-"
    text = f"{value:.{digits}f}"
    if found and found.get("lower") is not None:
        text += f" [{found['lower']:.{digits}f}, {found['upper']:.{digits}f}]"
    return text


def error_bars(values: list, found: list) -> np.ndarray:
    """matplotlib's `yerr` (2 × n: below, above) for figures and their intervals (`intervals`
    entries or None); NaN where a figure has no bounds, so no bar is drawn there."""
    out = np.full((2, len(values)), np.nan)
    for i, (value, f) in enumerate(zip(values, found)):
        if value is not None and f and f.get("lower") is not None:
            out[:, i] = max(0.0, value - f["lower"]), max(0.0, f["upper"] - value)
    return out


def bar_errors(values: list, found: list) -> tuple[np.ndarray | None, np.ndarray]:
    """(`yerr`/`xerr` for matplotlib, None when no figure has bounds; how far each bar's error
    bar reaches beyond its end, 0 where none), so a value label can sit past the error bar.
    matplotlib is handed no all-NaN error array (it warns on those)."""
    err = error_bars(values, found)
    return (err if np.isfinite(err).any() else None), np.nan_to_num(err[1])


def interval_columns(node: dict, names: tuple[str, ...]) -> dict:
    """CSV columns <measure>_lower/_upper/_se for the measures of one group (empty without intervals)."""
    found = node.get("intervals") or {}
    out = {}
    for name in names:
        if name in found:
            out.update(
                {
                    f"{name}_lower": found[name]["lower"],
                    f"{name}_upper": found[name]["upper"],
                    f"{name}_se": found[name]["se"],
                }
            )
    return out


class Uncertainty:
    """One run's intervals, as both `workbench evaluate` and a release's evaluate.py collect them:
    `add` each model's entry with its scopes (the first is the overall one), then `finish` the
    document: `uncertainty` holds the settings, the degenerate groups' warnings and, for several
    models, their paired comparisons on the `headline` measures. `finish` returns the lines to print."""

    def __init__(self, settings: Settings, unit: str, headline: tuple[str, ...], one: str = ""):
        self.settings, self.unit, self.headline, self.one = settings, unit, headline, one
        self.warnings: list[str] = []
        self.overall: dict[str, Scope] = {}

    def add(self, model: str, entry: dict, scopes: list[Scope]) -> None:
        self.warnings += attach(entry, scopes, self.settings, model)
        if scopes:
            self.overall[model] = scopes[0]

    def finish(self, doc: dict) -> list[str]:
        s = self.settings
        doc["uncertainty"] = {
            "level": s.level,
            "resamples": s.resamples,
            "seed": s.seed,
            "unit": self.unit,
            "warnings": self.warnings,
            "comparisons": compare(self.overall, self.headline, s, self.unit, self.one),
        }
        caution = mixed_rules(doc, list(self.overall))
        if caution and doc["uncertainty"]["comparisons"]:
            doc["uncertainty"]["caution"] = caution
        return notes(doc["uncertainty"])


def mixed_rules(doc: dict, models: list[str]) -> str | None:
    """A caution when compared models were scored by different rules (a masked LM's rounded
    pseudo-log-likelihoods against a causal LM's raw log-likelihoods): their difference is the
    rules' as much as the models'."""
    by_doc = doc.get("score_rule") if isinstance(doc.get("score_rule"), dict) else {}
    rules = {m: doc["models"].get(m, {}).get("score_rule") or by_doc.get(m) for m in models}
    if len({r for r in rules.values() if r}) < 2:
        return None
    shown = ", ".join(f"{m.rstrip('/').split('/')[-1]}: {r}" for m, r in rules.items() if r)
    return (
        f"caution: the models compared were scored by different rules ({shown}); a difference between them "
        "mixes the rules with the models"
    )


def notes(uncertainty: dict) -> list[str]:
    """What a terminal shows of a document's `uncertainty`: the warnings (ten at most), what the
    brackets mean, one line per comparison."""
    warnings = uncertainty["warnings"]
    shown = [f"warning: {w}" for w in warnings[:10]]
    if len(warnings) > 10:
        shown.append(f"warning: ... and {len(warnings) - 10} more groups without a verdict (see the JSON)")
    if uncertainty["resamples"] > 0:
        shown.append(
            f"[...]: {int(round(100 * uncertainty['level']))}% intervals from {uncertainty['resamples']} "
            f"resamples of the {uncertainty['unit']} (seed {uncertainty['seed']})"
        )
    if uncertainty.get("caution"):
        shown.append(uncertainty["caution"])
    for compared in uncertainty["comparisons"].values():
        shown += [p["sentence"] for p in compared["pairs"]] + [compared["sentence"]]
    for model in uncertainty.get("versions", []):
        shown += [m["sentence"] for m in model["measures"].values()]
    shown += [v["sentence"] for v in uncertainty.get("variants", {}).values()]
    return shown
